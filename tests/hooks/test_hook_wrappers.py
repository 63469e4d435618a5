"""The six hook wrappers: POSIX sh, safe to install for PBS (root-owned, not group/other
writable), small, and the same logic for all six in one library (hooks/lib.sh, installed at an
absolute path because PBS admins copy the wrappers into mom_priv); the defaults-file mechanism
sites use; and what happens when the library or the defaults file cannot be used."""

import os
import shutil
import stat
import subprocess

import pytest

from kit.hookkit import (HOOKLIB, HOOKS, REPORTER, fake_reporter, log_lines, run_hook, run_with_logger,
                     slurm_env, write_config, write_defaults)
from lustre_jobreport import config

# each wrapper, as the scheduler names itself and the work it does in the log
RUNS = {"slurm/prolog": ("slurm", "prolog"), "slurm/epilog": ("slurm", "epilog"), "pbs/prologue": ("pbs", "prolog"),
        "pbs/epilogue": ("pbs", "epilog"), "pbs/execjob_begin": ("pbs-hook", "prolog"),
        "pbs/prologue.parallel": ("torque-sister", "prolog")}
WRAPPERS = [HOOKS / name for name in RUNS]
IDS = list(RUNS)
INSTALLED_LIB = "/usr/share/lustre-jobreport/hooks/lib.sh"


def code_lines(path):
    return [l for l in path.read_text().splitlines() if l.strip() and not l.lstrip().startswith("#")]


@pytest.mark.parametrize("path", WRAPPERS + [HOOKLIB], ids=IDS + ["lib.sh"])
def test_posix_sh_and_installable(path):
    text = path.read_text()
    assert text.startswith("#!/bin/sh\n") or path == HOOKLIB
    for shell in ("dash", "bash"):
        assert subprocess.run([shell, "-n", str(path)]).returncode == 0
    st = os.stat(path)
    assert not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    assert (st.st_mode & 0o111 == 0o111) == (path != HOOKLIB)       # the library is sourced, not run
    assert "eval" not in "\n".join(code_lines(path))                # nothing job-controlled is evaluated


@pytest.mark.parametrize("path", WRAPPERS, ids=IDS)
def test_each_wrapper_sources_the_one_library_by_an_absolute_path(path):
    text = path.read_text()
    assert f"lib={INSTALLED_LIB}\n" in text and text.rstrip().endswith("exit 0")
    assert "awk" not in text and "timeout" not in "\n".join(code_lines(path))   # the work is in lib.sh
    assert len(code_lines(path)) <= 14, code_lines(path)


def test_the_library_knows_the_built_in_bounds_of_config_py():
    """When the reporter cannot say its bounds, the library uses the built-in ones: the same."""
    text = HOOKLIB.read_text()
    for kind in ("prolog", "epilog"):
        b = config.DEFAULTS["hooks"][f"{kind}_timeout_s"]
        assert f"{kind}) lim='{b - 0.5:g} 0.5 {b:g} '" in text


def test_a_named_config_that_does_not_exist_is_logged(wdir, job_user, tmp_path):
    """No config at the default place means built-in defaults; a config named elsewhere that
    is missing is a mistake: nothing is done, and it is said (in the log given by --log)."""
    defaults, log = tmp_path / "default", tmp_path / "fallback.log"
    defaults.write_text(f"LUSTRE_JOBREPORT_CONFIG='{wdir}/nope.toml'\nLUSTRE_JOBREPORT='{REPORTER}'\n"
                        f"LUSTRE_JOBREPORT_LIB='{HOOKLIB}'\nLUSTRE_JOBREPORT_LOG='{log}'\n")
    env = slurm_env("5", job_user, defaults)
    rc, took, out, err = run_hook(HOOKS / "slurm" / "prolog", env)
    assert (rc, out, err) == (0, "", "") and took < 5
    [line] = log_lines(log)
    assert line.endswith(f"error: slurm prolog job 5: configuration unusable, nothing done: "
                         f"config file {wdir}/nope.toml does not exist")


def pbs_args(path):
    if path.name == "execjob_begin":
        return ("42.pbs01", "nodeA", "primary", "nodeA/0*2")
    if path.name == "prologue.parallel":    # Torque's prologue arguments
        return ("42.pbs01", "ljr-test", "ljr-test", "myjob", "nodes=2:ppn=4", "batch", "")
    return ("42.pbs01", "ljr-test", "ljr-test") + (("myjob", "1", "", "", "workq", "", "0")
                                                   if path.name == "epilogue" else ())


