"""Per-filesystem totals of a job: llite volume and ops, RPC-size histograms, per OST, per host.

Sums over the reset-aware delta matrices (hosts x instances). Sums are exact: a uint64 sum over
hosts could wrap past 2^64 (two counters near 2^63 would sum to 10), so columns are summed as two
32-bit halves (exact for up to 2^32 hosts) and joined as Python ints; values leave this module as
Python ints (JSON must not round them). Each host's delta is below 2^63 (diff.DELTA_LIMIT); a
sum over hosts that reaches it is kept exact and said (VALUE_TOO_LARGE): a job record, whose
columns are int64, keeps it as null. Which metric is a volume, an operation, a histogram or a
per-OST figure is the catalog's to say.

A total knows whether it is whole. A value the diff left out (a file cleared or not read on a
host, a counter that is not one) is not a zero: each total the report's lines and findings use
says on how many hosts values of it were left out (FsTotals.left_out), and a total left out on
every host that had it is None, never 0. Which values existed, so that one not counted is left
out rather than never there, is Coverage's to say.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from .. import catalog
from ..catalog import Reason, size_bytes
from .diff import DELTA_LIMIT, DeltaTable, Issue, JobDelta, fs_of, rows_of
from ..acquire.hostsnap import summarise

OST_FIELDS = tuple(m.key for m in catalog.with_role(catalog.OST_VOLUME))  # read_bytes, ..., write_rpcs
WAIT = "osts.wait_us_mean"       # the per-OST mean wait's total name (req_waittime / req_count)


def total_name(m: catalog.Metric) -> str:
    """The name a summed metric's per-filesystem total goes by in FsTotals.left_out, in a
    finding's inputs and in the report JSON: read_bytes, ops.open, rpc.read, osts.read_bytes,
    osts.wait_us_mean, trouble (reconnects)."""
    if m.role == catalog.VOLUME:
        return m.key
    if m.role == catalog.OP:
        return "ops." + m.key
    if m.role == catalog.RPC_HISTOGRAM:
        return "rpc." + m.key
    if m.role == catalog.OST_VOLUME:
        return "osts." + m.key
    if m.role == catalog.OST_WAIT:
        return WAIT
    if m.role == catalog.RECONNECTS:
        return "trouble"
    return m.key


@dataclass(frozen=True)
class Basis:
    """Totals summed over the same hosts: those where every one of them was counted."""
    sums: dict[str, int]
    hosts: int | None       # hosts summed (None: not known, totals written out by hand)
    hosts_left_out: int     # hosts that had the filesystem but not all of these values counted


@dataclass
class HostColumns:
    """One filesystem's per-host values that findings compare with each other (llite volumes
    and operations, each host's OSC sums), and whether each host's value was counted whole.
    Rows are JobDelta.hosts; `has` marks the hosts that had the filesystem."""
    has: np.ndarray
    values: dict[str, np.ndarray] = field(default_factory=dict)    # total -> per-host value
    counted: dict[str, np.ndarray] = field(default_factory=dict)   # total -> bool per host

    def same_hosts(self, names: tuple[str, ...]) -> Basis | None:
        """The totals over the hosts where all of them were counted; None if there is none."""
        both = self.has.copy()
        for name in names:
            got = self.counted.get(name)
            both &= got if got is not None else False
        if not both.any():
            return None
        sums = {name: sum(int(v) for v in self.values[name][both]) for name in names}
        return Basis(sums, int(both.sum()), int((self.has & ~both).sum()))


@dataclass
class FsTotals:
    name: str
    read_bytes: int | None = 0
    write_bytes: int | None = 0
    read_calls: int | None = 0
    write_calls: int | None = 0
    ops: dict[str, int | None] = field(default_factory=dict)
    rpc: dict[str, dict[str, int] | None] = field(default_factory=lambda: {"read": {}, "write": {}})
    osts: dict[str, dict[str, int | float | None]] = field(default_factory=dict)
    hosts: dict[str, dict[str, int]] = field(default_factory=dict)
    ost_count: int = 0
    trouble: list[dict] = field(default_factory=list)   # targets that reconnected or were not FULL
    trouble_total: int = 0                              # ... all of them, when the list is cut
    # Totals some of whose values were left out: total name (total_name) -> the hosts whose
    # values of it were; not_read: those of them no host's value of which was counted (the
    # total is None: its value, a histogram direction, or every OST's field).
    left_out: dict[str, int] = field(default_factory=dict)
    not_read: set[str] = field(default_factory=set)
    # What compare needs beyond the report's own lines (DESIGN §3, report JSON): per-call latency
    # sums (2.14+), read-ahead counters, hybrid I/O counters. A value is None unless every host
    # of the filesystem gave it at both ends: a sum over some hosts would pass for the job's.
    latency_us: dict[str, int | None] = field(default_factory=dict)
    readahead: dict[str, int | None] = field(default_factory=dict)
    hybrid: dict[str, int | None] = field(default_factory=dict)
    # Per host, for findings that compare totals (not in the JSON); None: the totals are whole.
    per_host: HostColumns | None = field(default=None, repr=False)
    # Per OST over the hosts whose OSC values of the filesystem were all counted, when some were
    # not (read_bytes, write_bytes, read_rpcs, write_rpcs), and how many hosts that leaves out.
    osts_basis: dict[str, dict[str, int]] | None = field(default=None, repr=False)
    osts_basis_hosts: int = 0
    osts_basis_hosts_left_out: int = 0

    def value(self, name: str) -> int | None:
        """A total by its name (total_name): None when no host's value of it was counted."""
        if name.startswith("ops."):
            return self.ops.get(name[4:])
        if name.startswith("rpc."):
            hist = self.rpc.get(name[4:])
            return None if hist is None else sum(hist.values())
        if name.startswith("osts."):
            return None if self.absent(name) else self.ost_sum(name[5:])
        return getattr(self, name)

    def absent(self, name: str) -> bool:
        """No host's value of this total was counted (every one that existed was left out)."""
        return name in self.not_read or (not name.startswith("osts.") and self.value(name) is None)

    def same_hosts(self, *names: str) -> Basis | None:
        """These totals over the hosts where every one of them was counted (a consistent basis
        for comparing them); None if there is no such host."""
        if any(self.absent(n) for n in names):
            return None
        if self.per_host is None or not any(n in self.left_out for n in names):
            return Basis({n: int(self.value(n)) for n in names}, None,
                         max((self.left_out.get(n, 0) for n in names), default=0))
        return self.per_host.same_hosts(names)

    @property
    def bytes_moved(self) -> int | None:
        if self.read_bytes is None or self.write_bytes is None:
            return None
        return self.read_bytes + self.write_bytes

    def ost_sum(self, key: str) -> int:
        """An OST figure summed over the OSTs listed (those whose value of it was counted)."""
        return sum(int(o.get(key) or 0) for o in self.osts.values())

    def host_bytes(self) -> dict[str, int]:
        """Bytes moved per host, of the hosts whose read and write bytes were both counted."""
        return {h: v["read_bytes"] + v["write_bytes"] for h, v in self.hosts.items()
                if "read_bytes" in v and "write_bytes" in v}

    def spread(self) -> dict | None:
        """Bytes moved per host: min, median, max and the host that moved most (2+ hosts)."""
        per_host = self.host_bytes()
        if len(per_host) < 2:
            return None
        ordered = sorted(per_host.values())
        mid = len(ordered) // 2
        median = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) // 2
        top = max(per_host, key=lambda h: (per_host[h], h))
        return {"hosts": len(ordered), "min": ordered[0], "median": median, "max": ordered[-1], "max_host": top}

    def to_json(self) -> dict:
        return {"read_bytes": self.read_bytes, "write_bytes": self.write_bytes,
                "read_calls": self.read_calls, "write_calls": self.write_calls,
                "ops": self.ops, "rpc": self.rpc, "osts": self.osts, "hosts": self.hosts,
                "ost_count": self.ost_count, "spread": self.spread(), "trouble": self.trouble,
                "left_out": dict(sorted(self.left_out.items())), "not_read": sorted(self.not_read),
                "latency_us": self.latency_us, "readahead": self.readahead, "hybrid": self.hybrid}


