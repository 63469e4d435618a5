"""`lustre-jobreport prolog` / `epilog`: the scheduler hooks' work (DESIGN §5).

prolog (job start, first node of a Slurm job / PBS primary host): snapshot every node of the job
into the spool. epilog (job end, same node): snapshot the same hosts again, build the report,
append its text to the job's output as the job user (Slurm: the StdOut of `scontrol show job`;
PBS: standard output, which MoM appends to the job's output), write the HTML where configured,
store the job record, drop the begin snapshot and expire stale ones.

Rules: the command always exits 0 and gives up by itself before [hooks] <kind>_timeout_s
(a watchdog thread ends the process); every problem is one line in the log ([hooks] log: syslog
or a file), never a word to the job. The prolog path imports neither pandas nor Jinja2.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, TextIO

from .budget import Budget, wrapper_times

IDENT = "lustre-jobreport"
MAX_LINE = 900


class HookLog:
    """One line per event, to a file (append) or to syslog (daemon facility)."""

    def __init__(self, target: str = "syslog", context: str = ""):
        self.target, self.context = target or "syslog", context
        self.lines = 0

    def _line(self, level: str, msg: str) -> str:
        text = " ".join(str(msg).split())          # one line, whatever the message held
        if len(text) > MAX_LINE:
            text = text[:MAX_LINE - 3] + "..."
        return f"{level}: {self.context}: {text}" if self.context else f"{level}: {text}"

    def _syslog(self, level: str, line: str) -> None:
        import syslog
        syslog.openlog(IDENT, syslog.LOG_PID, syslog.LOG_DAEMON)
        syslog.syslog(syslog.LOG_ERR if level == "error" else syslog.LOG_INFO, line)

    def _emit(self, level: str, msg: str) -> None:
        line = self._line(level, msg)
        self.lines += 1
        if self.target.startswith("/"):
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            host = os.uname().nodename.split(".")[0]
            data = f"{stamp} {host} {IDENT}[{os.getpid()}]: {line}\n".encode("utf-8", "replace")
            try:
                fd = os.open(self.target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
                             | os.O_CLOEXEC | os.O_NOCTTY, 0o640)
                try:
                    os.write(fd, data)
                finally:
                    os.close(fd)
                return
            except OSError:
                pass  # an unwritable log file: fall back to syslog
        try:
            self._syslog(level, line)
        except Exception:  # pragma: no cover - no syslog at all: nowhere left to say it
            pass

    def error(self, msg: str) -> None:
        self._emit("error", msg)

    def info(self, msg: str) -> None:
        self._emit("info", msg)


def _describe(exc: BaseException) -> str:
    where = ""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is not None:
        where = f" at {Path(tb.tb_frame.f_code.co_filename).name}:{tb.tb_lineno}"
    return f"{type(exc).__name__}: {exc}{where}"


def _attempt(log: HookLog, budget: Budget, what: str, fn: Callable[..., Any], *args: Any) -> Any:
    """Run one step; a failure costs that step only and is one log line."""
    budget.step = what
    try:
        return fn(*args)
    except Exception as exc:
        log.error(f"{what}: {_describe(exc) if not _is_expected(exc) else exc}")
        return None


def _is_expected(exc: BaseException) -> bool:
    from .errors import JobReportError
    return isinstance(exc, (JobReportError, OSError))


def _hosts_summary(snap, limit: int = 4) -> tuple[int, int, str]:
    bad = [(name, h.error) for name, h in snap.hosts.items() if not h.ok]
    return _summary_of(bad, len(snap.hosts), limit)


def _take_snapshot(targets, cfg, budget: Budget, share: float = 1.0):
    """One snapshot within `share` of the time left (the epilog keeps some for the report)."""
    from . import snapshot

    s = cfg.snapshot
    left = budget.left() * share if share < 1 else budget.left() - 0.3
    connect = min(float(s["connect_timeout_s"]), max(0.2, 0.4 * left))
    fetch = min(float(s["fetch_timeout_s"]), max(0.2, left - connect))
    budget.step = f"snapshot of {len(targets)} host(s)"
    return snapshot.take(targets, connect_timeout_s=connect, fetch_timeout_s=fetch,
                         parallel=int(s["parallel"]), deadline_s=max(0.2, left))


def _targets(job, cfg):
    from . import snapshot

    if job.scheduler == "pbs" and job.nodefile:
        return snapshot.read_hosts_file(job.nodefile, cfg)
    if job.scheduler == "pbs":
        return [snapshot.HostTarget(job.this_node, cfg.host_spec(job.this_node))]
    return snapshot.targets_for_nodes(job.nodelist, cfg)


# ---- prolog -----------------------------------------------------------------------------------

def _take_raw(job, cfg, budget: Budget) -> dict:
    """A small job's begin snapshot: one pminfo per node, kept raw (see rawsnap)."""
    from . import rawsnap

    s = cfg.snapshot
    left = budget.left() - 0.3
    targets = [rawsnap.Target(n, cfg.host_spec(n)) for n in dict.fromkeys(job.nodes)]
    budget.step = f"pminfo of {len(targets)} host(s)"
    return rawsnap.take(targets, connect_timeout_s=min(float(s["connect_timeout_s"]), max(0.2, 0.4 * left)),
                        fetch_timeout_s=min(float(s["fetch_timeout_s"]), max(0.2, 0.6 * left)),
                        parallel=int(s["parallel"]), deadline_s=max(0.2, left))


