"""recordset: what compare reads. Selections (one line naming a bad key), the same matching on
the dataset and on JSON records, the dataset preferred for a job found in both, months outside
since/until not read, unreadable records skipped with a warning, a corrupt Parquet file one error
naming it."""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from lustre_jobreport.records import compact, jobrow, partschema, store as records, recordset
from lustre_jobreport.records import dataset
from lustre_jobreport.errors import JobReportError
from lustre_jobreport.records.recordset import Selection, SelectionError

from kit.records import (as_version_2, damage, foreign_files, put, record_doc, rows_table,
                              with_new_metric, write_part)


def utc(*a):
    return datetime(*a, tzinfo=timezone.utc)


# -- selections -----------------------------------------------------------------------------------

def test_a_selection_reads_every_key():
    s = Selection.parse(" lustre=2.15.* , since=2026-10-01,until=2026-11-01T06:00+02:00,cluster=c1,"
                        "partition=batch,user=ann,job_name=wrf*,account=climate,kernel=4.18.*,os=Rocky*")
    assert s.since == utc(2026, 10, 1) and s.until == utc(2026, 11, 1, 4)
    assert dict(s.globs) == {"lustre": "2.15.*", "cluster": "c1", "partition": "batch", "user": "ann",
                             "job_name": "wrf*", "account": "climate", "kernel": "4.18.*", "os": "Rocky*"}
    assert str(s) == ("lustre=2.15.*,cluster=c1,partition=batch,user=ann,job_name=wrf*,account=climate,"
                      "kernel=4.18.*,os=Rocky*,since=2026-10-01T00:00:00Z,until=2026-11-01T04:00:00Z")
    assert Selection.parse("") == Selection() and str(Selection()) == ""


@pytest.mark.parametrize("text,msg", [
    ("lustr=2.15", "unknown key 'lustr' (known: lustre, kernel, os, since, until, cluster, partition, user, "
                   "job_name, account)"),
    ("lustre", "'lustre' is not key=value"),
    ("lustre=", "lustre: empty value"),
    ("user=a,user=b", "user: given twice"),
    ("since=2026-13-01", "since: '2026-13-01' is not an ISO date or date and time (e.g. 2026-10-01 or 2026-10-01T12:00Z)"),
    ("until=last week", "until: 'last week' is not an ISO date"),
    ("since=2026-11-01,until=2026-10-01", "until: 2026-10-01T00:00:00Z is not after since 2026-11-01T00:00:00Z"),
])
def test_a_bad_selection_is_one_line_naming_the_key(text, msg):
    with pytest.raises(SelectionError) as err:
        Selection.parse(text)
    assert msg in str(err.value) and "\n" not in str(err.value)
    assert isinstance(err.value, JobReportError)


def row(**kw):
    base = {"lustre": "2.15.4", "kernel": "4.18.0", "os": "Rocky 8", "cluster": "c1", "partition": "batch",
            "user": "ann", "job_name": "wrf", "account": "climate", "end": utc(2026, 10, 15)}
    return {**base, **kw}


@pytest.mark.parametrize("sel,r,want", [
    ("lustre=2.15.*", row(), True),
    ("lustre=2.15.*", row(lustre="2.15.4;2.16.0"), False),         # every host must match
    ("lustre=2.16.*", row(lustre="2.15.4;2.16.0"), False),
    ("lustre=2.1[56].*", row(lustre="2.15.4;2.16.0"), True),
    ("lustre=2.15.4", row(lustre="2.15.4;2.15.4x"), False),
    ("lustre=*", row(lustre=None), False),                          # unknown matches no glob
    ("lustre=2.15*", row(lustre="2.15.4;2.16.0"), False),           # '*' does not cross hosts
    ("lustre=2.15.?", row(), True),
    ("lustre=2.15.[!4]", row(), False),
    ("kernel=4.18.*", row(kernel="4.18.0;5.14.0"), False),
    ("user=ann", row(user="anna"), False),
    ("user=an?", row(), True),
    ("job_name=a+b (x)", row(job_name="a+b (x)"), True),            # regex characters are literal
    ("job_name=a+b (x)", row(job_name="aab (x)"), False),
    ("job_name=run[1", row(job_name="run[1"), True),                # an unclosed '[' is literal
    ("job_name=x.y", row(job_name="xzy"), False),
    ("job_name=*", row(job_name="line\nbreak"), True),
    ("account=clim*", row(), True),
    ("cluster=C1", row(), False),                                   # case-sensitive
    ("since=2026-10-15", row(), True),                              # since inclusive
    ("until=2026-10-15", row(), False),                             # until exclusive
    ("until=2026-10-15T00:00:01Z", row(), True),
])
def test_matching(sel, r, want):
    assert Selection.parse(sel).matches(r) is want


