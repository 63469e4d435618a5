"""A job's deltas as the agents' job view gives them: the JobDelta of diff.py, made
from one end-of-job fetch instead of two snapshots.

Each node's prolog stores the job id into its own agent (lustreclient.control.job_begin); the
agent keeps that job's begin values and, at the end, serves the deltas since then already
differenced by diff's rules: per counter, the values it counted (zero deltas of OSCs and MDCs
not sent), and per stats file the devices it left out and why (catalog: CLEARED ... NOT_READ).
This module turns those into the DeltaTables and data_quality entries that diff.diff makes from
a begin and an end snapshot, with the same words, so that aggregate, flags and render do not
know which way a job was read. Nothing is spooled: a 12,000-node job's start costs each node
one local store, and its end a few hundred values per host instead of two full snapshots.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import catalog
from ..catalog import Reason
from .diff import (DELTA_LIMIT, DeltaTable, DeviceColumns, Issue, JobDelta, LeftOut, LeftOutTable, Side, device_of,
                   fs_of, host_issues, lustre_facts, nothing_counted, rows_of)
from ..acquire.snapfile import Snapshot

# OSC and MDC deltas are sent only where not zero (an instance absent there is 0, or left out):
# the agent sends filesystem and bucket values whenever it counted them, zeros too, as diff does
_SPARSE = (catalog.OSC, catalog.MDC)


class _NoNote:
    """The agent's account of the job's start is not in the end fetch: no note for it."""

    when = "start"

    def agent_note(self, r: int) -> str:
        return ""


def begin_time(end: Snapshot, hosts: list[str], job_id: str) -> float:
    """When the job's begin values were taken: the earliest of its hosts' (the prologs of one job
    run within seconds of each other); the end snapshot's time if no host says."""
    t = end.metrics.get(catalog.JOB_BEGIN_TIME)
    col = t.column(job_id) if t is not None else None
    if col is None or not hosts:
        return end.taken_at
    rows = rows_of(end, hosts)
    have = t.present[rows, col]
    if not have.any():
        return end.taken_at
    return float(t.values[rows, col][have].min()) / catalog.START_UNIT_US


def restarted(end: Snapshot, hosts: list[str], job_id: str) -> list[Issue]:
    """The hosts whose agent was restarted during the job and took the job up again from the
    slot's file (job.restarts > 0): their deltas were judged against the values found at the
    restart, which cannot show every reset (docs/design.md §2.4, "A restart keeps the jobs"),
    and their timeline's I/O of the time the agent was down lands in one point."""
    t = end.metrics.get(catalog.JOB_RESTARTS)
    col = t.column(job_id) if t is not None and not t.is_string else None
    if col is None or not hosts:
        return []
    rows = rows_of(end, hosts)
    issues = []
    for host, present, n in zip(hosts, t.present[rows, col], t.values[rows, col]):
        if present and n > 0:
            times = "once" if n == 1 else f"{int(n)} times"
            issues.append(Issue("AGENT_RESTARTED", host, None,
                                f"agent restarted during the job: {host}'s agent was restarted {times} and took the "
                                f"job up again from its saved state; its counts were checked against the values "
                                f"found at each restart, but a counter reset while it was down and grown past "
                                f"them again cannot be seen, and its timeline has the I/O of that time in one point"))
    return issues


def _left_out(end: Snapshot, rows: np.ndarray, js: catalog.JobSource) -> LeftOutTable:
    """The devices of a source the agent left out on some host, and why (COUNTED elsewhere)."""
    t = end.metrics.get(catalog.job_left_out_name(js))
    if t is None or t.is_string:
        return LeftOutTable(js.source.name, js.indom, [], np.zeros((len(rows), 0), dtype=np.uint8))
    codes = np.where(t.present[rows], t.values[rows], np.uint64(0))
    # a code this reader does not know as the agent's (a newer agent's) leaves the device out all
    # the same, said as not read
    codes[~np.isin(codes, (Reason.COUNTED, *catalog.PRECEDENCE))] = Reason.NOT_READ
    return LeftOutTable(js.source.name, js.indom, list(t.instances), codes.astype(np.uint8))