def _summary_of(failed: list[tuple[str, str]], n: int, limit: int = 4) -> tuple[int, int, str]:
    text = "; ".join(f"{name}: {err}" for name, err in failed[:limit])
    if len(failed) > limit:
        text += f"; and {len(failed) - limit} more"
    return len(failed), n, text


def prolog(job, cfg, log: HookLog, budget: Budget) -> None:
    from . import spool

    hk = cfg.values["hooks"]
    budget.step = "opening the spool"
    spool_dir = spool.open_spool(hk["spool_dir"])
    if len(set(job.nodes)) <= int(hk["prolog_cli_max_hosts"]):
        snap = _take_raw(job, cfg, budget)
        from . import rawsnap
        nbad, n, why = _summary_of(rawsnap.failed_hosts(snap), len(snap["hosts"]))
    else:
        budget.step = "reading the node list"
        targets = _targets(job, cfg)
        snap = _take_snapshot(targets, cfg, budget)
        nbad, n, why = _hosts_summary(snap)
    if nbad == n:
        log.error(f"no host could be read at job start, nothing spooled: {why}")
        return
    if nbad:
        log.error(f"{nbad} of {n} hosts not read at job start: {why}")
    budget.step = "writing the begin snapshot"
    spool.put(spool_dir, job.job_id, snap)


# ---- epilog -----------------------------------------------------------------------------------

def _scheduler_timeout(hk: dict, budget: Budget) -> float:
    return max(0.1, min(float(hk["scheduler_timeout_s"]), budget.left() - 0.5))


def _deliver_slurm(job, text: str, fields: dict | None, budget: Budget, log: HookLog):
    from . import jobenv, safeappend

    if fields is None:
        return None  # scontrol failed: already logged
    uid, gid = job.uid, job.gid
    if uid is None:  # UserId=ann(1001)
        uid = _paren_int(fields.get("UserId"))
    if gid is None:
        gid = _paren_int(fields.get("GroupId"))
    path = jobenv.slurm_stdout(fields)
    if path is None:
        log.info("job has no output file (interactive?): report kept in the record only")
        return None
    budget.step = f"appending to {path}"
    res = safeappend.append_as_user(path, ("\n" + text).encode(), uid, gid, job.user,
                                    timeout_s=max(0.5, min(10.0, budget.left())))
    if not res.ok:
        log.error(f"report not appended to {path}: {res.reason}")
        return None
    return path, res.mode, uid, gid


def _paren_int(value: str | None) -> int | None:
    if value and value.endswith(")") and "(" in value:
        try:
            return int(value[value.rindex("(") + 1:-1])
        except ValueError:
            return None
    return None


def _deliver_pbs(text: str, out: TextIO):
    out.write("\n" + text)
    out.flush()
    return ("standard output", None, None, None)