def test_duckdb_and_python_agree_on_every_glob(tmp_path):
    """The dataset side matches in DuckDB (RE2), the tests' side in Python: same answers."""
    import duckdb
    values = ["2.15.4", "2.15.4;2.16.0", "2.16.0", "2.1", "a+b", "a]b", "x;y", "[ab]", "a-b", "a\\b", "a b",
              "é.1", "2.15.4x", "", "^$", "a#b~c&d"]
    patterns = ["2.15.*", "*", "2.1?", "2.1[5-6].*", "[!2]*", "a+b", "a]b", "[]]*", "*;*", "[ab]", "\\[ab]",
                "a-b", "a\\b", "a b", "é.?", "2.1[56]*", "[a-", "^$", "a#b~c&d", "*4"]
    con = duckdb.connect()
    for pattern, multi in itertools.product(patterns, (False, True)):
        rx = recordset.glob_regex(pattern, multi)
        got = [r[0] for r in con.execute("SELECT regexp_full_match(v, ?) FROM unnest(?::VARCHAR[]) t(v)",
                                         [rx, values]).fetchall()]
        assert got == [bool(re.fullmatch(rx, v, re.S)) for v in values], (pattern, multi)


# -- load ------------------------------------------------------------------------------------------

@pytest.fixture
def dirs(tmp_path):
    return tmp_path / "records", tmp_path / "dataset"


def jobs(loaded):
    return sorted({r["job_id"] for r in loaded.table.select(["job_id"]).to_pylist()})


def test_load_reads_both_sources_and_applies_the_selection_to_each(dirs):
    rec, ds = dirs
    rng = random.Random(5)
    docs = []
    for i in range(40):
        kw = dict(end=f"2026-{9 + i % 3:02d}-{1 + i % 28:02d}T{i % 24:02d}:00:00Z",
                  lustre=["2.15.4", "2.16.0", ["2.15.4", "2.16.0"], "2.15.4"][i % 4], fs=("scratch", "home")[:1 + i % 2],
                  user="bob" if i % 5 == 0 else "ann", partition=rng.choice(["batch", "debug"]), hosts=2)
        put(rec, str(i), **kw)
        docs.append(record_doc(str(i), **kw))
        if i == 24:
            compact.compact(rec, ds)            # the first 25 in the dataset, the rest JSON
    sel = Selection.parse("lustre=2.15.*,since=2026-10-01,until=2026-11-01,user=ann")
    got = recordset.load(sel, rec, ds)
    want = sorted(r["job_id"] for d in docs for r in jobrow.rows(d) if sel.matches(r))
    assert sorted(r["job_id"] for r in got.table.to_pylist()) == want and want
    assert got.table.schema == jobrow.arrow_schema()
    assert got.dataset_rows + got.json_rows == got.table.num_rows and got.dataset_rows and got.json_rows
    assert (got.json_records, got.json_in_dataset, got.dataset_files, got.warnings) == (15, 0, 1, [])
    everything = recordset.load("", rec, ds)
    assert everything.table.num_rows == sum(len(jobrow.rows(d)) for d in docs) and everything.dataset_files == 3


