"""One reading of the config. The bound the wrappers enforce (timeout's SIGTERM, then SIGKILL)
and the log they use are what the reporter's hooks read (config.load(strict=False)), whatever
valid TOML form the site wrote them in, and the same default where a value is bad. Observed on
the real wrappers: a stand-in reporter writes down the command line of its parent (the
`timeout` that bounds it) and its own arguments, and says a line the wrapper must log where
the config says. And the hooks keep the rest of a config whose values are partly wrong: each
bad one is a log line and its default."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from kit.hookkit import (HOOKS, REPORTER, Rig, dead_spec, fake_reporter, log_lines, run_hook, run_with_logger,
                         slurm_env, write_defaults)
from lustre_jobreport import config
from lustre_jobreport.hooks import budget

LOG = "site hooks.log"        # a space in the path: it must reach the reporter as one argument

FORMS = {
    "underscores": "[hooks]\n{kind}_timeout_s = 1_000\n",
    "exponent": "[hooks]\n{kind}_timeout_s = 1e3\n",
    "int": "[hooks]\n{kind}_timeout_s = 45\n",
    "hex": "[hooks]\n{kind}_timeout_s = 0x2d\n",
    "float, comment": "[hooks]\n{kind}_timeout_s = 12.5   # the site's bound, log = 'x'\n",
    "inline table": "hooks = {{ {kind}_timeout_s = 20, log = '{log}' }}\n[snapshot]\nparallel = 8\n",
    "dotted keys": 'hooks.{kind}_timeout_s = 20\nhooks.log = "{log}"\n[snapshot]\nparallel = 8\n',
    "quoted table name": '["hooks"]\n{kind}_timeout_s = 40\n',
    "spaced table name": '[ hooks ]\n{kind}_timeout_s = 40 \n',
    "literal string": "[hooks]\nlog = '{log}'\n",
    "multi-line string": '[hooks]\nlog = """\n{log}"""\n',
    "multi-line literal": "[hooks]\nlog = '''{log}'''\n",
    "log is a number": "[hooks]\nlog = 5\n",
    "relative log": '[hooks]\nlog = "hooks.log"\n',
    "infinite": "[hooks]\n{kind}_timeout_s = inf\n",
    "nan": "[hooks]\n{kind}_timeout_s = nan\n",
    "negative": "[hooks]\n{kind}_timeout_s = -5\n",
    "a day": "[hooks]\n{kind}_timeout_s = 86_400\n",
    "no [hooks] table": "[snapshot]\nparallel = 8\n",
}
WRAPPERS = {"slurm/epilog": ("epilog", ()), "pbs/prologue": ("prolog", ("9.pbs01", "ljr-test", "ljr-test"))}


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_the_wrapper_bound_and_log_are_what_the_hooks_read(wdir, job_user, tmp_path, wrapper, form):
    kind, args = WRAPPERS[wrapper]
    cfg_path = wdir / "config.toml"
    cfg_path.write_text(FORMS[form].format(kind=kind, log=wdir / LOG))
    seen = wdir / "seen"
    reporter = fake_reporter(wdir / "reporter", f"tr '\\0' '\\n' </proc/$PPID/cmdline >'{seen}.timeout'\n"
                                                f"printf '%s\\n' \"$@\" >'{seen}.args'\n"
                                                "echo 'a word from the stand-in' >&2\n")
    defaults = write_defaults(tmp_path / "default", config=cfg_path, reporter=reporter)
    syslog = tmp_path / "syslog"
    rc, took, out, err = run_with_logger(HOOKS / wrapper, slurm_env("7", job_user, defaults), syslog, args)
    assert (rc, out, err) == (0, "", "")

    hooks = config.load(cfg_path, strict=False).values["hooks"]
    bound, log = hooks[f"{kind}_timeout_s"], hooks["log"]
    if not form.startswith(("log is", "relative", "inf", "nan", "neg", "a day")):
        assert config.load(cfg_path).values["hooks"] == hooks      # valid: the CLI reads the same
    timeout = (seen.parent / "seen.timeout").read_text().splitlines()
    assert timeout[0].endswith("timeout") and timeout[1] == "-k" and timeout[4] == str(reporter), timeout
    kill_after, term = float(timeout[2]), float(timeout[3])
    assert term + kill_after == pytest.approx(bound) and term == pytest.approx(max(bound / 2, bound - 0.5))
    argv = (seen.parent / "seen.args").read_text().splitlines()
    assert argv[argv.index("--log") + 1] == "syslog"             # where the reporter logs without a config
    assert argv[argv.index(kind) - 2:argv.index(kind)] == ["--config", str(cfg_path)]
    # the wrapper's own line (the reporter's stderr) goes where the config says
    said = log_lines(Path(log)) if log.startswith("/") else log_lines(syslog)
    assert len(said) == 1 and said[0].endswith(f"job {'7' if kind == 'epilog' else args[0]}: a word from the stand-in")
    assert log_lines(syslog) == [] if log.startswith("/") else not (wdir / LOG).exists()


def test_a_dotted_key_bound_is_the_one_that_kills(wdir, job_user, tmp_path):
    """Not only the command line: a reporter that hangs, deaf to SIGTERM, is killed at that bound."""
    cfg_path = wdir / "config.toml"
    log = wdir / "hooks.log"
    cfg_path.write_text(f'hooks.prolog_timeout_s = 1.5\nhooks.log = "{log}"\n')
    defaults = write_defaults(tmp_path / "default", config=cfg_path,
                              reporter=fake_reporter(wdir / "hang", "trap '' TERM\nexec sleep 30\n"))
    t0 = time.monotonic()
    rc, took, out, err = run_hook(HOOKS / "slurm" / "prolog", slurm_env("7", job_user, defaults))
    assert (rc, out, err) == (0, "", "") and 1.5 <= time.monotonic() - t0 < 1.5 + 0.75
    [line] = log_lines(log)
    assert line.endswith("error: slurm prolog job 7: killed at the 1.5 s bound ([hooks] prolog_timeout_s)")


def test_bad_values_are_logged_and_the_rest_of_the_site_config_holds(wdir, job_user):
    """spool_max_age_days = 0 used to expire a running job's begin snapshot; "no" used to be
    true. Now each is one log line and its default; the site's log, spool and bounds still hold."""
    rig = Rig(wdir, job_user, {"vm": dead_spec()}, epilog_timeout_s=12.0,
              hooks_extra='spool_max_age_days = 0\ncheck_shared_nodes = "no"\nprolog_cli_max_hosts = 2.5')
    os.makedirs(rig.spool, mode=0o700)
    running = rig.spool / "6.begin.json"            # another job's, started a minute ago
    running.write_text("{}")
    os.utime(running, (time.time() - 60,) * 2)
    rc, took, out, err = rig.epilog()
    assert (rc, out, err) == (0, "", "") and running.exists()
    lines = rig.errors()
    assert [l.split(": ", 3)[-1] for l in lines[:3]] == [
        f"config: {rig.config}: hooks.spool_max_age_days = 0: must be at least 1; the default (30.0) is used",
        f"config: {rig.config}: hooks.check_shared_nodes = 'no': expected true or false; the default (true) is used",
        f"config: {rig.config}: hooks.prolog_cli_max_hosts = 2.5: expected a whole number; the default (16) is used",
    ]
    assert "no begin snapshot in the spool" in lines[3] and len(lines) == 4


