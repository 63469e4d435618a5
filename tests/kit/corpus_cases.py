"""The cases of the validation corpus: reference workloads of notes/io-findings.md §3 (and the
faults of a real filesystem) with the flags each must fire and must not fire.

`fires` is the exact set (the test asserts equality, so anything else firing fails);
`must_not` names the flags a reader could expect, or that sit near their thresholds, and says
that they stay quiet. Key numbers come from the papers where they give them; where a paper
gives only a plot, the workload's docstring (sim/lustre_sim/workloads.py) says which number is
ours.
"""

from __future__ import annotations

from kit.corpuskit import (GiB, KiB, MiB, Case, Cluster, Fault, Run, flag, fsd, on_all,
                       ost_bytes, rpcs)

TABLE_I_READ = {"4K": 12243, "8K": 264, "16K": 56, "32K": 81, "64K": 242, "128K": 269,
                "256K": 543, "512K": 1812, "1M": 26572}
TABLE_I_WRITE = {"4K": 393, "8K": 62, "16K": 198, "32K": 155, "64K": 96, "128K": 74,
                 "256K": 199, "512K": 595, "1M": 52606}


# ----------------------------------------------------------------------------------------------
# key numbers per case

def check_enzo(d):
    assert rpcs(d, "read") == TABLE_I_READ and rpcs(d, "write") == TABLE_I_WRITE
    ops = fsd(d)["ops"]
    assert (ops["open"], ops["close"], ops["getattr"], ops["statfs"]) == (5303, 5769, 12460, 0)
    assert (fsd(d)["read_bytes"], fsd(d)["write_bytes"]) == (54_000_000_000, 56_000_000_000)
    e = flag(d, "SMALL_RPC_READ")["evidence"]
    assert (e["small_rpcs"], e["rpcs"]) == (12243 + 264 + 56, 42082)       # 29.85 %, io-findings §1.5
    assert flag(d, "OPEN_CLOSE_STORM")["evidence"]["opens"] == 5303
    assert flag(d, "STAT_STORM")["evidence"] == {"getattr": 12460, "opens": 5303}   # 2.35 per open


def check_mitgcm(d):
    f = fsd(d)
    assert f["ops"]["open"] == 240 * 8 + 2                 # 8 files per rank, 240 ranks
    assert rpcs(d, "read") == {"4K": 64 * 256}             # 64 MiB grid in 4 KiB records
    assert rpcs(d, "write")["1M"] >= 8192                  # the 8 GB checkpoint
    assert flag(d, "OPEN_CLOSE_STORM")["evidence"]["opens_per_gib"] > 20


def check_overflow(d):
    f = fsd(d)
    assert f["ops"]["open"] == f["ops"]["close"] == 40 and f["ops"]["fsync"] == 25
    assert rpcs(d, "read")["4K"] == 264 and rpcs(d, "read")["1M"] == 1860   # F.5, 8 cores
    assert rpcs(d, "write")["4K"] == 25 and rpcs(d, "write")["1M"] >= 1550


def check_overflow128(d):
    assert rpcs(d, "read")["4K"] == 2016 and rpcs(d, "read")["1M"] == 1860  # F.5, 128 cores
    e = flag(d, "SMALL_RPC_READ")["evidence"]
    assert e["small_rpcs"] >= 2016 and e["share"] > 0.4
    assert fsd(d)["ops"]["open"] < 1000                    # more opens with cores, no storm


def check_cart3d(d):
    f = fsd(d)
    r, w = rpcs(d, "read"), rpcs(d, "write")
    assert r["1M"] == 1667 and "1M" not in w               # F.6: 1662-1672 1M reads, no 1M writes
    assert w["512K"] == 2048 and w["4K"] == 20 and r["4K"] == 303
    assert f["ops"]["open"] < 60 and f["read_bytes"] == 4_000_000_000
    assert 1.0 * GiB <= f["write_bytes"] < 1.1 * GiB


def check_usm3d(d):
    f = fsd(d)
    r, w = rpcs(d, "read"), rpcs(d, "write")
    assert r["4K"] == 602 and r["1M"] >= 5700 and w["1M"] >= 950
    assert f["ops"]["open"] < 60
    assert (f["read_bytes"], f["write_bytes"]) > (6_000_000_000, 1_000_000_000)