def test_a_job_in_both_is_taken_from_the_dataset(dirs, tmp_path):
    rec, ds = dirs
    put(rec, "1")
    compact.compact(rec, ds)
    doc = record_doc("1")
    doc["filesystems"]["scratch"]["read_bytes"] = 12345                  # a later copy of the same job
    records.store(doc, rec, "c1", "1")
    got = recordset.load("", rec, ds)
    assert got.table.num_rows == 1 and got.table.column("read_bytes").to_pylist() != [12345]
    assert (got.dataset_rows, got.json_rows, got.json_records, got.json_in_dataset) == (1, 0, 1, 1)
    table, info = got
    assert table is got.table and info == {"records_read": 1, "json_rows": 0, "json_in_dataset": 1,
                                           "dataset_files": 1, "dataset_rows": 1, "records_skipped": 0,
                                           "records_dirs_skipped": 0, "dataset_files_left_out": 0,
                                           "warnings": []}


def test_copies_count_once_in_either_source(dirs, monkeypatch):
    rec, ds = dirs
    a = put(rec, "1", fs=("scratch", "home"))
    (rec / "2026/10/16").mkdir(parents=True)
    shutil.copy(a, rec / "2026/10/16" / a.name)
    assert recordset.load("", rec, ds).table.num_rows == 2
    compact.compact(rec, ds)
    [f] = dataset.part_files(ds, (2026, 10))
    shutil.copy(f, f.with_name("part-99990101T000000Z-0.parquet"))       # a merge half done
    got = recordset.load("", rec, ds)
    assert got.table.num_rows == 2 and got.dataset_files == 2


def test_months_outside_since_until_are_not_read(dirs):
    rec, ds = dirs
    put(rec, "1", end="2026-09-30T23:59:59Z")
    put(rec, "2", end="2026-10-15T00:00:00Z")
    compact.compact(rec, ds)
    [sept] = dataset.part_files(ds, (2026, 9))
    sept.write_bytes(b"PAR1 not really")
    got = recordset.load("since=2026-10-01", rec, ds)
    assert jobs(got) == ["2"] and got.dataset_files == 1 and got.warnings == []
    got = recordset.load("since=2026-09-30", rec, ds)                   # September read: its file said
    assert jobs(got) == ["2"] and got.dataset_files_left_out == 1
    assert [w.startswith(f"{sept}: not a readable Parquet file (") for w in got.warnings] == [True]


def test_unreadable_json_records_are_skipped_with_one_line_each(dirs, tmp_path):
    rec, ds = dirs
    good = put(rec, "1")
    day = good.parent
    (day / "c1-2.json").write_text(json.dumps(record_doc("2"))[:100])
    newer = record_doc("3")
    newer["schema"] = "lustre-jobreport/4"
    (day / "c1-3.json").write_text(json.dumps(newer))
    (day / "c1-4.json").symlink_to(good)
    (day / ".c1-5.json.deadbeef").write_text("{")                        # being written: not even a warning
    got = recordset.load("", rec, ds)
    assert jobs(got) == ["1"]
    assert re.fullmatch(rf"{day}/c1-2.json: truncated \(Unterminated string starting at: line 1 column \d+\); "
                        "skipped", got.warnings[0])
    assert got.warnings[1:] == [
        f"{day}/c1-3.json: record schema lustre-jobreport/4 is newer than this lustre-jobreport reads "
        "(lustre-jobreport/3): upgrade lustre-jobreport; skipped",
        f"{day}/c1-4.json: a symbolic link (not followed); skipped",
    ]


def test_a_record_whose_value_fits_no_column_is_skipped_with_a_warning(dirs):
    rec, ds = dirs
    put(rec, "1")
    doc = record_doc("2")
    doc["filesystems"]["scratch"]["ops"] = ["open"]
    records.store(doc, rec, "c1", "2")
    got = recordset.load("", rec, ds)
    assert jobs(got) == ["1"]
    [w] = got.warnings
    assert w.endswith("c1-2.json: malformed record: AttributeError: 'list' object has no attribute 'get'; skipped")


def test_missing_directories_are_empty_sources(tmp_path):
    for rec, ds in ((tmp_path / "no", tmp_path / "none"), (None, None), ("", "")):
        got = recordset.load("lustre=2.15.*", rec, ds)
        assert got.table.num_rows == 0 and got.table.schema == jobrow.arrow_schema() and got.warnings == []


# -- the dataset's schema -----------------------------------------------------------------------

