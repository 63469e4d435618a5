"""Job start latency rule (DESIGN §5): the prolog path imports neither pandas nor Jinja2.

Checked on the real thing: the prolog subcommand run as the wrapper runs it, against a private
pmcd, under `python -X importtime`, which lists every module imported. The same detector run on
the epilog (which needs both) shows it can see them.
"""

import subprocess
import sys

from kit.hookkit import Rig, slurm_env
from lustre_sim import SimClient
from kit.privpmcd import PrivatePmcd

HEAVY = ("pandas", "jinja2")


def modules(args, env=None):
    proc = subprocess.run([sys.executable, "-X", "importtime", *args], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}


def imported(kind, rig):
    env = slurm_env(rig.job, rig.pw, rig.defaults, context=f"{kind}_slurmd")
    return modules(["-m", "lustre_jobreport", "--config", str(rig.config), kind, "--scheduler", "slurm"], env)


def test_prolog_imports_neither_pandas_nor_jinja2(wdir, job_user, tmp_path):
    SimClient.create(tmp_path / "tree", version="2.15.4", filesystems=[("scratch", 4, 1)], seed=2)
    with PrivatePmcd(tmp_path / "pmcd", tmp_path / "tree") as pmcd:
        rig = Rig(wdir, job_user, {"vm": pmcd.spec})
        small = imported("prolog", rig)                     # a small job: one pminfo per node
        assert rig.begin.exists() and rig.errors() == []   # it did its work, with what it imported
        rig.begin.unlink()
        rig.config.write_text(rig.config.read_text() + "prolog_cli_max_hosts = 0\n")
        large = imported("prolog", rig)                     # a large job: PCP bindings in-process
        assert rig.begin.exists() and rig.errors() == []
        epilog = imported("epilog", rig)                    # (its scontrol is not faked here)
    assert "lustre_jobreport.acquire.snapshot" in small and "lustre_jobreport.hooks.entry" in small
    assert not {m for m in small if m.split(".")[0] in HEAVY + ("numpy", "pcp")}
    assert "lustre_jobreport.acquire.snapshot" in large and "pcp.pmapi" in large
    assert not {m for m in large if m.split(".")[0] in HEAVY}
    # the detector does see them: the epilog renders with Jinja2, and numpy when imported
    # (pandas is not installed until records need it: nothing to import)
    assert "jinja2" in epilog and "numpy" in modules(["-c", "import numpy"])


# What a small job's prolog (one pminfo per node, the text spooled raw) has no use for, and the
# import each would cost every job's start; each was on that path once, or is one careless
# top-level import away from it.
NOT_FOR_A_SMALL_JOB = {
    # third-party: the report, records and compare side, the in-process fetch of large jobs
    "numpy": "stacking and report tables", "pcp": "the in-process fetch", "cpmapi": "the in-process fetch",
    "pandas": "-", "jinja2": "HTML", "matplotlib": "charts", "pyarrow": "records", "duckdb": "compare",
    "scipy": "compare",
    # the standard library's heavier packages: the node's name is os.uname()'s, not socket's
    "socket": "gethostname", "ssl": "-", "email": "-", "http": "-", "asyncio": "-", "concurrent": "-",
    "multiprocessing": "the fan-out's worker processes", "decimal": "-", "xml": "-", "sqlite3": "-",
    # dataclasses imports inspect (with ast, dis, tokenize): ~7 ms of a ~60 ms prolog; the
    # small job's path keeps its records as NamedTuples and plain classes
    "dataclasses": "the report's and the stacked snapshot's records", "inspect": "dataclasses",
    "ast": "inspect", "dis": "inspect", "tokenize": "inspect",
    # argparse's help formatter asks shutil for the terminal's width (with bz2, lzma: ~1.7 ms)
    "shutil": "the terminal's width", "bz2": "shutil", "lzma": "shutil",
    # the reporter's own layers past the begin snapshot
    "lustre_jobreport.acquire.snapfile": "stacked tables", "lustre_jobreport.acquire.pcpfetch": "in-process fetch",
    "lustre_jobreport.acquire.procfanout": "worker processes", "lustre_jobreport.report": "the report",
    "lustre_jobreport.records": "job records", "lustre_jobreport.compare": "compare",
    "lustre_jobreport.hooks.epilog": "the epilog", "lustre_jobreport.hooks.delivery": "the epilog",
}


def heavy_among(mods):
    return sorted(m for m in mods for heavy in NOT_FOR_A_SMALL_JOB if m == heavy or m.startswith(heavy + "."))


def test_a_small_jobs_prolog_imports_nothing_it_does_not_use(wdir, job_user, node):
    """The prolog of a job on a few nodes, as the wrapper runs it (--bound), on a real private
    pmcd, under `python -X importtime` (every module imported, whoever imports it, even lazily
    inside a function): it spools the begin snapshot and imports none of the list above. The
    same detector on the epilog and the large job's prolog shows it sees them."""
    rig = Rig(wdir, job_user, {"vm": node.pmcd.spec})
    env = slurm_env(rig.job, rig.pw, rig.defaults)
    args = ["-m", "lustre_jobreport", "--config", str(rig.config), "prolog", "--scheduler", "slurm",
            "--log", "syslog", "--bound", "5", "--"]
    small = modules(args, env)
    assert rig.begin.exists() and rig.errors() == []
    assert heavy_among(small) == []
    assert "lustre_jobreport.acquire.snapshot" in small and "subprocess" in small   # it did read the host
    rig.begin.unlink()
    rig.config.write_text(rig.config.read_text() + "prolog_cli_max_hosts = 0\n")
    large = modules(args, env)
    assert rig.begin.exists() and {"numpy", "pcp", "lustre_jobreport.acquire.pcpfetch"} <= set(heavy_among(large))
    epilog = modules(["-m", "lustre_jobreport", "--config", str(rig.config), "epilog"],
                     slurm_env(rig.job, rig.pw, rig.defaults, context="epilog_slurmd"))
    assert {"jinja2", "lustre_jobreport.report", "lustre_jobreport.hooks.epilog"} <= set(heavy_among(epilog))


def test_a_node_without_a_config_file_does_not_import_the_toml_reader(tmp_path):
    """A node without /etc/lustre-jobreport/config.toml runs on the built-in defaults: nothing to
    parse, so no TOML reader (tomllib, ~3.5 ms of every job's start); a file there is parsed."""
    probe = ("import sys; from pathlib import Path; from lustre_jobreport import config; "
             "config.DEFAULT_PATH = Path(sys.argv[1]); cfg = config.load(strict=False); "
             "print(cfg.source, 'tomllib' in sys.modules or 'toml' in sys.modules)")
    absent = tmp_path / "config.toml"
    said = subprocess.run([sys.executable, "-c", probe, str(absent)], capture_output=True, text=True, timeout=60)
    assert said.stdout.split() == ["built-in", "defaults", "False"], said.stderr
    absent.write_text("[hooks]\nprolog_timeout_s = 7\n")
    said = subprocess.run([sys.executable, "-c", probe, str(absent)], capture_output=True, text=True, timeout=60)
    assert said.stdout.split() == [str(absent), "True"], said.stderr
