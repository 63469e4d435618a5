"""records compact: JSON records into the Parquet dataset. Each guarantee of compact.py's
docstring has a test here that fails without it: idempotence and dedupe by record_id, records
written during a run, files atomic for readers (DuckDB and pyarrow.dataset), nothing lost (a
record that cannot be compacted is set aside with its reason, once), small files merged, one run
at a time, directories checked."""

from __future__ import annotations

import errno
import fcntl
import json
import multiprocessing
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest

from lustre_jobreport.records import compact, dataset as dataset_layer, jobrow, partschema, store as records, recordset
from lustre_jobreport.records import add as records_add
from lustre_jobreport.safeio import securedir
from lustre_jobreport.errors import JobReportError

from kit.records import (as_version_2, damage, foreign_files, many_part_files, put, record_doc, report_doc,
                              rows_table, with_new_metric, write_part)


@pytest.fixture
def dirs(tmp_path):
    return tmp_path / "records", tmp_path / "dataset"


def ddb(dataset, query="SELECT * FROM ds"):
    """query over the dataset as an outside reader would see it: DuckDB's glob, Hive partitions."""
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute(f"CREATE VIEW ds AS SELECT * FROM read_parquet('{dataset}/**/*.parquet', hive_partitioning=true)")
    return con.sql(query).fetchall()


def ids_in(dataset):
    return sorted(r[0] for r in ddb(dataset, "SELECT record_id FROM ds"))


def jobs_in(dataset):
    return sorted(r[0] for r in ddb(dataset, "SELECT DISTINCT record_id FROM ds"))


def live(records_dir):
    return [str(p.relative_to(records_dir)) for p in records.iter_records(records_dir)]


def parts(dataset):
    return sorted(str(p.relative_to(dataset)) for p in Path(dataset).rglob("*") if p.is_file()
                  and p.name != compact.LOCK_NAME)


# -- the dataset --------------------------------------------------------------------------------

def test_records_become_rows_readable_by_duckdb_and_pyarrow_with_plain_types(dirs):
    rec, ds = dirs
    put(rec, "1", end="2026-10-15T12:00:00Z", fs=("scratch", "home"))
    put(rec, "2", end="2026-10-31T23:59:59Z")
    put(rec, "3", end="2026-11-01T00:00:00Z", lustre=["2.15.4", "2.16.0"])
    res = compact.compact(rec, ds)
    assert (res.records_read, res.records_added, res.rows_added, res.duplicates) == (3, 3, 4, 0)
    assert [f.split("/part-")[0] for f in res.files_written] == ["year=2026/month=10", "year=2026/month=11"]
    # DuckDB: the partition columns come back from the paths, as integers
    got = ddb(ds, "SELECT year, month, job_id, fs, lustre FROM ds ORDER BY job_id, fs")
    assert got == [(2026, 10, "1", "home", "2.15.4"), (2026, 10, "1", "scratch", "2.15.4"),
                   (2026, 10, "2", "scratch", "2.15.4"), (2026, 11, "3", "scratch", "2.15.4;2.16.0")]
    types = dict((r[0], r[1]) for r in duckdb.sql(
        f"DESCRIBE SELECT * FROM read_parquet('{ds}/**/*.parquet', hive_partitioning=true)").fetchall())
    assert (types["year"], types["month"], types["end"], types["num_nodes"], types["trusted"]) == \
        ("BIGINT", "BIGINT", "TIMESTAMP WITH TIME ZONE", "INTEGER", "BOOLEAN")
    # pyarrow.dataset with Hive partitioning reads the same rows
    t = pads.dataset(ds, format="parquet", partitioning="hive").to_table()
    assert t.num_rows == 4 and sorted(set(t.column("month").to_pylist())) == [10, 11]
    # each file: exactly jobrow's columns and types (no year/month inside, no dictionary or
    # extension type), zstd, values as jobrow made them
    for f in Path(ds).rglob("*.parquet"):
        pf = pq.ParquetFile(f)
        assert pf.schema_arrow.remove_metadata() == jobrow.arrow_schema()
        assert not any(pa.types.is_dictionary(fld.type) for fld in pf.schema_arrow)
        assert {pf.metadata.row_group(0).column(i).compression for i in range(pf.metadata.num_columns)} == {"ZSTD"}
        end = json.loads(pf.schema.column(pf.schema_arrow.get_field_index("end")).logical_type.to_json())
        assert (end["Type"], end["isAdjustedToUTC"], end["timeUnit"]) == ("Timestamp", True, "milliseconds")
    want = jobrow.rows(records.load(next(Path(rec, ".compacted").rglob("c1-1.json"))))
    have = pq.read_table(next(Path(ds).rglob("year=2026/month=10/*.parquet"))).to_pylist()
    have = [r for r in have if r["job_id"] == "1"]
    assert [{k: r[k] for k in jobrow.COLUMNS if k not in ("begin", "end")} for r in have] == \
        [{k: r[k] for k in jobrow.COLUMNS if k not in ("begin", "end")} for r in want]
    assert [r["end"] for r in have] == [r["end"] for r in want]


def test_modes_of_what_it_creates(dirs):
    rec, ds = dirs
    put(rec, "1")
    old = os.umask(0o077)
    try:
        compact.compact(rec, ds)
    finally:
        os.umask(old)
    for d in (ds, ds / "year=2026", ds / "year=2026" / "month=10", rec / ".compacted", rec / ".unreadable"):
        st = os.stat(d)
        assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (os.geteuid(), 0o755), d
    [f] = Path(ds).rglob("*.parquet")
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o644


def test_row_groups_are_bounded(dirs, monkeypatch):
    rec, ds = dirs
    monkeypatch.setattr(compact, "ROW_GROUP_ROWS", 4)
    monkeypatch.setattr(compact, "BATCH_ROWS", 3)
    for i in range(10):
        put(rec, str(i), end=f"2026-10-{10 + i}T00:00:00Z")
    compact.compact(rec, ds)
    [f] = Path(ds).rglob("*.parquet")
    md = pq.ParquetFile(f).metadata
    assert [md.row_group(i).num_rows for i in range(md.num_row_groups)] == [4, 4, 2]
    ends = pq.read_table(f, columns=["end"]).column(0).to_pylist()
    assert ends == sorted(ends)


# -- idempotent, deduplicated -------------------------------------------------------------------

def test_a_second_run_adds_nothing(dirs):
    rec, ds = dirs
    for i in range(5):
        put(rec, str(i))
    first = compact.compact(rec, ds)
    before = parts(ds)
    again = compact.compact(rec, ds)
    assert (first.records_added, again.records_read, again.records_added, again.files_written) == (5, 0, 0, [])
    assert parts(ds) == before and ids_in(ds) == sorted(f"c1/{i}/2026-10-15T12:00:00Z" for i in range(5))