def test_a_parquet_file_of_another_schema_is_named_left_out_and_counted(dirs):
    """Valid Parquet files of other schemas (other columns, other types, one holding job 1's id
    and nothing else) are not read as if understood: each is named with what differs."""
    rec, ds = dirs
    put(rec, "1")
    put(rec, "2", end="2026-10-16T00:00:00Z")
    compact.compact(rec, ds)
    month = ds / "year=2026" / "month=10"
    made = foreign_files(month)
    got = recordset.load("", rec, ds)
    rows = sorted((r["job_id"], r["fs"], r["read_bytes"] is not None) for r in got.table.to_pylist())
    assert rows == [("1", "scratch", True), ("2", "scratch", True)]
    assert (got.dataset_files, got.dataset_files_left_out, got.records_skipped) == (1, len(made), 0)
    for name, why in made.items():
        [line] = [w for w in got.warnings if w.startswith(f"{month / name}: ")]
        assert line.startswith(f"{month / name}: a Parquet file of another schema, ") and why in line
        assert line.endswith("; left out") and "\n" not in line
    assert len(got.warnings) == len(made)


@pytest.mark.parametrize("how", ["truncated", "random bytes", "column record_id", "column read_bytes"])
def test_a_file_that_is_not_readable_parquet_is_named_left_out_and_counted(dirs, how):
    """A corrupt dataset file (its footer gone, or a column chunk past it: met by DuckDB's read,
    not by the schema check) stopped compare: it is left out like a file of another schema,
    named once in one line, counted, and the other files of its batch are read."""
    rec, ds = dirs
    for i in range(1, 4):
        put(rec, str(i))
        compact.compact(rec, ds)
    [of_2] = [f for f in dataset.part_files(ds, (2026, 10)) if "c1/2/" in str(dataset.record_ids(f))]
    bad = damage(of_2, how)
    got = recordset.load("", rec, ds)
    assert jobs(got) == ["1", "3"] and (got.dataset_files, got.dataset_files_left_out) == (2, 1)
    [line] = got.warnings
    assert line.startswith(f"{bad}: not a readable Parquet file (") and line.endswith("; left out")
    assert "\n" not in line


def test_a_dataset_file_the_system_will_not_let_compare_read_is_one_error(dirs, tmp_path, other_user):
    """Not readable for a system reason (a root file of mode 0600 read by an admin): never taken
    for a corrupt file and left out, but one error line naming it and the reason."""
    import subprocess
    import sys
    pw, w = other_user
    rec, ds = w / "records", w / "dataset"
    for i in range(1, 3):
        put(rec, str(i))
        compact.compact(rec, ds)
    first = dataset.part_files(ds, (2026, 10))[0]
    os.chmod(first, 0o600)
    code = ("import sys; from lustre_jobreport.records import recordset\n"
            "from lustre_jobreport.errors import JobReportError\n"
            "try:\n    got = recordset.load('', None, sys.argv[1])\n"
            "except JobReportError as e:\n    print('error:', e)\n"
            "else:\n    print(got.table.num_rows, got.warnings)\n")
    r = subprocess.run(["runuser", "-u", pw.pw_name, "--", sys.executable, "-c", code, str(ds)],
                       capture_output=True, text=True)
    assert (r.returncode, r.stderr) == (0, "") and r.stdout == f"error: {first}: cannot read: Permission denied\n"


def test_a_file_of_a_newer_schema_version_is_one_error_naming_it_and_its_version(dirs):
    rec, ds = dirs
    put(rec, "1")
    compact.compact(rec, ds)
    t = rows_table("2")
    newer = write_part(ds / "year=2026/month=10/part-99990101T000000Z-0.parquet",
                       t.append_column("new_metric", pa.array([1] * t.num_rows)), states=2)
    with pytest.raises(partschema.NewerSchemaError) as err:
        recordset.load("", rec, ds)
    assert str(err.value) == (f"{newer}: written by a newer lustre-jobreport (dataset schema lustre-jobreport-dataset/2; "
                              "this one reads up to lustre-jobreport-dataset/1): upgrade lustre-jobreport to read or "
                              "compact it")
    assert isinstance(err.value, JobReportError)


