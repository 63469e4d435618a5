"""`report BEGIN END` refuses, in one line and exit 2, two snapshot files that cannot be the start
and the end of one job: the end taken before the begin (the files given the wrong way round), both
taken at the same time (one file given twice), no host in both, or files naming different jobs
(or another job than --job-id). A file naming no job (written before files named theirs, or by
`snapshot` without --job-id) has nothing to be checked against."""

import json
import subprocess
import sys

import pytest

from kit.hookkit import dead_spec
from lustre_jobreport.acquire import snapfile

from kit.snapshots import node, snap


def report(begin, end, tmp_path) -> subprocess.CompletedProcess:
    paths = []
    for name, s in (("begin.json", begin), ("end.json", end)):
        snapfile.write(s, tmp_path / name)
        paths.append(str(tmp_path / name))
    return subprocess.run([sys.executable, "-m", "lustre_jobreport", "report", *paths, "--format", "json"],
                          capture_output=True, text=True, timeout=60)


def one_error_line(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
    [line] = r.stderr.splitlines()
    assert line.startswith("lustre-jobreport: error: ")
    return line


def test_an_end_taken_before_its_begin_is_refused(tmp_path):
    """Swapped files: every counter went 'backwards', and a cleared histogram wrapped to 18E."""
    early = snap(1_700_000_000.0, node("n1", llite={"open": 10, "read_bytes": 1 << 30}, rpc={("read", "4K"): 5}))
    late = snap(1_700_003_600.0, node("n1", llite={"open": 90, "read_bytes": 5 << 30}, rpc={("read", "4K"): 9}))
    line = one_error_line(report(late, early, tmp_path))
    assert f"{tmp_path}/end.json was taken before {tmp_path}/begin.json" in line
    assert "2023-11-14T22:13:20Z" in line and "2023-11-14T23:13:20Z" in line


def test_two_snapshots_with_no_host_in_common_are_refused(tmp_path):
    line = one_error_line(report(snap(0.0, node("a1"), node("a2")), snap(60.0, node("b1")), tmp_path))
    assert "no host in common" in line and "unreachable" not in line.lower()


def test_one_host_in_common_and_time_in_order_make_a_report(tmp_path):
    r = report(snap(0.0, node("a1"), node("a2")), snap(60.0, node("a2"), node("b1")), tmp_path)
    assert r.returncode == 0, r.stderr


# ---- which job: snapshot files name it (an optional "job_id" in their envelope) ---------------

def naming(path, job_id):
    """The file at path, made to name job_id (as `snapshot --job-id` or the hooks write it)."""
    doc = json.loads(path.read_text())
    doc["job_id"] = job_id
    path.write_text(json.dumps(doc))


def report_files(begin, end, *extra) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lustre_jobreport", "report", str(begin), str(end),
                           "--format", "json", *extra], capture_output=True, text=True, timeout=60)


def written(tmp_path, begin_job, end_job):
    """A begin and an end snapshot of the same host, in time order, naming these jobs (None: no job)."""
    b, e = tmp_path / "begin.json", tmp_path / "end.json"
    snapfile.write(snap(1_700_000_000.0, node("n1", llite={"open": 10})), b)
    snapfile.write(snap(1_700_003_600.0, node("n1", llite={"open": 90})), e)
    for path, job in ((b, begin_job), (e, end_job)):
        if job is not None:
            naming(path, job)
    return b, e


def test_snapshots_of_two_jobs_are_refused(tmp_path):
    """Job A's begin and job B's end on the same nodes: the deltas are other jobs' I/O, and the
    report looked trusted."""
    line = one_error_line(report_files(*written(tmp_path, "1234", "1235")))
    assert f"the begin snapshot {tmp_path}/begin.json is of job 1234, the end snapshot {tmp_path}/end.json " \
           "of job 1235" in line


