"""Reset-aware difference of two snapshots (DESIGN §3, "Diff rules").

Counters are compared per (host, metric, instance) as hosts x instances matrices. Counters come
from stats files that are cleared or restarted as a whole, so resets are judged per *source*:
one stats file of one device on one host (e.g. the osc stats of scratch-OST0003 on node7). If
any counter of a source went backwards, the whole source is left out of the totals
(COUNTER_RESET); if a filesystem's mount_id changed, everything of that filesystem on that host
is left out (REMOUNT). Instances that appear only at the end count from zero. The report lists
what it left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from .snapfile import SINGULAR, MetricTable, Snapshot

P = "lustreclient."
_TARGET_SUFFIX = re.compile(r"-(?:OST|MDT)[0-9a-fA-F]{4,}$")


@dataclass(frozen=True)
class Issue:
    """One thing the report could not trust (JSON data_quality entry)."""
    id: str
    host: str | None
    fs: str | None
    detail: str

    def to_json(self) -> dict:
        return {"id": self.id, "host": self.host, "fs": self.fs, "detail": self.detail}


@dataclass
class DeltaTable:
    """A counter's job delta: delta[h, i] for host row h (JobDelta.hosts) and instance i.

    Values left out (reset, remounted, missing at the end) are 0 with counted[h, i] False.
    """
    instances: list[str]
    devices: np.ndarray   # device of each instance (instance without ':<bucket>')
    fs: np.ndarray        # filesystem of each instance
    delta: np.ndarray     # uint64
    counted: np.ndarray   # bool


@dataclass
class JobDelta:
    begin: float
    end: float
    hosts: list[str]                 # hosts whose deltas are used, in row order
    hosts_missing: list[str]         # hosts that could not be read at begin or end
    versions: dict[str, str]         # host -> Lustre version at the end
    tables: dict[str, DeltaTable]    # counter metric -> its deltas
    end_snapshot: Snapshot           # instant and discrete values at the end (states, mounts)
    issues: list[Issue] = field(default_factory=list)

    @property
    def elapsed_s(self) -> float:
        return max(0.0, self.end - self.begin)


def source_of(metric: str) -> str:
    """Which stats file a metric comes from (what a clear or a restart resets together)."""
    m = metric[len(P):] if metric.startswith(P) else metric
    if m.startswith("llite."):
        return "llite stats"
    if m.startswith("fs.rpc."):
        return "rpc_stats"
    if m.startswith("osc.rpc."):
        return "rpc_stats"
    if m.startswith("osc."):
        return "osc stats"
    if m.startswith("mdc.req_"):
        return "mdc stats"
    if m.startswith("mdc."):
        return "md_stats"
    return "other"


def fs_of(device: str) -> str:
    """scratch-OST0003 -> scratch; scratch -> scratch."""
    return _TARGET_SUFFIX.sub("", device)


def _summarise(devices: list[str], limit: int = 3) -> str:
    devices = sorted(set(devices))
    shown = ", ".join(devices[:limit])
    return shown + (f" and {len(devices) - limit} more" if len(devices) > limit else "")


def _host_issues(begin: Snapshot, end: Snapshot) -> tuple[list[str], list[str], list[Issue]]:
    used, missing, issues = [], [], []
    for name in sorted(set(begin.hosts) | set(end.hosts)):
        b, e = begin.hosts.get(name), end.hosts.get(name)
        if b is None or e is None:
            when = "start" if b is None else "end"
            issues.append(Issue("HOST_UNREACHABLE", name, None, f"{name} was not in the {when} snapshot"))
        elif not b.ok or not e.ok:
            bad, when = (b, "start") if not b.ok else (e, "end")
            issues.append(Issue("HOST_UNREACHABLE", name, None,
                                f"{name} could not be read at job {when}: {bad.error}"))
        else:
            used.append(name)
            continue
        missing.append(name)
    return used, missing, issues


def _rows(snap: Snapshot, hosts: list[str]) -> np.ndarray:
    index = {name: i for i, name in enumerate(snap.hosts)}
    return np.array([index[h] for h in hosts], dtype=np.intp)


def _aligned_begin(b: MetricTable | None, b_rows: np.ndarray, instances: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Begin values in the end table's column order; absent instances read as not present."""
    shape = (len(b_rows), len(instances))
    values, present = np.zeros(shape, dtype=np.uint64), np.zeros(shape, dtype=bool)
    if b is None or b.is_string:
        return values, present
    col = {name: i for i, name in enumerate(b.instances)}
    idx = np.array([col.get(name, -1) for name in instances], dtype=np.intp)
    have = idx >= 0
    values[:, have] = b.values[b_rows][:, idx[have]]
    present[:, have] = b.present[b_rows][:, idx[have]]
    return values, present


# Lustre 2.15+ stats files carry the time they were started or cleared; the agent exports it.
# A changed start time is a clear even when no counter went backwards (busy counters can climb
# past their old values before the end snapshot).
START_METRICS = {"llite stats": P + "llite.stats_start", "osc stats": P + "osc.stats_start",
                 "rpc_stats": P + "osc.rpc_stats_start", "md_stats": P + "mdc.md_stats_start",
                 "mdc stats": P + "mdc.stats_start"}


