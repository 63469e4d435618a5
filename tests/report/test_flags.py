import pytest

from lustre_jobreport import config
from lustre_jobreport.report.aggregate import FsTotals
from lustre_jobreport.errors import ConfigError
from lustre_jobreport.report.flags import JobContext, evaluate

GIB = 1 << 30
CTX = JobContext(elapsed_s=3600.0, n_hosts=4)
BUCKETS = ["4K", "8K", "16K", "32K", "64K", "128K", "256K", "512K", "1M", "2M"]


def totals(read=None, write=None, ops=None, read_bytes=0, write_bytes=0, read_calls=0, write_calls=0):
    t = FsTotals("scratch", read_bytes=read_bytes, write_bytes=write_bytes, read_calls=read_calls,
                 write_calls=write_calls)
    t.rpc = {"read": dict.fromkeys(BUCKETS, 0) | (read or {}), "write": dict.fromkeys(BUCKETS, 0) | (write or {})}
    t.ops = {"open": 0, "close": 0, "getattr": 0, "statfs": 0} | (ops or {})
    return t


def ids(t, cfg=None):
    return [f.id for f in evaluate({"scratch": t}, CTX, cfg or config.Config())]


def test_small_rpc_boundaries():
    # 1000 small of 10000 = exactly 10 % and exactly 1000: fires (thresholds are inclusive)
    assert ids(totals(read={"4K": 500, "16K": 500, "1M": 9000})) == ["SMALL_RPC_READ"]
    # 32K is not small: the 16K bucket (8-16 KiB RPCs) is the largest counted
    assert ids(totals(read={"4K": 500, "32K": 500, "1M": 9000})) == []
    # 999 small RPCs is below the count floor even at 100 %
    assert ids(totals(write={"8K": 999})) == []
    # 9.99 %: below the share
    assert ids(totals(write={"4K": 1000, "1M": 9011})) == []


def test_enzo_table_fires_reads_not_writes_and_names_its_numbers():
    read = dict(zip(BUCKETS, [12243, 264, 56, 81, 242, 269, 543, 1812, 26572]))
    write = dict(zip(BUCKETS, [393, 62, 198, 155, 96, 74, 199, 595, 52606]))
    t = totals(read, write, ops={"open": 5303, "close": 5769, "getattr": 12460},
               read_bytes=54 * 10**9, write_bytes=56 * 10**9)
    flags = evaluate({"scratch": t}, CTX, config.Config())
    assert [f.id for f in flags] == ["OPEN_CLOSE_STORM", "SMALL_RPC_READ", "STAT_STORM"]
    small = flags[1]
    assert small.evidence == {"small_rpcs": 12563, "rpcs": 42082, "share": 0.2985, "max_rpc_bytes": 16384}
    assert "12,563 of 42,082 read RPCs (29.9%)" in small.finding
    storm = flags[0]
    assert storm.evidence["opens_per_gib"] == pytest.approx(5303 / (110e9 / GIB), abs=0.01)
    assert "5,303 opens and 5,769 closes" in storm.finding


def test_open_storm_needs_rate_or_density():
    # 2000 opens over 1 h moving 1 TiB: 2 opens/GiB, 0.56/s -> quiet
    assert ids(totals(ops={"open": 2000}, read_bytes=1 << 40)) == []
    # the same opens in 10 s: 200/s -> fires
    assert [f.id for f in evaluate({"scratch": totals(ops={"open": 2000}, read_bytes=1 << 40)},
                                   JobContext(10.0, 1), config.Config())] == ["OPEN_CLOSE_STORM"]


def test_stat_storm_and_statfs():
    lots = 1 << 50   # so that 5000 opens are not an open storm
    assert ids(totals(ops={"getattr": 10000, "open": 5000}, read_bytes=lots)) == ["STAT_STORM"]
    assert ids(totals(ops={"getattr": 10000, "open": 5001}, read_bytes=lots)) == []
    assert ids(totals(ops={"getattr": 10000})) == ["STAT_STORM"]       # no opens at all
    assert ids(totals(ops={"statfs": 1000})) == ["STATFS_STORM"]


