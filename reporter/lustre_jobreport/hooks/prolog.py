"""`lustre-jobreport prolog`'s work: the job's start kept, by every node's agent (a job read
through the job view) or as a begin snapshot of every node in the spool. This path imports
neither Jinja2 nor the records' libraries (import-linter holds it: reporter/pyproject.toml): a
job's start waits for it."""

from __future__ import annotations

from . import hooksnap
from .budget import Budget
from .hooklog import HookLog
from .steps import attempt, read_enough


def load(job, cfg) -> None:
    """Import what this job's prolog will use, before entry.run forks the supervisor: an
    import in the worker after the fork copies every page of the interpreter's it touches
    (~1.5 ms of CPU of a small job's ~45 ms). A job read through the job view uses none of the
    snapshot's modules."""
    if not job.pbs_begin_hook and not hooksnap.job_view(job, cfg):
        hooksnap.load_begin()


def prolog(job, cfg, log: HookLog, budget: Budget) -> None:
    """Slurm's prolog on every node, PBS's execjob_begin hook on every host, Torque's
    prologue.parallel on every sister, PBS's (Torque's) prologue on the primary: the job's start
    kept by every node's agent, else snapshotted by its first node (by the prologue, for a PBS
    job). On the primary, PBS's begin hook and Torque's prologue (where prologue.parallel kept the
    sisters' starts) mark the job for the epilogue (and PBS's prologue) to follow."""
    view = hooksnap.job_view(job, cfg)
    if view and job.every_node:   # every node: its own agent keeps the job's start
        if (said := attempt(log, budget, "keeping the job's start", hooksnap.store_begin, job, cfg, budget)):
            log.info(f"job start kept by the local agent: {said}")
    if job.marks and job.acts_here:
        attempt(log, budget, "telling the prologue and epilogue how the job is read",
                hooksnap.tell_primary, job, cfg, view)
    if view or job.pbs_begin_hook or not job.acts_here:   # (PBS's prologue snapshots after its begin hook)
        return
    budget.step = "opening the spool"
    spool_dir = hooksnap.open_spool(cfg.values["hooks"])
    begin = hooksnap.begin(job, cfg, budget)
    if not read_enough(begin, "start", log, "nothing spooled"):
        return
    budget.step = "writing the begin snapshot"
    hooksnap.put_begin(spool_dir, job.job_id, begin)
