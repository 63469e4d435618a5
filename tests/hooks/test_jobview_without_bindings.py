"""Where PCP's Python bindings cannot be imported (a pip install on a Python the distribution's
python3-pcp is not built for, EL 8's 3.6-only bindings), the hooks do not choose the agents' job
view, which only the bindings read: a job of any size is snapshotted at its start and end
through pminfo and reported with its exact numbers, as job_view_from_nodes = 0 would have it."""

import os
import subprocess
import sys

from kit.blockimport import attempted_imports, env_without
from kit.hookkit import Rig, slurm_env
from lustre_jobreport.records import store as records


def test_a_job_the_job_view_would_read_is_snapshotted_without_the_bindings(wdir, job_user, node, tmp_path):
    rig = Rig(wdir, job_user, {"vm": node.pmcd.spec}, hooks_extra="job_view_from_nodes = 1")
    blocked = env_without(tmp_path, "pcp", "cpmapi")["PYTHONPATH"]

    def hook(kind: str) -> None:
        env = dict(slurm_env(rig.job, rig.pw, rig.defaults, context=f"{kind}_slurmd"), PYTHONPATH=blocked,
                   PATH=os.pathsep.join((str(wdir / "bin"), "/usr/bin", "/bin")))   # its stand-in scontrol
        proc = subprocess.run([sys.executable, "-m", "lustre_jobreport", "--config", str(rig.config), kind,
                               "--scheduler", "slurm"], env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr

    hook("prolog")
    assert rig.begin.exists(), rig.log_lines()          # a begin snapshot, not a store to the agents
    ran = node.client.run("overflow", fs="scratch")
    hook("epilog")
    assert rig.errors() == [], rig.log_lines()
    assert {"pcp", "cpmapi"} & set(attempted_imports(tmp_path))   # the bindings were wanted, and done without
    [path] = rig.record_files()
    fs = records.load(path)["filesystems"]["scratch"]
    assert (fs["read_bytes"], fs["write_bytes"]) == (ran["read_bytes"], ran["write_bytes"])
    assert f"Lustre I/O report for job {rig.job} " in rig.out.read_text()
