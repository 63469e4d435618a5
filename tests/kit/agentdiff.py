"""The agent's diff rules (pmda-lustre/src/jobdiff.c) on snapshots, for the differential test.

Each node's agent keeps a job's begin values and serves the job's deltas (the job view,
docs/design.md §2.4); its rules are the C twin of the reporter's diff.py. This module runs them,
through ctypes on pmda-lustre/tests/out/libjobdiff.so (`make -C pmda-lustre harness`, run on first
use so that the library is never older than jobdiff.c), on the begin and end snapshots diff.py
is given, one host at a time, as each host's agent sees its own:

  devices_of(fetch)      the agent's record of one host's fetch: what jobs.c's build() makes of
                         the values its lc_value() gives (modelled here, as build() reads the
                         agent's device tables, which a snapshot does not have)
  diff_host(b, e)        lc_job_diff of one host's two records: each value's delta and whether
                         it counts, the devices left out and why, and everything the job's slot
                         serves (lc_job_answer: the agent's own code, as its fetch calls it)
  job_view(begin, end)   the end snapshot the reporter's job-view fetch would get from every
                         host's agent (pcpfetch.fetch_pmapi's: the job end metrics, the job's
                         begin time, the slot's deltas and left_out under slot-free names), for
                         jobview.delta, and each host's outcome
"""

from __future__ import annotations

import ctypes
import functools
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from lustre_jobreport import catalog
from lustre_jobreport.acquire import hostsnap
from lustre_jobreport.catalog import P
from lustre_jobreport.report.diff import fs_of
from lustre_jobreport.acquire.column import Column
from lustre_jobreport.acquire.hostsnap import HostSnapshot
from lustre_jobreport.acquire.snapfile import Snapshot

AGENT_DIR = Path(__file__).resolve().parents[2] / "pmda-lustre"
LIBRARY = AGENT_DIR / "tests" / "out" / "libjobdiff.so"

FS, OSC, MDC = 0, 1, 2                     # enum lc_jobkind
KINDS = (FS, OSC, MDC)
KIND_INDOM = {FS: catalog.FS, OSC: catalog.OSC, MDC: catalog.MDC}
SMALLEST_PAGE = 4096                       # bucket index 0: an RPC of one 4 KiB page
SLOT = 0                                   # the slot every host keeps the job in (any would do)
NOT_KEPT = "Unknown or illegal instance identifier"   # pmLookupInDom of a job the agent has not
START_METRICS = (P + "llite.stats_start", P + "osc.stats_start", P + "osc.rpc_stats_start")

_u64p = ctypes.POINTER(ctypes.c_uint64)
_u8p = ctypes.POINTER(ctypes.c_uint8)
_intp = ctypes.POINTER(ctypes.c_int)
_dblp = ctypes.POINTER(ctypes.c_double)
_strp = ctypes.POINTER(ctypes.c_char_p)


class HarnessError(RuntimeError):
    """The C harness could not be built, or ran out of memory."""


