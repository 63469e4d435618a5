"""What `compare` reads: the job rows a selection picks from the Parquet dataset and from the JSON
records not compacted yet.

A selection is "key=value,key=value" (every key must hold):
- lustre, kernel, os: globs (*, ?, [..], [!..]) on the job's clients; a job matches when every
  host's value matches (jobrow's column holds the distinct values ';'-joined), so a job that
  ran partly on 2.15 and partly on 2.16 is neither "lustre=2.15.*" nor "lustre=2.16.*". A job
  whose record does not say (null) matches no glob.
- since, until: ISO dates or date-times, UTC unless they carry an offset; on the job's end,
  since inclusive, until exclusive ("since=2026-10-01,until=2026-11-01" is October).
- cluster, partition, user, job_name, account: the value, or a glob when it has *, ? or [.
Globs are matched case-sensitively over the whole value, in DuckDB (regexp_full_match) for both
sources, so the dataset and the JSON records cannot disagree.

load() gives the rows (jobrow.COLUMNS, or only the columns asked for: columns=) of both
sources, one per (record_id, fs), in no particular order; load_each() those of several
selections in one pass (compare's two sides: one scan, each row's selections told by a flag),
each as load() of it alone would: a job found in the dataset is taken
from there alone (its JSON record may still be in the live tree after a compaction interrupted
before moving it, or be a later copy); the dataset's own duplicates (for a moment while
compaction merges a month) and the JSON records' (a copy in two day directories) count once.
Only the months [since, until) overlaps are read from the dataset (a month's directory may be
month=3 or a zero-padded month=03: dataset.part_files reads both), and of its files only the
columns asked for. Each file's schema is checked before it is read (partschema), and the files
are read FILES_PER_QUERY a DuckDB query with one I/O thread: a month of any number of files is
read with a few dozen open and memory for its rows. Files are named to DuckDB one by one, glob
characters escaped: a dataset under /data/run[1]/ is that directory, not run1.

A JSON record that cannot be read, or of a schema newer than this reader (written by a newer
lustre-jobreport: its columns' meanings may have changed, so it is not compared), is skipped and
named in Loaded.warnings, one line each. Records are read only from directories no one else
could have written them into: records_dir and each YYYY, MM and DD are checked before they are
listed (records.DirCheck: owned by root or the user running compare, not writable by group or
others, not a link), and one that fails is skipped, named in one line and counted. A Parquet file of another schema is never read as if
understood: left out, named in Loaded.warnings with what differs, counted; so is one that is not
a readable Parquet file (corrupt, truncated: at the schema check, or when DuckDB reads it, the
files of its batch then read one by one to tell which, and the rest read again), which
compaction sets aside. A Parquet file of a newer schema version (partschema.NewerSchemaError),
or one the system will not let compare read (permissions, I/O errors: the file may be whole), is
an error naming it (JobReportError): the dataset is the truth and must not be silently partial.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from . import dataset, jobrow, partschema, store as records
from ..errors import JobReportError

MULTI = ("lustre", "kernel", "os")             # ';'-joined values: every one must match
SINGLE = ("cluster", "partition", "user", "job_name", "account")
TIMES = ("since", "until")
KEYS = (*MULTI, *TIMES, *SINGLE)
RETRIES = 3                                     # dataset files that vanish under a listing (merge)
FILES_PER_QUERY = 256                           # dataset files one DuckDB query reads: open files and
                                                # memory bounded whatever a month holds
SMALL_CHUNK_ROWS = 4096                         # an answer's chunks smaller than this on average are joined


class SelectionError(JobReportError):
    """A selection that cannot be read; one line naming the key."""


def glob_regex(pattern: str, multi: bool = False) -> str:
    """The regular expression (RE2 and Python re alike) of a glob matched on a whole value;
    multi: on every part of a ';'-joined value."""
    star, one = ("[^;]*", "[^;]") if multi else (".*", ".")
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        i += 1
        if c == "*":
            out.append(star)
        elif c == "?":
            out.append(one)
        elif c == "[":
            j = i + (i < n and pattern[i] in "!^")
            j += j < n and pattern[j] == "]"            # a ']' first in the class is literal
            end = pattern.find("]", j)
            if end < 0:
                out.append(r"\[")
                continue
            body = pattern[i:end]
            i = end + 1
            neg = body[:1] in ("!", "^")
            body = body[1:] if neg else body
            body = "".join("\\" + ch if ch in "\\[]^" else ch for ch in body)
            out.append(f"[^{';' if multi else ''}{body}]" if neg else f"[{body}]")
        else:
            out.append("\\" + c if c in ".^$*+?()[]{}|\\-#&~" else c)
    one_value = "".join(out)
    return f"(?:{one_value})(?:;(?:{one_value}))*" if multi else one_value


def _moment(key: str, text: str) -> datetime:
    """A selection's date (its midnight, UTC) or date and time, read as records' times are."""
    t = records.utc_time(text)
    if t is None:
        raise SelectionError(f"{key}: {text!r} is not an ISO date or date and time "
                             "(e.g. 2026-10-01 or 2026-10-01T12:00Z)")
    return t


@dataclass(frozen=True)
class Selection:
    globs: tuple[tuple[str, str], ...] = ()     # (column, glob)
    since: datetime | None = None
    until: datetime | None = None

    @classmethod
    def parse(cls, text: str) -> "Selection":
        globs: list[tuple[str, str]] = []
        times: dict[str, datetime] = {}
        seen: set[str] = set()
        for item in (text or "").split(","):
            item = item.strip()
            if not item:
                continue
            key, eq, value = item.partition("=")
            key, value = key.strip(), value.strip()
            if not eq:
                raise SelectionError(f"{item!r} is not key=value (keys: {', '.join(KEYS)})")
            if key not in KEYS:
                raise SelectionError(f"unknown key {key!r} (known: {', '.join(KEYS)})")
            if key in seen:
                raise SelectionError(f"{key}: given twice")
            seen.add(key)
            if not value:
                raise SelectionError(f"{key}: empty value")
            if key in TIMES:
                times[key] = _moment(key, value)
            else:
                globs.append((key, value))
        since, until = times.get("since"), times.get("until")
        if since and until and until <= since:
            raise SelectionError(f"until: {until:%Y-%m-%dT%H:%M:%SZ} is not after since {since:%Y-%m-%dT%H:%M:%SZ}")
        return cls(tuple(globs), since, until)

    def __str__(self) -> str:
        parts = [f"{k}={v}" for k, v in self.globs]
        parts += [f"{k}={t:%Y-%m-%dT%H:%M:%SZ}" for k, t in (("since", self.since), ("until", self.until)) if t]
        return ",".join(parts)

    def where(self) -> tuple[str, list[Any]]:
        """The SQL condition (DuckDB) and its parameters."""
        terms, params = [], []
        for key, pattern in self.globs:
            terms.append(f'regexp_full_match("{key}", ?)')
            params.append(glob_regex(pattern, key in MULTI))
        for key, op in (("since", ">="), ("until", "<")):
            t = getattr(self, key)
            if t is not None:
                terms.append(f'"end" {op} CAST(? AS TIMESTAMPTZ)')
                params.append(t.isoformat())
        return (" AND ".join(terms) or "TRUE"), params

    def columns(self) -> tuple[str, ...]:
        """The columns the condition reads."""
        return (*(k for k, _ in self.globs), *(("end",) if self.since or self.until else ()))

    def matches(self, row: dict) -> bool:
        """The same condition on one jobrow row, in Python (tests check the two agree)."""
        for key, pattern in self.globs:
            v = row.get(key)
            if v is None or not re.fullmatch(glob_regex(pattern, key in MULTI), v, re.S):
                return False
        end = row.get("end")
        return not ((self.since and end < self.since) or (self.until and end >= self.until))

    def months(self, part: tuple[int, int]) -> bool:
        """Whether the month partition may hold jobs that ended in [since, until)."""
        y, m = part
        start = datetime(y, m, 1, tzinfo=timezone.utc)
        after = datetime(y + (m == 12), m % 12 + 1, 1, tzinfo=timezone.utc)
        return (self.until is None or start < self.until) and (self.since is None or after > self.since)


@dataclass
class Loaded:
    table: Any                              # pyarrow.Table: jobrow.arrow_schema()'s columns (those asked)
    warnings: list[str] = field(default_factory=list)
    dataset_files: int = 0                  # Parquet files read (of the months selected)
    dataset_rows: int = 0                   # rows from the dataset (selected, deduplicated)
    json_records: int = 0                   # JSON records read (all of the live tree)
    json_rows: int = 0                      # rows from them (selected, not in the dataset)
    json_in_dataset: int = 0                # JSON records whose job the dataset holds already
    records_skipped: int = 0                # JSON records skipped (a warning each)
    records_dirs_skipped: int = 0           # records directories not read: others could write in them
    dataset_files_left_out: int = 0         # dataset files of another schema or not readable (a warning each)

    def info(self) -> dict[str, Any]:
        """The counts and warnings as a dict (records_read: the JSON records read)."""
        return {"records_read": self.json_records, "json_rows": self.json_rows,
                "json_in_dataset": self.json_in_dataset, "dataset_files": self.dataset_files,
                "dataset_rows": self.dataset_rows, "records_skipped": self.records_skipped,
                "records_dirs_skipped": self.records_dirs_skipped,
                "dataset_files_left_out": self.dataset_files_left_out, "warnings": list(self.warnings)}

    def __iter__(self):
        """table, info = load(...) works too."""
        return iter((self.table, self.info()))


_GLOB = re.compile(r"([*?\[])")


def _sql_list(paths: list[Path]) -> str:
    """The files as a DuckDB list literal. DuckDB reads every name as a glob: a '*', '?' or '['
    in a directory's name (/data/run[1]/dataset) would match other files (run1) or none, so
    each is escaped as a one-character class ('[' -> '[[]'), which matches only itself."""
    return "[" + ", ".join("'" + _GLOB.sub(r"[\1]", str(p)).replace("'", "''") + "'" for p in paths) + "]"


def _read_parquet(files: list[Path]) -> str:
    """The files (of one schema version: the same columns) as one DuckDB table. No Hive
    partitioning: year and month are not columns compare reads, and the directories' names may
    be month=3 or month=03 (one an integer to DuckDB, the other a string)."""
    return f"read_parquet({_sql_list(files)}, hive_partitioning=false)"


def _json_rows(records_dir, out: Loaded, names: tuple[str, ...], months: set[tuple[int, int]]):
    """The live tree's records as one Arrow table of the columns `names` (record by record: a
    bad one is a warning), from the directories DirCheck lets compare read (root's or the
    running user's; one refused is a warning); the months of their jobs' ends added to
    `months`."""
    import pyarrow as pa
    tables = []
    if records_dir:
        odd: list[tuple[Path, str]] = []
        check = records.DirCheck(records_dir, owners=(0, os.geteuid()))
        batch: list[list[dict]] = []         # rows, record by record
        nrows = 0
        seen: set[str] = set()
        for path in records.iter_records(records_dir, odd, check):
            try:
                doc = records.load(path)
                rows = jobrow.rows(doc)
            except records.RecordFileError as exc:
                if exc.reason != "no such file":      # compacted meanwhile: its rows are in the dataset
                    out.warnings.append(f"{exc}; skipped")
                    out.records_skipped += 1
                continue
            except dataset.ROW_ERRORS as exc:
                out.warnings.append(f"{path}: {dataset.one_line(exc)}; skipped")
                out.records_skipped += 1
                continue
            out.json_records += 1
            if rows and rows[0]["record_id"] in seen:
                continue                              # a second copy: the first counts, as in compaction
            seen.update(r["record_id"] for r in rows[:1])
            months.update(dataset.part_of(r["end"]) for r in rows[:1])
            batch.append(rows)
            nrows += len(rows)
            if nrows >= dataset.BATCH_ROWS:
                tables.append(_to_table(batch, out, names))
                batch, nrows = [], 0
        if batch:
            tables.append(_to_table(batch, out, names))
        out.warnings += [f"{Path(records_dir, rel)}: {why}; no record under it read" for rel, why in check.refused]
        out.records_dirs_skipped = len(check.refused)
        out.warnings += [f"{p}: {why}; skipped" for p, why in odd]
        out.records_skipped += len(odd)
    return pa.concat_tables(tables) if tables else dataset.schema(names).empty_table()


def _to_table(batch: list[list[dict]], out: Loaded, names: tuple[str, ...]):
    """Records' rows as a table of the columns `names`; if a value does not fit its column, that
    record alone is skipped (dataset.records_table)."""
    table, bad = dataset.records_table(batch, names)
    for i, exc in bad:
        out.warnings.append(f"record {batch[i][0]['record_id']}: {exc}; skipped")
        out.records_skipped += 1
    return table if table is not None else dataset.schema(names).empty_table()


class _FilesChanged(Exception):
    """A dataset file listed is gone (a merge replaced it): list again."""


class _Dataset:
    """The dataset's files of the months asked for, each checked against the schema it states
    before it is read (partschema), read FILES_PER_QUERY files at a time. The files left out
    are kept with their warning line, in the order found, and every file listed with its month:
    each selection of a load is told those of its own months."""

    def __init__(self, con, dataset_dir):
        self.con, self.dir = con, dataset_dir
        self.checked: dict[Path, partschema.Checked] = {}
        self.left_out: list[tuple[Path, str]] = []
        self.part: dict[Path, dataset.Part] = {}

    def files(self, parts=None) -> list[Path]:
        if not self.dir:
            return []
        found = dataset.dataset_files(self.dir)
        for p, fs in found.items():
            self.part.update((f, p) for f in fs)
        return [f for p, fs in found.items() if parts is None or parts(p) for f in fs]

    def check(self, f: Path) -> partschema.Checked:
        """f's schema, checked once a load; a file of another schema, or not a readable Parquet
        file, is left out: named in the warnings (once) and counted. NewerSchemaError for a
        newer one, JobReportError for one the system will not let us read, _FilesChanged for
        one gone."""
        if f not in self.checked:
            try:
                checked = partschema.check(f)
            except FileNotFoundError:
                raise _FilesChanged from None
            except partschema.UnreadableParquet as exc:
                checked = self.leave_out(exc)
            except OSError as exc:
                raise JobReportError(f"{f}: cannot read: {exc.strerror}") from None
            else:
                if checked.foreign:
                    self.left_out.append((f, f"{f}: a Parquet file of another schema, {checked.why}; left out"))
            self.checked[f] = checked
        return self.checked[f]

    def leave_out(self, exc: partschema.UnreadableParquet) -> partschema.Checked:
        """A file that is not a readable Parquet file: named, counted, never read again."""
        self.left_out.append((exc.path, f"{exc}; left out"))
        self.checked[exc.path] = partschema.Checked(exc.path, None, exc.reason)
        return self.checked[exc.path]

    def query(self, sql_of, parts) -> tuple[Any, list[Path]]:
        """sql_of(source, columns) -> (sql, params), run on every batch of the files of the
        partitions `parts` accepts (source: a read_parquet of the batch; columns: the columns
        its files have), the answers joined: (table or None, files read). A file gone between
        the listing and the read (merged by compaction) makes it list again."""
        import pyarrow as pa
        for attempt in range(RETRIES + 1):
            listed = self.files(parts)
            try:
                files = [f for f in listed if not self.check(f).foreign]
                tables = [self._run(sql_of, batch, version) for version, batch in self._batches(files)]
                tables = [t for t in tables if t is not None]
                read = [f for f in files if not self.checked[f].foreign]    # less those found corrupt
                return (pa.concat_tables(tables) if tables else None), read
            except _FilesChanged:
                if attempt < RETRIES and self.files(parts) != listed:
                    continue
                raise JobReportError(f"{self.dir}: files keep vanishing under the read "
                                     "(is a compaction merging it?): run again") from None
        raise AssertionError("not reached")

    def _batches(self, files: list[Path]):
        """(version, files) of at most FILES_PER_QUERY files of one schema version each."""
        by_version: dict[int, list[Path]] = {}
        for f in files:
            by_version.setdefault(self.checked[f].version, []).append(f)
        for version, fs in sorted(by_version.items()):
            for i in range(0, len(fs), FILES_PER_QUERY):
                yield version, fs[i:i + FILES_PER_QUERY]

    def _run(self, sql_of, batch: list[Path], version: int):
        """The query on one batch of files. If DuckDB cannot read it, the files are tried one by
        one: one that is not a readable Parquet file is left out (leave_out) and the batch read
        again without it; a failure that is none of theirs is an error (_culprits)."""
        import duckdb
        have = {name for name, _ in partschema.columns_of(version)}
        while True:
            sql, params = sql_of(_read_parquet(batch), have)
            try:
                table = self.con.sql(sql, params=params).to_arrow_table()
                break
            except duckdb.Error as exc:
                bad = self._culprits(sql_of, batch, have, exc)
                batch = [f for f in batch if f not in bad]
                if not batch:
                    return None
        # DuckDB's answer has a chunk per file at least: of small files, many tiny chunks that
        # cost far more than their rows, so they are joined into one
        chunks = table.column(0).num_chunks if table.num_columns else 0
        return table.combine_chunks() if chunks > 1 and table.num_rows < SMALL_CHUNK_ROWS * chunks else table

    def _culprits(self, sql_of, batch: list[Path], have: set[str], exc: Exception) -> set[Path]:
        """The files of a batch DuckDB could not read that are not readable Parquet files, each
        left out (at least one, else JobReportError): each file is queried alone, and one that
        fails is told apart by pyarrow (_unreadable)."""
        import duckdb
        bad: set[Path] = set()
        for f in batch:
            sql, params = sql_of(_read_parquet([f]), have)
            try:
                self.con.sql(sql, params=params).to_arrow_table()
                continue
            except duckdb.Error as alone:
                why = alone
            found = _unreadable(f)
            if found is None:
                raise JobReportError(f"cannot read the dataset: {f}: {dataset.one_line(why)}") from None
            self.leave_out(found)
            bad.add(f)
        if not bad:
            raise JobReportError(f"{self.dir}: cannot read the dataset ({dataset.one_line(exc)})")
        return bad


def _unreadable(f: Path) -> partschema.UnreadableParquet | None:
    """Whether f, read whole by pyarrow a row group at a time, is not a readable Parquet file
    (its bytes: UnreadableParquet; None when pyarrow reads it). The system's refusal (an errno:
    permissions, I/O errors, too many open files) is an error naming the file, never blamed on
    its bytes; a file gone (merged meanwhile) makes the read list again (_FilesChanged)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    try:
        with pq.ParquetFile(f) as pf:
            for i in range(pf.num_row_groups):
                pf.read_row_group(i)
    except (OSError, pa.ArrowException) as err:
        found = partschema.read_error(f, err)
        if isinstance(found, partschema.UnreadableParquet):
            return found
        if isinstance(found, FileNotFoundError):
            raise _FilesChanged from None
        raise JobReportError(f"{f}: cannot read: {found.strerror}") from None
    return None


