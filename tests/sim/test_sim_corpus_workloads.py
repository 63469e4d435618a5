"""The workloads added for the validation corpus (tests/corpus), read back through the
independent reader: Cart3D, USM3D, Yu's dd/iozone, rank-0 I/O, strided reads with read-ahead
over-fetch, a slow OST; and the multi-node parameters of madbench, boito and ior.
"""

from __future__ import annotations

import pytest

from lustre_sim import SimClient

from kit import simreader as rd

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30


def client(tmp_path, name="t", osts=8, version="2.15.4", seed=1):
    return SimClient.create(tmp_path / name, version=version, filesystems=[("scratch", osts, 1)],
                            seed=seed, background=False)


def run(c, workload, **params):
    before = rd.snapshot(c.root)
    summary = c.run(workload, fs="scratch", **params)
    return before, rd.snapshot(c.root), summary


def hist(before, after, direction):
    """Pages-per-RPC delta as {RPC size in KiB: count} (4 KiB pages)."""
    h = rd.hist_delta(rd.fs_hist(before, "scratch", direction), rd.fs_hist(after, "scratch", direction))
    return {pages * 4: n for pages, n in h.items() if n}


def llite(before, after, name):
    a, b = before["llite"]["scratch"], after["llite"]["scratch"]
    return rd.count(b, name) - rd.count(a, name), (rd.total(b, name) or 0) - (rd.total(a, name) or 0)


def osc_per_ost(before, after, name):
    out = {}
    for inst, s in after["osc_stats"].items():
        s0 = before["osc_stats"].get(inst, {})
        out[inst] = (rd.count(s, name) - rd.count(s0, name), rd.total(s, name) - rd.total(s0, name))
    return out


def osc_sum(before, after, name):
    return sum(t for _, t in osc_per_ost(before, after, name).values())


def used_osts(before, after):
    return {i for i, (n, _) in osc_per_ost(before, after, "ost_write").items() if n} | \
           {i for i, (n, _) in osc_per_ost(before, after, "ost_read").items() if n}


def test_cart3d_has_no_1m_writes_and_reads_4gb_through_the_cache(tmp_path):
    before, after, s = run(client(tmp_path), "cart3d")
    r, w = hist(before, after, "read"), hist(before, after, "write")
    assert r == {4: 303, 1024: 1667}                   # 300 records + 3 one-page input files
    assert w == {4: 20, 512: 2048}                      # [SAINI] F.6: no 1024 KB writes
    assert llite(before, after, "read_bytes")[1] == 4_000_000_000
    assert osc_sum(before, after, "read_bytes") < 0.45 * 4_000_000_000     # the rest from the cache
    assert llite(before, after, "open")[0] < 60 and llite(before, after, "fsync")[0] == 20


def test_usm3d_reads_in_4k_and_1m_rpcs(tmp_path):
    before, after, s = run(client(tmp_path), "usm3d")
    r, w = hist(before, after, "read"), hist(before, after, "write")
    assert r[4] == 602 and r[1024] == 5722 and sum(r.values()) == 602 + 5722 + 1
    assert w[1024] == 954 and sum(w.values()) <= 956
    assert llite(before, after, "open")[0] == 37
    assert s["read_bytes"] > 6e9 and s["write_bytes"] > 1e9


def test_overflow_4k_reads_grow_with_cores(tmp_path):
    c = client(tmp_path)
    before, after, _ = run(c, "overflow", ranks=128, small_reads=2010)
    r = hist(before, after, "read")
    assert r[4] == 2016 and r[1024] == 1860           # [SAINI] F.5 at 128 cores
    assert llite(before, after, "open")[0] < 1000


@pytest.mark.parametrize("test,calls,record", [("dd", 4 * MiB, 512), ("iozone", 65536, 64 * KiB)])
def test_yu_stays_1m_rpcs_over_64_osts(tmp_path, test, calls, record):
    before, after, s = run(client(tmp_path, osts=64, version="2.12.9"), "yu", test=test)
    passes = 1 if test == "dd" else 2
    assert llite(before, after, "write_bytes") == (passes * calls, passes * calls * record)
    assert llite(before, after, "read_bytes") == (passes * calls, passes * calls * record)
    assert set(hist(before, after, "write")) == set(hist(before, after, "read")) == {1024}
    assert len(used_osts(before, after)) == 64
    # the reread comes from the cache: one read of the file from the OSTs
    assert osc_sum(before, after, "read_bytes") == calls * record


def test_strided_read_over_fetches_16x(tmp_path):
    before, after, s = run(client(tmp_path), "strided-read")
    assert llite(before, after, "read_bytes") == (2048 * 4, 2048 * 64 * KiB)
    assert osc_sum(before, after, "read_bytes") == 2048 * MiB
    assert hist(before, after, "read") == {1024: 2048}
    # field 15 starts 64 KiB before the chunk end: read-ahead has nothing more to fetch
    before, after, s = run(client(tmp_path, "t2"), "strided-read", field=15)
    assert osc_sum(before, after, "read_bytes") == llite(before, after, "read_bytes")[1]


