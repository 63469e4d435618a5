"""Whole-file writes that a reader never sees half done: a temp file beside the target, renamed
over it when complete, removed if writing fails. Used for spool snapshots, job records and HTML
reports. Light on imports: the prolog writes through it."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator


@contextmanager
def replacing(path: Path, mode: str = "w", perm: int | None = None) -> Iterator[IO]:
    """Yield a file open for writing; on a clean exit it replaces path. perm: the file's mode
    (mkstemp creates 0600, so a file others must read needs e.g. 0o644)."""
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, mode) as out:
            yield out
        if perm is not None:
            os.chmod(tmp, perm)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
