"""The four hook wrappers: POSIX sh, safe to install for PBS (root-owned, not group/other
writable), the same logic in each, and the defaults-file mechanism sites use."""

import os
import stat
import subprocess

import pytest

from hookkit import HOOKS

WRAPPERS = [HOOKS / "slurm" / "prolog", HOOKS / "slurm" / "epilog", HOOKS / "pbs" / "prologue",
            HOOKS / "pbs" / "epilogue"]
MARK = "# ---- the same in the four wrappers from here on ----"


@pytest.mark.parametrize("path", WRAPPERS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_wrapper_is_posix_sh_and_installable(path):
    text = path.read_text()
    assert text.startswith("#!/bin/sh\n") and text.rstrip().endswith("exit 0")
    for shell in ("dash", "bash"):
        assert subprocess.run([shell, "-n", str(path)]).returncode == 0
    st = os.stat(path)
    assert st.st_mode & 0o111 == 0o111 and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    assert "eval" not in text.split(MARK)[1]       # nothing job-controlled is ever evaluated


def test_the_four_share_one_body():
    bodies = {p.read_text().split(MARK, 1)[1] for p in WRAPPERS}
    assert len(bodies) == 1


def test_a_named_config_that_does_not_exist_is_logged(wdir, job_user, tmp_path):
    """No config at the default place means built-in defaults; a config named elsewhere that
    is missing is a mistake: nothing is done, and it is said (in the log given by --log)."""
    from hookkit import run_hook, slurm_env

    from hookkit import REPORTER, log_lines

    defaults, log = tmp_path / "default", tmp_path / "fallback.log"
    defaults.write_text(f"LUSTRE_JOBREPORT_CONFIG='{wdir}/nope.toml'\nLUSTRE_JOBREPORT='{REPORTER}'\n"
                        f"LUSTRE_JOBREPORT_LOG='{log}'\n")
    env = slurm_env("5", job_user, defaults)
    rc, took, out, err = run_hook(HOOKS / "slurm" / "prolog", env)
    assert (rc, out, err) == (0, "", "") and took < 5
    [line] = log_lines(log)
    assert line.endswith(f"error: slurm prolog job 5: configuration unusable, nothing done: "
                         f"config file {wdir}/nope.toml does not exist")
