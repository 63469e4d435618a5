"""Where the epilog's report goes: the text to the job's output (Slurm: appended to the StdOut
file of `scontrol show job`, as the job user; PBS: standard output, which MoM appends to the
job's output), the HTML beside it (as the job user, never replacing anything) or into
[hooks] html_dir (root's). Never a word of error to the job: every refusal is one log line.
"""

from __future__ import annotations

import os
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


def html(job, doc: dict, hk: dict, delivered: Delivered | None, cluster: str, budget: Budget,
         log: HookLog) -> str | None:
    """Write the HTML report where [hooks] html says; its path, or None (logged if refused)."""
    from ..report import view as render

    if hk["html"] == "off":
        return None
    if hk["html"] == "beside":
        target = _beside(job, delivered, log)
        if target is None:
            return None
    budget.step = "rendering the HTML report"
    data = render.render_html(doc).encode()
    if hk["html"] == "dir":   # root's, checked like the records
        from ..safeio import securedir
        budget.step = f"writing into {hk['html_dir']}"
        return str(securedir.write(hk["html_dir"], (), f"{cluster}-{job.job_id}.html", data))
    return _create_as_user(job, target, data, delivered, budget, log)


def _beside(job, delivered: Delivered | None, log: HookLog) -> str | None:
    """Slurm: <output>.lustre.html; PBS: $PBS_O_WORKDIR/<jobid>.lustre.html."""
    if job.scheduler == "slurm":
        # no output file, or one we refused: nothing to put HTML beside
        return f"{delivered.where}.lustre.html" if delivered else None
    if not job.workdir or not job.workdir.startswith("/"):
        log.info("no PBS_O_WORKDIR to put the HTML report beside the output; none written")
        return None
    return os.path.join(job.workdir, f"{job.job_id}.lustre.html")


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
