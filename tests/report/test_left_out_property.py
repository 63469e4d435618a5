"""A value left out is never a 0, by property: for random jobs (1-4 hosts, 1-3 OSTs) where random
counters are not counters (METRIC_TYPE: one host's agent calls it instant, at one end), random
stats files are cleared (a counter went back), random files could not be read at the start,
the end or both, OSTs are gone at the end or new, and a host's llite bytes have no value at
either end though its file was read (a bytes line without its sum), on random hosts, against a
plain reference written here with loops:

- every total is the sum over the hosts whose values were not left out, left_out names it with
  the number of hosts whose were, and one left out on every host is null and in not_read;
- no finding rests on a total left out on every host, one resting on totals some hosts' values
  of which were left out says so, and READAHEAD_WASTE and TINY_CALLS are judged over the hosts
  whose inputs were all counted;
- no line of the text view shows a total not read as a number (it says "not read"), the JSON
  keeps it null, and a job record's row is null for every total not whole.
"""

from __future__ import annotations

import json
import functools
from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from lustre_jobreport import catalog, config
from lustre_jobreport.records import jobrow
from lustre_jobreport.report import view as render, document as report

from kit.proptest import runs
from kit.snapshots import host, snap

CFG = config.Config()
GIB, MIB = 1 << 30, 1 << 20
FS = "scratch"
LLITE = [m.name[len(catalog.P):] for m in catalog.with_role(catalog.VOLUME, catalog.OP)]
OSC = ["osc.read_bytes", "osc.write_bytes", "osc.read_rpcs", "osc.write_rpcs", "osc.req_waittime", "osc.req_count"]
RPC = ["fs.rpc.read", "fs.rpc.write"]
BUCKETS = ("4K", "1M")
ENDS = ("start", "end")

# What each finding rests on, written out here (flags.py declares its own: they must agree).
RESTS_ON = {
    "SMALL_RPC_READ": {"rpc.read"}, "SMALL_RPC_WRITE": {"rpc.write"},
    "OPEN_CLOSE_STORM": {"ops.open", "ops.close", "read_bytes", "write_bytes"},
    "STAT_STORM": {"ops.getattr", "ops.open"}, "STATFS_STORM": {"ops.statfs"},
    "METADATA_RATE": {f"ops.{op}" for op in catalog.METADATA_OPS},
    "UNDER_STRIPED": {"osts.read_bytes", "osts.write_bytes"},
    "OVER_STRIPED_SMALL_IO": {"osts.read_bytes", "osts.write_bytes", "osts.read_rpcs", "osts.write_rpcs"},
    "RANK0_IO": {"read_bytes", "write_bytes"}, "READAHEAD_WASTE": {"osts.read_bytes", "read_bytes"},
    "FSYNC_STORM": {"ops.fsync", "write_bytes"}, "SLOW_OST": {"osts.wait_us_mean"}, "FS_TROUBLE": {"trouble"},
}


def total_of(metric: str) -> str:
    """The report's name of a metric's total (DESIGN §3.1)."""
    m = catalog.get(catalog.P + metric)
    if m.role == catalog.VOLUME:
        return m.key
    if m.role == catalog.OP:
        return "ops." + m.key
    if metric in RPC:
        return "rpc." + m.key
    return "osts.wait_us_mean" if m.role == catalog.OST_WAIT else "osts." + m.key


def source_of(metric: str, ost: int | None = None) -> tuple:
    """What a clear or an unreadable file takes away together: (kind[, OST])."""
    if metric in RPC:
        return ("rpc",)
    if metric in OSC:
        return ("osc", ost)
    return ("llite",)


@dataclass(frozen=True, eq=False)     # hashed by identity: the reference caches per case
class Case:
    n_hosts: int
    n_osts: int
    deltas: tuple          # per host: {(metric, instance): delta}
    bases: tuple           # per host: {(metric, instance): value at the start}
    untyped: frozenset     # (metric, host, end): that host's agent called the counter instant there
    cleared: frozenset     # (host, source, k): the source's k-th counter (of those compared) went back
    unread: frozenset      # (host, source, end): the file could not be read at that end
    no_value: frozenset    # (metric, host): the host gave no value of it at either end, its file read
    gone: frozenset        # (host, OST): the OSC is not on the host at the end (listing and values)
    new: frozenset         # (host, OST): the OSC was not on the host at the start: it counts from zero


