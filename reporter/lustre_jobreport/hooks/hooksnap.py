"""Which snapshots the hooks take, how, and where they keep them: the one module that calls the
acquisition code (snapshot) and the spool, so that changing how a begin or end snapshot is
taken is a change here only.

- begin (prolog): a job on at most [hooks] prolog_cli_max_hosts nodes is read by one `pminfo`
  per node, its text kept raw in the spool (quick to start: no numpy or PCP bindings to
  import); a larger job in-process through PCP's bindings. Same fan-out, bounds and spool
  format either way (snapshot.fetch_all).
- end (epilog): the hosts of the begin snapshot, in-process, within END_SNAPSHOT_SHARE of the
  time left (the rest is the report's).
- a job on at least [hooks] job_view_from_nodes nodes is not snapshotted at its start: every
  node's prolog (Slurm), execjob_begin hook (PBS) or prologue.parallel and prologue (Torque)
  stores the job's start into its own agent (store_begin), and the epilog reads the job's deltas
  from every agent (end_job_view; jobview.py makes the JobDelta). A PBS job's begin hook (a
  Torque job's prologue) marks the job in the primary's spool for the epilogue, which runs there
  alone (tell_primary, job_view).
Light at import: each function imports what its path needs, and Taken is a NamedTuple (not a
dataclass, whose module brings `inspect` to every job's start).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from .. import catalog
from ..acquire.hostsnap import summarise
from .budget import (AFTER_SNAPSHOT_S, CONNECT_SHARE, END_SNAPSHOT_SHARE, MIN_STEP_S, REPORT_S_PER_HOST,
                     SPOOL_S_PER_HOST, Budget)

DAY_S = 86400
FAILED_SHOWN = 4            # hosts named in a "not read" log line; the rest are counted


class Taken(NamedTuple):
    """A snapshot (as fetched at the start; stacked for the report at the end) and how many of
    its hosts could not be read (named in `why`)."""
    snap: Any
    failed: int
    hosts: int
    why: str

    @property
    def none_read(self) -> bool:
        return self.failed == self.hosts


def _taken(fetched) -> Taken:
    """What a snapshot.fetch_all returned, and the hosts it could not read: by reason, the most
    common first, each with FAILED_SHOWN hosts named (one log line at any job size)."""
    failed = fetched.failed()
    by_reason: dict[str, list[str]] = {}
    for h in failed:
        by_reason.setdefault(h.error or "", []).append(h.host)
    parts = [f"{hosts[0]}: {reason}" if len(hosts) == 1
             else f"{len(hosts):,} hosts ({summarise(hosts, FAILED_SHOWN)}): {reason}"
             for reason, hosts in sorted(by_reason.items(), key=lambda kv: -len(kv[1]))]
    return Taken(fetched, len(failed), len(fetched.hosts), "; ".join(parts))


def _times(cfg, left: float) -> dict[str, float]:
    """Per-host connect and fetch timeouts and the overall deadline, within `left` seconds."""
    s = cfg.snapshot
    connect = min(float(s["connect_timeout_s"]), max(MIN_STEP_S, CONNECT_SHARE * left))
    return {"connect_timeout_s": connect,
            "fetch_timeout_s": min(float(s["fetch_timeout_s"]), max(MIN_STEP_S, left - connect)),
            "deadline_s": max(MIN_STEP_S, left)}


def _fetch(targets, cfg, budget: Budget, left: float, backend: str,
           metrics: tuple[str, ...] = catalog.SNAPSHOT_METRICS, after_each_s: float = 0,
           job_id: str | None = None, series_sum=None):
    from ..acquire import snapshot

    budget.step = (f"{'job view' if job_id else 'snapshot'} of {len(targets)} host(s)"
                   + (" by pminfo" if backend == "pminfo" else ""))
    # a job read through the job view has ended: its first node's cores are the epilog's
    processes = cfg.snapshot["job_view_processes" if job_id else "processes"]
    fetched = snapshot.fetch_all(targets, parallel=int(cfg.snapshot["parallel"]), backend=backend,
                                 processes=int(processes), job_id=job_id, series_sum=series_sum,
                                 metrics=metrics, after_each_s=after_each_s, **_times(cfg, left))
    return _taken(fetched)


def load_begin() -> None:
    """Import what begin() and put_begin() use, now (prolog.load)."""
    from ..acquire import snapformat, snapshot  # noqa: F401
    from . import spool  # noqa: F401


def begin(job, cfg, budget: Budget) -> Taken:
    """The job's begin snapshot (prolog), within the budget less the time to spool it: what
    the report differences (catalog.BEGIN_METRICS), not the settings only the end is read for."""
    from ..acquire import snapshot

    left = budget.left() - AFTER_SNAPSHOT_S
    if len(set(job.nodes)) > int(cfg.values["hooks"]["prolog_cli_max_hosts"]):
        budget.step = "reading the node list"
        return _fetch(_targets(job, cfg), cfg, budget, left, "auto", catalog.BEGIN_METRICS, SPOOL_S_PER_HOST)
    targets = [snapshot.HostTarget(n, cfg.host_spec(n)) for n in dict.fromkeys(job.nodes)]
    return _fetch(targets, cfg, budget, left, "pminfo", catalog.BEGIN_METRICS, SPOOL_S_PER_HOST)


def end(begin_snap, job, cfg, budget: Budget) -> Taken:
    """The end snapshot (epilog) of the hosts read at the job's start, stacked for the report
    and naming the job as the begin snapshot does (spool.put). A host the prolog could not read
    has no start to difference from: reading it now would only spend the epilog's time (the
    report names it from the begin snapshot)."""
    from ..acquire import snapshot

    targets = [snapshot.HostTarget(name, h.spec) for name, h in begin_snap.hosts.items() if h.ok]
    taken = _fetch(targets, cfg, budget, budget.left() * END_SNAPSHOT_SHARE, "auto", after_each_s=REPORT_S_PER_HOST)
    return _stacked(taken, job.job_id)


def _stacked(taken: Taken, job_id: str) -> Taken:
    """What an end's fetch_all returned, stacked for the report (the hosts' values let go as
    they are), naming the job (snapformat.file_job_id: none for an id a file cannot hold)."""
    from ..acquire.snapfile import Snapshot
    from ..acquire.snapformat import file_job_id

    return taken._replace(snap=Snapshot.from_hosts(taken.snap.taken_at, taken.snap.hosts, consume=True,
                                                  job_id=file_job_id(job_id), timeline=taken.snap.series))


# ---- the agents' job view ----------------------------------------------------------------------

def job_view(job, cfg) -> bool:
    """Whether the job is read through the agents' job view.

    A hook that runs on every node of the job (Slurm's prolog and epilog, PBS's execjob_begin
    hook, Torque's prologue.parallel and the prologue beside it) decides by the rule: a job on at
    least [hooks] job_view_from_nodes nodes, where PCP's Python bindings are there to read it
    (without them, e.g. a pip install on a Python the distribution's python3-pcp is not built
    for, the job is snapshotted through pminfo, as with job_view_from_nodes = 0). A Torque sister
    cannot count the job's hosts, so it keeps the start of every job (it is one of two hosts at
    least); its primary, which can, decides how the job is read. PBS's prologue and epilogue, on
    the primary host alone, cannot make every node's agent keep the job's start: they follow what
    the job's begin hook (or Torque's prologue) did, told by its mark in the primary's spool (none
    installed: no mark, snapshots)."""
    if not job.every_node:
        return _marked(job, cfg)
    return _rule_missed(job, cfg) is None


def why_snapshots(job, cfg) -> str:
    """Why a job was read by snapshots at its start and end (so has no timeline), in words for
    its report's note: the first of the job view's conditions it missed."""
    missed = _rule_missed(job, cfg)
    if missed:
        return missed
    if job.scheduler == "pbs":   # (a PBS Pro and a Torque epilogue look alike: both are named)
        return ("no PBS execjob_begin hook, nor Torque's prologue.parallel, kept its start on its hosts "
                "(hooks/README.md)")
    return "its nodes' agents were not asked to keep it"


def _rule_missed(job, cfg) -> str | None:
    """The job view's rule for a hook on every node of the job: None where the job is read
    through it, else the first condition it missed, in words (the bindings, whose import costs,
    checked last). A host that cannot count the job's hosts (a Torque sister) counts as enough."""
    least = int(cfg.values["hooks"]["job_view_from_nodes"])
    if least == 0:
        return "[hooks] job_view_from_nodes = 0"
    if job.hosts_known and len(set(job.nodes)) < least:
        return f"a job on fewer than {least:,} nodes ([hooks] job_view_from_nodes)"
    if not _have_bindings():
        return "no PCP Python bindings for the reporter's Python"
    return None


