"""The dataset's schema, stated in each Parquet file and checked before a file is read.

Every file `records compact` writes says which version of the dataset's schema wrote it, in the
Parquet key-value metadata (KEY -> "lustre-jobreport-dataset/<n>"), beside its columns. A
version's columns never change; a newer version may only add columns (ADDED_IN), so a file of
an older version is read with the columns it lacks as nulls (never 0), and a file of a newer
version (a newer lustre-jobreport wrote it) is not judged here: NewerSchemaError, one line
naming the file and its version.

check() tells which version a file is of, or why it is of another schema:
- a file that states a version this reader knows must have exactly that version's columns and
  types;
- a file that states none was written before versions were stated (all of them had version 1's
  columns, which have never changed) if its columns and types are exactly version 1's;
- anything else — other columns, other types, another statement — is a Parquet file of another
  schema: never merged, never read as if understood (compaction sets it aside, compare leaves it
  out, each naming it with what differs).
A file that is not Parquet at all (corrupt, truncated) is UnreadableParquet; a file the system
will not let us read (EMFILE, EACCES, EIO...) is a plain OSError of the run, never blamed on the
file's contents.
"""

from __future__ import annotations

import functools
import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from . import jobrow
from ..errors import JobReportError

KEY = b"lustre-jobreport.dataset"
NAME = "lustre-jobreport-dataset"
VERSION = 1                       # the version this lustre-jobreport writes and reads up to
# Columns added after version 1, and the version that added each (none yet). jobrow.COLUMNS
# holds every column of VERSION; a version's columns are those added in it or before.
ADDED_IN: dict[str, int] = {}
_STATED = re.compile(rf"{NAME}/([1-9][0-9]{{0,5}})")


class UnreadableParquet(JobReportError):
    """A file that is not a readable Parquet file (its bytes, not the system)."""

    def __init__(self, path: Path, why: str):
        self.reason = f"not a readable Parquet file ({why})"     # without the path
        super().__init__(f"{path}: {self.reason}")
        self.path = path


class NewerSchemaError(JobReportError):
    """A file written by a newer lustre-jobreport: this reader must not judge it."""


@dataclass(frozen=True)
class Checked:
    """A dataset file's schema: its version, or (version None) why it is of another schema."""
    path: Path
    version: int | None
    why: str = ""

    @property
    def foreign(self) -> bool:
        return self.version is None


def stated(version: int | None = None) -> str:
    """How a file states the version (this reader's by default)."""
    return f"{NAME}/{VERSION if version is None else version}"


def columns_of(version: int) -> list[tuple[str, str]]:
    """(name, type name) of the version's columns, in jobrow's order."""
    return [(name, jobrow.TYPES[name]) for name in jobrow.COLUMNS if ADDED_IN.get(name, 1) <= version]


def arrow_schema():
    """The pyarrow schema a writer gives ParquetWriter: this version's columns, stating it."""
    return jobrow.arrow_schema().with_metadata({KEY: stated().encode()})


def check(path: Path) -> Checked:
    """Which version of the dataset's schema the file at path is of (its footer alone is read).
    Raises NewerSchemaError, UnreadableParquet, or OSError (the system's: the run's problem)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    try:
        with pq.ParquetFile(path) as pf:
            schema = pf.schema_arrow
    except (OSError, pa.ArrowException) as exc:
        raise read_error(path, exc) from None
    return of_schema(path, schema)


def read_error(path: Path, exc: BaseException) -> Exception:
    """What pyarrow's failure to read a dataset file is: the system's (an OSError with an errno:
    too many open files, permission, I/O error, gone), or the file's bytes (UnreadableParquet)."""
    if isinstance(exc, OSError) and exc.errno is not None:
        return OSError(exc.errno, os.strerror(exc.errno), str(path))
    return UnreadableParquet(path, _one_line(exc))


def of_schema(path: Path, schema) -> Checked:
    """check() on a schema already read."""
    tag = (schema.metadata or {}).get(KEY)
    if tag is None:
        why = _difference(schema, 1)
        return Checked(path, None if why else 1,
                       why and f"not this dataset's schema (it states no version; {why})")
    text = tag.decode("utf-8", "replace")
    m = _STATED.fullmatch(text)
    if not m:
        return Checked(path, None, f"states schema {text[:80]!r}, not {NAME}'s")
    version = int(m.group(1))
    if version > VERSION:
        raise NewerSchemaError(f"{path}: written by a newer lustre-jobreport (dataset schema {text}; this one "
                               f"reads up to {stated()}): upgrade lustre-jobreport to read or compact it")
    why = _difference(schema, version)
    return Checked(path, None if why else version, why and f"not the columns of {text} it states ({why})")


def _difference(schema, version: int) -> str:
    """What differs between the file's columns and the version's, in a few words ("" if
    nothing: the same names with the same types, in any order)."""
    want = _types(version, jobrow.COLUMNS)
    if schema.equals(_schema(version, jobrow.COLUMNS), check_metadata=False):
        return ""                                   # as every writer here writes it: in order
    names = [f.name for f in schema]
    if len(names) == len(want) == len(set(names)) and all(
            f.name in want and f.type.equals(want[f.name]) for f in schema):
        return ""
    present = set(names)
    missing = [n for n in want if n not in present]
    unknown = [n for n in names if n not in want]
    twice = sorted(n for n, k in Counter(names).items() if k > 1)
    retyped = [f"{f.name} is {f.type}, not {want[f.name]}" for f in schema
               if f.name in want and f.name not in twice and not f.type.equals(want[f.name])]
    parts = [_few("column", "missing", missing), _few("column", "unknown", unknown),
             _few("column", "twice", twice), "; ".join(retyped[:3]) + (f" (and {len(retyped) - 3} more)"
                                                                     if len(retyped) > 3 else "")]
    return "; ".join(p for p in parts if p)


@functools.lru_cache(maxsize=8)
def _schema(version: int, columns: tuple[str, ...]):
    """The version's pyarrow schema, in jobrow's order (columns: jobrow's, the cache's key)."""
    import pyarrow as pa
    return pa.schema([(name, t) for name, t in _types(version, columns).items()])


@functools.lru_cache(maxsize=8)
def _types(version: int, columns: tuple[str, ...]) -> dict:
    """The version's columns -> their pyarrow types, in jobrow's order (columns: jobrow's, the
    cache's key)."""
    full = jobrow.arrow_schema()
    return {name: full.field(name).type for name, _ in columns_of(version)}


def _few(what: str, how: str, names: list[str]) -> str:
    if not names:
        return ""
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return f"{what}{'s' if len(names) > 1 else ''} {how}: {shown}"


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