def distrust_negative_counts(table):
    """The rows with a negative count not trusted: a dataset file written before counts were
    checked (jobrow) may hold one in a row marked trusted, which compare must leave out. Only
    the columns read are looked at (of jobrow's: not the scan's keys): compare uses no other;
    row by row only those whose smallest value is negative."""
    import pyarrow.compute as pc
    if "trusted" not in table.column_names:
        return table
    negative = None
    for name in table.column_names:
        if jobrow.TYPES.get(name) in ("int64", "int32") and (pc.min(table[name]).as_py() or 0) < 0:
            below = pc.fill_null(pc.less(table[name], 0), False)
            negative = below if negative is None else pc.or_(negative, below)
    if negative is None:
        return table
    i = table.column_names.index("trusted")
    return table.set_column(i, table.field(i), pc.and_kleene(table["trusted"], pc.invert(negative)))


def _one_per_job(con, table):
    """One row per (record_id, fs), the first stored (a merge under way may show a job in two
    files). The window that picks it costs more than the read: it runs only when the rows hold
    a job twice (they seldom do; _may_hold_copies tells quickly when they cannot)."""
    con.register("ds_rows", table)
    try:
        if not con.sql("SELECT count(*) > count(DISTINCT (record_id, fs)) FROM ds_rows").fetchall()[0][0]:
            return table
        return con.sql("SELECT * FROM ds_rows QUALIFY row_number() OVER "
                       "(PARTITION BY record_id, fs ORDER BY stored_at NULLS LAST) = 1").to_arrow_table()
    finally:
        con.unregister("ds_rows")


