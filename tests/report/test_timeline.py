"""The job's timeline (report/timeline.py): the hosts' series summed, held to a plain reference
written with loops; the report's "timeline" made from real snapshots' deltas (the totals it is
checked against), its downsampling, phases in seconds, findings given their time, notes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kit import snapshots, timelines
from kit.proptest import runs
from lustre_jobreport import config
from lustre_jobreport.report.diff import iso_utc
from lustre_jobreport.acquire.jobseries import VALUE_INDEX, VALUES, FsColumns, Series
from lustre_jobreport.report import document, phases, timeline
from lustre_jobreport.report.diff import diff
from lustre_jobreport.report.timeline import NVALUES, POINTS, Accumulator

READ, WRITE, OPEN = (VALUE_INDEX[(f"llite.{k}", None)] for k in ("read_bytes", "write_bytes", "open"))
CALLS = {d: VALUE_INDEX[(f"llite.{d}_calls", None)] for d in ("read", "write")}
LATENCY = {d: VALUE_INDEX[(f"llite.latency.{d}", None)] for d in ("read", "write")}
RPC_READ = [VALUE_INDEX[("fs.rpc.read", b)] for b in range(64)]
RPC_WRITE = [VALUE_INDEX[("fs.rpc.write", b)] for b in range(64)]


def one_fs_series(first_bin: int, data: dict[int, np.ndarray], *, level: int = 0, interval_ms: int = 10_000,
                  samples: np.ndarray | None = None, fs: str = "scratch", lacks: frozenset = frozenset()) -> Series:
    """A series of one filesystem: value index -> its points (lacks: the metrics its agent's
    table does not name)."""
    n = len(next(iter(data.values())))
    index = np.array(sorted(data), dtype=np.intp)
    cols = np.stack([np.asarray(data[i], dtype=np.int64) for i in index], axis=1) if len(index) else \
        np.zeros((n, 0), dtype=np.int64)
    return Series(level, interval_ms, first_bin, np.ones(n, dtype=np.uint32) if samples is None else samples,
                  {fs: FsColumns(index, cols)}, lacks)


# ---- the Accumulator against a plain reference ------------------------------------------------

def reference(hosts: list[tuple[str, Series]]):
    """The job's sums, point by point: the hosts whose width is a power-of-two multiple or
    fraction of the first host's; every point of theirs added into the bin of the coarsest width
    that holds it; a bin is a gap where a point of some host with no sample falls in it."""
    def power_of_two(a: int, b: int) -> bool:
        big, small = max(a, b), min(a, b)
        if big % small:
            return False
        r = big // small
        while r % 2 == 0:
            r //= 2
        return r == 1

    base = hosts[0][1].width_ms
    kept = [(h, s) for h, s in hosts if power_of_two(s.width_ms, base)]
    out = [h for h, s in hosts if not power_of_two(s.width_ms, base)]
    width = max(s.width_ms for _, s in kept)
    sums: dict[str, dict[int, list[int]]] = {}
    gaps: set[int] = set()
    bins: set[int] = set()
    for _, s in kept:
        for i in range(s.npoints):
            b = (s.first_bin + i) * s.width_ms // width
            bins.add(b)
            if s.samples[i] == 0:
                gaps.add(b)
            for fs, cols in s.filesystems.items():
                row = sums.setdefault(fs, {}).setdefault(b, [0] * NVALUES)
                for k, v in enumerate(cols.index):
                    row[v] += int(cols.data[i, k])
    return width, [h for h, _ in kept], out, sums, gaps, bins


@st.composite
def hosts_of_a_job(draw):
    """A job's hosts: random levels, first bins and lengths, a few of the 157 values each (sparse,
    some negative), a few sample-less bins; sometimes one host of an interval that cannot align."""
    n = draw(st.integers(1, 6))
    interval = draw(st.sampled_from([1000, 10_000]))
    start_ms = draw(st.integers(1_000_000, 1_100_000)) * 1000
    out = []
    for h in range(n):
        level = draw(st.integers(0, 3))
        width = interval << level
        first = start_ms // width + draw(st.integers(-2, 2))
        npoints = draw(st.integers(0, 12))
        index = sorted(draw(st.sets(st.integers(0, NVALUES - 1), max_size=5)))
        data = np.array(draw(st.lists(st.integers(-(1 << 40), 1 << 40), min_size=npoints * len(index),
                                      max_size=npoints * len(index))), dtype=np.int64).reshape(npoints, len(index))
        samples = np.array(draw(st.lists(st.integers(0, 2), min_size=npoints, max_size=npoints)), dtype=np.uint32)
        fs = draw(st.sampled_from(["scratch", "home"]))
        out.append((f"n{h}", Series(level, interval, first, samples, {fs: FsColumns(np.array(index, np.intp), data)})))
    if draw(st.booleans()):
        odd = Series(0, interval * 3 // 2 if interval > 1000 else 3000, start_ms // 3000, np.ones(2, np.uint32),
                     {"scratch": FsColumns(np.array([READ]), np.array([[5], [7]], dtype=np.int64))})
        out.insert(draw(st.integers(1, len(out))), ("odd", odd))
    return out


@settings(max_examples=400, deadline=None)
@given(hosts_of_a_job())
def test_the_sums_are_the_reference_sums(hosts):
    acc = Accumulator()
    for h, s in hosts:
        acc.add(h, s)
    width, kept, out, sums, gaps, bins = reference(hosts)
    assert acc.width_ms == width
    assert acc.hosts == kept and sorted(acc.left_out) == sorted(out)
    assert all("do not align" in why for why in acc.left_out.values())
    if not bins:
        assert acc.bins == 0
        return
    assert acc.first_bin == min(bins) and acc.first_bin + acc.bins - 1 == max(bins)
    for fs in set(acc.sums) | set(sums):
        got = acc.sums[fs]
        for r in range(acc.bins):
            assert got[r].tolist() == sums.get(fs, {}).get(acc.first_bin + r, [0] * NVALUES)
    assert [acc.first_bin + r for r in np.flatnonzero(acc.gap)] == sorted(gaps)


def test_a_host_of_coarser_bins_re_bins_the_sums_exactly():
    acc = Accumulator()
    acc.add("fine", one_fs_series(101, {READ: np.array([1, 2, 3, 4, 5])}))             # bins 101..105 of 10 s
    acc.add("coarse", one_fs_series(25, {READ: np.array([100, 200])}, level=2))        # bins 25, 26 of 40 s
    assert (acc.width_ms, acc.first_bin) == (40_000, 25)
    # 101, 102, 103 are in 40 s bin 25 (100..103), 104, 105 in bin 26
    assert acc.sums["scratch"][:, READ].tolist() == [100 + 1 + 2 + 3, 200 + 4 + 5]


def test_a_series_that_is_not_one_is_left_out_with_why():
    acc = Accumulator()
    bad = Series(0, 10_000, 100, np.ones(3, np.uint32), {"scratch": FsColumns(np.array([0]), np.zeros((2, 1), np.int64))})
    acc.add("n1", bad)
    acc.add("n2", one_fs_series(100, {READ: np.array([1, 2, 3])}))
    assert acc.hosts == ["n2"] and "n1" in acc.left_out and "3 points" in acc.left_out["n1"]


def test_a_host_whose_clock_is_far_off_is_left_out_and_changes_nothing():
    acc = Accumulator()
    acc.add("n1", one_fs_series(170_000_000, {READ: np.array([1, 2, 3])}))
    acc.add("far", one_fs_series(170_000_000 // 4 + 10 ** 4, {READ: np.array([9])}, level=2))   # coarser, 4.6 days on
    assert acc.hosts == ["n1"] and "clock" in acc.left_out["far"]
    assert (acc.width_ms, acc.first_bin, acc.bins) == (10_000, 170_000_000, 3)
    assert acc.sums["scratch"][:, READ].tolist() == [1, 2, 3]


def test_twelve_thousand_hosts_hold_one_jobs_arrays():
    """Memory: what the accumulator holds after 12,000 hosts of 360 points is the job's arrays
    (bins x 157 values), not the hosts' series."""
    acc = Accumulator()
    rng = np.random.default_rng(1)
    data = rng.integers(0, 1 << 30, (360, 3))
    index = np.array([READ, WRITE, OPEN], dtype=np.intp)
    for h in range(12_000):
        s = Series(0, 10_000, 1_000_000 + h % 3, np.ones(360, np.uint32), {"scratch": FsColumns(index, data)})
        acc.add(f"n{h:05d}", s)
    arrays = [a for a in vars(acc).values() if isinstance(a, np.ndarray)]
    arrays += [a for d in vars(acc).values() if isinstance(d, dict) for a in d.values() if isinstance(a, np.ndarray)]
    assert acc.bins == 362 and acc.sums["scratch"].shape == (362, NVALUES)
    assert sum(a.nbytes for a in arrays) <= 362 * NVALUES * 8 + 362 + NVALUES * 8
    assert acc.sums["scratch"][:, READ].sum() == 12_000 * data[:, 0].sum()