def instances(metric: str, n_osts: int) -> list[str]:
    if metric in RPC:
        return [f"{FS}:{b}" for b in BUCKETS]
    if metric in OSC:
        return [f"{FS}-OST{i:04x}" for i in range(n_osts)]
    return [FS]


def ost_index(instance: str) -> int | None:
    return int(instance[-4:], 16) if "-OST" in instance else None


AMOUNTS = {
    "llite.read_bytes": (0, MIB, 2 * GIB, 20 * GIB), "llite.write_bytes": (0, MIB, 2 * GIB, 20 * GIB),
    "llite.read_calls": (0, 1000, 200_000, 3_000_000), "llite.write_calls": (0, 1000, 200_000, 3_000_000),
    "osc.read_bytes": (0, GIB, 20 * GIB), "osc.write_bytes": (0, GIB, 20 * GIB),
    "osc.read_rpcs": (0, 100, 300_000), "osc.write_rpcs": (0, 100, 300_000),
    "osc.req_waittime": (0, 10_000, 50_000_000), "osc.req_count": (0, 10, 1000),
    "fs.rpc.read": (0, 10, 5000), "fs.rpc.write": (0, 10, 5000),
}
BUSY_OPS = ("open", "close", "getattr", "statfs", "fsync")


@st.composite
def cases(draw) -> Case:
    n_hosts, n_osts = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    metrics = LLITE + RPC + OSC
    deltas, bases = [], []
    for _ in range(n_hosts):
        d, b = {}, {}
        base, quiet = draw(st.integers(1000, 10**6)), draw(st.integers(0, 3))   # the ops no finding counts
        for metric in metrics:
            busy = metric in AMOUNTS or metric.rsplit(".", 1)[1] in BUSY_OPS
            for inst in instances(metric, n_osts):
                d[(metric, inst)] = draw(st.sampled_from(AMOUNTS.get(metric, (0, 50, 2000, 20_000)))) if busy else quiet
                b[(metric, inst)] = base + len(b)
        deltas.append(d)
        bases.append(b)
    hosts = range(n_hosts)
    sources = [("llite",), ("rpc",)] + [("osc", i) for i in range(n_osts)]
    untyped = draw(st.frozensets(st.tuples(st.sampled_from(metrics), st.sampled_from(hosts), st.sampled_from(ENDS)),
                                 max_size=3))
    cleared = frozenset(draw(st.lists(st.tuples(st.sampled_from(hosts), st.sampled_from(sources), st.integers(0, 40)),
                                      max_size=2, unique_by=lambda c: c[:2])))
    unread = draw(st.frozensets(st.tuples(st.sampled_from(hosts), st.sampled_from(sources),
                                          st.sampled_from(ENDS + ("both",))), max_size=2))
    no_value = draw(st.frozensets(st.tuples(st.sampled_from(("llite.read_bytes", "llite.write_bytes")),
                                            st.sampled_from(hosts)), max_size=2))
    oscs = st.tuples(st.sampled_from(hosts), st.integers(0, n_osts - 1))
    gone, new = draw(st.frozensets(oscs, max_size=2)), draw(st.frozensets(oscs, max_size=2))
    # An OSC not read at the start and gone at the end left no value at either end, and the diff
    # has nothing to say of it: such a pair is not drawn.
    unread = frozenset(u for u in unread if not (u[1][0] == "osc" and (u[0], u[1][1]) in gone and u[2] != "end"))
    return Case(n_hosts, n_osts, tuple(deltas), tuple(bases), untyped, cleared, unread, no_value, gone - new, new)


# ---- the case as two snapshots -------------------------------------------------------------

@functools.lru_cache(maxsize=4)
def untyped_metrics(case: Case) -> frozenset[str]:
    """The counters that are not counters: a host's agent called one instant at an end where it
    gave a value of it (a host without one says nothing of its semantics)."""
    return frozenset(m for m, h, end in case.untyped if (m, h) not in case.no_value
                     and any(not unread_at(case, h, source_of(m, ost_index(i)), end) and on_host(case, h, ost_index(i), end)
                             for i in instances(m, case.n_osts)))