@functools.cache
def lib() -> ctypes.CDLL:
    """The harness, made first (make -s: nothing to do when it is current)."""
    made = subprocess.run(["make", "-s", "-C", str(AGENT_DIR), "harness"], capture_output=True, text=True)
    if made.returncode != 0:
        raise HarnessError(f"make -C {AGENT_DIR} harness failed: {made.stderr.strip()}")
    c = ctypes.CDLL(str(LIBRARY))
    uint, size, ptr = ctypes.c_uint, ctypes.c_size_t, ctypes.c_void_p
    for name, restype, argtypes in (
            ("jd_metric_path", ctypes.c_char_p, [uint]),
            ("jd_metric_src", uint, [uint]),
            ("jd_source_name", ctypes.c_char_p, [uint]),
            ("jd_source_kind", uint, [uint]),
            ("jd_hist_max", uint, []),
            ("lc_job_nval", uint, [uint]),
            ("lc_job_kind", uint, [uint]),
            ("lc_job_off", uint, [uint]),
            ("lc_job_kind_nval", uint, [uint]),
            ("lc_job_start_us", ctypes.c_uint64, [ctypes.c_double]),
            ("jd_rec_new", ptr, []),
            ("jd_rec_free", None, [ptr]),
            ("jd_rec_add", ctypes.c_int, [ptr, uint, size, _intp, _strp, _strp, _intp, _intp, _u64p, _u8p, _intp,
                                          _dblp, _intp]),
            ("jd_rec_done", None, [ptr]),
            ("jd_rec_n", size, [ptr, uint]),
            ("jd_rec_inst", ctypes.c_int, [ptr, uint, size]),
            ("jd_diff", ptr, [ptr, ptr]),
            ("jd_res_free", None, [ptr]),
            ("jd_res_delta", _u64p, [ptr, uint]),
            ("jd_res_counted", _u8p, [ptr, uint]),
            ("jd_res_nleft", size, [ptr]),
            ("jd_res_left", None, [ptr, size, ctypes.POINTER(uint), _intp, ctypes.POINTER(uint)]),
            ("jd_answer_cap", size, [ptr, ptr]),
            ("jd_answer_all", ctypes.c_long, [ptr, ptr, _intp, _intp, _u64p, size])):
        fn = getattr(c, name)
        fn.restype, fn.argtypes = restype, argtypes
    return c


# ---- the agent's job metric table -----------------------------------------------------------

@dataclass(frozen=True)
class JobMetric:
    """Item k of a job slot: the counter it is the delta of, and where its values lie."""
    item: int
    name: str         # lustreclient.llite.read_bytes
    kind: int
    off: int          # its values' place in a device's val[]/pres[]
    nval: int         # 1, or the histogram's buckets


@dataclass(frozen=True)
class Table:
    """jobdiff.c's job metric table and sources, as the C side has them."""
    metrics: tuple[JobMetric, ...]
    source_kind: tuple[int, ...]      # by enum lc_jobsrc, in catalog.JOB_SOURCES' order
    kind_nval: tuple[int, ...]
    hist_max: int

    @functools.cached_property
    def by_name(self) -> dict[str, JobMetric]:
        return {m.name: m for m in self.metrics}

    @functools.cached_property
    def places(self) -> tuple[tuple[tuple[JobMetric, int], ...], ...]:
        """Per kind: (job metric, bucket) of each place in a device's values."""
        out = [[None] * n for n in self.kind_nval]
        for m in self.metrics:
            for b in range(m.nval):
                out[m.kind][m.off + b] = (m, b)
        return tuple(tuple(p) for p in out)


@functools.cache
def table() -> Table:
    """The C table, checked against the reporter's catalog (JOB_METRICS, JOB_SOURCES): the two
    name the same slot items."""
    c = lib()
    n_metrics, n_sources = len(catalog.JOB_METRICS), len(catalog.JOB_SOURCES)
    metrics = tuple(JobMetric(k, P + c.jd_metric_path(k).decode(), c.lc_job_kind(k), c.lc_job_off(k),
                              c.lc_job_nval(k)) for k in range(n_metrics))
    sources = tuple(c.jd_source_name(j).decode() for j in range(n_sources))
    if (c.jd_metric_path(n_metrics) is not None or tuple(m.name for m in metrics) != catalog.JOB_METRICS
            or sources != tuple(js.key for js in catalog.JOB_SOURCES) or c.jd_source_name(n_sources) is not None):
        raise HarnessError("the agent's job metric table is not the catalog's JOB_METRICS and JOB_SOURCES")
    return Table(metrics, tuple(c.jd_source_kind(j) for j in range(n_sources)),
                 tuple(c.lc_job_kind_nval(kind) for kind in KINDS), c.jd_hist_max())


# ---- one host's fetch, and the agent's record of it -------------------------------------------