@pytest.mark.parametrize("begin_job, end_job", [("1234", None), (None, "1234"), ("1234", "1234")])
def test_a_file_naming_no_job_beside_one_naming_it_makes_the_report_of_that_job(tmp_path, begin_job, end_job):
    """A file written before snapshots named their job (or by `snapshot` without --job-id) is
    taken as it was: nothing to check it against; the report is of the job the other names."""
    r = report_files(*written(tmp_path, begin_job, end_job))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["job"]["id"] == "1234" and doc["filesystems"]["scratch"]["ops"]["open"] == 80


def test_the_job_id_given_must_be_the_one_the_files_name(tmp_path):
    b, e = written(tmp_path, "1234", None)
    line = one_error_line(report_files(b, e, "--job-id", "999"))
    assert f"--job-id 999, but {b} is of job 1234" in line
    r = report_files(b, e, "--job-id", "1234")
    assert r.returncode == 0 and json.loads(r.stdout)["job"]["id"] == "1234", r.stderr


def test_files_naming_no_job_make_the_report_of_the_job_given_as_before(tmp_path):
    r = report_files(*written(tmp_path, None, None), "--job-id", "55")
    assert r.returncode == 0 and json.loads(r.stdout)["job"]["id"] == "55", r.stderr
    r = report_files(*written(tmp_path, None, None))
    assert r.returncode == 0 and json.loads(r.stdout)["job"]["id"] is None, r.stderr


def test_the_same_file_given_twice_is_refused(tmp_path):
    """It made an empty report of 0 s, which looked like a job that did no I/O."""
    b, _ = written(tmp_path, "1234", None)
    line = one_error_line(report_files(b, b))
    assert f"{b} and {b} were taken at the same time (2023-11-14T22:13:20Z)" in line


def test_two_files_taken_at_the_same_time_are_refused(tmp_path):
    b, e = written(tmp_path, None, None)
    doc = json.loads(e.read_text())
    doc["taken_at"] = json.loads(b.read_text())["taken_at"]
    e.write_text(json.dumps(doc))
    line = one_error_line(report_files(b, e))
    assert f"{b} and {e} were taken at the same time" in line


@pytest.mark.parametrize("value", ['"12 34"', '""', '"' + "9" * 64 + '"', "1234", '["1234"]', '"12\\u001b[2J"'])
def test_a_bad_job_id_in_a_file_is_one_line_naming_the_field(tmp_path, value):
    b, e = written(tmp_path, None, "1234")
    e.write_text(e.read_text().replace('"job_id": "1234"', f'"job_id": {value}'))
    line = one_error_line(report_files(b, e))
    assert f"{e}: not a usable snapshot file: bad job_id " in line and line.isprintable()


def snapshot_cli(tmp_path, name, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lustre_jobreport", "snapshot", "--host", f"n1={dead_spec()}",
                           "--backend", "pminfo", "-o", str(tmp_path / name), *args],
                          capture_output=True, text=True, timeout=60)


def test_snapshot_writes_the_job_given_and_report_refuses_another_jobs_end(tmp_path):
    """`snapshot --job-id`: the file names the job (here of a node whose pmcd is down: quick)."""
    for name, job in (("begin.json", "77"), ("end.json", "78")):
        r = snapshot_cli(tmp_path, name, "--job-id", job)
        assert r.returncode == 0, r.stderr
        assert json.loads((tmp_path / name).read_text())["job_id"] == job
    line = one_error_line(report_files(tmp_path / "begin.json", tmp_path / "end.json"))
    assert "is of job 77" in line and "of job 78" in line


@pytest.mark.parametrize("job", ["", "12 34", "123[4].pbs", "9" * 64])
def test_snapshot_refuses_a_bad_job_id_in_one_line_before_reading_any_host(tmp_path, job):
    r = snapshot_cli(tmp_path, "s.json", "--job-id", job)
    line = one_error_line(r)
    assert f"--job-id {job[:40]!r}" in line and "1 to 63" in line and len(line) < 200
    assert list(tmp_path.iterdir()) == []
