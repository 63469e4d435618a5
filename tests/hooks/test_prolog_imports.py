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
