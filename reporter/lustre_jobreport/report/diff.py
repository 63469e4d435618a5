"""Reset-aware difference of two snapshots (DESIGN §3, "Diff rules").

Counters are compared per (host, metric, instance) as hosts x instances matrices. What a clear,
a restart or an unreadable file takes away together is one *source*: one stats file of one
device on one host (e.g. the osc stats of scratch-OST0003 on node7). The agent says which file a
value came from (its PMID cluster; catalog.py names the file), so sources come from there, not
from metric names. For each source of each host the diff decides one catalog.Reason:

- read at start and at end: the delta counts, unless a counter went backwards or the file's
  start time moved (CLEARED), its device was replaced (REPLACED), or its filesystem was
  remounted (REMOUNTED);
- the device did not exist at start (the device listing says so): it counts from zero;
- it existed but could not be read at start, or at end (unreadable, over the agent's size cap,
  skipped under its time budget, gone): left out, and said (VALUES_MISSING), with the agent's
  own account of that fetch (files skipped under its budget, read or parse failures).

A counted delta is end - begin with end >= begin, below 2^63, by construction: whatever the
rules let through that is not (a rule's bug) is left out and said, never wrapped. The reasons
are kept per host, stats file and device (JobDelta.left_out), as the agent's job view gives
them; every one but COUNTED reaches data_quality.

Only counters the catalog says the report sums are differenced; one that is not a counter in
both snapshots is left out and said (METRIC_TYPE).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone

import numpy as np

from .. import catalog
from ..catalog import P, Reason
from ..acquire.hostsnap import summarise
from ..acquire.column import SINGULAR
from ..acquire.snapfile import MetricTable, Snapshot

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


# A job delta of this much or more is no count: no Lustre counter moves 2^63 (8 EiB, 9.2e18
# calls) in one job, and the kernel keeps its stats counters as signed 64-bit numbers. Such a
# delta is a corrupt value or a wrap: left out and said (VALUE_TOO_LARGE), never summed.
DELTA_LIMIT = np.uint64(1 << 63)


@dataclass
class DeltaTable:
    """A counter's job delta: delta[h, i] for host row h (JobDelta.hosts) and instance i.

    Values left out (reset, remounted, not read at one end) are 0 with counted[h, i] False;
    a counted one is below DELTA_LIMIT.
    """
    instances: list[str]
    devices: np.ndarray   # device of each instance (instance without ':<bucket>')
    fs: np.ndarray        # filesystem of each instance
    delta: np.ndarray     # uint64
    counted: np.ndarray   # bool
    untyped: bool = False  # a counter that is not one: nothing of it counted, by construction


@dataclass
class LeftOutTable:
    """Why each device's values of one stats file were left out, per host: reasons[h, d] for
    host row h (JobDelta.hosts) and device d, Reason.COUNTED where they count (the job view's
    left_out.<source>, whichever way the job was read). A histogram's device is its filesystem."""
    source: str           # catalog.Source name: "osc stats"
    indom: str
    devices: list[str]
    reasons: np.ndarray   # uint8, catalog.Reason


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
    left_out: list[LeftOutTable] = field(default_factory=list)      # per stats file, why each device was

    @property
    def elapsed_s(self) -> float:
        return max(0.0, self.end - self.begin)

    def reasons(self) -> dict[tuple[str, str, str], Reason]:
        """(host, stats file, device) -> why it was left out, for every one that was."""
        out = {}
        for t in self.left_out:
            for r, c in zip(*np.nonzero(t.reasons)):
                out[(self.hosts[r], t.source, t.devices[c])] = Reason(int(t.reasons[r, c]))
        return out


