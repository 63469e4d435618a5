"""`lustre-jobreport epilog`'s work: read the job's hosts again, build the report, deliver it to
the job (delivery), write the HTML where configured, store the job record, drop the begin
snapshot and expire stale ones. A step that fails is one log line and costs only what needs it."""

from __future__ import annotations

import threading
from typing import TextIO

from . import hooksnap
from .budget import Budget
from .hooklog import HookLog
from .steps import attempt, read_enough
from ..errors import JobReportError

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

    fields = attempt(log, budget, "asking Slurm for the job's output file", jobenv.slurm_job_fields,
                      job.job_id, budget.for_scheduler(float(hk["scheduler_timeout_s"])))
    shared = None
    if fields is not None and hk["check_shared_nodes"]:
        shared = attempt(log, budget, "asking Slurm which other jobs used the nodes", jobenv.slurm_shared_nodes,
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
    if begin is None:
        # what the fetch itself uses (the timeline's sums), imported before the preloading thread
        # starts: two threads importing the same modules at once can see one half made
        from ..report import timeline  # noqa: F401
    threading.Thread(target=_preload, args=(hk["html"] != "off",), daemon=True).start()   # during the fetch
    end = hooksnap.end(begin, job, cfg, budget) if begin is not None else hooksnap.end_job_view(job, cfg, budget)
    if not read_enough(end, "end", log, "no report"):
        return
    fields, shared = _slurm_facts(job, hk, log, budget) if job.scheduler == "slurm" else (None, None)

    from . import jobenv
    from ..report import view as render, document as report
    facts = (jobenv.slurm_facts(fields, env, job) if job.scheduler == "slurm"
             else jobenv.pbs_epilogue_facts(argv, job))
    doc = attempt(log, budget, "building the report", lambda: report.from_delta(
        hooksnap.job_delta(begin, end.snap, job.job_id), cfg, job_id=job.job_id, user=job.user,
        shared_hosts=shared or None, facts=facts, timeline=end.snap.timeline,
        untimed=None if begin is None else hooksnap.why_snapshots(job, cfg)))
    if doc is None:
        return
    planned = delivery.html_target(job, hk, jobenv.slurm_stdout(fields) if fields else None, cluster)
    text = attempt(log, budget, "rendering the report", render.render_text, doc, planned)
    delivered = None
    if text is not None and job.scheduler == "pbs":
        delivered = attempt(log, budget, "writing the report to standard output", delivery.to_pbs, text, out)
    elif text is not None:
        delivered = attempt(log, budget, "appending the report", delivery.to_slurm, job, text, fields, budget, log)
    record = None
    if hk["records_dir"]:
        from ..records import store as records
        meta = {"scheduler": job.scheduler, "exit_code": job.exit_code,
                "report_delivered": bool(delivered), **job.extra}
        record = attempt(log, budget, "storing the job record", records.store, doc,
                          hk["records_dir"], cluster, job.job_id, meta)
    html = (owner := jobenv.with_owner(job, hk, log, budget)) and attempt(   # PBS: its ids from NSS, now
        log, budget, "writing the HTML report", delivery.html, owner, doc, hk, delivered, cluster, budget, log)
    if delivered and planned and html != planned:
        attempt(log, budget, "saying the HTML report is missing", delivery.html_not_written, job, delivered, out,
                budget, log)
    log.info(f"report {'to ' + delivered.where if delivered else 'not delivered'}; "
             f"HTML {html or 'none'}; record {record or 'none'}; {budget.elapsed():.2f} s")



def epilog(job, cfg, log: HookLog, budget: Budget, out: TextIO, argv: list[str] | None = None,
           env: dict[str, str] | None = None) -> None:
    """argv, env: the hook's own (the scheduler's facts about the job for its record)."""
    argv, env = argv or [], env or {}
    hk = cfg.values["hooks"]
    if job.every_node and hooksnap.job_view(job, cfg):   # nothing spooled: the agents kept the job's start
        return _report(job, cfg, log, budget, out, None, argv, env)
    budget.step = "opening the spool"
    spool_dir = hooksnap.open_spool(hk)
    try:
        if not job.every_node and hooksnap.take_mark(spool_dir, job.job_id):   # PBS: the begin hook's
            return _report(job, cfg, log, budget, out, None, argv, env)
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
        budget.step = "expiring stale begin snapshots and marks"
        removed = hooksnap.expire(spool_dir, hk)
        if removed:
            log.info(f"expired {len(removed)} stale spool file(s): {', '.join(removed[:5])}")