# ---- the report's timeline, from real deltas -------------------------------------------------

T0 = 1_700_000_000.0 - (1_700_000_000.0 % 10)       # a bin boundary of 10 s bins


def node(name: str, llite: dict[str, int] | None = None, rpc: dict[tuple[str, str], int] | None = None,
         pagesize: int = 4096):
    """A host as the agent reads it: llite values and RPC-size buckets of fs scratch."""
    m = {"version": {"": "2.15.4"}, "llite.mount_id": {"scratch": "ffff0001"}, "pagesize": {"": pagesize}}
    for op, n in (llite or {}).items():
        m.setdefault(f"llite.{op}", {})["scratch"] = n
    for (d, size), n in (rpc or {}).items():
        m.setdefault(f"fs.rpc.{d}", {})[f"scratch:{size}"] = n
    return snapshots.host(name, m, sems={"pagesize": "discrete"})


def totals_of(s: Series, fs: str = "scratch") -> tuple[dict[str, int], dict[tuple[str, str], int]]:
    """What the host's deltas are when its series is consistent: each value's points summed."""
    cols = s.filesystems[fs]
    sums = cols.data.sum(axis=0)
    llite, rpc = {}, {}
    for i, v in zip(cols.index, sums.tolist()):
        name, bucket = VALUES[i]
        if bucket is None:
            llite[name[len("llite."):]] = v
        else:
            rpc[(name.rsplit(".", 1)[1], f"{(4 << bucket)}K")] = v
    return llite, rpc


