from __future__ import annotations

from lustre_jobreport.report.aggregate import aggregate
from lustre_jobreport.catalog import Reason
from lustre_jobreport.report.diff import diff

from kit.snapshots import host, node, snap

BUCKETS = ("4K", "8K", "16K", "1M")
US = 1_000_000   # start times are whole microseconds in snapshots


def rpc(read, write=(0, 0, 0, 0)):
    out = {}
    for direction, counts in (("read", read), ("write", write)):
        out.update({(direction, size): n for size, n in zip(BUCKETS, counts)})
    return out


def ost(**per_ost):
    """ost(OST0=(read_bytes, read_rpcs)) -> osc dict for node()."""
    return {int(k[3:]): {"read_bytes": b, "read_rpcs": r} for k, (b, r) in per_ost.items()}


def test_plain_delta_sums_hosts():
    b = snap(100.0, node("n1", llite={"open": 10, "read_bytes": 1000}, rpc=rpc((1, 2, 3, 4))),
             node("n2", llite={"open": 5}, rpc=rpc((0, 0, 0, 0))))
    e = snap(160.0, node("n1", llite={"open": 30, "read_bytes": 5000}, rpc=rpc((11, 2, 3, 16))),
             node("n2", llite={"open": 6}, rpc=rpc((1, 0, 0, 1))))
    d = diff(b, e)
    assert d.issues == [] and d.hosts == ["n1", "n2"] and d.elapsed_s == 60.0
    t = aggregate(d)["scratch"]
    assert t.ops["open"] == 21 and t.ops["close"] == 0          # absent counter reads 0
    assert t.read_bytes == 4000
    assert t.rpc["read"] == {"4K": 11, "8K": 0, "16K": 0, "1M": 13}
    assert t.hosts["n1"]["open"] == 20 and t.hosts["n2"]["open"] == 1


def test_cleared_osc_stats_of_one_ost_is_left_out_and_reported():
    b = snap(0.0, node("n1", osc=ost(OST0=(100, 50), OST1=(10, 10))))
    e = snap(10.0, node("n1", osc=ost(OST0=(300, 1), OST1=(20, 15))))   # OST0 rpcs went 50 -> 1
    d = diff(b, e)
    assert [i.id for i in d.issues] == ["COUNTER_RESET"]
    assert "osc stats of scratch-OST0000 on n1" in d.issues[0].detail and d.issues[0].fs == "scratch"
    # the whole source of OST0000 is dropped (read_bytes too, though it grew); OST0001 stays
    osts = aggregate(d)["scratch"].osts
    assert list(osts) == ["OST0001"] and osts["OST0001"]["read_bytes"] == 10


def test_a_reset_on_one_host_keeps_the_others():
    b = snap(0.0, node("n1", llite={"open": 100}), node("n2", llite={"open": 100}))
    e = snap(10.0, node("n1", llite={"open": 3}), node("n2", llite={"open": 150}))
    d = diff(b, e)
    assert [(i.id, i.host) for i in d.issues] == [("COUNTER_RESET", "n1")]
    t = aggregate(d)["scratch"]
    assert t.ops["open"] == 50 and "n1" not in t.hosts


def test_remount_drops_that_fs_on_that_host_only():
    b = snap(0.0, node("n1", mount="aaaa", llite={"open": 100}), node("n2", llite={"open": 1}))
    e = snap(10.0, node("n1", mount="bbbb", llite={"open": 120}), node("n2", llite={"open": 4}))
    d = diff(b, e)
    assert [(i.id, i.host, i.fs) for i in d.issues] == [("REMOUNT", "n1", "scratch")]
    assert aggregate(d)["scratch"].ops["open"] == 3


def test_remount_with_smaller_counters_is_one_remount_not_also_a_reset():
    b = snap(0.0, node("n1", mount="aaaa", llite={"open": 100}))
    e = snap(10.0, node("n1", mount="bbbb", llite={"open": 2}))
    assert [i.id for i in diff(b, e).issues] == ["REMOUNT"]