@functools.lru_cache(maxsize=64)
def went_back(case: Case, h: int, source: tuple) -> tuple[str, str] | None:
    """The counter that goes back on a cleared source: one the diff compares (not untyped); of a
    histogram, any of its buckets."""
    [k] = [k for hh, src, k in case.cleared if (hh, src) == (h, source)] or [None]
    if k is None or not all(on_host(case, h, source[1] if source[0] == "osc" else None, e) for e in ENDS):
        return None
    candidates = [(metric, inst) for (metric, inst) in case.deltas[h]
                  if metric not in untyped_metrics(case) and (metric, h) not in case.no_value
                  and source_of(metric, ost_index(inst)) == source]
    return candidates[k % len(candidates)] if candidates else None


def unread_at(case: Case, h: int, source: tuple, end: str) -> bool:
    return (h, source, end) in case.unread or (h, source, "both") in case.unread


def on_host(case: Case, h: int, ost: int | None, end: str) -> bool:
    """The OSC is on the host at that end (any other source: always)."""
    if ost is None:
        return True
    return (h, ost) not in (case.gone if end == "end" else case.new)


def snapshot_of(case: Case, end: str):
    hosts = []
    for h in range(case.n_hosts):
        m: dict[str, dict] = {"version": {"": "2.15.4"}, "llite.mount_id": {FS: "f1"},
                              "osc.device": {f"{FS}-OST{i:04x}": f"{FS}-OST{i:04x}-osc-f1"
                                             for i in range(case.n_osts) if on_host(case, h, i, end)}}
        for (metric, inst), base in case.bases[h].items():
            source = source_of(metric, ost_index(inst))
            if unread_at(case, h, source, end) or (metric, h) in case.no_value or not on_host(case, h, ost_index(inst), end):
                continue
            value = base + case.deltas[h][(metric, inst)] if end == "end" else base
            if end == "end" and went_back(case, h, source) == (metric, inst):
                value = base - 1
            m.setdefault(metric, {})[inst] = value
        sems = {metric: "instant" for metric, hh, e in case.untyped if hh == h and e == end}
        sems["osc.device"] = "discrete"
        hosts.append(host(f"n{h}", m, sems=sems, llite_stats=not unread_at(case, h, ("llite",), end),
                          rpc_stats=not unread_at(case, h, ("rpc",), end),
                          no_value=tuple(metric for metric, hh in case.no_value if hh == h)))
    return snap(0.0 if end == "start" else 3600.0, *hosts)


# ---- the reference: plain loops ------------------------------------------------------------

def left_out(case: Case, metric: str, h: int, inst: str) -> bool:
    """A value is left out: its counter is not one (on any host, at any end), the host gave it
    at neither end, or its source on that host was cleared, not read at an end where it was
    there, or gone at the end."""
    source, ost = source_of(metric, ost_index(inst)), ost_index(inst)
    if metric in untyped_metrics(case) or (metric, h) in case.no_value or not on_host(case, h, ost, "end"):
        return True
    if metric in RPC and any(hh == h for hh, _ in case.gone):
        return True                  # the histogram summed the gone OSC's rpc_stats: short of its RPCs
    if went_back(case, h, source) is not None:
        return True
    return any(unread_at(case, h, source, end) and on_host(case, h, ost, end) for end in ENDS)


def job_delta(case: Case, h: int, metric: str, inst: str) -> int:
    """The job's I/O of a value counted: end - start, or all of the end value for an OSC new at
    the end (it counts from zero)."""
    d = case.deltas[h][(metric, inst)]
    return d if on_host(case, h, ost_index(inst), "start") else case.bases[h][(metric, inst)] + d


@dataclass
class Reference:
    hosts_left: dict[str, set[int]]     # total -> hosts with a value of it left out
    absent: set[str]                    # totals left out wherever they existed
    llite: dict[str, int | None]        # llite totals (None: absent)
    rpc: dict[str, dict[str, int] | None]
    osts: dict[str, dict[str, int | None]]   # OST -> field -> sum (None: left out on every host)