def report(series: dict[str, Series], *, begin: float = T0, elapsed: float = 3600.0, extra_hosts=(),
           end_values: dict[str, dict] | None = None, rpc_extra: dict[str, dict[int, int]] | None = None,
           acc: Accumulator | None = None, cfg=None, begin_values: dict[str, dict] | None = None) -> dict:
    """The report of a job whose hosts' deltas are their series' sums (or end_values[host]:
    llite key -> value; rpc_extra[host]: value index -> what its bucket's total is off by;
    begin_values[host]: llite key -> its value at the begin, 0 unless given)."""
    names = list(series) + list(extra_hosts)
    starts, ends = [], []
    for h in names:
        llite, rpc = totals_of(series[h]) if h in series else ({"read_bytes": 1 << 20}, {})
        llite = {**llite, **(end_values or {}).get(h, {})}
        for v, off in (rpc_extra or {}).get(h, {}).items():
            name, bucket = VALUES[v]
            key = (name.rsplit(".", 1)[1], f"{4 << bucket}K")
            rpc[key] = rpc.get(key, 0) + off
        # a client with latencies (2.14+) has them at the job's begin too
        starts.append(node(h, {**{k: 0 for k in llite if k.startswith("latency.")}, **(begin_values or {}).get(h, {})},
                           rpc=dict.fromkeys(rpc, 0)))
        ends.append(node(h, llite, rpc))
    b = snapshots.snap(begin, *starts)
    e = snapshots.snap(begin + elapsed, *ends)
    if acc is None:
        acc = Accumulator()
        for h, s in series.items():
            acc.add(h, s)
    return document.from_delta(diff(b, e), cfg or config.Config(), job_id="1", user="u", timeline=acc)