def _write_html(job, doc: dict, hk: dict, delivered, cluster: str, budget: Budget, log: HookLog):
    from . import render, safeappend

    where = hk["html"]
    if where == "off":
        return None
    if where not in ("beside", "dir"):
        log.error(f"[hooks] html = {where!r}: expected \"beside\", \"dir\" or \"off\"; no HTML written")
        return None
    budget.step = "rendering the HTML report"
    html = render.render_html(doc).encode()
    if where == "dir":
        if not hk["html_dir"]:
            log.error("[hooks] html = \"dir\" needs html_dir; no HTML written")
            return None
        return _write_root_file(Path(hk["html_dir"]) / f"{cluster}-{job.job_id}.html", html)
    # beside the job's output, as the job user, never replacing anything
    if job.scheduler == "slurm":
        if not delivered:
            return None  # no output file, or one we refused: nothing to put HTML beside
        path, mode, uid, gid = delivered
        target = f"{path}.lustre.html"
    else:
        uid, gid, mode = job.uid, job.gid, 0o600
        if not job.workdir or not job.workdir.startswith("/"):
            log.info("no PBS_O_WORKDIR to put the HTML report beside the output; none written")
            return None
        target = os.path.join(job.workdir, f"{job.job_id}.lustre.html")
    budget.step = f"writing {target}"
    res = safeappend.create_as_user(target, html, uid, gid, job.user, mode=mode or 0o600,
                                    timeout_s=max(0.5, min(10.0, budget.left())))
    if not res.ok:
        log.error(f"HTML report not written to {target}: {res.reason}")
        return None
    return target


def _write_root_file(path: Path, data: bytes) -> Path:
    from .atomicfile import replacing

    path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
    with replacing(path, "wb", perm=0o644) as out:
        out.write(data)
    return path


def _preload(html: bool) -> None:
    try:
        from . import render, report  # noqa: F401
        if html:
            from . import charts  # noqa: F401
    except Exception:
        pass  # the real import, later, reports it


def epilog(job, cfg, log: HookLog, budget: Budget, out: TextIO) -> None:
    from . import snapshot, spool

    hk = cfg.values["hooks"]
    cluster = hk["cluster"] or job.cluster
    budget.step = "opening the spool"
    spool_dir = spool.open_spool(hk["spool_dir"])
    try:
        try:
            begin = spool.take(spool_dir, job.job_id)
        except spool.SpoolError as exc:
            log.error(f"{exc}; no report")
            return
        if begin is None:
            log.error("no begin snapshot in the spool (prolog not run, or it failed: see above); no report")
            return
        targets = [snapshot.HostTarget(name, h.spec) for name, h in begin.hosts.items()]
        # the report's heavier modules load while the end snapshot waits on the network
        threading.Thread(target=_preload, args=(hk["html"] != "off",), daemon=True).start()
        end = _take_snapshot(targets, cfg, budget, share=0.6)
        nbad, n, why = _hosts_summary(end)
        if nbad == n:
            log.error(f"no host could be read at job end: {why}; no report")
            spool.remove(spool_dir, job.job_id)
            return
        if nbad:
            log.error(f"{nbad} of {n} hosts not read at job end: {why}")
        if not any(h.ok for h in begin.hosts.values()):
            log.error("no host was read at job start; no report")
            spool.remove(spool_dir, job.job_id)
            return

        fields = shared = None
        if job.scheduler == "slurm":
            from . import jobenv
            fields = _attempt(log, budget, "asking Slurm for the job's output file", jobenv.slurm_job_fields,
                              job.job_id, _scheduler_timeout(hk, budget))
            if fields is not None and hk["check_shared_nodes"]:
                shared = _attempt(log, budget, "asking Slurm which other jobs used the nodes",
                                  jobenv.slurm_shared_nodes, job, fields, _scheduler_timeout(hk, budget))

        budget.step = "building the report"
        from . import render, report
        doc = report.build(begin, end, cfg, job_id=job.job_id, user=job.user, shared_hosts=shared or None)
        text = render.render_text(doc)

        if job.scheduler == "pbs":
            delivered = _attempt(log, budget, "writing the report to standard output", _deliver_pbs, text, out)
        else:
            delivered = _attempt(log, budget, "appending the report", _deliver_slurm, job, text, fields,
                                 budget, log)
        record = None
        if hk["records_dir"]:
            from . import records
            meta = {"scheduler": job.scheduler, "exit_code": job.exit_code,
                    "report_delivered": bool(delivered), **job.extra}
            record = _attempt(log, budget, "storing the job record", records.store, doc,
                              hk["records_dir"], cluster, job.job_id, meta)
        html = _attempt(log, budget, "writing the HTML report", _write_html, job, doc, hk, delivered,
                        cluster, budget, log)
        spool.remove(spool_dir, job.job_id)
        log.info(f"report {'to ' + delivered[0] if delivered else 'not delivered'}; "
                 f"HTML {html or 'none'}; record {record or 'none'}; {budget.elapsed():.2f} s")
    finally:
        budget.step = "expiring stale begin snapshots"
        removed = spool.expire(spool_dir, float(hk["spool_max_age_days"]) * 86400)
        if removed:
            log.info(f"expired {len(removed)} stale begin snapshot(s): {', '.join(removed[:5])}")