def check_ior(d, tasks=8, hosts=1):
    f = fsd(d)
    n = 256 * tasks * hosts
    assert rpcs(d, "read") == {"1M": n} and rpcs(d, "write") == {"1M": n}
    assert f["ops"]["open"] == 2 * tasks * hosts
    assert f["read_calls"] == f["write_calls"] == n


def check_ior_4nodes(d):
    check_ior(d, tasks=4, hosts=4)
    assert len(fsd(d)["hosts"]) == 4 and fsd(d)["spread"]["min"] == fsd(d)["spread"]["max"]
    assert set(ost_bytes(d).values()) == {2 * 512 * MiB}   # 16 files round-robin: 2 per OST, 256 MiB w + r


def check_strided(d):
    e = flag(d, "READAHEAD_WASTE")["evidence"]
    assert e == {"osc_read_bytes": 2048 * MiB, "llite_read_bytes": 2048 * 64 * KiB, "hosts_left_out": 0}   # 16x
    assert rpcs(d, "read") == {"1M": 2048}


def check_slow_ost(d):
    e = flag(d, "SLOW_OST")["evidence"]
    assert list(e["slow"]) == ["OST0003"]
    assert e["slow"]["OST0003"] > 25_000 and e["median_us"] < 2_000   # 30 ms + ~1.3 ms, pings dilute
    assert rpcs(d, "read") == {"1M": 2048} and rpcs(d, "write") == {"1M": 2048}


def check_yu_dd(d):
    f = fsd(d)
    assert f["write_calls"] == f["read_calls"] == 4 * 1024 * 1024      # dd count=4M, bs=512
    assert f["write_bytes"] == f["read_bytes"] == 2 * GiB
    assert len(f["osts"]) == 64 and rpcs(d, "write") == {"1M": 2048}   # aggregated all the same
    assert flag(d, "TINY_CALLS")["evidence"]["mean_bytes"] == 512.0


def check_yu_iozone(d):
    f = fsd(d)
    assert len(f["osts"]) == 64 and f["write_calls"] == 2 * 65536     # write + rewrite, 64 KiB
    assert rpcs(d, "write") == {"1M": 8192} and rpcs(d, "read") == {"1M": 4096}


def check_postmark_wide(d):
    f = fsd(d)
    assert len(f["osts"]) == 12 and f["ops"]["open"] > 3000
    e = flag(d, "OVER_STRIPED_SMALL_IO")["evidence"]
    assert e["osts"] == 12 and e["mean_rpc_bytes"] < 64 * KiB
    assert rpcs(d, "write")["64K"] > 0.8 * sum(rpcs(d, "write").values())


def check_postmark_c1(d):
    f = fsd(d)
    moved = sum(ost_bytes(d).values())
    n = sum(v["read_rpcs"] + v["write_rpcs"] for v in f["osts"].values())
    assert len(f["osts"]) == 12 and moved / n > 256 * KiB                 # one RPC per small file


def _boito_check(read: dict | None = None, write: dict | None = None, calls: int | None = None,
                 procs: int = 16):
    def check(d):
        f = fsd(d)
        if read is not None:
            assert rpcs(d, "read") == read
        if write is not None:
            assert rpcs(d, "write") == write
        if calls is not None:
            assert f["read_calls"] == f["write_calls"] == calls
        assert len(f["hosts"]) == 4 and f["spread"]["min"] == f["spread"]["max"]   # 4 nodes alike
        assert f["ops"]["open"] == procs * 2               # every rank opens once per phase
    return check


def check_boito_tiny(d):
    _boito_check(read={"1M": 256}, write={"1M": 256}, calls=16 * 256 * 1024)(d)
    assert flag(d, "TINY_CALLS")["evidence"]["mean_bytes"] == 64.0


def check_madbench(osts: int, top_share: float, hosts: int = 4):
    def check(d):
        f = fsd(d)
        moved = ost_bytes(d)
        total = 4 * 8 * 8 * 12500 ** 2            # 2*NBIN writes + 2*NBIN reads of 8 NPIX^2 / P
        assert f["read_bytes"] + f["write_bytes"] == total
        # a shared file: a node's last read of a region reads ahead into the next node's region
        assert 0 <= sum(moved.values()) - total < 16 * MiB
        assert len(moved) == osts and abs(max(moved.values()) / total - top_share) < 0.001
        assert len(f["hosts"]) == hosts and f["spread"]["min"] == f["spread"]["max"]
        assert rpcs(d, "write")["1M"] > 0.99 * sum(rpcs(d, "write").values())
    return check


