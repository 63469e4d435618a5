"""`lustre-jobreport compare` end to end: a Parquet dataset as `records compact` lays it out and
JSON records not compacted yet, read through recordset; bad input is one line and exit 2."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from lustre_jobreport import cli
from lustre_jobreport.records import dataset as dataset_layer

from kit.compare_rows import jobs, table
from kit.records import damage, put

MARCH, APRIL = datetime(2026, 3, 1, tzinfo=timezone.utc), datetime(2026, 4, 1, tzinfo=timezone.utc)


def write_dataset(root: Path, t: pa.Table) -> None:
    """Month partitions of the rows' end, named as compaction names them."""
    end = t["end"]
    part = pc.year(end).to_numpy() * 100 + pc.month(end).to_numpy()
    for key in np.unique(part):
        d = root.joinpath(*dataset_layer.part_dirs((int(key) // 100, int(key) % 100)))
        d.mkdir(parents=True, exist_ok=True)
        pq.write_table(t.filter(pa.array(part == key)), d / "part-0.parquet")


@pytest.fixture
def dirs(tmp_path):
    rng = np.random.default_rng(1)
    span = np.linspace(0, 20 * 86400, 12)
    t = table(jobs(rng, 12, start=MARCH, offset_s=span, record_prefix="b"),
              jobs(rng, 12, start=APRIL, offset_s=span, lustre="2.16.0", small_read=0.9, record_prefix="c"))
    write_dataset(tmp_path / "dataset", t)
    (tmp_path / "records").mkdir()
    return tmp_path / "records", tmp_path / "dataset"


def compare(dirs, *args):
    records, dataset = dirs
    return cli.main(["compare", "--records", str(records), "--dataset", str(dataset), *args])


def test_json_text_and_html_of_a_regression(dirs, tmp_path, capsys):
    base = ["--baseline", "lustre=2.15.*", "--candidate", "lustre=2.16.*"]
    assert compare(dirs, *base, "--format", "json", "-o", str(tmp_path / "c.json")) == 0
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["summary"] == {"regression": 1, "improvement": 0, "no_change": 0, "not_enough_data": 0}
    assert doc["baseline"]["selection"] == "lustre=2.15.*" and doc["baseline"]["jobs"] == 12
    assert doc["candidate"]["lustre"] == ["2.16.0"] and doc["candidate"]["source"]["dataset_rows"] == 12
    assert doc["groups"][0]["cause"] == "lustre"
    assert compare(dirs, *base) == 0
    out = capsys.readouterr().out
    assert "REGRESSION  enzo, user ann, 8-15 nodes, on scratch (12 → 12 jobs)" in out
    assert compare(dirs, *base, "--format", "html", "-o", str(tmp_path / "c.html")) == 0
    HTMLParser().feed((tmp_path / "c.html").read_text())
    assert (tmp_path / "c.html").read_text().count("<svg") == 2
    # --by: one group per user and filesystem
    assert compare(dirs, *base, "--by", "user", "--format", "json", "-o", str(tmp_path / "u.json")) == 0
    assert json.loads((tmp_path / "u.json").read_text())["groups"][0]["key"] == {"user": "ann"}


def test_json_records_not_compacted_are_compared_too(dirs, tmp_path):
    records, _ = dirs
    for i in range(3):
        put(records, f"j{i}", end=f"2026-04-2{i}T12:00:00Z", lustre="2.16.0", name="wrf", user="bo")
    assert compare(dirs, "--baseline", "lustre=2.15.*", "--candidate", "lustre=2.16.*",
                   "--format", "json", "-o", str(tmp_path / "c.json")) == 0
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["candidate"]["source"]["records_read"] == 3 and doc["candidate"]["jobs"] == 15
    wrf = [g for g in doc["groups"] if g["key"]["job_name"] == "wrf"]
    assert [(g["verdict"], g["n_baseline"], g["n_candidate"]) for g in wrf] == [("not_enough_data", 0, 3)]


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_no_matching_records_is_one_line_saying_what_was_read(dirs, capsys):
    records, dataset = dirs
    assert compare(dirs, "--baseline", "lustre=2.13.*", "--candidate", "lustre=2.16.*") == 2
    assert one_error_line(capsys) == (
        f"lustre-jobreport: error: no job records match the baseline selection 'lustre=2.13.*' "
        f"(read 0 records from {records} and 2 Parquet files from {dataset})")


@pytest.mark.parametrize("args, msg", [
    (["--baseline", "lustr=2.15.*", "--candidate", "lustre=2.16.*"], "unknown key 'lustr'"),
    (["--baseline", "since=yesterday", "--candidate", "lustre=2.16.*"], "since: 'yesterday' is not an ISO date"),
    (["--baseline", "lustre=2.15.*", "--candidate", "lustre=2.16.*", "--by", "user,host"], "--by: unknown key 'host'"),
])
def test_bad_arguments_are_one_line(dirs, capsys, args, msg):
    assert compare(dirs, *args) == 2
    assert msg in one_error_line(capsys)


@pytest.mark.parametrize("how", ["truncated", "random bytes", "column rpc_read_4K"])
def test_a_corrupt_dataset_file_is_left_out_named_and_counted(dirs, tmp_path, capsys, how):
    """A corrupt file among March's: one warning naming it (both sides read March: said once),
    the comparison of the rest (exit 0), source.dataset_files_left_out counts it."""
    _, dataset = dirs
    [march] = dataset_layer.part_files(dataset, (2026, 3))
    bad = march.with_name("part-zz.parquet")
    pq.write_table(table(jobs(np.random.default_rng(2), 3, start=MARCH, record_prefix="z")), bad)
    damage(bad, how)
    assert compare(dirs, "--baseline", "lustre=2.15.*", "--candidate", "lustre=2.16.*", "--format", "json",
                   "-o", str(tmp_path / "c.json")) == 0
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"lustre-jobreport: warning: {bad}: not a readable Parquet file (")
    assert line.endswith("; left out")
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["baseline"]["jobs"] == 12 and doc["baseline"]["source"]["dataset_files_left_out"] == 1
    assert doc["summary"]["regression"] == 1


def test_a_dataset_file_of_another_schema_is_said_left_out_and_counted(dirs, tmp_path, capsys):
    """A valid Parquet file of another schema among March's files: one warning naming it (both
    sides read March: said once), the comparison of the rest, and source.dataset_files_left_out
    counts it."""
    _, dataset = dirs
    other = dataset.joinpath(*dataset_layer.part_dirs((2026, 3)), "part-1.parquet")
    pq.write_table(pa.table({"record_id": ["x"], "read_bytes": [1.5]}), other)
    assert compare(dirs, "--baseline", "lustre=2.15.*", "--candidate", "lustre=2.16.*", "--format", "json",
                   "-o", str(tmp_path / "c.json")) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"lustre-jobreport: warning: {other}: a Parquet file of another "
                                                "schema, not this dataset's schema (it states no version; ")
    assert err[0].endswith("; left out")
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["baseline"]["source"]["dataset_files_left_out"] == 1 and doc["baseline"]["source"]["skipped"] == 0
    assert doc["baseline"]["jobs"] == 12 and doc["candidate"]["source"]["dataset_files_left_out"] == 1  # read too


def test_a_dataset_file_of_a_newer_schema_is_one_error_naming_it(dirs, capsys):
    _, dataset = dirs
    [f] = dataset_layer.part_files(dataset, (2026, 4))
    t = pq.read_table(f)
    newer = f.with_name("part-1.parquet")
    pq.write_table(t.append_column("new_metric", pa.array([1] * t.num_rows))
                   .replace_schema_metadata({b"lustre-jobreport.dataset": b"lustre-jobreport-dataset/2"}), newer)
    assert compare(dirs, "--baseline", "lustre=2.15.*", "--candidate", "lustre=2.16.*") == 2
    assert one_error_line(capsys) == (f"lustre-jobreport: error: {newer}: written by a newer lustre-jobreport "
                                      "(dataset schema lustre-jobreport-dataset/2; this one reads up to "
                                      "lustre-jobreport-dataset/1): upgrade lustre-jobreport to read or compact it")


def test_records_of_a_newer_schema_are_skipped_and_said(dirs, capsys):
    records, dataset = dirs
    put(records, "n1", end="2026-04-20T12:00:00Z", lustre="2.17.0", schema="lustre-jobreport/99")
    assert compare(dirs, "--baseline", "lustre=2.15.*", "--candidate", "lustre=2.17.*") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2
    assert err[0].startswith(f"lustre-jobreport: warning: {records}/2026/04/20/") and "newer" in err[0]
    assert err[1] == (f"lustre-jobreport: error: no job records match the candidate selection 'lustre=2.17.*' "
                      f"(read 0 records from {records} and 2 Parquet files from {dataset}; "
                      f"1 record skipped, see the warnings)")


def test_each_side_reads_only_the_columns_compare_reads(dirs, tmp_path, monkeypatch):
    from lustre_jobreport.compare import command as compare_command, model as cmp
    from lustre_jobreport.records import recordset
    asked, real = [], recordset.load_each

    def load_each(*a, **kw):
        got = real(*a, **kw)
        asked.append((kw.get("columns"), [side.table.column_names for side in got.sides]))
        return got

    monkeypatch.setattr(recordset, "load_each", load_each)
    assert compare(dirs, "--baseline", "lustre=2.15.*,cluster=*", "--candidate", "lustre=2.16.*",
                   "--format", "json", "-o", str(tmp_path / "c.json")) == 0
    need = cmp.needed_columns(cmp.Settings().group_by)
    [(columns, (base, cand))] = asked                                   # both sides in one read
    assert columns == need and len(need) < len(cmp.jobrow.COLUMNS)
    assert set(base) == {*need, "cluster"} and set(cand) == set(need)   # the selection's own too
    sides = compare_command.load_sides({"baseline": "lustre=2.15.*,cluster=*", "candidate": "lustre=2.16.*"},
                                       cmp.Settings(), *dirs)
    assert [t.column_names for t, _ in sides] == [list(need), list(need)]


def test_selections_that_overlap_are_said(dirs, capsys):
    """A job both selections match counts on both sides: compare warns, once, with the count."""
    assert compare(dirs, "--baseline", "lustre=2.1*", "--candidate", "lustre=2.16.*", "--format", "json") == 0
    err = capsys.readouterr().err.splitlines()
    assert err == ["lustre-jobreport: warning: 12 jobs match both the baseline and the candidate selection "
                   "and count on both sides: make the selections disjoint"]
    assert compare(dirs, "--baseline", "lustre=2.15.*", "--candidate", "lustre=2.16.*", "--format", "json") == 0
    assert capsys.readouterr().err == ""


def test_an_output_that_cannot_be_written_is_one_line(dirs, tmp_path, capsys):
    bad = tmp_path / "no" / "such" / "dir" / "c.txt"
    assert compare(dirs, "--baseline", "lustre=2.15.*", "--candidate", "lustre=2.16.*", "-o", str(bad)) == 2
    assert capsys.readouterr().err == f"lustre-jobreport: error: cannot write {bad}: No such file or directory\n"


def test_records_planted_where_others_can_write_are_not_compared(dirs, tmp_path, capsys):
    """Five planted candidate records of a job the candidate does not have, in a 0777 day: not
    read (their group never appears), one warning naming the directory, counted in each side's
    source."""
    import os
    records, _ = dirs
    for i in range(5):
        planted = put(records, f"p{i}", end="2026-04-20T12:00:00Z", lustre="2.16.0", name="planted", user="eve")
    os.chmod(planted.parent, 0o777)
    assert compare(dirs, "--baseline", "lustre=2.15.*", "--candidate", "lustre=2.16.*",
                   "--format", "json", "-o", str(tmp_path / "c.json")) == 0
    assert capsys.readouterr().err.splitlines() == [
        f"lustre-jobreport: warning: {planted.parent}: mode 0777 lets others write in it; no record under it read"]
    doc = json.loads((tmp_path / "c.json").read_text())
    assert [g for g in doc["groups"] if g["key"]["job_name"] == "planted"] == []
    assert doc["candidate"]["source"]["records_dirs_skipped"] == 1 and doc["candidate"]["source"]["records_read"] == 0


def test_a_regression_says_where_to_look_next_with_the_settings_its_records_keep(dirs, capsys):
    """The hint's settings come from the jobs compare read (the dataset here), through the
    command line."""
    assert compare(dirs, "--baseline", "lustre=2.15.*", "--candidate", "lustre=2.16.*") == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("look next: the group's settings, the same on both sides: max_read_ahead_mb 1024, "
            "max_read_ahead_per_file_mb 256, max_read_ahead_whole_mb 64, max_pages_per_rpc 256") in out
    assert "known client regressions of this shape: LU-18504 (fixed in 2.17)" in out
