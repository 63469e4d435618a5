"""Job records: each job's JSON report document, kept for `compare` and later compaction.

Layout: <records_dir>/YYYY/MM/DD/<cluster>-<jobid>.json, the date being the job's end (UTC).
A record is the report document (DESIGN §3, "schema" inside) plus "kind": "record" and a
"record" object saying where it came from. Written atomically (temp file + rename) by root into
a root-owned tree, every directory of it checked and walked without following links (securedir);
directories 0755 and files 0644, so that admins' tools can read them.

Readers (records compact, compare) walk only that layout (iter_records): YYYY/MM/DD directories
and the *.json files in them, never through a symbolic link, never a temp file of a write in
progress (atomicfile names those ".<name>.<hex>": a leading dot and no .json suffix), never
records_dir/.compacted or .unreadable (where compaction moves records it is done with). Every
read is bounded (MAX_RECORD_BYTES). Given a DirCheck, the walk checks each directory before it
lists it, as the writers' (securedir): one that anyone else could have written records into is
skipped, and named. docs/records.md describes the files.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..safeio import securedir
from ..acquire import snapformat
from ..errors import JobReportError

# A record of a 12,000-node job with its per-host table is a few MiB; anything near this is not
# a report document (and would cost a compaction run its memory).
MAX_RECORD_BYTES = 64 << 20

# What the record's file name is made of (config.py checks [hooks] cluster the same way).
CLUSTER_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
COMPACTED = ".compacted"      # records_dir/.compacted/YYYY/MM/DD/: records compaction is done with
JOB_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\[\]+@:-]{0,127}")
_YEAR_RE = re.compile(r"\d{4}")
_TWO_RE = re.compile(r"\d{2}")
READ_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY


class RecordFileError(JobReportError):
    """A record (or report) file that cannot be read as JSON: str() is "<path>: <reason>",
    .reason the reason alone, .stat what the file was when it was opened (None if it was not)."""

    def __init__(self, path: str | Path, reason: str, st: os.stat_result | None = None):
        super().__init__(f"{path}: {reason}")
        self.path, self.reason, self.stat = Path(path), reason, st


def utc_time(text: Any) -> datetime | None:
    """An ISO date and time as an aware UTC datetime ('Z' or an offset; a time without one is
    UTC, never the local time zone); None if it is not one. The one reading of a record's times
    (records' day directories, rows, compare's selections)."""
    if not isinstance(text, str):
        return None
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t.astimezone(timezone.utc) if t.tzinfo else t.replace(tzinfo=timezone.utc)


def _day(doc: dict) -> datetime:
    """The job's end, as its rows read it; now if the record has none."""
    return utc_time((doc.get("job") or {}).get("end")) or datetime.now(timezone.utc)


def _where(doc: dict, cluster: str, job_id: str) -> tuple[tuple[str, str, str], str]:
    """(YYYY, MM, DD) of the job's end, and the record's file name."""
    day = _day(doc)
    return (f"{day:%Y}", f"{day:%m}", f"{day:%d}"), f"{cluster}-{job_id}.json"


def record_path(records_dir: str | Path, doc: dict, cluster: str, job_id: str) -> Path:
    days, name = _where(doc, cluster, job_id)
    return Path(records_dir, *days, name)


def as_record(doc: dict, cluster: str, job_id: str, meta: dict[str, Any] | None = None) -> dict:
    """The record document store() writes for this report."""
    record = {k: v for k, v in doc.items() if k not in ("kind", "record")}
    record["kind"] = "record"
    record["record"] = {"cluster": cluster, "job_id": job_id, "stored_at": round(time.time(), 3),
                        **(meta or {})}
    return record


def write(record: dict, records_dir: str | Path) -> Path:
    rec = record["record"]
    days, name = _where(record, rec["cluster"], rec["job_id"])
    data = (json.dumps(record, separators=(",", ":")) + "\n").encode()
    return securedir.write(records_dir, days, name, data)


