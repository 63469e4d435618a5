"""systemd/: the nightly compaction's service and timer verify (systemd-analyze, when installed),
the service runs a command the CLI accepts, may write where the default config puts records and
dataset, and tmpfiles.d makes those directories in a form the compaction accepts."""

from __future__ import annotations

import configparser
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lustre_jobreport import cli, config

REPO = Path(__file__).resolve().parents[2]
UNITS = REPO / "systemd"
SERVICE = UNITS / "lustre-jobreport-compact.service"
TIMER = UNITS / "lustre-jobreport-compact.timer"
TMPFILES = UNITS / "lustre-jobreport.conf"
INSTALLED = "/usr/bin/lustre-jobreport"


def unit(path):
    p = configparser.ConfigParser(strict=False, interpolation=None, empty_lines_in_values=False)
    p.optionxform = str
    p.read(path)
    return p


def test_the_service_runs_records_compact_with_the_configs_directories():
    svc = unit(SERVICE)["Service"]
    argv = shlex.split(svc["ExecStart"])
    assert argv[0] == INSTALLED and svc["Type"] == "oneshot"
    args = cli.parser().parse_args(argv[1:])
    assert (args.command, args.records_command, args.func) == ("records", "compact", cli._cmd_records_compact)
    assert args.records is None and args.dataset is None            # the config's directories
    writable = [p.lstrip("-") for p in svc["ReadWritePaths"].split()]
    for d in (config.DEFAULTS["hooks"]["records_dir"], config.DEFAULTS["records"]["dataset_dir"]):
        assert any(d == w or d.startswith(w.rstrip("/") + "/") for w in writable), d
    assert (svc["ProtectSystem"], svc["PrivateTmp"], svc["NoNewPrivileges"]) == ("strict", "yes", "yes")


def test_the_timer_is_nightly_persistent_and_spread():
    t = unit(TIMER)["Timer"]
    assert t["Persistent"] == "true" and t["RandomizedDelaySec"] and t["OnCalendar"].startswith("*-*-* ")
    assert unit(TIMER)["Install"]["WantedBy"] == "timers.target"
    assert TIMER.stem == SERVICE.stem                                # the timer starts that service


def test_tmpfiles_makes_the_directories_root_owned_and_not_writable_by_others():
    lines = [ln.split() for ln in TMPFILES.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    made = {f[1]: f for f in lines if f[0] == "d"}
    for d in (config.DEFAULTS["hooks"]["records_dir"], config.DEFAULTS["records"]["dataset_dir"]):
        kind, path, mode, user, group, age = made[d]
        assert (user, group) == ("root", "root") and not int(mode, 8) & 0o022, d
        parent = made[str(Path(d).parent)]
        assert not int(parent[2], 8) & 0o022


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_analyze_verifies_the_units(tmp_path):
    """The installed path of the reporter and its man page are this tree's for the check."""
    reporter = Path(sys.executable).parent / "lustre-jobreport"
    (tmp_path / SERVICE.name).write_text(SERVICE.read_text().replace(INSTALLED, str(reporter)))
    shutil.copy(TIMER, tmp_path / TIMER.name)
    man = tmp_path / "man" / "man1"
    man.mkdir(parents=True)
    shutil.copy(REPO / "reporter" / "lustre-jobreport.1", man)
    r = subprocess.run(["systemd-analyze", "verify", SERVICE.name, TIMER.name], cwd=tmp_path,
                       capture_output=True, text=True, env={**os.environ, "MANPATH": str(tmp_path / "man")})
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    cal = subprocess.run(["systemd-analyze", "calendar", unit(TIMER)["Timer"]["OnCalendar"]],
                         capture_output=True, text=True)
    assert cal.returncode == 0, cal.stderr


@pytest.mark.skipif(shutil.which("systemd-tmpfiles") is None or os.geteuid() != 0,
                    reason="needs systemd-tmpfiles and root (the directories are root's)")
def test_the_directories_tmpfiles_makes_are_accepted_by_the_compaction(tmp_path):
    from lustre_jobreport.records import compact

    from kit.records import put

    r = subprocess.run(["systemd-tmpfiles", "--create", f"--root={tmp_path}", str(TMPFILES)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rec = tmp_path / config.DEFAULTS["hooks"]["records_dir"].lstrip("/")
    ds = tmp_path / config.DEFAULTS["records"]["dataset_dir"].lstrip("/")
    assert rec.is_dir() and ds.is_dir()
    put(rec, "1")
    assert compact.compact(rec, ds).records_added == 1