class Coverage:
    """Which values of a filesystem existed on which host, so that one the diff did not count
    is known as left out, not as one that was never there (a zero).

    A filesystem's own values (llite, its RPC histogram) existed on the hosts that have it
    mounted at the end or whose values of it the diff left out (unmounted during the job). An
    OSC's or MDC's value not counted on a host was left out, whichever way the job was read
    (the same rule both ways, so that they report alike: tests/report/test_diff_differential.py)
      - where the diff left that device's stats file out on that host (JobDelta.left_out: the
        agent's left_out.<source> codes through the job view, which sends no delta of 0);
      - where the host's device listing at the end has the device (stats files every Lustre
        has);
      - where the counter is not one (the diff gives it a table with nothing counted)."""

    def __init__(self, delta: JobDelta):
        self.delta = delta
        end = delta.end_snapshot
        self.rows = rows_of(end, delta.hosts)
        self._mounts = end.metrics.get(catalog.DEVICE_METRIC[catalog.FS])
        self._has: dict[str, np.ndarray] = {}
        self._incomplete: dict[str, np.ndarray] = {}
        self._listings: dict[str, tuple[np.ndarray, dict[str, int]]] = {}
        self._given: dict[str, tuple[np.ndarray, dict[str, int]] | None] = {}

    def incomplete(self, fs: str) -> np.ndarray:
        """[h]: the diff left out values of the filesystem on host h."""
        if fs not in self._incomplete:
            self._incomplete[fs] = np.array([fs in self.delta.incomplete.get(h, ()) for h in self.delta.hosts],
                                            dtype=bool)
        return self._incomplete[fs]

    def mark_incomplete(self, fs: str, rows: np.ndarray) -> None:
        """Values of fs on these host rows were left out (found here, not by the diff)."""
        for r in rows:
            self.delta.incomplete.setdefault(self.delta.hosts[r], set()).add(fs)
        self._incomplete.pop(fs, None)

    def has(self, fs: str) -> np.ndarray:
        """[h]: host h had the filesystem during the job."""
        if fs not in self._has:
            mounted = np.zeros(len(self.rows), dtype=bool)
            col = self._mounts.column(fs) if self._mounts is not None else None
            if col is not None:
                mounted = self._mounts.present[self.rows, col]
            self._has[fs] = mounted | self.incomplete(fs)
        return self._has[fs]

    def listing(self, indom: str, devices: list[str]) -> np.ndarray:
        """[h, d]: the host's device listing at the end has device d."""
        if indom not in self._listings:
            t = self.delta.end_snapshot.metrics.get(catalog.DEVICE_METRIC.get(indom, ""))
            present = t.present[self.rows] if t is not None else np.zeros((len(self.rows), 0), dtype=bool)
            self._listings[indom] = (present, {name: i for i, name in enumerate(t.instances)} if t is not None else {})
        present, col = self._listings[indom]
        idx = np.array([col.get(d, -1) for d in devices], dtype=np.intp)
        listed = np.zeros((len(self.rows), len(devices)), dtype=bool)
        listed[:, idx >= 0] = present[:, idx[idx >= 0]]
        return listed

    def _left_out(self, m: catalog.Metric, fs: str) -> tuple[list[str], np.ndarray]:
        """The devices of fs whose values of m's stats file the diff left out on some host
        (JobDelta.left_out, whichever way the job was read), and out[h, d]: left out there."""
        t = next((t for t in self.delta.left_out if t.source == m.source.name and t.indom == m.indom), None)
        if t is None:
            return [], np.zeros((len(self.rows), 0), dtype=bool)
        cols = [i for i, d in enumerate(t.devices) if fs_of(d) == fs]
        return [t.devices[i] for i in cols], t.reasons[:, cols] != Reason.COUNTED

    def given_at_end(self, m: catalog.Metric, instances: list[str]) -> np.ndarray:
        """[h, i]: the host gave a value of m for this instance at the end (in the job view,
        a delta). A counter that is not one still has its values; one never given has none."""
        if m.name not in self._given:
            end = self.delta.end_snapshot.metrics
            t = end.get(m.name) or end.get(catalog.job_view_name(m.name))
            self._given[m.name] = ((t.present[self.rows], {name: i for i, name in enumerate(t.instances)})
                                   if t is not None else None)
        given = np.zeros((len(self.rows), len(instances)), dtype=bool)
        if self._given[m.name] is not None:
            present, col = self._given[m.name]
            idx = np.array([col.get(i, -1) for i in instances], dtype=np.intp)
            given[:, idx >= 0] = present[:, idx[idx >= 0]]
        return given

    def host_left_out(self, tab: DeltaTable | None, fs: str) -> np.ndarray:
        """[h]: a filesystem-wide counter (llite, histogram) existed on h and none of h's values
        of it for fs was counted."""
        return self.has(fs) & ~_counted_on_host(tab, fs, len(self.rows))

    def device_left_out(self, m: catalog.Metric, tab: DeltaTable | None, fs: str,
                        devices: list[str]) -> tuple[list[str], np.ndarray]:
        """The OSCs/MDCs of fs (the table's, these and those the agent left out) and left[h, d]:
        d's value of m existed on h and was not counted."""
        cols = _fs_columns(tab, fs)
        names = [tab.instances[c] for c in cols] if tab is not None else []
        out_devices, out = self._left_out(m, fs)
        names += sorted(set(devices).union(out_devices) - set(names))
        counted = np.zeros((len(self.rows), len(names)), dtype=bool)
        if len(cols):
            counted[:, :len(cols)] = tab.counted[:, cols]
        if tab is not None and tab.untyped:       # the counter itself: nothing of it counted
            exists = np.ones_like(counted)
        else:
            exists = np.zeros_like(counted)
            at = {d: j for j, d in enumerate(names)}
            for i, d in enumerate(out_devices):
                exists[:, at[d]] = out[:, i]
            if m.source.required:
                exists |= self.listing(m.indom, names)
        return names, ~counted & exists & self.has(fs)[:, None]


