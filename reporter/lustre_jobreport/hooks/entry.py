"""`lustre-jobreport prolog` / `epilog`: the scheduler hooks' work (DESIGN §5).

prolog (job start, first node of a Slurm job / PBS primary host): snapshot every node of the job
into the spool (a large Slurm job's: every node keeps its start in its own agent, hooksnap.
job_view). epilog (job end, same node): read the hosts again, build the report, deliver it to
the job (delivery), write the HTML where configured, store the job record, drop the begin
snapshot and expire stale ones. `--limits` tells the wrappers their bound and log.

Rules: the command always exits 0 and gives up by itself before [hooks] <kind>_timeout_s
(watchdog); every problem is one line in the log (hooklog: syslog or a file), never a word to
the job. The prolog path imports neither pandas nor Jinja2. The pieces: hooklog (the log),
budget (the time), hooksnap (which snapshots, the spool), delivery (where the report goes),
watchdog (the stop at the bound).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, Callable, TextIO

from . import hooksnap
from .budget import Budget, wrapper_times
from ..errors import JobReportError
from .hooklog import HookLog, say
from .watchdog import Watchdog, exit_now

__all__ = ["run", "limits", "exit_now", "prolog", "epilog"]


def _attempt(log: HookLog, budget: Budget, what: str, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
    """Run one step; a failure costs that step only and is one log line."""
    budget.step = what
    try:
        return fn(*args, **kw)
    except Exception as exc:
        log.error(f"{what}: {say(exc)}")
        return None


def _read_enough(taken: hooksnap.Taken, at: str, log: HookLog, otherwise: str) -> bool:
    """Log the hosts not read at job `at` (start, end); False, and `otherwise`, if none was."""
    if taken.none_read:
        log.error(f"no host could be read at job {at}: {taken.why}; {otherwise}")
        return False
    if taken.failed:
        log.error(f"{taken.failed} of {taken.hosts} hosts not read at job {at}: {taken.why}")
    return True


# ---- prolog -----------------------------------------------------------------------------------

def prolog(job, cfg, log: HookLog, budget: Budget) -> None:
    if hooksnap.job_view(job, cfg):   # every node: its own agent keeps the job's start
        if (said := _attempt(log, budget, "keeping the job's start", hooksnap.store_begin, job, cfg, budget)):
            log.info(f"job start kept by the local agent: {said}")
        return
    if not job.acts_here:
        return
    budget.step = "opening the spool"
    spool_dir = hooksnap.open_spool(cfg.values["hooks"])
    begin = hooksnap.begin(job, cfg, budget)
    if not _read_enough(begin, "start", log, "nothing spooled"):
        return
    budget.step = "writing the begin snapshot"
    hooksnap.put_begin(spool_dir, job.job_id, begin)


# ---- epilog -----------------------------------------------------------------------------------

def _preload(html: bool) -> None:
    try:
        from ..report import view as render, document as report  # noqa: F401
        if html:
            from ..report import charts  # noqa: F401
    except Exception:
        pass  # the real import, later, reports it


def _slurm_facts(job, hk: dict, log: HookLog, budget: Budget) -> tuple[dict | None, dict | None]:
    """scontrol's fields of the job (its output file, uid, gid) and, if asked, the nodes that
    other jobs used meanwhile (SHARED_NODE)."""
    from . import jobenv

    fields = _attempt(log, budget, "asking Slurm for the job's output file", jobenv.slurm_job_fields,
                      job.job_id, budget.for_scheduler(float(hk["scheduler_timeout_s"])))
    shared = None
    if fields is not None and hk["check_shared_nodes"]:
        shared = _attempt(log, budget, "asking Slurm which other jobs used the nodes", jobenv.slurm_shared_nodes,
                          job, fields, budget.for_scheduler(float(hk["scheduler_timeout_s"])))
    return fields, shared


def _report(job, cfg, log: HookLog, budget: Budget, out: TextIO, begin, argv: list[str],
            env: dict[str, str]) -> None:
    """The end snapshot (begin None: the agents' job view), the report and its delivery: a step
    that fails is one log line and costs only what needs it (the record needs the report alone)."""
    from . import delivery

    hk = cfg.values["hooks"]
    cluster = hk["cluster"] or job.cluster
    if begin is not None and not any(h.ok for h in begin.hosts.values()):
        log.error("no host was read at job start; no report")
        return
    threading.Thread(target=_preload, args=(hk["html"] != "off",), daemon=True).start()   # during the fetch
    end = hooksnap.end(begin, job, cfg, budget) if begin is not None else hooksnap.end_job_view(job, cfg, budget)
    if not _read_enough(end, "end", log, "no report"):
        return
    fields, shared = _slurm_facts(job, hk, log, budget) if job.scheduler == "slurm" else (None, None)

    from . import jobenv
    from ..report import view as render, document as report
    facts = (jobenv.slurm_facts(fields, env, job) if job.scheduler == "slurm"
             else jobenv.pbs_epilogue_facts(argv, job))
    doc = _attempt(log, budget, "building the report", lambda: report.from_delta(
        hooksnap.job_delta(begin, end.snap, job.job_id), cfg, job_id=job.job_id, user=job.user,
        shared_hosts=shared or None, facts=facts))
    if doc is None:
        return
    text = _attempt(log, budget, "rendering the report", render.render_text, doc)
    delivered = None
    if text is not None and job.scheduler == "pbs":
        delivered = _attempt(log, budget, "writing the report to standard output", delivery.to_pbs, text, out)
    elif text is not None:
        delivered = _attempt(log, budget, "appending the report", delivery.to_slurm, job, text, fields, budget, log)
    record = None
    if hk["records_dir"]:
        from ..records import store as records
        meta = {"scheduler": job.scheduler, "exit_code": job.exit_code,
                "report_delivered": bool(delivered), **job.extra}
        record = _attempt(log, budget, "storing the job record", records.store, doc,
                          hk["records_dir"], cluster, job.job_id, meta)
    html = (owner := jobenv.with_owner(job, hk, log, budget)) and _attempt(   # PBS: its ids from NSS, now
        log, budget, "writing the HTML report", delivery.html, owner, doc, hk, delivered, cluster, budget, log)
    log.info(f"report {'to ' + delivered.where if delivered else 'not delivered'}; "
             f"HTML {html or 'none'}; record {record or 'none'}; {budget.elapsed():.2f} s")


def epilog(job, cfg, log: HookLog, budget: Budget, out: TextIO, argv: list[str] | None = None,
           env: dict[str, str] | None = None) -> None:
    """argv, env: the hook's own (the scheduler's facts about the job for its record)."""
    argv, env = argv or [], env or {}
    hk = cfg.values["hooks"]
    if hooksnap.job_view(job, cfg):   # nothing spooled: the agents kept the job's start
        return _report(job, cfg, log, budget, out, None, argv, env)
    budget.step = "opening the spool"
    spool_dir = hooksnap.open_spool(hk)
    try:
        try:
            begin = hooksnap.take_begin(spool_dir, job.job_id)    # and out of the spool for good
        except JobReportError as exc:
            log.error(f"{exc}; no report")
            return
        if begin is None:
            log.error("no begin snapshot in the spool (prolog not run, or it failed: see above); no report")
            return
        _report(job, cfg, log, budget, out, begin, argv, env)
    finally:
        budget.step = "expiring stale begin snapshots"
        removed = hooksnap.expire(spool_dir, hk)
        if removed:
            log.info(f"expired {len(removed)} stale begin snapshot(s): {', '.join(removed[:5])}")


# ---- entry points -----------------------------------------------------------------------------

def run(kind: str, scheduler: str, argv: list[str], config_path: str | None, *,
        fallback_log: str = "syslog", env: dict[str, str] | None = None,
        out: TextIO | None = None, supervise: bool = False) -> int:
    """Do the hook's work; whatever happens, return 0 (the CLI's exit status). supervise: fork a
    supervisor that holds the bound even when the work cannot stop itself (see watchdog; only
    for a process that ends with the hook, i.e. the CLI)."""
    started = time.monotonic()
    env = dict(os.environ) if env is None else env
    out = sys.stdout if out is None else out
    log = HookLog(fallback_log, f"{scheduler} {kind}")
    try:
        from .. import config
        from . import jobenv
        try:
            job = jobenv.from_slurm(env) if scheduler == "slurm" else jobenv.from_pbs(argv, env)
        except jobenv.JobEnvError as exc:
            log.error(str(exc))
            return 0
        log.context = f"{scheduler} {kind} job {job.job_id}"
        try:
            cfg = config.load(config_path, strict=False)
        except Exception as exc:
            log.error(f"configuration unusable, nothing done: {exc}")
            return 0
        if not job.acts_here and not (kind == "prolog" and hooksnap.job_view(job, cfg)):
            return 0  # another node of the job: the first one does the work for all of them
        log.target = cfg.values["hooks"]["log"]
        for problem in cfg.problems:
            log.error(f"config: {problem}")
        budget = Budget(float(cfg.values["hooks"][f"{kind}_timeout_s"]), started)
        with Watchdog(kind, budget, log, out, supervise=supervise):
            if kind == "prolog":
                prolog(job, cfg, log, budget)
            else:
                epilog(job, cfg, log, budget, out, argv, env)
    except BaseException as exc:  # whatever it is (even SystemExit from a library): logged, exit 0
        log.error(say(exc))
    return 0


def limits(kind: str, scheduler: str, argv: list[str], config_path: str | None, *,
           fallback_log: str = "syslog", env: dict[str, str] | None = None, out: TextIO | None = None) -> int:
    """`prolog|epilog --limits`: what the wrapper needs, from the config as run() reads it:
    "TERM KILL BOUND LOG" (timeout -k KILL TERM; BOUND for its log line; LOG: [hooks] log)."""
    from .. import config
    try:
        hk = config.load(config_path, strict=False).values["hooks"]
        bound, target = float(hk[f"{kind}_timeout_s"]), hk["log"]
    except Exception:  # unusable: run() will say so, in the fallback log, at once
        bound, target = float(config.DEFAULTS["hooks"][f"{kind}_timeout_s"]), fallback_log
    term, kill = wrapper_times(bound)
    (sys.stdout if out is None else out).write(f"{term!r} {kill!r} {bound!r} {target}\n")
    return 0