def _columns(t: LeftOutTable, devices: list[str]) -> dict[str, int]:
    """t's column of each of these devices; columns for those it lacks (COUNTED) are added."""
    col = {d: i for i, d in enumerate(t.devices)}
    new = [d for d in dict.fromkeys(devices) if d not in col]
    if new:
        col.update({d: len(t.devices) + i for i, d in enumerate(new)})
        t.devices = t.devices + new
        t.reasons = np.hstack([t.reasons, np.zeros((t.reasons.shape[0], len(new)), dtype=np.uint8)])
    return col


@dataclass
class _Sent:
    """One counter's deltas as the agent sent them, beside the reasons of its stats file."""
    metric: catalog.Metric
    left: LeftOutTable       # its stats file's reasons, a column for each of its devices
    instances: list[str]
    devices: list[str]
    cols: DeviceColumns      # each instance's column in `left`
    values: np.ndarray
    present: np.ndarray
    there: np.ndarray | None = None   # OSCs: [h, i] the host sent a delta or lists the OSC at the end


def _listing(end: Snapshot, rows: np.ndarray) -> tuple[list[str], np.ndarray]:
    """The OSCs the job's hosts list at the end (the job end metrics have the OSC listing), and
    listed[h, d]."""
    t = end.metrics.get(catalog.DEVICE_METRIC[catalog.OSC])
    if t is None or not t.is_string:
        return [], np.zeros((len(rows), 0), dtype=bool)
    on = t.present[rows]
    keep = np.flatnonzero(on.any(axis=0))
    return [t.instances[c] for c in keep], on[:, keep]


def _sent(end: Snapshot, rows: np.ndarray, left: dict[catalog.JobSource, LeftOutTable],
          issues: list[Issue], untyped: dict[str, DeltaTable]) -> list[_Sent]:
    """The summed counters' deltas the end fetch has. A value not a counter is said, and its
    counter goes to `untyped` as a table with nothing counted (never a total of 0). An OSC
    counter has every OSC listed at the end, those the agent sent no delta for with none: its
    zeros are zeros, as in diff's tables, not a counter no host had."""
    out = []
    oscs, listed = _listing(end, rows)
    listed_at = {d: c for c, d in enumerate(oscs)}
    for m in catalog.with_role(*catalog.SUMMED):
        t = end.metrics.get(catalog.job_view_name(m.name))
        if t is None and not (m.indom == catalog.OSC and oscs):
            continue
        if t is not None and (t.is_string or t.sem != "counter"):
            issues.append(Issue("METRIC_TYPE", None, None,
                                f"{catalog.job_view_name(m.name)} is not a counter (an agent mix-up): "
                                "left out of the totals"))
            untyped[m.name] = nothing_counted(list(t.instances), len(rows))
            continue
        instances = list(t.instances) if t is not None else []
        values = t.values[rows] if t is not None else np.zeros((len(rows), 0), dtype=np.uint64)
        present = t.present[rows] if t is not None else np.zeros((len(rows), 0), dtype=bool)
        there = None
        if m.indom == catalog.OSC:
            have = set(instances)
            unsent = [d for d in oscs if d not in have]
            instances += unsent
            values = np.hstack([values, np.zeros((len(rows), len(unsent)), dtype=np.uint64)])
            present = np.hstack([present, np.zeros((len(rows), len(unsent)), dtype=bool)])
            col_of = np.array([listed_at.get(d, -1) for d in instances], dtype=np.intp)
            there = present.copy()
            there[:, col_of >= 0] |= listed[:, col_of[col_of >= 0]]
        js = next(j for j in catalog.JOB_SOURCES if j.source == m.source and j.indom == m.indom)
        devices = [device_of(i) for i in instances]
        col = _columns(left[js], devices)
        out.append(_Sent(m, left[js], instances, devices,
                         DeviceColumns.of(np.array([col[d] for d in devices], dtype=np.intp)), values, present,
                         there))
    return out