def test_site_config_overrides_threshold(tmp_path):
    p = tmp_path / "config.toml"
    p.write_text("[flags.SMALL_RPC]\nmin_rpcs = 10\n")
    cfg = config.load(p)
    assert ids(totals(write={"8K": 999}), cfg) == ["SMALL_RPC_WRITE"]


@pytest.mark.parametrize("text, why", [
    ("[flags.SMALL_RPC]\nmin_rpc = 10\n", "unknown setting 'min_rpc'"),
    ("[flags.SMALL_RPC]\nmin_rpcs = 'ten'\n", "expected a number"),
    ("[flags\n", "config.toml"),
])
def test_bad_config_is_a_clear_error(tmp_path, text, why):
    p = tmp_path / "config.toml"
    p.write_text(text)
    with pytest.raises(ConfigError, match=why):
        config.load(p)


def ost_row(read=0, write=0, rrpcs=0, wrpcs=0, wait=None):
    return {"read_bytes": read, "write_bytes": write, "read_rpcs": rrpcs, "write_rpcs": wrpcs,
            "wait_us_mean": wait}


def fired(t, ctx=CTX, cfg=None):
    return [f.id for f in evaluate({"scratch": t}, ctx, cfg or config.Config())]


def test_metadata_rate_per_host_and_not_for_short_jobs():
    t = totals(ops={"open": 100, "getattr": 3_700_000}, read_bytes=1 << 50)
    t.hosts = {"n1": {"getattr": 3_600_000}, "n2": {"getattr": 100_000, "open": 100}}
    # 3.6 M ops on n1 in an hour = 1,000/s exactly: fires, naming the host
    flags = evaluate({"scratch": t}, CTX, config.Config())
    md = [f for f in flags if f.id == "METADATA_RATE"]
    assert md and md[0].evidence["busiest_host"] == "n1" and "1,000/s on n1" in md[0].finding
    t.hosts["n1"]["getattr"] = 3_599_000
    t.ops["getattr"] = 3_699_000
    assert "METADATA_RATE" not in fired(t)
    short = JobContext(elapsed_s=30.0, n_hosts=2, rates_judged=False)
    t.hosts["n1"]["getattr"] = 10**9
    assert "METADATA_RATE" not in fired(t, short)


def test_tiny_calls():
    assert fired(totals(write_bytes=100_000 * 4095, write_calls=100_000)) == ["TINY_CALLS"]
    assert fired(totals(write_bytes=100_000 * 4096, write_calls=100_000)) == []
    assert fired(totals(read_bytes=99_999 * 10, read_calls=99_999)) == []


def test_a_finding_whose_figures_add_up_past_int64_is_not_judged_and_said():
    # each OST's read and write bytes below 2^63, their sum on the top OST not: a job record
    # could not keep the finding's figures, and no job moves 8 EiB through one OST
    t = totals(read_bytes=(1 << 62) + GIB, write_bytes=(1 << 62) + GIB)
    t.ost_count = 16
    t.osts = {"OST0000": ost_row(read=1 << 62, write=1 << 62), "OST0001": ost_row(read=GIB, write=GIB)}
    issues = []
    assert evaluate({"scratch": t}, CTX, config.Config(), issues) == []
    [issue] = issues
    assert (issue.id, issue.host, issue.fs) == ("VALUE_TOO_LARGE", None, "scratch")
    assert "UNDER_STRIPED" in issue.detail and "not judged" in issue.detail
    t.osts["OST0000"]["write_bytes"] = (1 << 62) - 1 - 3 * GIB     # the job's sum just below: judged
    assert fired(t) == ["UNDER_STRIPED"]


