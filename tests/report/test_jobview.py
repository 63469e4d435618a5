"""The agents' job view gives the report that two snapshots give (issue 11).

For each scenario, one sim client runs in a private pmcd with the real agent; at the job's start
the job id is stored into the agent over a local (unix socket) connection, as a node's prolog
does, and a begin snapshot is taken too; the workload and faults run; at the end the report is
built both ways: diff of the two snapshots (the central path, the reference) and jobview.delta
of one job view fetch. Totals, histograms, per-OST and per-host numbers, what is not trusted and
the hosts' filesystems left incomplete must be the same. Then what only the job view has: a
job the agent never heard of, or forgot in a restart, is a host left out and said, and pmcd's
shipped access control takes the prolog's local store.

These scenarios run the whole path: the agent's records made from the Lustre files, pmcd, the
fetch and its decoding. tests/report/test_diff_differential.py runs what lies between, the
agent's diff rules and what a slot serves, on thousands of random jobs against diff.py.
"""

from __future__ import annotations

import subprocess

import pytest

pcpfetch = pytest.importorskip("lustre_jobreport.acquire.pcpfetch")
if not pcpfetch.HAVE_PMAPI:
    pytest.skip("PCP's Python bindings are not importable", allow_module_level=True)

from lustre_jobreport import catalog, config  # noqa: E402
from lustre_jobreport.report import jobview, document as report
from lustre_jobreport.acquire import snapshot
from lustre_sim import SimClient                                          # noqa: E402
from kit.privpmcd import DEFAULT_ACCESS, PrivatePmcd                          # noqa: E402
from kit.jobscenarios import SCENARIOS                                        # noqa: E402

CFG = config.Config()
JOB = "4242"


def store_begin(pmcd: PrivatePmcd, job: str = JOB) -> subprocess.CompletedProcess:
    return subprocess.run(["pmstore", "-h", pmcd.local_spec, catalog.JOB_BEGIN_CONTROL, job],
                          capture_output=True, text=True, timeout=30)


def targets(pmcd: PrivatePmcd) -> list[snapshot.HostTarget]:
    return [snapshot.HostTarget("node0", pmcd.spec)]


def both_reports(pmcd: PrivatePmcd, run) -> tuple[dict, dict]:
    """(central report, job view report) of one job on one client: run(client) is the job."""
    assert store_begin(pmcd).returncode == 0
    begin = snapshot.take(targets(pmcd), connect_timeout_s=5, fetch_timeout_s=20)
    run()
    end = snapshot.take(targets(pmcd), connect_timeout_s=5, fetch_timeout_s=20)
    fetched = snapshot.fetch_all(targets(pmcd), connect_timeout_s=5, fetch_timeout_s=20, job_id=JOB)
    from lustre_jobreport.acquire.snapfile import Snapshot
    viewed = Snapshot.from_hosts(fetched.taken_at, fetched.hosts)
    central = report.build(begin, end, CFG, job_id=JOB, user="u")
    via_agent = report.from_delta(jobview.delta(viewed, JOB), CFG, job_id=JOB, user="u")
    return central, via_agent


def comparable(doc: dict) -> dict:
    """What both ways must agree on, timing aside (the two end reads are moments apart). Two
    differences are by design: a histogram left out on every host has no buckets in the job
    view (the agent sends no bucket it did not count) where the two snapshots list zeros; and
    the two word what they leave out each their own way (which is compared by host, filesystem
    and id below, not by wording)."""
    filesystems = {fs: {**t, "rpc": {d: buckets and {b: n for b, n in buckets.items() if n}
                                     for d, buckets in t["rpc"].items()}}
                   for fs, t in doc["filesystems"].items()}
    return {"filesystems": filesystems,
            "flags": sorted((f["id"], f["fs"]) for f in doc["flags"]),
            "untrusted": sorted((q["host"] or "", q["fs"] or "", q["id"]) for q in doc["data_quality"]
                                if q["id"] != "SHORT_JOB"),
            "hosts": doc["job"]["hosts"], "hosts_missing": doc["job"]["hosts_missing"],
            "hosts_incomplete": doc["job"]["hosts_incomplete"],
            "clients": doc["clients"], "versions": doc["lustre_versions"]}


