"""Build the job report (the JSON document of DESIGN §3) from two snapshots.

The JSON document is the single source of the report: the text and HTML renderings are made
from it, so a number reaches every rendering by the same path.
"""

from __future__ import annotations


from .. import REPORT_SCHEMA
from .aggregate import aggregate
from .clients import clients
from ..config import Config
from .diff import Issue, JobDelta, diff, iso_utc
from ..errors import JobReportError
from .flags import JobContext, evaluate
from .timeline import Accumulator, section, with_time
from ..acquire.snapfile import Snapshot


# What the scheduler tells about a job, beside its id and user (report JSON "job"; null if unknown).
JOB_FACTS = ("name", "partition", "account", "command", "num_nodes", "num_tasks")


def check_pair(begin: Snapshot, end: Snapshot) -> None:
    """Refuse (JobReportError, one line) two snapshots that cannot be the start and the end of
    one job: files naming different jobs (the deltas would be other jobs' I/O, in a report that
    looks trusted); both taken at the same time (one file given twice: an empty report of 0 s);
    the end taken before the begin (the files given the wrong way round: every counter would
    seem to go back); no host in both (every host would be "not read" at one end). A file naming
    no job (older files, `snapshot` without --job-id) has nothing to be checked against: two
    jobs' snapshots of the same hosts, one of them naming no job, cannot be told from one job's."""
    b, e = begin.source or "the begin snapshot", end.source or "the end snapshot"
    if begin.job_id is not None and end.job_id is not None and begin.job_id != end.job_id:
        raise JobReportError(f"the begin snapshot {b} is of job {begin.job_id}, the end snapshot {e} of job "
                             f"{end.job_id}: not the start and end of one job")
    if end.taken_at == begin.taken_at:
        raise JobReportError(f"{b} and {e} were taken at the same time ({iso_utc(begin.taken_at)}): one snapshot "
                             "given twice, not the start and end of a job")
    if end.taken_at < begin.taken_at:
        raise JobReportError(f"{e} was taken before {b} ({iso_utc(end.taken_at)} < {iso_utc(begin.taken_at)}): "
                             "give the job's begin snapshot first, then its end")
    if not set(begin.hosts) & set(end.hosts):
        raise JobReportError(f"{b} and {e} have no host in common: they are not the begin and end of one job")


def job_of(begin: Snapshot, end: Snapshot, given: str | None) -> str | None:
    """The id of the job a report of these snapshots is of: `given` (report --job-id), else the
    job they name (check_pair has refused two different ones). A given id that is not the one a
    file names is refused (JobReportError, one line): the report would be another job's under
    its id, and its job record filed as that job's."""
    for s, which in ((begin, "the begin snapshot"), (end, "the end snapshot")):
        if given is not None and s.job_id is not None and s.job_id != given:
            raise JobReportError(f"--job-id {given}, but {s.source or which} is of job {s.job_id}")
    return given if given is not None else begin.job_id or end.job_id


def build(begin: Snapshot, end: Snapshot, cfg: Config, **kw) -> dict:
    """The report document of two snapshots (kw: from_delta's)."""
    return from_delta(diff(begin, end), cfg, **kw)


def from_delta(delta: JobDelta, cfg: Config, *, job_id: str | None = None,
               user: str | None = None, shared_hosts: dict[str, str] | None = None,
               facts: dict | None = None, timeline: Accumulator | None = None,
               untimed: str | None = None) -> dict:
    """The report document of a job's deltas (diff.diff's, or jobview.delta's: the agents' job
    view). shared_hosts: hosts the scheduler says other jobs used meanwhile; facts: the
    scheduler's JOB_FACTS of the job (job name, partition ...); timeline: the job's hosts' series
    summed (None: no timeline was had, "timeline": null); untimed: why a job read by snapshots
    has none, said as a note (TIMELINE_NONE) to the user who would look for its "When" block."""
    end = delta.end_snapshot
    totals = aggregate(delta)
    min_elapsed = cfg.values["flags"]["min_elapsed_s"]
    rates_judged = delta.elapsed_s >= min_elapsed
    notes = []
    if not rates_judged and delta.hosts:
        notes.append({"id": "SHORT_JOB", "fs": None,
                      "detail": f"the job ran {delta.elapsed_s:.1f} s, under {min_elapsed:g} s: "
                                "per-second rates are not judged"})
    for host, why in sorted((shared_hosts or {}).items()):
        if host in delta.hosts:
            delta.issues.append(Issue("SHARED_NODE", host, None,
                                      f"{host} ran other jobs too ({why}): its counters include their I/O"))
    client_facts = clients(end, delta.hosts, sorted(totals), delta.versions)
    tl = section(timeline, delta, totals, cfg, {h: c["pagesize"] for h, c in client_facts.items()})
    if tl is not None:
        delta.issues.extend(tl.issues)
        notes.extend(tl.notes)
    elif untimed and delta.hosts:
        notes.append({"id": "TIMELINE_NONE", "fs": None,
                      "detail": f"no timeline: the job's nodes were read at its start and end only ({untimed})"})
    ctx = JobContext(elapsed_s=delta.elapsed_s, n_hosts=len(delta.hosts), rates_judged=rates_judged)
    flags = evaluate(totals, ctx, cfg, delta.issues)
    with_time(flags, tl)
    facts = facts or {}
    return {
        "schema": REPORT_SCHEMA,
        "job": {"id": job_id, "user": user, **{k: facts.get(k) for k in JOB_FACTS},
                "hosts": delta.hosts, "hosts_missing": delta.hosts_missing,
                "hosts_incomplete": {h: sorted(fs) for h, fs in sorted(delta.incomplete.items())},
                "begin": iso_utc(delta.begin), "end": iso_utc(delta.end),
                "elapsed_s": round(delta.elapsed_s, 3)},
        "lustre_versions": delta.versions,
        "clients": client_facts,
        "filesystems": {fs: t.to_json() for fs, t in totals.items()},
        "flags": [f.to_json() for f in flags],
        "timeline": None if tl is None else tl.json,
        "data_quality": [i.to_json() for i in delta.issues],
        "notes": notes,
    }
