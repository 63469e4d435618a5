"""The pmieconf rules (packaging/pcp/pmieconf/lustre/, installed under
/var/lib/pcp/config/pmieconf/; issue 12): the real pmieconf makes a pmie config of them (with
PCP's own global parameters), and the real pmie, against a private pmcd running the real agent
on a sim client, finds both rules true while the client runs a job that storms (MITgcm-like:
4 KiB record reads, an open storm) and false all along on a healthy one (IOR's 1 MiB transfers)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from lustre_sim import SimClient
from privpmcd import PrivatePmcd

RULES = Path(__file__).resolve().parents[2] / "packaging" / "pcp" / "pmieconf" / "lustre"
PCP_GLOBAL = Path("/var/lib/pcp/config/pmieconf/global")    # pmieconf's $hosts$ and actions, from pcp
ENV = dict(os.environ, PATH="/usr/bin:" + os.environ.get("PATH", ""))
NAMES = ("lustre.small_read_rpcs", "lustre.metadata_storm")


@pytest.fixture(scope="module")
def pmie_config(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pmieconf")
    shutil.copytree(PCP_GLOBAL, tmp / "rules" / "global")
    shutil.copytree(RULES, tmp / "rules" / "lustre")
    subprocess.run(["pmieconf", "-F", "-f", str(tmp / "config"), "-r", str(tmp / "rules")], check=True, env=ENV,
                   capture_output=True, timeout=60)
    text = (tmp / "config").read_text()
    # the rules evaluate every minute; the test every second (an admin's pmieconf modify ... delta)
    (tmp / "config").write_text(text.replace("delta = 1 min;", "delta = 1 sec;"))
    return tmp / "config", text


def evaluations(tmp: Path, config: Path, seed: int, workload: str, pause_s: float) -> dict[str, list[str]]:
    """Each rule's value at each evaluation, the client running `workload` again and again
    (`pause_s` apart) from pmie's first sample to its end: whatever the machine's load, some of
    pmie's 1 s intervals hold the job's I/O."""
    client = SimClient.create(tmp / "tree", version="2.15.4", filesystems=[("scratch", 4, 1), ("home", 2, 1)],
                              seed=seed)
    with PrivatePmcd(tmp / "pmcd", tmp / "tree") as pmcd:
        # line-buffered, to see the first evaluation as it is printed
        proc = subprocess.Popen(["stdbuf", "-oL", "pmie", "-c", str(config), "-h", pmcd.spec, "-v", "-T", "5sec"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ENV)
        first: list[str] = []
        while len(first) < 50 and (not first or not first[-1].startswith(NAMES)):
            first.append(proc.stdout.readline())
            if not first[-1]:
                break                        # pmie ended: its output says why below
        done = threading.Event()

        def job() -> None:
            while not done.is_set():
                client.run(workload, fs="scratch")
                done.wait(pause_s)

        runner = threading.Thread(target=job)
        runner.start()
        try:
            out, _ = proc.communicate(timeout=60)
        finally:
            done.set()
            runner.join()
        out = "".join(first) + out
    got = {n: re.findall(rf"^{re.escape(n)}: (\w+)$", out, re.M) for n in NAMES}
    assert all(len(v) >= 3 for v in got.values()), out
    return got


def test_pmieconf_makes_both_rules_enabled_with_their_thresholds(pmie_config):
    _, text = pmie_config
    assert re.search(r'match_inst ":\(4\|8\|16\)K"\s+\( rate lustreclient\.fs\.rpc\.read\s+> 1000 \)', text)
    assert re.search(r"rate lustreclient\.llite\.readdir\s+> 1000", text)
    assert text.count('-> syslog 10 min "Lustre') == 2


def test_a_storming_job_fires_both_rules(pmie_config, tmp_path):
    # MITgcm-like: its grid read in 4 KiB records, thousands of small per-rank files
    got = evaluations(tmp_path, pmie_config[0], 3, "mitgcm", 0)
    for name in NAMES:
        assert "true" in got[name], got


def test_a_healthy_job_fires_none(pmie_config, tmp_path):
    # IOR, 1 MiB transfers, a file per task, twice a second
    got = evaluations(tmp_path, pmie_config[0], 3, "ior", 0.5)
    for name in NAMES:
        assert "true" not in got[name] and "false" in got[name], got
