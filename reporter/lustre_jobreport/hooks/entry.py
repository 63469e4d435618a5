"""`lustre-jobreport prolog` / `epilog`: the scheduler hooks' work (DESIGN §5).

prolog (job start, first node of a Slurm job / PBS primary host): snapshot every node of the job
into the spool (a large Slurm job's: every node keeps its start in its own agent, hooksnap.
job_view); prolog.py. epilog (job end, same node): read the hosts again, build and deliver the
report, store the job record; epilog.py. This module reads the job and the config, holds the
bound and runs one of them; `--limits` tells the wrappers their bound and log.

Rules: the command always exits 0 and gives up by itself before [hooks] <kind>_timeout_s
(watchdog); every problem is one line in the log (hooklog: syslog or a file), never a word to
the job. The pieces: hooklog (the log), budget (the time), hooksnap (which snapshots, the
spool), delivery (where the report goes), watchdog (the stop at the bound), steps (a step's
failure costs that step only).
"""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

from .budget import Budget, wrapper_times
from .hooklog import HookLog, say
from .watchdog import Watchdog, exit_now

__all__ = ["run", "limits", "exit_now"]


# ---- epilog -----------------------------------------------------------------------------------


AGAIN = 75   # run again under the bound said (EX_TEMPFAIL): the config's is not the wrapper's


def run(kind: str, scheduler: str, argv: list[str], config_path: str | None, *,
        fallback_log: str = "syslog", env: dict[str, str] | None = None,
        out: TextIO | None = None, err: TextIO | None = None, supervise: bool = False,
        bound: float | None = None) -> int:
    """Do the hook's work; whatever happens, return 0 (the CLI's exit status; AGAIN only as said
    below, before anything is done). supervise: fork a
    supervisor that holds the bound even when the work cannot stop itself (see watchdog; only
    for a process that ends with the hook, i.e. the CLI).

    bound: the bound the wrapper holds (its `timeout`'s SIGKILL), which is the built-in one
    until the wrapper has heard the config's. Then the first line on standard error is the
    wrapper's limits as the config gives them ("limits: TERM KILL BOUND LOG", as --limits
    says them: the wrapper logs its own lines there), and a hook that would act under another
    bound than the config's does nothing and returns AGAIN, for the wrapper to run it again
    under that one. So the config is read once, by one process, whenever its bound is the
    built-in one, and the wrapper still holds the bound the hook reads."""
    started = time.monotonic()
    env = dict(os.environ) if env is None else env
    out = sys.stdout if out is None else out
    log = HookLog(fallback_log, f"{scheduler} {kind}")
    try:
        from .. import config
        from . import jobenv
        try:
            cfg, unusable = config.load(config_path, strict=False), None
            log.target = cfg.values["hooks"]["log"]
        except Exception as exc:
            cfg, unusable = None, exc
        term, kill, bound_s, target = _limits(kind, cfg, fallback_log)
        if bound is not None:
            _say(err, f"limits: {term!r} {kill!r} {bound_s!r} {target}")
        try:
            job = _job(jobenv, kind, scheduler, argv, env)
        except jobenv.JobEnvError as exc:
            log.error(str(exc))
            return 0
        log.context = f"{scheduler} {kind} job {job.job_id}"
        if cfg is None:
            log.error(f"configuration unusable, nothing done: {unusable}")
            return 0
        if not job.acts_here and not (kind == "prolog" and _job_view(job, cfg)):
            return 0  # another node of the job: the first one does the work for all of them
        if bound is not None and bound != bound_s:
            _say(err, f"lustre-jobreport: note: run under a {bound:g} s bound where [hooks] "
                      f"{kind}_timeout_s is {bound_s:g} s: nothing done, to be run again under it")
            return AGAIN
        for problem in cfg.problems:
            log.error(f"config: {problem}")
        budget = Budget(bound_s, started)
        if kind == "prolog":   # its modules imported before the supervisor's fork (prolog.load)
            from .prolog import load, prolog
            load(job, cfg)
        with Watchdog(kind, budget, log, out, supervise=supervise):
            if kind == "prolog":
                prolog(job, cfg, log, budget)
            else:
                from .epilog import epilog
                epilog(job, cfg, log, budget, out, argv, env)
    except BaseException as exc:  # whatever it is (even SystemExit from a library): logged, exit 0
        log.error(say(exc))
    return 0


def _job(jobenv, kind: str, scheduler: str, argv: list[str], env: dict[str, str]):
    """The job as the scheduler's hook tells it (pbs-hook: PBS's execjob_begin hook, a start;
    torque-sister: Torque's prologue.parallel on a sister host, a start). A prologue looks for
    Torque's prologue.parallel in its working directory, MoM's mom_priv (jobenv.torque_primary)."""
    if scheduler == "slurm":
        return jobenv.from_slurm(env)
    if scheduler in ("pbs-hook", "torque-sister"):
        if kind != "prolog":
            raise jobenv.JobEnvError(f"the {scheduler} wrapper keeps a job's start: it runs as prolog only")
        return jobenv.from_pbs_hook(argv, env) if scheduler == "pbs-hook" else jobenv.from_torque_sister(argv, env)
    job = jobenv.from_pbs(argv, env)
    return jobenv.torque_primary(job, argv, os.getcwd()) if kind == "prolog" else job


def _job_view(job, cfg) -> bool:
    """hooksnap.job_view, imported only where asked (it brings the catalog): a reporter run under
    another bound than the config's stops before it needs it."""
    from . import hooksnap
    return hooksnap.job_view(job, cfg)


def _say(err: TextIO | None, line: str) -> None:
    stream = sys.stderr if err is None else err
    stream.write(line + "\n")
    stream.flush()


def _limits(kind: str, cfg, fallback_log: str) -> tuple[float, float, float, str]:
    """(TERM, KILL, BOUND, LOG) of the wrapper, from the config as run() reads it; the built-in
    bound and the fallback log for a config that cannot be used (run() says so there, at once)."""
    from .. import config
    if cfg is None:
        bound, target = float(config.DEFAULTS["hooks"][f"{kind}_timeout_s"]), fallback_log
    else:
        hk = cfg.values["hooks"]
        bound, target = float(hk[f"{kind}_timeout_s"]), hk["log"]
    term, kill = wrapper_times(bound)
    return term, kill, bound, target


def limits(kind: str, scheduler: str, argv: list[str], config_path: str | None, *,
           fallback_log: str = "syslog", env: dict[str, str] | None = None, out: TextIO | None = None) -> int:
    """`prolog|epilog --limits`: what the wrapper needs, from the config as run() reads it:
    "TERM KILL BOUND LOG" (timeout -k KILL TERM; BOUND for its log line; LOG: [hooks] log)."""
    from .. import config
    try:
        cfg = config.load(config_path, strict=False)
    except Exception:  # unusable: run() will say so, in the fallback log, at once
        cfg = None
    term, kill, bound, target = _limits(kind, cfg, fallback_log)
    (sys.stdout if out is None else out).write(f"{term!r} {kill!r} {bound!r} {target}\n")
    return 0