def test_a_record_seen_twice_counts_once(dirs):
    rec, ds = dirs
    a = put(rec, "1", end="2026-10-15T12:00:00Z")
    other_day = rec / "2026" / "10" / "16"
    other_day.mkdir(parents=True)
    shutil.copy(a, other_day / a.name)                    # a copy in another day directory
    res = compact.compact(rec, ds)
    assert (res.records_read, res.records_added, res.duplicates, res.moved) == (2, 1, 1, 2)
    assert ids_in(ds) == ["c1/1/2026-10-15T12:00:00Z"]
    assert live(rec) == []


def test_a_record_stored_again_after_compaction_is_a_duplicate(dirs, tmp_path):
    rec, ds = dirs
    put(rec, "1")
    compact.compact(rec, ds)
    put(rec, "1")                                         # the epilog ran twice, or records add again
    records_add.add(put(tmp_path / "elsewhere", "1"), rec)   # the same job re-added by hand (cluster c1 kept)
    res = compact.compact(rec, ds)
    assert (res.records_read, res.records_added, res.duplicates) == (1, 0, 1)
    assert ids_in(ds) == ["c1/1/2026-10-15T12:00:00Z"] and live(rec) == []
    # both copies are kept in .compacted, not overwritten
    assert sorted(p.name for p in (rec / ".compacted").rglob("*.json")) == ["c1-1.1.json", "c1-1.json"]


def test_the_dataset_is_the_truth_not_the_moved_records(dirs):
    """A record back in the live tree (an admin moved .compacted back) is not added twice."""
    rec, ds = dirs
    for i in range(3):
        put(rec, str(i))
    compact.compact(rec, ds)
    for p in (rec / ".compacted").rglob("*.json"):
        os.rename(p, rec / p.relative_to(rec / ".compacted"))
    res = compact.compact(rec, ds)
    assert (res.records_read, res.records_added, res.duplicates) == (3, 0, 3)
    assert len(ids_in(ds)) == 3


# -- interrupted runs, concurrent writers --------------------------------------------------------