def _fs_columns(tab: DeltaTable | None, fs: str) -> np.ndarray:
    if tab is None or not len(tab.instances):
        return np.zeros(0, dtype=np.intp)
    return np.flatnonzero(tab.fs == fs)


def _counted_on_host(tab: DeltaTable | None, fs: str, n_hosts: int) -> np.ndarray:
    """[h]: some value of fs in the table was counted on host h (a histogram's buckets are
    counted or left out together)."""
    cols = _fs_columns(tab, fs)
    if not len(cols):
        return np.zeros(n_hosts, dtype=bool)
    return tab.counted[:, cols].any(axis=1)


def _present_instances(delta: JobDelta, metric: str) -> list[str]:
    """Instances of a metric that exist at the end on any host of the job."""
    t = delta.end_snapshot.metrics.get(metric)
    if t is None:
        return []
    have = t.present[rows_of(delta.end_snapshot, delta.hosts)].any(axis=0)
    return [name for name, ok in zip(t.instances, have) if ok]


def exact_sum(values: np.ndarray, axis: int) -> np.ndarray:
    """Sum of uint64 values as Python ints (object array), exact however large."""
    values = np.asarray(values, dtype=np.uint64)
    low = (values & np.uint64(0xFFFFFFFF)).sum(axis=axis, dtype=np.uint64)
    high = (values >> np.uint64(32)).sum(axis=axis, dtype=np.uint64)
    return np.array([(int(h) << 32) + int(l) for h, l in zip(np.ravel(high), np.ravel(low))],
                    dtype=object).reshape(np.shape(low))


