"""A node with only the node package has no pyarrow, DuckDB or scipy: the admin-side commands
(records add and compact, compare) say in one line what is missing and what to install, and the
node side (report in every format) works as it does with them. The real CLI, run where those
packages cannot be imported."""

import json
import subprocess
import sys

import pytest

from kit.blockimport import env_without
from kit.records import report_doc
from kit.snapshots import node, snap
from lustre_jobreport.acquire import snapfile

ADMIN = ("pyarrow", "duckdb", "scipy")
INSTALL = "install lustre-jobreport-admin, or pip install 'lustre-jobreport[records]'"


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "lustre_jobreport", *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=120)


def admin_commands(tmp_path):
    report = tmp_path / "report.json"
    report.write_text(json.dumps(report_doc("7")))
    records, dataset = tmp_path / "records", tmp_path / "dataset"
    return {
        "records add": (["records", "add", report, "--records", records], "pyarrow"),
        "records compact": (["records", "compact", "--records", records, "--dataset", dataset], "pyarrow"),
        "compare": (["compare", "--baseline", "lustre=2.12.*", "--candidate", "lustre=2.15.*",
                     "--records", records, "--dataset", dataset], "pyarrow, duckdb, scipy"),
    }


@pytest.mark.parametrize("command", ["records add", "records compact", "compare"])
def test_an_admin_command_without_the_admin_libraries_says_so_in_one_line(tmp_path, command):
    args, missing = admin_commands(tmp_path)[command]
    r = cli(*args, env=env_without(tmp_path, *ADMIN))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines() == [f"lustre-jobreport: error: needs {missing}: {INSTALL}"]
    assert not (tmp_path / "records").exists() and not (tmp_path / "dataset").exists()


def test_only_what_is_missing_is_named(tmp_path):
    pytest.importorskip("pyarrow")
    pytest.importorskip("duckdb")
    args, _ = admin_commands(tmp_path)["compare"]
    r = cli(*args, env=env_without(tmp_path, "scipy"))
    assert r.returncode == 2
    assert r.stderr.splitlines() == [f"lustre-jobreport: error: needs scipy: {INSTALL}"]
    compact, _ = admin_commands(tmp_path)["records compact"]
    assert cli(*compact, env=env_without(tmp_path, "scipy")).returncode == 0    # compact needs no scipy


def test_the_report_in_every_format_needs_none_of_them(tmp_path):
    snapfile.write(snap(0.0, node("n1", llite={"open": 1}, osc={0: {"read_bytes": 4096}},
                                  rpc={("read", 1): 3})), tmp_path / "b.json")
    snapfile.write(snap(60.0, node("n1", llite={"open": 9}, osc={0: {"read_bytes": 2**30}},
                                   rpc={("read", 1): 900})), tmp_path / "e.json")
    blocked = env_without(tmp_path, *ADMIN)
    for fmt in ("text", "json", "html"):
        without = cli("report", tmp_path / "b.json", tmp_path / "e.json", "--format", fmt, "--job-id", "7", env=blocked)
        assert without.returncode == 0, without.stderr
        assert "Traceback" not in without.stderr and "lustre-jobreport:" not in without.stderr
        if fmt != "html":   # (the HTML's SVG ids differ from run to run)
            assert without.stdout == cli("report", tmp_path / "b.json", tmp_path / "e.json", "--format", fmt,
                                         "--job-id", "7").stdout
        else:
            assert "<svg" in without.stdout