def test_unreachable_host_is_listed_and_the_rest_is_reported():
    b = snap(0.0, node("n1", llite={"open": 1}), host("n2", {}, ok=False, error="connection refused"))
    e = snap(10.0, node("n1", llite={"open": 2}), node("n2", llite={"open": 50}))
    d = diff(b, e)
    assert d.hosts == ["n1"] and d.hosts_missing == ["n2"]
    assert d.issues[0].id == "HOST_UNREACHABLE" and "connection refused" in d.issues[0].detail
    assert aggregate(d)["scratch"].ops["open"] == 1


def test_new_ost_counts_from_zero():
    b = snap(0.0, node("n1", osc=ost(OST0=(5, 1))))
    e = snap(10.0, node("n1", osc=ost(OST0=(5, 1), OST7=(900, 9))))
    assert aggregate(diff(b, e))["scratch"].osts == {
        "OST0007": {"read_bytes": 900, "write_bytes": 0, "read_rpcs": 9, "write_rpcs": 0, "wait_us_mean": None}}


def test_u64_values_near_2_64_stay_exact():
    big = 2**64 - 10
    b = snap(0.0, node("n1", llite={"write_bytes": big}))
    e = snap(1.0, node("n1", llite={"write_bytes": big + 7}))
    assert aggregate(diff(b, e))["scratch"].write_bytes == 7


def test_no_lustre_is_said_once_per_host():
    b = snap(0.0, host("n1", {"version": {"": "2.15.4"}}))
    e = snap(1.0, host("n1", {"version": {"": "2.15.4"}}))
    d = diff(b, e)
    assert [i.id for i in d.issues] == ["NO_LUSTRE"] and aggregate(d) == {}


def test_a_changed_stats_start_time_is_a_clear_even_when_counters_grew():
    """2.15+: the counters were cleared and climbed past their old values before the end."""
    b = snap(0.0, node("n1", llite={"open": 100, "stats_start": 1700000000 * US}))
    e = snap(10.0, node("n1", llite={"open": 500, "stats_start": 1700000005 * US}))
    d = diff(b, e)
    assert [(i.id, i.host) for i in d.issues] == [("COUNTER_RESET", "n1")]
    scratch = aggregate(d)["scratch"]
    assert scratch.ops["open"] is None and scratch.left_out["ops.open"] == 1     # not read: never a 0


def test_a_cleared_osc_rpc_stats_drops_that_hosts_filesystem_histogram():
    b = snap(0.0, node("n1", rpc={("read", "4K"): 10}, osc={1: {"rpc_stats_start": 100 * US}}),
             node("n2", rpc={("read", "4K"): 10}, osc={1: {"rpc_stats_start": 100 * US}}))
    e = snap(10.0, node("n1", rpc={("read", "4K"): 50}, osc={1: {"rpc_stats_start": 104 * US}}),
             node("n2", rpc={("read", "4K"): 13}, osc={1: {"rpc_stats_start": 100 * US}}))
    d = diff(b, e)
    assert [(i.id, i.host) for i in d.issues] == [("COUNTER_RESET", "n1")]
    assert "rpc_stats of scratch on n1" in d.issues[0].detail
    assert aggregate(d)["scratch"].rpc["read"]["4K"] == 3


def test_a_histogram_never_read_on_the_only_host_is_said():
    """The agent gives a filesystem's RPC histogram all or nothing; with rpc_stats unreadable (or
    skipped under its time budget) at both ends on every host, no bucket exists anywhere: the
    histogram is not trusted, not an empty one."""
    b = snap(0.0, host("n1", {"version": {"": "2.15.4"}, "llite.mount_id": {"scratch": "f1"},
                              "llite.read_bytes": {"scratch": 0}}, rpc_stats=False))
    e = snap(60.0, host("n1", {"version": {"": "2.15.4"}, "llite.mount_id": {"scratch": "f1"},
                               "llite.read_bytes": {"scratch": 1 << 30}}, rpc_stats=False))
    d = diff(b, e)
    assert [(i.id, i.host, i.fs) for i in d.issues] == [("VALUES_MISSING", "n1", "scratch")]
    assert d.issues[0].detail.startswith("osc rpc_stats of scratch could not be read at job start nor at its end on n1")
    assert d.incomplete == {"n1": {"scratch"}}
    assert aggregate(d)["scratch"].read_bytes == 1 << 30     # the llite stats it did read still count


