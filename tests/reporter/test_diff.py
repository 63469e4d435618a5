from lustre_jobreport.aggregate import aggregate
from lustre_jobreport.diff import diff

from snapshots import host, node, snap

BUCKETS = ("4K", "8K", "16K", "1M")


def rpc(idx, read, write=()):
    out = {}
    for direction, counts in (("read", read), ("write", write or (0,) * 4)):
        for size, n in zip(BUCKETS, counts):
            out[(idx, direction, size)] = n
    return out


def test_plain_delta_sums_hosts_and_osts():
    b = snap(100.0, node("n1", llite={"open": 10, "read_bytes": 1000}, rpc=rpc(0, (1, 2, 3, 4)) | rpc(1, (0, 0, 0, 5))),
             node("n2", llite={"open": 5}, rpc=rpc(0, (0, 0, 0, 0))))
    e = snap(160.0, node("n1", llite={"open": 30, "read_bytes": 5000}, rpc=rpc(0, (11, 2, 3, 14)) | rpc(1, (0, 0, 0, 7))),
             node("n2", llite={"open": 6}, rpc=rpc(0, (1, 0, 0, 1))))
    d = diff(b, e)
    assert d.issues == [] and d.hosts == ["n1", "n2"] and d.elapsed_s == 60.0
    t = aggregate(d)["scratch"]
    assert t.ops["open"] == 21 and t.ops["close"] == 0          # absent counter reads 0
    assert t.read_bytes == 4000
    assert t.rpc["read"] == {"4K": 11, "8K": 0, "16K": 0, "1M": 13}
    assert t.hosts["n1"]["open"] == 20 and t.hosts["n2"]["open"] == 1


def test_cleared_rpc_stats_of_one_ost_is_left_out_and_reported():
    b = snap(0.0, node("n1", rpc=rpc(0, (100, 0, 0, 50)) | rpc(1, (10, 0, 0, 10))))
    e = snap(10.0, node("n1", rpc=rpc(0, (3, 0, 0, 1)) | rpc(1, (20, 0, 0, 15))))
    d = diff(b, e)
    assert [i.id for i in d.issues] == ["COUNTER_RESET"]
    assert "scratch-OST0000" in d.issues[0].detail and d.issues[0].host == "n1"
    # The whole rpc_stats of OST0000 is dropped (even buckets that did not decrease); OST0001 stays.
    assert aggregate(d)["scratch"].rpc["read"] == {"4K": 10, "8K": 0, "16K": 0, "1M": 5}


def test_remount_drops_that_fs_on_that_host_only():
    b = snap(0.0, node("n1", mount="aaaa", llite={"open": 100}), node("n2", llite={"open": 1}))
    e = snap(10.0, node("n1", mount="bbbb", llite={"open": 120}), node("n2", llite={"open": 4}))
    d = diff(b, e)
    assert [(i.id, i.host, i.fs) for i in d.issues] == [("REMOUNT", "n1", "scratch")]
    assert aggregate(d)["scratch"].ops["open"] == 3


def test_unreachable_host_is_listed_and_the_rest_is_reported():
    b = snap(0.0, node("n1", llite={"open": 1}), host("n2", {}, ok=False, error="connection refused"))
    e = snap(10.0, node("n1", llite={"open": 2}), node("n2", llite={"open": 50}))
    d = diff(b, e)
    assert d.hosts == ["n1"] and d.hosts_missing == ["n2"]
    assert d.issues[0].id == "HOST_UNREACHABLE" and "connection refused" in d.issues[0].detail
    assert aggregate(d)["scratch"].ops["open"] == 1


def test_new_ost_counts_from_zero():
    b = snap(0.0, node("n1", rpc=rpc(0, (1, 0, 0, 1))))
    e = snap(10.0, node("n1", rpc=rpc(0, (1, 0, 0, 1)) | rpc(7, (0, 0, 0, 9))))
    assert aggregate(diff(b, e))["scratch"].rpc["read"]["1M"] == 9


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
