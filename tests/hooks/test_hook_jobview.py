"""A Slurm job read through the agents' job view (issue 11), by the real hooks/slurm wrappers.

Three private pmcds with the real agent, each on its own sim client, stand for nodes n1-n3;
[snapshot] local_spec leads each node's prolog to its own pmcd's unix socket (a local
connection, as on a real node). Every node's prolog stores the job's start into its agent and
nothing is spooled; the first node's epilog reads the deltas from every agent and reports
exactly what the clients did, also when the job's user tries to end or take again its start in
an agent meanwhile. A node whose agent restarted during the job, or whose pmcd is
not there at all, is one log line at the start and a host left out and said at the end.
Then 2,000 node names of one job on one pmcd: the epilog reads what its bound allows and
names the rest, with the totals exactly those of the hosts read.
"""

from __future__ import annotations

import pytest

from kit.hookkit import Rig
from lustre_jobreport.records import store as records

SLACK = 0.75


@pytest.fixture
def three_nodes(wdir):
    """Under wdir: the job's user can reach the pmcds' unix sockets, as on a real node."""
    from lustre_sim import SimClient
    from kit.privpmcd import DEFAULT_ACCESS, PrivatePmcd

    clients, pmcds = {}, {}
    tmp_path = wdir / "nodes"
    try:
        for i, n in enumerate(("n1", "n2", "n3")):
            clients[n] = SimClient.create(tmp_path / f"tree-{n}", version="2.15.4",
                                          filesystems=[("scratch", 8, 1), ("home", 2, 1)], seed=20 + i)
            pmcds[n] = PrivatePmcd(tmp_path / n, tmp_path / f"tree-{n}", access=DEFAULT_ACCESS).start()
        yield tmp_path, clients, pmcds
    finally:
        for p in pmcds.values():
            p.stop()


def rig_for(wdir, job_user, tmp_path, pmcds, nodes_from: int = 2, **kw) -> Rig:
    from kit.hookkit import dead_spec
    return Rig(wdir, job_user, {**{n: p.spec for n, p in pmcds.items()}, "n4": dead_spec()},
               hooks_extra=f"job_view_from_nodes = {nodes_from}",
               snapshot=f'local_spec = "unix:{tmp_path}/{{host}}/pmcd.socket"', **kw)


JOB = dict(nodelist="n[1-3]")


def test_every_node_keeps_the_start_in_its_agent_and_the_epilog_reports_the_deltas(wdir, job_user, three_nodes):
    tmp_path, clients, pmcds = three_nodes
    rig = rig_for(wdir, job_user, tmp_path, pmcds)
    for n in ("n1", "n2", "n3"):
        rc, took, out, err = rig.prolog(node=n, **JOB)
        assert (rc, out, err) == (0, "", "") and took < 5 + SLACK, rig.log_lines()
    assert not rig.begin.exists() and rig.errors() == []          # nothing spooled, nothing wrong
    assert len([l for l in rig.log_lines() if "job start kept by the local agent" in l]) == 3

    ran = {n: c.run("overflow", fs="scratch") for n, c in clients.items()}

    rc, took, out, err = rig.epilog(node="n1", **JOB)
    assert (rc, out, err) == (0, "", "") and took < 30 + SLACK, rig.log_lines()
    assert rig.errors() == [], rig.log_lines()
    [rec_path] = rig.record_files()
    doc = records.load(rec_path)
    assert doc["job"]["hosts"] == ["n1", "n2", "n3"] and doc["job"]["hosts_missing"] == []
    fs = doc["filesystems"]["scratch"]
    assert fs["read_bytes"] == sum(r["read_bytes"] for r in ran.values())
    assert fs["write_bytes"] == sum(r["write_bytes"] for r in ran.values())
    assert {h: v["read_bytes"] for h, v in fs["hosts"].items()} == {n: r["read_bytes"] for n, r in ran.items()}
    assert [q["id"] for q in doc["data_quality"] if q["id"] != "SHORT_JOB"] == []
    assert "3 hosts" in rig.out.read_text()