def test_llite_stats_never_read_on_the_only_host_is_said():
    b = snap(0.0, host("n1", {"llite.mount_id": {"scratch": "f1"}}, llite_stats=False))
    e = snap(60.0, host("n1", {"llite.mount_id": {"scratch": "f1"}}, llite_stats=False))
    assert [(i.id, i.detail.split(" could")[0]) for i in diff(b, e).issues] == [("VALUES_MISSING", "llite stats of scratch")]


def test_a_counter_instant_on_one_host_only_is_left_out_and_said():
    """The table's semantics were the first host's: n2's instant read_bytes was summed as a counter."""
    def h(name, n, sem):
        return host(name, {"llite.mount_id": {"scratch": "f"}, "osc.read_bytes": {"scratch-OST0000": n}},
                    sems={"osc.read_bytes": sem})
    for sems_at_start, sems_at_end in ((("counter", "instant"), ("counter", "counter")),
                                       (("counter", "counter"), ("counter", "instant"))):
        b = snap(0.0, *(h(n, 10, s) for n, s in zip(("n1", "n2"), sems_at_start)))
        e = snap(100.0, *(h(n, 60 << 30, s) for n, s in zip(("n1", "n2"), sems_at_end)))
        d = diff(b, e)
        assert [i.id for i in d.issues] == ["METRIC_TYPE"]
        assert aggregate(d)["scratch"].osts == {}


def test_a_cleared_llite_stats_file_is_said_once_as_cleared():
    """A clear drops the file's lines; a 2.14+ file left with no [usec] line gives no latency
    value: that is the clear, not also 'could not be read at job end'."""
    b = snap(0.0, host("n1", {"llite.mount_id": {"scratch": "f"}, "llite.open": {"scratch": 500},
                              "llite.latency.read": {"scratch": 53802}}))
    e = snap(60.0, host("n1", {"llite.mount_id": {"scratch": "f"}, "llite.open": {"scratch": 3}}))
    d = diff(b, e)
    assert [(i.id, i.detail.split(" on ")[0]) for i in d.issues] == [("COUNTER_RESET", "llite stats of scratch")]


# the buckets a 4 KiB-page agent exports for every filesystem, one page to 64 MiB
BUCKETS_TO_64M = ("4K", "8K", "16K", "32K", "64K", "128K", "256K", "512K", "1M", "2M", "4M", "8M", "16M",
                  "32M", "64M")


def test_a_cleared_histogram_whose_1m_bucket_climbed_past_is_a_reset_not_a_wrap():
    """Lustre 2.10 (no rpc_stats start time), one host of four: its osc rpc_stats were cleared
    during the job and one OSC's 1 MiB RPCs climbed past the filesystem's old 1M count while
    every other bucket fell; the buckets above 1M were 0 at both ends. Every bucket instance of
    the histogram belongs to the one filesystem: the fall must not be lost among them."""
    def histogram(n: int, direction: str) -> dict:
        counts = dict.fromkeys(BUCKETS_TO_64M, 0)
        counts.update({"4K": 12_000 + n, "16K": 300, "256K": 500 + n, "1M": 26_000})
        return {(direction, size): c for size, c in counts.items()}

    def host_at(name: str, n: int, extra: dict | None = None):
        rpc = {**histogram(n, "read"), **histogram(n, "write"), **(extra or {})}
        return node(name, version="2.10.8", llite={"read_bytes": 1 << 40}, rpc=rpc)

    b = snap(0.0, *(host_at(f"n{i}", 0) for i in range(4)))
    cleared = {(d, size): 0 for d in ("read", "write") for size in BUCKETS_TO_64M}
    cleared.update({("read", "4K"): 3, ("read", "1M"): 31_000, ("write", "1M"): 27_000})
    e = snap(600.0, host_at("n0", 10), host_at("n1", 10), node("n2", version="2.10.8", llite={"read_bytes": 2 << 40},
                                                                rpc=cleared), host_at("n3", 10))
    d = diff(b, e)
    assert [(i.id, i.host, i.fs) for i in d.issues] == [("COUNTER_RESET", "n2", "scratch")]
    assert "osc rpc_stats of scratch on n2" in d.issues[0].detail
    for direction in ("read", "write"):
        table = d.tables[f"lustreclient.fs.rpc.{direction}"]
        assert not table.counted[d.hosts.index("n2")].any()
        assert int(table.delta.max()) < 1 << 63
    rpc = aggregate(d)["scratch"].rpc
    assert rpc["read"]["4K"] == rpc["write"]["4K"] == 30 and rpc["read"]["256K"] == 30
    assert rpc["read"]["1M"] == rpc["read"]["64M"] == 0


