"""The node package has no pyarrow, DuckDB or scipy: a job's prolog and epilog, run as slurmd
runs them on a node where those cannot be imported, snapshot, append the report to the job's
output and store its JSON record, never even trying to import them."""

import os
import subprocess
import sys

from kit.blockimport import attempted_imports, env_without
from kit.hookkit import Rig, slurm_env

ADMIN = ("pyarrow", "duckdb", "scipy")


def test_a_job_is_reported_and_recorded_without_the_admin_libraries(wdir, job_user, node, tmp_path):
    rig = Rig(wdir, job_user, {"vm": node.pmcd.spec})
    blocked = env_without(tmp_path, *ADMIN)["PYTHONPATH"]
    for kind in ("prolog", "epilog"):
        env = dict(slurm_env(rig.job, rig.pw, rig.defaults, context=f"{kind}_slurmd"), PYTHONPATH=blocked,
                   PATH=os.pathsep.join((str(wdir / "bin"), "/usr/bin", "/bin")))   # its stand-in scontrol
        proc = subprocess.run([sys.executable, "-m", "lustre_jobreport", "--config", str(rig.config), kind,
                               "--scheduler", "slurm"], env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
    assert rig.errors() == [], rig.log_lines()
    assert attempted_imports(tmp_path) == []
    [record] = rig.record_files()
    assert record.name.endswith(f"-{rig.job}.json")
    assert f"Lustre I/O report for job {rig.job} " in rig.out.read_text().split("job output\n", 1)[1]