def test_the_jobs_user_cannot_end_or_take_again_its_start_in_an_agent(wdir, job_user, three_nodes):
    """At the job's end its user stores the job's id into n2's job_begin (which would take the
    begin values again: n2's deltas 0, its I/O silently not counted) and job_end (n2 left out),
    thousands of times, while root clients connect to the same pmcd: the agent takes none of
    them, and the report has every node's exact numbers."""
    from kit.storeloop import connecting, outcomes, storing, total

    tmp_path, clients, pmcds = three_nodes
    rig = rig_for(wdir, job_user, tmp_path, pmcds)
    for n in ("n1", "n2", "n3"):
        assert rig.prolog(node=n, **JOB)[0] == 0
    ran = {n: c.run("overflow", fs="scratch") for n, c in clients.items()}
    spec = pmcds["n2"].local_spec
    with connecting(spec):
        got = outcomes([storing(spec, "lustreclient.control.job_begin", rig.job, 2000, job_user),
                        storing(spec, "lustreclient.control.job_end", rig.job, 2000, job_user)])
    assert total(got, "accepted") == 0 and total(got, "refused") == 4000, got

    rc, took, out, err = rig.epilog(node="n1", **JOB)
    assert (rc, out, err) == (0, "", ""), rig.log_lines()
    [rec_path] = rig.record_files()
    doc = records.load(rec_path)
    assert doc["job"]["hosts"] == ["n1", "n2", "n3"] and doc["job"]["hosts_missing"] == []
    fs = doc["filesystems"]["scratch"]
    assert {h: v["read_bytes"] for h, v in fs["hosts"].items()} == {n: r["read_bytes"] for n, r in ran.items()}
    assert [q["id"] for q in doc["data_quality"] if q["id"] != "SHORT_JOB"] == []


def test_a_node_whose_agent_forgot_the_job_or_has_no_pmcd_is_left_out_and_said(wdir, job_user, three_nodes):
    tmp_path, clients, pmcds = three_nodes
    rig = rig_for(wdir, job_user, tmp_path, pmcds)
    for n in ("n1", "n2", "n3"):
        assert rig.prolog(node=n, nodelist="n[1-4]")[0] == 0
    rc, took, out, err = rig.prolog(node="n4", nodelist="n[1-4]")      # no pmcd there at all
    assert (rc, out, err) == (0, "", "") and took < 5 + SLACK
    [line] = rig.errors()
    assert "n4" in line or "did not keep the job's start" in line, line

    ran = {n: c.run("overflow", fs="scratch") for n, c in clients.items()}
    pmcds["n3"].restart_agent()                                         # the agent restarts mid-job

    rc, took, out, err = rig.epilog(node="n1", nodelist="n[1-4]")
    assert (rc, out, err) == (0, "", "")
    [rec_path] = rig.record_files()
    doc = records.load(rec_path)
    assert doc["job"]["hosts"] == ["n1", "n2"] and doc["job"]["hosts_missing"] == ["n3", "n4"]
    assert doc["filesystems"]["scratch"]["read_bytes"] == ran["n1"]["read_bytes"] + ran["n2"]["read_bytes"]
    said = {q["host"]: q["detail"] for q in doc["data_quality"] if q["id"] == "HOST_UNREACHABLE"}
    assert "no begin values of job" in said["n3"] and "cannot connect" in said["n4"]


NODES = 2000


def test_a_job_view_epilog_larger_than_its_bound_reports_what_it_read(wdir, job_user, tmp_path):
    """2,000 node names on one pmcd: the epilog's fan-out reads what its bound allows."""
    from lustre_sim import SimClient
    from kit.privpmcd import PrivatePmcd

    client = SimClient.create(tmp_path / "tree", version="2.15.4", filesystems=[("scratch", 100, 1)], seed=12)
    with PrivatePmcd(tmp_path / "pmcd", tmp_path / "tree") as pmcd:
        names = [f"n{i:04d}" for i in range(NODES)]
        rig = Rig(wdir, job_user, {n: pmcd.spec for n in names}, epilog_timeout_s=6.0,
                  hooks_extra="job_view_from_nodes = 1000", snapshot=f'local_spec = "{pmcd.local_spec}"\nparallel = 16')
        job = dict(nodelist=f"n[0000-{NODES - 1}]", node="n0000")
        rc, took, out, err = rig.prolog(**job)       # one agent stands for all: one store is every node's
        assert (rc, out, err) == (0, "", "") and not rig.begin.exists(), rig.log_lines()
        ran = client.run("overflow", fs="scratch")
        rc, took, out, err = rig.epilog(**job)
    assert (rc, out, err) == (0, "", "") and took < 6 + SLACK, rig.log_lines()
    [rec_path] = rig.record_files()
    doc = records.load(rec_path)
    hosts, missing = doc["job"]["hosts"], doc["job"]["hosts_missing"]
    assert hosts and len(hosts) + len(missing) == NODES
    fs = doc["filesystems"]["scratch"]
    assert (fs["read_bytes"], fs["write_bytes"]) == (len(hosts) * ran["read_bytes"], len(hosts) * ran["write_bytes"])
    unreachable = [q for q in doc["data_quality"] if q["id"] == "HOST_UNREACHABLE"]
    if missing:      # named: one entry from 4 hosts on, every host in hosts_missing
        assert len(unreachable) == (1 if len(missing) >= 4 else len(missing))
        assert "not reached" in unreachable[0]["detail"]
    else:
        assert unreachable == []