def check_rank0(output_mib: int):
    def check(d):
        e = flag(d, "RANK0_IO")["evidence"]
        assert e["host"] == "node0" and e["hosts"] == 4
        assert e["host_bytes"] / e["bytes"] > 0.999
        assert fsd(d)["write_bytes"] == output_mib * MiB
    return check


def check_rank0_ckpt(d):
    check_rank0(12288)(d)
    e = flag(d, "UNDER_STRIPED")["evidence"]
    assert e["top_ost_bytes"] / e["bytes"] > 0.9 and e["ost_count"] == 8   # 12 of 13 GiB at least


def check_evict(target: str, state: str, reconnects: int, runs: int):
    def check(d):
        assert fsd(d)["trouble"] == [{"host": "node1", "target": f"scratch-{target}",
                                      "reconnects": reconnects, "state": state}]
        assert flag(d, "FS_TROUBLE")["evidence"]["targets"] == fsd(d)["trouble"]
        check_ior(d, tasks=8, hosts=runs)         # the I/O itself is whole (IOR ran `runs` times)
    return check


# ----------------------------------------------------------------------------------------------
# the clusters

def boito(pattern, per_proc, nseg, ppn=4):
    """Boito's classes on 4 nodes, 64 KB stripes over the 4 OSTs (T.1): the -SMP classes with 4
    procs per node, or ppn=1 (one process per node, as the 40-node classes)."""
    return lambda i, n: [Run("boito", dict(pattern=pattern, procs=ppn * n, node_ranks=ppn,
                                           first_rank=ppn * i, per_proc=per_proc, nseg=nseg,
                                           stripe_size=64 * KiB, stripe_count=4))]


def madbench(shared, stripe_count):
    """MADbench2, 16 processes as 4 per node, NPIX 12,500, NBIN 8 (T.1: 78 MB per call)."""
    return lambda i, n: [Run("madbench", dict(npix=12500, nbin=8, procs=4 * n, node_procs=4,
                                              first_proc=4 * i, shared=shared,
                                              stripe_count=stripe_count))]


def rank0(output_mib):
    return lambda i, n: [Run("rank0", dict(role="root" if i == 0 else "worker", ranks=12,
                                           input_mib=1024, output_mib=output_mib))]


IOR_FPP = Run("ior", dict(tasks=8, block_size=256 * MiB, transfer_size=MiB, elapsed=300))

