"""Whole-file writes that a reader never sees half done: a temp file beside the target, renamed
over it when complete, removed if writing fails. Used for spool snapshots, job records and HTML
reports. replacing_at works inside a directory given by its file descriptor (securedir: a
directory checked once and never looked up by name again). Light on imports: the prolog writes
through it."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator

TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY
TEMP_TRIES = 100


@contextmanager
def replacing_at(dir_fd: int, name: str, mode: str = "w", perm: int | None = None, *,
                 suffix: str = "", durable: bool = False) -> Iterator[IO]:
    """Yield a file open for writing; on a clean exit it replaces `name` in the directory
    dir_fd. perm: the file's mode (default 0600, whatever the umask). suffix: ends the temp
    file's name (".<name>.<hex><suffix>"), for a cleanup that tells such files by it.
    durable: the file is fsynced before the rename and the directory after it, so the new
    file has survived a crash once the with statement is left."""
    for _ in range(TEMP_TRIES):
        tmp = f".{name}.{os.urandom(4).hex()}{suffix}"
        try:
            fd = os.open(tmp, TEMP_FLAGS, 0o600, dir_fd=dir_fd)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"no free temporary name for {name}")
    try:
        with os.fdopen(fd, mode) as out:
            os.fchmod(out.fileno(), 0o600 if perm is None else perm)
            yield out
            if durable:
                out.flush()
                os.fsync(out.fileno())
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        if durable:
            os.fsync(dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except FileNotFoundError:
            pass
        raise


@contextmanager
def replacing(path: Path, mode: str = "w", perm: int | None = None) -> Iterator[IO]:
    """replacing_at for a path: its directory as it is now (e.g. the root-only spool)."""
    dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        with replacing_at(dir_fd, path.name, mode, perm) as out:
            yield out
    finally:
        os.close(dir_fd)
