"""Numbers are right or listed as not trusted (issue 9 §2): values missing at one end, devices
never read, type changes, duplicate instances, sums past 2^64, unreachable hosts."""

import json
import subprocess
import sys

import numpy as np
import pytest

from lustre_jobreport import catalog, config
from lustre_jobreport.records import jobrow
from lustre_jobreport.report import view as render, document as report
from lustre_jobreport.acquire import snapfile
from lustre_jobreport.report.aggregate import aggregate
from lustre_jobreport.report.diff import diff
from lustre_jobreport.errors import SnapshotFileError

from kit.snapshots import host, node, snap

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
    from lustre_jobreport.acquire.hostsnap import HostSnapshot
    from lustre_jobreport.acquire.snapfile import Snapshot
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
    from kit.dup_pmda import pmcd_class
    from lustre_jobreport.acquire import snapshot
    from lustre_jobreport.acquire.snapfile import Snapshot
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
    from lustre_jobreport.report import diff as diff_module
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
    from lustre_jobreport.report.aggregate import exact_sum
    v = np.full((1000, 3), 2**64 - 1, dtype=np.uint64)
    assert exact_sum(v, axis=0).tolist() == [1000 * (2**64 - 1)] * 3


@pytest.mark.parametrize("backend", ["pminfo", "pmapi"])
def test_snapshot_with_an_unreachable_host_writes_its_file_and_exits_0(tmp_path, backend):
    """Whichever way the hosts are read: the CLI of the interpreter the tests run (PCP's bindings
    come with it for pmapi: Debian's python3-pcp)."""
    from lustre_jobreport.acquire.snapshot import have_bindings
    from kit.privpmcd import free_port
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


# ---- a value left out is never a 0: not in a total, a finding, a line or a record ----------------

def volume_host(name, *, read_bytes, read_calls, osc_read, sems=None):
    """A host of one filesystem whose OSTs sent twice what the job read, in small calls."""
    m = {"version": {"": "2.15.4"}, "llite.mount_id": {"scratch": "f1"},
         "llite.read_bytes": {"scratch": read_bytes}, "llite.read_calls": {"scratch": read_calls},
         "osc.device": {"scratch-OST0000": "scratch-OST0000-osc-f1"},
         "osc.read_bytes": {"scratch-OST0000": osc_read}, "osc.read_rpcs": {"scratch-OST0000": osc_read >> 20}}
    return host(name, m, sems={"osc.device": "discrete", **(sems or {})})


@pytest.mark.parametrize("where", ["start", "end"])
@pytest.mark.parametrize("hosts", [1, 3])
def test_llite_read_bytes_not_a_counter_fires_nothing_on_it_and_reads_not_read(where, hosts):
    """llite.read_bytes instant in one snapshot (on one host: the whole metric is then not a
    counter): listed as not trusted, and READAHEAD_WASTE and TINY_CALLS fired on it as 0, the
    text said "read 0 B" and the record held 0."""
    def snapshot(t, at_end):
        odd = {"llite.read_bytes": "instant"} if (where == "end") == at_end else {}
        return snap(t, *[volume_host(f"n{i}", read_bytes=10 * GIB * at_end, read_calls=2_000_000 * at_end,
                                     osc_read=20 * GIB * at_end, sems=odd if i == 0 else None)
                         for i in range(hosts)])
    doc = report.build(snapshot(0.0, False), snapshot(3600.0, True), CFG, job_id="1")
    assert [q["id"] for q in doc["data_quality"]] == ["METRIC_TYPE"]
    fs = doc["filesystems"]["scratch"]
    assert fs["read_bytes"] is None and fs["not_read"] == ["read_bytes"] and fs["left_out"] == {"read_bytes": hosts}
    assert fs["read_calls"] == hosts * 2_000_000                       # the rest is whole, and said whole
    assert all("read_bytes" not in v for v in fs["hosts"].values())
    assert {f["id"] for f in doc["flags"]} & {"READAHEAD_WASTE", "TINY_CALLS"} == set()
    text = render.render_text(doc)
    assert "read 0 B" not in text and "scratch: read: bytes not read, " in text
    assert "Not used by this job" not in text and "in what could be read" in text
    html = render.render_html(doc)
    assert "read 0 B" not in html and "read: bytes not read" in html
    assert json.loads(render.render_json(doc))["filesystems"]["scratch"]["read_bytes"] is None
    [row] = jobrow.rows(doc)
    assert row["read_bytes"] is None and row["read_calls"] == hosts * 2_000_000 and not row["trusted"]