class Names:
    """The instance ids the agents give the case's names, per instance domain (pmdaCache: one
    id a name; the same on every host here, where they only name the values)."""

    def __init__(self) -> None:
        self._ids: dict[tuple[str, str], int] = {}
        self._names: dict[tuple[str, int], str] = {}

    def id(self, indom: str, name: str) -> int:
        inst = self._ids.get((indom, name))
        if inst is None:
            inst = self._ids[(indom, name)] = len(self._ids)
            self._names[(indom, inst)] = name
        return inst

    def name(self, indom: str, inst: int) -> str:
        return self._names[(indom, inst)]


@dataclass
class Fetch:
    """One host's values in a snapshot (its row of every table)."""
    snap: Snapshot
    host: str

    @functools.cached_property
    def row(self) -> int:
        return self.snap.row(self.host)

    def values(self, metric: str) -> dict:
        """instance -> value of the metric's values the host has."""
        t = self.snap.metrics.get(metric)
        if t is None:
            return {}
        cols = np.flatnonzero(t.present[self.row])
        values = t.values[self.row, cols]
        return dict(zip([t.instances[c] for c in cols], values if t.is_string else values.tolist()))


@functools.cache
def bucket_index(label: str) -> int:
    """'4K' -> 0, '8K' -> 1 ... '64M' -> 14: a bucket's place in a record's histogram (the agent
    counts from its page size; the rules only need one place a size)."""
    size = catalog.size_bytes(label)
    idx = size.bit_length() - SMALLEST_PAGE.bit_length()
    if idx < 0 or idx >= table().hist_max or SMALLEST_PAGE << idx != size:
        raise ValueError(f"no histogram bucket holds {label}")
    return idx


@dataclass
class Device:
    """One device of a record, as build() fills it."""
    kind: int
    name: str                          # fs name, OSC or MDC instance name
    inst: int
    ident: str                         # fs: its mount (sbi), "" when not mounted; OSC/MDC: directory
    listed: bool
    fs: int = -1                       # OSC/MDC: index of its filesystem's record
    values: dict[int, int] = field(default_factory=dict)          # place in val[] -> value
    start: list[int | None] = field(default_factory=lambda: [None, None])   # us: [stats, rpc_stats]
    buckets: dict[int, int] = field(default_factory=dict)         # FS: bucket -> FS_BUCKET instance


def devices_of(fetch: Fetch, names: Names) -> list[Device]:
    """The record build() makes of a fetch (pmda-lustre/src/jobs.c): a filesystem for every
    mount (listed, its mount id its identity, its llite values and stats start) and for every
    filesystem with an OSC or MDC there but no mount (not listed, no identity, no values); the
    buckets of the histogram of a filesystem with OSCs; every OSC and MDC of the device
    listings (listed, its directory its identity), tied to its filesystem, with its values and
    start times. ValueError for a value no agent gives (of a device it does not list)."""
    tbl = table()
    mounts = fetch.values(catalog.DEVICE_METRIC[catalog.FS])
    listed = {kind: fetch.values(catalog.DEVICE_METRIC[KIND_INDOM[kind]]) for kind in (OSC, MDC)}
    filesystems = list(dict.fromkeys([*mounts, *(fs_of(d) for kind in (OSC, MDC) for d in listed[kind])]))
    fs_index = {fs: i for i, fs in enumerate(filesystems)}
    with_oscs = {fs_of(d) for d in listed[OSC]}
    out = [Device(FS, fs, names.id(catalog.FS, fs), mounts.get(fs, ""), fs in mounts) for fs in filesystems]
    out += [Device(kind, d, names.id(KIND_INDOM[kind], d), ident, True, fs_index[fs_of(d)])
            for kind in (OSC, MDC) for d, ident in listed[kind].items()]
    by_name = {(d.kind, d.name): d for d in out}
    for m in tbl.metrics:
        for inst, value in fetch.values(m.name).items():
            bucket = 0
            if m.nval == 1:
                d = by_name.get((m.kind, inst))
                ok = d is not None and d.listed
            else:
                fs, _, label = inst.rpartition(":")
                d = by_name.get((FS, fs))
                ok = d is not None and fs in with_oscs
                if ok:
                    bucket = bucket_index(label)
                    d.buckets[bucket] = names.id(catalog.FS_BUCKET, inst)
            if not ok:
                raise ValueError(f"{fetch.host}: {m.name} of {inst}: a value of a device the agent does not list")
            d.values[m.off + bucket] = value
    llite_start, osc_start, rpc_start = (fetch.values(name) for name in START_METRICS)
    for d in out:
        if d.kind == FS and d.listed:
            d.start[0] = llite_start.get(d.name)
        elif d.kind == OSC:
            d.start = [osc_start.get(d.name), rpc_start.get(d.name)]
    return out