def test_a_file_of_an_older_schema_version_reads_with_what_it_lacks_null(dirs, monkeypatch):
    """A reader of a later version (whose schema 2 added a column) reads files of version 1:
    stated, or not stated (every file written before versions were stated has version 1's
    columns); what they lack is null, never 0."""
    rec, ds = dirs
    month = ds / "year=2026" / "month=10"
    write_part(month / "part-1.parquet", rows_table("1"), states=None)
    write_part(month / "part-2.parquet", rows_table("2"), states=1)
    third = with_new_metric(rows_table("3"))
    as_version_2(monkeypatch)
    write_part(month / "part-3.parquet", third, states=2)
    got = recordset.load("", rec, ds)
    rows = sorted((r["job_id"], r["new_metric"], r["read_bytes"] is not None) for r in got.table.to_pylist())
    assert rows == [("1", None, True), ("2", None, True), ("3", 7, True)]
    assert (got.dataset_files, got.dataset_files_left_out, got.warnings) == (3, 0, [])


def test_a_file_merged_away_under_the_listing_is_listed_again(dirs, monkeypatch):
    rec, ds = dirs
    put(rec, "1")
    compact.compact(rec, ds)
    real = dataset.dataset_files
    calls = []

    def listing(d):
        calls.append(1)
        found = real(d)
        if len(calls) == 2:                  # the dataset query's first listing: a file since gone
            found[(2026, 10)] = found[(2026, 10)] + [Path(ds, "year=2026/month=10/part-gone.parquet")]
        return found

    monkeypatch.setattr(dataset, "dataset_files", listing)
    got = recordset.load("", rec, ds)
    assert got.table.num_rows == 1 and len(calls) >= 3


def test_directories_compare_may_not_read_are_one_line_each(dirs, tmp_path, other_user):
    """An admin without root running compare on root's 0750 records and dataset: a warning for
    the records, one error line for the dataset (never a traceback)."""
    import subprocess
    import sys
    pw, w = other_user
    rec, ds = w / "records", w / "dataset"
    put(rec, "1")
    compact.compact(rec, ds)
    put(rec, "2")
    for d in (rec, ds):
        os.chmod(d, 0o750)
    code = ("import sys; from lustre_jobreport.records import recordset\n"
            "from lustre_jobreport.errors import JobReportError\n"
            "try:\n    got = recordset.load('', sys.argv[1], sys.argv[2])\n"
            "except JobReportError as e:\n    print('error:', e)\n"
            "else:\n    print(got.table.num_rows, got.warnings)\n")
    run = lambda *a: subprocess.run(["runuser", "-u", pw.pw_name, "--", sys.executable, "-c", code, *map(str, a)],  # noqa: E731
                                    capture_output=True, text=True)
    r = run(rec, w / "none")
    assert (r.returncode, r.stderr) == (0, "") and r.stdout == (f"0 ['{rec}: cannot open: Permission denied; "
                                                       "no record under it read']\n")
    r = run(w / "none", ds)
    assert (r.returncode, r.stderr) == (0, "") and r.stdout == f"error: {ds}: cannot list: Permission denied\n"


# -- directories others can write in -------------------------------------------------------------

def test_records_in_directories_others_can_write_are_not_read(dirs):
    """A record planted where anyone may write (a 0777 day, a group-writable year) or in a
    directory of another owner would skew an admin's compare: such a directory is checked before
    any record under it is read, skipped, named in one warning line (once, not for each day
    under it) and counted; the other days are read."""
    rec, ds = dirs
    if os.geteuid() != 0:
        pytest.skip("needs root to give a directory to another owner")
    put(rec, "1", end="2026-10-15T12:00:00Z")
    planted = put(rec, "2", end="2026-10-16T12:00:00Z")
    os.chmod(planted.parent, 0o777)
    theirs = put(rec, "3", end="2026-11-02T12:00:00Z")
    os.chown(theirs.parent.parent, 54321, 54321)                  # 2026/11: another user's
    for day in (3, 4):
        put(rec, f"y{day}", end=f"2025-12-0{day}T12:00:00Z")
    os.chmod(rec / "2025", 0o775)
    got = recordset.load("", rec, ds)
    assert jobs(got) == ["1"]
    assert got.warnings == [f"{rec}/2025: mode 0775 lets others write in it; no record under it read",
                            f"{rec}/2026/10/16: mode 0777 lets others write in it; no record under it read",
                            f"{rec}/2026/11: owned by uid 54321, not 0; no record under it read"]
    assert (got.records_dirs_skipped, got.records_skipped, got.json_records) == (3, 0, 1)
    assert got.info()["records_dirs_skipped"] == 3
    os.chmod(planted.parent, 0o755)                               # fixed: read
    assert jobs(recordset.load("", rec, ds)) == ["1", "2"]


