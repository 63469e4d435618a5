"""Job records: `records add` (a report made by hand stored as a record, refused now when it
would not compact), iter_records (the YYYY/MM/DD layout only, never through a link, never a temp
file of a write in progress) and load (bounded). Errors are one line, exit 2 from the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from lustre_jobreport.records import jobrow, store as records
from lustre_jobreport.records import add as records_add
from lustre_jobreport.errors import JobReportError

from kit.records import put, record_doc, report_doc


def cli(tmp_path, *args):
    cfg = tmp_path / "config.toml"
    if not cfg.exists():
        cfg.write_text("")
    return subprocess.run([sys.executable, "-m", "lustre_jobreport", "--config", str(cfg), *args],
                          capture_output=True, text=True)


def write(path, doc):
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return path


# -- records add --------------------------------------------------------------------------------

def test_add_stores_a_report_as_a_record_of_cluster_manual(tmp_path):
    rep = write(tmp_path / "report.json", report_doc("1234", end="2026-03-09T23:59:59Z"))
    path = records_add.add(rep, tmp_path / "records")
    assert path == tmp_path / "records" / "2026" / "03" / "09" / "manual-1234.json"
    rec = records.load(path)
    assert rec["kind"] == "record" and rec["schema"] == "lustre-jobreport/3"
    assert rec["record"]["cluster"] == "manual" and rec["record"]["job_id"] == "1234"
    assert rec["record"]["source"] == "records add" and rec["record"]["added_from"] == str(rep)
    assert jobrow.record_id(rec) == "manual/1234/2026-03-09T23:59:59Z"
    assert os.stat(path).st_mode & 0o777 == 0o644 and os.listdir(path.parent) == ["manual-1234.json"]


def test_add_through_the_cli_prints_the_path_and_takes_a_cluster(tmp_path):
    rep = write(tmp_path / "report.json", report_doc("77"))
    r = cli(tmp_path, "records", "add", str(rep), "--records", str(tmp_path / "rec"), "--cluster", "c2")
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout.strip() == str(tmp_path / "rec" / "2026" / "10" / "15" / "c2-77.json")


def test_adding_the_same_report_again_replaces_its_record(tmp_path):
    rep = write(tmp_path / "report.json", report_doc("5"))
    first = records_add.add(rep, tmp_path / "records", "c1")
    assert records_add.add(rep, tmp_path / "records", "c1") == first
    assert len(list(records.iter_records(tmp_path / "records"))) == 1


def test_a_record_re_added_keeps_its_cluster(tmp_path):
    path = put(tmp_path / "old", "9", cluster="big")
    again = records_add.add(path, tmp_path / "records")
    assert again.name == "big-9.json" and records.load(again)["record"]["cluster"] == "big"


def test_another_jobs_record_under_the_same_name_is_not_replaced(tmp_path):
    """A job id reused the same day (scheduler reinstalled): another job, another end."""
    records_add.add(write(tmp_path / "a.json", report_doc("5", end="2026-10-15T01:00:00Z")), tmp_path / "r", "c1")
    with pytest.raises(JobReportError, match=r"already holds another job's record \(c1/5/2026-10-15T01:00:00Z\)"):
        records_add.add(write(tmp_path / "b.json", report_doc("5", end="2026-10-15T09:00:00Z")), tmp_path / "r", "c1")


def newer(doc):
    doc["schema"] = "lustre-jobreport/9"
    return doc


def no_end(doc):
    doc["job"]["end"] = "yesterday"
    return doc


def ops_list(doc):
    doc["filesystems"][next(iter(doc["filesystems"]))]["ops"] = ["open"]
    return doc


def no_id(doc):
    doc["job"]["id"] = None
    return doc


def slash_id(doc):
    doc["job"]["id"] = "../../etc/x"
    return doc


def bad_bucket(doc):
    doc["filesystems"]["scratch"]["rpc"]["read"]["3K"] = 5
    return doc


def fs_list(doc):
    doc["job"]["hosts_incomplete"] = ["n0000"]
    return doc


BAD_REPORTS = [
    ("truncated", lambda p: p.write_text(json.dumps(report_doc("1"))[:300]), r"truncated \(.*line 1 column"),
    ("not json", lambda p: p.write_text("<html>"), r"not valid JSON"),
    ("empty", lambda p: p.write_text(""), r"truncated"),
    ("not utf-8", lambda p: p.write_bytes(b'{"a": "\xff"}'), r"not UTF-8"),
    ("nested", lambda p: p.write_text("[" * 100_000), r"nested too deeply"),
    ("huge int", lambda p: p.write_text('{"schema": ' + "9" * 5000 + "}"), r"not usable JSON"),
    ("a list", lambda p: p.write_text("[1, 2]"), r"not a JSON object"),
    ("a snapshot", lambda p: p.write_text('{"schema": "other/1"}'), r"not a lustre-jobreport record"),
    ("newer schema", lambda p: write(p, newer(report_doc("1"))), r"lustre-jobreport/9 is newer.*upgrade"),
    ("no end", lambda p: write(p, no_end(report_doc("1"))), r"without a valid job end"),
    ("no job id", lambda p: write(p, no_id(report_doc("1"))), r"no job id \(make it with `report --job-id ID`\)"),
    ("job id with a slash", lambda p: write(p, slash_id(report_doc("1"))), r"cannot name a record file"),
    ("ops not an object", lambda p: write(p, ops_list(report_doc("1"))),
     r"would not compact: malformed record: AttributeError"),
    ("RPC size not a bucket", lambda p: write(p, bad_bucket(report_doc("1"))), r"would not compact: .*'3K'"),
    ("hosts_incomplete a list", lambda p: write(p, fs_list(report_doc("1"))), r"would not compact: "),
    ("a directory", lambda p: p.mkdir(), r"a directory, not a record file"),
    ("missing", lambda p: None, r"no such file"),
    ("oversized", lambda p: os.truncate(write(p, ""), records.MAX_RECORD_BYTES + 1),
     r"67,108,865 bytes, over the 64 MiB a record may be"),
]


@pytest.mark.parametrize("make,why", [b[1:] for b in BAD_REPORTS], ids=[b[0] for b in BAD_REPORTS])
def test_a_report_that_would_not_compact_is_refused_in_one_line(tmp_path, make, why):
    rep = tmp_path / "report.json"
    make(rep)
    r = cli(tmp_path, "records", "add", str(rep), "--records", str(tmp_path / "records"))
    assert r.returncode == 2 and r.stdout == "", r.stderr
    assert r.stderr.startswith("lustre-jobreport: error: ") and r.stderr.count("\n") == 1, r.stderr
    assert "Traceback" not in r.stderr
    import re
    assert re.search(why, r.stderr), r.stderr
    assert not (tmp_path / "records").exists() or list(records.iter_records(tmp_path / "records")) == []


def test_add_refuses_a_records_dir_others_can_write(tmp_path):
    (tmp_path / "records").mkdir(mode=0o777)
    os.chmod(tmp_path / "records", 0o777)
    r = cli(tmp_path, "records", "add", str(write(tmp_path / "r.json", report_doc("1"))),
            "--records", str(tmp_path / "records"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "mode 0777 lets others write in it; refusing it" in r.stderr


def test_add_with_no_records_dir_says_so(tmp_path):
    with pytest.raises(JobReportError, match=r"no records directory"):
        records_add.add(write(tmp_path / "r.json", report_doc("1")), "")


def test_add_with_a_bad_cluster_name_says_so(tmp_path):
    with pytest.raises(JobReportError, match=r"cluster '\.\./x': must be"):
        records_add.add(write(tmp_path / "r.json", report_doc("1")), tmp_path / "records", "../x")


def test_a_relative_records_dir_is_taken_from_the_working_directory(tmp_path):
    rep = write(tmp_path / "report.json", report_doc("3"))
    r = subprocess.run([sys.executable, "-m", "lustre_jobreport", "--config", "/dev/null", "records", "add",
                        "report.json", "--records", "rec"], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "rec" / "2026" / "10" / "15" / "manual-3.json").is_file() and rep.exists()


# -- iter_records ------------------------------------------------------------------------------

def test_iter_records_walks_the_layout_only_and_never_a_link_or_a_temp_file(tmp_path):
    rec = tmp_path / "records"
    a = put(rec, "1", end="2026-10-15T12:00:00Z")
    b = put(rec, "2", end="2026-09-30T23:00:00Z")
    day = a.parent
    (day / ".c1-3.json.0a1b2c3d").write_text('{"schema": "lustre-jobre')      # a write in progress
    (day / "notes.txt").write_text("hello")
    (day / "c1-4.json").mkdir()                                                # a directory named like one
    (day / "c1-5.json").symlink_to(b)                                          # a link to a record
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "12").mkdir()
    put(tmp_path / "elsewhere", "6", end="2026-08-12T00:00:00Z")
    (rec / "2026" / "08").symlink_to(tmp_path / "elsewhere" / "2026" / "08")    # a month that is a link
    (rec / "2025").write_text("")                                              # a file named like a year
    (rec / ".compacted" / "2026" / "10" / "15").mkdir(parents=True)
    (rec / ".compacted" / "2026" / "10" / "15" / "c1-7.json").write_text("{}")
    (rec / "c1-8.json").write_text("{}")                                       # not in a day directory
    (rec / "2026" / "1x").mkdir()
    odd = []
    assert list(records.iter_records(rec, odd)) == [b, a]
    assert sorted((str(p.relative_to(rec)), why) for p, why in odd) == [
        ("2025", "not a regular file"),
        ("2026/08", "a symbolic link (not followed)"),
        ("2026/10/15/c1-4.json", "a directory where a record file should be"),
        ("2026/10/15/c1-5.json", "a symbolic link (not followed)"),
    ]


def test_iter_records_of_a_missing_dir_is_empty(tmp_path):
    assert list(records.iter_records(tmp_path / "none")) == []


# -- load ----------------------------------------------------------------------------------------

def test_reads_are_bounded(tmp_path):
    path = put(tmp_path / "r", "1")
    data, _ = records.read_bytes(path, limit=10 ** 6)
    assert len(data) == path.stat().st_size > 1000
    with pytest.raises(records.RecordFileError, match=r"[0-9,]+ bytes, over the .* MiB a record may be"):
        records.read_bytes(path, limit=1000)
    r, w = os.pipe()                          # no size to look at first: bounded while reading
    os.write(w, b"x" * 5000)
    os.close(w)
    with pytest.raises(records.RecordFileError, match=r"^/dev/fd/\d+: over the .* MiB a record may be$"):
        records.read_bytes(f"/dev/fd/{r}", follow=True, limit=1000)
    os.close(r)


def test_load_does_not_follow_a_link_nor_block_on_a_fifo(tmp_path):
    target = put(tmp_path / "r", "1")
    (tmp_path / "link.json").symlink_to(target)
    with pytest.raises(records.RecordFileError, match="a symbolic link"):
        records.load(tmp_path / "link.json")
    os.mkfifo(tmp_path / "fifo.json")
    with pytest.raises(records.RecordFileError, match="not a regular file"):
        records.load(tmp_path / "fifo.json")


def test_a_stored_record_loads_back_as_it_was_written(tmp_path):
    doc = record_doc("11")
    path = records.store(doc, tmp_path / "r", "c1", "11")
    back = records.load(path)
    assert back["filesystems"] == doc["filesystems"] and back["record"]["cluster"] == "c1"


def test_a_naive_end_time_is_utc_for_the_day_directory_too(tmp_path, monkeypatch):
    """jobrow reads a time without an offset as UTC; the record's day directory must agree
    whatever the local time zone."""
    monkeypatch.setenv("TZ", "America/Los_Angeles")
    import time
    time.tzset()
    try:
        doc = report_doc("1")
        doc["job"]["end"] = "2026-10-15T02:00:00"
        assert records.record_path("/r", doc, "c1", "1").parts[-4:-1] == ("2026", "10", "15")
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
