"""The hooks' spool: begin snapshots kept from a job's prolog until its epilog.

One file per job, `<jobid>.begin.json` (a snapshot file), in a directory that must be root's
alone (mode 0700, owned by the hook's uid, not a symlink): a spool that others can write could
be fed forged begin snapshots or links. A missing spool is created; a wrong one is refused.
Begin snapshots whose epilog never came (node crash, hook added mid-job, ...) expire by age,
both here (each epilog sweeps) and by tmpfiles.d (systemd/lustre-jobreport.conf).
Each begin snapshot also names its job inside (its "job_id", snapformat): one found under a job's
name that names another (a file renamed or copied there) is refused, not reported as this job's.

A PBS job whose start every node's agent keeps (the execjob_begin hook) has instead an empty
*mark*, `<jobid>.jobview`, on its primary host, from the hook until the epilogue: it tells the
prologue not to snapshot and the epilogue to read the agents (hooksnap.job_view). Marks expire
like begin snapshots.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from pathlib import Path

from ..errors import JobReportError

SUFFIX = ".begin.json"
MARK_SUFFIX = ".jobview"


class SpoolError(JobReportError):
    """The spool or a file in it is unusable; the message says why."""


def open_spool(path: str | Path, *, create: bool = True) -> Path:
    """Check (and if missing, create) the spool directory; return it."""
    path = Path(path)
    if not path.is_absolute():
        raise SpoolError(f"spool {path}: must be an absolute path")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if not create:
            raise SpoolError(f"spool {path} does not exist") from None
        try:
            path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass  # another hook on this node made it meanwhile
        except OSError as exc:
            raise SpoolError(f"cannot create spool {path}: {exc.strerror}") from None
        st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise SpoolError(f"spool {path} is a symbolic link; refusing it")
    if not stat.S_ISDIR(st.st_mode):
        raise SpoolError(f"spool {path} is not a directory")
    if st.st_uid != os.geteuid():
        raise SpoolError(f"spool {path} is owned by uid {st.st_uid}, not {os.geteuid()}; refusing it")
    if st.st_mode & 0o077:
        raise SpoolError(f"spool {path} has mode {stat.S_IMODE(st.st_mode):04o}, "
                         "must be 0700 (others could plant or read snapshots); refusing it")
    return path


def begin_path(spool: Path, job_id: str) -> Path:
    return spool / f"{job_id}{SUFFIX}"


def put(spool: Path, job_id: str, snap) -> Path:
    """Write the begin snapshot atomically (temp file + rename in the spool), naming its job
    (unless the id is one a snapshot file cannot hold: snapformat.file_job_id): what
    snapshot.fetch_all returned (a small job's pminfo answers stay raw; a large one's values
    are let go as they are stacked) or a stacked Snapshot."""
    from ..acquire import snapformat

    path = begin_path(spool, job_id)
    named = snapformat.file_job_id(job_id)
    try:
        if hasattr(snap, "write"):
            snap.write(path, consume=True, job_id=named)
        else:
            import dataclasses

            from ..acquire import snapfile
            snapfile.write(dataclasses.replace(snap, job_id=named), path)
    except OSError as exc:
        raise SpoolError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path


def take(spool: Path, job_id: str):
    """The job's begin snapshot, or None if there is none. Taken: the file is unlinked once open
    and read from the open file, so nothing that happens after (a failed report, the hook
    stopped at its bound, even a SIGKILL while reading) leaves it behind. A damaged one, or one
    naming another job, is raised (one naming no job was spooled before begin snapshots named
    theirs, or is of a job whose id a file cannot hold: taken as it is)."""
    from ..acquire import snapfile

    path = begin_path(spool, job_id)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:   # a symlink (ELOOP) or worse planted in the spool
        _unlink(path)
        what = "a symbolic link" if exc.errno == errno.ELOOP else exc.strerror
        raise SpoolError(f"{path} is not a regular file ({what}); removed it") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        _unlink(path)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            raise SpoolError(f"{path} is not a regular file of uid {os.geteuid()}; removed it")
        try:
            snap = snapfile.read(path, opened=f)
        except JobReportError as exc:
            raise SpoolError(f"corrupt begin snapshot removed: {exc}") from None
        except snapfile.snapformat.TooLargeForMemory as exc:   # within the caps, too large for this process: not corrupt
            raise SpoolError(f"begin snapshot removed: {exc}") from None
    if snap.job_id is not None and snap.job_id != job_id:
        raise SpoolError(f"{path} is the begin snapshot of job {snap.job_id}, not of job {job_id}; removed it")
    return snap


def remove(spool: Path, job_id: str) -> None:
    _unlink(begin_path(spool, job_id))


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError as exc:
        if exc.errno != errno.ENOENT:
            raise


def mark_path(spool: Path, job_id: str) -> Path:
    return spool / f"{job_id}{MARK_SUFFIX}"


def mark(spool: Path, job_id: str) -> None:
    """Mark the job as one whose start the agents keep (an empty root file; one already there,
    of a requeued job's earlier run, stays)."""
    path = mark_path(spool, job_id)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600))
    except FileExistsError:
        if not marked(spool, job_id):
            raise SpoolError(f"{path} is not a regular file of uid {os.geteuid()}") from None
    except OSError as exc:
        raise SpoolError(f"cannot write {path}: {exc.strerror or exc}") from None


def marked(spool: Path, job_id: str) -> bool:
    """Whether the job is marked: a regular file of this uid (a link or anything else planted
    there is not a mark)."""
    try:
        st = os.lstat(mark_path(spool, job_id))
    except FileNotFoundError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid()


def unmark(spool: Path, job_id: str) -> bool:
    """Remove the job's mark (whatever is at its name); whether it was a mark."""
    was = marked(spool, job_id)
    _unlink(mark_path(spool, job_id))
    return was


def expire(spool: Path, max_age_s: float, now: float | None = None) -> list[str]:
    """Remove begin snapshots and marks (and temp files of interrupted writes) older than max_age_s."""
    now = time.time() if now is None else now
    removed = []
    with os.scandir(spool) as entries:
        for e in entries:
            if not (e.name.endswith((SUFFIX, MARK_SUFFIX)) or (e.name.startswith(".") and SUFFIX in e.name)):
                continue
            try:
                st = e.stat(follow_symlinks=False)
                if now - st.st_mtime > max_age_s:
                    os.unlink(e.path)
                    removed.append(e.name)
            except FileNotFoundError:
                continue
    return sorted(removed)