@pytest.mark.parametrize("how", ["0777", "a link"])
def test_a_records_dir_others_can_write_is_one_warning_and_no_record_read(dirs, tmp_path, how):
    rec, ds = dirs
    put(rec, "1")
    if how == "0777":
        os.chmod(rec, 0o777)
        why = "mode 0777 lets others write in it"
    else:
        os.rename(rec, tmp_path / "real")
        rec.symlink_to(tmp_path / "real")
        why = "is a symbolic link"
    got = recordset.load("", rec, ds)
    assert got.table.num_rows == 0 and got.json_records == 0
    assert got.warnings == [f"{rec}: {why}; no record under it read"] and got.records_dirs_skipped == 1


def test_a_non_root_reader_takes_roots_and_its_own_directories_not_another_users(tmp_path, other_user):
    """compare may run as root or as an admin: a records directory of root's or of the user
    running it is read, one of a third user's is not."""
    import subprocess
    import sys
    pw, w = other_user
    rec = w / "records"
    put(rec, "root", end="2026-10-14T12:00:00Z")
    mine = put(rec, "mine", end="2026-10-15T12:00:00Z")
    theirs = put(rec, "theirs", end="2026-10-16T12:00:00Z")
    os.chown(mine.parent, pw.pw_uid, pw.pw_gid)
    os.chown(theirs.parent, 54321, 54321)
    code = ("import sys; from lustre_jobreport.records import recordset\n"
            "got = recordset.load('', sys.argv[1], None)\n"
            "print(sorted(r['job_id'] for r in got.table.to_pylist()), got.warnings)\n")
    r = subprocess.run(["runuser", "-u", pw.pw_name, "--", sys.executable, "-c", code, str(rec)],
                       capture_output=True, text=True)
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout == (f"['mine', 'root'] ['{theirs.parent}: owned by uid 54321, not 0 or {pw.pw_uid}; "
                        "no record under it read']\n")


# -- columns, month directories, paths ---------------------------------------------------------

def test_columns_reads_only_those_and_what_the_selection_and_the_dedupe_need(dirs):
    """columns=: the same rows as a load of every column, only the columns asked for, record_id
    and fs (a job's identity) and the selection's own; from the dataset and JSON records alike."""
    rec, ds = dirs
    for i in range(12):
        put(rec, str(i), end=f"2026-{9 + i % 3:02d}-{1 + i:02d}T00:00:00Z", fs=("scratch", "home")[:1 + i % 2],
            lustre=("2.15.4", "2.16.0")[i % 2], user=("ann", "bob")[i % 3 == 0])
        if i == 7:
            compact.compact(rec, ds)
    sel = "lustre=2.15.*,user=ann,since=2026-09-01"
    full = recordset.load(sel, rec, ds)
    got = recordset.load(sel, rec, ds, columns=("read_bytes", "trusted"))
    assert got.table.column_names == ["record_id", "user", "end", "lustre", "fs", "read_bytes", "trusted"]
    assert got.table.schema == pa.schema([jobrow.arrow_schema().field(c) for c in got.table.column_names])
    assert got.dataset_rows and got.json_rows and got.info() == full.info()
    key = lambda r: (r["record_id"], r["fs"])    # noqa: E731
    assert sorted(got.table.to_pylist(), key=key) == \
        sorted(full.table.select(got.table.column_names).to_pylist(), key=key)
    assert recordset.load("", rec, ds, columns=[]).table.column_names == ["record_id", "fs"]
    assert recordset.load("", rec, ds, columns=iter(["job_id"])).table.column_names == ["record_id", "job_id", "fs"]
    with pytest.raises(ValueError, match="unknown column 'nope'"):
        recordset.load("", rec, ds, columns=["read_bytes", "nope"])