def store(doc: dict, records_dir: str | Path, cluster: str, job_id: str,
          meta: dict[str, Any] | None = None) -> Path:
    """Write the record at record_path(...); the directories are checked (securedir): a refused
    one raises securedir.UnsafeDirError and nothing is written."""
    return write(as_record(doc, cluster, job_id, meta), records_dir)


# -- reading ---------------------------------------------------------------------------------

def read_bytes(path: str | Path, *, follow: bool = False,
               limit: int = MAX_RECORD_BYTES) -> tuple[bytes, os.stat_result]:
    """The file's bytes (at most `limit`) and its fstat. follow=False: a symbolic link, or
    anything but a regular file, is refused (records_dir's files); follow=True reads what the
    path names (a report an admin points `records add` at, even a pipe). RecordFileError."""
    flags = READ_FLAGS | (0 if follow else os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise RecordFileError(path, "no such file") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow:
            raise RecordFileError(path, "a symbolic link (not followed)") from None
        raise RecordFileError(path, f"cannot open: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise RecordFileError(path, "a directory, not a record file", st)
        if not follow and not stat.S_ISREG(st.st_mode):
            raise RecordFileError(path, "not a regular file", st)
        if stat.S_ISREG(st.st_mode) and st.st_size > limit:
            raise RecordFileError(path, f"{st.st_size:,} bytes, over the {_mib(limit)} a record may be", st)
        chunks, got = [], 0
        want = st.st_size + 1 if stat.S_ISREG(st.st_mode) else 1 << 16   # one read, and one to see EOF
        try:
            while got <= limit:
                chunk = os.read(fd, min(max(want - got, 1 << 16), limit + 1 - got))
                if not chunk:
                    break
                chunks.append(chunk)
                got += len(chunk)
        except OSError as exc:
            raise RecordFileError(path, f"cannot read: {exc.strerror}", st) from None
    finally:
        os.close(fd)
    if got > limit:
        raise RecordFileError(path, f"over the {_mib(limit)} a record may be", st)
    return b"".join(chunks), st


def _mib(n: int) -> str:
    return f"{n / 2**20:g} MiB"


def parse(data: bytes, path: str | Path, st: os.stat_result | None = None) -> Any:
    """The JSON document in data; RecordFileError naming what is wrong with it, in one line."""
    try:
        return json.loads(data, parse_constant=snapformat.no_constants)
    except json.JSONDecodeError as exc:
        cut = exc.pos >= len(exc.doc.rstrip()) or exc.msg.startswith("Unterminated string")
        why = "truncated" if cut else "not valid JSON"
        raise RecordFileError(path, f"{why} ({exc.msg}: line {exc.lineno} column {exc.colno})", st) from None
    except UnicodeDecodeError:
        raise RecordFileError(path, "not UTF-8 text", st) from None
    except RecursionError:
        raise RecordFileError(path, "JSON nested too deeply", st) from None
    except ValueError as exc:            # e.g. an integer of more digits than Python converts
        raise RecordFileError(path, f"not usable JSON ({str(exc).splitlines()[0]})", st) from None


def load_stat(path: str | Path) -> tuple[Any, os.stat_result]:
    """A record file of records_dir, bounded, not through a link: (document, its fstat)."""
    data, st = read_bytes(path)
    return parse(data, path, st), st


def load(path: str | Path) -> Any:
    """A record file's document (bounded, not through a link; RecordFileError)."""
    return load_stat(path)[0]


def iter_records(records_dir: str | Path, odd: list[tuple[Path, str]] | None = None,
                 check: DirCheck | None = None) -> Iterator[Path]:
    """The record files under records_dir/YYYY/MM/DD/, sorted: regular *.json files only.

    Never follows a symbolic link and never lists a name starting with '.' (temp files of writes
    in progress, .compacted, .unreadable). What looks like part of the layout but is not a plain
    directory or file (a link, a directory named like a record) is appended to `odd` as (path,
    why) when given. A missing records_dir yields nothing. With `check`, a directory it refuses
    is not listed (iter_days)."""
    for day in iter_days(records_dir, odd, check):
        yield from day_records(day, odd)


def iter_days(records_dir: str | Path, odd: list[tuple[Path, str]] | None = None,
              check: DirCheck | None = None) -> Iterator[Path]:
    """The YYYY/MM/DD directories of records_dir, sorted (as iter_records walks them). With
    `check`, records_dir (if check.top) and each YYYY, MM and DD are checked before they are
    listed: one refused is neither listed nor yielded (check.refused names it)."""
    allows = check.allows if check is not None else (lambda path: True)
    top = Path(records_dir)
    if not allows(top):
        return
    for year in _dirs(top, _YEAR_RE, odd):
        if allows(year):
            for month in _dirs(year, _TWO_RE, odd):
                if allows(month):
                    yield from (day for day in _dirs(month, _TWO_RE, odd) if allows(day))


class DirCheck:
    """Whether a reader may take records from a directory of records_dir: securedir's rule for
    the directories root writes them into (a directory, not a symbolic link, owned by one of
    `owners`, not writable by group or others), checked from records_dir down each time (a
    directory is opened from its parent's descriptor, never through a link). Anyone else who can
    write in a directory could have put records there: one refused is named once in `refused`
    (its path relative to records_dir, "" for records_dir itself, and why) and nothing under it
    is read.

    owners: the uids a directory may belong to (default: the running user's alone, as a writer
    needs; compare trusts root's and the running user's). top: check records_dir itself too
    (compaction checks it before any work, and refuses to run)."""

    def __init__(self, records_dir: str | Path, owners: Iterable[int] | None = None, top: bool = True):
        self.root = Path(records_dir)
        self.base = Path(os.path.abspath(records_dir))
        self.owners = None if owners is None else frozenset(owners)
        self.top = top
        self.refused: list[tuple[str, str]] = []

    def allows(self, path: Path) -> bool:
        sub = path.relative_to(self.root).parts
        if not sub and not self.top:
            return True
        why = self._why(sub)
        if why:
            self.refused.append(("/".join(sub), why))
        return not why

    def _why(self, sub: tuple[str, ...]) -> str:
        """Why records_dir/sub is no directory to read records from ("" when it is one; when it
        is gone meanwhile, there is nothing to read from it anyway)."""
        try:
            os.close(securedir.open_dir(self.base, sub, create=False, owners=self.owners))
        except securedir.UnsafeDirError as exc:
            return exc.why
        except FileNotFoundError:
            return ""
        except OSError as exc:
            return f"cannot open: {exc.strerror}"
        return ""


def day_records(day: Path, odd: list[tuple[Path, str]] | None = None) -> Iterator[Path]:
    """The record files of one day's directory (iter_records' rules)."""
    for entry in _scan(day, odd):
        if entry.name.startswith(".") or not entry.name.endswith(".json"):
            continue
        if entry.is_file(follow_symlinks=False):
            yield Path(entry.path)
        elif odd is not None:
            odd.append((Path(entry.path), _what(entry)))


def _scan(path: Path, odd: list | None) -> list[os.DirEntry]:
    try:
        with os.scandir(path) as it:
            return sorted(it, key=lambda e: e.name)
    except FileNotFoundError:
        return []                        # gone meanwhile (or no records_dir at all)
    except OSError as exc:
        if odd is not None:
            odd.append((path, f"cannot list: {exc.strerror}"))
        return []


def _dirs(path: Path, name_re: re.Pattern, odd: list | None) -> Iterator[Path]:
    for entry in _scan(path, odd):
        if not name_re.fullmatch(entry.name):
            continue
        if entry.is_dir(follow_symlinks=False):
            yield Path(entry.path)
        elif odd is not None:
            odd.append((Path(entry.path), _what(entry)))


def _what(entry: os.DirEntry) -> str:
    if entry.is_symlink():
        return "a symbolic link (not followed)"
    if entry.is_dir(follow_symlinks=False):
        return "a directory where a record file should be"
    return "not a regular file"



