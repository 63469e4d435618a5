"""Where the epilog's report goes: the text to the job's output (Slurm: appended to the StdOut
file of `scontrol show job`, as the job user; PBS: standard output, which MoM appends to the
job's output), the HTML beside it (as the job user, never replacing anything) or into
[hooks] html_dir (root's). The HTML's path is known before the text is written (html_target),
so the text's last line says it; if the HTML then cannot be written there, one more line says
so (html_not_written). Never a word of error to the job: every refusal is one log line.
"""

from __future__ import annotations

import os
from pathlib import Path
from dataclasses import dataclass
from typing import TextIO

from .budget import Budget
from .hooklog import HookLog

PRIVATE_MODE = 0o600        # the HTML's mode when there is no output file to copy it from (PBS)


@dataclass(frozen=True)
class Delivered:
    """The text report reached the job: where, and as whom (the HTML beside it follows suit)."""
    where: str                  # the job's output file, or "standard output" (PBS)
    mode: int | None = None     # that file's permission bits: the HTML beside it gets the same
    uid: int | None = None      # the job user it was written as
    gid: int | None = None


def to_slurm(job, text: str, fields: dict | None, budget: Budget, log: HookLog) -> Delivered | None:
    """Append to the job's StdOut file as the job user; None if there is none or it is refused."""
    from . import jobenv
    from ..safeio import safeappend

    if fields is None:
        return None  # scontrol failed: already logged
    uid, gid = jobenv.slurm_ids(fields)
    uid, gid = job.uid if job.uid is not None else uid, job.gid if job.gid is not None else gid
    path = jobenv.slurm_stdout(fields)
    if path is None:
        log.info("job has no output file (interactive?): report kept in the record only")
        return None
    budget.step = f"appending to {path}"
    res = safeappend.append_as_user(path, ("\n" + text).encode(), uid, gid, job.user,
                                    timeout_s=budget.for_writer())
    if not res.ok:
        log.error(f"report not appended to {path}: {res.reason}")
        return None
    return Delivered(path, res.mode, uid, gid)


def to_pbs(text: str, out: TextIO) -> Delivered:
    out.write("\n" + text)
    out.flush()
    return Delivered("standard output")


def html_target(job, hk: dict, output: str | None, cluster: str) -> str | None:
    """Where html() writes the HTML report, before anything is written: [hooks] html_dir's
    <cluster>-<jobid>.html; beside the output, Slurm: <output>.lustre.html (output: the job's
    output file, None when it has none), PBS: $PBS_O_WORKDIR/<jobid>.lustre.html; None: nowhere."""
    if hk["html"] == "off":
        return None
    if hk["html"] == "dir":
        return str(Path(hk["html_dir"], _dir_name(job, cluster)))     # as securedir.write names it
    if job.scheduler == "slurm":
        return f"{output}.lustre.html" if output else None
    if not job.workdir or not job.workdir.startswith("/"):
        return None
    return os.path.join(job.workdir, f"{job.job_id}.lustre.html")


def _dir_name(job, cluster: str) -> str:
    return f"{cluster}-{job.job_id}.html"


def html(job, doc: dict, hk: dict, delivered: Delivered | None, cluster: str, budget: Budget,
         log: HookLog) -> str | None:
    """Write the HTML report where [hooks] html says (html_target); its path, or None (logged if
    refused)."""
    from ..report import view as render

    if hk["html"] == "off":
        return None
    if hk["html"] == "beside":
        # Slurm: no output file, or one we refused: nothing to put HTML beside
        target = html_target(job, hk, delivered.where if delivered else None, cluster)
        if target is None:
            if job.scheduler == "pbs":
                log.info("no PBS_O_WORKDIR to put the HTML report beside the output; none written")
            return None
    budget.step = "rendering the HTML report"
    data = render.render_html(doc).encode()
    if hk["html"] == "dir":   # root's, checked like the records
        from ..safeio import securedir
        budget.step = f"writing into {hk['html_dir']}"
        return str(securedir.write(hk["html_dir"], (), _dir_name(job, cluster), data))
    return _create_as_user(job, target, data, delivered, budget, log)


def html_not_written(job, delivered: Delivered, out: TextIO, budget: Budget, log: HookLog) -> None:
    """The text said where its HTML report would be and it is not there: one more line says so."""
    from ..report import view as render

    line = render.HTML_NOT_WRITTEN + "\n"
    if delivered.where == "standard output":
        out.write(line)
        out.flush()
        return
    from ..safeio import safeappend
    budget.step = f"appending to {delivered.where}"
    res = safeappend.append_as_user(delivered.where, line.encode(), delivered.uid, delivered.gid, job.user,
                                    timeout_s=budget.for_writer())
    if not res.ok:
        log.error(f"line on the HTML report not appended to {delivered.where}: {res.reason}")


def _create_as_user(job, target: str, data: bytes, delivered: Delivered | None, budget: Budget,
                    log: HookLog) -> str | None:
    from ..safeio import safeappend

    if job.scheduler == "slurm" and delivered:
        uid, gid, mode = delivered.uid, delivered.gid, delivered.mode or PRIVATE_MODE
    else:
        uid, gid, mode = job.uid, job.gid, PRIVATE_MODE
    budget.step = f"writing {target}"
    res = safeappend.create_as_user(target, data, uid, gid, job.user, mode=mode, timeout_s=budget.for_writer())
    if not res.ok:
        log.error(f"HTML report not written to {target}: {res.reason}")
        return None
    return target
