"""Reset-aware difference of two snapshots (DESIGN §3, "Diff rules").

Counters are compared per (host, metric, instance) as hosts x instances matrices. What a clear,
a restart or an unreadable file takes away together is one *source*: one stats file of one
device on one host (e.g. the osc stats of scratch-OST0003 on node7). The agent says which file a
value came from (its PMID cluster; catalog.py names the file), so sources come from there, not
from metric names. For each source of each host the diff decides:

- read at start and at end: the delta counts, unless a counter went backwards or the file's
  start time moved (COUNTER_RESET), or its filesystem was remounted (REMOUNT);
- the device did not exist at start (the device listing says so): it counts from zero;
- it existed but could not be read at start, or at end (unreadable, over the agent's size cap,
  skipped under its time budget, gone): left out, and said (VALUES_MISSING), with the agent's
  own account of that fetch (files skipped under its budget, read or parse failures).

Only counters the catalog says the report sums are differenced; one that is not a counter in
both snapshots is left out and said (METRIC_TYPE). Every value left out reaches data_quality.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from . import catalog
from .catalog import P
from .hostsnap import summarise
from .snapfile import SINGULAR, MetricTable, Snapshot

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

    Values left out (reset, remounted, not read at one end) are 0 with counted[h, i] False.
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
    incomplete: dict[str, set[str]] = field(default_factory=dict)   # host -> filesystems with values left out

    @property
    def elapsed_s(self) -> float:
        return max(0.0, self.end - self.begin)


def fs_of(device: str) -> str:
    """scratch-OST0003 -> scratch; scratch -> scratch."""
    return _TARGET_SUFFIX.sub("", device)


def device_of(instance: str) -> str:
    """scratch:4K -> scratch (a bucket's device is its filesystem); others are devices."""
    return instance.split(":", 1)[0]


# Hosts that failed alike (the same words, at the same end of the job) are one data_quality
# entry from this many on: a 12,000-node job whose prolog could read 3,000 hosts in its bound
# must not get 9,000 "Not trusted" lines (job.hosts_missing still names every one).
GROUP_HOSTS_FROM = 4


def host_issues(begin_hosts: dict, end: Snapshot, *, job_view: bool = False) -> tuple[list[str], list[str], list[Issue]]:
    """The hosts whose deltas are used, those left out, and why (HOST_UNREACHABLE). begin_hosts:
    the begin snapshot's hosts; job_view: there is none (the agents kept the start), every host
    of the end fetch is the job's."""
    used, missing = [], []
    alike: dict[tuple[str, str], list[str]] = {}     # (at job start|end, why) -> hosts
    for name in sorted(set(begin_hosts) | set(end.hosts)):
        b, e = begin_hosts.get(name), end.hosts.get(name)
        if b is None and not job_view:
            key = ("start", "")
        elif b is not None and not b.ok:    # whether or not the end read it: nothing to difference from
            key = ("start", b.error or "")
        elif e is None:
            key = ("end", "")
        elif not e.ok:
            key = ("end", e.error or "")
        else:
            used.append(name)
            continue
        missing.append(name)
        alike.setdefault(key, []).append(name)
    issues = []
    for (when, why), names in alike.items():
        if len(names) < GROUP_HOSTS_FROM:
            issues += [Issue("HOST_UNREACHABLE", n, None, f"{n} could not be read at job {when}: {why}" if why
                             else f"{n} was not in the {when} snapshot") for n in names]
        else:
            what = f"could not be read at job {when}: {why}" if why else f"were not in the {when} snapshot"
            issues.append(Issue("HOST_UNREACHABLE", None, None,
                                f"{len(names):,} hosts {what} ({summarise(names)}); left out of the totals"))
    return used, missing, issues


def rows_of(snap: Snapshot, hosts: list[str]) -> np.ndarray:
    """The snapshot's table rows of these hosts, in this order."""
    return np.array([snap.row(h) for h in hosts], dtype=np.intp)


def _aligned(t: MetricTable | None, rows: np.ndarray, instances: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """A table's values and presence for these host rows, in this instance order."""
    shape = (len(rows), len(instances))
    if t is None:
        return np.zeros(shape, dtype=np.uint64), np.zeros(shape, dtype=bool)
    if t.instances == instances:
        return t.values[rows], t.present[rows]
    values = np.full(shape, "", dtype=object) if t.is_string else np.zeros(shape, dtype=t.values.dtype)
    present = np.zeros(shape, dtype=bool)
    col = {name: i for i, name in enumerate(t.instances)}
    idx = np.array([col.get(name, -1) for name in instances], dtype=np.intp)
    have = idx >= 0
    values[:, have] = t.values[rows][:, idx[have]]
    present[:, have] = t.present[rows][:, idx[have]]
    return values, present


@dataclass
class Side:
    """One snapshot restricted to the job's hosts (rows in JobDelta.hosts order)."""
    snap: Snapshot
    rows: np.ndarray
    when: str        # "start" | "end"

    def table(self, metric: str) -> MetricTable | None:
        return self.snap.metrics.get(metric)

    def aligned(self, metric: str, instances: list[str]) -> tuple[np.ndarray, np.ndarray]:
        return _aligned(self.table(metric), self.rows, instances)

    def agent_note(self, r: int) -> str:
        """The agent's account of this fetch on host row r, if it skipped or failed files."""
        parts = []
        for metric, words in (("agent.fetch.budget_skips", "skipped {n:,} files when its fetch time budget ran out"),
                              ("agent.fetch.read_failures", "could not read {n:,} files"),
                              ("agent.fetch.parse_failures", "could not parse {n:,} files")):
            t = self.table(P + metric)
            if t is not None and not t.is_string and t.present[self.rows[r], 0] and t.values[self.rows[r], 0]:
                parts.append(words.format(n=int(t.values[self.rows[r], 0])))
        return ("; the agent " + " and ".join(parts)) if parts else ""


def _comparable(t: MetricTable | None) -> bool:
    return t is None or (not t.is_string and t.sem == "counter")


def nothing_counted(instances: list[str], n_hosts: int) -> DeltaTable:
    """The table of a counter left out on every host (not a counter): its instances, none counted."""
    shape = (n_hosts, len(instances))
    return DeltaTable(instances, np.array([device_of(i) for i in instances], dtype=object),
                      np.array([fs_of(device_of(i)) for i in instances], dtype=object),
                      np.zeros(shape, dtype=np.uint64), np.zeros(shape, dtype=bool))


@dataclass
class _Pair:
    """One summed counter at both ends, in one instance order (the union of both snapshots')."""
    instances: list[str]
    cols: np.ndarray      # each instance's device column in its SourceGroup
    b_vals: np.ndarray
    b_pres: np.ndarray
    e_vals: np.ndarray
    e_pres: np.ndarray


@dataclass
class SourceGroup:
    """The summed counters of one source kind (stats file) over one kind of device."""
    source: catalog.Source
    indom: str
    metrics: list[str] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)   # device -> column, in order of first sight

    @property
    def devices(self) -> list[str]:
        return list(self.index)

    def add(self, devices) -> np.ndarray:
        """The columns of these devices, new ones appended."""
        return np.array([self.index.setdefault(d, len(self.index)) for d in devices], dtype=np.intp)


def _device_table(side: Side, indom: str, devices: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which devices the host's device listing had (known), their identities, and whether the
    host's fetch had a device listing at all (without one, known falls back to 'was read')."""
    metric = catalog.DEVICE_METRIC.get(indom)
    t = side.table(metric) if metric else None
    ids, known = _aligned(t, side.rows, devices)
    if t is None:
        listed = np.zeros(len(side.rows), dtype=bool)
    else:
        listed = t.present[side.rows].any(axis=1)
    return known, ids, listed


def _read_mask(group: SourceGroup, pairs: dict[str, _Pair], n_hosts: int, at_end: bool) -> np.ndarray:
    """read[h, d]: some summed value of the group's source was there for device d on host h."""
    out = np.zeros((n_hosts, len(group.index)), dtype=bool)
    for metric in group.metrics:
        p = pairs[metric]
        cols, present = p.cols, (p.e_pres if at_end else p.b_pres)
        if len(np.unique(cols)) == len(cols):
            out[:, cols] |= present
        else:   # histogram buckets: several instances per device
            counts = np.zeros((len(group.index), n_hosts), dtype=np.int64)
            np.add.at(counts, cols, present.T.astype(np.int64))
            out |= counts.T > 0
    return out


def diff(begin: Snapshot, end: Snapshot) -> JobDelta:
    hosts, missing, issues = host_issues(begin.hosts, end)
    b = Side(begin, rows_of(begin, hosts), "start")
    e = Side(end, rows_of(end, hosts), "end")
    n = len(hosts)

    # The summed counters, grouped by the stats file their values come from.
    groups: dict[tuple[str, str], SourceGroup] = {}
    pairs: dict[str, _Pair] = {}
    untyped: dict[str, DeltaTable] = {}     # counters that are not counters (METRIC_TYPE)
    for m in catalog.with_role(*catalog.SUMMED):
        tb, te = b.table(m.name), e.table(m.name)
        source = catalog.source_of_cluster((end if te is not None else begin).cluster(m.name))
        if tb is None and te is None and not source.required:
            continue    # a file this Lustre need not have; one every layout has is never read (below)
        if not (_comparable(tb) and _comparable(te)):
            issues.append(Issue("METRIC_TYPE", None, None,
                                f"{m.name} is not a counter in both snapshots (an agent or file mix-up): "
                                "left out of the totals"))
            # its values exist and none is counted: downstream tells a total left out from a 0
            untyped[m.name] = nothing_counted(list(dict.fromkeys((te.instances if te else []) +
                                                                (tb.instances if tb else []))), n)
            continue
        instances = list(dict.fromkeys((te.instances if te else []) + (tb.instances if tb else [])))
        g = groups.setdefault((source.name, m.indom), SourceGroup(source, m.indom))
        g.metrics.append(m.name)
        pairs[m.name] = _Pair(instances, g.add(device_of(i) for i in instances),
                              *b.aligned(m.name, instances), *e.aligned(m.name, instances))
    for g in groups.values():
        # devices the listings had but no summed value came from: known and never read
        listing = catalog.DEVICE_METRIC.get(g.indom)
        for side in (e, b):
            t = side.table(listing) if listing else None
            if t is not None and t.is_string:
                g.add(d for d, on in zip(t.instances, t.present[side.rows].any(axis=0)) if on)

    # Filesystems remounted or unmounted on a host: everything of them there is left out.
    remounted = _remounts(b, e, hosts, issues)

    tables: dict[str, DeltaTable] = dict(untyped)
    left_out = LeftOut(hosts)
    row_of = {h: r for r, h in enumerate(hosts)}
    for g in sorted(groups.values(), key=lambda g: (g.source.name, g.indom)):
        devices = g.devices
        b_read, e_read = _read_mask(g, pairs, n, at_end=False), _read_mask(g, pairs, n, at_end=True)
        b_known, b_ids, b_listed = _device_table(b, g.indom, devices)
        e_known, e_ids, e_listed = _device_table(e, g.indom, devices)
        b_known = np.where(b_listed[:, None], b_known, b_read)
        e_known = np.where(e_listed[:, None], e_known, e_read)
        device_fs = np.array([fs_of(d) for d in devices], dtype=object)
        gone_fs = np.zeros((n, len(devices)), dtype=bool)
        for (host, fs) in remounted:
            gone_fs[row_of[host], device_fs == fs] = True
        reset = np.zeros_like(gone_fs)
        lost_begin = np.zeros_like(gone_fs)   # existed at start, not (all) read then
        lost_end = np.zeros_like(gone_fs)     # read at start, not (all) read at end
        for metric in g.metrics:
            p = pairs[metric]
            reset[:, p.cols] |= p.b_pres & p.e_pres & (p.e_vals < p.b_vals)
            lost_begin[:, p.cols] |= p.e_pres & ~p.b_pres & b_read[:, p.cols]
            lost_end[:, p.cols] |= p.b_pres & ~p.e_pres
        lost_begin |= e_read & ~b_read & b_known
        lost_end |= b_read & ~e_read
        never = (~b_read & ~e_read & b_known & e_known) if g.source.required else np.zeros_like(reset)
        replaced = b_known & e_known & b_listed[:, None] & e_listed[:, None] & (b_ids != e_ids)
        reset |= replaced | _restarted(b, e, g)
        # A cleared file drops its zero lines, and the agent gives some of them no value (a 2.14+
        # llite stats file with no [usec] line left looks like an older one): said once, cleared.
        lost_begin &= ~reset
        lost_end &= ~reset
        gone = lost_end & ~e_known
        for mask in (reset, lost_begin, lost_end, never):
            mask &= ~gone_fs
        drop = gone_fs | reset | lost_begin | lost_end | never

        device_names = np.array(devices, dtype=object)
        for metric in g.metrics:
            p = pairs[metric]
            counted = p.e_pres & (p.b_pres | ~b_known[:, p.cols]) & ~drop[:, p.cols]
            start = np.where(p.b_pres & counted, p.b_vals, np.uint64(0))
            delta = np.where(counted, p.e_vals - start, np.uint64(0)).astype(np.uint64)
            tables[metric] = DeltaTable(p.instances, device_names[p.cols], device_fs[p.cols], delta, counted)

        left_out.resets(devices, g.source, device_fs, reset, replaced)
        for mask, how in ((lost_begin, "start"), (lost_end & ~gone, "end"), (gone & ~gone_fs, "gone"),
                          (never, "both")):
            left_out.missing(devices, g, device_fs, mask, how, b, e)
    for (host, fs) in remounted:
        left_out.incomplete.setdefault(host, set()).add(fs)
    issues += left_out.issues

    versions = lustre_facts(end, hosts, issues)
    return JobDelta(begin=begin.taken_at, end=end.taken_at, hosts=hosts, hosts_missing=missing,
                    versions=versions, tables=tables, end_snapshot=end, issues=issues,
                    incomplete=left_out.incomplete)


def lustre_facts(end: Snapshot, hosts: list[str], issues: list[Issue]) -> dict[str, str]:
    """Each host's Lustre version at the end; a host with no filesystem mounted is said (NO_LUSTRE)."""
    versions = {}
    for host in hosts:
        v = end.value(P + "version", host, SINGULAR)
        if isinstance(v, str):
            versions[host] = v
        if not _mount_ids(end, host):
            issues.append(Issue("NO_LUSTRE", host, None, f"no Lustre filesystem is mounted on {host}"))
    return versions


def _mount_ids(snap: Snapshot, host: str) -> dict[str, str]:
    return {k: v for k, v in snap.instance_values(P + "llite.mount_id", host).items() if isinstance(v, str)}


def _remounts(b: Side, e: Side, hosts: list[str], issues: list[Issue]) -> set[tuple[str, str]]:
    """(host, fs) where the filesystem's mount changed or it was unmounted."""
    out: set[tuple[str, str]] = set()
    for host in hosts:
        before, after = _mount_ids(b.snap, host), _mount_ids(e.snap, host)
        for fs in sorted(before):
            if fs in after and after[fs] == before[fs]:
                continue
            how = ("was unmounted" if fs not in after
                   else f"was remounted (mount {before[fs]} -> {after[fs]})")
            issues.append(Issue("REMOUNT", host, fs,
                                f"{fs} {how} on {host} during the job; its counters on {host} are left out"))
            out.add((host, fs))
    return out


def _restarted(b: Side, e: Side, g: SourceGroup) -> np.ndarray:
    """[h, d]: the source's start time (2.15+ stats files carry it) moved between the snapshots:
    a clear, even when no counter went backwards (busy counters can climb past their old
    values before the end snapshot). Per-OSC start times of rpc_stats stand for the
    per-filesystem histogram they add up to."""
    out = np.zeros((len(b.rows), len(g.index)), dtype=bool)
    start = catalog.start_metric_of(g.source)
    te = e.table(start.name) if start else None
    if te is None or te.is_string:
        return out
    b_vals, b_pres = b.aligned(start.name, te.instances)
    e_vals, e_pres = te.values[e.rows], te.present[e.rows]
    known = b_pres & e_pres & (b_vals > 0) & (e_vals > 0)   # 0: not a time (see pminfoparse.start_us)
    apart = np.maximum(b_vals, e_vals) - np.minimum(b_vals, e_vals) > catalog.START_TOLERANCE_US
    idx = g.index
    for r, c in zip(*np.nonzero(known & apart)):
        device = te.instances[c]
        target = device if device in idx else fs_of(device)
        if target in idx:
            out[r, idx[target]] = True
    return out


_WHEN = {"start": "could not be read at job start", "end": "could not be read at job end",
         "gone": "were gone at job end", "both": "could not be read at job start nor at its end"}
_KIND = {catalog.OSC: "OSC", catalog.MDC: "MDC"}


class LeftOut:
    """What the diff left out, as data_quality issues and the filesystems of each host it
    touched: per host for resets (rare, and each host's own), per filesystem and stats file
    for values that were not read (which can hit thousands of hosts at once: one line each)."""

    def __init__(self, hosts: list[str]):
        self.hosts = hosts
        self.issues: list[Issue] = []
        self.incomplete: dict[str, set[str]] = {}

    def _touch(self, rows: np.ndarray, fs: str) -> None:
        for r in rows:
            self.incomplete.setdefault(self.hosts[r], set()).add(fs)

    def resets(self, devices: list[str], source: catalog.Source, device_fs: np.ndarray, reset: np.ndarray,
               replaced: np.ndarray) -> None:
        for fs in sorted(set(device_fs[reset.any(axis=0)])):
            cols = np.flatnonzero(device_fs == fs)
            rows = np.flatnonzero(reset[:, cols].any(axis=1))
            self._touch(rows, fs)
            for r in rows:
                hit = cols[reset[r, cols]]
                how = "were replaced (a new device) or cleared" if replaced[r, hit].any() else "were cleared"
                host = self.hosts[r]
                self.issues.append(Issue("COUNTER_RESET", host, fs,
                                         f"{source.name} of {summarise([devices[c] for c in hit])} on {host} "
                                         f"{how} during the job; left out of the totals, which come from the rest"))

    def missing(self, devices: list[str], g: SourceGroup, device_fs: np.ndarray, mask: np.ndarray, how: str,
                b: Side, e: Side) -> None:
        for fs in sorted(set(device_fs[mask.any(axis=0)])):
            cols = np.flatnonzero(device_fs == fs)
            hit = mask[:, cols]
            rows = np.flatnonzero(hit.any(axis=1))
            self._touch(rows, fs)
            named = [devices[c] for c in cols[hit.any(axis=0)]]
            on_hosts = [self.hosts[r] for r in rows]
            if g.indom in (catalog.FS, catalog.FS_BUCKET):
                what = f"{g.source.name} of {fs}"
            else:
                kind = _KIND.get(g.indom, "device") + ("s" if len(named) != 1 else "")
                what = f"{g.source.name} of {len(named):,} {kind} of {fs} ({summarise(named, 2)})"
            where = (f"on {on_hosts[0]}" if len(on_hosts) == 1
                     else f"on {len(on_hosts):,} hosts ({summarise(on_hosts)})")
            sides = (b,) if how == "start" else (e,) if how in ("end", "gone") else (b, e)
            notes = [f"{note} at job {side.when} on {on_hosts[0]}"
                     for side in sides if (note := side.agent_note(rows[0]))]
            self.issues.append(Issue("VALUES_MISSING", on_hosts[0] if len(on_hosts) == 1 else None, fs,
                                     f"{what} {_WHEN[how]} {where}: left out of the totals, which come "
                                     f"from the rest" + "".join(notes)))