PLEIADES = Cluster("pleiades", 1, (("scratch", 8, 1), ("home", 4, 1)), "2.15.4", (
    Case("enzo", "`enzo`: Table I/II exactly (54 GB read, 56 GB written)", on_all(Run("enzo")),
         fires=("SMALL_RPC_READ", "OPEN_CLOSE_STORM", "STAT_STORM"),
         must_not=("SMALL_RPC_WRITE", "TINY_CALLS", "READAHEAD_WASTE", "UNDER_STRIPED",
                   "METADATA_RATE", "FSYNC_STORM", "STATFS_STORM"),
         source="§1.2, §1.3, §1.5 [SAINI] T.I, T.II", check=check_enzo,
         note="STAT_STORM (12,460 stats, 2.35 per open) is our rule; the paper lists the counts "
              "without calling them a problem"),
    Case("mitgcm", "`mitgcm grid_mib=64`: grid in 4 KiB records, 8 GB checkpoint, 1,920 per-rank files",
         on_all(Run("mitgcm", dict(grid_mib=64))),
         fires=("SMALL_RPC_READ", "OPEN_CLOSE_STORM"),
         must_not=("SMALL_RPC_WRITE", "STAT_STORM", "TINY_CALLS", "UNDER_STRIPED", "METADATA_RATE"),
         source="§1.6 F.8, §2.6 [SAINI]", check=check_mitgcm),
    Case("overflow", "`overflow`: 8 cores, rank 0 I/O, 40 opens", on_all(Run("overflow")),
         fires=(), must_not=("SMALL_RPC_READ", "SMALL_RPC_WRITE", "OPEN_CLOSE_STORM", "FSYNC_STORM",
                             "STATFS_STORM", "UNDER_STRIPED"),
         source="§1.6 F.5, §3.3 [SAINI]", check=check_overflow),
    Case("overflow-128", "`overflow ranks=128 small_reads=2010`: F.5 at 128 cores",
         on_all(Run("overflow", dict(ranks=128, small_reads=2010))),
         fires=("SMALL_RPC_READ",), must_not=("SMALL_RPC_WRITE", "OPEN_CLOSE_STORM", "METADATA_RATE"),
         source="§1.6 F.5 [SAINI]", check=check_overflow128,
         note="2,016 4K read RPCs are 50% of the reads: the growth F.5 shows with core count"),
    Case("cart3d", "`cart3d`: 8 cores, 1,667 1M reads, 4 GB read via the page cache, no 1M writes",
         on_all(Run("cart3d")),
         fires=(), must_not=("SMALL_RPC_READ", "SMALL_RPC_WRITE", "OPEN_CLOSE_STORM",
                             "READAHEAD_WASTE", "FSYNC_STORM"),
         source="§1.6 F.2, F.6 [SAINI]", check=check_cart3d),
    Case("usm3d", "`usm3d`: 32 cores, 6 GB grid in 1M + 4K reads, 1 GB solution in 1M writes",
         on_all(Run("usm3d")),
         fires=(), must_not=("SMALL_RPC_READ", "SMALL_RPC_WRITE", "OPEN_CLOSE_STORM", "UNDER_STRIPED"),
         source="§1.6 F.2, F.7 [SAINI]", check=check_usm3d),
    Case("ior-fpp", "`ior`: 8 tasks file-per-process, 256 MiB blocks in 1 MiB transfers",
         on_all(IOR_FPP),
         fires=(), must_not=("SMALL_RPC_READ", "SMALL_RPC_WRITE", "TINY_CALLS", "UNDER_STRIPED",
                             "FSYNC_STORM", "SLOW_OST"),
         source="§1.4 T.III, §3.3 [SAINI]", check=check_ior),
    Case("strided-read", "`strided-read`: one 64 KiB field of 16 per 1 MiB record, 2,048 records",
         on_all(Run("strided-read")),
         fires=("READAHEAD_WASTE",), must_not=("SMALL_RPC_READ", "TINY_CALLS", "OVER_STRIPED_SMALL_IO"),
         source="§2.2 [BOITO] §3, §5.2", check=check_strided),
    Case("slow-ost", "`slow-ost`: the IOR job above, OST0003 answering 30 ms late",
         on_all(Run("slow-ost")),
         fires=("SLOW_OST",), must_not=("FS_TROUBLE", "SMALL_RPC_READ", "SMALL_RPC_WRITE", "UNDER_STRIPED"),
         source="DESIGN §4 (\"not your code\")", check=check_slow_ost),
))

YU = Cluster("yu", 1, (("scratch", 64, 1),), "2.12.9", (
    Case("yu-dd", "`yu test=dd`: 2 GiB in 512 B writes and reads, striped over all 64 OSTs",
         on_all(Run("yu", dict(test="dd"))),
         fires=("TINY_CALLS",), must_not=("OVER_STRIPED_SMALL_IO", "SMALL_RPC_WRITE", "SMALL_RPC_READ"),
         source="§2.4, §3.4 [YU] §2.2 T.1", check=check_yu_dd,
         note="the client still sends 1 MiB RPCs, so the width itself has no flag"),
    Case("yu-iozone", "`yu test=iozone`: 4 GiB in 64 KiB records over 64 OSTs",
         on_all(Run("yu", dict(test="iozone"))),
         fires=(), must_not=("OVER_STRIPED_SMALL_IO", "TINY_CALLS", "SMALL_RPC_WRITE"),
         source="§2.4, §3.4 [YU] §2.2 T.1", check=check_yu_iozone,
         note="gap: Yu lost bandwidth beyond 4-8 OSTs, but the RPCs are 1 MiB and no counter "
              "shows per-OST protocol cost"),
))

SEBEPOU = Cluster("sebepou", 1, (("scratch", 12, 1),), "2.15.4", (
    Case("postmark-wide", "`postmark config=c files=2000 transactions=1000 stripe_count=-1 "
                          "stripe_size=64K`: small files in 64 KB stripes over all 12 OSTs",
         on_all(Run("postmark", dict(config="c", files=2000, transactions=1000, stripe_count=-1,
                                     stripe_size=64 * KiB))),
         fires=("OPEN_CLOSE_STORM", "OVER_STRIPED_SMALL_IO"),
         must_not=("SMALL_RPC_WRITE", "STAT_STORM", "METADATA_RATE", "TINY_CALLS"),
         source="§2.6, §3.5 [SEBEPOU] T.3; §2.4 [YU] §3.2", check=check_postmark_wide),
    Case("postmark-c1", "the same PostMark run with stripe count 1",
         on_all(Run("postmark", dict(config="c", files=2000, transactions=1000, stripe_count=1))),
         fires=("OPEN_CLOSE_STORM",),
         must_not=("OVER_STRIPED_SMALL_IO", "SMALL_RPC_WRITE", "STAT_STORM", "METADATA_RATE"),
         source="§2.4 [SAINI] §VI.C, [YU] §3.2", check=check_postmark_c1),
))