def test_rank0_root_moves_everything(tmp_path):
    root, worker = client(tmp_path, "root"), client(tmp_path, "worker", seed=2)
    b0, a0, s0 = run(root, "rank0", role="root", ranks=12, input_mib=64, output_mib=256)
    b1, a1, s1 = run(worker, "rank0", role="worker", ranks=12)
    assert s0["write_bytes"] == 256 * MiB and s0["read_bytes"] > 64 * MiB
    assert s1["write_bytes"] == 0 and s1["read_bytes"] == 12 * (800 + 1500)
    assert llite(b1, a1, "open")[0] == 24 and hist(b1, a1, "read") == {4: 2}   # 2 namelists


def test_slow_ost_adds_the_delay_to_every_rpc_of_that_ost(tmp_path):
    """Same seed, same job: with and without the slow OST, only OST0003's waits differ, by
    exactly delay per RPC of the job in sum and sumsq (the pings after it are not delayed)."""
    fast, slow = client(tmp_path, "fast"), client(tmp_path, "slow")
    bf, af, _ = run(fast, "slow-ost", delay_ms=0.0)
    bs, as_, _ = run(slow, "slow-ost", delay_ms=30.0)
    d = 30_000
    for inst in af["osc_stats"]:
        for name in ("req_waittime", "ost_read", "ost_write", "ldlm_enqueue", "ost_sync"):
            f0, s0 = bf["osc_stats"][inst].get(name), bs["osc_stats"][inst].get(name)
            f1, s1 = af["osc_stats"][inst][name], as_["osc_stats"][inst][name]
            n = f1["count"] - (f0["count"] if f0 else 0)
            assert s1["count"] - (s0["count"] if s0 else 0) == n > 0, (inst, name)
            dsum_f = f1["sum"] - (f0["sum"] if f0 else 0)
            dsum_s = s1["sum"] - (s0["sum"] if s0 else 0)
            if inst.endswith("OST0003"):
                delayed = dsum_f
                if name == "req_waittime":            # minus the pings at the end of the run
                    ping0, ping1 = bf["osc_stats"][inst].get("obd_ping"), af["osc_stats"][inst]["obd_ping"]
                    n -= ping1["count"] - (ping0["count"] if ping0 else 0)
                    delayed -= ping1["sum"] - (ping0["sum"] if ping0 else 0)
                assert dsum_s == dsum_f + n * d, (inst, name)
                assert (s1["sumsq"] - f1["sumsq"]) % (1 << 64) == (2 * d * delayed + n * d * d) % (1 << 64)
                assert s1["max"] >= d
            else:
                assert (dsum_s, s1["sumsq"]) == (dsum_f, f1["sumsq"]), (inst, name)
    assert hist(bs, as_, "read") == hist(bf, af, "read") == {1024: 2048}


def test_multi_node_shared_file_has_one_layout(tmp_path):
    """madbench/boito over 4 nodes: the shared file sits on the same OST on every node, and
    per-process files continue the round-robin from node to node."""
    nodes = [client(tmp_path, f"n{i}", osts=16, seed=i + 1) for i in range(4)]
    ost_sets = []
    for i, c in enumerate(nodes):
        b, a, _ = run(c, "madbench", npix=2000, nbin=2, procs=16, node_procs=4, first_proc=4 * i,
                      shared=True, stripe_count=1)
        ost_sets.append(used_osts(b, a))
    assert all(len(s) == 1 for s in ost_sets) and len(set.union(*ost_sets)) == 1
    unique = set()
    for i, c in enumerate(nodes):
        b, a, _ = run(c, "madbench", npix=2000, nbin=2, procs=16, node_procs=4, first_proc=4 * i)
        mine = used_osts(b, a)
        assert len(mine) == 4 and not mine & unique
        unique |= mine
    assert len(unique) == 16
    for i, c in enumerate(nodes):
        b, a, _ = run(c, "boito", pattern="mfwa", procs=16, node_ranks=4, first_rank=4 * i,
                      per_proc=MiB, nseg=1, stripe_count=1)
        assert len(used_osts(b, a)) == 4


def test_ior_elapsed(tmp_path):
    c = client(tmp_path)
    assert c.run("ior", fs="scratch", tasks=2, block_size=4 * MiB)["elapsed_s"] == 1.0   # as before
    assert c.run("ior", fs="scratch", tasks=2, block_size=4 * MiB, elapsed=300)["elapsed_s"] == 300
    with pytest.raises(ValueError, match="first_task"):
        c.run("ior", fs="scratch", file_per_process=False, first_task=4)
