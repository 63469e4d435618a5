"""A cleared RPC histogram end to end: four simulated Lustre 2.10 clients (rpc_stats carry no start
time there), each in a private pmcd with the real agent; on one of them `lctl set_param
osc.*.rpc_stats=clear` during the job, then one OSC's 1 MiB RPCs climb past the filesystem's old
1M count while every other bucket stays below its old value. The agent exports every bucket to
64 MiB, so the histogram's last buckets are 0 at both ends: the clear must still be seen."""

from __future__ import annotations

from lustre_jobreport import config
from lustre_jobreport.report import view as render, document as report
from lustre_jobreport.acquire import snapshot
from lustre_sim import SimClient
from kit.privpmcd import PrivatePmcd

HIST = ("lustreclient.fs.rpc.read", "lustreclient.fs.rpc.write")
CLEARED = "node2"


def bucket_values(snap, metric: str, host: str) -> dict[str, int]:
    return {inst.split(":", 1)[1]: int(v) for inst, v in snap.instance_values(metric, host).items()}


def test_a_cleared_histogram_on_one_host_of_four_is_left_out_and_said_never_wrapped(tmp_path):
    clients = [SimClient.create(tmp_path / f"tree{i}", version="2.10.8", filesystems=[("scratch", 4, 1)], seed=i + 1)
               for i in range(4)]
    pmcds = [PrivatePmcd(tmp_path / f"pmcd{i}", tmp_path / f"tree{i}") for i in range(4)]
    try:
        for p in pmcds:
            p.start()
        targets = [snapshot.HostTarget(f"node{i}", p.spec) for i, p in enumerate(pmcds)]
        begin = snapshot.take(targets, connect_timeout_s=5, fetch_timeout_s=20)
        old_1m = bucket_values(begin, HIST[0], CLEARED)["1M"]
        for c in clients:
            c.run("overflow", fs="scratch")
        clients[2].fault("clear", fs="scratch", what="rpc_stats")
        clients[2].run("ior", fs="scratch", tasks=1, block_size=(old_1m + 64) << 20, stripe_count=1)
        end = snapshot.take(targets, connect_timeout_s=5, fetch_timeout_s=20)
    finally:
        for p in pmcds:
            p.stop()

    # the case as described: 1M climbed past, other buckets fell, the 64M bucket 0 at both ends
    for metric in HIST:
        before, after = bucket_values(begin, metric, CLEARED), bucket_values(end, metric, CLEARED)
        assert after["1M"] >= before["1M"] and before["64M"] == after["64M"] == 0
        assert any(after[b] < before[b] for b in before)

    doc = report.build(begin, end, config.Config(), job_id="1", user="u")
    assert [(q["id"], q["host"], q["fs"]) for q in doc["data_quality"] if q["id"] != "SHORT_JOB"] == \
        [("COUNTER_RESET", CLEARED, "scratch")]
    assert doc["job"]["hosts_incomplete"] == {CLEARED: ["scratch"]}
    for metric, direction in zip(HIST, ("read", "write")):
        want = {size: sum(bucket_values(end, metric, h)[size] - bucket_values(begin, metric, h)[size]
                          for h in ("node0", "node1", "node3")) for size in bucket_values(end, metric, CLEARED)}
        assert doc["filesystems"]["scratch"]["rpc"][direction] == want
    text = render.render_text(doc)
    assert "18E" not in text and "osc rpc_stats of scratch on node2 were cleared" in text