def seconds(us: int) -> float:
    """A start time as the agent holds it (seconds, a double) of the snapshot's microseconds;
    ValueError unless the agent's lc_job_start_us gives the same microseconds back."""
    sec = us / catalog.START_UNIT_US
    if us and lib().lc_job_start_us(sec) != us:
        raise ValueError(f"a start time of {us} us is not one the agent holds")
    return sec


class Record:
    """A record in the C harness (struct lc_jobrec) of these devices, freed with the object."""

    def __init__(self, devices: list[Device]):
        c = lib()
        table()                 # the C table checked against the catalog once
        self.ptr = c.jd_rec_new()
        if not self.ptr:
            raise HarnessError("out of memory")
        self.devices = {(d.kind, d.inst): d for d in devices}
        for kind in KINDS:
            of_kind = [d for d in devices if d.kind == kind]
            if of_kind and self._add(kind, of_kind) < 0:
                raise HarnessError("out of memory")
        c.jd_rec_done(self.ptr)

    def _add(self, kind: int, devices: list[Device]) -> int:
        """jd_rec_add of these devices of a kind, every field an array."""
        n, nv, hist = len(devices), table().kind_nval[kind], table().hist_max
        at = [i * nv + p for i, d in enumerate(devices) for p in d.values]
        val, pres = np.zeros(n * nv, dtype=np.uint64), np.zeros(n * nv, dtype=np.uint8)
        val[at], pres[at] = [v for d in devices for v in d.values.values()], 1
        start_ok = np.array([s is not None for d in devices for s in d.start], dtype=np.intc)
        start = np.array([seconds(s) if s is not None else 0.0 for d in devices for s in d.start])
        ints = np.array([(d.inst, d.listed, d.fs) for d in devices], dtype=np.intc).T.copy()
        strings = ctypes.c_char_p * n
        names = strings(*[d.name.encode() for d in devices]) if kind == FS else None
        idents = strings(*[d.ident.encode() for d in devices])
        binst = None
        if kind == FS:
            buckets = np.full(n * hist, -1, dtype=np.intc)
            buckets[[i * hist + b for i, d in enumerate(devices) for b in d.buckets]] = [
                inst for d in devices for inst in d.buckets.values()]
            binst = buckets.ctypes.data_as(_intp)
        return lib().jd_rec_add(self.ptr, kind, n, ints[0].ctypes.data_as(_intp), names, idents,
                                ints[1].ctypes.data_as(_intp), ints[2].ctypes.data_as(_intp),
                                val.ctypes.data_as(_u64p), pres.ctypes.data_as(_u8p), start_ok.ctypes.data_as(_intp),
                                start.ctypes.data_as(_dblp), binst)

    def order(self, kind: int) -> list[Device]:
        """The record's devices of a kind in the C record's order (OSCs and MDCs by instance)."""
        c = lib()
        return [self.devices[(kind, c.jd_rec_inst(self.ptr, kind, i))] for i in range(c.jd_rec_n(self.ptr, kind))]

    def __del__(self) -> None:
        if getattr(self, "ptr", None):
            lib().jd_rec_free(self.ptr)
            self.ptr = None


# ---- the diff of one host, and what its agent serves ---------------------------------------------