def test_llite_read_calls_not_a_counter_is_not_read_and_no_mean_is_made_of_it():
    def h(calls, sem):
        return volume_host("n1", read_bytes=calls * 100, read_calls=calls, osc_read=0,
                           sems={"llite.read_calls": sem})
    doc = report.build(snap(0.0, h(0, "counter")), snap(60.0, h(1_000_000, "instant")), CFG)
    fs = doc["filesystems"]["scratch"]
    assert fs["read_calls"] is None and fs["read_bytes"] == 100_000_000
    assert "TINY_CALLS" not in {f["id"] for f in doc["flags"]}
    text = render.render_text(doc)
    assert "scratch: read 95.4 MiB, calls not read" in text and "read 95.4 MiB in 0 calls" not in text


def test_an_open_count_left_out_is_not_no_opens():
    """STAT_STORM fires on getattr 'with no opens' only when there were no opens, not when the
    opens were not read."""
    def h(n, sem):
        return host("n1", {"version": {"": "2.15.4"}, "llite.mount_id": {"scratch": "f1"},
                           "llite.getattr": {"scratch": 50_000 * n}, "llite.open": {"scratch": 100_000 * n}},
                    sems={"llite.open": sem})
    doc = report.build(snap(0.0, h(0, "instant")), snap(3600.0, h(1, "counter")), CFG)
    assert doc["filesystems"]["scratch"]["ops"]["open"] is None
    assert "STAT_STORM" not in {f["id"] for f in doc["flags"]}
    text = render.render_text(doc)
    assert "open not read" in text and "open 0" not in text and "getattr 50,000" in text


def test_an_rpc_histogram_direction_not_a_counter_is_not_read_and_fires_nothing():
    def h(n, sem):
        return host("n1", {"version": {"": "2.15.4"}, "llite.mount_id": {"scratch": "f1"},
                           "fs.rpc.read": {"scratch:4K": 50_000 * n, "scratch:1M": 10 * n},
                           "fs.rpc.write": {"scratch:4K": 50_000 * n, "scratch:1M": 10 * n}},
                    sems={"fs.rpc.read": sem})
    doc = report.build(snap(0.0, h(0, "counter")), snap(3600.0, h(1, "instant")), CFG, job_id="1")
    fs = doc["filesystems"]["scratch"]
    assert fs["rpc"]["read"] is None and fs["rpc"]["write"] == {"4K": 50_000, "1M": 10}
    assert [f["id"] for f in doc["flags"]] == ["SMALL_RPC_WRITE"]
    text = render.render_text(doc)
    assert "  read  not read" in text.splitlines()
    assert "<td>not read</td>" in render.render_html(doc)
    [row] = jobrow.rows(doc)
    assert row["rpc_read_4K"] is None and row["rpc_write_4K"] == 50_000