def recording_reporter(path, starts):
    """The real reporter behind a shim that writes down each start: the `timeout` bounding it
    (its parent's command line) and its arguments, one line a start."""
    path.write_text(f"#!/bin/sh\nprintf '%s | %s\\n' \"$(tr '\\0' ' ' </proc/$PPID/cmdline)\" \"$*\" >>'{starts}'\n"
                    f"exec '{REPORTER}' \"$@\"\n")
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("bound", [5.0, 7.0, 2.5])
def test_the_reporter_starts_once_under_the_built_in_bound_and_again_only_under_another(
        wdir, job_user, node, bound):
    """A job's start waits for every Python start: with the built-in bound (5 s, the config's
    default) the wrapper starts the reporter once, which reads the config once and does the
    work. A config with another bound, longer or shorter, costs a second start: the first does
    nothing and says the config's limits, the second runs under them (timeout's SIGKILL at the
    config's bound), and the begin snapshot is spooled once."""
    rig = Rig(wdir, job_user, {"vm": node.pmcd.spec}, prolog_timeout_s=bound)
    starts = wdir / "starts"
    write_defaults(rig.defaults, config=rig.config, reporter=recording_reporter(wdir / "reporter", starts),
                   path_prefix=wdir / "bin", log=rig.log)
    rc, took, out, err = rig.prolog()
    assert (rc, out, err) == (0, "", "") and rig.begin.exists() and rig.log_lines() == []
    runs = [line.split(" | ") for line in starts.read_text().splitlines()]
    told = [args.split(" --bound ")[1].split()[0] if " --bound " in args else None for _, args in runs]
    assert told == ["5"] + ([] if bound == 5 else [f"{bound!r}"])
    term, kill = budget.wrapper_times(bound)
    assert runs[-1][0].split()[:4] == ["timeout", "-k", f"{kill!r}", f"{term!r}"]
    assert all(" prolog " in args and "--limits" not in args for _, args in runs)


def test_under_another_bound_the_reporter_says_the_configs_and_does_nothing(wdir, job_user, node):
    """The first line on standard error is the config's limits, whatever follows; under another
    bound than the config's the hook does nothing at all (no spool, no log line) and asks to be
    run again; under the config's it does its work."""
    import io

    from lustre_jobreport.hooks import entry

    rig = Rig(wdir, job_user, {"vm": node.pmcd.spec}, prolog_timeout_s=7.0)
    env = slurm_env(rig.job, rig.pw, rig.defaults)
    said = f"limits: 6.5 0.5 7.0 {rig.log}"
    err = io.StringIO()
    assert entry.run("prolog", "slurm", [], str(rig.config), env=env, err=err, bound=5.0) == entry.AGAIN
    assert err.getvalue().splitlines()[0] == said
    assert not rig.spool.exists() and rig.log_lines() == []
    err = io.StringIO()
    assert entry.run("prolog", "slurm", [], str(rig.config), env=env, err=err, bound=7.0) == 0
    assert err.getvalue() == said + "\n" and rig.begin.exists() and rig.log_lines() == []