BOITO = Cluster("boito-smp", 4, (("scratch", 4, 1),), "2.10.8", (
    Case("boito-sfsa-64M", "`boito` SFSA non-strided, 4 procs/node, 64 MB segments",
         boito("sfsa-nonstrided", 256 * MiB, 4),
         fires=(), must_not=("SMALL_RPC_READ", "SMALL_RPC_WRITE", "TINY_CALLS", "RANK0_IO", "UNDER_STRIPED"),
         source="§2.3, §3.1 [BOITO] T.1-T.3", check=_boito_check({"1M": 4096}, {"1M": 4096}, 64)),
    Case("boito-mfwa-64M", "`boito` MFWA (file per process), 4 procs/node, 64 MB segments",
         boito("mfwa", 256 * MiB, 4),
         fires=(), must_not=("SMALL_RPC_READ", "SMALL_RPC_WRITE", "TINY_CALLS", "RANK0_IO", "UNDER_STRIPED"),
         source="§2.3, §3.1 [BOITO] T.1-T.3", check=_boito_check({"1M": 4096}, {"1M": 4096}, 64),
         note="same counters as the shared file: SSF vs FPP is not visible, and at 16 clients "
              "Boito found them within ~15%"),
    Case("boito-strided-8K", "`boito` SFSA strided, 4 procs/node, 8 KiB segments",
         boito("sfsa-strided", 8 * MiB, 1024),
         fires=("SMALL_RPC_READ",), must_not=("SMALL_RPC_WRITE", "READAHEAD_WASTE", "TINY_CALLS"),
         source="§2.1, §2.5, §3.1 [BOITO] §5.2", check=_boito_check({"8K": 16384}, {"32K": 4096}, 16384),
         note="the 4 ranks of a node write adjacent 8 KiB pieces, which the node's page cache "
              "merges into 32K RPCs: only the reads stay small"),
    Case("boito-strided-8K-1ppn", "`boito` SFSA strided, 1 proc/node, 8 KiB segments",
         boito("sfsa-strided", 8 * MiB, 1024, ppn=1),
         fires=("SMALL_RPC_READ", "SMALL_RPC_WRITE"), must_not=("READAHEAD_WASTE", "TINY_CALLS"),
         source="§2.1, §3.1 [BOITO] §5.2 (strided: up to −77% write, −57% read)",
         check=_boito_check({"8K": 4096}, {"8K": 4096}, 4096, procs=4),
         note="one writer per node: nothing to merge, every 8 KiB piece is its own RPC"),
    Case("boito-mfwa-64B", "`boito` MFWA, 64 B requests (256 Ki per process)",
         boito("mfwa", 16 * MiB, 256 * 1024),
         fires=("TINY_CALLS",), must_not=("SMALL_RPC_READ", "SMALL_RPC_WRITE"),
         source="§2.1 [BOITO] §5.2 (−46% per halving below 128 B)", check=check_boito_tiny),
    Case("boito-sfsa-1K", "`boito` SFSA non-strided, 1 KiB requests",
         boito("sfsa-nonstrided", 16 * MiB, 16 * 1024),
         fires=("TINY_CALLS",), must_not=("SMALL_RPC_READ", "SMALL_RPC_WRITE"),
         source="§2.1 [BOITO] §5.2 (shared-file writes −78% at 2 KB)",
         check=_boito_check({"1M": 256}, {"1M": 256}, 16 * 16 * 1024)),
    Case("boito-mfwa-1K", "`boito` MFWA, 1 KiB requests",
         boito("mfwa", 16 * MiB, 16 * 1024),
         fires=("TINY_CALLS",), must_not=("SMALL_RPC_READ", "SMALL_RPC_WRITE"),
         source="§2.1 [BOITO] §5.2 (file per process flat down to 128 B)",
         check=_boito_check({"1M": 256}, {"1M": 256}, 16 * 16 * 1024),
         note="calibration: Boito measured no loss here; the counters cannot tell a per-process "
              "file from a shared one"),
))

