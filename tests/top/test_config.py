"""The site config is checked when it is read: a wrong type or value is one clear error naming
the key (the CLI exits 2 with it); the hooks instead keep the rest of the site's settings and use
the built-in default for that key alone (config.load(strict=False) lists what it replaced)."""

import subprocess
import sys
from pathlib import Path

import pytest

from lustre_jobreport import config
from lustre_jobreport.errors import ConfigError

REPORTER = Path(sys.executable).parent / "lustre-jobreport"

# (TOML, the key the error must name)
BAD = [
    ('[hooks]\ncheck_shared_nodes = "no"', "hooks.check_shared_nodes"),
    ("[hooks]\ncheck_shared_nodes = 0", "hooks.check_shared_nodes"),
    ("[hooks]\nspool_max_age_days = 0", "hooks.spool_max_age_days"),
    ("[hooks]\nspool_max_age_days = -3.5", "hooks.spool_max_age_days"),
    ("[hooks]\nspool_max_age_days = nan", "hooks.spool_max_age_days"),
    ("[hooks]\nepilog_timeout_s = inf", "hooks.epilog_timeout_s"),
    ("[hooks]\nepilog_timeout_s = 86400", "hooks.epilog_timeout_s"),        # a day: surely a typo
    ("[hooks]\nepilog_timeout_s = 1%s" % ("0" * 400), "hooks.epilog_timeout_s"),
    ("[hooks]\nprolog_timeout_s = nan", "hooks.prolog_timeout_s"),
    ("[hooks]\nprolog_timeout_s = 0", "hooks.prolog_timeout_s"),
    ("[hooks]\nprolog_timeout_s = -5", "hooks.prolog_timeout_s"),
    ('[hooks]\nprolog_timeout_s = "5"', "hooks.prolog_timeout_s"),
    ("[hooks]\nscheduler_timeout_s = -inf", "hooks.scheduler_timeout_s"),
    ("[snapshot]\nfetch_timeout_s = -1", "snapshot.fetch_timeout_s"),
    ("[snapshot]\nconnect_timeout_s = inf", "snapshot.connect_timeout_s"),
    ("[snapshot]\nparallel = 0", "snapshot.parallel"),
    ("[snapshot]\nparallel = 2.5", "snapshot.parallel"),
    ("[snapshot]\nparallel = true", "snapshot.parallel"),
    ('[snapshot]\nhost_spec = "{hostname}:44321"', "snapshot.host_spec"),
    ('[hooks]\nhtml = "yes"', "hooks.html"),
    ('[hooks]\nhtml = "dir"', "hooks.html"),                                # ... without html_dir
    ('[hooks]\nhtml_dir = "reports"', "hooks.html_dir"),
    ('[hooks]\nlog = "hooks.log"', "hooks.log"),
    ('[hooks]\nlog = ""', "hooks.log"),
    ('[hooks]\nlog = "/var/log/a\\nb.log"', "hooks.log"),
    ('[hooks]\nrecords_dir = "records"', "hooks.records_dir"),
    ('[hooks]\nrecords_dir = "/var/lib/../../etc"', "hooks.records_dir"),
    ('[hooks]\nspool_dir = "spool"', "hooks.spool_dir"),
    ('[hooks]\ncluster = "../x"', "hooks.cluster"),
    ("[hooks]\nprolog_cli_max_hosts = -1", "hooks.prolog_cli_max_hosts"),
    ("[flags]\nmin_elapsed_s = nan", "flags.min_elapsed_s"),
    ("[flags.SMALL_RPC]\nmin_share = 1.5", "flags.SMALL_RPC.min_share"),
    ("[flags.SMALL_RPC]\nmin_share = 0", "flags.SMALL_RPC.min_share"),
    ("[flags.RANK0_IO]\none_host_share = -0.1", "flags.RANK0_IO.one_host_share"),
    ("[flags.READAHEAD_WASTE]\nratio = 0.5", "flags.READAHEAD_WASTE.ratio"),
    ("[flags.SLOW_OST]\ntimes_median = nan", "flags.SLOW_OST.times_median"),
    ("[flags.TINY_CALLS]\nmin_calls = -5", "flags.TINY_CALLS.min_calls"),
    ("[flags.STAT_STORM]\ngetattr_per_open = -inf", "flags.STAT_STORM.getattr_per_open"),
    ('[hosts]\nn1 = ""', "hosts.n1"),
    ("[hooks]\nepilog_timeout = 60", "epilog_timeout"),                      # unknown key
    ("hooks = 5", "hooks"),
]


