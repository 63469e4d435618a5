"""Build the job report (the JSON document of DESIGN §3) from two snapshots.

The JSON document is the single source of the report: the text and HTML renderings are made
from it, so a number reaches every rendering by the same path.
"""

from __future__ import annotations

from datetime import datetime, timezone

from . import REPORT_SCHEMA
from .aggregate import aggregate
from .clients import clients
from .config import Config
from .diff import Issue, JobDelta, diff
from .errors import JobReportError
from .flags import JobContext, evaluate
from .snapfile import Snapshot


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


# What the scheduler tells about a job, beside its id and user (report JSON "job"; null if unknown).
JOB_FACTS = ("name", "partition", "account", "command", "num_nodes", "num_tasks")


def check_pair(begin: Snapshot, end: Snapshot) -> None:
    """Refuse (JobReportError, one line) two snapshots that cannot be the start and the end of
    one job: the end taken before the begin (the files given the wrong way round: every counter
    would seem to go back), or no host in both (every host would be "not read" at one end).
    Snapshot files do not say which job they were taken for, so nothing more can be checked."""
    b, e = begin.source or "the begin snapshot", end.source or "the end snapshot"
    if end.taken_at < begin.taken_at:
        raise JobReportError(f"{e} was taken before {b} ({_iso(end.taken_at)} < {_iso(begin.taken_at)}): "
                             "give the job's begin snapshot first, then its end")
    if not set(begin.hosts) & set(end.hosts):
        raise JobReportError(f"{b} and {e} have no host in common: they are not the begin and end of one job")


def build(begin: Snapshot, end: Snapshot, cfg: Config, **kw) -> dict:
    """The report document of two snapshots (kw: from_delta's)."""
    return from_delta(diff(begin, end), cfg, **kw)


def from_delta(delta: JobDelta, cfg: Config, *, job_id: str | None = None,
               user: str | None = None, shared_hosts: dict[str, str] | None = None,
               facts: dict | None = None) -> dict:
    """The report document of a job's deltas (diff.diff's, or jobview.delta's: the agents' job
    view). shared_hosts: hosts the scheduler says other jobs used meanwhile; facts: the
    scheduler's JOB_FACTS of the job (job name, partition ...)."""
    end = delta.end_snapshot
    totals = aggregate(delta)
    min_elapsed = cfg.values["flags"]["min_elapsed_s"]
    rates_judged = delta.elapsed_s >= min_elapsed
    if not rates_judged and delta.hosts:
        delta.issues.append(Issue("SHORT_JOB", None, None,
                                  f"the job ran {delta.elapsed_s:.1f} s, under {min_elapsed:g} s: "
                                  f"per-second rates are not judged"))
    for host, why in sorted((shared_hosts or {}).items()):
        if host in delta.hosts:
            delta.issues.append(Issue("SHARED_NODE", host, None,
                                      f"{host} ran other jobs too ({why}): its counters include their I/O"))
    ctx = JobContext(elapsed_s=delta.elapsed_s, n_hosts=len(delta.hosts), rates_judged=rates_judged)
    flags = evaluate(totals, ctx, cfg)
    facts = facts or {}
    return {
        "schema": REPORT_SCHEMA,
        "job": {"id": job_id, "user": user, **{k: facts.get(k) for k in JOB_FACTS},
                "hosts": delta.hosts, "hosts_missing": delta.hosts_missing,
                "hosts_incomplete": {h: sorted(fs) for h, fs in sorted(delta.incomplete.items())},
                "begin": _iso(delta.begin), "end": _iso(delta.end),
                "elapsed_s": round(delta.elapsed_s, 3)},
        "lustre_versions": delta.versions,
        "clients": clients(end, delta.hosts, sorted(totals), delta.versions),
        "filesystems": {fs: t.to_json() for fs, t in totals.items()},
        "flags": [f.to_json() for f in flags],
        "data_quality": [i.to_json() for i in delta.issues],
    }
