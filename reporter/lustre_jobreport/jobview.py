"""A job's deltas as the agents' job view gives them (issue 11): the JobDelta of diff.py, made
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

import numpy as np

from . import catalog
from .catalog import Reason
from .diff import (DELTA_LIMIT, DeltaTable, DeviceColumns, Issue, JobDelta, LeftOut, LeftOutTable, Side, device_of,
                   fs_of, host_issues, lustre_facts, rows_of)
from .snapfile import Snapshot

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


def _left_out(end: Snapshot, rows: np.ndarray, js: catalog.JobSource) -> LeftOutTable:
    """The devices of a source the agent left out on some host, and why (COUNTED elsewhere)."""
    t = end.metrics.get(catalog.job_left_out_name(js))
    if t is None or t.is_string:
        return LeftOutTable(js.source.name, js.indom, [], np.zeros((len(rows), 0), dtype=np.uint8))
    codes = np.where(t.present[rows], t.values[rows], np.uint64(0))
    # a code this reader does not know (a newer agent's) leaves the device out all the same
    codes[codes > max(catalog.PRECEDENCE)] = Reason.NOT_READ
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


def delta(end: Snapshot, job_id: str) -> JobDelta:
    """The job's JobDelta from an end snapshot fetched with the job view (snapshot.fetch_all
    job_id=...): hosts not read, or whose agent did not know the job, are left out and said.
    A delta the agent counted that is no count (DELTA_LIMIT or more) is left out and said, its
    device's source with it, as diff does."""
    hosts, missing, issues = host_issues({}, end, job_view=True)
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

    # the deltas the agent sent, and where it counted one that is no count
    sent: dict[str, tuple] = {}
    for m in catalog.with_role(*catalog.SUMMED):
        t = end.metrics.get(catalog.job_view_name(m.name))
        if t is None:
            continue
        if t.is_string or t.sem != "counter":
            issues.append(Issue("METRIC_TYPE", None, None,
                                f"{catalog.job_view_name(m.name)} is not a counter (an agent mix-up): "
                                "left out of the totals"))
            continue
        js = next(j for j in catalog.JOB_SOURCES if j.source == m.source and j.indom == m.indom)
        devices = [device_of(i) for i in t.instances]
        col = _columns(left[js], devices)
        cols = DeviceColumns.of(np.array([col[d] for d in devices], dtype=np.intp))
        values, present = t.values[rows], t.present[rows]
        large = cols.any(present & (values >= DELTA_LIMIT), len(left[js].devices))
        left[js].reasons[large & (left[js].reasons == Reason.COUNTED)] = Reason.TOO_LARGE
        sent[m.name] = (m, js, t, devices, cols, values, present)

    tables: dict[str, DeltaTable] = {}
    for name, (m, js, t, devices, cols, values, present) in sent.items():
        # absent OSC and MDC deltas are zeros (unless left out), absent others not counted
        counted = left[js].reasons[:, cols.cols] == Reason.COUNTED
        if m.indom not in _SPARSE:
            counted &= present
        tables[name] = DeltaTable(list(t.instances), np.array(devices, dtype=object),
                                  np.array([fs_of(d) for d in devices], dtype=object),
                                  np.where(counted & present, values, np.uint64(0)).astype(np.uint64), counted)

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