def write(tmp_path, text):
    path = tmp_path / "config.toml"
    path.write_text(text + "\n")
    return path


@pytest.mark.parametrize("text,key", BAD, ids=[t for t, _ in BAD])
def test_a_bad_value_is_one_error_naming_the_key(tmp_path, text, key):
    with pytest.raises(ConfigError) as err:
        config.load(write(tmp_path, text))
    msg = str(err.value)
    assert key in msg and "\n" not in msg, msg


def other_setting(key):
    """A good [hooks] setting of the site, not the bad key."""
    return ("prolog_cli_max_hosts", 3) if key == "hooks.scheduler_timeout_s" else ("scheduler_timeout_s", 3.5)


def with_other_setting(text, key):
    """text plus other_setting(key), in the same file."""
    line = "%s = %r" % other_setting(key)
    if text.startswith("[hooks]\n"):
        return f"{text}\n{line}"
    return text if text == "hooks = 5" else f"{text}\n[hooks]\n{line}"


@pytest.mark.parametrize("text,key", BAD, ids=[t for t, _ in BAD])
def test_the_hooks_keep_the_rest_and_use_the_default_for_the_bad_key(tmp_path, text, key):
    cfg = config.load(write(tmp_path, with_other_setting(text, key)), strict=False)
    assert len(cfg.problems) == 1 and key in cfg.problems[0], cfg.problems
    if key != "hooks":
        name, value = other_setting(key)
        assert cfg.values["hooks"][name] == value                     # the site's other settings hold
    want, got = config.DEFAULTS, cfg.values
    for p in key.split("."):
        want, got = (want or {}).get(p), (got or {}).get(p)
    assert got == want                                                 # the built-in default (or none)


GOOD = [
    ("[hooks]\nepilog_timeout_s = 1_000", ("hooks", "epilog_timeout_s"), 1000),
    ("[hooks]\nepilog_timeout_s = 1e3", ("hooks", "epilog_timeout_s"), 1000.0),
    ("hooks.prolog_timeout_s = 2", ("hooks", "prolog_timeout_s"), 2),
    ("[hooks]\nlog = '/var/log/ljr hooks.log'", ("hooks", "log"), "/var/log/ljr hooks.log"),
    ('[hooks]\nhtml = "dir"\nhtml_dir = "/srv/reports"', ("hooks", "html_dir"), "/srv/reports"),
    ("[hooks]\nspool_max_age_days = 1", ("hooks", "spool_max_age_days"), 1),
    ("[flags.UNDER_STRIPED]\nmin_bytes = 1e10", ("flags", "UNDER_STRIPED", "min_bytes"), 1e10),
    ("[flags.SMALL_RPC]\nmin_share = 1", ("flags", "SMALL_RPC", "min_share"), 1),
    ('[hooks]\ncluster = "ci-1.a"', ("hooks", "cluster"), "ci-1.a"),
    ('[snapshot]\nhost_spec = "{host}-ib:44321"', ("snapshot", "host_spec"), "{host}-ib:44321"),
]


@pytest.mark.parametrize("text,path,value", GOOD, ids=[t for t, _, _ in GOOD])
def test_good_values_in_every_toml_form_are_taken(tmp_path, text, path, value):
    cfg = config.load(write(tmp_path, text))
    got = cfg.values
    for p in path:
        got = got[p]
    assert got == value and type(got) is type(value) and cfg.problems == ()


def test_the_built_in_defaults_pass_their_own_rules():
    assert config.check(config.DEFAULTS) == []


@pytest.mark.parametrize("cmd", [["report", "/nonexistent/b.json", "/nonexistent/e.json"],
                                 ["snapshot", "--host", "localhost:1", "-o", "/nonexistent/s.json"]])
def test_the_cli_exits_2_with_that_one_line(tmp_path, cmd):
    path = write(tmp_path, '[hooks]\ncheck_shared_nodes = "no"')
    proc = subprocess.run([str(REPORTER), "--config", str(path), *cmd], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    [line] = proc.stderr.splitlines()
    assert line.startswith("lustre-jobreport: error: ") and "hooks.check_shared_nodes" in line, line
    assert "true or false" in line


def test_an_unparseable_file_is_an_error_in_both_modes(tmp_path):
    path = write(tmp_path, "this is = not toml [")
    for strict in (True, False):
        with pytest.raises(ConfigError, match="config.toml"):
            config.load(path, strict=strict)