def args_of(path):
    return pbs_args(path) if path.parent.name == "pbs" else ()


def job_of(path):
    return "42.pbs01" if path.parent.name == "pbs" else "5"


@pytest.mark.parametrize("case", ["missing", "broken"])
@pytest.mark.parametrize("path", WRAPPERS, ids=IDS)
def test_a_library_that_cannot_be_sourced_is_one_syslog_line_and_exit_0(wdir, job_user, tmp_path, path, case):
    lib = {"missing": wdir / "no-such-lib.sh", "broken": wdir / "broken-lib.sh"}[case]
    if case == "broken":
        lib.write_text("echo half >&2\nif then fi\n")
    ran = wdir / "ran"
    reporter = fake_reporter(wdir / "reporter", f"touch '{ran}'\n")
    defaults = write_defaults(tmp_path / "default", config=write_config(
        wdir / "c.toml", hosts={}, spool=wdir / "spool", records="", log=wdir / "hooks.log"), reporter=reporter, lib=lib)
    said = tmp_path / "syslog"
    rc, took, out, err = run_with_logger(path, slurm_env("5", job_user, defaults), said, args_of(path))
    assert (rc, out, err) == (0, "", "") and took < 5
    [line] = said.read_text().splitlines()
    assert line.startswith("-t lustre-jobreport -p daemon.err -- error: ")
    sched, kind = RUNS[f"{path.parent.name}/{path.name}"]
    assert f"{sched} {kind} job {job_of(path)}: hook library not usable" in line and INSTALLED_LIB in line
    assert not ran.exists() and not (wdir / "hooks.log").exists()


@pytest.mark.parametrize("path", WRAPPERS, ids=IDS)
def test_a_broken_defaults_file_is_one_syslog_line_and_exit_0(wdir, job_user, tmp_path, path):
    """A shell syntax error in /etc/default/lustre-jobreport used to end dash with status 2
    (a drained node); now it is one line to syslog."""
    defaults = tmp_path / "default"
    defaults.write_text("LUSTRE_JOBREPORT=/usr/bin/lustre-jobreport\nif then fi\n")
    said = tmp_path / "syslog"
    rc, took, out, err = run_with_logger(path, slurm_env("5", job_user, defaults), said, args_of(path))
    assert (rc, out, err) == (0, "", "") and took < 5
    [line] = said.read_text().splitlines()
    assert "hook library not usable" in line


def test_a_pbs_wrapper_copied_into_mom_priv_still_finds_its_library(wdir, job_user, tmp_path):
    """PBS admins install a copy: $PBS_HOME/mom_priv/prologue; the library is found by its
    absolute path (here the one the defaults file names), not relative to the script."""
    mom_priv = wdir / "mom_priv"
    mom_priv.mkdir()
    for name in ("prologue", "epilogue", "prologue.parallel"):
        shutil.copy2(HOOKS / "pbs" / name, mom_priv / name)
    seen = wdir / "seen"
    reporter = fake_reporter(wdir / "reporter", f"printf '%s\\n' \"$@\" >>'{seen}'\necho 'the report'\n")
    log = wdir / "hooks.log"
    defaults = write_defaults(tmp_path / "default", config=write_config(
        wdir / "c.toml", hosts={}, spool=wdir / "spool", records="", log=log), reporter=reporter)
    env = {"LUSTRE_JOBREPORT_DEFAULTS": str(defaults)}
    rc, took, out, err = run_hook(mom_priv / "prologue", env, pbs_args(mom_priv / "prologue"))
    assert (rc, out, err) == (0, "", "")
    rc, took, out, err = run_hook(mom_priv / "epilogue", env, pbs_args(mom_priv / "epilogue"))
    assert (rc, out, err) == (0, "the report\n", "")                # the epilogue's stdout is the job's
    sister = mom_priv / "prologue.parallel"                            # (Torque's, on a sister host)
    rc, took, out, err = run_hook(sister, env, pbs_args(sister))
    assert (rc, out, err) == (0, "", "")                             # nothing to the job from a sister
    calls = seen.read_text().split("--config\n")[1:]
    assert [c.splitlines()[1:4] for c in calls] == [["prolog", "--scheduler", "pbs"],
                                                    ["epilog", "--scheduler", "pbs"],
                                                    ["prolog", "--scheduler", "torque-sister"]]
    assert calls[0].splitlines()[-3:] == list(pbs_args(mom_priv / "prologue"))
    assert calls[2].splitlines()[-7:] == list(pbs_args(sister))
    assert log_lines(log) == []
