"""The pmlogconf group (packaging/pcp/pmlogconf/lustreclient/, installed under
/var/lib/pcp/config/pmlogconf/; issue 12): the real pmlogconf makes a pmlogger config of it from
a private pmcd running the real agent, with the per-filesystem group on and the per-OST one
offered but off; the real pmlogger writes an archive with it; pmrep replays that archive with
the views, and the archive holds the agent's values, no per-OST ones and no job view slots."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from lustre_sim import SimClient
from kit import pcpkit
from kit.privpmcd import PrivatePmcd

REPO = Path(__file__).resolve().parents[2]
GROUP = REPO / "packaging" / "pcp" / "pmlogconf" / "lustreclient"
VIEWS = REPO / "packaging" / "pcp" / "pmrep" / "lustreclient.conf"
ENV = pcpkit.ENV


def run(*cmd: str, timeout: float = 60) -> str:
    proc = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout, env=ENV)
    assert proc.returncode == 0, f"{cmd[0]}: {proc.stdout}{proc.stderr}"
    return proc.stdout


def values(out: str) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in re.finditer(r'inst \[\d+ or "([^"]+)"\] value (\S+)', out)}


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    """(pmlogger config, archive, pmcd, live fs.rpc.read values) of one run."""
    tmp = tmp_path_factory.mktemp("pmlogconf")
    groups = tmp / "groups"
    shutil.copytree(GROUP, groups / "lustreclient")
    client = SimClient.create(tmp / "tree", version="2.15.4", filesystems=[("scratch", 4, 1), ("home", 2, 1)],
                              seed=4)
    client.run("overflow", fs="scratch")
    with PrivatePmcd(tmp / "pmcd", tmp / "tree") as pmcd:
        run("pmlogconf", "-c", "-q", "-r", "-h", pmcd.spec, "-d", str(groups), str(tmp / "config"))
        config = (tmp / "config").read_text()
        # the group's interval is a minute; the test logs every second (an admin's edit, below the line)
        (tmp / "config.fast").write_text(config.replace("on 1 minute", "on 1 second"))
        run("pmlogger", "-c", str(tmp / "config.fast"), "-h", pmcd.spec, "-s", "3", "-l", str(tmp / "pmlogger.log"),
            str(tmp / "archive"), timeout=120)
        live = values(run("pminfo", "-h", pmcd.spec, "-f", "lustreclient.fs.rpc.read"))
        yield config, tmp / "archive", pmcd, live


def test_pmlogconf_turns_the_per_filesystem_group_on_and_offers_the_per_ost_one_off(logged):
    config, _, _, _ = logged
    assert re.search(r"^#\+ lustreclient/summary:y:1 minute:$", config, re.M)
    assert re.search(r"^#\+ lustreclient/per-ost:n:1 minute:$", config, re.M)
    logged_metrics = re.search(r"log advisory on 1 minute \{\n(.*?)\}", config, re.S).group(1).split()
    assert "lustreclient.fs" in logged_metrics and "lustreclient.llite" in logged_metrics
    assert not [m for m in logged_metrics if m.startswith(("lustreclient.osc", "lustreclient.job"))]


def test_the_archive_holds_the_agents_values_and_no_per_ost_or_job_view_ones(logged):
    _, archive, _, live = logged
    assert values(run("pminfo", "-a", str(archive), "-f", "lustreclient.fs.rpc.read")) == live
    assert live["scratch:1M"] != "0"
    names = run("pminfo", "-a", str(archive), "lustreclient").split()
    assert "lustreclient.llite.open" in names and "lustreclient.mdc.state" in names
    assert not [n for n in names if n.startswith(("lustreclient.osc.", "lustreclient.job.", "lustreclient.control."))]


def test_pmrep_replays_the_archive_with_the_views(logged):
    _, archive, _, live = logged
    out = run("pmrep", "-a", str(archive), "-c", str(VIEWS), ":lustre-rpc")
    rows = [line.split() for line in out.splitlines() if re.match(r"^\d\d:\d\d:\d\d\s", line)]
    assert {r[1] for r in rows} == set(live)            # every bucket, from the archive
    assert all(r[2] in ("N/A", "0.0") for r in rows)    # nothing moved while it was logged
    out = run("pmrep", "-a", str(archive), "-c", str(VIEWS), ":lustre-md")
    assert re.search(r"\sscratch\s", out) and re.search(r"\shome\s", out)