def test_an_osc_gone_from_the_histograms_sum_leaves_the_histogram_out():
    """A filesystem's histogram is the sum of its OSCs' rpc_stats. An OSC gone at the end takes
    its counts out of the sum, which (Lustre 2.10, no start times) still climbed in every bucket,
    the job's RPCs through the other OSC being more: counted, it fell short of the gone OSC's
    counts. It is left out, as the gone OSC's own stats are."""
    def h(oscs, rpc):
        return host("n1", {"version": {"": "2.10.8"}, "llite.mount_id": {"scratch": "f1"},
                           "osc.device": {f"scratch-OST{i:04x}": f"scratch-OST{i:04x}-osc-f1" for i in oscs},
                           "osc.read_bytes": {f"scratch-OST{i:04x}": 1 << 20 for i in oscs},
                           "fs.rpc.read": {f"scratch:{size}": n for size, n in rpc.items()}})
    d = diff(snap(0.0, h((0, 1), {"4K": 10, "1M": 100})), snap(60.0, h((0,), {"4K": 50, "1M": 900})))
    assert [(i.id, i.host, i.fs) for i in d.issues] == [("VALUES_MISSING", "n1", "scratch")] * 2
    assert d.issues[0].detail.startswith("osc rpc_stats of scratch summed an OSC that was gone at job end on n1")
    assert not d.tables["lustreclient.fs.rpc.read"].counted.any()
    assert d.reasons() == {("n1", "osc rpc_stats", "scratch"): Reason.GONE,
                           ("n1", "osc stats", "scratch-OST0001"): Reason.GONE}


def test_a_file_not_every_layout_has_read_at_neither_end_is_not_judged():
    """OSC import files (osc.reconnects) are a file not every layout has (1.8 has none): one read
    at neither end has nothing to count, so nothing of it is left out, remounted or replaced
    (the agent's job view judges each host alone and cannot know whether another host had it)."""
    def h(mount, oscs, reconnects):
        return host("n1", {"version": {"": "2.10.8"}, "llite.mount_id": {"scratch": mount},
                           "osc.device": {f"scratch-OST{i:04x}": f"scratch-OST{i:04x}-osc-{d}" for i, d in oscs.items()},
                           "osc.read_bytes": {f"scratch-OST{i:04x}": 1 << 20 for i in oscs},
                           "osc.reconnects": reconnects})
    read = {"scratch-OST0000": 1}                 # OST0001's import read at neither end
    remounted = diff(snap(0.0, h("f1", {0: "f1", 1: "f1"}, read)), snap(60.0, h("f2", {0: "f2", 1: "f2"}, read)))
    assert {k: r for k, r in remounted.reasons().items() if k[1] == "osc import"} == {
        ("n1", "osc import", "scratch-OST0000"): Reason.REMOUNTED}
    replaced = diff(snap(0.0, h("f1", {0: "f1", 1: "f1"}, read)), snap(60.0, h("f1", {0: "f1", 1: "f9"}, read)))
    assert replaced.reasons() == {("n1", "osc stats", "scratch-OST0001"): Reason.REPLACED,
                                  ("n1", "osc rpc_stats", "scratch"): Reason.REPLACED}