def _marked(job, cfg) -> bool:
    from . import spool
    try:
        return spool.marked(spool.open_spool(cfg.values["hooks"]["spool_dir"], create=False), job.job_id)
    except spool.SpoolError:
        return False   # no spool, or one refused: no mark (the snapshot's path says what is wrong)


def tell_primary(job, cfg, view: bool) -> None:
    """PBS's begin hook (or Torque's prologue, its sisters keeping their starts) on the primary
    host: mark the job in the spool as read through the job view, or clear a mark an earlier run
    of the same job id left (a requeued job whose epilogue never came), so that the prologue and
    epilogue follow what this run's start did."""
    from . import spool
    where = spool.open_spool(cfg.values["hooks"]["spool_dir"])
    if view:
        spool.mark(where, job.job_id)
    else:
        spool.unmark(where, job.job_id)


def _have_bindings() -> bool:
    """Whether PCP's Python bindings import here, by their C module (python3-pcp ships it with
    pcp.pmapi): 2-3 ms, where importing pcpfetch (pcp.pmapi, numpy) would add ~100 ms to every
    node's prolog of a large job."""
    try:
        import cpmapi  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        return False
    return True


STORE_TIMEOUT_S = 3.0     # a local pmcd answers a store in milliseconds; a hung one costs this