@dataclass
class Outcome:
    """lc_job_diff of one host's records, by name: the values counted and their deltas, the
    devices left out of each stats file and why, and what the job's slot serves per item."""
    counted: dict[tuple[str, str], int]          # (metric, instance) -> delta, where it counts
    reasons: dict[tuple[str, str], int]          # (catalog source name, device) -> lc_jobreason
    served: dict[int, list[tuple[str, int]]]     # slot item -> [(instance, value)]


def _instance(d: Device, m: JobMetric, bucket: int, names: Names) -> str | None:
    """The instance a value is served under: its device, or its bucket's (None: a bucket the
    filesystem does not export)."""
    if m.nval == 1:
        return d.name
    inst = d.buckets.get(bucket)
    return None if inst is None else names.name(catalog.FS_BUCKET, inst)


def _counted(end: Record, res, names: Names) -> dict[tuple[str, str], int]:
    """(metric, instance) -> delta of every value lc_job_diff counted."""
    c, tbl = lib(), table()
    out = {}
    for kind in KINDS:
        devices = end.order(kind)
        nv = tbl.kind_nval[kind]
        if not devices:
            continue
        delta = np.ctypeslib.as_array(c.jd_res_delta(res, kind), shape=(len(devices) * nv,))
        counted = np.ctypeslib.as_array(c.jd_res_counted(res, kind), shape=(len(devices) * nv,))
        for at in np.flatnonzero(counted).tolist():
            d, (m, b) = devices[at // nv], tbl.places[kind][at % nv]
            inst = _instance(d, m, b, names)
            if inst is None:
                raise AssertionError(f"{m.name}: bucket {b} of {d.name} counted, and it has no instance")
            out[(m.name, inst)] = int(delta[at])
    return out


def _reasons(res, names: Names) -> dict[tuple[str, str], int]:
    """(catalog source name, device) -> lc_jobreason of every device lc_job_diff left out."""
    c, tbl = lib(), table()
    out = {}
    src, inst, why = ctypes.c_uint(), ctypes.c_int(), ctypes.c_uint()
    for i in range(c.jd_res_nleft(res)):
        c.jd_res_left(res, i, ctypes.byref(src), ctypes.byref(inst), ctypes.byref(why))
        key = (catalog.JOB_SOURCES[src.value].source.name,
               names.name(KIND_INDOM[tbl.source_kind[src.value]], inst.value))
        if key in out:
            raise AssertionError(f"{key} left out twice (one reason a device and stats file)")
        out[key] = why.value
    return out


def _served(end: Record, res, names: Names) -> dict[int, list[tuple[str, int]]]:
    """Everything the slot serves (lc_job_answer of each item), instance ids named."""
    c, tbl = lib(), table()
    cap = c.jd_answer_cap(end.ptr, res)
    item, inst = np.zeros(cap + 1, dtype=np.intc), np.zeros(cap + 1, dtype=np.intc)
    value = np.zeros(cap + 1, dtype=np.uint64)
    n = c.jd_answer_all(end.ptr, res, item.ctypes.data_as(_intp), inst.ctypes.data_as(_intp),
                        value.ctypes.data_as(_u64p), cap)
    if n == -2:
        raise AssertionError("a slot item served more values than the agent's fetch makes room for "
                             "(lc_job_answer_max): the rest would be lost")
    if not 0 <= n <= cap:
        raise AssertionError(f"lc_job_answer refused a slot item ({n})")
    served: dict[int, list[tuple[str, int]]] = {}
    n_metrics = len(tbl.metrics)
    for k, i, v in zip(item[:n].tolist(), inst[:n].tolist(), value[:n].tolist()):
        if k < n_metrics:
            m = tbl.metrics[k]
            indom = catalog.FS_BUCKET if m.nval > 1 else KIND_INDOM[m.kind]
        else:
            indom = KIND_INDOM[tbl.source_kind[k - catalog.JOB_LEFT_OUT_ITEM0]]
        served.setdefault(k, []).append((names.name(indom, i), v))
    return served


def diff_host(begin: Record, end: Record, names: Names) -> Outcome:
    """lc_job_diff of one host's begin and end records, and the slot's answer, by name."""
    c = lib()
    res = c.jd_diff(begin.ptr, end.ptr)
    if not res:
        raise HarnessError("out of memory")
    try:
        return Outcome(_counted(end, res, names), _reasons(res, names), _served(end, res, names))
    finally:
        c.jd_res_free(res)


# ---- the job view: what the reporter's end-of-job fetch gets from these agents --------------------

def _column(values: dict) -> Column:
    if any(isinstance(v, str) for v in values.values()):
        return Column.from_dict(values)
    return Column(list(values), np.array(list(values.values()), dtype=np.uint64))


def view_host(end: Fetch, outcome: Outcome, job_id: str, begin_time: float) -> HostSnapshot:
    """One host as pcpfetch.fetch_pmapi reads its agent's job view: the job end metrics of the
    end fetch, the job's begin time, the slot's deltas and left_out under slot-free names
    (catalog.job_slot_names); a metric with no value is absent, as a fetch gives it."""
    header = end.snap.hosts[end.host]
    h = HostSnapshot(header.host, header.spec, ok=True, fetched_at=header.fetched_at)
    for metric in catalog.JOB_END_METRICS:
        values = end.values(metric)
        if values:
            t = end.snap.metrics[metric]
            h.metrics[metric], h.sems[metric] = _column(values), t.sem
            if t.pmid:
                h.pmids[metric] = t.pmid
    h.metrics[catalog.JOB_BEGIN_TIME] = _column({job_id: round(begin_time * catalog.START_UNIT_US)})
    h.sems[catalog.JOB_BEGIN_TIME] = "discrete"
    h.pmids[catalog.JOB_BEGIN_TIME] = f"{catalog.DOMAIN}.{catalog.JOB_CLUSTER}.2"
    rename = catalog.job_slot_names(SLOT)
    for item, values in outcome.served.items():
        if item < len(catalog.JOB_METRICS):
            agent_name, sem = f"{P}job.slot{SLOT}.{catalog.JOB_METRICS[item][len(P):]}", "counter"
        else:
            key = catalog.JOB_SOURCES[item - catalog.JOB_LEFT_OUT_ITEM0].key
            agent_name, sem = f"{P}job.slot{SLOT}.left_out.{key}", "instant"
        name = rename[agent_name]
        h.metrics[name] = Column([i for i, _ in values], np.array([v for _, v in values], dtype=np.uint64))
        h.sems[name] = sem
        h.pmids[name] = f"{catalog.DOMAIN}.{catalog.JOB_SLOT_CLUSTER0 + SLOT}.{item}"
    return h


def job_view(begin: Snapshot, end: Snapshot, job_id: str) -> tuple[Snapshot, dict[str, Outcome]]:
    """The end snapshot a job-view fetch of the job's hosts would give (for jobview.delta), and
    each host's outcome. A host's agent has the job's begin values if the begin snapshot read it
    (its prolog's store reached it), and answers if the end snapshot read it."""
    names = Names()
    viewed, outcomes = [], {}
    for host in dict.fromkeys([*begin.hosts, *end.hosts]):
        b, e = begin.hosts.get(host), end.hosts.get(host)
        if e is None or not e.ok:
            viewed.append(e or hostsnap.failed(host, b.spec, hostsnap.fetch_failed("not in the end fetch")))
        elif b is None or not b.ok:
            viewed.append(hostsnap.failed(host, e.spec, hostsnap.no_job_values(job_id, NOT_KEPT, True)))
        else:
            b_fetch, e_fetch = Fetch(begin, host), Fetch(end, host)
            outcomes[host] = diff_host(Record(devices_of(b_fetch, names)), Record(devices_of(e_fetch, names)), names)
            viewed.append(view_host(e_fetch, outcomes[host], job_id, begin.taken_at))
    return Snapshot.from_hosts(end.taken_at, viewed), outcomes
