"""Write into a job user's files from a root hook without lending root to the path.

The job controls its output path and everything around it: it can swap its output file for a
symlink to /etc/shadow, a FIFO, a hard link or someone else's file (notes/slurm.md §6). So the
write happens in a forked child that looks up the job user's groups (NSS: LDAP, NIS, ... may
hang, so not in the root hook itself), becomes the job user (supplementary groups, gid, uid:
all of them, irrevocably), then
- append: opens O_WRONLY|O_APPEND|O_NOFOLLOW|O_NOCTTY|O_NONBLOCK (never O_CREAT: a missing
  file stays missing), fstat()s the open file and writes only if it is a regular file owned by
  the job user with exactly one link;
- create: opens O_CREAT|O_EXCL|O_NOFOLLOW (never replaces anything), same checks; if the write
  fails (a full filesystem, a quota), it removes the file it made (the same inode, checked), so
  a later run can create it.
O_NONBLOCK keeps a FIFO without a reader from hanging the open; the child also has an alarm.
The parent waits a bounded time and never raises: it returns an Outcome with the reason.
"""

from __future__ import annotations

import errno
import math
import os
import select
import signal
import stat
import time
from dataclasses import dataclass

APPEND_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_NOCTTY | os.O_NONBLOCK | os.O_CLOEXEC
CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_NOCTTY | os.O_CLOEXEC

_WHY = {errno.ELOOP: "is a symbolic link", errno.ENOENT: "does not exist (not created)",
        errno.EACCES: "is not writable by the job user", errno.EPERM: "is not writable by the job user",
        errno.EISDIR: "is a directory", errno.ENXIO: "is a FIFO or socket without a reader",
        errno.EEXIST: "already exists (not replaced)", errno.ENOTDIR: "has a non-directory in its path",
        errno.EROFS: "is on a read-only filesystem", errno.ENOSPC: "filesystem is full",
        errno.EDQUOT: "job user's quota is exceeded", errno.ETXTBSY: "is a running program"}


@dataclass(frozen=True)
class Outcome:
    ok: bool
    reason: str                 # "" when ok
    mode: int | None = None     # permission bits of the file written (for a sibling file)

    def __str__(self) -> str:
        return "ok" if self.ok else self.reason


def _why(exc: OSError) -> str:
    return _WHY.get(exc.errno, exc.strerror or str(exc))


def _check_and_write(fd: int, data: bytes, uid: int) -> str:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        kind = ("a FIFO" if stat.S_ISFIFO(st.st_mode) else
                "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else
                "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
        return f"refused: is {kind}"
    if st.st_uid != uid:
        return f"refused: is owned by uid {st.st_uid}, not the job user ({uid})"
    if st.st_nlink != 1:
        return f"refused: has {st.st_nlink} hard links"
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]
    return f"ok {stat.S_IMODE(st.st_mode):o}"


def _become(uid: int, gid: int, groups: list[int]) -> None:
    os.setgroups(groups)
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid):
        raise OSError(errno.EPERM, "could not drop privileges")


def _child(op: str, path: str, data: bytes, uid: int, gid: int, user: str | None, mode: int,
           alarm_s: int) -> str:
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.alarm(max(1, alarm_s))      # a hung NFS open or NSS lookup kills the child, not the hook
    try:
        _become(uid, gid, _groups_of(user, gid))
    except OSError as exc:
        return f"refused: cannot become uid {uid}/gid {gid}: {exc.strerror}"
    os.umask(0)
    try:
        fd = os.open(path, APPEND_FLAGS if op == "append" else CREATE_FLAGS, mode)
    except OSError as exc:
        return f"refused: {_why(exc)}"
    try:
        return _check_and_write(fd, data, uid)
    except OSError as exc:
        if op == "create":
            _remove_own(path, fd)
        return f"failed: {_why(exc)}"
    finally:
        os.close(fd)


def _remove_own(path: str, fd: int) -> None:
    """Unlink path if it still is the file open on fd (the one this child created)."""
    try:
        mine, now = os.fstat(fd), os.lstat(path)
        if (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino):
            os.unlink(path)
    except OSError:
        pass  # gone or replaced meanwhile: not ours to remove


def _groups_of(user: str | None, gid: int) -> list[int]:
    """The user's own groups (as the job had them), or just its gid; never root's."""
    if user:
        try:
            return sorted(set(os.getgrouplist(user, gid)))
        except (OSError, KeyError):
            pass
    return [gid]


def _as_user(op: str, path: str, data: bytes, uid: int, gid: int, user: str | None,
             mode: int, timeout_s: float) -> Outcome:
    if uid is None or gid is None:
        return Outcome(False, "job uid/gid unknown: nothing written")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: never returns into the caller
        status = 1
        try:
            os.close(r)
            # the child's alarm is the backstop for a parent that is gone: a second after the
            # parent's own bound, so the parent gives up first and says why
            msg = _child(op, path, data, uid, gid, user, mode, math.ceil(timeout_s) + 1)
            os.write(w, msg.encode("utf-8", "replace")[:4000])
            status = 0
        finally:
            os._exit(status)
    os.close(w)
    deadline = time.monotonic() + timeout_s
    chunks = []
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([r], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                _reap(pid, 1.0)
                return Outcome(False, f"no answer within {timeout_s:g} s (hung filesystem or user lookup?)")
            chunk = os.read(r, 4096)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(r)
    _reap(pid, max(0.5, deadline - time.monotonic()))
    msg = b"".join(chunks).decode("utf-8", "replace")
    if msg.startswith("ok"):
        return Outcome(True, "", int(msg.split()[1], 8))
    return Outcome(False, msg or "writer died without an answer")


def _reap(pid: int, wait_s: float) -> None:
    end = time.monotonic() + wait_s
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return
        if done or time.monotonic() > end:
            return
        time.sleep(0.005)


def append_as_user(path: str, data: bytes, uid: int, gid: int, user: str | None = None,
                   timeout_s: float = 10.0) -> Outcome:
    """Append data to an existing regular file of the job user, as that user."""
    return _as_user("append", path, data, uid, gid, user, 0, timeout_s)


def create_as_user(path: str, data: bytes, uid: int, gid: int, user: str | None = None,
                   mode: int = 0o600, timeout_s: float = 10.0) -> Outcome:
    """Create a new file (never replacing one) with data, as the job user."""
    return _as_user("create", path, data, uid, gid, user, mode & 0o666, timeout_s)