MADBENCH = Cluster("madbench", 4, (("scratch", 96, 1),), "2.15.4", (
    Case("madbench-shared-c1", "`madbench shared=true`, stripe count 1 (the Pleiades default)",
         madbench(True, 1),
         fires=("UNDER_STRIPED",), must_not=("RANK0_IO", "SMALL_RPC_READ", "SMALL_RPC_WRITE",
                                             "OVER_STRIPED_SMALL_IO"),
         source="§2.3, §3.2 [BORRILL] §4.1; [SAINI] §VIII.D", check=check_madbench(1, 1.0)),
    Case("madbench-shared-c8", "`madbench shared=true`, stripe count 8 of 96 (Jaguar's default)",
         madbench(True, 8),
         fires=(), must_not=("RANK0_IO", "SMALL_RPC_READ", "SMALL_RPC_WRITE", "OVER_STRIPED_SMALL_IO"),
         source="§2.3, §3.2 [BORRILL] §4.1", check=check_madbench(8, 0.125),
         note="gap: Borrill's flat shared-file case; each OST carries 12.5%, under UNDER_STRIPED's 80%"),
    Case("madbench-unique", "`madbench shared=false` (one file per process, stripe count 1)",
         madbench(False, None),
         fires=(), must_not=("UNDER_STRIPED", "RANK0_IO", "OVER_STRIPED_SMALL_IO", "OPEN_CLOSE_STORM"),
         source="§2.3, §3.2 [BORRILL] §4.1", check=check_madbench(16, 1 / 16)),
))

RANK0 = Cluster("rank0", 4, (("scratch", 8, 1),), "2.10.8", (
    Case("ior-fpp-4nodes", "`ior` on every node: 4 tasks each, file per process, 1 MiB transfers",
         lambda i, n: [Run("ior", dict(tasks=4, first_task=4 * i, block_size=256 * MiB,
                                       transfer_size=MiB, elapsed=300))],
         fires=(), must_not=("RANK0_IO", "UNDER_STRIPED", "SMALL_RPC_READ", "SMALL_RPC_WRITE"),
         source="§1.4 T.III, §3.3 [SAINI]", check=check_ior_4nodes),
    Case("rank0-io", "`rank0`: node0 reads 1 GiB and writes 4 GiB, 3 nodes only read namelists",
         rank0(4096),
         fires=("RANK0_IO",), must_not=("UNDER_STRIPED", "OPEN_CLOSE_STORM", "METADATA_RATE"),
         source="§2.10 [SAINI] §II, §VIII.A.1", check=check_rank0(4096)),
    Case("rank0-ckpt-12G", "`rank0 output_mib=12288`: a 12 GiB checkpoint at stripe count 1",
         rank0(12288),
         fires=("RANK0_IO", "UNDER_STRIPED"), must_not=("OPEN_CLOSE_STORM", "OVER_STRIPED_SMALL_IO"),
         source="§2.4, §2.10 [SAINI] §VI.C, §VIII.A.1, §VIII.C.2", check=check_rank0_ckpt),
))

EVICTION = Cluster("eviction", 2, (("scratch", 4, 1),), "2.12.9", (
    Case("evict-reconnect", "`ior` on both nodes; OST0002 evicts node1 between two IOR runs",
         lambda i, n: [IOR_FPP] if i == 0 else [IOR_FPP, Fault("evict", dict(target="OST0002")), IOR_FPP],
         fires=("FS_TROUBLE",), must_not=("SLOW_OST", "SMALL_RPC_READ", "SMALL_RPC_WRITE"),
         source="DESIGN §4 (\"not your code\")", check=check_evict("OST0002", "FULL", 1, runs=3),
         walltime=600),
    Case("evict-held", "`ior` on both nodes; OST0001 evicts node1 at the end, no reconnect",
         lambda i, n: [IOR_FPP] if i == 0 else [IOR_FPP, Fault("evict", dict(target="OST0001", hold=True))],
         fires=("FS_TROUBLE",), must_not=("SLOW_OST", "SMALL_RPC_READ", "SMALL_RPC_WRITE"),
         source="DESIGN §4", check=check_evict("OST0001", "EVICTED", 1, runs=2)),
))

CLUSTERS = (PLEIADES, YU, SEBEPOU, BOITO, MADBENCH, RANK0, EVICTION)
CASES = {c.id: (cl, c) for cl in CLUSTERS for c in cl.cases}
