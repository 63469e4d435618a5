"""The Parquet dataset's layer: its schema, its month partitions and files, reading a file.

What the dataset is (docs/records.md; compact.py says what a compaction guarantees):
<dataset_dir>/year=YYYY/month=M/part-<time>-<random>.parquet, Hive-partitioned by the month
(UTC) of the job's end, the columns of jobrow in plain Arrow types, zstd-compressed, rows in
row groups of up to ROW_GROUP_ROWS. month=3 and a zero-padded month=03 another tool wrote are
the same month to every reader here. Compaction writes it; compare reads it (recordset).
"""

from __future__ import annotations

import os
import re
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable

from . import jobrow, partschema
from ..errors import JobReportError

COMPRESSION = "zstd"



ROW_GROUP_ROWS = 122_880     # DuckDB's own row group size: what its readers parallelize over



BATCH_ROWS = 8_192           # rows turned into Arrow columns at a time



UNREADABLE = ".unreadable"   # what cannot be read, set aside: records (records_dir/.unreadable/...) and



                             # dataset files not readable as Parquet (dataset_dir/.unreadable/...)
FOREIGN = ".foreign"         # dataset files of another schema, set aside (dataset_dir/.foreign/...)



SET_ASIDE = ".set-aside"     # their suffix there: no longer *.parquet, so no reader's glob takes them



PART_RE = re.compile(r"part-[A-Za-z0-9_-]+\.parquet")



TEMP_RE = re.compile(r"\.part-[A-Za-z0-9_-]+\.parquet\.[0-9a-f]+\.tmp")



_YEAR_DIR = re.compile(r"year=(\d{1,5})")     # year=02026 is 2026



_MONTH_DIR = re.compile(r"month=(\d{1,2})")    # month=03 is month=3



# What converting a record to rows may raise on a malformed document (jobrow reads what it is
# given; a wrong type deep inside a record is a TypeError or AttributeError there).
ROW_ERRORS = (jobrow.RecordError, ValueError, TypeError, AttributeError, KeyError, OverflowError,
              RecursionError)



Part = tuple[int, int]       # (year, month)



_SCHEMA = None



def schema(names: Iterable[str] | None = None):
    """The dataset's pyarrow schema; of its columns `names` alone, in that order, if given."""
    global _SCHEMA
    if _SCHEMA is None:
        _SCHEMA = jobrow.arrow_schema()
    if names is None:
        return _SCHEMA
    import pyarrow as pa
    return pa.schema([_SCHEMA.field(n) for n in names])



def one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__



def to_table(rows: list[dict[str, Any]], names: Iterable[str] | None = None):
    """jobrow rows as a pyarrow Table of the dataset's schema (of its columns `names` alone, in
    that order, if given); jobrow.RecordError naming the column whose value its type cannot hold
    (e.g. a node count over int32)."""
    import pyarrow as pa
    s = schema(names)
    arrays = []
    for f in s:
        try:
            arrays.append(pa.array([r[f.name] for r in rows], type=f.type))
        except (pa.ArrowException, OverflowError, TypeError, ValueError) as exc:
            raise jobrow.RecordError(f"column {f.name}: {one_line(exc)}") from None
    return pa.Table.from_arrays(arrays, schema=s)



def records_table(records_rows: list[list[dict[str, Any]]], names: Iterable[str] | None = None):
    """The rows of many records (a list per record) as one table (to_table); a record with a
    value its column cannot hold is left out: (table, or None if no record is left, and
    [(index of a record left out, its RecordError)])."""
    import pyarrow as pa
    try:
        return to_table([r for rows in records_rows for r in rows], names), []
    except jobrow.RecordError:            # find the record(s) at fault; the others go in
        pass
    tables, bad = [], []
    for i, rows in enumerate(records_rows):
        try:
            tables.append(to_table(rows, names))
        except jobrow.RecordError as exc:
            bad.append((i, exc))
    return (pa.concat_tables(tables) if tables else None), bad



def part_of(end: datetime) -> Part:
    return end.year, end.month