def _totals(t: DeltaTable) -> dict[str, int]:
    """Instance -> delta summed over hosts."""
    return dict(zip(t.instances, exact_sum(t.delta, axis=0).tolist()))


class _Unaccounted:
    """Values left out that no data_quality entry covers: a host gave a counter at neither end
    while it gave others of the same stats file (a bytes line without its sum, a counter of
    another type on that host), so the diff saw a file read and nothing to leave out; or a value
    left out on a host the diff left nothing of the filesystem out on. Said as VALUES_MISSING,
    one line per filesystem, and its hosts counted as partly read."""

    def __init__(self, delta: JobDelta, cover: Coverage):
        self.delta, self.cover = delta, cover
        self.found: dict[str, tuple[list[str], np.ndarray]] = {}    # fs -> (metrics, hosts)

    def add(self, m: catalog.Metric, fs: str, file_read: np.ndarray, counted: np.ndarray, given: np.ndarray,
            left: np.ndarray) -> None:
        """Cells (hosts, or hosts x devices) of m for fs: whether another counter of the stats
        file was counted there, whether m was, whether the host gave m at the end, and whether
        m's value there was left out. A value given and not counted on a host the diff left
        nothing of fs out on is a counter that is not one (METRIC_TYPE: the diff said it)."""
        quiet = ~self.cover.incomplete(fs)
        if (given & ~counted & (quiet[:, None] if given.ndim > 1 else quiet)).any():
            return
        hosts = file_read & ~counted & ~given
        hosts = hosts.any(axis=1) if hosts.ndim > 1 else hosts
        hosts |= (left.any(axis=1) if left.ndim > 1 else left) & quiet
        if hosts.any():
            metrics, rows = self.found.get(fs, ([], np.zeros(len(hosts), dtype=bool)))
            self.found[fs] = (metrics + [m.name], rows | hosts)

    def say(self) -> None:
        for fs, (metrics, rows) in sorted(self.found.items()):
            rows = np.flatnonzero(rows)
            self.cover.mark_incomplete(fs, rows)
            names = [self.delta.hosts[r] for r in rows]
            where = f"on {names[0]}" if len(names) == 1 else f"on {len(names):,} hosts ({summarise(names)})"
            what = metrics[0] if len(metrics) == 1 else f"{len(metrics)} counters ({summarise(metrics, 2)})"
            self.delta.issues.append(Issue(
                "VALUES_MISSING", names[0] if len(names) == 1 else None, fs,
                f"{what} of {fs} had no value at job start nor at its end {where}, though the "
                f"stats file was read: left out of the totals, which come from the rest"))