# ---- entry point ------------------------------------------------------------------------------

def exit_now(code: int = 0) -> None:
    """End the process at once: a fetch thread stuck on a hung host must not hold the hook."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(code)


def run(kind: str, scheduler: str, argv: list[str], config_path: str | None, *,
        fallback_log: str = "syslog", env: dict[str, str] | None = None,
        out: TextIO | None = None) -> int:
    """Do the hook's work; whatever happens, return 0 (the CLI's exit status)."""
    started = time.monotonic()
    env = dict(os.environ) if env is None else env
    out = sys.stdout if out is None else out
    log = HookLog(fallback_log, f"{scheduler} {kind}")
    timer: threading.Timer | None = None
    old_term = None
    budget = Budget(30.0, started)
    try:
        from . import jobenv
        try:
            job = jobenv.from_slurm(env) if scheduler == "slurm" else jobenv.from_pbs(argv, env)
        except jobenv.JobEnvError as exc:
            log.error(str(exc))
            return 0
        log.context = f"{scheduler} {kind} job {job.job_id}"
        if not job.acts_here:
            return 0  # another node of the job: the first one does the work for all of them
        from . import config
        try:
            cfg = config.load(config_path, strict=False)
        except Exception as exc:
            log.error(f"configuration unusable, nothing done: {exc}")
            return 0
        hk = cfg.values["hooks"]
        log.target = hk["log"]
        for problem in cfg.problems:
            log.error(f"config: {problem}")
        budget = Budget(float(hk[f"{kind}_timeout_s"]), started)

        def give_up(why: str) -> None:
            try:
                log.error(f"{why} while {budget.step}; gave up")
                out.flush()
            finally:
                os._exit(0)

        timer = threading.Timer(max(0.0, budget.left()),
                                give_up, (f"{kind}_timeout_s = {budget.bound_s:g} s reached",))
        timer.daemon = True
        timer.start()
        if threading.current_thread() is threading.main_thread():
            old_term = signal.signal(signal.SIGTERM, lambda signo, frame: give_up(f"terminated by signal {signo}"))
        if kind == "prolog":
            prolog(job, cfg, log, budget)
        else:
            epilog(job, cfg, log, budget, out)
    except BaseException as exc:  # whatever it is (even SystemExit from a library): logged, exit 0
        log.error(_describe(exc) if not _is_expected(exc) else str(exc))
    finally:
        if timer is not None:
            timer.cancel()
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)
    return 0


def limits(kind: str, scheduler: str, argv: list[str], config_path: str | None, *,
           fallback_log: str = "syslog", env: dict[str, str] | None = None, out: TextIO | None = None) -> int:
    """`prolog|epilog --limits`: what the wrapper needs, from the config as run() reads it:
    "TERM KILL BOUND LOG" (timeout -k KILL TERM; BOUND for its log line; LOG: [hooks] log)."""
    from . import config
    try:
        hk = config.load(config_path, strict=False).values["hooks"]
        bound, target = float(hk[f"{kind}_timeout_s"]), hk["log"]
    except Exception:  # unusable: run() will say so, in the fallback log, at once
        bound, target = float(config.DEFAULTS["hooks"][f"{kind}_timeout_s"]), fallback_log
    term, kill = wrapper_times(bound)
    (sys.stdout if out is None else out).write(f"{term!r} {kill!r} {bound!r} {target}\n")
    return 0