def test_a_crash_between_the_parquet_file_and_the_moves_double_counts_nothing(dirs, monkeypatch):
    rec, ds = dirs
    for i in range(4):
        put(rec, str(i))

    def crash(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(compact._Run, "move_all", crash)
    with pytest.raises(KeyboardInterrupt):
        compact.compact(rec, ds)
    monkeypatch.undo()
    assert len(live(rec)) == 4 and len(ids_in(ds)) == 4        # in both places now
    loaded = recordset.load("", rec, ds)                        # compare counts each job once
    assert loaded.table.num_rows == 4 and loaded.json_in_dataset == 4 and loaded.json_rows == 0
    res = compact.compact(rec, ds)
    assert (res.records_added, res.duplicates, res.moved) == (0, 4, 4)
    assert len(ids_in(ds)) == 4 and live(rec) == []


def _die_before_rename(rec, ds):
    def commit(self):
        self._flush(final=True)
        self.writer.close()
        self.file.close()
        os._exit(9)                                             # SIGKILL-like: no cleanup at all
    compact._PartWriter.commit = commit
    compact.compact(rec, ds)


def test_a_run_killed_while_writing_leaves_nothing_a_reader_sees_and_is_cleaned_up(dirs):
    rec, ds = dirs
    put(rec, "1", end="2026-10-01T00:00:00Z")
    compact.compact(rec, ds)
    for i in range(2, 6):
        put(rec, str(i), end="2026-10-02T00:00:00Z")
    p = multiprocessing.get_context("fork").Process(target=_die_before_rename, args=(rec, ds))
    p.start()
    p.join()
    assert p.exitcode == 9
    [tmp] = [f for f in parts(ds) if "/." in f]
    assert dataset_layer.TEMP_RE.fullmatch(Path(tmp).name) and os.path.getsize(ds / tmp) > 0
    # readers do not see it: DuckDB's glob, pyarrow.dataset, recordset
    assert ids_in(ds) == ["c1/1/2026-10-01T00:00:00Z"]
    assert pads.dataset(ds, format="parquet", partitioning="hive").to_table().num_rows == 1
    assert recordset.load("", rec, ds).table.num_rows == 5
    assert len(live(rec)) == 4                                  # nothing was moved
    res = compact.compact(rec, ds)
    assert (res.stale_temps, res.records_added) == (1, 4) and not [f for f in parts(ds) if "/." in f]
    assert len(ids_in(ds)) == 5


def test_a_record_replaced_while_the_run_reads_is_left_for_the_next_run(dirs, monkeypatch):
    """The epilog stores a record under a name the run has read already (the same job id on
    the same day, another job): the new file is not moved unread; the next run adds it."""
    rec, ds = dirs
    put(rec, "1", end="2026-10-15T01:00:00Z")
    put(rec, "2", end="2026-10-15T01:00:00Z")
    real = compact._Run.commit

    def commit(self):
        real(self)
        put(rec, "1", end="2026-10-15T09:00:00Z")               # replaces c1-1.json: another job

    monkeypatch.setattr(compact._Run, "commit", commit)
    res = compact.compact(rec, ds)
    monkeypatch.undo()
    assert (res.records_added, res.moved, res.left) == (2, 1, 1)
    assert "1 record(s) replaced while the run read them, left for the next run" in res.summary()
    assert live(rec) == ["2026/10/15/c1-1.json"]
    assert records.load(rec / "2026/10/15/c1-1.json")["job"]["end"] == "2026-10-15T09:00:00Z"
    res = compact.compact(rec, ds)
    assert res.records_added == 1 and live(rec) == []
    assert jobs_in(ds) == ["c1/1/2026-10-15T01:00:00Z", "c1/1/2026-10-15T09:00:00Z", "c1/2/2026-10-15T01:00:00Z"]


def test_a_half_written_record_is_never_read(dirs):
    rec, ds = dirs
    day = put(rec, "1").parent
    tmp = day / ".c1-2.json.0a1b2c3d"                           # atomicfile's temp name
    tmp.write_text(json.dumps(record_doc("2"))[:200])
    res = compact.compact(rec, ds)
    assert (res.records_read, res.set_aside) == (1, [])
    assert tmp.exists() and not list((rec / ".unreadable").rglob("*"))


def _writer(rec, n, first, halfway=None):
    """Stores jobs first .. first + n - 1 (every 7th twice); with halfway (an Event), the second
    half only once it is set."""
    for i in range(first, first + n):
        if halfway is not None and i == first + n // 2 and not halfway.wait(60):
            raise SystemExit("never told to go on")
        records.store(report_doc(str(i), end=f"2026-10-{1 + i % 28:02d}T00:00:00Z", fs=("scratch", "home")[:1 + i % 2]),
                      rec, "c1", str(i))
        if i % 7 == 0:                                          # and the same job stored again
            records.store(report_doc(str(i), end=f"2026-10-{1 + i % 28:02d}T00:00:00Z",
                                     fs=("scratch", "home")[:1 + i % 2]), rec, "c1", str(i))


def test_records_written_while_compactions_run_are_all_compacted_once(dirs, monkeypatch):
    rec, ds = dirs
    monkeypatch.setattr(compact, "MERGE_OVER", 3)               # merges happen under the writers too
    ctx = multiprocessing.get_context("fork")
    halfway = ctx.Event()          # the writers' second halves wait for the first compaction: so
    writers = [ctx.Process(target=_writer, args=(rec, 150, k * 1000, halfway)) for k in range(3)]
    for w in writers:              # one runs while they write, however fast either side is
        w.start()
    runs = 0
    while any(w.is_alive() for w in writers) or runs == 0:
        compact.compact(rec, ds)
        runs += 1
        halfway.set()
    for w in writers:
        w.join()
        assert w.exitcode == 0
    compact.compact(rec, ds)
    want = sorted(f"c1/{i}/2026-10-{1 + i % 28:02d}T00:00:00Z" for k in range(3) for i in range(k * 1000, k * 1000 + 150))
    assert jobs_in(ds) == want, f"after {runs} runs"
    rows = ddb(ds, "SELECT count(*), count(DISTINCT (record_id, fs)) FROM ds")[0]
    assert rows[0] == rows[1] == sum(1 + i % 2 for k in range(3) for i in range(k * 1000, k * 1000 + 150))
    assert live(rec) == [] and not list((rec / ".unreadable").rglob("*.json"))


# -- nothing lost: records that cannot be compacted ----------------------------------------------

def _bad_tree(rec, tmp_path):
    good = [put(rec, str(i), end="2026-10-15T12:00:00Z") for i in range(3)]
    day = good[0].parent
    (day / "c1-10.json").write_text(json.dumps(record_doc("10"))[:500])
    doc = record_doc("11")
    doc["schema"] = "lustre-jobreport/4"
    (day / "c1-11.json").write_text(json.dumps(doc))
    doc = record_doc("12")
    doc["job"]["end"] = None
    (day / "c1-12.json").write_text(json.dumps(doc))
    doc = record_doc("13")
    doc["filesystems"]["scratch"]["ops"] = ["open"]          # not what schema 3 says an fs has
    (day / "c1-13.json").write_text(json.dumps(doc))
    (day / "c1-14.json").mkdir()
    (tmp_path / "secret").write_text("root's")
    (day / "c1-15.json").symlink_to(tmp_path / "secret")
    with open(day / "c1-16.json", "w") as f:
        f.truncate(records.MAX_RECORD_BYTES + 1)
    doc = record_doc("17")
    doc["filesystems"]["scratch"]["osts"] = ["OST0000"]
    (day / "c1-17.json").write_text(json.dumps(doc))
    return good


SET_ASIDE = [
    ("2026/10/15/c1-10.json", r"truncated \(.* line 1 column \d+\)"),
    ("2026/10/15/c1-11.json", r"record schema lustre-jobreport/4 is newer than this lustre-jobreport reads "
                              r"\(lustre-jobreport/3\): upgrade lustre-jobreport"),
    ("2026/10/15/c1-12.json", r"record without a valid job end time"),
    ("2026/10/15/c1-13.json", r"malformed record: AttributeError: .*"),
    ("2026/10/15/c1-14.json", r"a directory where a record file should be"),
    ("2026/10/15/c1-15.json", r"a symbolic link \(not followed\)"),
    ("2026/10/15/c1-16.json", r"67,108,865 bytes, over the 64 MiB a record may be"),
    ("2026/10/15/c1-17.json", r".+"),
]


def test_records_that_cannot_be_compacted_are_set_aside_with_their_reason_once(dirs, tmp_path):
    import re
    rec, ds = dirs
    _bad_tree(rec, tmp_path)
    res = compact.compact(rec, ds)
    assert (res.records_added, res.rows_added) == (3, 3)       # the good ones still went in, beside c1-13
    assert [r for r, _ in res.set_aside] == [r for r, _ in SET_ASIDE]
    for (rel, why), (_, pattern) in zip(res.set_aside, SET_ASIDE):
        assert re.fullmatch(pattern, why), (rel, why)
        moved = rec / ".unreadable" / rel
        assert os.path.lexists(moved) and (moved.parent / (moved.name + ".why")).read_text() == why + "\n"
    assert os.path.islink(rec / ".unreadable/2026/10/15/c1-15.json")      # the link moved, not followed
    assert (tmp_path / "secret").read_text() == "root's"
    lines = res.summary().splitlines()
    for rel, why in res.set_aside:
        assert f"records compact: set aside {rel}: {why} (now .unreadable/{rel})" in lines
    assert live(rec) == [] and len(jobs_in(ds)) == 3 and res.status() == 1
    again = compact.compact(rec, ds)                            # not retried
    assert (again.records_read, again.set_aside, again.ignored, again.status()) == (0, [], [], 0)


def test_a_run_that_sets_one_aside_does_not_drop_a_later_copy_of_it(dirs):
    """Two files of one job, the first unconvertible: the second is not called a duplicate
    of a job that never reached the dataset."""
    rec, ds = dirs
    doc = record_doc("1")
    doc["filesystems"]["scratch"]["ops"] = ["open"]
    first = rec / "2026/10/15/c1-1.json"
    first.parent.mkdir(parents=True)
    first.write_text(json.dumps(doc))
    copy = rec / "2026/10/16/c1-1.json"
    copy.parent.mkdir(parents=True)
    copy.write_text(json.dumps(record_doc("1")))
    res = compact.compact(rec, ds)
    assert [r for r, _ in res.set_aside] == ["2026/10/15/c1-1.json"] and res.records_added == 1
    assert live(rec) == [] and jobs_in(ds) == ["c1/1/2026-10-15T12:00:00Z"]
    assert compact.compact(rec, ds).records_added == 0


def test_a_link_to_a_day_is_named_not_followed(dirs, tmp_path):
    rec, ds = dirs
    put(rec, "1", end="2026-10-15T00:00:00Z")
    put(tmp_path / "other", "2", end="2026-10-16T00:00:00Z")
    (rec / "2026/10/16").symlink_to(tmp_path / "other/2026/10/16")
    res = compact.compact(rec, ds)
    assert res.records_added == 1 and res.ignored == [("2026/10/16", "a symbolic link (not followed)")]
    assert "records compact: ignored 2026/10/16: a symbolic link (not followed)" in res.summary()
    assert len(list((tmp_path / "other").rglob("*.json"))) == 1


def test_a_record_without_filesystems_is_counted_and_moved(dirs):
    rec, ds = dirs
    doc = report_doc("1")
    doc["filesystems"] = {}
    records.store(doc, rec, "c1", "1")
    res = compact.compact(rec, ds)
    assert (res.records_read, res.no_rows, res.records_added, res.moved) == (1, 1, 0, 1)
    assert "without a Lustre filesystem" in res.summary() and live(rec) == []


# -- small files ---------------------------------------------------------------------------------

def test_a_month_of_many_small_files_is_rewritten_into_one(dirs):
    rec, ds = dirs
    for i in range(compact.MERGE_OVER):
        put(rec, str(i), end=f"2026-10-{1 + i:02d}T00:00:00Z")
        compact.compact(rec, ds)
    assert len(dataset_layer.part_files(ds, (2026, 10))) == compact.MERGE_OVER
    put(rec, "99", end="2026-10-30T00:00:00Z")
    res = compact.compact(rec, ds)
    assert [m[:3] for m in res.merged] == [("year=2026/month=10", compact.MERGE_OVER + 1, 0)]
    assert len(res.files_written) == 1 and res.files_written[0] != res.merged[0][3]
    assert "records compact: merged year=2026/month=10: 17 files into 1" in res.summary()
    [f] = dataset_layer.part_files(ds, (2026, 10))
    assert len(ids_in(ds)) == len(jobs_in(ds)) == compact.MERGE_OVER + 1
    assert pq.ParquetFile(f).schema_arrow.remove_metadata() == jobrow.arrow_schema()


def test_a_merge_drops_duplicate_rows_and_keeps_the_oldest_copy(dirs, monkeypatch):
    rec, ds = dirs
    monkeypatch.setattr(compact, "MERGE_OVER", 2)
    put(rec, "1")
    compact.compact(rec, ds)
    [f] = dataset_layer.part_files(ds, (2026, 10))
    shutil.copy(f, f.with_name("part-99990101T000000Z-00000000.parquet"))     # a stray copy: duplicates
    put(rec, "2")
    res = compact.compact(rec, ds)
    assert [m[:3] for m in res.merged] == [("year=2026/month=10", 3, 1)]
    assert ids_in(ds) == ["c1/1/2026-10-15T12:00:00Z", "c1/2/2026-10-15T12:00:00Z"]


def test_a_reader_during_a_merge_sees_each_job_once(dirs, monkeypatch):
    """The merged file is in and the old ones not yet out: a reader sees rows twice in the
    files, and recordset.load still gives each job once."""
    rec, ds = dirs
    monkeypatch.setattr(compact, "MERGE_OVER", 2)
    for i in range(2):
        put(rec, str(i))
        compact.compact(rec, ds)
    put(rec, "2")                           # its run writes a third file: the month is merged
    seen = {}

    def unlink(name, dir_fd=None):
        if "rows" not in seen:              # the first old file about to go: look as a reader
            seen["rows"] = ddb(ds, "SELECT count(*) FROM ds")[0][0]
            seen["loaded"] = recordset.load("", rec, ds).table.num_rows
        real_unlink(name, dir_fd=dir_fd)

    real_unlink = os.unlink
    monkeypatch.setattr(compact.os, "unlink", unlink)
    compact.compact(rec, ds)
    assert seen == {"rows": 6, "loaded": 3}
    monkeypatch.undo()
    assert len(ids_in(ds)) == 3 and len(dataset_layer.part_files(ds, (2026, 10))) == 1


# -- the dataset's schema -------------------------------------------------------------------------

def stated(path):
    return (pq.ParquetFile(path).schema_arrow.metadata or {}).get(partschema.KEY)


def test_every_file_states_its_schema_version_written_or_merged(dirs, monkeypatch):
    rec, ds = dirs
    monkeypatch.setattr(compact, "MERGE_OVER", 1)
    put(rec, "1")
    compact.compact(rec, ds)
    [f] = dataset_layer.part_files(ds, (2026, 10))
    assert stated(f) == b"lustre-jobreport-dataset/1"
    put(rec, "2")
    res = compact.compact(rec, ds)
    [merged] = dataset_layer.part_files(ds, (2026, 10))
    assert res.merged and stated(merged) == b"lustre-jobreport-dataset/1"


def test_a_parquet_file_of_another_schema_is_set_aside_named_and_never_merged(dirs, monkeypatch):
    """Valid Parquet files of other schemas in a month: moved to dataset/.foreign/ (not
    *.parquet there, so no reader's glob takes them) with a .why, named in the summary, their
    bytes kept; the month merged without them. One of them holds job 1's id and nothing else:
    merged as if understood, it would have replaced job 1's rows by nulls."""
    rec, ds = dirs
    monkeypatch.setattr(compact, "MERGE_OVER", 1)
    for i in range(1, 4):
        put(rec, str(i))
    compact.compact(rec, ds)
    month = ds / "year=2026" / "month=10"
    made = foreign_files(month, shadowed_job="1")
    kept = {name: (month / name).read_bytes() for name in made}
    put(rec, "4")
    res = compact.compact(rec, ds)
    assert res.status() == 1                                    # done, and something needs the admin
    lines = res.summary().splitlines()
    for name, why in made.items():
        rel = f"year=2026/month=10/{name}"
        now = f".foreign/year=2026/month=10/{name}.set-aside"
        [line] = [ln for ln in lines if ln.startswith(f"records compact: set aside dataset file {rel}: ")]
        assert why in line and line.endswith(f" (now {now})")
        assert (ds / now).read_bytes() == kept[name] and not (month / name).exists()
        assert why in (ds / ".foreign/year=2026/month=10" / f"{name}.why").read_text()
    assert "records compact: merged year=2026/month=10: 2 files into 1" in lines
    assert jobs_in(ds) == [f"c1/{i}/2026-10-15T12:00:00Z" for i in range(1, 5)]        # DuckDB's glob
    [f] = dataset_layer.part_files(ds, (2026, 10))
    t = pq.read_table(f)
    assert t.num_rows == 4 and t.column("read_bytes").null_count == 0 and t.column("user").null_count == 0
    again = compact.compact(rec, ds)                            # set aside once
    assert again.files_set_aside == []


def test_a_file_of_a_newer_schema_version_stops_compaction_naming_it_and_is_left_in_place(dirs, tmp_path):
    rec, ds = dirs
    put(rec, "1")
    compact.compact(rec, ds)
    t = rows_table("9")
    newer = write_part(ds / "year=2026/month=10/part-99990101T000000Z-0.parquet",
                       t.append_column("new_metric", pa.array([1] * t.num_rows)), states=2)
    data = newer.read_bytes()
    before = parts(ds)
    put(rec, "2")
    r = cli(tmp_path, "records", "compact", "--records", str(rec), "--dataset", str(ds))
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == (f"lustre-jobreport: error: {newer}: written by a newer lustre-jobreport (dataset schema "
                        "lustre-jobreport-dataset/2; this one reads up to lustre-jobreport-dataset/1): upgrade "
                        "lustre-jobreport to read or compact it\n")
    assert newer.read_bytes() == data and parts(ds) == before          # nothing written, nothing moved
    assert live(rec) == ["2026/10/15/c1-2.json"]


def test_files_of_an_older_schema_version_are_read_and_merged_with_what_they_lack_null(dirs, monkeypatch):
    """Files written before versions were stated (version 1's columns, no statement) are
    version 1: compaction finds the jobs they hold; a later version (whose schema 2 added a
    column) merges them with that column null, into a file stating version 2."""
    rec, ds = dirs
    month = ds / "year=2026" / "month=10"
    legacy = write_part(month / "part-20261001T000000Z-00000000.parquet", rows_table("1", "2"), states=None)
    write_part(month / "part-20261002T000000Z-00000000.parquet", rows_table("3"), states=1)
    put(rec, "1")                                              # the legacy file holds it: a duplicate
    put(rec, "4")
    res = compact.compact(rec, ds)
    assert (res.records_added, res.duplicates, res.files_set_aside) == (1, 1, [])
    assert legacy.exists() and stated(legacy) is None
    third = with_new_metric(rows_table("5"))
    as_version_2(monkeypatch)
    write_part(month / "part-20261003T000000Z-00000000.parquet", third, states=2)
    monkeypatch.setattr(compact, "MERGE_OVER", 1)
    res = compact.compact(rec, ds)
    assert [m[:3] for m in res.merged] == [("year=2026/month=10", 4, 0)] and res.files_set_aside == []
    [f] = dataset_layer.part_files(ds, (2026, 10))
    assert stated(f) == b"lustre-jobreport-dataset/2"
    got = {r["job_id"]: r["new_metric"] for r in pq.read_table(f).to_pylist()}
    assert got == {"1": None, "2": None, "3": None, "4": None, "5": 7}
    assert {r["job_id"]: r["new_metric"] for r in recordset.load("", rec, ds).table.to_pylist()} == got


def test_a_zero_padded_month_directory_is_the_same_month_to_every_reader(dirs, monkeypatch):
    """year=2026/month=03 (another tool's, or by hand after the Hive convention) is March, as
    month=3 (what compaction writes) is: listed once, its files read by the duplicate check, by
    recordset and by the merge, which writes month=3 and empties month=03."""
    rec, ds = dirs
    put(rec, "1", end="2026-03-10T00:00:00Z")
    compact.compact(rec, ds)
    [f] = dataset_layer.part_files(ds, (2026, 3))
    padded = ds / "year=2026" / "month=03"
    padded.mkdir()
    os.rename(f, padded / f.name)                    # the month as another tool lays it out
    assert dataset_layer.partitions(ds) == [(2026, 3)] and dataset_layer.part_files(ds, (2026, 3)) == [padded / f.name]
    assert dataset_layer.dataset_files(ds) == {(2026, 3): [padded / f.name]}
    put(rec, "1", end="2026-03-10T00:00:00Z")        # stored again: the dataset holds it already
    put(rec, "2", end="2026-03-11T00:00:00Z")
    res = compact.compact(rec, ds)
    assert (res.records_added, res.duplicates) == (1, 1)
    assert sorted(p.parent.name for p in dataset_layer.part_files(ds, (2026, 3))) == ["month=03", "month=3"]
    got = recordset.load("since=2026-03-01,until=2026-04-01", rec, ds)
    assert sorted(got.table.column("job_id").to_pylist()) == ["1", "2"] and got.dataset_files == 2
    monkeypatch.setattr(compact, "MERGE_OVER", 1)
    res = compact.compact(rec, ds)
    assert [m[:3] for m in res.merged] == [("year=2026/month=3", 2, 0)]
    [merged] = dataset_layer.part_files(ds, (2026, 3))
    assert merged.parent.name == "month=3" and list(padded.iterdir()) == []
    assert jobs_in(ds) == ["c1/1/2026-03-10T00:00:00Z", "c1/2/2026-03-11T00:00:00Z"]


# -- errors, locking, directories ----------------------------------------------------------------

def cli(tmp_path, *args):
    cfg = tmp_path / "config.toml"
    cfg.write_text("")
    return subprocess.run([sys.executable, "-m", "lustre_jobreport", "--config", str(cfg), *args],
                          capture_output=True, text=True)


def test_the_cli_prints_the_summary(dirs, tmp_path):
    rec, ds = dirs
    put(rec, "1")
    r = cli(tmp_path, "records", "compact", "--records", str(rec), "--dataset", str(ds))
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout.startswith("records compact: 1 record read, 1 job added (1 row) in 1 file, "
                               "0 duplicates skipped, 0 set aside, 1 moved to .compacted; ")
    assert all(line.startswith("records compact: ") for line in r.stdout.splitlines())


@pytest.mark.parametrize("how", ["truncated", "random bytes"])
def test_a_corrupt_parquet_file_is_set_aside_named_and_the_rest_compacted(dirs, tmp_path, how):
    """A dataset file that is not a readable Parquet file stopped every run (each checks every
    file first): it is set aside to dataset_dir/.unreadable/ with its reason, its bytes kept,
    named in the summary (exit 1), and the run compacts the rest; the next run exits 0. Its
    jobs' records, in .compacted/, go back into the dataset when moved back into the live tree."""
    rec, ds = dirs
    put(rec, "1")
    compact.compact(rec, ds)
    [f] = dataset_layer.part_files(ds, (2026, 10))
    kept = damage(f, how).read_bytes()
    put(rec, "2")
    put(rec, "3", end="2026-11-02T00:00:00Z")
    r = cli(tmp_path, "records", "compact", "--records", str(rec), "--dataset", str(ds))
    assert (r.returncode, r.stderr) == (1, ""), r.stderr
    rel = f.relative_to(ds)
    now = Path(".unreadable", rel.parent, f.name + ".set-aside")
    [line] = [ln for ln in r.stdout.splitlines() if ln.startswith(f"records compact: set aside dataset file {rel}: ")]
    assert line.startswith(f"records compact: set aside dataset file {rel}: not a readable Parquet file (")
    assert line.endswith(f") (now {now})")
    assert (ds / now).read_bytes() == kept and not f.exists()
    assert (ds / now.with_name(f.name + ".why")).read_text().startswith("not a readable Parquet file (")
    assert jobs_in(ds) == ["c1/2/2026-10-15T12:00:00Z", "c1/3/2026-11-02T00:00:00Z"] and live(rec) == []
    got = recordset.load("", rec, ds)                           # compare: the rest, nothing to say
    assert got.table.num_rows == 2 and got.warnings == []
    again = cli(tmp_path, "records", "compact", "--records", str(rec), "--dataset", str(ds))
    assert (again.returncode, again.stderr) == (0, "") and "set aside" not in again.stdout.replace(" 0 set aside", "")
    os.rename(rec / ".compacted/2026/10/15/c1-1.json", rec / "2026/10/15/c1-1.json")    # its job, back
    assert compact.compact(rec, ds).records_added == 1 and len(jobs_in(ds)) == 3


def test_a_file_damaged_past_its_footer_is_set_aside_when_a_run_reads_it(dirs, monkeypatch):
    """The schema check reads a file's footer alone: damage in a column chunk is met when a run
    reads the file, for the ids of its jobs (a record of its month) or to merge it. Either way
    it is set aside then, and the run goes on."""
    rec, ds = dirs
    for i in range(1, 3):
        put(rec, str(i))
        compact.compact(rec, ds)
    first, second = dataset_layer.part_files(ds, (2026, 10))
    damage(first, "column record_id")
    put(rec, "3")                                               # its month's ids are read
    res = compact.compact(rec, ds)
    assert [(a, why.split(" (")[0], now) for a, why, now in res.files_set_aside] == [
        (str(first.relative_to(ds)), "not a readable Parquet file",
         str(Path(".unreadable", first.relative_to(ds).parent, first.name + ".set-aside")))]
    assert res.status() == 1 and res.records_added == 1
    damage(second, "column read_bytes")                         # record_id reads: met by the merge
    monkeypatch.setattr(compact, "MERGE_OVER", 1)
    res = compact.compact(rec, ds)
    assert [a for a, _, _ in res.files_set_aside] == [str(second.relative_to(ds))]
    assert res.merged == [] and res.status() == 1                 # one file left: nothing to merge
    assert jobs_in(ds) == ["c1/3/2026-10-15T12:00:00Z"] and len(dataset_layer.part_files(ds, (2026, 10))) == 1


def test_a_newer_file_stops_the_run_before_any_file_is_set_aside(dirs, tmp_path):
    """Files of another schema and corrupt ones listed before a file of a newer schema: every
    file is judged first, so the run stops (exit 2, naming the newer file) with nothing moved,
    not having set aside the files met before it (unnamed: the summary saying so is never
    printed)."""
    rec, ds = dirs
    put(rec, "1")
    compact.compact(rec, ds)
    month = ds / "year=2026" / "month=10"
    foreign_files(month)
    damage(write_part(month / "part-00000000T000000Z-zcorrupt.parquet", rows_table("7"), states=1), "truncated")
    t = rows_table("9")
    newer = write_part(month / "part-99990101T000000Z-0.parquet",
                       t.append_column("new_metric", pa.array([1] * t.num_rows)), states=2)
    before = parts(ds)
    put(rec, "2")
    r = cli(tmp_path, "records", "compact", "--records", str(rec), "--dataset", str(ds))
    assert (r.returncode, r.stdout) == (2, "") and r.stderr.count("\n") == 1
    assert r.stderr.startswith(f"lustre-jobreport: error: {newer}: written by a newer lustre-jobreport")
    assert parts(ds) == before and live(rec) == ["2026/10/15/c1-2.json"]


def test_a_run_that_stops_after_setting_a_file_aside_names_it(dirs, tmp_path):
    """A file set aside while the run reads (damage past its footer, met by the ids of its
    month), then the run stops (here: November's dataset directory others can write in): the
    error line says what was set aside, as the summary would have."""
    rec, ds = dirs
    put(rec, "1")
    compact.compact(rec, ds)
    [f] = dataset_layer.part_files(ds, (2026, 10))
    damage(f, "column record_id")
    put(rec, "2")
    put(rec, "3", end="2026-11-02T00:00:00Z")
    (ds / "year=2026" / "month=11").mkdir()
    os.chmod(ds / "year=2026" / "month=11", 0o777)
    r = cli(tmp_path, "records", "compact", "--records", str(rec), "--dataset", str(ds))
    assert (r.returncode, r.stdout) == (2, "") and r.stderr.count("\n") == 1
    rel = f.relative_to(ds)
    assert r.stderr.startswith(f"lustre-jobreport: error: {ds}/year=2026/month=11: mode 0777 lets others write in "
                               f"it; refusing it (before it stopped, the run set aside dataset file {rel}: not a "
                               "readable Parquet file (")
    assert r.stderr.endswith(f" (now .unreadable/{rel}.set-aside))\n")
    assert (ds / ".unreadable" / f"{rel}.why").exists() and len(live(rec)) == 2


def test_a_dataset_file_the_system_will_not_let_the_run_read_is_never_set_aside(tmp_path, other_user):
    """A file the run may not read (here: root's, 0600, in an admin's dataset) is not called
    corrupt or moved: one line naming it and the system's reason, exit 2, nothing moved."""
    pw, w = other_user
    mine = w / "mine"
    mine.mkdir()
    put(w / "src", "1")
    compact.compact(w / "src", mine / "dataset")
    [f] = dataset_layer.part_files(mine / "dataset", (2026, 10))
    put(mine / "records", "2")
    subprocess.run(["chown", "-R", f"{pw.pw_uid}:{pw.pw_gid}", str(mine)], check=True)
    os.chown(f, 0, 0)
    os.chmod(f, 0o600)
    cfg = w / "config.toml"
    cfg.write_text("")
    reporter = Path(sys.executable).parent / "lustre-jobreport"
    r = subprocess.run(["runuser", "-u", pw.pw_name, "--", str(reporter), "--config", str(cfg), "records",
                        "compact", "--records", str(mine / "records"), "--dataset", str(mine / "dataset")],
                       capture_output=True, text=True)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == f"lustre-jobreport: error: {f}: cannot read: Permission denied\n"
    assert f.exists() and not (mine / "dataset" / ".unreadable").exists()
    assert live(mine / "records") == ["2026/10/15/c1-2.json"]


def test_one_run_at_a_time(dirs):
    rec, ds = dirs
    put(rec, "1")
    ds.mkdir()
    fd = os.open(ds / compact.LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with pytest.raises(JobReportError, match=r"another `records compact` is running on .* \(it holds .*\.compact\.lock\)"):
            compact.compact(rec, ds)
    finally:
        os.close(fd)
    assert compact.compact(rec, ds).records_added == 1


@pytest.mark.parametrize("case", ["dataset group-writable", "records a link", "partition a link", "compacted a link"])
def test_directories_are_checked_like_records_dir(dirs, tmp_path, case):
    rec, ds = dirs
    put(rec, "1")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    if case == "dataset group-writable":
        ds.mkdir()
        os.chmod(ds, 0o775)
        why = f"{ds}: mode 0775 lets others write in it; refusing it"
    elif case == "records a link":
        os.rename(rec, tmp_path / "real")
        rec.symlink_to(tmp_path / "real")
        why = f"{rec}: is a symbolic link; refusing it"
    elif case == "partition a link":
        (ds / "year=2026").mkdir(parents=True)
        (ds / "year=2026" / "month=10").symlink_to(elsewhere)
        why = f"{ds}/year=2026/month=10: is a symbolic link; refusing it"
    else:
        (rec / ".compacted").symlink_to(elsewhere)
        why = f"{rec}/.compacted: is a symbolic link; refusing it"
    with pytest.raises(securedir.UnsafeDirError) as err:
        compact.compact(rec, ds)
    assert str(err.value) == why
    assert list(elsewhere.iterdir()) == []


def test_a_day_directory_others_can_write_is_skipped_before_a_record_is_read_and_the_rest_compacted(dirs, tmp_path):
    """A 0777 day directory: none of its records is read (a user may have planted them), it is
    named with its reason in every run's summary until fixed (exit 1: done, and something needs
    the admin), and the other days are compacted; fixed, the next run compacts it."""
    rec, ds = dirs
    put(rec, "1", end="2026-10-15T12:00:00Z")
    planted = put(rec, "2", end="2026-10-16T12:00:00Z")
    os.chmod(planted.parent, 0o777)
    line = ("records compact: skipped 2026/10/16/: mode 0777 lets others write in it; no record under it read "
            "(fix its owner and mode; the next run compacts it)")
    for run in range(2):
        r = cli(tmp_path, "records", "compact", "--records", str(rec), "--dataset", str(ds))
        assert (r.returncode, r.stderr) == (1, ""), r.stderr
        assert line in r.stdout.splitlines()
        assert r.stdout.startswith(f"records compact: {1 - run} record{'s' * run} read")
        assert jobs_in(ds) == ["c1/1/2026-10-15T12:00:00Z"] and live(rec) == ["2026/10/16/c1-2.json"]
    os.chmod(planted.parent, 0o755)
    r = cli(tmp_path, "records", "compact", "--records", str(rec), "--dataset", str(ds))
    assert (r.returncode, r.stderr) == (0, "") and "records compact: skipped " not in r.stdout
    assert jobs_in(ds) == ["c1/1/2026-10-15T12:00:00Z", "c1/2/2026-10-16T12:00:00Z"] and live(rec) == []


def test_a_year_others_can_write_is_named_once_not_for_each_day(dirs):
    rec, ds = dirs
    for day in (14, 15, 16):
        put(rec, str(day), end=f"2026-10-{day}T12:00:00Z")
    put(rec, "old", end="2025-12-31T12:00:00Z")
    os.chmod(rec / "2026", 0o775)
    res = compact.compact(rec, ds)
    assert res.skipped_dirs == [("2026", "mode 0775 lets others write in it")] and res.status() == 1
    assert (res.records_read, res.records_added) == (1, 1) and len(live(rec)) == 3


def test_a_compacted_directory_others_can_write_stops_no_run(dirs, tmp_path):
    """.compacted/2026 made writable by others: the records go into the dataset and stay in
    the live tree (compare takes them from the dataset), said in each run, never an exit 2."""
    rec, ds = dirs
    put(rec, "1")
    put(rec, "2")
    (rec / ".compacted" / "2026").mkdir(parents=True)
    os.chmod(rec / ".compacted" / "2026", 0o777)
    for run in range(2):
        r = cli(tmp_path, "records", "compact", "--records", str(rec), "--dataset", str(ds))
        assert (r.returncode, r.stderr) == (1, ""), r.stderr
        assert (f"records compact: not moved 2 records (2026/10/15/c1-1.json, …): {rec}/.compacted/2026: mode 0777 "
                "lets others write in it; refusing it (the next run moves them once that is fixed)") in r.stdout
        assert len(jobs_in(ds)) == 2 and len(live(rec)) == 2
    assert recordset.load("", rec, ds).table.num_rows == 2


def test_a_refused_records_subdirectory_leaves_no_descriptor_open(dirs, tmp_path):
    rec, ds = dirs
    put(rec, "1")
    (tmp_path / "elsewhere").mkdir()
    (rec / ".unreadable").symlink_to(tmp_path / "elsewhere")
    before = len(os.listdir("/proc/self/fd"))
    with pytest.raises(securedir.UnsafeDirError):
        compact.compact(rec, ds)
    assert len(os.listdir("/proc/self/fd")) == before


def test_no_records_dir_yet_is_not_an_error(dirs):
    rec, ds = dirs
    res = compact.compact(rec, ds)
    assert res.records_read == 0 and f"{rec} does not exist: no records to read" in res.summary()
    assert not rec.exists()


def test_a_non_root_admin_compacts_their_own_directories_and_not_roots(tmp_path, other_user):
    pw, w = other_user
    mine = w / "mine"
    mine.mkdir()
    os.chown(mine, pw.pw_uid, pw.pw_gid)
    for i in range(2):
        put(w / "src", str(i))
    shutil.copytree(w / "src", mine / "records")
    subprocess.run(["chown", "-R", f"{pw.pw_uid}:{pw.pw_gid}", str(mine / "records")], check=True)
    cfg = w / "config.toml"
    cfg.write_text("")
    os.chmod(cfg, 0o644)
    reporter = Path(sys.executable).parent / "lustre-jobreport"

    def run(*args):
        return subprocess.run(["runuser", "-u", pw.pw_name, "--", str(reporter), "--config", str(cfg),
                               "records", "compact", *args], capture_output=True, text=True)

    r = run("--records", str(mine / "records"), "--dataset", str(mine / "dataset"))
    assert r.returncode == 0, r.stderr
    assert "2 jobs added" in r.stdout
    [f] = (mine / "dataset").rglob("*.parquet")
    assert os.stat(f).st_uid == pw.pw_uid
    r = run("--records", str(w / "src"), "--dataset", str(mine / "dataset2"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert r.stderr.endswith(f"{w / 'src'}: owned by uid 0, not {pw.pw_uid}; refusing it\n")


def test_a_full_dataset_disk_is_one_line_and_moves_nothing(dirs, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a tmpfs")
    from kit.hookkit import full_tmpfs
    rec, ds = dirs
    for i in range(20):
        put(rec, str(i), end=f"2026-{9 + i % 3:02d}-15T00:00:00Z")
    ds.mkdir(mode=0o755)
    with full_tmpfs(ds, "size=256k,mode=0755") as full:
        r = cli(tmp_path, "records", "compact", "--records", str(rec), "--dataset", str(full))
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
        assert r.stderr == (f"lustre-jobreport: error: cannot write the dataset under {full}: "
                            "No space left on device; no record was moved\n")
        assert len(live(rec)) == 20
        assert [f for f in parts(full) if f != "filler"] == []              # no file, no temp file left
        os.unlink(full / "filler")                                          # space again: it all goes in
        assert compact.compact(rec, full).records_added == 20 and live(rec) == []


def test_a_dataset_filesystem_without_flock_is_said_not_fatal(dirs, monkeypatch):
    rec, ds = dirs
    put(rec, "1")

    def no_flock(fd, op):
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(compact.fcntl, "flock", no_flock)
    res = compact.compact(rec, ds)
    assert res.records_added == 1
    assert f"records compact: {ds} cannot be locked (No locks available): run one compaction at a time" \
        in res.summary().splitlines()


def test_a_backlog_of_many_months_keeps_one_month_open_at_a_time(dirs, monkeypatch):
    """Records come day by day: a month's file is finished when the next month starts, so a
    first run over years of records holds about one month in memory (and few descriptors)."""
    rec, ds = dirs
    monkeypatch.setattr(compact, "BATCH_ROWS", 2)
    monkeypatch.setattr(compact, "MAX_DIR_FDS", 3)
    for i in range(30):
        put(rec, str(i), end=f"{2024 + i // 12}-{1 + i % 12:02d}-{1 + i % 3:02d}T00:00:00Z")
        put(rec, f"{i}b", end=f"{2024 + i // 12}-{1 + i % 12:02d}-{10 + i % 3:02d}T00:00:00Z")
    open_now, most = [0], [0]
    real_init, real_close = compact._PartWriter.__init__, compact._PartWriter.close

    def init(self, *a):
        real_init(self, *a)
        open_now[0] += 1
        most[0] = max(most[0], open_now[0])

    def close(self):
        if self.fd >= 0:
            open_now[0] -= 1
        real_close(self)

    monkeypatch.setattr(compact._PartWriter, "__init__", init)
    monkeypatch.setattr(compact._PartWriter, "close", close)
    res = compact.compact(rec, ds)
    assert (res.records_added, res.rows_added, len(res.files_written)) == (60, 60, 30)
    assert most[0] <= 2 and open_now[0] == 0
    assert len(jobs_in(ds)) == 60 and live(rec) == [] and res.moved == 60


# -- many files a month, few descriptors -----------------------------------------------------------

FD_LIMIT = 128          # open files allowed to the processes below; their months hold 3x as many files


def limited(*argv, nofile=FD_LIMIT):
    """argv run with RLIMIT_NOFILE lowered to `nofile`."""
    import resource
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return subprocess.run(argv, capture_output=True, text=True,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, hard)))


LOAD = ("import sys\nfrom lustre_jobreport.records import recordset\nfrom lustre_jobreport.errors import JobReportError\n"
        "try:\n    got = recordset.load('', sys.argv[1], sys.argv[2])\n"
        "except JobReportError as e:\n    print('error:', e)\n"
        "else:\n    print(got.table.num_rows, got.dataset_files)\n")


def test_a_month_of_many_files_compacts_merges_and_compares_within_few_open_files(dirs, tmp_path):
    """Three times as many part files in a month as the process may open: compare reads them,
    compaction finds the jobs they hold and merges them into one (open files bounded)."""
    rec, ds = dirs
    n = 3 * FD_LIMIT
    many_part_files(ds / "year=2026" / "month=10", n)
    put(rec, "new")
    put(rec, "00000007")                                        # one of theirs, stored again
    r = limited(sys.executable, "-c", LOAD, str(rec), str(ds))
    assert (r.returncode, r.stderr, r.stdout) == (0, "", f"{n + 1} {n}\n")
    cfg = tmp_path / "config.toml"
    cfg.write_text("")
    r = limited(sys.executable, "-m", "lustre_jobreport", "--config", str(cfg), "records", "compact",
                "--records", str(rec), "--dataset", str(ds))
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout.startswith("records compact: 2 records read, 1 job added (1 row) in 1 file, 1 duplicate skipped")
    assert f"records compact: merged year=2026/month=10: {n + 1} files into 1" in r.stdout.splitlines()
    assert len(dataset_layer.part_files(ds, (2026, 10))) == 1 and len(jobs_in(ds)) == n + 1


def test_the_one_bad_file_of_many_is_the_one_named(dirs, tmp_path):
    """A corrupt file among more than the process may open: compaction sets that file aside and
    compare leaves it out, each naming it, not one they could not open."""
    rec, ds = dirs
    files = many_part_files(ds / "year=2026" / "month=10", 3 * FD_LIMIT)
    bad = files[-7]
    bad.write_bytes(bad.read_bytes()[:200])
    put(rec, "new", end="2026-11-02T00:00:00Z")                # another month: October is only merged
    r = limited(sys.executable, "-c", LOAD, str(rec), str(ds))
    assert (r.returncode, r.stderr, r.stdout) == (0, "", f"{3 * FD_LIMIT} {3 * FD_LIMIT - 1}\n")
    cfg = tmp_path / "config.toml"
    cfg.write_text("")
    r = limited(sys.executable, "-m", "lustre_jobreport", "--config", str(cfg), "records", "compact",
                "--records", str(rec), "--dataset", str(ds))
    assert (r.returncode, r.stderr) == (1, ""), r.stderr
    rel = bad.relative_to(ds)
    assert [ln for ln in r.stdout.splitlines() if " set aside dataset file " in ln][0].startswith(
        f"records compact: set aside dataset file {rel}: not a readable Parquet file (")
    assert f"records compact: merged year=2026/month=10: {3 * FD_LIMIT - 1} files into 1" in r.stdout
    assert live(rec) == [] and len(jobs_in(ds)) == 3 * FD_LIMIT


def test_records_table_leaves_out_only_the_record_a_column_cannot_hold():
    good = jobrow.rows(record_doc("1"))
    bad = [dict(r, num_nodes="x") for r in jobrow.rows(record_doc("2"))]
    table, left_out = dataset_layer.records_table([good, bad, good])
    assert table.num_rows == 2 * len(good)
    assert [(i, str(e).split(":")[0]) for i, e in left_out] == [(1, "column num_nodes")]
    assert dataset_layer.records_table([bad])[0] is None
