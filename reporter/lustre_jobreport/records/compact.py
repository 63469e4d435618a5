"""records compact: the JSON job records into the Parquet dataset that `compare` reads.

The dataset (docs/records.md): <dataset_dir>/year=YYYY/month=M/part-<time>-<random>.parquet,
Hive-partitioned by the month (UTC) of the job's end (month=3, not zero-padded: DuckDB's Hive
partitioning reads month=03 as a string; a month=03 directory another tool wrote is the same
month to every reader here: partitions, part_files, merging, recordset), the columns of jobrow
(plain types only: string, int32, int64, float64, bool, timestamp[ms, UTC]; no dictionary or
extension types, so DuckDB, Spark and Trino read the files as they are), zstd-compressed, rows
sorted by job end in row groups of up to ROW_GROUP_ROWS rows. year and month are in the directory names only
(read_parquet(..., hive_partitioning=true) gives them back as integers).

What a run guarantees (tests/records/test_compact.py shows each):
- The dataset is the truth: a job (jobrow.record_id) is in it at most once. A record whose id
  the dataset already holds, or that a run meets twice (a copy in two day directories, a report
  re-added), is a duplicate: counted, not added.
- Atomic for readers: a Parquet file is written under a temp name (".part-….parquet.<hex>.tmp":
  a leading dot and no .parquet suffix, so neither DuckDB's `**/*.parquet` nor pyarrow.dataset
  lists it), fsynced, renamed into place and the directory fsynced. A run that dies leaves only
  such temp files, which the next run removes (under the lock, nobody else writes them).
- Records written while it runs: the run reads the records listed when it starts; one written
  later is left for the next run. A record is moved out of the live tree only after the Parquet
  file holding its rows is durable, and only if the file under its name is still the one read
  (same device, inode, size and mtime): one replaced meanwhile is put back and read next run.
  Temp files of records being written are never read (records.iter_records).
- Compacted JSON records are kept, moved to records_dir/.compacted/YYYY/MM/DD/: the live tree
  then holds exactly the records not compacted yet, which is what the next run and compare read
  besides the dataset (each run costs what is new, not everything ever stored). A crash between
  the Parquet file and the moves leaves records in both places: the next run skips them as
  duplicates and moves them, and compare prefers the dataset's rows (recordset.load), so nothing
  is counted twice. The JSON archive can be pruned by age or kept to rebuild the dataset.
- Never loses a record: one that cannot be read or converted (not JSON, truncated, a newer
  schema, a RecordError, a value no column type holds, a link or a directory where a record
  should be) is moved to records_dir/.unreadable/<same relative path> with a "<name>.why" file
  beside it, and named with its one-line reason in the summary; it is not retried.
- Small files: a month holding more than MERGE_OVER part files is rewritten into one (new file
  renamed in first, then the old ones removed): a reader listing the month in between may see a
  job twice and dedupes by record_id (recordset.load does), or find a listed file gone and list
  again (recordset.load retries). The merge reads one file and one batch at a time: open files
  and memory stay bounded whatever the month holds.
- The dataset knows its schema: every file states its version (partschema), and every file is
  checked before the run reads a record: one of another schema is set aside to
  dataset_dir/.foreign/<its month>/<name>.set-aside (with a .why; not *.parquet there, so no
  reader's glob takes it) and named in the summary, never merged; one of a newer version stops
  the run (one line naming it and its version) before anything is written or moved.
- A file that is not a readable Parquet file (its footer at that check; a column chunk when the
  run reads the file, for its jobs' ids or to merge it) is set aside the same way, to
  dataset_dir/.unreadable/: its bytes are kept, its jobs' records are in .compacted/, and every
  other file can still be maintained (it stopped every run, each checking every file). A file the
  system will not let the run read (EACCES, EIO, EMFILE...) may be whole: never set aside, the
  run stops with one line naming it and the system's reason (read_failure).
- One run at a time (flock on <dataset_dir>/.compact.lock); directories are created 0755 and
  checked like records_dir (securedir: the running user's, not group/other writable, not links),
  so root runs it on root's tree and an admin on their own directories. A YYYY, MM or DD
  directory of the records that fails the check is checked before any record is read from it
  and skipped, named in the summary (every run, until fixed); a .compacted or .unreadable
  subdirectory that fails it leaves its records unmoved, said: neither stops the run.
- Exit status (CompactResult.status): 0, done; 1, done, and the summary names what needs the
  admin (set aside, skipped, not moved, ignored); a run that cannot work raises JobReportError
  (the CLI's exit 2) before it moves anything.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from . import jobrow, partschema, store as records
from .dataset import (BATCH_ROWS, COMPRESSION, FOREIGN, ROW_ERRORS, ROW_GROUP_ROWS, SET_ASIDE, TEMP_RE, UNREADABLE, Part,
                      dataset_files, entries, month_dirs, one_line, part_dirs, part_name, part_of, read_failure,
                      read_row_groups, record_ids, records_table, schema)
from ..safeio import securedir
from ..safeio.atomicfile import replacing_at
from ..errors import JobReportError

MERGE_OVER = 16              # a month with more part files than this is rewritten into one
MAX_PENDING_TABLES = 256     # small tables a writer holds before joining them into one
MAX_DIR_FDS = 64             # directories of records kept open while moving them
LOCK_NAME = ".compact.lock"


Ident = tuple[int, int, int, int]


def _ident(st: os.stat_result) -> Ident:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _stamp() -> str:
    return f"{datetime.now(timezone.utc):%Y%m%dT%H%M%S}Z-{os.urandom(4).hex()}"


@dataclass
class CompactResult:
    records_dir: Path
    dataset_dir: Path
    records_read: int = 0        # record files read and parsed
    records_added: int = 0       # jobs new to the dataset
    rows_added: int = 0
    duplicates: int = 0          # jobs the dataset held already, or met twice in the run
    no_rows: int = 0             # records of jobs without a filesystem (no row to add)
    set_aside: list[tuple[str, str]] = field(default_factory=list)   # (relative path, reason)
    ignored: list[tuple[str, str]] = field(default_factory=list)     # not record files, left alone
    left: int = 0                # replaced while the run read them: left for the next run
    moved: int = 0               # JSON records moved to .compacted
    files_written: list[str] = field(default_factory=list)           # relative to dataset_dir
    merged: list[tuple[str, int, int, str]] = field(default_factory=list)  # (partition, files, duplicate rows dropped, new file)
    files_set_aside: list[tuple[str, str, str]] = field(default_factory=list)  # dataset files: (path, reason, now)
    skipped_dirs: list[tuple[str, str]] = field(default_factory=list)  # records directories not read: (path, reason)
    not_moved: list[tuple[str, str]] = field(default_factory=list)     # records in the dataset, not moved: (path, reason)
    stale_temps: int = 0         # temp files of a run that died, removed
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def needs_admin(self) -> bool:
        """Whether the run set aside, skipped or ignored something an admin has to look at
        (each is a line of the summary)."""
        return bool(self.set_aside or self.files_set_aside or self.skipped_dirs or self.not_moved or self.ignored)

    def status(self) -> int:
        """The exit status: 0, the run did its work; 1, it did, and set aside or skipped what
        the summary names (the unit's state says so); a run that could not do its work raises
        JobReportError instead (exit 2)."""
        return 1 if self.needs_admin() else 0

    def summary(self) -> str:
        """Lines for a cron mail or the journal: the totals first, then one line per thing
        an admin may need to look at."""
        head = (f"records compact: {_n(self.records_read, 'record')} read, {_n(self.records_added, 'job')} added "
                f"({_n(self.rows_added, 'row')}) in {_n(len(self.files_written), 'file')}, "
                f"{_n(self.duplicates, 'duplicate')} skipped, {len(self.set_aside)} set aside, "
                f"{self.moved:,} moved to {records.COMPACTED}; {self.seconds:.2f} s; dataset {self.dataset_dir}")
        lines = [head]
        if self.no_rows:
            lines.append(f"records compact: {self.no_rows:,} record(s) of jobs without a Lustre filesystem "
                         "(no rows to add), moved to .compacted")
        for rel, why in self.set_aside:
            lines.append(f"records compact: set aside {rel}: {why} (now {UNREADABLE}/{rel})")
        for rel, why in self.ignored:
            lines.append(f"records compact: ignored {rel}: {why}")
        for rel, why in self.skipped_dirs:
            lines.append(f"records compact: skipped {rel}/: {why}; no record under it read (fix its owner "
                         "and mode; the next run compacts it)")
        for why, rels in _grouped(self.not_moved).items():
            lines.append(f"records compact: not moved {_n(len(rels), 'record')} ({rels[0]}"
                         f"{', …' if len(rels) > 1 else ''}): {why} (the next run moves them once that is fixed)")
        if self.left:
            lines.append(f"records compact: {self.left} record(s) replaced while the run read them, "
                         "left for the next run")
        for part, files, dropped, _ in self.merged:
            lines.append(f"records compact: merged {part}: {files} files into 1"
                         + (f", {dropped:,} duplicate row(s) dropped" if dropped else ""))
        for rel, why, now in self.files_set_aside:
            lines.append(f"records compact: set aside dataset file {rel}: {why} (now {now})")
        if self.stale_temps:
            lines.append(f"records compact: removed {self.stale_temps} temp file(s) of an interrupted run")
        lines += [f"records compact: {note}" for note in self.notes]
        return "\n".join(lines) + "\n"


def _grouped(pairs: list[tuple[str, str]]) -> dict[str, list[str]]:
    """(item, reason) pairs as reason -> items, in the order met."""
    out: dict[str, list[str]] = {}
    for item, why in pairs:
        out.setdefault(why, []).append(item)
    return out


def _why(exc: OSError) -> str:
    return exc.strerror or one_line(exc)


def _n(n: int, what: str) -> str:
    return f"{n:,} {what}{'s' * (n != 1)}"


class _PartWriter:
    """One new Parquet file of one partition: written under a temp name (atomicfile.replacing_at,
    durable), renamed in on commit."""

    def __init__(self, dataset_dir: Path, part: Part):
        import pyarrow.parquet as pq
        self.part = part
        self.name = f"part-{_stamp()}.parquet"
        self.pending: list = []
        self.npending = 0
        self.fd = _open_dir(dataset_dir, part_dirs(part))
        self.out = replacing_at(self.fd, self.name, "wb", securedir.FILE_MODE, suffix=".tmp", durable=True)
        try:
            self.file = self.out.__enter__()
        except BaseException:
            self.close()
            raise
        try:
            self.writer = pq.ParquetWriter(self.file, partschema.arrow_schema(), compression=COMPRESSION,
                                           write_statistics=True)
        except BaseException:
            self._discard()
            raise

    def add(self, table) -> None:
        if table.num_rows:
            self.pending.append(table)
            self.npending += table.num_rows
            if self.npending >= ROW_GROUP_ROWS:
                self._flush(final=False)
            elif len(self.pending) >= MAX_PENDING_TABLES:    # a merge of many small files: each
                self._join_pending()                         # table costs far more than its rows

    def _join_pending(self) -> None:
        import pyarrow as pa
        self.pending = [pa.concat_tables(self.pending).combine_chunks()]

    def _flush(self, final: bool) -> None:
        import pyarrow as pa
        if not self.pending:
            return
        t = pa.concat_tables(self.pending).sort_by([("end", "ascending"), ("record_id", "ascending"),
                                                    ("fs", "ascending")])
        n = t.num_rows if final else (t.num_rows // ROW_GROUP_ROWS) * ROW_GROUP_ROWS
        if n:
            self.writer.write_table(t.slice(0, n), row_group_size=ROW_GROUP_ROWS)
        self.pending = [t.slice(n)] if n < t.num_rows else []
        self.npending = t.num_rows - n

    def commit(self) -> str:
        """Flush, fsync, rename into place, fsync the directory: the file is durable."""
        try:
            self._flush(final=True)
            self.writer.close()
        except BaseException:
            self.abort()
            raise
        try:
            self.out.__exit__(None, None, None)
        finally:
            self.out = None
            self.close()
        return f"{part_name(self.part)}/{self.name}"

    def abort(self) -> None:
        try:
            self.writer.close()
        except Exception:
            pass
        self._discard()

    def _discard(self) -> None:
        """The temp file removed (an error closing it, e.g. a full disk, ignored) and the
        directory closed."""
        if self.out is not None:
            try:
                self.out.__exit__(_Aborted, _Aborted(), None)
            except Exception:
                pass
            self.out = None
        self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
        self.fd = -1


class _Aborted(Exception):
    """Given to replacing_at's exit so that it removes the temp file instead of renaming it."""


def _open_dir(base: Path, subdirs=()) -> int:
    try:
        return securedir.open_dir(base, subdirs)
    except OSError as exc:
        raise JobReportError(f"{Path(base, *subdirs)}: {exc.strerror}") from None


@dataclass
class _Pending:
    rel: Path
    ident: Ident
    rid: str
    part: Part
    rows: list


class _Run:
    def __init__(self, rdir: Path, ddir: Path, res: CompactResult):
        self.rdir, self.ddir, self.res = rdir, ddir, res
        self.writers: dict[Part, _PartWriter] = {}
        self.pending: list[_Pending] = []
        self.npending = 0
        self.seen: set[str] = set()          # record ids added in this run
        self.failed: set[str] = set()        # record ids whose record was set aside at conversion
        self.known: dict[Part, set[str]] = {}
        self.found: dict[Part, list[Path]] = {}      # the dataset's files as the run found them, checked
        self.checked: dict[Path, partschema.Checked] = {}
        self.added: dict[Part, list[tuple[Path, Ident]]] = {}
        self.unwritten: dict[Part, list[int]] = {}   # [records, rows] in a month's open file
        self.committed: list[Part] = []
        self.dups: list[tuple[Path, Ident, str | None]] = []
        self.aside: list[tuple[Path, str, Ident | None]] = []
        self.dir_fds: dict[tuple[str, ...], int] = {}

    # -- reading and converting --------------------------------------------------------------
    def read_all(self) -> None:
        """Every record of the live tree converted; a YYYY, MM or DD directory that fails
        securedir's checks (another owner, writable by others) is checked before any record is
        read from it: nothing under it is read, and it is named once, with its reason, in the
        summary (records_dir itself was checked before the run began)."""
        odd: list[tuple[Path, str]] = []
        check = records.DirCheck(self.rdir, top=False)
        for path in records.iter_records(self.rdir, odd, check):
            self.one(path)
        self.res.skipped_dirs += check.refused
        self.convert()
        for path, why in odd:
            rel = path.relative_to(self.rdir)
            if len(rel.parts) == 4:          # YYYY/MM/DD/<name>.json: not a record file
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                self.aside.append((rel, why, _ident(st)))
            else:
                self.res.ignored.append((str(rel), why))

    def one(self, path: Path) -> None:
        rel = path.relative_to(self.rdir)
        try:
            doc, st = records.load_stat(path)
        except records.RecordFileError as exc:
            if exc.stat is None and exc.reason == "no such file":
                return                        # moved away meanwhile: not ours to count
            self.aside.append((rel, exc.reason, _ident(exc.stat) if exc.stat else None))
            return
        self.res.records_read += 1
        ident = _ident(st)
        try:
            rows = jobrow.rows(doc)
        except ROW_ERRORS as exc:
            self.aside.append((rel, one_line(exc), ident))
            return
        if not rows:
            self.res.no_rows += 1
            self.dups.append((rel, ident, None))
            return
        rid, part = rows[0]["record_id"], part_of(rows[0]["end"])
        if rid in self.seen or rid in self.known_ids(part):
            self.res.duplicates += 1
            self.dups.append((rel, ident, rid))
            return
        self.seen.add(rid)
        self.pending.append(_Pending(rel, ident, rid, part, rows))
        self.npending += len(rows)
        if self.npending >= BATCH_ROWS:
            self.convert()

    def known_ids(self, part: Part) -> set[str]:
        """The ids of the jobs the month's files hold, read once a run, one file at a time (a
        month this run writes is looked at before it does); a file that is not readable Parquet
        is set aside and holds none."""
        if part not in self.known:
            ids: set[str] = set()
            for f in list(self.found.get(part, [])):
                try:
                    ids |= record_ids(f)
                except partschema.UnreadableParquet as exc:
                    self.set_aside_unreadable(exc)
                    self.found[part].remove(f)
            self.known[part] = ids
        return self.known[part]

    def convert(self) -> None:
        import pyarrow as pa
        groups: dict[Part, list[_Pending]] = {}
        for p in self.pending:
            groups.setdefault(p.part, []).append(p)
        self.pending, self.npending = [], 0
        for part, items in groups.items():
            table, bad = records_table([p.rows for p in items])
            for i, exc in bad:
                p = items[i]
                self.aside.append((p.rel, str(exc), p.ident))
                self.seen.discard(p.rid)
                self.failed.add(p.rid)
            if table is None:
                continue
            if bad:
                left_out = {i for i, _ in bad}
                items = [p for i, p in enumerate(items) if i not in left_out]
            if part not in self.writers:
                self.writers[part] = _PartWriter(self.ddir, part)
            self.writers[part].add(table)
            self.added.setdefault(part, []).extend((p.rel, p.ident) for p in items)
            counts = self.unwritten.setdefault(part, [0, 0])
            counts[0] += len(items)
            counts[1] += table.num_rows
        # Records come in day order, so a month absent from this batch is done: its file is
        # finished now, which bounds the memory and descriptors of a backlog of many months to
        # about one month's (its records still move only after the run's last file).
        for part in [p for p in self.writers if p not in groups]:
            self.commit_one(part)
        # pyarrow's allocator (mimalloc) keeps what each batch freed unless told: without this
        # a run's resident memory grows with the records it reads, not with one batch and month
        pa.default_memory_pool().release_unused()

    def commit_one(self, part: Part) -> None:
        self.res.files_written.append(self.writers[part].commit())
        del self.writers[part]
        self.committed.append(part)
        n_records, n_rows = self.unwritten.pop(part)
        self.res.records_added += n_records
        self.res.rows_added += n_rows

    def commit(self) -> None:
        """Every new file durable (the caller turns an OSError into one line; a month already
        renamed in stays: its records are read again next run and skipped as duplicates)."""
        for part in sorted(self.writers):
            self.commit_one(part)

    def abort(self) -> None:
        for w in self.writers.values():
            w.abort()
        self.writers.clear()

    # -- moving records out of the live tree --------------------------------------------------
    def move_all(self) -> None:
        for part in dict.fromkeys(self.committed):
            for rel, ident in self.added.pop(part, ()):
                self.move(rel, ident, records.COMPACTED)
        for rel, ident, rid in self.dups:
            if rid is None or rid not in self.failed:    # its first copy was set aside: read it again
                self.move(rel, ident, records.COMPACTED)
        for rel, why, ident in sorted(self.aside, key=lambda a: a[0]):
            if self.move(rel, ident, UNREADABLE, why):
                self.res.set_aside.append((str(rel), why))

    def dir_fd(self, parts: tuple[str, ...]) -> int:
        if parts not in self.dir_fds:
            self.dir_fds[parts] = _open_dir(self.rdir, parts)
        return self.dir_fds[parts]

    def move(self, rel: Path, ident: Ident | None, where: str, why: str | None = None) -> bool:
        """rel moved to <where>/rel if the file there is still the one read; True if it was."""
        *days, name = rel.parts
        if len(self.dir_fds) + 2 > MAX_DIR_FDS:     # records come day by day: the old days are done
            self.close()
        try:
            src = self.dir_fd(tuple(days))
            dst = self.dir_fd((where, *days))
        except securedir.UnsafeDirError as exc:      # e.g. .compacted/2026 made writable by others:
            self.res.not_moved.append((str(rel), str(exc)))     # said, not a reason to stop the run
            return False
        target = _free_name(dst, name)
        try:
            os.rename(name, target, src_dir_fd=src, dst_dir_fd=dst)
        except FileNotFoundError:
            return False                      # gone meanwhile (someone else moved it)
        st = os.stat(target, dir_fd=dst, follow_symlinks=False)
        if ident is not None and _ident(st) != ident:
            _give_back(dst, target, src, name)
            self.res.left += 1
            return False
        if where == records.COMPACTED:
            self.res.moved += 1
        if why is not None:                   # beside it, in the directory already open and checked
            with replacing_at(dst, target + ".why", "wb", perm=securedir.FILE_MODE) as out:
                out.write(f"{why}\n".encode())
        return True

    def close(self) -> None:
        for fd in self.dir_fds.values():
            os.close(fd)
        self.dir_fds.clear()

    # -- small files ----------------------------------------------------------------------------
    def merge_all(self) -> None:
        for part, files in dataset_files(self.ddir).items():
            if len(files) > MERGE_OVER:
                self.merge(part, [f for f in files if not self.version_of(f).foreign])

    def merge(self, part: Part, files: list[Path]) -> None:
        """The month's files rewritten into one (merge_once); a file met that is not readable
        Parquet is set aside and the month merged without it."""
        while len(files) > 1:
            try:
                return self.merge_once(part, files)
            except partschema.UnreadableParquet as exc:
                self.set_aside_unreadable(exc)
                files = [f for f in files if f != exc.path]

    def merge_once(self, part: Part, files: list[Path]) -> None:
        """The month's files rewritten into one, read one file and one row group at a time (open
        files and memory bounded whatever their number; the oldest copy of a job kept), the new
        file renamed in before the old ones are removed."""
        w = _PartWriter(self.ddir, part)
        seen: set[str] = set()
        dropped = 0
        try:
            for f in files:
                dropped += self.merge_file(f, w, seen)
            name = w.commit()
        except BaseException:
            w.abort()
            raise
        by_dir: dict[Path, list[Path]] = {}
        for f in files:                       # month=3's and a zero-padded month=03's alike
            by_dir.setdefault(f.parent, []).append(f)
        for d, fs in by_dir.items():
            fd = _open_dir(self.ddir, d.relative_to(self.ddir).parts)
            try:
                for f in fs:
                    try:
                        os.unlink(f.name, dir_fd=fd)
                    except FileNotFoundError:
                        pass
                os.fsync(fd)
            finally:
                os.close(fd)
        self.res.merged.append((part_name(part), len(files), dropped, name))

    @staticmethod
    def merge_file(f: Path, w: _PartWriter, seen: set[str]) -> int:
        """f's rows added to w but those of jobs an older file gave (their ids in `seen`; f's
        own join them after it: a job's rows, one per filesystem, share its id); the rows
        dropped."""
        import pyarrow as pa
        s = schema()
        here: set[str] = set()
        dropped = 0
        for t in read_row_groups(f):
            t = _conform(t, s)                                   # an older version's columns: null
            ids = t.column("record_id").to_pylist()
            kept = t.filter(pa.array([i not in seen for i in ids], pa.bool_()))
            here.update(ids)
            dropped += t.num_rows - kept.num_rows
            w.add(kept)
        seen |= here
        return dropped

    # -- the dataset's files and their schema -------------------------------------------------
    def check_dataset(self) -> None:
        """Every file of the dataset checked against the schema it states, before the run reads
        any record, and only then are those of another schema or not readable set aside (named
        in the summary): a file of a newer schema (NewerSchemaError), or one the system will not
        let the run read, stops the run before anything is moved."""
        listed = dataset_files(self.ddir)
        judged = {f: self.judge(f) for files in listed.values() for f in files}
        self.found = {}
        for part, files in listed.items():
            for f in files:
                if not self.set_aside_if_bad(f, judged[f]).foreign:
                    self.found.setdefault(part, []).append(f)

    def version_of(self, f: Path) -> partschema.Checked:
        """f's schema (checked once a run); a file of another schema, or not a readable Parquet
        file, is set aside at once (and then read as no version: never merged, no ids); one the
        system will not let the run read stops it."""
        if f not in self.checked:
            self.set_aside_if_bad(f, self.judge(f))
        return self.checked[f]

    @staticmethod
    def judge(f: Path) -> partschema.Checked | partschema.UnreadableParquet:
        """f's schema, or why it is not a readable Parquet file; NewerSchemaError, or
        read_failure's line for what the system will not let the run read."""
        try:
            return partschema.check(f)
        except partschema.UnreadableParquet as exc:
            return exc
        except OSError as exc:
            raise read_failure(f, exc) from None

    def set_aside_if_bad(self, f: Path, judged: partschema.Checked | partschema.UnreadableParquet
                         ) -> partschema.Checked:
        """judge()'s verdict acted on: a file of another schema to .foreign/, one that is not
        readable to .unreadable/; what the run then takes f for."""
        if isinstance(judged, partschema.UnreadableParquet):
            self.set_aside_unreadable(judged)
        else:
            if judged.foreign:
                self.set_aside_file(f, judged.why, FOREIGN)
            self.checked[f] = judged
        return self.checked[f]

    def set_aside_unreadable(self, exc: partschema.UnreadableParquet) -> None:
        """A file that is not a readable Parquet file set aside to dataset_dir/.unreadable/."""
        self.set_aside_file(exc.path, exc.reason, UNREADABLE)
        self.checked[exc.path] = partschema.Checked(exc.path, None, exc.reason)

    def set_aside_file(self, path: Path, why: str, where: str) -> None:
        """A dataset file moved to dataset_dir/<where>/<its month>/ as <name>.set-aside (no
        reader's *.parquet takes it there), its reason in <name>.why, named in the summary."""
        rel = path.relative_to(self.ddir)
        try:
            src = _open_dir(self.ddir, rel.parent.parts)
            try:
                dst = _open_dir(self.ddir, (where, *rel.parent.parts))
                try:
                    target = _free_name(dst, rel.name + SET_ASIDE)
                    with replacing_at(dst, target[:-len(SET_ASIDE)] + ".why", "wb", perm=securedir.FILE_MODE) as out:
                        out.write(f"{why}\n".encode())     # first: a file moved always says why
                    os.rename(rel.name, target, src_dir_fd=src, dst_dir_fd=dst)
                    os.fsync(src)
                finally:
                    os.close(dst)
            finally:
                os.close(src)
        except OSError as exc:
            raise JobReportError(f"cannot set aside dataset file {path} ({why}): {_why(exc)}") from None
        self.res.files_set_aside.append((str(rel), why, str(Path(where, rel.parent, target))))

    def remove_stale_temps(self) -> None:
        for d in [d for dirs in month_dirs(self.ddir).values() for d in dirs]:
            for e in entries(d):
                if TEMP_RE.fullmatch(e.name) and e.is_file(follow_symlinks=False):
                    try:
                        os.unlink(e.path)
                        self.res.stale_temps += 1
                    except FileNotFoundError:
                        pass


def _conform(t, s):
    """t with the columns of schema s in its order; a column an older file lacks is null."""
    import pyarrow as pa
    if t.schema.equals(s, check_metadata=False):
        return t
    have = set(t.column_names)
    cols = [t.column(f.name) if f.name in have else pa.nulls(t.num_rows, f.type) for f in s]
    return pa.Table.from_arrays(cols, schema=s)


def _free_name(dir_fd: int, name: str) -> str:
    """name, or name with .1, .2 ... before its suffix: the first not taken in dir_fd (only the
    compaction holding the lock writes these directories)."""
    stem, dot, suffix = name.rpartition(".")
    if not dot:
        stem, suffix = name, ""
    for n in range(0, 10_000):
        cand = name if n == 0 else f"{stem}.{n}{dot}{suffix}"
        try:
            os.stat(cand, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return cand
    raise JobReportError(f"no free name for {name} in the compacted records")


def _give_back(from_fd: int, target: str, to_fd: int, name: str) -> None:
    """A file taken by mistake (written under the name after it was read) back into the live
    tree: under its own name unless a newer one took that too, then beside it."""
    stem = name[:-len(".json")] if name.endswith(".json") else name
    for cand in [name] + [f"{stem}.returned-{os.urandom(3).hex()}.json" for _ in range(20)]:
        try:
            os.link(target, cand, src_dir_fd=from_fd, dst_dir_fd=to_fd, follow_symlinks=False)
        except FileExistsError:
            continue
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV):
                raise
            try:                              # no hard links here: a rename, after a look
                os.stat(cand, dir_fd=to_fd, follow_symlinks=False)
                continue
            except FileNotFoundError:
                os.rename(target, cand, src_dir_fd=from_fd, dst_dir_fd=to_fd)
                return
        os.unlink(target, dir_fd=from_fd)
        return
    raise JobReportError(f"cannot put {name} back into the records: every name tried is taken")


def _lock(ds_fd: int, ddir: Path, res: CompactResult) -> int:
    try:
        fd = os.open(LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=ds_fd)
    except OSError as exc:
        raise JobReportError(f"{ddir / LOCK_NAME}: {_why(exc)}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise JobReportError(f"another `records compact` is running on {ddir} (it holds {ddir / LOCK_NAME})") from None
    except OSError as exc:
        if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
            os.close(fd)
            raise
        res.notes.append(f"{ddir} cannot be locked ({exc.strerror}): run one compaction at a time")
    return fd


def compact(records_dir: str | Path | None, dataset_dir: str | Path | None) -> CompactResult:
    """Add the records not compacted yet to the dataset; see the module's docstring."""
    started = time.monotonic()
    if not records_dir:
        raise JobReportError("no records directory: give --records DIR or set [hooks] records_dir")
    if not dataset_dir:
        raise JobReportError("no dataset directory: give --dataset DIR or set [records] dataset_dir")
    rdir, ddir = Path(os.path.abspath(records_dir)), Path(os.path.abspath(dataset_dir))
    res = CompactResult(rdir, ddir)
    try:
        _compact(rdir, ddir, res)
    except JobReportError as exc:
        if res.files_set_aside:             # said, though the summary that would have is not
            raise JobReportError(f"{exc} (before it stopped, the run set aside {_set_aside_text(res)})") from None
        raise
    res.seconds = time.monotonic() - started
    return res


def _set_aside_text(res: CompactResult) -> str:
    rel, why, now = res.files_set_aside[0]
    more = len(res.files_set_aside) - 1
    return f"dataset file {rel}: {why} (now {now})" + (f" and {more} more" if more else "")


def _compact(rdir: Path, ddir: Path, res: CompactResult) -> None:
    ds_fd = _open_dir(ddir)
    try:
        lock = _lock(ds_fd, ddir, res)
        try:
            run = _Run(rdir, ddir, res)
            try:
                run.remove_stale_temps()
                records_here = os.path.isdir(rdir) and not os.path.islink(rdir)
                if records_here:
                    for sub in ((), (records.COMPACTED,), (UNREADABLE,)):
                        os.close(_open_dir(rdir, sub))    # checked (and the two made) before any work
                elif os.path.lexists(rdir):
                    _open_dir(rdir)                       # says what it is instead (a link, a file)
                run.check_dataset()                       # a file set aside only once all are judged
                if records_here:
                    try:
                        run.read_all()
                        run.commit()
                    except OSError as exc:    # the dataset's disk full, a write refused...
                        run.abort()
                        raise JobReportError(f"cannot write the dataset under {ddir}: {_why(exc)}; "
                                             "no record was moved") from None
                    except BaseException:
                        run.abort()
                        raise
                    try:
                        run.move_all()
                    except OSError as exc:
                        raise JobReportError(f"cannot move compacted records under {rdir}: {_why(exc)}; "
                                             "the next run skips them as duplicates and moves them") from None
                else:
                    res.notes.append(f"{rdir} does not exist: no records to read")
                try:
                    run.merge_all()
                except OSError as exc:
                    raise JobReportError(f"cannot merge small files under {ddir}: {_why(exc)}; "
                                         "the dataset is as it was before the merge") from None
            finally:
                run.close()
        finally:
            os.close(lock)
    finally:
        os.close(ds_fd)