def test_columns_an_older_file_lacks_are_null_and_duplicates_still_count_once(dirs, monkeypatch):
    """A job in a version 1 file (no new_metric) and in a version 2 copy stored first: once,
    the first stored (the copy's), whatever column the older file lacks."""
    rec, ds = dirs
    put(rec, "1")
    put(rec, "2", end="2026-10-16T00:00:00Z")
    compact.compact(rec, ds)
    [f] = dataset.part_files(ds, (2026, 10))
    t = pq.read_table(f)
    as_version_2(monkeypatch)
    earlier = pa.compute.subtract(t.column("stored_at"), 60.0)
    write_part(f.with_name("part-0.parquet"),
               with_new_metric(t.set_column(t.schema.get_field_index("stored_at"), "stored_at", earlier)), states=2)
    got = recordset.load("job_name=*", rec, ds, columns=["new_metric"])
    assert sorted(got.table.select(["record_id", "new_metric"]).to_pylist(), key=str) == \
        [{"record_id": "c1/1/2026-10-15T12:00:00Z", "new_metric": 7},
         {"record_id": "c1/2/2026-10-16T00:00:00Z", "new_metric": 7}]
    assert got.dataset_files == 2


def test_a_zero_padded_month_directory_is_read(dirs):
    """year=2026/month=03, as another tool (or a hand following the Hive convention) writes it,
    is March: read, not listed and then read as empty."""
    rec, ds = dirs
    for month, job in (("03", "1"), ("3", "2"), ("04", "3")):
        d = ds / "year=2026" / f"month={month}"
        d.mkdir(parents=True)
        pq.write_table(dataset.to_table(jobrow.rows(record_doc(job, end=f"2026-{int(month):02d}-15T00:00:00Z"))),
                       d / f"part-{job}.parquet")
    assert jobs(recordset.load("", rec, ds)) == ["1", "2", "3"]
    got = recordset.load("since=2026-03-01,until=2026-04-01", rec, ds)
    assert jobs(got) == ["1", "2"] and got.dataset_files == 2
    got = recordset.load("since=2026-04-01", rec, ds)
    assert jobs(got) == ["3"] and got.dataset_files == 1


@pytest.mark.parametrize("name,other", [("run[1]", "run1"), ("data*", "dataX"), ("data?", "dataX"),
                                        ("run[x", "runx"), ("it's [a]", "it's a")])
def test_a_dataset_path_with_glob_characters_is_that_path(tmp_path, name, other):
    """DuckDB reads file names as globs: run[1]/dataset/year=2026/... would read run1's file of
    that name instead, data*/... every data...'s."""
    rec, ds = tmp_path / name / "records", tmp_path / name / "dataset"
    put(rec, "1")
    compact.compact(rec, ds)
    [f] = dataset.part_files(ds, (2026, 10))
    twin = tmp_path / other / f.relative_to(tmp_path / name)       # another dataset's file, same name
    twin.parent.mkdir(parents=True)
    pq.write_table(dataset.to_table(jobrow.rows(record_doc("2"))), twin)
    got = recordset.load("", rec, ds)
    assert jobs(got) == ["1"] and got.dataset_files == 1 and got.dataset_rows == 1
    put(rec, "1")                                   # stored again: the dataset's copy is known
    got = recordset.load("", rec, ds)
    assert jobs(got) == ["1"] and (got.json_in_dataset, got.json_rows) == (1, 0)


# -- several selections in one read ----------------------------------------------------------------

def _plain_match(selection: str, row: dict) -> bool:
    """A selection's condition written plainly (fnmatch, loops), not recordset's regexes: every
    item holds; lustre/kernel/os hold for every ';'-part; since inclusive, until exclusive."""
    import fnmatch
    for item in filter(None, selection.split(",")):
        key, _, value = item.partition("=")
        if key in ("since", "until"):
            moment = datetime.fromisoformat(value).replace(tzinfo=timezone.utc)
            if (row["end"] < moment) if key == "since" else (row["end"] >= moment):
                return False
            continue
        have = row[key]
        parts = have.split(";") if key in recordset.MULTI and have is not None else [have]
        if have is None or not all(fnmatch.fnmatchcase(p, value) for p in parts):
            return False
    return True