def reference(case: Case) -> Reference:
    hosts_left: dict[str, set[int]] = {}
    counted: dict[str, int] = {}        # metric -> its values counted
    sums: dict[tuple[str, str], int] = {}
    cells_left: dict[tuple[str, str], int] = {}
    for h in range(case.n_hosts):
        for (metric, inst), d in case.deltas[h].items():
            sums.setdefault((metric, inst), 0)
            cells_left.setdefault((metric, inst), 0)
            counted.setdefault(metric, 0)
            if left_out(case, metric, h, inst):
                hosts_left.setdefault(total_of(metric), set()).add(h)
                cells_left[(metric, inst)] += 1
            else:
                counted[metric] += 1
                sums[(metric, inst)] += job_delta(case, h, metric, inst)
    # a total of two counters (the mean wait) is not read when either is not
    absent = {total_of(m) for m, n in counted.items() if not n}
    llite = {total_of(m): None if total_of(m) in absent else sums[(m, FS)] for m in LLITE}
    rpc = {m.rsplit(".", 1)[1]: None if total_of(m) in absent else {b: sums[(m, f"{FS}:{b}")] for b in BUCKETS}
           for m in RPC}
    osts: dict[str, dict[str, int | None]] = {}
    for i in range(case.n_osts):
        if not any(on_host(case, h, i, "end") for h in range(case.n_hosts)):
            continue                 # gone from every host: not one of the filesystem's OSTs at the end
        inst = f"{FS}-OST{i:04x}"
        osts[f"OST{i:04x}"] = {m.rsplit(".", 1)[1]: None if cells_left[(m, inst)] == case.n_hosts else sums[(m, inst)]
                               for m in OSC}
    return Reference({t: hs for t, hs in hosts_left.items()}, absent, llite, rpc, osts)


def gave_none(case: Case, *, typed_only: bool) -> set[int]:
    """Hosts that gave an llite counter at neither end while their llite stats were read and
    not cleared; typed_only: of a counter that is a counter (else METRIC_TYPE says it too)."""
    return {h for m, h in case.no_value if not (typed_only and m in untyped_metrics(case))
            and went_back(case, h, ("llite",)) is None and not any(unread_at(case, h, ("llite",), e) for e in ENDS)}


def new_unread(case: Case) -> set[int]:
    """Hosts with an OSC new at the end whose osc stats could not be read there: no value at
    either end, which the diff leaves out (NOT_READ_AT_END), never counted from zero."""
    return {h for h, i in case.new if unread_at(case, h, ("osc", i), "end")}


def same_hosts_sums(case: Case, *metrics: str) -> tuple[dict[str, int], int]:
    """Per metric, the sum over the hosts where every one of them (each OST's, for an OSC
    counter) was counted, and how many hosts that is."""
    hosts = [h for h in range(case.n_hosts)
             if not any(left_out(case, m, h, inst) for m in metrics for inst in instances(m, case.n_osts))]
    return {m: sum(job_delta(case, h, m, inst) for h in hosts for inst in instances(m, case.n_osts))
            for m in metrics}, len(hosts)


# ---- the property ----------------------------------------------------------------------------

def check_totals(fs: dict, ref: Reference) -> None:
    partial = {t: len(hs) for t, hs in ref.hosts_left.items()}
    assert fs["left_out"] == partial
    assert set(fs["not_read"]) == ref.absent
    for total, value in ref.llite.items():
        got = fs["ops"][total[4:]] if total.startswith("ops.") else fs[total]
        assert got == value, total
    assert fs["rpc"] == ref.rpc
    used = {o: v for o, v in ref.osts.items()
            if any(v[k] for k in ("read_bytes", "write_bytes", "read_rpcs", "write_rpcs"))}
    assert {o: {k: e[k] for k in used[o] if k in e} for o, e in fs["osts"].items()} == \
           {o: {k: v for k, v in fields.items() if k not in ("req_waittime", "req_count")} for o, fields in used.items()}
    for o, e in fs["osts"].items():
        wait, count = ref.osts[o]["req_waittime"], ref.osts[o]["req_count"]
        assert e["wait_us_mean"] == (round(wait / count, 1) if count and wait is not None else None)


def check_findings(doc: dict, case: Case, ref: Reference) -> None:
    for f in doc["flags"]:
        rests_on = RESTS_ON.get(f["id"]) or {f"{f['evidence']['direction']}_bytes", f"{f['evidence']['direction']}_calls"}
        assert set(f["rests_on"]) == rests_on, f["id"]
        assert not rests_on & ref.absent, (f["id"], rests_on & ref.absent)
        partial = {t: len(ref.hosts_left[t]) for t in rests_on if t in ref.hosts_left}
        if partial:
            assert "left out" in f["finding"] and f["evidence"]["left_out"] == partial, f
        else:
            assert "left_out" not in f["evidence"], f
        if f["id"] == "TINY_CALLS":
            d = f["evidence"]["direction"]
            sums, _ = same_hosts_sums(case, f"llite.{d}_bytes", f"llite.{d}_calls")
            assert f["evidence"]["calls"] == sums[f"llite.{d}_calls"]
            assert f["evidence"]["mean_bytes"] == round(sums[f"llite.{d}_bytes"] / sums[f"llite.{d}_calls"], 1)
        if f["id"] == "READAHEAD_WASTE":
            sums, n = same_hosts_sums(case, "osc.read_bytes", "llite.read_bytes")
            assert (f["evidence"]["osc_read_bytes"], f["evidence"]["llite_read_bytes"]) == \
                   (sums["osc.read_bytes"], sums["llite.read_bytes"])
            assert f["evidence"]["hosts_left_out"] == case.n_hosts - n