def test_an_ost_write_figure_not_a_counter_is_not_read_and_no_share_is_made_of_it():
    """UNDER_STRIPED took the OSTs' read bytes alone for the bytes moved: one OST's reads were
    all of them while the other wrote five times as much, unseen."""
    def h(n, sem):
        return host("n1", {"version": {"": "2.15.4"}, "llite.mount_id": {"scratch": "f1"},
                           "osc.device": {f"scratch-OST000{i}": f"scratch-OST000{i}-osc-f1" for i in range(4)},
                           "osc.read_bytes": {"scratch-OST0000": 20 * GIB * n, "scratch-OST0001": 0,
                                              "scratch-OST0002": 0, "scratch-OST0003": 0},
                           "osc.write_bytes": {"scratch-OST0000": 0, "scratch-OST0001": 100 * GIB * n,
                                               "scratch-OST0002": 0, "scratch-OST0003": 0},
                           "osc.req_waittime": {"scratch-OST0000": 1000 * n, "scratch-OST0001": 1000 * n}},
                    sems={"osc.device": "discrete", "osc.write_bytes": sem, "osc.req_waittime": sem})
    doc = report.build(snap(0.0, h(0, "instant")), snap(3600.0, h(1, "counter")), CFG, job_id="1")
    fs = doc["filesystems"]["scratch"]
    assert fs["osts"]["OST0000"]["write_bytes"] is None and fs["osts"]["OST0000"]["read_bytes"] == 20 * GIB
    assert fs["osts"]["OST0000"]["wait_us_mean"] is None                  # a wait not read is no 0.0
    assert {"osts.write_bytes", "osts.wait_us_mean"} <= set(fs["not_read"])
    assert "UNDER_STRIPED" not in {f["id"] for f in doc["flags"]}
    [row] = jobrow.rows(doc)
    assert row["ost_write_bytes"] is None and row["ost_read_bytes"] == 20 * GIB and row["osts_used"] is None


def test_a_host_whose_read_bytes_had_no_value_at_either_end_is_said_and_no_tiny_calls_are_made_of_it():
    """A bytes line without its sum: the agent gives read_calls and no read_bytes. The calls of
    n2 set against the bytes of n1 alone made a 3.5 KB mean call (TINY_CALLS), silently."""
    def h(name, calls, nbytes):
        m = {"version": {"": "2.15.4"}, "llite.mount_id": {"scratch": "f1"}, "llite.read_calls": {"scratch": calls},
             "llite.read_bytes": {"scratch": nbytes or 0}}
        return host(name, m, no_value=("llite.read_bytes",) if nbytes is None else ())
    b = snap(0.0, h("n1", 0, 0), h("n2", 0, None))
    e = snap(3600.0, h("n1", 100_000, 10 * GIB), h("n2", 3_000_000, None))
    doc = report.build(b, e, CFG, job_id="1")
    [q] = doc["data_quality"]
    assert (q["id"], q["host"], q["fs"]) == ("VALUES_MISSING", "n2", "scratch")
    assert "lustreclient.llite.read_bytes of scratch had no value at job start nor at its end on n2" in q["detail"]
    fs = doc["filesystems"]["scratch"]
    assert fs["read_bytes"] == 10 * GIB and fs["left_out"] == {"read_bytes": 1} and doc["job"]["hosts_incomplete"] == {"n2": ["scratch"]}
    assert "TINY_CALLS" not in {f["id"] for f in doc["flags"]}
    assert "partly read (see Not trusted): read bytes" in render.render_text(doc)
    assert jobrow.rows(doc)[0]["read_bytes"] is None


def test_a_finding_on_totals_some_hosts_of_which_were_left_out_says_so_over_the_same_hosts():
    """n2's llite stats unreadable at the end: TINY_CALLS is judged over n1, the host whose bytes
    and calls were both counted, and says so."""
    def h(name, calls, stats=True):
        m = {"version": {"": "2.15.4"}, "llite.mount_id": {"scratch": "f1"}}
        if stats:
            m.update({"llite.read_calls": {"scratch": calls}, "llite.read_bytes": {"scratch": calls * 100}})
        return host(name, m, llite_stats=stats)
    doc = report.build(snap(0.0, h("n1", 0), h("n2", 0)), snap(3600.0, h("n1", 200_000), h("n2", 0, stats=False)), CFG)
    [tiny] = [f for f in doc["flags"] if f["id"] == "TINY_CALLS"]
    assert "over the 1 host whose counters were all read; 1 left out" in tiny["finding"]
    assert tiny["evidence"]["left_out"] == {"read_bytes": 1, "read_calls": 1} and tiny["evidence"]["calls"] == 200_000
    assert tiny["rests_on"] == ["read_bytes", "read_calls"]