def iso_utc(epoch_s: float) -> str:
    """An instant (a JobDelta's begin or end, a timeline's bin) as the report's JSON writes it:
    ISO 8601 in UTC, whole seconds, "Z"."""
    return datetime.fromtimestamp(epoch_s, timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


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


@dataclass(frozen=True)
class DeviceColumns:
    """Which device column each instance of a counter belongs to, grouped once, so that a mask
    per instance becomes one per device (`any`). Several instances can share a device: every
    bucket of a histogram belongs to its filesystem. (Scattering into repeated columns, as in
    `out[:, cols] |= mask`, keeps only the last repeat's answer: an empty 64M bucket's "no"
    would hide a fall of the 4K bucket.)"""
    cols: np.ndarray      # each instance's device column (gathers: per_device[:, cols])
    order: np.ndarray     # instances sorted by device column
    starts: np.ndarray    # where each device's run begins in that order
    targets: np.ndarray   # the device column of each run (distinct)
    shared: bool          # some device has several instances
    in_place: bool        # instance i is device column i (most counters: an OSC's, a filesystem's)

    @classmethod
    def of(cls, cols: np.ndarray) -> "DeviceColumns":
        cols = np.asarray(cols, dtype=np.intp)
        order = np.argsort(cols, kind="stable")
        ordered = cols[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if len(cols) else np.zeros(0, np.intp)
        shared = len(starts) < len(cols)
        return cls(cols, order, starts, ordered[starts], shared,
                   not shared and bool((cols == np.arange(len(cols))).all()))

    def any(self, mask: np.ndarray, n_devices: int) -> np.ndarray:
        """out[h, d]: mask[h, i] for some instance i of device d. Where no device has two
        instances, a copy into place (the one answer there is); else a reduction per device."""
        out = np.zeros((mask.shape[0], n_devices), dtype=bool)
        if self.in_place:
            out[:, :len(self.cols)] = mask
        elif not self.shared:
            out[:, self.cols] = mask
        elif len(self.cols):
            out[:, self.targets] = np.logical_or.reduceat(mask[:, self.order], self.starts, axis=1)
        return out


def nothing_counted(instances: list[str], n_hosts: int) -> DeltaTable:
    """The table of a counter left out on every host (not a counter): its instances, none counted."""
    shape = (n_hosts, len(instances))
    return DeltaTable(instances, np.array([device_of(i) for i in instances], dtype=object),
                      np.array([fs_of(device_of(i)) for i in instances], dtype=object),
                      np.zeros(shape, dtype=np.uint64), np.zeros(shape, dtype=bool), untyped=True)


@dataclass
class _Pair:
    """One summed counter at both ends, in one instance order (the union of both snapshots')."""
    instances: list[str]
    devices: DeviceColumns   # each instance's device column in its SourceGroup
    b_vals: np.ndarray
    b_pres: np.ndarray
    e_vals: np.ndarray
    e_pres: np.ndarray

    @property
    def cols(self) -> np.ndarray:
        return self.devices.cols


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
        out |= p.devices.any(p.e_pres if at_end else p.b_pres, len(group.index))
    return out


def _first_reason(conditions: list[tuple[np.ndarray, Reason]], shape: tuple[int, int]) -> np.ndarray:
    """reasons[h, d]: the first (mask, reason) whose mask holds there, COUNTED where none does."""
    out = np.full(shape, Reason.COUNTED, dtype=np.uint8)
    for mask, reason in reversed(conditions):
        out[mask] = reason
    return out


def counted_delta(begin: np.ndarray, end: np.ndarray,
                  counted: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """end - begin where counted, and which counted values are no count: those whose end is
    below their begin (the subtraction would wrap) and those that moved DELTA_LIMIT or more.
    The delta is 0 wherever it is not counted or is no count."""
    went_back = counted & (end < begin)
    delta = np.subtract(end, begin, out=np.zeros(end.shape, dtype=np.uint64), where=counted & ~went_back)
    too_large = delta >= DELTA_LIMIT
    delta[too_large] = 0
    return delta, went_back, too_large


def _judge(g: SourceGroup, pairs: dict[str, _Pair], b: Side, e: Side,
           remounted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rules for one stats file (DESIGN §3.3): reasons[h, d] (catalog.Reason, by its
    PRECEDENCE) and b_known[h, d], whether the device existed at the job's start. remounted:
    [h, d], the device's filesystem was unmounted or remounted on that host."""
    devices, n = g.devices, len(b.rows)
    shape = (n, len(devices))
    b_read, e_read = _read_mask(g, pairs, n, at_end=False), _read_mask(g, pairs, n, at_end=True)
    b_known, b_ids, b_listed = _device_table(b, g.indom, devices)
    e_known, e_ids, e_listed = _device_table(e, g.indom, devices)
    b_known = np.where(b_listed[:, None], b_known, b_read)
    e_known = np.where(e_listed[:, None], e_known, e_read)
    went_back = np.zeros(shape, dtype=bool)
    lost_begin = np.zeros(shape, dtype=bool)   # existed at start, not (all) read then
    lost_end = np.zeros(shape, dtype=bool)     # read at start, not (all) read at end
    for metric in g.metrics:
        p = pairs[metric]
        went_back |= p.devices.any(p.b_pres & p.e_pres & (p.e_vals < p.b_vals), len(devices))
        lost_begin |= p.devices.any(p.e_pres & ~p.b_pres & b_read[:, p.cols], len(devices))
        lost_end |= p.devices.any(p.b_pres & ~p.e_pres, len(devices))
    lost_begin |= e_read & ~b_read & b_known
    lost_end |= b_read & ~e_read
    required = np.full(shape, g.source.required)
    # a file every layout has, of a device that came during the job, not read at its end: the
    # device's I/O is not known (another file's values there at both ends are a counter this
    # Lustre does not have)
    lost_end |= required & ~b_known & e_known & ~e_read
    never = required & ~b_read & ~e_read & b_known & e_known
    # gone: there at the start, not at the end; said if read then, or if every layout has the file
    gone = ~e_known & (lost_end | (b_known & required))
    replaced = b_known & e_known & b_listed[:, None] & e_listed[:, None] & (b_ids != e_ids)
    oscs_gone, oscs_replaced = _summed_devices_changed(b, e, g)
    # A remount leaves out what the host had of the filesystem (not devices only other hosts
    # have). A cleared file drops its zero lines, and the agent may give some of them no value:
    # that is the clear (it comes first), not also a value missing at the end.
    # a file not every layout has, read at neither end, is not judged: it has nothing to count
    # (a 1.8 client has no import files), and the agent, judging each host alone, cannot know
    # whether another host had it
    had = required | b_read | e_read
    reasons = _first_reason([(remounted & (b_known | e_known) & had, Reason.REMOUNTED),
                            (gone | oscs_gone, Reason.GONE), ((replaced | oscs_replaced) & had, Reason.REPLACED),
                            (went_back | _restarted(b, e, g), Reason.CLEARED),
                            (lost_begin, Reason.NOT_READ_AT_BEGIN), (lost_end, Reason.NOT_READ_AT_END),
                            (never, Reason.NOT_READ)], shape)
    return reasons, b_known


def _count(g: SourceGroup, pairs: dict[str, _Pair], reasons: np.ndarray,
           b_known: np.ndarray) -> tuple[dict[str, DeltaTable], np.ndarray, np.ndarray]:
    """The group's counters' deltas, and the devices with a counted value that is no count
    (counted_delta): [h, d] one went back, [h, d] one moved DELTA_LIMIT or more."""
    devices = g.devices
    names = np.array(devices, dtype=object)
    device_fs = np.array([fs_of(d) for d in devices], dtype=object)
    tables, back, large = {}, np.zeros(reasons.shape, dtype=bool), np.zeros(reasons.shape, dtype=bool)
    for metric in g.metrics:
        p = pairs[metric]
        counted = p.e_pres & (p.b_pres | ~b_known[:, p.cols]) & (reasons[:, p.cols] == Reason.COUNTED)
        start = np.where(p.b_pres & counted, p.b_vals, np.uint64(0))
        delta, went_back, too_large = counted_delta(start, p.e_vals, counted)
        back |= p.devices.any(went_back, len(devices))
        large |= p.devices.any(too_large, len(devices))
        tables[metric] = DeltaTable(p.instances, names[p.cols], device_fs[p.cols], delta,
                                    counted & ~went_back & ~too_large)
    return tables, back, large


def _deltas(g: SourceGroup, pairs: dict[str, _Pair], reasons: np.ndarray, b_known: np.ndarray) -> dict[str, DeltaTable]:
    """The group's counters' deltas: a value counts where its device's source is COUNTED and it
    is there at the end, and at the start too unless the device is new (it counts from zero).
    A device with a counted value that is no count is left out whole, its reason (in
    `reasons`) CLEARED if a counter went back, else TOO_LARGE: the rules should not let either
    through, and if they ever do, it is said, never wrapped."""
    tables, back, large = _count(g, pairs, reasons, b_known)
    if back.any() or large.any():
        counting = reasons == Reason.COUNTED
        reasons[counting & back] = Reason.CLEARED
        reasons[counting & large & ~back] = Reason.TOO_LARGE
        tables, _, _ = _count(g, pairs, reasons, b_known)
    return tables


def diff(begin: Snapshot, end: Snapshot) -> JobDelta:
    """The job's delta of every summed counter between two snapshots of its hosts, and what was
    left out and why (the module docstring's rules)."""
    hosts, missing, issues = host_issues(begin.hosts, end)
    b = Side(begin, rows_of(begin, hosts), "start")
    e = Side(end, rows_of(end, hosts), "end")
    groups, pairs, untyped = _summed_counters(b, e, len(hosts), issues)
    # Filesystems remounted or unmounted on a host: everything of them there is left out.
    remounted = _remounts(b, e, hosts, issues)
    tables, kept, left_out = _judged(groups, pairs, b, e, hosts, remounted)
    issues += left_out.issues
    versions = lustre_facts(end, hosts, issues)
    return JobDelta(begin=begin.taken_at, end=end.taken_at, hosts=hosts, hosts_missing=missing,
                    versions=versions, tables={**untyped, **tables}, end_snapshot=end, issues=issues,
                    incomplete=left_out.incomplete, left_out=kept)


def _summed_counters(b: Side, e: Side, n_hosts: int, issues: list[Issue]) -> tuple[
        dict[tuple[str, str], SourceGroup], dict[str, _Pair], dict[str, DeltaTable]]:
    """The summed counters at both ends, grouped by the stats file their values come from (per
    source and device kind), and the counters that are not counters in both snapshots: those
    are said (METRIC_TYPE) and get a table with nothing counted."""
    groups: dict[tuple[str, str], SourceGroup] = {}
    pairs: dict[str, _Pair] = {}
    untyped: dict[str, DeltaTable] = {}
    for m in catalog.with_role(*catalog.SUMMED):
        tb, te = b.table(m.name), e.table(m.name)
        source = catalog.source_of_cluster((e.snap if te is not None else b.snap).cluster(m.name))
        if tb is None and te is None and not source.required:
            continue    # a file this Lustre need not have; one every layout has is never read (below)
        instances = list(dict.fromkeys((te.instances if te else []) + (tb.instances if tb else [])))
        if not (_comparable(tb) and _comparable(te)):
            issues.append(Issue("METRIC_TYPE", None, None,
                                f"{m.name} is not a counter in both snapshots (an agent or file mix-up): "
                                "left out of the totals"))
            # its values exist and none is counted: downstream tells a total left out from a 0
            untyped[m.name] = nothing_counted(instances, n_hosts)
            continue
        g = groups.setdefault((source.name, m.indom), SourceGroup(source, m.indom))
        g.metrics.append(m.name)
        pairs[m.name] = _Pair(instances, DeviceColumns.of(g.add(device_of(i) for i in instances)),
                              *b.aligned(m.name, instances), *e.aligned(m.name, instances))
    for g in groups.values():
        _add_listed_devices(g, b, e)
    return groups, pairs, untyped


def _add_listed_devices(g: SourceGroup, b: Side, e: Side) -> None:
    """Add to the group the devices the hosts' device listings had but no summed value came
    from: known, and never read."""
    listing = catalog.DEVICE_METRIC.get(g.indom)
    for side in (e, b):
        t = side.table(listing) if listing else None
        if t is not None and t.is_string:
            g.add(d for d, on in zip(t.instances, t.present[side.rows].any(axis=0)) if on)


def _judged(groups: dict[tuple[str, str], SourceGroup], pairs: dict[str, _Pair], b: Side, e: Side,
            hosts: list[str], remounted: set[tuple[str, str]]) -> tuple[
        dict[str, DeltaTable], list[LeftOutTable], LeftOut]:
    """Each stats file judged (_judge) and its counters' deltas taken, the files in a stable
    order: the deltas, why each device's values were left out, and that said (LeftOut)."""
    tables: dict[str, DeltaTable] = {}
    left_out = LeftOut(hosts)
    kept: list[LeftOutTable] = []
    row_of = {h: r for r, h in enumerate(hosts)}
    for g in sorted(groups.values(), key=lambda g: (g.source.name, g.indom)):
        reasons, b_known = _judge(g, pairs, b, e, _remounted_devices(g, row_of, remounted))
        tables.update(_deltas(g, pairs, reasons, b_known))
        kept.append(LeftOutTable(g.source.name, g.indom, g.devices, reasons))
        left_out.add(kept[-1], b, e)
    for (host, fs) in remounted:
        left_out.incomplete.setdefault(host, set()).add(fs)
    return tables, kept, left_out


def _remounted_devices(g: SourceGroup, row_of: dict[str, int], remounted: set[tuple[str, str]]) -> np.ndarray:
    """[h, d]: device d's filesystem was remounted or unmounted on host h."""
    device_fs = np.array([fs_of(d) for d in g.devices], dtype=object)
    out = np.zeros((len(row_of), len(device_fs)), dtype=bool)
    for (host, fs) in remounted:
        out[row_of[host], device_fs == fs] = True
    return out


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


def _summed_devices_changed(b: Side, e: Side, g: SourceGroup) -> tuple[np.ndarray, np.ndarray]:
    """For a filesystem's RPC histogram, the sum of its OSCs' rpc_stats (FS_BUCKET): [h, d] an
    OSC of the filesystem listed at the start is not at the end (its counts left the sum, which
    falls short of the job's RPCs by them, or looks cleared), and [h, d] one was replaced (a
    new device, its counts from 0, took the old one's place in the sum). Other sources: none."""
    shape = (len(b.rows), len(g.index))
    gone, replaced = np.zeros(shape, dtype=bool), np.zeros(shape, dtype=bool)
    listing = catalog.DEVICE_METRIC[catalog.OSC]
    t = b.table(listing)
    if g.indom != catalog.FS_BUCKET or t is None or not t.is_string:
        return gone, replaced
    cols = np.array([g.index.get(fs_of(osc), -1) for osc in t.instances], dtype=np.intp)
    summed = cols >= 0
    b_ids, b_there = b.aligned(listing, t.instances)
    e_ids, e_there = e.aligned(listing, t.instances)
    per_fs = DeviceColumns.of(cols[summed])
    gone = per_fs.any((b_there & ~e_there)[:, summed], len(g.index))
    replaced = per_fs.any((b_there & e_there & (b_ids != e_ids))[:, summed], len(g.index))
    return gone, replaced


_WHEN = {"start": "could not be read at job start", "end": "could not be read at job end",
         "gone": "were gone at job end", "both": "could not be read at job start nor at its end"}
_KIND = {catalog.OSC: "OSC", catalog.MDC: "MDC"}
# the reasons said as VALUES_MISSING, and how LeftOut.missing words each
_MISSING = ((Reason.NOT_READ_AT_BEGIN, "start"), (Reason.NOT_READ_AT_END, "end"), (Reason.GONE, "gone"),
            (Reason.NOT_READ, "both"))


class LeftOut:
    """What the diff left out, as data_quality issues and the filesystems of each host it
    touched: per host for resets (rare, and each host's own), per filesystem and stats file
    for values that were not read (which can hit thousands of hosts at once: one line each)."""

    def __init__(self, hosts: list[str]):
        self.hosts = hosts
        self.issues: list[Issue] = []
        self.incomplete: dict[str, set[str]] = {}

    def add(self, t: LeftOutTable, b, e) -> None:
        """Say every device of one stats file left out (but REMOUNTED ones: a REMOUNT entry per
        host and filesystem says those). b, e: what agent_note(row) gives the agent's account
        of the fetch at each end."""
        device_fs = np.array([fs_of(d) for d in t.devices], dtype=object)
        reasons = t.reasons
        self.resets(t, device_fs, np.isin(reasons, (Reason.CLEARED, Reason.REPLACED)), reasons == Reason.REPLACED)
        for reason, how in _MISSING:
            mask = reasons == reason
            if mask.any():
                self.missing(t, device_fs, mask, how, b, e)
        self.too_large(t, device_fs, reasons == Reason.TOO_LARGE)

    def _touch(self, rows: np.ndarray, fs: str) -> None:
        for r in rows:
            self.incomplete.setdefault(self.hosts[r], set()).add(fs)

    def _per_host(self, t: LeftOutTable, device_fs: np.ndarray, mask: np.ndarray):
        """(host row, fs, the devices of it masked there), host by host, filesystem by filesystem."""
        for fs in sorted(set(device_fs[mask.any(axis=0)])):
            cols = np.flatnonzero(device_fs == fs)
            rows = np.flatnonzero(mask[:, cols].any(axis=1))
            self._touch(rows, fs)
            for r in rows:
                yield r, fs, cols[mask[r, cols]]

    def resets(self, t: LeftOutTable, device_fs: np.ndarray, reset: np.ndarray, replaced: np.ndarray) -> None:
        for r, fs, hit in self._per_host(t, device_fs, reset):
            how = "were replaced (a new device) or cleared" if replaced[r, hit].any() else "were cleared"
            host = self.hosts[r]
            self.issues.append(Issue("COUNTER_RESET", host, fs,
                                     f"{t.source} of {summarise([t.devices[c] for c in hit])} on {host} "
                                     f"{how} during the job; left out of the totals, which come from the rest"))

    def too_large(self, t: LeftOutTable, device_fs: np.ndarray, mask: np.ndarray) -> None:
        for r, fs, hit in self._per_host(t, device_fs, mask):
            host = self.hosts[r]
            self.issues.append(Issue("VALUE_TOO_LARGE", host, fs,
                                     f"{t.source} of {summarise([t.devices[c] for c in hit])} on {host} moved "
                                     "by 2^63 or more during the job, which no Lustre counter does (a corrupt "
                                     "value or a wrap); left out of the totals, which come from the rest"))

    def missing(self, t: LeftOutTable, device_fs: np.ndarray, mask: np.ndarray, how: str, b, e) -> None:
        for fs in sorted(set(device_fs[mask.any(axis=0)])):
            cols = np.flatnonzero(device_fs == fs)
            hit = mask[:, cols]
            rows = np.flatnonzero(hit.any(axis=1))
            self._touch(rows, fs)
            named = [t.devices[c] for c in cols[hit.any(axis=0)]]
            on_hosts = [self.hosts[r] for r in rows]
            if t.indom in (catalog.FS, catalog.FS_BUCKET):
                what = f"{t.source} of {fs}"
            else:
                kind = _KIND.get(t.indom, "device") + ("s" if len(named) != 1 else "")
                what = f"{t.source} of {len(named):,} {kind} of {fs} ({summarise(named, 2)})"
            where = (f"on {on_hosts[0]}" if len(on_hosts) == 1
                     else f"on {len(on_hosts):,} hosts ({summarise(on_hosts)})")
            when = _WHEN[how]
            if how == "gone" and t.indom == catalog.FS_BUCKET:   # a sum of its OSCs': one was gone
                when = "summed an OSC that was gone at job end"
            sides = (b,) if how == "start" else (e,) if how in ("end", "gone") else (b, e)
            notes = [f"{note} at job {side.when} on {on_hosts[0]}"
                     for side in sides if (note := side.agent_note(rows[0]))]
            self.issues.append(Issue("VALUES_MISSING", on_hosts[0] if len(on_hosts) == 1 else None, fs,
                                     f"{what} {when} {where}: left out of the totals, which come "
                                     f"from the rest" + "".join(notes)))
