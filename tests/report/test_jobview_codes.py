"""jobview.delta on hand-made job view answers: each reason code the agent gives becomes the
data_quality entry diff.py writes for the same case, values it left out are not counted, and an
OSC the agent sent no delta for counts as zero unless it was left out on that host."""

from __future__ import annotations

from lustre_jobreport import catalog
from lustre_jobreport.catalog import P
from lustre_jobreport.acquire.hostsnap import failed
from kit.jobviews import delta, host


def columns(t, *instances: str) -> tuple[list, list]:
    """(counted, delta) of these instances of a table, host by host."""
    cols = [t.instances.index(i) for i in instances]
    return t.counted[:, cols].tolist(), t.delta[:, cols].tolist()


def test_sent_deltas_are_counted_and_absent_osc_deltas_are_zero():
    d = delta(host("a", osc_read={"scratch-OST0001": 5}), host("b", osc_read={"scratch-OST0000": 7}))
    t = d.tables[P + "osc.read_bytes"]       # every OSC listed at the end: OST0002 moved nothing
    assert t.instances == ["scratch-OST0001", "scratch-OST0000", "scratch-OST0002"]
    assert t.delta.tolist() == [[5, 0, 0], [0, 7, 0]] and t.counted.all()
    assert d.issues == [] and d.hosts == ["a", "b"] and d.begin == 400.0 and d.end == 1000.0


def test_a_cleared_osc_is_a_counter_reset_and_not_counted_on_that_host_only():
    d = delta(host("a", osc_read={"scratch-OST0001": 5}, left_out={"osc_stats": {"scratch-OST0001": catalog.CLEARED}}),
              host("b", osc_read={"scratch-OST0001": 7}))
    t = d.tables[P + "osc.read_bytes"]
    assert columns(t, "scratch-OST0001") == ([[False], [True]], [[0], [7]])
    [q] = d.issues
    assert (q.id, q.host, q.fs) == ("COUNTER_RESET", "a", "scratch")
    assert q.detail == ("osc stats of scratch-OST0001 on a were cleared during the job; left out of the totals, "
                        "which come from the rest")
    assert d.incomplete == {"a": {"scratch"}}


def test_each_missing_code_is_said_as_the_diff_says_it():
    codes = {"scratch-OST0000": catalog.NOT_READ_AT_BEGIN, "scratch-OST0001": catalog.NOT_READ_AT_END,
             "scratch-OST0002": catalog.GONE}
    d = delta(host("a", osc_read={}, left_out={"osc_stats": codes}))
    said = sorted(q.detail for q in d.issues)
    assert [q.id for q in d.issues] == ["VALUES_MISSING"] * 3
    assert any("OST0000" in s and "could not be read at job start on a" in s for s in said)
    assert any("OST0001" in s and "could not be read at job end on a" in s for s in said)
    assert any("OST0002" in s and "were gone at job end on a" in s for s in said)


def test_a_remount_is_one_remount_entry_and_the_filesystem_left_out():
    d = delta(host("a", osc_read={"scratch-OST0000": 3}, llite_read={"scratch": 10},
                   left_out={"llite_stats": {"home": catalog.REMOUNTED}}))
    [q] = d.issues
    assert (q.id, q.host, q.fs) == ("REMOUNT", "a", "home")
    assert d.incomplete == {"a": {"home"}}
    t = d.tables[P + "llite.read_bytes"]
    assert t.instances == ["scratch"] and t.counted.tolist() == [[True]]


def test_hosts_not_read_or_without_the_job_are_left_out_and_grouped():
    hosts = [host("a", osc_read={})] + [failed(f"n{i}", f"n{i}", "its agent has no begin values of job 77 (...)")
                                       for i in range(5)]
    d = delta(*hosts)
    assert d.hosts == ["a"] and d.hosts_missing == [f"n{i}" for i in range(5)]
    [q] = d.issues
    assert q.id == "HOST_UNREACHABLE" and q.host is None
    assert q.detail.startswith("5 hosts could not be read at job end: its agent has no begin values of job 77")


def test_a_delta_the_agent_counted_past_2_to_the_63_is_left_out_and_said():
    """No Lustre counter moves 8 EiB in a job: the agent's delta is a wrap or a corrupt value,
    and whichever way the job was read it is left out, its device's stats file with it."""
    d = delta(host("a", osc_read={"scratch-OST0001": 2**64 - 3, "scratch-OST0002": 9},
                   llite_read={"scratch": 2**63, "home": 4}),
              host("b", osc_read={"scratch-OST0001": 7}))
    t = d.tables[P + "osc.read_bytes"]
    assert columns(t, "scratch-OST0001", "scratch-OST0002") == ([[False, True], [True, True]], [[0, 9], [7, 0]])
    llite = d.tables[P + "llite.read_bytes"]
    assert llite.counted.tolist() == [[False, True], [True, True]] and int(llite.delta.max()) == 10
    assert d.reasons() == {("a", "osc stats", "scratch-OST0001"): catalog.Reason.TOO_LARGE,
                           ("a", "llite stats", "scratch"): catalog.Reason.TOO_LARGE}
    assert sorted((q.id, q.host, q.fs) for q in d.issues) == [("VALUE_TOO_LARGE", "a", "scratch")] * 2
    assert d.incomplete == {"a": {"scratch"}}


def test_a_reason_this_reader_does_not_know_leaves_the_device_out_and_said():
    """A newer agent's code: the device is still left out, and said, never counted unsaid."""
    d = delta(host("a", osc_read={"scratch-OST0001": 5}, left_out={"osc_stats": {"scratch-OST0001": 300}}))
    assert columns(d.tables[P + "osc.read_bytes"], "scratch-OST0001") == ([[False]], [[0]])
    assert d.reasons() == {("a", "osc stats", "scratch-OST0001"): catalog.Reason.NOT_READ}
    assert [(q.id, q.host, q.fs) for q in d.issues] == [("VALUES_MISSING", "a", "scratch")]
