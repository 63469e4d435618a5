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
from .catalog import P
from .diff import (DeltaTable, Issue, JobDelta, LeftOut, Side, SourceGroup, device_of, fs_of, host_issues,
                   lustre_facts, nothing_counted, rows_of)
from .snapfile import Snapshot

# the diff's masks, by the agent's reason codes
_RESET = (catalog.CLEARED, catalog.REPLACED)
_MISSING = ((catalog.NOT_READ_AT_BEGIN, "start"), (catalog.NOT_READ_AT_END, "end"), (catalog.GONE, "gone"),
            (catalog.NOT_READ, "both"))
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


def _codes(end: Snapshot, rows: np.ndarray, js: catalog.JobSource) -> tuple[list[str], np.ndarray]:
    """The devices of a source the agent left out on some host, and codes[h, d] (0: counted)."""
    t = end.metrics.get(catalog.job_left_out_name(js))
    if t is None or t.is_string:
        return [], np.zeros((len(rows), 0), dtype=np.uint64)
    return list(t.instances), np.where(t.present[rows], t.values[rows], np.uint64(0))


def delta(end: Snapshot, job_id: str) -> JobDelta:
    """The job's JobDelta from an end snapshot fetched with the job view (snapshot.fetch_all
    job_id=...): hosts not read, or whose agent did not know the job, are left out and said."""
    hosts, missing, issues = host_issues({}, end, job_view=True)
    rows = rows_of(end, hosts)
    n = len(hosts)
    left_out = LeftOut(hosts)
    # the agent's account of the fetch at the job's end (diff's words); none of its start
    notes = {"start": _NoNote(), "end": Side(end, rows, "end")}

    # what the agent left out, per stats file: read once, used by every step below
    left = {js: _codes(end, rows, js) for js in catalog.JOB_SOURCES}

    # Filesystems remounted or unmounted on a host: every source of them there is left out.
    remounted: set[tuple[str, str]] = set()
    for devices, codes in left.values():
        for r, c in zip(*np.nonzero(codes == catalog.REMOUNTED)):
            remounted.add((hosts[r], fs_of(devices[c])))
    for host, fs in sorted(remounted):
        issues.append(Issue("REMOUNT", host, fs, f"{fs} was remounted or unmounted on {host} during the job; "
                                                 f"its counters on {host} are left out"))

    for js, (devices, codes) in left.items():
        if not devices:
            continue
        device_fs = np.array([fs_of(d) for d in devices], dtype=object)
        group = SourceGroup(js.source, js.indom)
        group.add(devices)
        reset = np.isin(codes, _RESET)
        left_out.resets(devices, js.source, device_fs, reset, codes == catalog.REPLACED)
        for code, how in _MISSING:
            mask = codes == code
            if mask.any():
                left_out.missing(devices, group, device_fs, mask, how, notes["start"], notes["end"])
    for host, fs in remounted:
        left_out.incomplete.setdefault(host, set()).add(fs)
    issues += left_out.issues

    tables: dict[str, DeltaTable] = {}
    for m in catalog.with_role(*catalog.SUMMED):
        t = end.metrics.get(catalog.job_view_name(m.name))
        if t is None:
            continue
        if t.is_string or t.sem != "counter":
            issues.append(Issue("METRIC_TYPE", None, None,
                                f"{catalog.job_view_name(m.name)} is not a counter (an agent mix-up): "
                                "left out of the totals"))
            tables[m.name] = nothing_counted(list(t.instances), n)
            continue
        devices = np.array([device_of(i) for i in t.instances], dtype=object)
        values, present = t.values[rows], t.present[rows]
        if m.indom in _SPARSE:
            # absent: a zero delta, unless the agent left the device out on that host
            js = next(j for j in catalog.JOB_SOURCES if j.source == m.source and j.indom == m.indom)
            out_devices, codes = left[js]
            counted = np.ones((n, len(devices)), dtype=bool)
            col = {d: i for i, d in enumerate(out_devices)}
            for i, d in enumerate(devices):
                if d in col:
                    counted[:, i] = codes[:, col[d]] == 0
        else:
            counted = present
        tables[m.name] = DeltaTable(list(t.instances), devices, np.array([fs_of(d) for d in devices], dtype=object),
                                    np.where(counted & present, values, np.uint64(0)).astype(np.uint64), counted)

    versions = lustre_facts(end, hosts, issues)
    return JobDelta(begin=begin_time(end, hosts, job_id), end=end.taken_at, hosts=hosts, hosts_missing=missing,
                    versions=versions, tables=tables, end_snapshot=end, issues=issues,
                    incomplete=left_out.incomplete)