def said(doc: dict) -> dict[tuple[str, str], set[str]]:
    out: dict[tuple[str, str], set[str]] = {}
    for q in doc["data_quality"]:
        out.setdefault((q["host"] or "", q["fs"] or ""), set()).add(q["id"])
    return out


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_the_job_view_reports_what_two_snapshots_report(tmp_path, scenario):
    client = SimClient.create(tmp_path / "tree", version="2.15.4", filesystems=[("scratch", 12, 1), ("home", 4, 1)],
                              seed=3)
    client.run("background", fs="home")      # counters are not zero when the job starts
    with PrivatePmcd(tmp_path / "pmcd", tmp_path / "tree") as pmcd:
        central, via_agent = both_reports(pmcd, lambda: SCENARIOS[scenario](client))
    assert comparable(via_agent) == comparable(central)
    scratch = via_agent["filesystems"]["scratch"]    # not equal for want of numbers: the job's I/O is there
    assert (scratch["read_bytes"] or 0) + (scratch["write_bytes"] or 0) > 0 or scratch["osts"]
    # what is not trusted is said with the words diff uses for it (a subset: one reason a device)
    central_said, agent_said = said(central), said(via_agent)
    assert all(agent_said[k] <= central_said[k] for k in agent_said), (central_said, agent_said)
    if scenario == "plain":   # every bucket the agent exports, zeros kept, as the snapshots give it
        assert via_agent["filesystems"]["scratch"]["rpc"] == central["filesystems"]["scratch"]["rpc"]
    elif scenario not in ("OST added", "evicted"):     # each fault is seen
        assert central["data_quality"] and via_agent["data_quality"]


def test_a_job_the_agent_does_not_know_is_a_host_left_out_and_said(tmp_path):
    SimClient.create(tmp_path / "tree", version="2.15.4", filesystems=[("scratch", 4, 1)], seed=5)
    with PrivatePmcd(tmp_path / "pmcd", tmp_path / "tree") as pmcd:
        assert store_begin(pmcd, "other").returncode == 0
        fetched = snapshot.fetch_all(targets(pmcd), connect_timeout_s=5, fetch_timeout_s=20, job_id=JOB)
    [host] = fetched.hosts
    assert not host.ok and f"no begin values of job {JOB}" in host.error
    from lustre_jobreport.acquire.snapfile import Snapshot
    doc = report.from_delta(jobview.delta(Snapshot.from_hosts(fetched.taken_at, fetched.hosts), JOB), CFG, job_id=JOB)
    assert doc["job"]["hosts"] == [] and doc["job"]["hosts_missing"] == ["node0"]
    [q] = doc["data_quality"]
    assert q["id"] == "HOST_UNREACHABLE" and q["host"] == "node0" and "agent restarted" in q["detail"]


def test_an_agent_restart_during_the_job_forgets_it(tmp_path):
    client = SimClient.create(tmp_path / "tree", version="2.15.4", filesystems=[("scratch", 4, 1)], seed=6)
    with PrivatePmcd(tmp_path / "pmcd", tmp_path / "tree") as pmcd:
        assert store_begin(pmcd).returncode == 0
        client.run("overflow", fs="scratch")
    with PrivatePmcd(tmp_path / "pmcd2", tmp_path / "tree") as pmcd:     # the node's pmcd came back
        fetched = snapshot.fetch_all(targets(pmcd), connect_timeout_s=5, fetch_timeout_s=20, job_id=JOB)
    [host] = fetched.hosts
    assert not host.ok and "no begin values" in host.error       # a host left out, never a wrong number


def test_pmcds_shipped_access_control_takes_the_prologs_local_store(tmp_path):
    """(pmda-lustre/tests/run-jobs.sh checks that a store from another host is refused.)"""
    SimClient.create(tmp_path / "tree", version="2.15.4", filesystems=[("scratch", 4, 1)], seed=7)
    with PrivatePmcd(tmp_path / "pmcd", tmp_path / "tree", access=DEFAULT_ACCESS) as pmcd:
        assert store_begin(pmcd).returncode == 0
        got = subprocess.run(["pminfo", "-h", pmcd.spec, "-f", catalog.JOB_BEGIN_TIME],
                             capture_output=True, text=True, timeout=30).stdout
    assert f'"{JOB}"' in got


def test_a_bad_job_id_is_refused_by_the_agent(tmp_path):
    SimClient.create(tmp_path / "tree", version="2.15.4", filesystems=[("scratch", 4, 1)], seed=8)
    with PrivatePmcd(tmp_path / "pmcd", tmp_path / "tree") as pmcd:
        bad = store_begin(pmcd, "x y;rm -rf /")
        listed = subprocess.run(["pminfo", "-h", pmcd.spec, "-f", catalog.JOB_BEGIN_TIME],
                                capture_output=True, text=True, timeout=30).stdout
    assert bad.returncode != 0 and "rm" not in listed