@settings(max_examples=60, deadline=None)
@given(st.integers(6, 700), st.integers(0, 1000), st.integers(0, 2))
def test_points_are_k_aligned_sums_of_bins_k_the_least_that_fits(n, offset, level):
    width_s = 10 << level
    first = int(T0) // width_s + offset
    rng = np.random.default_rng(n)
    reads = rng.integers(-50, 1 << 20, n)
    s = one_fs_series(first, {READ: reads}, level=level)
    tl = report({"n1": s}, begin=first * width_s + 3.2, elapsed=n * width_s)["timeline"]
    points = tl["filesystems"]["scratch"]["read_bytes"]
    k = round(tl["width_s"] / width_s)

    def npoints(k):
        return (first + n - 1) // k - first // k + 1
    assert tl["points"] == len(points) == npoints(k) <= POINTS
    assert k == 1 or npoints(k - 1) > POINTS
    want = [0] * len(points)
    for i in range(n):
        want[(first + i) // k - first // k] += int(reads[i])
    assert points == want
    assert tl["start"] == iso_utc((first // k) * k * width_s)
    assert tl["begin_offset_s"] == pytest.approx((first // k) * k * width_s - (first * width_s + 3.2))


def test_sums_to_totals_on_consistent_hosts_and_one_without():
    rng = np.random.default_rng(3)
    hosts = {f"n{i}": one_fs_series(int(T0) // 10, {READ: rng.integers(0, 1 << 30, 360), OPEN: rng.integers(0, 9, 360),
                                                     RPC_READ[0]: rng.integers(0, 50, 360),
                                                     RPC_READ[8]: rng.integers(0, 50, 360)}) for i in range(3)}
    doc = report(hosts, extra_hosts=["n9"])
    tl = doc["timeline"]
    fs = tl["filesystems"]["scratch"]
    assert fs["sums_to_totals"] is True
    assert (tl["hosts"], tl["hosts_without"]) == (3, ["n9"])
    assert sorted(fs["rpc_read"]) == ["1", "256"] and fs["rpc_write"] == {}
    assert sum(fs["small_rpcs"]) == sum(int(s.filesystems["scratch"].data[:, 2].sum()) for s in hosts.values())
    partial = [q for q in doc["data_quality"] if q["id"] == "TIMELINE_PARTIAL"]
    assert len(partial) == 1 and "n9" in partial[0]["detail"] and partial[0]["fs"] is None


CHECKED = [READ, WRITE, OPEN, VALUE_INDEX[("llite.getattr", None)], RPC_READ[0], RPC_READ[8], RPC_WRITE[2]]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(0, 1000), min_size=len(CHECKED), max_size=len(CHECKED)),
                          st.lists(st.sampled_from([0, 0, 0, -1, 1, 7]), min_size=len(CHECKED), max_size=len(CHECKED))),
                min_size=1, max_size=3))
