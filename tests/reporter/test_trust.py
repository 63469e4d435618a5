"""Numbers are right or listed as not trusted (issue 9 §2): values missing at one end, devices
never read, type changes, duplicate instances, sums past 2^64, unreachable hosts."""

import json
import subprocess
import sys

import numpy as np
import pytest

from lustre_jobreport import catalog, config, render, report, snapfile
from lustre_jobreport.aggregate import aggregate
from lustre_jobreport.diff import diff
from lustre_jobreport.errors import SnapshotFileError

from snapshots import host, node, snap

CFG = config.Config()
GIB = 1 << 30


def ids(doc_or_delta):
    issues = doc_or_delta["data_quality"] if isinstance(doc_or_delta, dict) else \
        [i.to_json() for i in doc_or_delta.issues]
    return sorted((q["id"], q["host"], q["fs"]) for q in issues)


def llite_host(name, read_bytes, *, stats=True, mount="f1"):
    m = {"version": {"": "2.15.4"}, "llite.mount_id": {"scratch": mount}}
    if stats:   # the agent gives no llite values when it could not read the stats file
        m["llite.read_bytes"] = {"scratch": read_bytes}
        m["llite.open"] = {"scratch": read_bytes // GIB}
    return host(name, m, llite_stats=stats)


def test_a_host_whose_llite_stats_is_unreadable_at_the_end_is_said_not_silently_dropped():
    b = snap(0.0, llite_host("n1", 0), llite_host("n2", 0))
    e = snap(100.0, llite_host("n1", 10 * GIB), llite_host("n2", 0, stats=False))
    doc = report.build(b, e, CFG)
    assert ids(doc) == [("VALUES_MISSING", "n2", "scratch")]
    q = doc["data_quality"][0]
    assert "llite stats of scratch could not be read at job end on n2" in q["detail"]
    assert doc["filesystems"]["scratch"]["read_bytes"] == 10 * GIB    # the rest, and said so
    assert doc["job"]["hosts"] == ["n1", "n2"]
    assert doc["job"]["hosts_incomplete"] == {"n2": ["scratch"]}
    text = render.render_text(doc)
    assert "llite stats of scratch could not be read at job end on n2" in text
    assert "2 hosts | 1 partly read" in text
    assert "No I/O problems found in what could be read (see Not trusted)." in text


def osc_host(name, reads, *, listed=None, skips=0, when_read=None):
    """OSCs of scratch: reads {idx: read_bytes} are the ones whose stats the agent read;
    listed: every OSC index the agent's device listing has (default: those read)."""
    listed = sorted(reads) if listed is None else listed
    m = {"version": {"": "2.15.4"}, "llite.mount_id": {"scratch": "f1"},
         "osc.device": {f"scratch-OST{i:04x}": f"scratch-OST{i:04x}-osc-ffff1" for i in listed},
         "osc.read_bytes": {f"scratch-OST{i:04x}": v for i, v in reads.items()},
         "osc.read_rpcs": {f"scratch-OST{i:04x}": v // (1 << 20) for i, v in reads.items()},
         "agent.fetch.budget_skips": {"": skips}}
    return host(name, m, sems={"osc.device": "discrete", "agent.fetch.budget_skips": "instant"})


def test_an_osc_skipped_at_the_start_is_left_out_not_counted_from_zero():
    """The agent's time budget ran out at the start: OST0001 existed (listed) but was not read."""
    b = snap(0.0, osc_host("n1", {0: 5 * GIB}, listed=[0, 1], skips=3))
    e = snap(100.0, osc_host("n1", {0: 6 * GIB, 1: 900 * GIB}))
    doc = report.build(b, e, CFG)
    osts = doc["filesystems"]["scratch"]["osts"]
    assert list(osts) == ["OST0000"] and osts["OST0000"]["read_bytes"] == GIB
    [q] = doc["data_quality"]
    assert q["id"] == "VALUES_MISSING" and "could not be read at job start on n1" in q["detail"]
    assert "skipped 3 files when its fetch time budget ran out" in q["detail"]
    assert "READAHEAD_WASTE" not in {f["id"] for f in doc["flags"]}


def test_a_new_ost_counts_from_zero_when_the_listing_says_it_is_new():
    b = snap(0.0, osc_host("n1", {0: 5 * GIB}))
    e = snap(100.0, osc_host("n1", {0: 6 * GIB, 7: 2 * GIB}))
    doc = report.build(b, e, CFG)
    assert doc["data_quality"] == []
    assert doc["filesystems"]["scratch"]["osts"]["OST0007"]["read_bytes"] == 2 * GIB


def test_most_oscs_never_read_is_said_with_how_many():
    """100,000 OSCs tried: only a fraction was captured. Every OSC not read at either end is said."""
    listed = list(range(1000))
    b = snap(0.0, osc_host("n1", {i: 0 for i in range(200)}, listed=listed, skips=800))
    e = snap(100.0, osc_host("n1", {i: GIB for i in range(150)}, listed=listed, skips=850))
    doc = report.build(b, e, CFG)
    qs = {q["detail"].split(" of ")[1].split(" ")[0]: q for q in doc["data_quality"]}
    details = " | ".join(q["detail"] for q in doc["data_quality"])
    assert all(q["id"] == "VALUES_MISSING" for q in doc["data_quality"])
    assert "osc stats of 800 OSCs of scratch" in details and "nor at its end" in details   # 200..999
    assert "osc stats of 50 OSCs of scratch" in details and "at job end" in details        # 150..199
    assert "skipped 850 files" in details
    assert sum(o["read_bytes"] for o in doc["filesystems"]["scratch"]["osts"].values()) == 150 * GIB
    assert qs


def test_an_osc_gone_at_the_end_is_said():
    b = snap(0.0, osc_host("n1", {0: GIB, 1: GIB}))
    e = snap(100.0, osc_host("n1", {0: 2 * GIB}))
    rpc, osc = report.build(b, e, CFG)["data_quality"]     # its stats, and the histogram it was in
    assert osc["id"] == "VALUES_MISSING" and "were gone at job end" in osc["detail"] and "OST0001" in osc["detail"]
    assert rpc["id"] == "VALUES_MISSING" and rpc["detail"].startswith("osc rpc_stats of scratch summed an OSC")


def test_a_counter_that_turns_into_a_string_is_left_out_not_read_as_zero():
    """Was read as 0 at the start, which fired READAHEAD_WASTE at a ratio of 5.8e10."""
    def h(osc_bytes, as_string):
        v = str(osc_bytes) if as_string else osc_bytes
        return host("n1", {"llite.mount_id": {"scratch": "f"}, "llite.read_bytes": {"scratch": GIB},
                           "osc.read_bytes": {"scratch-OST0000": v}, "osc.read_rpcs": {"scratch-OST0000": 1}})
    for begin_string in (True, False):
        b = snap(0.0, h(58 * GIB, begin_string))
        e = snap(100.0, h(58 * GIB + 1, not begin_string))
        doc = report.build(b, e, CFG)
        assert "READAHEAD_WASTE" not in {f["id"] for f in doc["flags"]}
        assert {q["id"] for q in doc["data_quality"]} >= {"VALUES_MISSING"}
        assert doc["filesystems"]["scratch"]["osts"] == {}


def test_a_counter_that_turns_into_an_instant_value_is_left_out_and_said():
    def h(n, sem):
        return host("n1", {"llite.mount_id": {"scratch": "f"}, "osc.read_bytes": {"scratch-OST0000": n}},
                    sems={"osc.read_bytes": sem})
    doc = report.build(snap(0.0, h(10, "instant")), snap(100.0, h(60 * GIB, "counter")), CFG)
    assert [q["id"] for q in doc["data_quality"]] == ["METRIC_TYPE"]
    assert doc["filesystems"]["scratch"]["osts"] == {}


def test_duplicate_instance_names_in_a_snapshot_file_are_refused(tmp_path):
    s = snap(0.0, node("n1", osc={0: {"read_bytes": 5}, 1: {"read_bytes": 7}}))
    doc = snapfile.to_json(s)
    doc["metrics"]["lustreclient.osc.read_bytes"]["instances"] = ["scratch-OST0000", "scratch-OST0000"]
    (tmp_path / "dup.json").write_text(json.dumps(doc))
    with pytest.raises(SnapshotFileError, match="listed twice"):
        snapfile.read(tmp_path / "dup.json")


def test_duplicate_instance_names_from_pminfo_make_the_host_unreadable():
    from lustre_jobreport.hostsnap import HostSnapshot
    from lustre_jobreport.snapfile import Snapshot
    text = ('lustreclient.osc.read_bytes PMID: 220.7.0\n'
            '    Data Type: 64-bit unsigned int  InDom: 220.1 0x37000001\n'
            '    Semantics: counter  Units: byte\n'
            '    inst [0 or "scratch-OST0000"] value 5\n'
            '    inst [1 or "scratch-OST0000"] value 900\n')
    s = Snapshot.from_hosts(0.0, [HostSnapshot("n1", "n1", ok=True, fetched_at=0.0, pminfo=text.encode())])
    assert not s.hosts["n1"].ok and "twice" in s.hosts["n1"].error


@pytest.mark.parametrize("backend", ["pminfo", "pmapi"])
def test_duplicate_instance_names_from_a_pmcd_make_the_host_unreadable_on_either_backend(tmp_path, backend):
    """Through a real pmcd (a stand-in agent: dup_pmda.py): the answer names scratch-OST0000 for
    two instances; whichever way it was read, the host is unreadable, in the same words."""
    from dup_pmda import pmcd_class
    from lustre_jobreport import snapshot
    from lustre_jobreport.snapfile import Snapshot
    if not snapshot.have_bindings():
        pytest.skip("the stand-in agent and the pmapi backend need PCP's Python bindings (python3-pcp)")
    with pmcd_class()(tmp_path / "pmcd") as pmcd:
        fetched = snapshot.fetch_all([snapshot.HostTarget("n1", pmcd.spec)], backend=backend,
                                     connect_timeout_s=2, fetch_timeout_s=3)
    s = Snapshot.from_hosts(fetched.taken_at, fetched.hosts)
    assert not s.hosts["n1"].ok
    assert s.hosts["n1"].error == "fetch failed: lustreclient.osc.read_bytes lists an instance twice"
    assert s.metrics == {}


def test_sums_past_2_to_the_64_are_exact_and_said():
    """Two hosts at 2^63+5 once summed to 10 bytes. Each host's delta is below 2^63 here (one at
    or past it is no count: below); their sum is exact, and said, as past what a record keeps."""
    big = 2**63 - 1
    def h(name, n):
        return node(name, llite={"write_bytes": n, "write_calls": n // (1 << 20)},
                    rpc={("write", "1M"): n // (1 << 20), ("write", "4K"): 0})
    hosts = ("n1", "n2", "n3")
    doc = report.build(snap(0.0, *(h(n, 0) for n in hosts)), snap(100.0, *(h(n, big) for n in hosts)), CFG)
    fs = doc["filesystems"]["scratch"]
    assert fs["write_bytes"] == 3 * big > 2**64
    assert fs["rpc"]["write"]["1M"] == 3 * (big // (1 << 20))
    assert doc["flags"] == []
    assert ids(doc) == [("VALUE_TOO_LARGE", None, "scratch")]
    [q] = doc["data_quality"]
    assert "write_bytes" in q["detail"] and "rpc write 1M" not in q["detail"]
    assert json.loads(render.render_json(doc))["filesystems"]["scratch"]["write_bytes"] == 3 * big
    assert "24.0 EiB" in render.render_text(doc)


def test_a_delta_of_2_to_the_63_or_more_is_no_count_left_out_and_said():
    """No Lustre counter moves 8 EiB in a job: a corrupt value or a wrap, never summed."""
    def h(name, n, calls):
        return node(name, llite={"write_bytes": n, "write_calls": calls})
    doc_delta = diff(snap(0.0, h("n1", 5, 7), h("n2", 5, 7)), snap(100.0, h("n1", 2**63 + 5, 8), h("n2", 1 << 30, 8)))
    assert ids(doc_delta) == [("VALUE_TOO_LARGE", "n1", "scratch")]
    assert doc_delta.reasons() == {("n1", "llite stats", "scratch"): catalog.Reason.TOO_LARGE}
    assert doc_delta.incomplete == {"n1": {"scratch"}}
    fs = aggregate(doc_delta)["scratch"]
    assert (fs.write_bytes, fs.write_calls) == ((1 << 30) - 5, 1)      # n2's; n1's whole llite stats left out


def test_a_counter_gone_back_that_a_rule_let_through_is_left_out_and_said_never_wrapped(monkeypatch):
    """Were a rule ever to count a value whose end is below its begin, the subtraction would
    wrap to ~2^64: where the delta is made, it is left out as a clear instead."""
    from lustre_jobreport import diff as diff_module
    judge = diff_module._judge

    def judge_counting_everything(g, pairs, b, e, remounted):
        reasons, b_known = judge(g, pairs, b, e, remounted)
        return np.zeros_like(reasons), b_known
    monkeypatch.setattr(diff_module, "_judge", judge_counting_everything)
    d = diff(snap(0.0, node("n1", llite={"open": 100}), node("n2", llite={"open": 1})),
             snap(100.0, node("n1", llite={"open": 3}), node("n2", llite={"open": 4})))
    assert ids(d) == [("COUNTER_RESET", "n1", "scratch")]
    assert d.reasons() == {("n1", "llite stats", "scratch"): catalog.Reason.CLEARED}
    t = d.tables["lustreclient.llite.open"]
    assert t.delta.tolist() == [[0], [3]] and t.counted.tolist() == [[False], [True]]


def test_exact_sum_of_many_large_values():
    from lustre_jobreport.aggregate import exact_sum
    v = np.full((1000, 3), 2**64 - 1, dtype=np.uint64)
    assert exact_sum(v, axis=0).tolist() == [1000 * (2**64 - 1)] * 3


@pytest.mark.parametrize("backend", ["pminfo", "pmapi"])
def test_snapshot_with_an_unreachable_host_writes_its_file_and_exits_0(tmp_path, backend):
    """Whichever way the hosts are read: the CLI of the interpreter the tests run (PCP's bindings
    come with it for pmapi: Debian's python3-pcp)."""
    from lustre_jobreport.snapshot import have_bindings
    from privpmcd import free_port
    if backend == "pmapi" and not have_bindings():
        pytest.skip("PCP's Python bindings (python3-pcp) are needed for the pmapi backend")
    out = tmp_path / "s.json"
    r = subprocess.run([sys.executable, "-m", "lustre_jobreport", "snapshot", "--backend", backend,
                        "--host", f"dead=localhost:{free_port()}", "--connect-timeout", "1",
                        "--fetch-timeout", "1", "-o", str(out)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.splitlines() == ["lustre-jobreport: warning: dead: cannot connect to pmcd: Connection refused"]
    s = snapfile.read(out)
    assert not s.hosts["dead"].ok and s.hosts["dead"].error == "cannot connect to pmcd: Connection refused"