def aggregate(delta: JobDelta) -> dict[str, FsTotals]:
    filesystems = sorted(_present_instances(delta, catalog.DEVICE_METRIC[catalog.FS]))
    out = {fs: FsTotals(fs) for fs in filesystems}
    cover = Coverage(delta)
    unaccounted = _Unaccounted(delta, cover)
    osc_devices = {d for m in catalog.with_role(catalog.OST_VOLUME, catalog.OST_WAIT, catalog.STATE, catalog.DEVICE)
                   if m.indom == catalog.OSC for d in _present_instances(delta, m.name)}
    for fs, t in out.items():
        t.ost_count = sum(1 for d in osc_devices if fs_of(d) == fs)
        t.per_host = HostColumns(cover.has(fs))
    _llite(delta, out, cover, unaccounted)
    _histograms(delta, out, cover, unaccounted)
    _osts(delta, out, cover, unaccounted, osc_devices)
    _job_wide_counters(delta, out, cover)
    _target_trouble(delta, out, cover)
    unaccounted.say()
    for t in out.values():
        if not t.left_out:
            t.per_host = None      # whole: the totals are their own basis
    _say_sums_past_int64(delta, out)
    return out


def past_int64(doc: Any, path: tuple[str, ...] = ()) -> Iterator[str]:
    """The names ('rpc read 4K', 'osts OST0003 read_bytes') of the counts in doc of 2^63 or more."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from past_int64(value, path + (str(key),))
    elif isinstance(doc, list):
        for value in doc:
            yield from past_int64(value, path)
    elif isinstance(doc, int) and not isinstance(doc, bool) and doc >= int(DELTA_LIMIT):
        yield " ".join(path)


def _say_sums_past_int64(delta: JobDelta, out: dict[str, FsTotals]) -> None:
    """A filesystem's figures that add up to 2^63 or more over the job's hosts (each host's is
    below it): exact on the report, said, as the job record cannot keep them."""
    for fs, t in out.items():
        names = sorted(set(past_int64(t.to_json())))
        if names:
            delta.issues.append(Issue("VALUE_TOO_LARGE", None, fs,
                                      f"{fs}: {summarise(names)} add up to 2^63 or more over the job's hosts: "
                                      "exact here, but past what a job record keeps (int64), where they are null"))


def _llite(delta: JobDelta, out: dict[str, FsTotals], cover: Coverage, unaccounted: _Unaccounted) -> None:
    """Volumes and the catalogued operations (the shown ones first): one column per filesystem."""
    ops = catalog.with_role(catalog.OP)
    metrics = (catalog.with_role(catalog.VOLUME) + [m for op in catalog.SHOWN_OPS for m in ops if m.key == op]
               + sorted((m for m in ops if m.key not in catalog.SHOWN_OPS), key=lambda m: m.key))
    n = len(delta.hosts)
    for fs, t in out.items():
        has = cover.has(fs)
        for m in metrics:
            tab = delta.tables.get(m.name)
            col = tab.instances.index(fs) if tab is not None and fs in tab.instances else None
            values = tab.delta[:, col] if col is not None else np.zeros(n, dtype=np.uint64)
            counted = has & tab.counted[:, col] if col is not None else np.zeros(n, dtype=bool)
            left = has & ~counted
            name = total_name(m)
            t.per_host.values[name], t.per_host.counted[name] = values, counted
            total = int(exact_sum(values[counted], axis=0)) if counted.any() or not left.any() else None
            if left.any():
                t.left_out[name] = int(left.sum())
            if total is None:
                t.not_read.add(name)
            if m.role == catalog.VOLUME:
                setattr(t, m.key, total)
            else:
                t.ops[m.key] = total
        file_read = np.logical_or.reduce([t.per_host.counted[total_name(m)] for m in metrics])
        for m in metrics:
            counted = t.per_host.counted[total_name(m)]
            unaccounted.add(m, fs, has & file_read, counted, cover.given_at_end(m, [fs])[:, 0], has & ~counted)
        columns = [(m.key, t.per_host.values[total_name(m)], t.per_host.counted[total_name(m)]) for m in metrics]
        for r, host in enumerate(delta.hosts):
            per_host = {key: int(values[r]) for key, values, counted in columns if counted[r]}
            if per_host:
                t.hosts[host] = per_host


def _histograms(delta: JobDelta, out: dict[str, FsTotals], cover: Coverage, unaccounted: _Unaccounted) -> None:
    """RPC-size histograms per filesystem, every bucket the agents export, zeros kept; a
    direction left out on every host that had the filesystem is None."""
    buckets: dict[str, list[str]] = {}
    for metric in catalog.names(catalog.RPC_HISTOGRAM):
        # the buckets the agents export at the end; read through the job view (no end values
        # of the histogram), those its deltas have: the agent sends every bucket counted, zeros too
        table = delta.tables.get(metric)
        exported = (_present_instances(delta, metric) if metric in delta.end_snapshot.metrics
                    else table.instances if table is not None else [])
        for inst in exported:
            fs, _, size = inst.rpartition(":")
            if not catalog.is_size_label(size):
                delta.issues.append(Issue("METRIC_TYPE", None, fs or None,
                                          f"{metric} has an instance {inst!r} that is not an RPC size: left out"))
                continue
            if size not in buckets.setdefault(fs, []):
                buckets[fs].append(size)
    histograms = catalog.with_role(catalog.RPC_HISTOGRAM)
    for fs in out:       # one direction not counted on a host whose other one was
        counted = {m.name: _counted_on_host(delta.tables.get(m.name), fs, len(delta.hosts)) for m in histograms}
        for m in histograms:
            tab = delta.tables.get(m.name)
            of_fs = [tab.instances[c] for c in _fs_columns(tab, fs)] if tab is not None else []
            other = np.logical_or.reduce([c for name, c in counted.items() if name != m.name])
            unaccounted.add(m, fs, cover.has(fs) & other, counted[m.name], cover.given_at_end(m, of_fs).any(axis=1),
                            cover.host_left_out(tab, fs))
    for m in histograms:
        tab = delta.tables.get(m.name)
        sums = _totals(tab) if tab is not None else {}
        for fs, t in out.items():
            left = cover.host_left_out(tab, fs)
            counted = _counted_on_host(tab, fs, len(delta.hosts))
            cols = _fs_columns(tab, fs)
            # a bucket that is not an RPC size (said above) leaves its hosts' counts out too
            odd = [c for c in cols if not catalog.is_size_label(tab.instances[c].rpartition(":")[2])]
            partly = left | (tab.counted[:, odd].any(axis=1) if odd else False)
            if partly.any():
                t.left_out[total_name(m)] = int(partly.sum())
            if left.any() and not (counted & cover.has(fs)).any():
                t.rpc[m.key] = None
                t.not_read.add(total_name(m))
                continue
            labels = sorted(buckets.get(fs, []), key=size_bytes)
            t.rpc[m.key] = {label: sums.get(f"{fs}:{label}", 0) for label in labels}


@dataclass
class _OstCounter:
    """One OSC counter of a filesystem: per OST its sum (None: left out wherever it existed),
    per host its sum over the filesystem's OSTs and whether any of them was left out there."""
    per_ost: dict[str, int | None]
    per_host: np.ndarray
    hosts_left: np.ndarray
    counted_nowhere: bool          # no host's value of any of the filesystem's OSTs was counted
    devices: list[str]             # the OSCs of left's columns
    left: np.ndarray               # [h, d] left out (an OSC the job view sent no delta for is a 0)