def _restarted(begin: Snapshot, end: Snapshot, b_rows: np.ndarray, e_rows: np.ndarray,
               metric: str) -> list[tuple[int, str]]:
    """(host row, device) whose stats start time differs between the snapshots."""
    e = end.metrics.get(metric)
    if e is None or e.is_string:
        return []
    b_vals, b_present = _aligned_begin(begin.metrics.get(metric), b_rows, e.instances)
    changed = b_present & e.present[e_rows] & (b_vals != e.values[e_rows])
    return [(int(r), e.instances[c]) for r, c in zip(*np.nonzero(changed))]


def _mount_ids(snap: Snapshot, host: str) -> dict[str, str]:
    return {k: v for k, v in snap.instance_values(P + "llite.mount_id", host).items() if isinstance(v, str)}


def diff(begin: Snapshot, end: Snapshot) -> JobDelta:
    hosts, missing, issues = _host_issues(begin, end)
    b_rows, e_rows = _rows(begin, hosts), _rows(end, hosts)

    tables: dict[str, DeltaTable] = {}
    decreased: dict[str, np.ndarray] = {}
    for metric, e in end.metrics.items():
        if e.sem != "counter" or e.is_string:
            continue
        end_vals, end_present = e.values[e_rows], e.present[e_rows]
        begin_vals, begin_present = _aligned_begin(begin.metrics.get(metric), b_rows, e.instances)
        begin_vals = np.where(begin_present, begin_vals, np.uint64(0))   # new instances count from 0
        dec = end_present & begin_present & (end_vals < begin_vals)
        counted = end_present & ~dec
        delta = np.where(counted, end_vals - np.where(dec, end_vals, begin_vals), np.uint64(0))
        devices = np.array([i.split(":", 1)[0] for i in e.instances], dtype=object)
        tables[metric] = DeltaTable(list(e.instances), devices,
                                    np.array([fs_of(d) for d in devices], dtype=object),
                                    delta.astype(np.uint64), counted)
        decreased[metric] = dec

    # REMOUNT: a filesystem whose mount_id changed (or vanished) on a host.
    remounted: list[dict[str, bool]] = [{} for _ in hosts]
    for r, host in enumerate(hosts):
        before, after = _mount_ids(begin, host), _mount_ids(end, host)
        for fs in sorted(before):
            if fs in after and after[fs] == before[fs]:
                continue
            how = ("was unmounted" if fs not in after
                   else f"was remounted (mount {before[fs]} -> {after[fs]})")
            issues.append(Issue("REMOUNT", host, fs,
                                f"{fs} {how} on {host} during the job; its counters on {host} are left out"))
            remounted[r][fs] = True
            for m, t in tables.items():
                cols = t.fs == fs
                t.counted[r, cols] = False
                t.delta[r, cols] = 0
                decreased[m][r, cols] = False   # said once as REMOUNT, not again as resets

    # COUNTER_RESET: any decrease resets its whole source (one file of one device on one host).
    by_source: dict[str, list[str]] = {}
    for metric in tables:
        by_source.setdefault(source_of(metric), []).append(metric)
    for source, metrics in sorted(by_source.items()):
        universe = sorted({d for m in metrics for d in tables[m].devices})
        dev_index = {d: i for i, d in enumerate(universe)}
        reset = np.zeros((len(hosts), len(universe)), dtype=bool)
        for m in metrics:
            cols = np.array([dev_index[d] for d in tables[m].devices], dtype=np.intp)
            hit_rows, hit_cols = np.nonzero(decreased[m])
            reset[hit_rows, cols[hit_cols]] = True
        if source in START_METRICS:
            for r, device in _restarted(begin, end, b_rows, e_rows, START_METRICS[source]):
                # per-OSC start times stand for the per-filesystem histogram they add up to
                target = device if device in dev_index else fs_of(device)
                if target in dev_index and not remounted[r].get(fs_of(target)):
                    reset[r, dev_index[target]] = True
        if not reset.any():
            continue
        for m in metrics:
            t = tables[m]
            cols = np.array([dev_index[d] for d in t.devices], dtype=np.intp)
            gone = reset[:, cols]
            t.counted &= ~gone
            t.delta[gone] = 0
        for r, host in enumerate(hosts):
            devs = [universe[c] for c in np.flatnonzero(reset[r])]
            for fs in sorted({fs_of(d) for d in devs}):
                mine = [d for d in devs if fs_of(d) == fs]
                issues.append(Issue("COUNTER_RESET", host, fs,
                                    f"{source} of {_summarise(mine)} on {host} were cleared during the "
                                    f"job; left out of the totals, which come from the rest"))

    versions = {}
    for host in hosts:
        v = end.value(P + "version", host, SINGULAR)
        if isinstance(v, str):
            versions[host] = v
        if not _mount_ids(end, host):
            issues.append(Issue("NO_LUSTRE", host, None, f"no Lustre filesystem is mounted on {host}"))

    return JobDelta(begin=begin.taken_at, end=end.taken_at, hosts=hosts, hosts_missing=missing,
                    versions=versions, tables=tables, end_snapshot=end, issues=issues)