def _sorted_unique(keys):
    import numpy as np
    keys = np.sort(keys)
    return keys[np.concatenate(([True], keys[1:] != keys[:-1]))] if len(keys) else keys


def _may_hold_copies(table) -> bool:
    """Whether the rows may hold a (record_id, fs) twice: only if two of them have the same hash
    of it (ROW_KEY, made by the scan), which a sort tells."""
    keys = table[ROW_KEY].to_numpy()
    return len(_sorted_unique(keys)) < len(keys)


def _shared_jobs(tables) -> int:
    """How many jobs (record_ids) more than one of the tables holds. Only the rows whose hash of
    record_id (JOB_KEY, made by the scan) is in more than one table can be; their ids are
    compared."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    keys = [t[JOB_KEY].to_numpy() for t in tables]
    every = np.sort(np.concatenate([_sorted_unique(k) for k in keys]))
    twice = every[1:][every[1:] == every[:-1]]
    if not len(twice):
        return 0
    ids = [pc.unique(t["record_id"].filter(pa.array(np.isin(k, twice)))) for t, k in zip(tables, keys)]
    counts = pc.value_counts(pa.chunked_array(ids, type=pa.string())).field("counts")
    return int(np.count_nonzero(counts.to_numpy() > 1))


def _select_list(names, have: set[str]) -> str:
    """The columns `names`; one the files lack (an older writer's) is a typed null."""
    out = []
    for name in names:
        kind = {"string": "VARCHAR", "int64": "BIGINT", "int32": "INTEGER", "float64": "DOUBLE",
                "bool": "BOOLEAN", "timestamp": "TIMESTAMPTZ"}[jobrow.TYPES[name]]
        out.append(f'"{name}"' if name in have else f'CAST(NULL AS {kind}) AS "{name}"')
    return ", ".join(out)


def columns_read(columns, selection: Selection) -> tuple[str, ...]:
    """The columns load() gives for `columns` (None: all): those, the job's identity (record_id,
    fs: what duplicates are told by) and what the selection reads, in jobrow's order."""
    if columns is None:
        return jobrow.COLUMNS
    if isinstance(columns, str):
        raise TypeError("columns: a sequence of column names, not one string")
    columns = tuple(columns)
    unknown = [c for c in columns if c not in jobrow.TYPES]
    if unknown:
        raise ValueError(f"columns: unknown column {unknown[0]!r} (jobrow.COLUMNS)")
    wanted = {*columns, "record_id", "fs", *selection.columns()}
    return tuple(c for c in jobrow.COLUMNS if c in wanted)


def load(selection: Selection | str, records_dir: str | Path | None, dataset_dir: str | Path | None,
         columns: Iterable[str] | None = None) -> Loaded:
    """The selected rows of the dataset and of the JSON records not compacted yet, one per
    (record_id, fs), the dataset's preferred; a missing directory is an empty source.

    columns: the columns to give (None: all of jobrow.COLUMNS); record_id, fs and the columns
    the selection reads are always given too (columns_read). Only these are read from the
    Parquet files and made from the JSON records (compare asks for 73 of the 96). The rows are
    in no particular order."""
    return load_each((selection,), records_dir, dataset_dir, columns).sides[0]


@dataclass
class Each:
    """What load_each read: each selection's Loaded, in the order given, and how many jobs
    (record_ids) more than one selection picked (each of them is in each of their tables)."""
    sides: list[Loaded]
    shared_jobs: int


ROW_KEY, JOB_KEY = "__row_key", "__job_key"     # the scan's hashes of (record_id, fs) and of record_id


def load_each(selections: Iterable[Selection | str], records_dir: str | Path | None,
              dataset_dir: str | Path | None, columns: Iterable[str] | None = None) -> Each:
    """load() of each selection, all read in one pass: the JSON records are read once, each
    dataset file checked once, and the months any selection reads scanned in one DuckDB query a
    batch of files that tells each row's selections. A row several selections pick is in each
    of their tables. Each Loaded is what load() of its selection alone gives: its rows (in the
    same order), and its counts and warnings (the dataset files of its months and of the JSON
    records' months; the JSON records' own are every selection's)."""
    import duckdb
    import pyarrow as pa

    sels = [Selection.parse(s) if isinstance(s, str) else s for s in selections]
    if not sels:
        raise ValueError("load_each: no selection")
    side_names = [columns_read(columns, s) for s in sels]
    names = tuple(c for c in jobrow.COLUMNS if any(c in n for n in side_names))
    picked = _Picked(sels)
    shared = Loaded(table=None)                  # the JSON records' counts and warnings
    con = duckdb.connect(":memory:")
    try:
        con.execute("SET TimeZone = 'UTC'")
        # DuckDB's I/O threads (8 by default) each open files ahead of the scan: one keeps the
        # files open at once to a few dozen, whatever a month holds, and reads no slower here
        con.execute("SET async_threads = 1")
        cols = ", ".join(f'"{c}"' for c in names)
        ds = _Dataset(con, dataset_dir)

        # the JSON records, and which of their jobs the dataset holds (their months alone)
        months: set[tuple[int, int]] = set()
        json_all = _json_rows(records_dir, shared, names, months)
        con.register("json_all", json_all)
        known, _ = ds.query(lambda src, have: (f"SELECT DISTINCT record_id FROM {src}", []),
                            lambda p: p in months)
        if known is None:
            known = pa.schema([dataset.schema().field("record_id")]).empty_table()
        con.register("known_ids", known)
        shared.json_in_dataset = con.sql("SELECT count(DISTINCT record_id) FROM json_all "
                                         "WHERE record_id IN (SELECT record_id FROM known_ids)").fetchall()[0][0]
        sql, params = picked.sql(cols, "json_all", "record_id NOT IN (SELECT record_id FROM known_ids)")
        json_sel = con.sql(sql, params=params).to_arrow_table()
        con.unregister("json_all")
        con.unregister("known_ids")
        del json_all, known

        # the dataset's rows in the months any selection reads: only the columns asked for (and
        # stored_at, which picks the first stored of a job's copies), batch by batch
        read = tuple(dict.fromkeys((*names, "stored_at")))
        ds_sel, files = ds.query(lambda src, have: picked.sql(_select_list(read, have), src),
                                 lambda p: any(s.months(p) for s in sels))
        copies = ds_sel is not None and _may_hold_copies(ds_sel)
        sides = [_side(con, i, sel, side_names[i], picked, shared, ds, months, json_sel, ds_sel, files, copies)
                 for i, sel in enumerate(sels)]
    finally:
        con.close()
    if len(sides) == 1:
        return Each(sides, 0)
    shared_jobs = _shared_jobs([s.table for s in sides])
    for side in sides:
        side.table = side.table.drop_columns([JOB_KEY])
    return Each(sides, shared_jobs)


class _Picked:
    """The selections of one load as SQL: the rows any of them picks, with a boolean column per
    selection (when there are several) telling which pick each row, and the rows' hashes of
    (record_id, fs) and of record_id (ROW_KEY; JOB_KEY, when several)."""

    def __init__(self, sels: list[Selection]):
        self.wheres = [s.where() for s in sels]
        self.flags = [f"__selected_{i}" for i in range(len(sels))] if len(sels) > 1 else []

    def sql(self, columns: str, source: str, also: str = "") -> tuple[str, list[Any]]:
        """(sql, params): `columns` of the rows of `source` that a selection picks (and `also`
        holds of), and the flags and hashes. The conditions stand in the WHERE as they are,
        where DuckDB tests them in the scan, before it decodes the other columns, whenever it
        can (a glob on one column: on its dictionary); the flags evaluate them again on the
        rows picked."""
        where = "(" + " OR ".join(f"({w})" for w, _ in self.wheres) + ")" + (f" AND ({also})" if also else "")
        params = [p for _, ps in self.wheres for p in ps]
        keys = f'hash("record_id", "fs") AS "{ROW_KEY}"'
        if not self.flags:
            return f"SELECT {columns}, {keys} FROM {source} WHERE {where}", params
        flags = ", ".join(f'coalesce(({w}), false) AS "{f}"' for (w, _), f in zip(self.wheres, self.flags))
        return (f'SELECT {columns}, {keys}, hash("record_id") AS "{JOB_KEY}", {flags} FROM {source} WHERE {where}',
                params + params)

    def rows(self, table, i: int):
        """The rows of `table` (an answer of sql()) selection i picks."""
        return _rows_where(table, self.flags[i]) if self.flags else table


def _rows_where(table, flag: str):
    """The rows whose boolean column `flag` is true. The answer's batches (a file's, or part of
    one) all of whose rows are are kept as they are, not copied, those with none dropped; only
    a batch of both is filtered (copied)."""
    import pyarrow as pa
    kept = []
    for batch in table.to_batches():
        keep = batch.column(flag).to_numpy(zero_copy_only=False)
        if keep.all():
            kept.append(batch)
        elif keep.any():
            kept.append(batch.filter(pa.array(keep)))
    return pa.Table.from_batches(kept, schema=table.schema)


def _side(con, i: int, sel: Selection, names: tuple[str, ...], picked: _Picked, shared: Loaded, ds: _Dataset,
          json_months: set, json_sel, ds_sel, files: list[Path], copies: bool) -> Loaded:
    """Selection i's rows (its columns `names`, and JOB_KEY when there are several selections)
    and counts out of one load's answers (see load_each)."""
    import pyarrow as pa
    out = Loaded(table=None, json_records=shared.json_records, json_in_dataset=shared.json_in_dataset,
                 records_skipped=shared.records_skipped, records_dirs_skipped=shared.records_dirs_skipped)
    # the dataset files its load alone would have checked: of the JSON records' months and its own
    read_by_it = [(f, line) for f, line in ds.left_out if ds.part[f] in json_months or sel.months(ds.part[f])]
    out.warnings = [*shared.warnings, *(line for _, line in read_by_it)]
    out.dataset_files_left_out = len(read_by_it)
    out.dataset_files = sum(1 for f in files if sel.months(ds.part[f]))
    schema = dataset.schema(names)
    if picked.flags:
        schema = schema.append(pa.field(JOB_KEY, pa.uint64()))
    json_rows = _cast(picked.rows(json_sel, i).select(schema.names), schema)
    out.json_rows = json_rows.num_rows
    parts = [json_rows]
    if ds_sel is not None:
        rows = picked.rows(ds_sel, i)
        rows = _cast((_one_per_job(con, rows) if copies else rows).select(schema.names), schema)
        parts.insert(0, distrust_negative_counts(rows))
        out.dataset_rows = rows.num_rows
    out.table = pa.concat_tables(parts)
    return out


def _cast(table, schema):
    """table as `schema` (the same columns), converting only the columns of another type."""
    if table.schema.equals(schema):
        return table
    for i, want in enumerate(schema):
        if table.field(i).type != want.type:
            table = table.set_column(i, want, table.column(i).cast(want.type))
    return table.cast(schema)