def check_text(doc: dict, ref: Reference) -> None:
    """The text view's lines of the filesystem: a total not read reads "not read", never 0."""
    views = render.text_view(doc)["filesystems"]
    if not views:                       # "Not used by this job": nothing was, and nothing left out
        assert not ref.hosts_left and all(v in (0, None) for v in ref.llite.values())
        return
    [view] = views
    for d in ("read", "write"):
        nbytes, calls = f"{d}_bytes" in ref.absent, f"{d}_calls" in ref.absent
        line = view[d]
        if nbytes and calls:
            assert line == f"{d}: not read"
        elif nbytes:
            assert line.startswith(f"{d}: bytes not read, ")
        elif calls:
            assert line.endswith(", calls not read")
        else:
            assert "not read" not in line
    for op in catalog.SHOWN_OPS:
        assert (f"{op} not read" in view["ops"]) == (f"ops.{op}" in ref.absent), view["ops"]
    rpc_absent = {d for d in ("read", "write") if f"rpc.{d}" in ref.absent}
    if rpc_absent == {"read", "write"}:
        assert view["hist"] is None and view["no_hist"] == "not read (see Not trusted)"
    else:
        for d in ("read", "write"):
            assert (view["hist"][d] == "  not read") == (d in rpc_absent)
    assert (view["osts"] == "OSTs: not read") == ({"osts.read_bytes", "osts.write_bytes"} <= ref.absent)
    text = render.render_text(doc)
    assert not any(line.startswith(f"{FS}: read 0 B") for line in text.splitlines()) or "read_bytes" not in ref.absent


ROW_COLUMNS = {"read_bytes": ["read_bytes"], "write_bytes": ["write_bytes"], "read_calls": ["read_calls"],
               "write_calls": ["write_calls"],
               **{f"ops.{op}": [op, "md_ops"] for op in ("open", "close", "getattr", "setattr", "statfs", "fsync")},
               **{f"osts.{k}": [f"ost_{k}", "osts_used"] for k in ("read_bytes", "write_bytes", "read_rpcs", "write_rpcs")},
               **{f"rpc.{d}": [f"rpc_{d}_{b}" for b in (*jobrow.BUCKETS, "over_64M")] for d in ("read", "write")}}


def check_record(doc: dict, ref: Reference) -> None:
    [row] = jobrow.rows(doc)
    nulled = {c for t in ref.hosts_left for c in ROW_COLUMNS.get(t, [])}
    if any(t.startswith("ops.") for t in ref.hosts_left):
        nulled.add("md_ops")
    assert [c for c in sorted(nulled) if row[c] is not None] == []
    for total, value in ref.llite.items():
        column = total[4:] if total.startswith("ops.") else total
        if column in row and column not in nulled:
            assert row[column] == value, column


@runs(500)
@given(cases())
def test_a_value_left_out_is_never_a_zero(case):
    doc = report.build(snapshot_of(case, "start"), snapshot_of(case, "end"), CFG, job_id="1")
    # a value left out that nothing else says is said (VALUES_MISSING), and only such a value is
    said = [q for q in doc["data_quality"] if "had no value" in q["detail"]]
    must = gave_none(case, typed_only=True)
    may = gave_none(case, typed_only=False) | new_unread(case)
    assert bool(said) >= bool(must) and bool(said) <= bool(may)
    # an OSC new at the end, unreadable there: the diff says it (not counted from zero)
    assert {f"n{h}" for h in must | new_unread(case)} <= set(doc["job"]["hosts_incomplete"])
    assert all(q["host"] in {f"n{h}" for h in may} for q in said if q["host"])
    ref = reference(case)
    fs = doc["filesystems"][FS]
    check_totals(fs, ref)
    check_findings(doc, case, ref)
    check_text(doc, ref)
    assert json.loads(render.render_json(doc)) == doc
    check_record(doc, ref)
