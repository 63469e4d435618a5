"""What the settings and the quirks do to the counters, read back through simreader (the tree),
and the bulk RPC engine against a brute-force one.

* read-ahead: max_read_ahead_mb=0 -> every call its own RPC; a window below the RPC size
  shrinks the RPCs.
* hybrid I/O (2.15.64+): switched calls, their counters, the RPCs of direct I/O, latency.
* quirks ra-8k-rpcs, ra-split-rpcs=F, lu15274, poor-write-aggregation: each changes what its
  ticket says and nothing else (same seed, same client, with and without).
"""

from __future__ import annotations

import math
import random
import time
from fractions import Fraction

import pytest

from lustre_sim import SimClient, formats, workloads
from lustre_sim.model import Client, ap_log2_counts
from lustre_sim.version import profile

from kit import simreader as rd

KiB, MiB = 1 << 10, 1 << 20


def client(tmp_path, version="2.15.4", name="t", osts=4, **kw):
    kw.setdefault("background", False)
    return SimClient.create(tmp_path / name, version=version, filesystems=[("scratch", osts, 1)],
                            seed=11, clock=1_700_000_000, **kw)


def nz(h: dict) -> dict:
    return {k: v for k, v in h.items() if v}


def job(c: SimClient, workload: str, **params) -> dict:
    """A job through the tree: deltas of llite, read_ahead_stats, and the fs histograms."""
    b = rd.snapshot(c.root)
    rab = ra_stats(c)
    summary = c.run(workload, fs="scratch", **params)
    a = rd.snapshot(c.root)
    raa = ra_stats(c)
    ll = {}
    for k in set(a["llite"]["scratch"]) | set(b["llite"]["scratch"]):
        if k == "mount_id":
            continue
        x, y = b["llite"]["scratch"].get(k), a["llite"]["scratch"].get(k)
        cnt = (y["count"] if y else 0) - (x["count"] if x else 0)
        sm = ((y["sum"] or 0) if y else 0) - ((x["sum"] or 0) if x else 0)
        ll[k] = (cnt, sm)
    return {"summary": summary, "ll": {k: v for k, v in ll.items() if v != (0, 0)},
            "ra": {k: raa.get(k, 0) - rab.get(k, 0) for k in set(raa) | set(rab)
                   if raa.get(k, 0) != rab.get(k, 0)},
            **{f"{d}_{s}": nz(rd.hist_delta(rd.fs_hist(b, "scratch", d, s), rd.fs_hist(a, "scratch", d, s)))
               for d in ("read", "write") for s in ("pages", "rif", "offset")}}


def ra_stats(c: SimClient) -> dict:
    p = rd.glob(c.root, "llite/scratch-*/read_ahead_stats")
    return {k: v["count"] for k, v in rd.parse_stats(p[0].read_text()).items()}


# ----------------------------------------------------------------------------------------------
# read-ahead settings

