"""The pmieconf rules (packaging/pcp/pmieconf/lustre/, installed under
/var/lib/pcp/config/pmieconf/; issue 12): the real pmieconf makes a pmie config of them (with
PCP's own global parameters), and the real pmie finds both rules true over an archive pmlogger
recorded from a private pmcd running the real agent while the sim client ran a job that storms
(MITgcm-like: 4 KiB record reads, an open storm), and false all along over one of a healthy job
(IOR's 1 MiB transfers). (pmie on the live pmcd raced the machine's load: a busy CI machine once
let a whole storm pass between its samples.)"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kit import pcpkit

RULES = Path(__file__).resolve().parents[2] / "packaging" / "pcp" / "pmieconf" / "lustre"
PCP_GLOBAL = Path("/var/lib/pcp/config/pmieconf/global")    # pmieconf's $hosts$ and actions, from pcp
ENV = pcpkit.ENV
NAMES = ("lustre.small_read_rpcs", "lustre.metadata_storm")
SAMPLES = 8


@pytest.fixture(scope="module")
def pmie_config(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pmieconf")
    shutil.copytree(PCP_GLOBAL, tmp / "rules" / "global")
    shutil.copytree(RULES, tmp / "rules" / "lustre")
    pmieconf = ["pmieconf", "-f", str(tmp / "config"), "-r", str(tmp / "rules")]
    subprocess.run([*pmieconf[:1], "-F", *pmieconf[1:]], check=True, env=ENV, capture_output=True, timeout=60)
    shipped = (tmp / "config").read_text()
    # as an admin would: every second instead of every minute (the thresholds as shipped: a
    # MITgcm-like run is 5,765 metadata operations and 65,536 4 KiB reads; IOR's 40 and none)
    subprocess.run([*pmieconf, "modify", "lustre", "delta", "1 sec"], check=True, env=ENV, capture_output=True,
                   timeout=60)
    modified = (tmp / "config").read_text()
    assert modified.count("delta = 1 sec;") == 2 and modified.count("> 1000") == 2, modified
    return tmp / "config", shipped


def evaluations(tmp: Path, config: Path, seed: int, workload: str, pause_s: float) -> dict[str, list[str]]:
    """Each rule's value at each evaluation of pmie over an archive that pmlogger recorded, one
    sample a second for SAMPLES seconds, while the client ran `workload` again and again
    (`pause_s` apart). pmie replays the archive at its own pace, so what it finds depends on
    the recorded values only, not on how busy the machine was when it ran."""
    archive = pcpkit.record(tmp, SAMPLES, seed, workload, pause_s)
    r = subprocess.run(["pmie", "-a", str(archive), "-c", str(config), "-v"], capture_output=True, text=True,
                       timeout=120, env=ENV)
    got = {n: re.findall(rf"^{re.escape(n)}(?: \(.*?\))?: (\w+)$", r.stdout, re.M) for n in NAMES}
    assert all(len(v) >= 3 for v in got.values()), r.stdout + r.stderr
    # the rules' action, as pmie would run it (-a: written out, not sent to syslog)
    got["actions"] = re.findall(r"^syslog .*?: (Lustre .*)$", r.stdout, re.M)
    return got


def test_pmieconf_makes_both_rules_enabled_with_their_thresholds(pmie_config):
    _, text = pmie_config
    # counters as they are: pmie makes them rates a second (a "rate" of one is its change, 0 in a
    # steady storm: the first rules had it, and fired only when a storm sped up)
    assert re.search(r'match_inst ":\(4\|8\|16\)K"\s+\( lustreclient\.fs\.rpc\.read\s+> 1000 \)', text)
    assert re.search(r"\+\s+lustreclient\.llite\.readdir\s+> 1000", text) and "rate " not in text.split("GENERATED")[1]
    assert text.count('-> syslog 10 min "Lustre') == 2


def test_a_storming_job_fires_both_rules(pmie_config, tmp_path):
    # MITgcm-like: its grid read in 4 KiB records, thousands of small per-rank files
    got = evaluations(tmp_path, pmie_config[0], 3, "mitgcm", 0)
    for name in NAMES:
        assert "true" in got[name], got
    said = " ".join(got["actions"])
    assert re.search(r"Lustre small read RPC storm \d+@\S+\[scratch:4K\]", said), said
    assert re.search(r"Lustre metadata storm \d+@\S+\[scratch\]", said), said


def test_a_healthy_job_fires_none(pmie_config, tmp_path):
    # IOR, 1 MiB transfers, a file per task, twice a second
    got = evaluations(tmp_path, pmie_config[0], 3, "ior", 0.5)
    for name in NAMES:
        assert "true" not in got[name] and "false" in got[name], got
    assert got["actions"] == []
