"""`lustre-jobreport show JOBID`: a past job's report from its record, before and after
compaction, to its user (root: any job's), and one line for every way it cannot be shown."""

import json
import os
import subprocess
import sys
from pathlib import Path

from kit.records import put
from lustre_jobreport.records import compact

REPORTER = Path(sys.executable).parent / "lustre-jobreport"


def show(*args, config: Path, user: str | None = None) -> subprocess.CompletedProcess:
    cmd = [str(REPORTER), "--config", str(config), "show", *args]
    if user:
        cmd = ["runuser", "-u", user, "--"] + cmd
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_a_job_is_shown_before_and_after_compaction_in_each_format(tmp_path):
    rec, cfg = tmp_path / "records", tmp_path / "config.toml"
    cfg.write_text("")
    put(rec, "4242", "c1", seed=3)
    put(rec, "4243", "c1", seed=4)
    for when in ("live", "compacted"):
        r = show("4242", "--records", str(rec), "--format", "json", config=cfg)
        assert r.returncode == 0, (when, r.stderr)
        doc = json.loads(r.stdout)
        assert (doc["record"]["job_id"], doc["record"]["cluster"]) == ("4242", "c1")
        text = show("4242", "--records", str(rec), config=cfg)
        assert "Lustre I/O report for job 4242" in text.stdout, text.stdout[:300]
        html = show("4242", "--records", str(rec), "--format", "html", config=cfg).stdout
        assert html.lstrip().lower().startswith("<!doctype html") and "4242" in html
        compact.compact(rec, tmp_path / "dataset")
    assert not list(rec.glob("2026/*/*/*.json"))           # all of them moved, and still shown


def test_what_cannot_be_shown_is_one_line(tmp_path):
    rec, cfg = tmp_path / "records", tmp_path / "config.toml"
    cfg.write_text("")
    put(rec, "7", "east")
    put(rec, "7", "west", end="2026-10-16T12:00:00Z")
    cases = {("8",): "no record of job 8 among the job records",
             ("7",): "job 7 has records in clusters east, west: give --cluster",
             ("../7",): "job id '../7': not one a record is named by"}
    for args, said in cases.items():
        r = show(*args, "--records", str(rec), config=cfg)
        assert r.returncode != 0 and r.stdout == "", (args, r.stdout)
        assert r.stderr.count("\n") == 1 and said in r.stderr, (args, r.stderr)
    r = show("7", "--cluster", "west", "--records", str(rec), "--format", "json", config=cfg)
    assert json.loads(r.stdout)["job"]["end"] == "2026-10-16T12:00:00Z"


def test_a_job_id_used_again_shows_the_last_and_says_so(tmp_path):
    rec, cfg = tmp_path / "records", tmp_path / "config.toml"
    cfg.write_text("")
    put(rec, "9", "c1", end="2026-10-15T12:00:00Z", seed=1)
    put(rec, "9", "c1", end="2026-11-02T12:00:00Z", seed=2)
    r = show("9", "--records", str(rec), "--format", "json", config=cfg)
    assert json.loads(r.stdout)["job"]["end"] == "2026-11-02T12:00:00Z"
    assert r.stderr == "lustre-jobreport: note: job 9: 2 records (the id was used again); this is the one " \
                       "that ended last, 2026-11-02T12:00:00Z\n"


def test_a_user_sees_their_own_jobs_only(other_user):
    pw, w = other_user
    rec, cfg = w / "records", w / "config.toml"
    cfg.write_text("")
    put(rec, "1", "c1", user=pw.pw_name)
    put(rec, "2", "c1", user="someone-else")
    for d in [rec, *rec.rglob("*")]:                      # as a site that lets its users read them
        os.chmod(d, 0o755 if d.is_dir() else 0o644)
    mine = show("1", "--records", str(rec), "--format", "json", config=cfg, user=pw.pw_name)
    assert mine.returncode == 0 and json.loads(mine.stdout)["job"]["user"] == pw.pw_name, mine.stderr
    theirs = show("2", "--records", str(rec), config=cfg, user=pw.pw_name)
    assert (theirs.returncode, theirs.stdout) != (0, "") and theirs.stdout == ""
    assert f"no record of job 2 among {pw.pw_name}'s job records" in theirs.stderr
    # root's 0750 tree, as the package makes it: not readable, said so
    os.chmod(rec, 0o750)
    closed = show("1", "--records", str(rec), config=cfg, user=pw.pw_name)
    assert closed.returncode != 0 and "they are root's" in closed.stderr and closed.stderr.count("\n") == 1