def _leave_out_no_counts(s: _Sent) -> None:
    """A delta of DELTA_LIMIT or more the agent counted is no count: its device's stats file is
    left out (TOO_LARGE), as diff leaves it out. (Most fetches have none: one max first.)"""
    if s.values.size and s.values.max() >= DELTA_LIMIT:
        large = s.cols.any(s.present & (s.values >= DELTA_LIMIT), len(s.left.devices))
        s.left.reasons[large & (s.left.reasons == Reason.COUNTED)] = Reason.TOO_LARGE


def _table(s: _Sent) -> DeltaTable:
    """The counter's DeltaTable: absent OSC and MDC deltas are zeros (unless their device was
    left out, or, an OSC, the host neither sent it nor lists it at the end), absent others are
    not counted."""
    if s.left.reasons.any():
        counted = s.left.reasons[:, s.cols.cols] == Reason.COUNTED
    else:
        counted = np.ones(s.values.shape, dtype=bool)
    if s.metric.indom not in _SPARSE:
        counted &= s.present
    elif s.there is not None:       # an OSC a host does not have counts nothing there
        counted &= s.there
    delta = np.where(counted & s.present, s.values, np.uint64(0)).astype(np.uint64, copy=False)
    return DeltaTable(s.instances, np.array(s.devices, dtype=object),
                      np.array([fs_of(d) for d in s.devices], dtype=object), delta, counted)


def delta(end: Snapshot, job_id: str) -> JobDelta:
    """The job's JobDelta from an end snapshot fetched with the job view (snapshot.fetch_all
    job_id=...): hosts not read, or whose agent did not know the job, are left out and said.
    A delta the agent counted that is no count (DELTA_LIMIT or more) is left out and said, its
    device's source with it, as diff does."""
    hosts, missing, issues = host_issues({}, end, job_view=True)
    issues += restarted(end, hosts, job_id)
    rows = rows_of(end, hosts)
    # what the agent left out, per stats file, and why
    left = {js: _left_out(end, rows, js) for js in catalog.JOB_SOURCES}

    # Filesystems remounted or unmounted on a host: every source of them there is left out.
    remounted: set[tuple[str, str]] = set()
    for t in left.values():
        for r, c in zip(*np.nonzero(t.reasons == Reason.REMOUNTED)):
            remounted.add((hosts[r], fs_of(t.devices[c])))
    for host, fs in sorted(remounted):
        issues.append(Issue("REMOUNT", host, fs, f"{fs} was remounted or unmounted on {host} during the job; "
                                                 f"its counters on {host} are left out"))

    # the deltas the agent sent; one it counted that is no count leaves its device out
    untyped: dict[str, DeltaTable] = {}
    sent = _sent(end, rows, left, issues, untyped)
    for s in sent:
        _leave_out_no_counts(s)
    tables = {**untyped, **{s.metric.name: _table(s) for s in sent}}

    left_out = LeftOut(hosts)
    notes_at_start, notes_at_end = _NoNote(), Side(end, rows, "end")
    for t in left.values():
        if t.devices:
            left_out.add(t, notes_at_start, notes_at_end)
    for host, fs in remounted:
        left_out.incomplete.setdefault(host, set()).add(fs)
    issues += left_out.issues

    versions = lustre_facts(end, hosts, issues)
    return JobDelta(begin=begin_time(end, hosts, job_id), end=end.taken_at, hosts=hosts, hosts_missing=missing,
                    versions=versions, tables=tables, end_snapshot=end, issues=issues,
                    incomplete=left_out.incomplete, left_out=[t for t in left.values() if t.devices])
