"""The fan-out over worker processes (procfanout, issue 11): the same hosts in the same order as
the threads alone give, each host's failure its own, and the deadline kept when a worker cannot
keep it itself. Real worker processes, a real private pmcd running the agent, and a port that
accepts connections but never answers."""

from __future__ import annotations

import socket
import time

import pytest

from lustre_jobreport import catalog
from lustre_jobreport.acquire import procfanout, snapshot

KW = {"connect_timeout_s": 2.0, "fetch_timeout_s": 3.0, "parallel": 4, "backend": "pmapi",
      "metrics": catalog.BEGIN_METRICS}


@pytest.fixture(scope="module")
def pmcd(tmp_path_factory):
    pytest.importorskip("pcp.pmapi")
    from lustre_sim import SimClient
    from kit.privpmcd import PrivatePmcd

    tmp = tmp_path_factory.mktemp("procfanout")
    SimClient.create(tmp / "tree", version="2.15.4", filesystems=[("scratch", 8, 1)], seed=3)
    with PrivatePmcd(tmp / "pmcd", tmp / "tree") as p:
        yield p


def test_how_many_processes():
    assert procfanout.count(1, 100_000) == 1                      # the default: threads only
    assert procfanout.count(4, 10 * procfanout.MIN_HOSTS_PER_PROCESS) == 4
    assert procfanout.count(4, procfanout.MIN_HOSTS_PER_PROCESS - 1) == 1   # too few hosts to be worth it
    assert 1 <= procfanout.count(0, 100_000) <= procfanout.MAX_AUTO


def test_one_per_core_counts_the_cores_this_process_may_use():
    """0 = one process per core: the cores of its CPU affinity (a cgroup or taskset may give the
    epilog fewer than the machine has), not the machine's."""
    import os
    mine = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {min(mine)})
        assert procfanout.count(0, 100_000) == 1
    finally:
        os.sched_setaffinity(0, mine)
    assert procfanout.count(0, 100_000) == min(procfanout.MAX_AUTO, len(mine))


def test_workers_give_the_hosts_in_order_with_the_same_values(pmcd):
    targets = [snapshot.HostTarget(f"n{i:02d}", pmcd.spec) for i in range(9)]
    targets.insert(4, snapshot.HostTarget("dead", "localhost:1"))
    alone = snapshot.fetch_all(targets, **KW).hosts
    spread, sums = procfanout.fetch(targets, 3, None, 0, snapshot.fetch_share, KW)
    assert sums == [None, None, None]     # no timelines asked for
    assert [h.host for h in spread] == [t.name for t in targets]
    assert [h.ok for h in spread] == [h.ok for h in alone] == [t.name != "dead" for t in targets]
    assert "cannot connect to pmcd" in spread[4].error
    a, b = alone[0], spread[7]
    assert b.metrics.keys() == a.metrics.keys() and b.pmids == a.pmids
    assert b.metrics["lustreclient.osc.read_bytes"].instances == a.metrics["lustreclient.osc.read_bytes"].instances


def test_hung_hosts_in_a_worker_cost_the_deadline_and_their_own_entries(pmcd):
    hole = socket.socket()
    hole.bind(("127.0.0.1", 0))
    hole.listen(64)     # accepts connections, never answers: libpcp waits on it far past any bound
    try:
        stuck = [snapshot.HostTarget(f"hung{i}", f"localhost:{hole.getsockname()[1]}") for i in range(2)]
        good = [snapshot.HostTarget(f"n{i}", pmcd.spec) for i in range(2)]
        targets = [good[0], stuck[0], good[1], stuck[1]]    # worker 0 gets the good ones, 1 the hung
        t0 = time.monotonic()
        got, _ = procfanout.fetch(targets, 2, 2.5, 0, snapshot.fetch_share, dict(KW, connect_timeout_s=30.0, fetch_timeout_s=30.0))
        took = time.monotonic() - t0
    finally:
        hole.close()
    assert took < 2.5 + procfanout.GRACE_S + 1.0
    assert [h.ok for h in got] == [True, False, True, False]
    assert all(h.error.startswith(("no answer within", "not reached")) for h in got if not h.ok), got
