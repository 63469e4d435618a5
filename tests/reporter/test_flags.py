import pytest

from lustre_jobreport import config
from lustre_jobreport.aggregate import FsTotals
from lustre_jobreport.errors import ConfigError
from lustre_jobreport.flags import JobContext, evaluate

GIB = 1 << 30
CTX = JobContext(elapsed_s=3600.0, n_hosts=4)
BUCKETS = ["4K", "8K", "16K", "32K", "64K", "128K", "256K", "512K", "1M", "2M"]


def totals(read=None, write=None, ops=None, read_bytes=0, write_bytes=0):
    t = FsTotals("scratch", read_bytes=read_bytes, write_bytes=write_bytes)
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