_GLOBS = {"lustre": ["2.15.*", "2.16.*", "2.1?.*", "2.16.0", "*"], "user": ["ann", "b*", "[ab]*", "[!a]*"]}
_MOMENTS = ["2026-09-01", "2026-09-20", "2026-10-01", "2026-10-15", "2026-11-01", "2026-12-01"]


@st.composite
def _selections(draw):
    items = [f"{k}={draw(st.sampled_from(v))}" for k, v in _GLOBS.items() if draw(st.booleans())]
    since, until = draw(st.sampled_from([None, *_MOMENTS])), draw(st.sampled_from([None, *_MOMENTS]))
    if since:
        items.append(f"since={since}")
    if until and (since is None or until > since):
        items.append(f"until={until}")
    return ",".join(items)


@st.composite
def _jobs(draw):
    """Jobs: (id, lustre per host, user, end, filesystems, where stored: dataset, json, both
    (compacted, its JSON still in the live tree) or twice (two copies in the dataset))."""
    out = []
    for i in range(draw(st.integers(1, 10))):
        hosts = draw(st.lists(st.sampled_from(["2.15.4", "2.16.0"]), min_size=1, max_size=2))
        end = datetime(2026, draw(st.integers(9, 12)), draw(st.integers(1, 28)), draw(st.integers(0, 23)),
                       tzinfo=timezone.utc)
        out.append((str(i), hosts, draw(st.sampled_from(["ann", "bob", "al"])), end,
                    draw(st.sampled_from([("scratch",), ("scratch", "home")])),
                    draw(st.sampled_from(["dataset", "json", "both", "twice"]))))
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(jobs=_jobs(), pairs=st.lists(st.tuples(_selections(), _selections()), min_size=1, max_size=8))
def test_one_read_of_several_selections_gives_each_its_own_rows(tmp_path_factory, jobs, pairs):
    """load_each over random records (in the dataset, the live tree, both, or twice in the
    dataset) and random pairs of selections: each side's rows are the rows its selection picks,
    one per (record_id, fs), jobs both pick on both sides and counted as shared, and each side's
    counts those of its selection (the dataset files of the months it reads)."""
    base = tmp_path_factory.mktemp("each")
    rec, ds = base / "records", base / "dataset"
    docs, by_file = {}, {}
    for job_id, hosts, user, end, fs, where in jobs:
        kw = dict(end=end, lustre=hosts, hosts=len(hosts), user=user, fs=fs)
        docs[job_id] = record_doc(job_id, **kw)
        if where in ("json", "both"):
            put(rec, job_id, **kw)
        if where != "json":
            for copy in range(2 if where == "twice" else 1):
                by_file.setdefault((end.year, end.month, copy), []).extend(jobrow.rows(docs[job_id]))
    for (y, m, copy), rows in by_file.items():
        write_part(ds / f"year={y}" / f"month={m}" / f"part-{copy}.parquet", dataset.to_table(rows))
    every = [r for d in docs.values() for r in jobrow.rows(d)]
    in_dataset = {r["record_id"] for rows in by_file.values() for r in rows}
    for pair in pairs:
        each = recordset.load_each(pair, rec, ds, columns=("read_bytes", "user"))
        ids = []
        for selection, got in zip(pair, each.sides):
            want = [r for r in every if _plain_match(selection, r)]
            rows = got.table.select(["record_id", "fs", "read_bytes", "user"]).to_pylist()
            assert sorted((r["record_id"], r["fs"]) for r in rows) == sorted((r["record_id"], r["fs"]) for r in want)
            assert sorted(rows, key=str) == sorted(({k: r[k] for k in ("record_id", "fs", "read_bytes", "user")}
                                                    for r in want), key=str)
            assert (got.dataset_rows, got.json_rows) == (sum(r["record_id"] in in_dataset for r in want),
                                                         sum(r["record_id"] not in in_dataset for r in want))
            sel = Selection.parse(selection)
            assert got.dataset_files == sum(1 for y, m, _ in by_file if sel.months((y, m)))
            ids.append({r["record_id"] for r in want})
        assert each.shared_jobs == len(ids[0] & ids[1])