def test_sums_to_totals_is_whether_every_value_adds_up_over_the_hosts(hosts):
    """Each host: a level per value over 30 points, and what its totals differ from its series
    by (0 mostly). The timeline sums to its totals when, value by value, the differences over
    the hosts add up to 0; the values that do not are named."""
    series, end_values, rpc_off = {}, {}, {}
    for h, (levels, off) in enumerate(hosts):
        name = f"n{h}"
        series[name] = one_fs_series(int(T0) // 10, {v: np.full(30, lv) for v, lv in zip(CHECKED, levels)})
        sums = {v: 30 * lv for v, lv in zip(CHECKED, levels)}
        end_values[name] = {VALUES[v][0][len("llite."):]: max(sums[v] + o, 0) for v, o in zip(CHECKED, off)
                            if VALUES[v][1] is None}
        rpc_off[name] = {v: max(sums[v] + o, 0) - sums[v] for v, o in zip(CHECKED, off) if VALUES[v][1] is not None}
    differ = []
    for v in CHECKED:
        total_off = 0
        for h, s in series.items():
            if VALUES[v][1] is None:
                total_off += end_values[h][VALUES[v][0][len("llite."):]] - int(s.filesystems["scratch"].data[:, CHECKED.index(v)].sum())
            else:
                total_off += rpc_off[h][v]
        if total_off:
            differ.append(v)
    doc = report(series, end_values=end_values, rpc_extra=rpc_off)
    fs = doc["timeline"]["filesystems"]["scratch"]
    assert fs["sums_to_totals"] is (not differ)
    partial = [q["detail"] for q in doc["data_quality"] if q["id"] == "TIMELINE_PARTIAL"]
    assert len(partial) == (1 if differ else 0)
    if differ:
        said = partial[0].split(": the agents' series")[0]
        named = {v for v in CHECKED if any(timeline._value_name(v) + end in said for end in (" ", ":", ","))}
        assert named <= set(differ) and len(named) >= min(len(differ), 3)


def test_a_host_whose_series_does_not_sum_to_its_totals_is_said():
    s1 = one_fs_series(int(T0) // 10, {READ: np.full(60, 100), OPEN: np.full(60, 2)})
    s2 = one_fs_series(int(T0) // 10, {READ: np.full(60, 100), OPEN: np.full(60, 2)})
    doc = report({"n1": s1, "n2": s2}, end_values={"n2": {"open": 121}})
    assert doc["timeline"]["filesystems"]["scratch"]["sums_to_totals"] is False
    partial = [q for q in doc["data_quality"] if q["id"] == "TIMELINE_PARTIAL"]
    assert len(partial) == 1 and partial[0]["fs"] == "scratch"
    assert "open" in partial[0]["detail"] and "240 in the timeline, 241 in the totals" in partial[0]["detail"]
    assert "read_bytes" not in partial[0]["detail"]


@pytest.mark.parametrize("shift_bins, said", [(0, False), (-1, False), (1, False), (3, True), (-3, True)])
def test_a_timeline_outside_the_jobs_time_is_said(shift_bins, said):
    """A bin of slack either side (the job's begin and end fall inside bins); more is a clock off."""
    s = one_fs_series(int(T0) // 10 + shift_bins, {READ: np.full(60, 5)})
    doc = report({"n1": s}, begin=T0, elapsed=600)
    partial = [q["detail"] for q in doc["data_quality"] if q["id"] == "TIMELINE_PARTIAL"]
    assert bool(partial) is said
    assert not partial or "clocks" in partial[0]


def test_a_negative_point_is_kept():
    reads = np.array([5, 5, -3, 5, 5, 5, 5, 5], dtype=np.int64)
    doc = report({"n1": one_fs_series(int(T0) // 10, {READ: reads})}, elapsed=80)
    fs = doc["timeline"]["filesystems"]["scratch"]
    assert fs["read_bytes"] == reads.tolist() and fs["sums_to_totals"] is True


def workload_series(w: timelines.Workload, seed: int, first: int) -> Series:
    ch = w.series(np.random.default_rng(seed))
    return one_fs_series(first, {READ: ch["read"].astype(np.int64), WRITE: ch["write"].astype(np.int64),
                                  OPEN: ch["metadata"].astype(np.int64)})


@pytest.mark.parametrize("seed", range(5))
def test_phases_are_in_seconds_since_the_job_began(seed):
    first = int(T0) // 10
    begin = first * 10 + 3.2            # the prolog ran 3.2 s into the first bin
    doc = report({"n1": workload_series(timelines.startup_storm(), seed, first)}, begin=begin, elapsed=3600 - 3.2)
    ph = doc["timeline"]["filesystems"]["scratch"]["phases"]
    assert (ph[0]["kind"], ph[0]["channel"], ph[0]["start_s"]) == ("start-up burst", "metadata_ops", 0.0)
    assert ph[0]["end_s"] == pytest.approx(120 - 3.2)
    assert ph[-1]["end_s"] == pytest.approx(3600 - 3.2)
    assert sum(p["opens"] for p in ph) == sum(doc["timeline"]["filesystems"]["scratch"]["opens"])


@pytest.mark.parametrize("seed", range(3))
def test_checkpoints_are_periodic_in_seconds(seed):
    first = int(T0) // 10
    w = timelines.checkpoints()
    doc = report({"n1": workload_series(w, seed, first)}, elapsed=w.bins * 10)
    (p,) = doc["timeline"]["filesystems"]["scratch"]["periodic"]
    assert p["channel"] == "write_bytes" and abs(p["period_s"] - 1200) <= 10 and p["count"] == len(w.pieces)
    assert abs(p["first_s"] - 1000) <= 10


def storm(doc: dict) -> dict:
    (f,) = [f for f in doc["flags"] if f["id"] == "OPEN_CLOSE_STORM"]
    return f


@pytest.mark.parametrize("seed", range(3))
def test_an_open_storm_at_start_up_is_said_so(seed):
    first = int(T0) // 10
    s = workload_series(timelines.startup_storm(), seed, first)
    plain = report({"n1": s}, acc=None)
    f = storm(plain)
    opens = int(s.filesystems["scratch"].data[:, 2].sum())
    early = int(s.filesystems["scratch"].data[:12, 2].sum())
    assert f["when"]["phase"] == "start-up burst" and (f["when"]["count"], f["when"]["of"]) == (early, opens)
    assert f"{round(100 * early / opens)} % of the {opens:,} opens came in the first 2 min of a 1 h job: " \
           "a start-up storm" in f["finding"]
    assert "start-up" in f["advice"]
    # a host without a timeline: the count said is the timeline's hosts'
    partial = storm(report({"n1": s}, extra_hosts=["n2"]))
    assert f"% of the {opens:,} opens on the 1 host with a timeline came in the first 2 min" in partial["finding"]
    # the same finding without a timeline: flagged all the same, no time said
    none = storm(report({"n1": s}, acc=Accumulator()))
    assert none["when"] is None and "start-up" not in none["finding"] and none["severity"] == f["severity"]


@pytest.mark.parametrize("seed", range(3))
def test_steady_opens_get_no_time_context(seed):
    s = workload_series(timelines.steady(), seed, int(T0) // 10)
    f = storm(report({"n1": s}))
    assert f["when"] is None and "came in" not in f["finding"]


def test_a_timeline_whose_sums_do_not_match_gives_no_time_context():
    s = workload_series(timelines.startup_storm(), 0, int(T0) // 10)
    opens = int(s.filesystems["scratch"].data[:, 2].sum())
    f = storm(report({"n1": s}, end_values={"n1": {"open": opens + 1}}))
    assert f["when"] is None


# ---- notes ---------------------------------------------------------------------------------

def test_a_short_job_is_a_note_not_untrusted():
    doc = report({"n1": one_fs_series(int(T0) // 10, {READ: np.array([1, 2, 3])})}, elapsed=30)
    assert "SHORT_JOB" in [n["id"] for n in doc["notes"]]
    assert "SHORT_JOB" not in [q["id"] for q in doc["data_quality"]]
    tl = doc["timeline"]
    assert tl["filesystems"] == {} and tl["points"] == 0
    assert tl["note"] == f"the job ran 30 s: fewer than {phases.MIN_BINS} points of 10 s, too short to say when"
    assert {"id": "TIMELINE_SHORT", "fs": None, "detail": tl["note"]} in doc["notes"]


def test_no_timeline_asked_is_null_and_none_kept_is_said():
    s = one_fs_series(int(T0) // 10, {READ: np.full(60, 7)})
    b = snapshots.snap(T0, node("n1"))
    e = snapshots.snap(T0 + 600, node("n1", {"read_bytes": 420}))
    assert document.from_delta(diff(b, e), config.Config())["timeline"] is None
    tl = report({"n1": s}, acc=Accumulator(), elapsed=600)["timeline"]
    assert tl["filesystems"] == {} and tl["hosts_without"] == ["n1"] and tl["note"].startswith("no host's agent")


def test_a_record_keeps_short_job_in_its_rows_data_quality():
    from lustre_jobreport.records import jobrow
    doc = report({"n1": one_fs_series(int(T0) // 10, {READ: np.array([1, 2, 3])})}, elapsed=30)
    (row,) = jobrow.rows(doc)
    assert "SHORT_JOB" in row["data_quality"].split(",") and row["trusted"]
    old = dict(doc, notes=[], data_quality=[{"id": "SHORT_JOB", "host": None, "fs": None, "detail": "x"}])
    (old_row,) = jobrow.rows(old)
    assert old_row["data_quality"] == row["data_quality"]


def test_small_writes_in_the_final_flush_are_said_so():
    w = timelines.final_flush()
    ch = w.series(np.random.default_rng(4))
    small = np.full(w.bins, 10)
    small[-3:] = 200_000
    s = one_fs_series(int(T0) // 10, {READ: ch["read"].astype(np.int64), WRITE: ch["write"].astype(np.int64),
                                      RPC_WRITE[0]: small, RPC_WRITE[8]: np.full(w.bins, 5)})
    doc = report({"n1": s})
    (f,) = [f for f in doc["flags"] if f["id"] == "SMALL_RPC_WRITE"]
    kinds = [p["kind"] for p in doc["timeline"]["filesystems"]["scratch"]["phases"]]
    assert kinds[-1] == "final flush"
    total = int(small.sum())
    assert f["when"]["phase"] == "final flush" and (f["when"]["count"], f["when"]["of"]) == (600_000, total)
    assert f"{round(100 * 600_000 / total)} % of the {total:,} small write RPCs came in the last 30 s of a 1 h " \
           "job: the final write-out" in f["finding"]
    assert "final write-out" in f["advice"]


@settings(max_examples=300, deadline=None)
@given(hosts_of_a_job(), st.lists(st.integers(0, 2), min_size=8, max_size=8))
def test_shares_summed_apart_and_merged_are_the_sums_of_all(hosts, share_of):
    """A fan-out over worker processes sums each one's share of the hosts apart, then merges:
    the same sums, gaps, hosts and hosts left out as one accumulator given every host (hosts
    that all align: a host that cannot is judged against the first share's width instead)."""
    hosts = [(h, s) for h, s in hosts if h != "odd"]
    whole = Accumulator()
    shares = [Accumulator() for _ in range(3)]
    for i, (h, s) in enumerate(hosts):
        whole.add(h, s)
        shares[share_of[i]].add(h, s)
    merged = Accumulator()
    for part in shares:
        merged.merge(part)
    assert merged.width_ms == whole.width_ms and sorted(merged.hosts) == sorted(whole.hosts)
    assert merged.left_out == whole.left_out
    assert (merged.first_bin, merged.bins) == (whole.first_bin, whole.bins) or whole.bins == 0
    assert merged.gap.tolist() == whole.gap.tolist()
    for fs in set(merged.sums) | set(whole.sums):
        assert merged.sums[fs].tolist() == whole.sums[fs].tolist()
        assert merged.magnitude[fs].tolist() == pytest.approx(whole.magnitude[fs].tolist())


def test_sums_that_do_not_align_leave_the_shares_hosts_out_with_why():
    a, b = Accumulator(), Accumulator()
    a.add("n1", one_fs_series(100, {READ: np.array([1, 2])}, interval_ms=10_000))
    b.add("n2", one_fs_series(70, {READ: np.array([3, 4])}, interval_ms=15_000))
    a.merge(b)
    assert a.hosts == ["n1"] and "do not align" in a.left_out["n2"]
    assert a.sums["scratch"][:, READ].tolist() == [1, 2]


# ---- the calls' latency: a mean per call where every client that made calls has it ------------

# The clients of a job, as the latency sees them: a 2.14+ client whose agent's series has the
# latency, a client without latencies (before 2.14: no value, so 0 in every point and not counted
# in the deltas), and a 2.14+ client whose agent's table is older than the latency in the series
# (its deltas count it, its series lacks it).
KINDS = ("timed", "untimed client", "older agent")
NO_LATENCY = frozenset({"llite.latency.read", "llite.latency.write"})


def latency_host(kind: str, first_bin: int, calls: dict[str, np.ndarray], latency: dict[str, np.ndarray]):
    """A host's series and the latency its deltas count (None: its client has none)."""
    data = {READ: calls["read"] * 4096, **{CALLS[d]: calls[d] for d in calls}}
    if kind == "timed":
        data |= {LATENCY[d]: latency[d] for d in latency}
    series = one_fs_series(first_bin, data, lacks=NO_LATENCY if kind == "older agent" else frozenset())
    counted = None if kind == "untimed client" else {f"latency.{d}": int(latency[d].sum()) for d in latency}
    return series, counted


def latency_reference(hosts: list[tuple[str, dict, dict]], n: int, k: int, first: int):
    """Per direction, the timeline's mean latency of a call per point and over the job, by
    loops: None throughout unless every host that made calls of that direction is a timed one
    (and one did); then per point the latency summed over the hosts and the point's k bins,
    over the calls summed the same way (None where they are not above 0)."""
    out = {}
    for d in ("read", "write"):
        calling = [kind for kind, calls, _ in hosts if calls[d].sum() > 0]
        if not calling or any(kind != "timed" for kind in calling):
            out[d] = (None, None)
            continue
        npoints = (first + n - 1) // k - first // k + 1
        lat, calls = [0] * npoints, [0] * npoints
        for kind, c, latency in hosts:
            for i in range(n):
                p = (first + i) // k - first // k
                calls[p] += int(c[d][i])
                if kind == "timed":
                    lat[p] += int(latency[d][i])
        means = [round(lat[p] / calls[p], 1) if calls[p] > 0 and lat[p] >= 0 else None for p in range(npoints)]
        whole = round(sum(lat) / sum(calls), 1) if sum(calls) > 0 else None
        out[d] = (means, whole)
    return out


@runs(1000)
@given(st.lists(st.sampled_from(KINDS), min_size=1, max_size=4), st.integers(6, 400), st.integers(0, 2**32 - 1),
       st.sampled_from([0.0, 0.3, 1.0]))
def test_the_mean_latency_of_a_call_per_point_is_the_plain_loops(kinds, n, seed, idle):
    """Hosts of random kinds, calls and latencies (some points idle, some with latency and no
    call in them): each point's mean and the job's are the reference's, and the latency sums
    agree with the deltas of the hosts that have them (sums_to_totals)."""
    rng = np.random.default_rng(seed)
    first = int(T0) // 10
    series, end_values, hosts = {}, {}, []
    for h, kind in enumerate(kinds):
        calls = {d: np.where(rng.random(n) < idle, 0, rng.integers(0, 60, n)) for d in ("read", "write")}
        latency = {d: np.where(rng.random(n) < 0.05, rng.integers(0, 90, n),
                               calls[d] * rng.integers(1, 20_000, n)) for d in ("read", "write")}
        s, counted = latency_host(kind, first, calls, latency)
        series[f"n{h}"] = s
        if counted is not None:
            end_values[f"n{h}"] = counted
        hosts.append((kind, calls, latency))
    doc = report(series, elapsed=n * 10.0, end_values=end_values)
    tl = doc["timeline"]
    fs = tl["filesystems"]["scratch"]
    want = latency_reference(hosts, n, round(tl["width_s"] / 10), first)
    for d in ("read", "write"):
        assert (fs[f"{d}_latency_us"], fs[f"{d}_latency_us_mean"]) == want[d], d
    assert fs["sums_to_totals"] is True
    assert not [q for q in doc["data_quality"] if q["id"] == "TIMELINE_PARTIAL"]


def test_a_client_without_latencies_is_null_not_0_us():
    """A 2.12 client: calls and no latency (0 in every point of its series, none in its
    deltas): the means are null, not 0 µs; one 2.15 client whose calls all took under a
    microsecond (a latency of 0 counted) has a mean of 0.0 µs."""
    first, calls = int(T0) // 10, {"read": np.full(30, 8), "write": np.zeros(30, dtype=np.int64)}
    zero = {"read": np.zeros(30, dtype=np.int64), "write": np.zeros(30, dtype=np.int64)}
    for kind, want in (("untimed client", None), ("timed", 0.0)):
        s, counted = latency_host(kind, first, calls, zero)
        fs = report({"n1": s}, elapsed=300, end_values={"n1": counted} if counted else None)[
            "timeline"]["filesystems"]["scratch"]
        assert fs["read_latency_us_mean"] == want, kind
        assert fs["read_latency_us"] == (None if want is None else [0.0] * 30), kind
        assert fs["write_latency_us"] is None and fs["write_latency_us_mean"] is None    # no write call


def test_a_series_whose_latency_disagrees_with_the_deltas_is_said():
    s, _ = latency_host("timed", int(T0) // 10, {"read": np.full(30, 2)}, {"read": np.full(30, 100)})
    doc = report({"n1": s}, elapsed=300, end_values={"n1": {"latency.read": 3001}})
    assert doc["timeline"]["filesystems"]["scratch"]["sums_to_totals"] is False
    [partial] = [q["detail"] for q in doc["data_quality"] if q["id"] == "TIMELINE_PARTIAL"]
    assert "latency.read: 3,000 in the timeline, 3,001 in the totals" in partial


def test_hosts_summed_apart_and_merged_keep_who_lacks_the_latency():
    first = int(T0) // 10
    calls, latency = {"read": np.full(30, 2)}, {"read": np.full(30, 50)}
    timed, older = (latency_host(kind, first, calls, latency)[0] for kind in ("timed", "older agent"))
    share = Accumulator()
    share.add("n2", older)
    acc = Accumulator()
    acc.add("n1", timed)
    acc.merge(share)
    assert acc.lacking == {"llite.latency.read": ["n2"], "llite.latency.write": ["n2"]}
    doc = report({"n1": timed, "n2": older}, elapsed=300, acc=acc,
                 end_values={h: {"latency.read": 1500} for h in ("n1", "n2")})
    fs = doc["timeline"]["filesystems"]["scratch"]
    assert fs["sums_to_totals"] is True and fs["read_latency_us"] is None


def test_a_host_whose_calls_were_left_out_leaves_the_means_null():
    """n2's llite stats were cleared mid-job (its counters went back: left out of the deltas);
    its series still holds its calls in the points before the clear and takes them back after,
    and whether its client counts latencies cannot be told: no mean, rather than one dividing
    n1's latency by n2's calls too. The same job without the clear has its means."""
    first, n = int(T0) // 10, 30
    calls = {"read": np.full(n, 4)}
    timed, _ = latency_host("timed", first, calls, {"read": np.full(n, 400)})
    taken_back = np.full(n, 6)
    taken_back[-1] = -6 * (n - 1)
    untimed = one_fs_series(first, {READ: taken_back * 4096, CALLS["read"]: taken_back})
    cleared = report({"n1": timed, "n2": untimed}, elapsed=300, end_values={"n1": {"latency.read": 400 * n}},
                     begin_values={"n2": {"read_calls": 10**6, "read_bytes": 10**9}})
    assert "n2" in cleared["job"]["hosts_incomplete"]
    fs = cleared["timeline"]["filesystems"]["scratch"]
    assert fs["sums_to_totals"] is True and fs["read_latency_us"] is None and fs["read_latency_us_mean"] is None
    whole = report({"n1": timed}, elapsed=300, end_values={"n1": {"latency.read": 400 * n}})
    assert whole["timeline"]["filesystems"]["scratch"]["read_latency_us_mean"] == 100.0