def part_dirs(part: Part) -> tuple[str, str]:
    """The directories this version writes a month into (not zero-padded: see partitions())."""
    return f"year={part[0]}", f"month={part[1]}"



def part_name(part: Part) -> str:
    return "/".join(part_dirs(part))



def month_dirs(dataset_dir: str | Path, year: int | None = None) -> dict[Part, list[Path]]:
    """Every directory of every month partition (of `year` alone if given), by month: a month
    may be in more than one (year=2026/month=3 and a zero-padded month=03 written by another
    tool, or by hand after the Hive convention): they are the same month. Directories only,
    never through a link."""
    out: dict[Part, list[Path]] = {}
    for y in entries(Path(dataset_dir)):
        my = _YEAR_DIR.fullmatch(y.name)
        if (not my or not 1 <= int(my.group(1)) <= 9999 or (year is not None and int(my.group(1)) != year)
                or not y.is_dir(follow_symlinks=False)):
            continue
        for m in entries(Path(y.path)):
            mm = _MONTH_DIR.fullmatch(m.name)
            if mm and 1 <= int(mm.group(1)) <= 12 and m.is_dir(follow_symlinks=False):
                out.setdefault((int(my.group(1)), int(mm.group(1))), []).append(Path(m.path))
    return out



def partitions(dataset_dir: str | Path) -> list[Part]:
    """The dataset's month partitions, oldest first, each once: month=3 and month=03 (and
    year=2026 and year=02026) name the same month. This version writes month=3 (DuckDB's Hive
    partitioning reads month=03 as a string, month=3 as an integer), and reads both."""
    return sorted(month_dirs(dataset_dir))



def part_files(dataset_dir: str | Path, part: Part) -> list[Path]:
    """The partition's Parquet files (part-*.parquet, regular files) in every directory of
    the month (month=3 and month=03 alike), oldest first (names start with their write time)."""
    return _files(month_dirs(dataset_dir, part[0]).get(part, []))



def _files(dirs: list[Path]) -> list[Path]:
    found = [Path(e.path) for d in dirs for e in entries(d)
             if PART_RE.fullmatch(e.name) and e.is_file(follow_symlinks=False)]
    return sorted(found, key=lambda f: (f.name, str(f)))



def dataset_files(dataset_dir: str | Path) -> dict[Part, list[Path]]:
    """Every partition's files (as part_files), months without files left out; one listing."""
    return {p: fs for p, dirs in sorted(month_dirs(dataset_dir).items()) if (fs := _files(dirs))}



def entries(path: Path) -> list[os.DirEntry]:
    try:
        with os.scandir(path) as it:
            return sorted(it, key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        raise JobReportError(f"{path}: cannot list: {exc.strerror}") from None



def read_failure(path: Path, exc: BaseException) -> JobReportError:
    """What a dataset file that could not be read is: its bytes (partschema.UnreadableParquet,
    which a run sets aside), or the system (one line with the reason, never blamed on the file's
    contents: the run stops)."""
    err = exc if isinstance(exc, partschema.UnreadableParquet) else partschema.read_error(path, exc)
    if isinstance(err, partschema.UnreadableParquet):
        return err
    return JobReportError(f"{path}: cannot read: {err.strerror}")



def record_ids(path: Path) -> set[str]:
    """The record ids the file holds (its record_id column alone is read); read_failure's."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    try:
        with pq.ParquetFile(path) as pf:
            col = pf.read(columns=["record_id"]).column(0)
    except (OSError, pa.ArrowException) as exc:
        raise read_failure(path, exc) from None
    ids = set(col.unique().to_pylist())
    ids.discard(None)
    return ids



def read_row_groups(path: Path):
    """The file's rows, a row group at a time (ours hold at most ROW_GROUP_ROWS), the file open
    only while they are read. A failure to read it is read_failure's (a failure of the caller's,
    between row groups, is its own)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    try:
        with pq.ParquetFile(path) as pf:
            for i in range(pf.num_row_groups):
                yield pf.read_row_group(i)
    except (OSError, pa.ArrowException) as exc:
        raise read_failure(path, exc) from None