def test_max_read_ahead_mb_0_sends_each_call_alone(tmp_path):
    c = client(tmp_path)
    good = job(c, "seqread", size=64 * MiB, call=64 * KiB)
    c.set(max_read_ahead_mb=0)
    off = job(c, "seqread", size=64 * MiB, call=64 * KiB)
    assert good["read_pages"] == {256: 64}
    assert off["read_pages"] == {16: 1024}                  # a 64 KiB RPC per 64 KiB call
    assert off["read_rif"] == {1: 1024}                     # each call waits for its own RPC
    assert off["ll"]["read_bytes"] == good["ll"]["read_bytes"] == (1024, 64 * MiB)
    assert off["ra"]["misses"] == 64 * MiB // 4096 and "readahead_to_eof" not in off["ra"]
    # the same through readahead=False, and for calls that are not page-aligned
    c.set(max_read_ahead_mb=1024)
    assert job(c, "seqread", size=64 * MiB, call=64 * KiB, readahead=False)["read_pages"] == {16: 1024}
    c.set(max_read_ahead_mb=0)
    odd = job(c, "seqread", size=8 * MiB, call=6000)
    # 6000 B calls touch 2 or 3 pages, the first of them cached by the call before: RPCs of 1
    # or 2 pages, one a call (two where a call straddles a 1 MiB chunk), every page once
    calls = odd["ll"]["read_bytes"][0]
    assert calls == -(-8 * MiB // 6000)
    assert calls <= sum(odd["read_pages"].values()) <= calls + 7
    assert set(odd["read_pages"]) == {1, 2}
    assert odd["read_pages"][1] + 2 * odd["read_pages"][2] == 8 * MiB // 4096
    assert odd["summary"]["osc_bytes"]["read"] == 8 * MiB


def test_read_ahead_window_below_the_rpc_size(tmp_path):
    """4 MiB RPCs, max_read_ahead_per_file_mb=1: the window, not the chunk, bounds read-ahead."""
    c = client(tmp_path, max_pages_per_rpc=1024)
    wide = job(c, "seqread", size=64 * MiB, call=64 * KiB)
    c.set(max_read_ahead_per_file_mb=1)
    narrow = job(c, "seqread", size=64 * MiB, call=64 * KiB)
    assert wide["read_pages"] == {1024: 16}
    assert max(narrow["read_pages"]) <= 512 and sum(narrow["read_pages"].values()) > 16
    assert narrow["ll"]["read_bytes"] == wide["ll"]["read_bytes"]


# ----------------------------------------------------------------------------------------------
# hybrid I/O

LL_216_HYBRID = """snapshot_time             1700000100.000000000 secs.nsecs
start_time                1700000000.000000000 secs.nsecs
elapsed_time              100.000000000 secs.nsecs
read_bytes                3 samples [bytes] 4096 8388608 16781312 140737505132544
read                      3 samples [usecs] 5 900 1805 1620025
hybrid_noswitch           1 samples [reqs]
hybrid_readsize_switch    2 samples [reqs]
"""
LL_217_HYBRID = """snapshot_time             1700000100.000000000 secs.nsecs
start_time                1700000000.000000000 secs.nsecs
elapsed_time              100.000000000 secs.nsecs
read_bytes                3 samples [bytes] 4096 8388608 16781312 140737505132544
write_bytes               1 samples [bytes] 2097152 2097152 2097152 4398046511104
hybrid_read_bytes         2 samples [bytes] 8388608 8388608 16777216 140737488355328
hybrid_write_bytes        1 samples [bytes] 2097152 2097152 2097152 4398046511104
read                      3 samples [usecs] 5 900 1805 1620025
hybrid_noswitch           1 samples [reqs]
hybrid_writesize_switch   1 samples [reqs]
hybrid_readsize_switch    2 samples [reqs]
"""


def test_llite_stats_hybrid_lines_in_table_order():
    """lproc_llite.c llite_opcode_table: hybrid_read/write_bytes (LPROCFS_TYPE_BYTES_FULL) after
    write_bytes from 2.16.52; hybrid_noswitch, _writesize_switch, _readsize_switch (REQS, count
    only) at the end from 2.15.64. Counters are [count, min, max, sum, sumsq]."""
    st = {"read_bytes": [3, 4096, 8388608, 16781312, 2 * 8388608 ** 2 + 4096 ** 2],
          "read": [3, 5, 900, 1805, 1620025], "hybrid_noswitch": [1, 1, 1, 1, 1],
          "hybrid_readsize_switch": [2, 1, 1, 2, 2],
          "hybrid_read_bytes": [2, 8388608, 8388608, 16777216, 2 * 8388608 ** 2],
          "hybrid_write_bytes": [1, 2097152, 2097152, 2097152, 2097152 ** 2],
          "write_bytes": [1, 2097152, 2097152, 2097152, 2097152 ** 2],
          "hybrid_writesize_switch": [1, 1, 1, 1, 1]}
    t0, now = 1_700_000_000 * 10**9, 1_700_000_100 * 10**9
    old = {k: v for k, v in st.items() if k not in ("hybrid_read_bytes", "hybrid_write_bytes",
                                                    "write_bytes", "hybrid_writesize_switch")}
    ll = {"stats": old, "init_ns": t0}
    assert formats.render_llite_stats(profile("2.16.0"), ll, now, 0) == LL_216_HYBRID
    ll = {"stats": st, "init_ns": t0}
    assert formats.render_llite_stats(profile("2.17.0"), ll, now, 0) == LL_217_HYBRID
    # before 2.15.64 there are no hybrid counters at all
    assert "hybrid" not in formats.render_llite_stats(profile("2.15.4"), ll, now, 0)


def test_hybrid_io_switches_large_calls_on_216(tmp_path):
    c = client(tmp_path, "2.16.0")
    off = job(c, "seqread", size=64 * MiB, call=8 * MiB)            # hybrid_io is 0 on 2.16.0
    assert not any(k.startswith("hybrid") for k in off["ll"]) and off["read_pages"] == {256: 64}
    c.set(hybrid_io=1)
    on = job(c, "seqread", size=64 * MiB, call=8 * MiB)
    assert on["ll"]["hybrid_readsize_switch"][0] == 8 and "hybrid_noswitch" not in on["ll"]
    assert "hybrid_read_bytes" not in on["ll"]                       # 2.16.52+ only
    assert on["ll"]["read_bytes"] == (8, 64 * MiB)
    assert on["read_pages"] == {256: 64}                             # 8 RPCs of 1 MiB a call
    assert on["read_rif"] == {r: 8 for r in range(1, 9)}             # sent together
    assert on["ra"] == {}                                            # no page cache, no read-ahead
    # below the threshold: buffered, one hybrid_noswitch per call, reads and writes alike
    small = job(c, "ior", tasks=1, block_size=4 * MiB, transfer_size=1 * MiB, fsync=False)
    assert small["ll"]["hybrid_noswitch"][0] == 8 and "hybrid_readsize_switch" not in small["ll"]
    # writes at 2 MiB and more switch
    w = job(c, "checkpoint", ranks=2, size=16 * MiB, call=2 * MiB, jitter=0.0, fsync=False)
    assert w["ll"]["hybrid_writesize_switch"][0] == 16
    assert w["write_pages"] == {1: 1, 256: 32}                       # + the index file's page


def test_hybrid_bytes_and_unaligned_direct_io_on_217(tmp_path):
    """2.17: hybrid on by default, hybrid_read_bytes per switched call. A call of 3 MiB + 4 KiB
    at a 4 KiB offset over a 1 MiB-striped 2-OST file: its RPCs cover exactly the call, split
    at chunk and stripe boundaries."""
    c = client(tmp_path, "2.17.0", osts=2)
    c.set(hybrid_io_read_threshold_bytes=MiB)
    io = Client(c.st, profile("2.17.0"), "x").fs("scratch")
    f = io.existing("/a", 64 * MiB, stripe_count=2)
    h = io.open("/a")
    io.read(h, 4096, 3 * MiB + 4096, 4)
    ll = io.ll
    assert ll["hybrid_readsize_switch"][0] == 4 and ll["hybrid_read_bytes"][:4] == \
        [4, 3 * MiB + 4096, 3 * MiB + 4096, 4 * (3 * MiB + 4096)]
    # brute force: each call's bytes by stripe unit, then by 1 MiB object chunk
    want: dict = {}
    for i in range(4):
        a, b = 4096 + i * (3 * MiB + 4096), 4096 + (i + 1) * (3 * MiB + 4096)
        per_obj: dict = {}
        for x in range(a, b, 4096):
            u = x // MiB
            k, o = u % 2, (u // 2) * MiB + x % MiB
            per_obj.setdefault((k, o // MiB), []).append(o)
        for (k, ch), offs in per_obj.items():
            row = 1 << ((max(offs) - min(offs)) // 4096).bit_length()   # fls(pages - 1)
            want[row] = want.get(row, 0) + 1
    got = {}
    for osc in io.m["osc"]:
        for i, n in enumerate(osc["hist"]["read_pages"]):
            if n:
                got[1 << i] = got.get(1 << i, 0) + n
    assert got == want
    assert sum(o["stats"]["read_bytes"][3] for o in io.m["osc"]) == 4 * (3 * MiB + 4096)
    assert not f.objs[0].cached and not f.objs[1].cached


def test_switched_call_waits_longer_than_a_cached_buffered_call(tmp_path):
    c = client(tmp_path, "2.17.0")
    c.set(hybrid_io=0)
    job(c, "seqread", size=64 * MiB, call=8 * MiB)
    io = Client(c.st, profile("2.17.0"), "x").fs("scratch")
    io.existing("/f", 64 * MiB)
    h = io.open("/f")
    io.read(h, 0, 8 * MiB, 8)                 # buffered, cold
    before = list(io.ll["read"])
    io.read(h, 0, 8 * MiB, 8)                 # buffered, every page cached
    hit = (io.ll["read"][3] - before[3]) / 8
    io.tun["hybrid_io"], io.hybrid = 1, True
    before = list(io.ll["read"])
    io.read(h, 0, 8 * MiB, 8)                 # switched: synchronous direct I/O
    dio = (io.ll["read"][3] - before[3]) / 8
    assert hit < dio < 3 * hit


# ----------------------------------------------------------------------------------------------
# quirks: each changes what its ticket says, and nothing else

def pair(tmp_path, quirk, workload, version="2.15.4", **params):
    a = job(client(tmp_path, version, "plain"), workload, seed=4, **params)
    b = job(client(tmp_path, version, "quirky", quirks=[quirk]), workload, seed=4, **params)
    return a, b


def test_ra_8k_rpcs_moves_sequential_reads_to_8k(tmp_path):
    a, b = pair(tmp_path, "ra-8k-rpcs", "seqread", files=2, size=64 * MiB, call=MiB)
    assert a["read_pages"] == {256: 128}
    assert b["read_pages"] == {2: 128 * 128}                          # 128x the RPCs (io-findings §4)
    assert a["ll"]["read_bytes"] == b["ll"]["read_bytes"]
    assert {k: v[0] for k, v in a["ll"].items()} == {k: v[0] for k, v in b["ll"].items()}
    assert b["ll"]["read"][1] > a["ll"]["read"][1]                   # and slower calls


@pytest.mark.parametrize("quirk", ["ra-8k-rpcs", "ra-split-rpcs=2"])
@pytest.mark.parametrize("workload,params", [
    ("random-read", {"reads": 2000}),
    ("checkpoint", {"ranks": 2, "size": 32 * MiB}),
    ("small-writes", {"ranks": 4, "records": 128}),
])
def test_read_ahead_quirks_leave_random_reads_and_writes_alone(tmp_path, quirk, workload, params):
    a, b = pair(tmp_path, quirk, workload, **params)
    for k in ("read_pages", "read_rif", "read_offset", "write_pages", "write_rif", "write_offset"):
        assert a[k] == b[k], k
    assert a["ll"] == b["ll"] and a["ra"] == b["ra"]


def test_ra_split_rpcs_halves_every_read_ahead_rpc(tmp_path):
    a, b = pair(tmp_path, "ra-split-rpcs=2", "seqread", files=2, size=64 * MiB, call=MiB)
    assert a["read_pages"] == {256: 128}
    assert b["read_pages"] == {128: 256}                              # each 1 MiB RPC as two of 512 KiB
    assert a["summary"]["osc_bytes"] == b["summary"]["osc_bytes"]
    assert a["ll"]["read_bytes"] == b["ll"]["read_bytes"]
    assert {k: v[0] for k, v in a["ll"].items()} == {k: v[0] for k, v in b["ll"].items()}
    assert a["ra"] == b["ra"]                                         # the same pages read ahead
    assert b["ll"]["read"][1] > a["ll"]["read"][1]                   # twice the round trips: slower calls


@pytest.mark.parametrize("factor", ["1.25", "1.5", "2", "4"])
def test_ra_split_rpcs_multiplies_the_read_rpcs_by_its_factor(tmp_path, factor):
    """Small files read whole: one read-ahead RPC per file (its size), each of at least 4 pages.
    With the quirk the run sends floor(K x F) RPCs for the K it would have sent, the same bytes:
    the job's mean read RPC is F times smaller."""
    a, b = pair(tmp_path, f"ra-split-rpcs={factor}", "smallfile-read", files=60, size=256 * KiB)
    k = sum(a["read_pages"].values())
    assert k == 60
    assert sum(b["read_pages"].values()) == math.floor(k * Fraction(factor))
    assert a["summary"]["osc_bytes"] == b["summary"]["osc_bytes"]
    assert a["ll"]["read_bytes"] == b["ll"]["read_bytes"] and a["ra"] == b["ra"]
    mean_a = a["summary"]["osc_bytes"]["read"] / k
    mean_b = b["summary"]["osc_bytes"]["read"] / sum(b["read_pages"].values())
    assert mean_a / mean_b == pytest.approx(float(Fraction(factor)), rel=1 / k)


def test_ra_split_rpcs_pieces_are_even_and_keep_every_page(tmp_path):
    """Pieces of one RPC differ by at most a page and add up to it: an RPC of 256 pages split in
    three is 86 + 85 + 85 pages (rows 128, 128, 128), never a 1-page leftover."""
    a, b = pair(tmp_path, "ra-split-rpcs=3", "seqread", files=1, size=16 * MiB, call=MiB)
    assert a["read_pages"] == {256: 16}
    assert b["read_pages"] == {128: 48}
    assert a["summary"]["osc_bytes"] == b["summary"]["osc_bytes"]


@pytest.mark.parametrize("given,stored", [("ra-split-rpcs=2", "ra-split-rpcs=2"),
                                          ("ra-split-rpcs=1.50", "ra-split-rpcs=1.5"),
                                          (" ra-split-rpcs = 64 ", "ra-split-rpcs=64")])
def test_ra_split_rpcs_takes_its_factor(tmp_path, given, stored):
    c = client(tmp_path, quirks=[given, "lu15274"])
    assert c.quirks == [stored, "lu15274"]                            # in the order of settings.QUIRKS
    assert SimClient.load(c.root).quirks == c.quirks


@pytest.mark.parametrize("quirks,message", [
    (["ra-split-rpcs"], "needs a factor"),
    (["ra-split-rpcs=1"], "more than 1"),
    (["ra-split-rpcs=0.5"], "more than 1"),
    (["ra-split-rpcs=65"], "at most 64"),
    (["ra-split-rpcs=two"], "not a number"),
    (["ra-split-rpcs=nan"], "not a number"),
    (["ra-split-rpcs=2", "ra-split-rpcs=3"], "given twice"),
    (["ra-8k-rpcs=2"], "takes no value"),
    (["ra-8k-rpcs", "ra-split-rpcs=2"], "both shape read-ahead RPCs"),
])
def test_ra_split_rpcs_refuses_what_it_cannot_do(tmp_path, quirks, message):
    with pytest.raises(ValueError, match=message):
        client(tmp_path, quirks=quirks)


def test_lu15274_slows_small_file_reads_only(tmp_path):
    a, b = pair(tmp_path, "lu15274", "smallfile-read", files=16)
    assert a["read_pages"] == b["read_pages"] and a["read_offset"] == b["read_offset"]
    assert a["ll"]["read_bytes"] == b["ll"]["read_bytes"]
    assert b["ll"]["read"][1] >= 20 * a["ll"]["read"][1]
    # dd bs=4K of a 64 MiB file: 9.1 MB/s with the bug (LU-15274), about 1 GB/s without
    calls, usecs = b["ll"]["read"]
    assert 7e6 < b["ll"]["read_bytes"][1] / (usecs / 1e6) < 11e6
    assert { k: v for k, v in a["ll"].items() if k != "read"} == \
        {k: v for k, v in b["ll"].items() if k != "read"}


def test_lu15274_spares_files_above_the_whole_file_limit(tmp_path):
    a, b = pair(tmp_path, "lu15274", "seqread", size=65 * MiB, call=4096)       # 65 MiB > 64
    assert a["ll"] == b["ll"] and a["read_pages"] == b["read_pages"]
    # 2.17's whole-file limit is 4 MiB (LU-18504): a 32 MiB file is spared there
    a, b = pair(tmp_path / "217", "lu15274", "smallfile-read", "2.17.0", files=4, jitter=0.0)
    assert a["ll"] == b["ll"]


def test_poor_write_aggregation_sends_partial_rpcs(tmp_path):
    a, b = pair(tmp_path, "poor-write-aggregation", "small-writes", ranks=16, records=512)
    full_a = a["write_pages"].get(256, 0) / sum(a["write_pages"].values())
    full_b = b["write_pages"].get(256, 0) / sum(b["write_pages"].values())
    assert full_a > 0.9 and full_b < 0.1
    assert sum(b["write_pages"].values()) > 5 * sum(a["write_pages"].values())
    assert a["ll"]["write_bytes"] == b["ll"]["write_bytes"]
    assert a["ll"].keys() == b["ll"].keys()
    # a single sequential writer is not touched, nor are reads
    for wl, params in (("checkpoint", {"ranks": 2, "size": 32 * MiB}), ("seqread", {"size": 16 * MiB})):
        a, b = pair(tmp_path / wl, "poor-write-aggregation", wl, **params)
        assert a["write_pages"] == b["write_pages"] and a["read_pages"] == b["read_pages"], wl


def test_quirks_never_change_the_files_or_their_formats(tmp_path):
    a = client(tmp_path, "2.15.4", "a")
    b = client(tmp_path, "2.15.4", "b", quirks=["ra-8k-rpcs", "lu15274", "poor-write-aggregation"])
    s = client(tmp_path, "2.15.4", "s", quirks=["ra-split-rpcs=1.5"])
    for c in (a, b, s):
        c.run("smallfile-read", fs="scratch", files=4)
        c.run("small-writes", fs="scratch", ranks=4, records=64)
    rel = lambda c: sorted(str(p.relative_to(c.root)) for p in c.root.rglob("*")
                           if p.is_file() and ".lustre-sim" not in p.parts)
    assert rel(a) == rel(b) == rel(s)
    for c in (b, s):
        for p in rd.glob(c.root, "llite/*/stats") + rd.glob(c.root, "osc/*/stats"):
            for line in p.read_text().splitlines()[3:]:
                assert rd.COUNTER.match(line), line


# ----------------------------------------------------------------------------------------------
# the bulk engine against brute force

def test_ap_log2_counts_brute_force():
    r = random.Random(3)
    for _ in range(500):
        a, d, n = r.randint(0, 5000), r.choice([0, 1, 2, 3, 16, 256, 1000]), r.randint(1, 300)
        mod = r.choice([None, None, 256])
        want: dict = {}
        for i in range(n):
            x = a + i * d
            if mod:
                x %= mod
            b = min(x.bit_length(), 31)
            want[b] = want.get(b, 0) + 1
        assert ap_log2_counts(a, d, n, mod) == want, (a, d, n, mod)


@pytest.mark.parametrize("seed", range(12))
def test_own_page_reads_in_bulk_equal_call_by_call(tmp_path, seed):
    """_read_own_pages in bulk (page-aligned calls, cold file) tallies what the call-by-call
    path tallies: same pages, in-flight and offset rows, same bytes, per OSC."""
    r = random.Random(seed)
    c = client(tmp_path, "2.15.4", osts=5, max_pages_per_rpc=r.choice([64, 256, 1024]))
    c.set(max_read_ahead_mb=0)
    sc = r.choice([1, 2, 3, 5])
    ss = r.choice([64 * KiB, MiB, 4 * MiB])
    call = r.choice([4, 16, 60, 256, 300, 1024]) * 4096
    n = r.randint(2, 700)
    off = r.randint(0, 300) * 4096

    def run(bulk: bool):
        io = Client(c.st, profile("2.15.4"), f"x{bulk}").fs("scratch")
        import copy
        io.m = copy.deepcopy(io.m)
        f = io.existing("/data", off + call * n + 3 * MiB, stripe_count=sc, stripe_size=ss)
        h = io.open("/data")
        if bulk:
            io._read_own_pages(h, off, call, n)
        else:
            for i in range(n):
                io._fetch(f, off + i * call, off + (i + 1) * call, True, 0, {})
        return [(o["hist"], o["stats"].get("read_bytes", [0, 0, 0, 0, 0])[:4]) for o in io.m["osc"]]

    assert run(True) == run(False)


def test_a_job_of_a_few_gib_is_quick(tmp_path):
    """The model alone (no tree write), on a loaded machine: well under the 100 ms target
    when idle, so this bound only catches a return to one Python step per RPC or per call."""
    c = client(tmp_path, "2.15.4", osts=8, quirks=["ra-8k-rpcs"])
    cases = [("seqread", {"files": 4, "size": 1 << 30, "call": 64 * KiB}),      # 524288 8K RPCs
             ("smallfile-read", {"files": 64}),
             ("checkpoint", {"ranks": 8, "size": 512 * MiB})]
    for name, params in cases:
        w = workloads.get(name)
        cl = Client(c.st, profile("2.15.4"), name)
        t = time.perf_counter()
        cl.finish(w.fn(cl, "scratch", random.Random(1), **workloads.coerce_params(w, params)))
        assert time.perf_counter() - t < 1.0, name
    c.set(quirks=[], max_read_ahead_mb=0)
    cl = Client(c.st, profile("2.15.4"), "ra0")
    t = time.perf_counter()
    w = workloads.get("seqread")
    cl.finish(w.fn(cl, "scratch", random.Random(1), files=4, size=1 << 30, call=64 * KiB,
                   readahead=True, stripe_count=None, jitter=0.0, elapsed=1))
    assert time.perf_counter() - t < 1.0


def test_seed_varies_a_job(tmp_path):
    runs = {}
    for name, seed in (("a", 1), ("b", 1), ("c", 2)):
        c = client(tmp_path, "2.15.4", name)
        runs[name] = c.run("smallfile-read", fs="scratch", files=8, seed=seed)
    assert runs["a"]["read_bytes"] == runs["b"]["read_bytes"] != runs["c"]["read_bytes"]
    assert runs["a"]["rpc_pages"] == runs["b"]["rpc_pages"]


@pytest.mark.parametrize("seed", range(8))
def test_read_many_equals_read_by_read(tmp_path, seed):
    """FsIO.read_many (bulk random reads) tallies what one read() per offset tallies: pages,
    in-flight and offset rows, bytes, read_ahead_stats hits/misses/not-consecutive, llite
    call counts, and leaves the same pages cached."""
    r = random.Random(seed)
    c = client(tmp_path, "2.15.4", osts=3)
    sc, ss = r.choice([1, 2, 3]), r.choice([64 * KiB, MiB])
    size = r.choice([512, 4096, 6000, 16 * KiB, 64 * KiB])
    size = min(size, ss)
    slots = r.choice([50, 5000])
    offs, prev = [], 3 * 4096 + 100
    while len(offs) < 300:
        off = r.randrange(slots) * r.choice([4096, size])
        # read_many's bulk case: not right after the call before, within a stripe unit
        if off != prev and off % ss + size <= ss:
            offs.append(off)
            prev = off + size

    def run(bulk: bool):
        import copy
        io = Client(c.st, profile("2.15.4"), f"x{bulk}").fs("scratch")
        io.m = copy.deepcopy(io.m)
        io.ll, io.ra = io.m["llite"]["stats"], io.m["llite"]["ra"]
        f = io.existing("/t", slots * 64 * KiB + MiB, stripe_count=sc, stripe_size=ss)
        h = io.open("/t")
        io.read(h, 3 * 4096, 100)                        # something cached already, and a prev
        if bulk:
            def no(*a, **k):
                raise AssertionError("read_many fell back to read()")
            io.read = no
            io.read_many(h, offs, size)
        else:
            for off in offs:
                io.read(h, off, size)
        return ([(o["hist"], o["stats"].get("read_bytes", [0, 0, 0, 0, 0])[:4]) for o in io.m["osc"]],
                {k: v[0] for k, v in io.ra.items()}, io.ll["read_bytes"][:4],
                [list(o.cached) for o in f.objs], h.last_read_end)

    assert run(True) == run(False)


def brute_dio(off, size, n, sc, ss, chunk, P, mx):
    """Direct I/O of n calls, by hand: each call's bytes per object, split at chunk
    boundaries; its RPCs to one OSC in flight together (1, 2, ... up to mx)."""
    rows = [{"pages": [0] * 32, "rif": [0] * 32, "off": [0] * 32, "n": 0, "bytes": 0}
            for _ in range(sc)]
    for c in range(n):
        a, b = off + c * size, off + (c + 1) * size
        per_k: dict = {}
        x = a
        while x < b:
            u = x // ss
            y = min(b, (u + 1) * ss)
            k, oa = u % sc, (u // sc) * ss + x % ss
            lo, hi = per_k.get(k, (oa, oa))
            per_k[k] = (min(lo, oa), max(hi, oa + y - x))
            x = y
        for k, (lo, hi) in per_k.items():
            j, x = 0, lo
            while x < hi:
                y = min(hi, (x // chunk + 1) * chunk)
                pages = -(-y // P) - x // P
                r = rows[k]
                r["pages"][min((pages - 1).bit_length(), 31)] += 1
                r["rif"][min(j + 1, mx)] += 1
                r["off"][min((x // P).bit_length(), 31)] += 1
                r["n"] += 1
                r["bytes"] += y - x
                j, x = j + 1, y
    return rows


@pytest.mark.parametrize("seed", range(16))
def test_direct_io_rpcs_equal_brute_force(tmp_path, seed):
    r = random.Random(seed)
    mppr = r.choice([16, 256, 1024])
    c = client(tmp_path, "2.17.0", osts=4, max_pages_per_rpc=mppr)
    sc, ss = r.choice([1, 2, 3, 4]), r.choice([64 * KiB, MiB, 4 * MiB])
    size = r.choice([r.randint(1, 9 * MiB), r.randint(1, 64) * 64 * KiB, 4096 * r.randint(1, 300)])
    off = r.choice([0, r.randint(0, 50) * 4096, r.randint(0, 10 * MiB)])
    n = r.randint(1, 300)
    io = Client(c.st, profile("2.17.0"), "x").fs("scratch")
    io.tun["hybrid_io_write_threshold_bytes"] = 0
    f = io.existing("/d", 0, stripe_count=sc, stripe_size=ss)
    h = io.open("/d", "w")
    io.write(h, off, size, n)
    assert io.ll["hybrid_writesize_switch"][0] == n
    want = brute_dio(off, size, n, sc, ss, mppr * 4096, 4096, 8)
    for k, ost in enumerate(f.osts):
        o = io.m["osc"][ost]
        got = {"pages": o["hist"]["write_pages"], "rif": o["hist"]["write_rif"],
               "off": o["hist"]["write_off"]}
        wb = o["stats"].get("write_bytes", [0, 0, 0, 0])
        assert got == {x: want[k][x] for x in ("pages", "rif", "off")}, (k, sc, ss, size, off, n)
        assert (wb[0], wb[3]) == (want[k]["n"], want[k]["bytes"])
    assert f.size == off + size * n and not any(ob.cached for ob in f.objs)