def store_begin(job, cfg, budget: Budget) -> str:
    """Tell this node's agent that the job starts (one local pmstore of
    lustreclient.control.job_begin): the agent keeps the job's begin values for the epilog.
    Returns what the store said; raises JobReportError (one line) if it failed."""
    import os
    import subprocess

    from ..errors import JobReportError

    spec = cfg.local_spec(job.this_node)
    budget.step = f"storing the job's start into the local agent ({spec})"
    timeout = max(MIN_STEP_S, min(STORE_TIMEOUT_S, budget.left() - AFTER_SNAPSHOT_S))
    env = dict(os.environ, PMCD_CONNECT_TIMEOUT=f"{timeout:g}", PMCD_REQUEST_TIMEOUT=f"{timeout:g}")
    cmd = ["pmstore", "-h", spec, catalog.JOB_BEGIN_CONTROL, job.job_id]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                              stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise JobReportError("pmstore not found (install pcp): the job's start is not kept") from None
    except subprocess.TimeoutExpired:
        raise JobReportError(f"the local pmcd ({spec}) did not answer the store of the job's start "
                             f"within {timeout:.3g} s") from None
    said = " ".join((proc.stderr or proc.stdout).split())[:300]
    if proc.returncode != 0:
        raise JobReportError(f"the local agent did not keep the job's start ({spec}): {said or 'pmstore failed'}")
    return said


def end_job_view(job, cfg, budget: Budget) -> Taken:
    """The job's deltas from every node's agent (and the end metrics), and the sums of their
    timelines, stacked for the report."""
    from ..report.timeline import Accumulator

    budget.step = "reading the node list"
    taken = _fetch(_targets(job, cfg), cfg, budget, budget.left() * END_SNAPSHOT_SHARE, "auto",
                   after_each_s=REPORT_S_PER_HOST, job_id=job.job_id, series_sum=Accumulator)
    return _stacked(taken, job.job_id)


def job_delta(begin_snap, end_snap, job_id: str):
    """The job's deltas: of the two snapshots, or (no begin snapshot) of the agents' job view."""
    if begin_snap is None:
        from ..report import jobview
        return jobview.delta(end_snap, job_id)
    from ..report.diff import diff
    return diff(begin_snap, end_snap)


def _targets(job, cfg):
    from ..acquire import snapshot

    if job.scheduler == "pbs" and job.nodefile:
        return snapshot.read_hosts_file(job.nodefile, cfg)
    if job.scheduler == "pbs":
        return [snapshot.HostTarget(job.this_node, cfg.host_spec(job.this_node))]
    return snapshot.targets_for_nodes(job.nodelist, cfg)


# ---- the spool --------------------------------------------------------------------------------

def open_spool(hk: dict) -> Path:
    from . import spool
    return spool.open_spool(hk["spool_dir"])


def put_begin(spool_dir: Path, job_id: str, taken: Taken) -> Path:
    from . import spool
    return spool.put(spool_dir, job_id, taken.snap)


def take_begin(spool_dir: Path, job_id: str):
    """The job's begin snapshot (None if there is none), out of the spool as it is read, so that
    no path after this leaves it behind. A damaged one raises spool.SpoolError."""
    from . import spool
    return spool.take(spool_dir, job_id)


def take_mark(spool_dir: Path, job_id: str) -> bool:
    """Whether the job's begin hook marked it (PBS), the mark out of the spool as it is read."""
    from . import spool
    return spool.unmark(spool_dir, job_id)


def expire(spool_dir: Path, hk: dict) -> list[str]:
    from . import spool
    return spool.expire(spool_dir, float(hk["spool_max_age_days"]) * DAY_S)
