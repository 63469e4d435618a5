"""Directories root writes into for the hooks (records_dir and its YYYY/MM/DD, html_dir),
checked like the spool and walked so that no one else can redirect the write.

The configured directory and every directory under it that the hook walks or creates must be a
directory (not a symbolic link), owned by the hook's euid and not writable by group or others:
otherwise a user could plant a link (records/2026 -> /etc) and root would write through it. The
walk opens one component at a time relative to the parent's file descriptor with O_NOFOLLOW
and checks what it opened (fstat), so a component swapped for a link between two steps is
refused, not followed; the file is then written (temp file + rename) inside the last
descriptor. The configured directory's parents are the admin's and are followed as they are;
missing directories are created 0755 (whatever the umask), files written 0644.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Collection, Sequence

from .atomicfile import replacing_at
from ..errors import JobReportError

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
DIR_MODE = 0o755
FILE_MODE = 0o644


class UnsafeDirError(JobReportError):
    """A directory the hook must not write into; the message names it and says why (.why: the
    reason alone)."""

    def __init__(self, path: Path, why: str):
        super().__init__(f"{path}: {why}; refusing it")
        self.why = why


def _refuse(path: Path, why: str) -> UnsafeDirError:
    return UnsafeDirError(path, why)


def _open_child(parent_fd: int, name: str, path: Path, checked: bool, create: bool = True,
                owners: Collection[int] | None = None) -> int:
    """Open (creating if missing, if create) the directory `name` in parent_fd; checked: not
    through a link, owned by one of `owners` (default: the euid alone) and not writable by
    others."""
    flags = DIR_FLAGS | (os.O_NOFOLLOW if checked else 0)
    created = False
    try:
        fd = os.open(name, flags, dir_fd=parent_fd)
    except FileNotFoundError:
        if not create:
            raise
        try:
            os.mkdir(name, DIR_MODE, dir_fd=parent_fd)
            created = True
        except FileExistsError:
            pass  # another hook made it meanwhile: it is checked below like any other
        fd = _open_existing(parent_fd, name, flags, path)
    except OSError as exc:
        if exc.errno != errno.ENOTDIR:
            raise
        raise _not_a_dir(parent_fd, name, path) from None
    try:
        if created:
            os.fchmod(fd, DIR_MODE)
        if checked:
            _check(os.fstat(fd), path, owners)
        return fd
    except BaseException:
        os.close(fd)
        raise


def _open_existing(parent_fd: int, name: str, flags: int, path: Path) -> int:
    try:
        return os.open(name, flags, dir_fd=parent_fd)
    except NotADirectoryError:
        raise _not_a_dir(parent_fd, name, path) from None


def _not_a_dir(parent_fd: int, name: str, path: Path) -> UnsafeDirError:
    """O_DIRECTORY|O_NOFOLLOW says ENOTDIR for a link too: tell which it is."""
    st = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    return _refuse(path, "is a symbolic link" if stat.S_ISLNK(st.st_mode) else "is not a directory")


def _check(st: os.stat_result, path: Path, owners: Collection[int] | None = None) -> None:
    owners = (os.geteuid(),) if owners is None else owners
    if st.st_uid not in owners:
        raise _refuse(path, f"owned by uid {st.st_uid}, not {' or '.join(map(str, sorted(set(owners))))}")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise _refuse(path, f"mode {stat.S_IMODE(st.st_mode):04o} lets others write in it")


def _plain(names: Sequence[str]) -> bool:
    return all(n not in ("", ".", "..") and "/" not in n and "\0" not in n for n in names)


def open_dir(base: str | Path, subdirs: Sequence[str] = (), create: bool = True,
             owners: Collection[int] | None = None) -> int:
    """A file descriptor of base/subdirs..., every level from base down checked (and created
    if missing, if create: else FileNotFoundError). owners: the uids a checked level may
    belong to (default: the euid alone; a reader may trust root's too). The caller closes it."""
    base = Path(base)
    if not base.is_absolute() or len(base.parts) < 2 or not _plain(base.parts[1:]) or not _plain(subdirs):
        raise _refuse(Path(base, *subdirs), "not an absolute path of plain names")
    parts = base.parts[1:] + tuple(subdirs)
    fd = os.open("/", DIR_FLAGS)
    try:
        for i, name in enumerate(parts):
            path = Path("/", *parts[:i + 1])
            child = _open_child(fd, name, path, checked=i >= len(base.parts) - 2, create=create, owners=owners)
            os.close(fd)
            fd = child
        return fd
    except BaseException:
        os.close(fd)
        raise


def write(base: str | Path, subdirs: Sequence[str], name: str, data: bytes) -> Path:
    """base/subdirs.../name replaced atomically with data (mode 0644), in checked directories."""
    if not _plain([name]):
        raise _refuse(Path(base, *subdirs, name), "not a plain file name")
    fd = open_dir(base, subdirs)
    try:
        with replacing_at(fd, name, "wb", perm=FILE_MODE) as out:
            out.write(data)
    finally:
        os.close(fd)
    return Path(base, *subdirs, name)