def test_under_striped_and_over_striped():
    t = totals(read_bytes=20 * GIB)
    t.ost_count = 16
    t.osts = {"OST0000": ost_row(read=17 * GIB, rrpcs=17 * 1024), "OST0001": ost_row(read=3 * GIB, rrpcs=3 * 1024)}
    flags = evaluate({"scratch": t}, CTX, config.Config())
    assert [f.id for f in flags] == ["UNDER_STRIPED"] and "lfs setstripe -c 8" in flags[0].advice
    t.osts["OST0001"]["read_bytes"] = 5 * GIB          # 17/22 = 77 % < 80 %
    assert fired(t) == []
    small = totals(write_bytes=1 << 30)
    small.ost_count = 64
    small.osts = {f"OST{i:04x}": ost_row(write=1 << 20, wrpcs=32) for i in range(9)}   # 32 KiB mean
    assert fired(small) == ["OVER_STRIPED_SMALL_IO"]
    small.osts.popitem()                                                               # 8 OSTs
    assert fired(small) == []


def test_rank0_io():
    t = totals(write_bytes=10 * GIB)
    t.hosts = {"n0": {"read_bytes": 0, "write_bytes": 9 * GIB}, "n1": {"read_bytes": 0, "write_bytes": GIB // 3},
               "n2": {"read_bytes": 0, "write_bytes": GIB // 3}, "n3": {"read_bytes": 0, "write_bytes": GIB // 3}}
    assert fired(t) == ["RANK0_IO"]
    assert fired(t, JobContext(3600.0, 3)) == []      # fewer than 4 hosts


def test_readahead_waste_fsync_and_slow_ost():
    t = totals(read_bytes=2 * GIB)
    t.osts = {"OST0000": ost_row(read=3 * GIB, rrpcs=3072)}
    assert fired(t) == ["READAHEAD_WASTE"]
    t.osts["OST0000"]["read_bytes"] = 3 * GIB - 1
    assert fired(t) == []
    assert fired(totals(ops={"fsync": 1000}, write_bytes=100 * GIB)) == ["FSYNC_STORM"]
    assert fired(totals(ops={"fsync": 1000}, write_bytes=101 * GIB)) == []
    s = totals(read_bytes=3 << 20)
    s.osts = {"OST0000": ost_row(read=1 << 20, rrpcs=1, wait=1000.0), "OST0001": ost_row(read=1 << 20, rrpcs=1, wait=1200.0),
              "OST0002": ost_row(read=1 << 20, rrpcs=1, wait=30000.0)}
    flags = evaluate({"scratch": s}, CTX, config.Config())
    assert [f.id for f in flags] == ["SLOW_OST"] and "OST0002" in flags[0].finding and "not your code" in flags[0].why
    s.osts["OST0002"]["wait_us_mean"] = 3500.0       # 2.9x the median and under 10 ms
    assert fired(s) == []


def test_fs_trouble_names_target_and_host():
    t = totals()
    t.trouble = [{"host": "n3", "target": "scratch-OST0002", "reconnects": 2, "state": "FULL"},
                 {"host": "n1", "target": "scratch-MDT0000", "reconnects": 0, "state": "EVICTED"}]
    flags = evaluate({"scratch": t}, CTX, config.Config())
    assert [f.id for f in flags] == ["FS_TROUBLE"]
    assert "scratch-OST0002 on n3 reconnected 2x" in flags[0].finding
    assert "scratch-MDT0000 on n1 was EVICTED at the end" in flags[0].finding


# ---- a finding on a total left out -----------------------------------------------------------

def firing(flag_id: str) -> FsTotals:
    """Totals that fire flag_id, written out."""
    if flag_id == "SMALL_RPC_READ":
        return totals(read={"4K": 5000, "1M": 5000})
    if flag_id == "OPEN_CLOSE_STORM":
        return totals(ops={"open": 5000, "close": 5000}, read_bytes=GIB)
    if flag_id == "STAT_STORM":
        return totals(ops={"getattr": 50_000, "open": 10}, read_bytes=1 << 50)
    if flag_id == "STATFS_STORM":
        return totals(ops={"statfs": 5000})
    if flag_id == "TINY_CALLS":
        return totals(read_bytes=200_000 * 100, read_calls=200_000)
    if flag_id == "FSYNC_STORM":
        return totals(ops={"fsync": 5000}, write_bytes=GIB)
    if flag_id in ("READAHEAD_WASTE", "UNDER_STRIPED"):
        t = totals(read_bytes=GIB)
        t.ost_count = 8
        t.osts = {"OST0000": ost_row(read=20 * GIB, rrpcs=20 * 1024)}
        return t
    raise AssertionError(flag_id)


@pytest.mark.parametrize("flag_id, total", [
    ("SMALL_RPC_READ", "rpc.read"), ("OPEN_CLOSE_STORM", "ops.open"), ("OPEN_CLOSE_STORM", "write_bytes"),
    ("STAT_STORM", "ops.open"), ("STATFS_STORM", "ops.statfs"), ("TINY_CALLS", "read_bytes"),
    ("TINY_CALLS", "read_calls"), ("FSYNC_STORM", "write_bytes"), ("READAHEAD_WASTE", "read_bytes"),
    ("READAHEAD_WASTE", "osts.read_bytes"), ("UNDER_STRIPED", "osts.write_bytes"),
])
def test_a_finding_is_not_made_on_a_total_no_host_gave_and_said_on_one_some_hosts_gave(flag_id, total):
    assert flag_id in fired(firing(flag_id))
    t = firing(flag_id)
    t.left_out, t.not_read = {total: 3}, {total}
    if total.startswith("ops."):
        t.ops[total[4:]] = None
    elif total.startswith("rpc."):
        t.rpc[total[4:]] = None
    elif total.startswith("osts."):
        for o in t.osts.values():
            o[total[5:]] = None
    else:
        setattr(t, total, None)
    assert flag_id not in fired(t)
    partial = firing(flag_id)
    partial.left_out = {total: 3}
    [f] = [f for f in evaluate({"scratch": partial}, CTX, config.Config()) if f.id == flag_id]
    assert f.finding.endswith(("; 3 left out)", "values of 3 hosts left out)")) and f.evidence["left_out"] == {total: 3}
    assert total in f.rests_on


def test_tiny_calls_judges_a_direction_read_when_the_other_was_not():
    t = totals(write_bytes=200_000 * 100, write_calls=200_000)
    t.read_bytes, t.left_out, t.not_read = None, {"read_bytes": 1}, {"read_bytes"}
    [f] = evaluate({"scratch": t}, CTX, config.Config())
    assert (f.id, f.evidence["direction"], f.rests_on) == ("TINY_CALLS", "write", ("write_bytes", "write_calls"))
    assert "left out" not in f.finding


def test_a_target_whose_reconnects_were_not_read_is_said_so():
    t = totals()
    t.trouble = [{"host": "n1", "target": "scratch-OST0002", "reconnects": None, "state": "EVICTED"}]
    t.left_out = {"trouble": 1}
    [f] = evaluate({"scratch": t}, CTX, config.Config())
    assert f.finding.startswith("scratch-OST0002 on n1 reconnects not read and was EVICTED at the end")
    assert "values of 1 host left out" in f.finding


def test_slow_ost_against_a_median_wait_of_0_is_made_not_a_division_by_zero():
    """Most OSTs' requests waited 0 us: the report died of a ZeroDivisionError."""
    t = totals(read_bytes=3 << 20)
    t.osts = {f"OST000{i}": ost_row(read=1 << 20, rrpcs=1, wait=w) for i, w in enumerate((0.0, 0.0, 50_000.0))}
    [f] = evaluate({"scratch": t}, CTX, config.Config())
    assert f.id == "SLOW_OST" and f.finding == ("requests to OST0002 waited 50.0 ms on average, against a median "
                                                "of 0 ms of the 3 OSTs used")