def _columns(a: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """a[:, cols], a view when the columns are contiguous (a filesystem's OSTs usually are)."""
    if len(cols) and cols[-1] - cols[0] + 1 == len(cols):
        return a[:, cols[0]:cols[-1] + 1]
    return a[:, cols]


def _ost_counter(cover: Coverage, m: catalog.Metric, tab: DeltaTable | None, fs: str,
                 devices: list[str]) -> _OstCounter:
    names, left = cover.device_left_out(m, tab, fs, devices)
    cols = _fs_columns(tab, fs)
    n = len(cover.rows)
    counted_any = np.zeros(len(names), dtype=bool)
    values: list[int] = []
    per_host = np.zeros(n, dtype=object)
    if len(cols):
        delta = _columns(tab.delta, cols)
        counted_any[:len(cols)] = _columns(tab.counted, cols).any(axis=0)
        values = exact_sum(delta, axis=0).tolist()
        per_host = exact_sum(delta, axis=1)
    values += [0] * (len(names) - len(values))
    unknown = ~counted_any & left.any(axis=0)
    return _OstCounter({d: None if no else v for d, v, no in zip(names, values, unknown.tolist())},
                       per_host, left.any(axis=1), not counted_any.any(), names, left)


def _ost_values_unsaid(cover: Coverage, counters: dict[catalog.Metric, _OstCounter], unaccounted: _Unaccounted,
                       fs: str) -> None:
    """An OSC counter the host gave no value of at the end for an OST whose other osc stats
    were counted there: the file was read and the diff left nothing of it out."""
    devices = sorted({d for c in counters.values() for d, out in zip(c.devices, c.left.any(axis=0)) if out})
    if not devices:
        return
    at = {d: j for j, d in enumerate(devices)}
    has = cover.has(fs)[:, None]
    aligned = {}                    # metric -> ([h, d] left out, [h, d] counted), on these devices
    for m, c in counters.items():
        cols = np.array([at.get(d, -1) for d in c.devices], dtype=np.intp)
        left = np.zeros((len(cover.rows), len(devices)), dtype=bool)
        known = np.zeros(len(devices), dtype=bool)
        left[:, cols[cols >= 0]], known[cols[cols >= 0]] = c.left[:, cols >= 0], True
        aligned[m] = (left, has & known & ~left)
    for m, (left, _) in aligned.items():
        if left.any():
            file_read = np.logical_or.reduce([counted for other, (_, counted) in aligned.items() if other is not m])
            unaccounted.add(m, fs, file_read, ~left, cover.given_at_end(m, devices), left)


def _osts(delta: JobDelta, out: dict[str, FsTotals], cover: Coverage, unaccounted: _Unaccounted,
          osc_devices: set[str]) -> None:
    """Per OST: bytes and RPCs through it and the mean wait of its requests, each over the
    hosts whose value of it was counted (None where none was); per host, the sums over the
    filesystem's OSCs, counted where none of the host's was left out."""
    for fs, t in out.items():
        devices = sorted(d for d in osc_devices if fs_of(d) == fs)
        sums: dict[str, dict[str, int | None]] = {}
        host_whole = cover.has(fs).copy()       # every OSC value of fs counted on the host
        counters: dict[catalog.Metric, _OstCounter] = {}
        for m in catalog.with_role(catalog.OST_VOLUME, catalog.OST_WAIT):
            c = counters[m] = _ost_counter(cover, m, delta.tables.get(m.name), fs, devices)
            sums[m.key] = c.per_ost
            host_whole &= ~c.hosts_left
            name = total_name(m)
            if c.hosts_left.any():
                t.left_out[name] = max(t.left_out.get(name, 0), int(c.hosts_left.sum()))
                if c.counted_nowhere:
                    t.not_read.add(name)
            if m.role == catalog.OST_VOLUME:
                t.per_host.values[name] = c.per_host
                t.per_host.counted[name] = cover.has(fs) & ~c.hosts_left
        _ost_values_unsaid(cover, counters, unaccounted, fs)
        for device in devices:
            entry: dict[str, int | float | None] = {k: sums[k].get(device, 0) for k in OST_FIELDS}
            if not any(entry.values()):
                continue   # pings and other background requests do not make an OST "used"
            count, wait = sums["req_count"].get(device, 0), sums["req_waittime"].get(device, 0)
            entry["wait_us_mean"] = round(wait / count, 1) if count and wait is not None else None
            t.osts[device[len(fs) + 1:]] = entry
        if any(k.startswith("osts.") for k in t.left_out):
            _osts_basis(delta, t, fs, host_whole)


def _osts_basis(delta: JobDelta, t: FsTotals, fs: str, whole: np.ndarray) -> None:
    """Per OST figures over the hosts whose every OSC value of fs was counted: what findings
    comparing OSTs with each other (a share, a mean) may compare when some host's were not."""
    basis: dict[str, dict[str, int]] = {}
    rows = np.flatnonzero(whole)
    for m in catalog.with_role(catalog.OST_VOLUME):
        tab = delta.tables.get(m.name)
        cols = _fs_columns(tab, fs)
        if not len(cols):
            continue
        sums = exact_sum(_columns(tab.delta, cols)[rows], axis=0).tolist()
        for c, v in zip(cols, sums):
            if v:
                basis.setdefault(tab.instances[c][len(fs) + 1:], dict.fromkeys(OST_FIELDS, 0))[m.key] = v
    t.osts_basis = basis
    t.osts_basis_hosts = len(rows)
    t.osts_basis_hosts_left_out = int((t.per_host.has & ~whole).sum())


def _job_wide_counters(delta: JobDelta, out: dict[str, FsTotals], cover: Coverage) -> None:
    """Latency, read-ahead and hybrid I/O sums per filesystem, each only where every host that
    had the filesystem gave the counter at both ends (else None)."""
    for role, attr in ((catalog.LATENCY, "latency_us"), (catalog.READAHEAD, "readahead"),
                       (catalog.HYBRID, "hybrid")):
        for m in catalog.with_role(role):
            tab = delta.tables.get(m.name)
            for fs, t in out.items():
                value = None
                has = cover.has(fs)
                if has.any() and not cover.host_left_out(tab, fs).any():
                    col = tab.instances.index(fs)
                    value = int(exact_sum(tab.delta[has, col], axis=0))
                getattr(t, attr)[m.key] = value


def _target_trouble(delta: JobDelta, out: dict[str, FsTotals], cover: Coverage, limit: int = 50) -> None:
    """OSCs/MDCs that reconnected during the job or were not FULL at its end, per host
    (at most `limit` listed per filesystem, the most reconnected first). A target whose
    reconnects were left out on that host has them None; how many hosts' were, left_out."""
    end = delta.end_snapshot
    rows = rows_of(end, delta.hosts)
    found: dict[str, list[dict]] = {}
    hosts_left: dict[str, np.ndarray] = {}
    for kind in (catalog.OSC, catalog.MDC):
        metric = next((m for m in catalog.with_role(catalog.RECONNECTS) if m.indom == kind), None)
        reconnects = delta.tables.get(metric.name) if metric is not None else None
        states = next((end.metrics[m.name] for m in catalog.with_role(catalog.STATE)
                       if m.indom == kind and m.name in end.metrics), None)
        entries: dict[tuple[int, str], dict] = {}
        unknown: set[tuple[int, str]] = set()
        if reconnects is not None:
            for r, c in zip(*np.nonzero(reconnects.delta)):
                entries[(int(r), reconnects.instances[c])] = {"reconnects": int(reconnects.delta[r, c])}
        if metric is not None:
            for fs in out:
                names, left = cover.device_left_out(metric, reconnects, fs, [])
                hosts_left[fs] = hosts_left.get(fs, False) | left.any(axis=1)
                unknown.update((int(r), names[c]) for r, c in zip(*np.nonzero(left)))
        state_at: dict[tuple[int, str], str] = {}
        if states is not None and len(rows):
            values, present = states.values[rows], states.present[rows]
            not_full = present & (values != "FULL")
            for r, c in zip(*np.nonzero(not_full)):
                entries.setdefault((int(r), states.instances[c]), {"reconnects": 0})
            col = {name: i for i, name in enumerate(states.instances)}
            for (r, target) in entries:
                c = col.get(target)
                if c is not None and present[r, c]:
                    state_at[(r, target)] = values[r, c]
        for (r, target), e in entries.items():
            found.setdefault(fs_of(target), []).append(
                {"host": delta.hosts[r], "target": target,
                 "reconnects": None if (r, target) in unknown else e["reconnects"],
                 "state": state_at.get((r, target))})
    for fs, left in hosts_left.items():
        if np.any(left):
            out[fs].left_out["trouble"] = int(np.sum(left))
    for fs, entries in found.items():
        if fs in out:
            entries.sort(key=lambda e: (-(e["reconnects"] or 0), e["state"] == "FULL", e["host"], e["target"]))
            out[fs].trouble = entries[:limit]
            out[fs].trouble_total = len(entries)
