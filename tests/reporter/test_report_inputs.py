"""`report BEGIN END` refuses, in one line and exit 2, two snapshot files that cannot be the start
and the end of one job: the end taken before the begin (the files given the wrong way round), or
no host in both. (Snapshot files do not say which job they are of: nothing more can be checked.)"""

import subprocess
import sys

from lustre_jobreport import snapfile

from snapshots import node, snap


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