def test_through_the_job_view_a_counter_not_a_counter_is_not_read_and_an_unsent_osc_delta_is_a_zero():
    """Read through the agents' job view, an OSC an agent sent no delta for is a zero unless
    that agent says it left the OSC out (its left_out codes), whatever else it left out."""
    from lustre_jobreport import catalog
    from lustre_jobreport.report.aggregate import aggregate
    from kit.jobviews import delta as job_view, host as job_host
    d = job_view(job_host("a", osc_read={"scratch-OST0001": 5}, llite_read={"home": 0},
                          left_out={"llite_stats": {"scratch": catalog.CLEARED}}),
                 job_host("b", osc_read={"scratch-OST0001": 7}, left_out={"osc_stats": {"scratch-OST0002": catalog.GONE}}))
    fs = aggregate(d)["scratch"]
    assert fs.osts["OST0001"]["read_bytes"] == 12 and fs.left_out["osts.read_bytes"] == 1    # b's OST0002 only
    assert fs.left_out["read_bytes"] == 1 and fs.read_bytes == 10          # b's, a's left out
    a = job_host("a", osc_read={"scratch-OST0001": 5})
    a.sems[catalog.job_view_name("lustreclient.osc.read_bytes")] = "instant"
    d = job_view(a, job_host("b", osc_read={"scratch-OST0001": 7}))
    assert [i.id for i in d.issues] == ["METRIC_TYPE"]
    fs = aggregate(d)["scratch"]
    assert "osts.read_bytes" in fs.not_read and fs.left_out["osts.read_bytes"] == 2


def test_an_ost_gone_at_the_end_leaves_its_figures_partly_read_and_a_new_one_unreadable_at_the_end_is_said():
    """n1's OST0001 is gone at the end: its value there is left out (said by the diff), not a 0
    of a complete total. n2's OST0002 is new and its osc stats could not be read at the end: no
    value at either end, said once, by the diff (not counted from zero)."""
    def h(name, reads, listed):
        return host(name, {"version": {"": "2.15.4"}, "llite.mount_id": {"scratch": "f1"},
                           "osc.device": {f"scratch-OST000{i}": f"scratch-OST000{i}-osc-f1" for i in listed},
                           "osc.read_bytes": {f"scratch-OST000{i}": v for i, v in reads.items()}},
                    sems={"osc.device": "discrete"})
    b = snap(0.0, h("n1", {0: 0, 1: 0}, [0, 1]), h("n2", {0: 0, 1: 0}, [0, 1]))
    e = snap(60.0, h("n1", {0: GIB}, [0]), h("n2", {0: GIB, 1: GIB}, [0, 1, 2]))
    doc = report.build(b, e, CFG)
    said = {(q["host"], q["detail"].split(":")[0]) for q in doc["data_quality"]}
    assert ("n1", "osc stats of 1 OSC of scratch (scratch-OST0001) were gone at job end on n1") in said
    assert [what for host, what in said if host == "n2"] == [
        "osc stats of 1 OSC of scratch (scratch-OST0002) could not be read at job end on n2"]
    fs = doc["filesystems"]["scratch"]
    assert fs["left_out"]["osts.read_bytes"] == 2 and fs["osts"]["OST0001"]["read_bytes"] == GIB
    assert doc["job"]["hosts_incomplete"] == {"n1": ["scratch"], "n2": ["scratch"]}
    assert jobrow.rows(doc)[0]["ost_read_bytes"] is None
