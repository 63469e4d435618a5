"""Golden formats of the layouts added for ISSUE 4: mdc rpc_stats (2.8+, "%%" in 2.16+), the
2.17 rpc_stats (DIO gauge, RPC latency section, debugfs), 35-column names (master after
2.17.54), %lld sums past 2^63, read_ahead_stats readahead_pages (2.16), LNet stats. As in
test_sim_formats.py, every expected line was typed from notes/lustre-formats.md (LF), not
produced by the simulator.
"""

from __future__ import annotations

import pytest

from lustre_sim import SimClient, formats
from lustre_sim.version import profile

from kit import simreader as rd

NOW = 1_700_000_123_004_567_890
INIT = 1_700_000_000_000_000_001
BOOT = 1_699_000_000_000_000_000
SEC = "\n\t\t\tread\t\t\twrite\n"

MDC = {"stats": {"mds_reint": [7, 1, 9, 30, 150], "mds_close": [5, 2, 4, 15, 50],
                 "mds_getattr": [3, 1, 1, 3, 3]},
       "gauges": {"r_in_flight": 0, "w_in_flight": 1, "dio_r_in_flight": 0, "dio_w_in_flight": 0,
                  "pending_w": 0, "pending_r": 0},
       "stats_init_ns": INIT}

MOD_ROWS = ("0:\t\t         0   0   0\n"
            "1:\t\t        12 100 100\n")
EMPTY_OSC_PART = ("\nread RPCs in flight:  0\nwrite RPCs in flight: 1\n"
                  "pending write pages:  0\npending read pages:   0\n"
                  + SEC + "pages per rpc         rpcs   % cum % |       rpcs   % cum %\n"
                  "1:\t\t         0   0   0   |          0   0   0\n"
                  + SEC + "rpcs in flight        rpcs   % cum % |       rpcs   % cum %\n")

MDC_RPC = {
    # 2.8-2.9: "%lu.%lu (secs.usecs)", no DoM block
    "2.9.0": ("snapshot_time:         1700000123.4567 (secs.usecs)\n"
              "modify_RPCs_in_flight:  0\n"
              "\n\t\t\tmodify\n"
              "rpcs in flight        rpcs   % cum %\n" + MOD_ROWS),
    # 2.10-2.14: %9lu nsec, SPACE padded; 2.12+ osc-style DoM block, rpcs in flight row 0
    "2.12.9": ("snapshot_time:         1700000123.  4567890 (secs.nsecs)\n"
               "modify_RPCs_in_flight:  0\n"
               "\n\t\t\tmodify\n"
               "rpcs in flight        rpcs   % cum %\n" + MOD_ROWS + EMPTY_OSC_PART
               + "0:\t\t         0   0   0   |          0   0   0\n"
               + SEC + "offset                rpcs   % cum % |       rpcs   % cum %\n"
               "0:\t\t         0   0   0   |          0   0   0\n"),
    # 2.15.2+: the 3-line colon header
    "2.15.4": ("snapshot_time:            1700000123.004567890 secs.nsecs\n"
               "start_time:               1700000000.000000001 secs.nsecs\n"
               "elapsed_time:             123.004567889 secs.nsecs\n"
               "modify_RPCs_in_flight:  0\n"
               "\n\t\t\tmodify\n"
               "rpcs in flight        rpcs   % cum %\n" + MOD_ROWS + EMPTY_OSC_PART
               + "1:\t\t         0   0   0   |          0   0   0\n"
               + SEC + "offset                rpcs   % cum % |       rpcs   % cum %\n"
               "0:\t\t         0   0   0   |          0   0   0\n"),
    # 2.16+: the modify header printed with a literal "%%"
    "2.16.0": ("snapshot_time:            1700000123.004567890 secs.nsecs\n"
               "start_time:               1700000000.000000001 secs.nsecs\n"
               "elapsed_time:             123.004567889 secs.nsecs\n"
               "modify_RPCs_in_flight:  0\n"
               "\n\t\t\tmodify\n"
               "rpcs in flight        rpcs   %% cum %%\n" + MOD_ROWS + EMPTY_OSC_PART
               + "1:\t\t         0   0   0   |          0   0   0\n"
               + SEC + "offset                rpcs   % cum % |       rpcs   % cum %\n"
               "0:\t\t         0   0   0   |          0   0   0\n"),
}


@pytest.mark.parametrize("version", sorted(MDC_RPC))
def test_mdc_rpc_stats(version):
    got = formats.render_mdc_rpc_stats(profile(version), MDC, NOW, BOOT)
    assert got == MDC_RPC[version]


def test_mdc_rpc_stats_needs_28():
    assert not profile("2.7.0").has_mdc_rpc_stats and profile("2.8.0").has_mdc_rpc_stats


def hist(**b):
    h = [0] * 32
    for k, v in b.items():
        h[int(k[1:])] = v
    return h


OSC_217 = {
    "hist": {"read_pages": hist(b0=1), "write_pages": hist(b2=3), "read_rif": hist(b1=1),
             "write_rif": hist(b1=3), "read_off": hist(b0=1), "write_off": hist(b0=3)},
    "gauges": {"r_in_flight": 0, "w_in_flight": 1, "dio_r_in_flight": 2, "dio_w_in_flight": 1,
               "pending_w": 0, "pending_r": 0},
    "rpc_init_ns": INIT,
    # ost_read: one sample of 3 us; ost_write: 3 samples, min 100 max 900, mean of the rest 200
    "stats": {"ost_read": [1, 3, 3, 3, 9], "ost_write": [3, 100, 900, 1200, 860000]},
}


def test_rpc_stats_217_dio_line_and_latency_section():
    got = formats.render_rpc_stats(profile("2.17.0"), OSC_217, NOW, BOOT)
    assert got == (
        "snapshot_time:            1700000123.004567890 secs.nsecs\n"
        "start_time:               1700000000.000000001 secs.nsecs\n"
        "elapsed_time:             123.004567889 secs.nsecs\n"
        "read RPCs in flight:  0\n"
        "write RPCs in flight: 1\n"
        "DIO RPCs in flight: 3\n"
        "pending write pages:  0\n"
        "pending read pages:   0\n"
        + SEC + "pages per rpc         rpcs   % cum % |       rpcs   % cum %\n"
        "1:\t\t         1 100 100   |          0   0   0\n"
        "2:\t\t         0   0 100   |          0   0   0\n"
        "4:\t\t         0   0 100   |          3 100 100\n"
        + SEC + "rpcs in flight        rpcs   % cum % |       rpcs   % cum %\n"
        "1:\t\t         1 100 100   |          3 100 100\n"
        + SEC + "offset                rpcs   % cum % |       rpcs   % cum %\n"
        "0:\t\t         1 100 100   |          3 100 100\n"
        + SEC + "RPC latency (us)       count   % cum % |       count   % cum %\n"
        "0:\t\t         0   0   0   |          0   0   0\n"
        "1:\t\t         0   0   0   |          0   0   0\n"
        "2:\t\t         1 100 100   |          0   0   0\n"     # 3 us: [2, 4)
        "4:\t\t         0   0 100   |          0   0   0\n"
        "8:\t\t         0   0 100   |          0   0   0\n"
        "16:\t\t         0   0 100   |          0   0   0\n"
        "32:\t\t         0   0 100   |          0   0   0\n"
        "64:\t\t         0   0 100   |          1  33  33\n"    # min 100 us
        "128:\t\t         0   0 100   |          1  33  66\n"   # the third, 200 us
        "256:\t\t         0   0 100   |          0   0  66\n"
        "512:\t\t         0   0 100   |          1  33 100\n")  # max 900 us


def test_rpc_stats_216_has_neither():
    got = formats.render_rpc_stats(profile("2.16.0"), OSC_217, NOW, BOOT)
    assert "DIO RPCs" not in got and "RPC latency" not in got


def test_35_column_names_after_21754():
    p = profile("2.17.55")
    got = formats.render_stats(p, [("open", "lat", 4), ("read_bytes", "bytes", 4)],
                               {"open": [2, 100, 300, 400, 100000], "read_bytes": [1, 5, 5, 5, 25]},
                               NOW, INIT, BOOT)
    assert got == ("snapshot_time                       1700000123.004567890 secs.nsecs\n"
                   "start_time                          1700000000.000000001 secs.nsecs\n"
                   "elapsed_time                        123.004567889 secs.nsecs\n"
                   "open                                2 samples [usecs] 100 300 400 100000\n"
                   "read_bytes                          1 samples [bytes] 5 5 5 25\n")
    assert profile("2.17.0").name_width == 25


def test_lld_sums_past_int64_max_print_negative():
    # LF §2: count/min/max/sum are %lld, sumsq %llu; the 2.16 sample's INT64_MAX stays as is
    line = formats.counter_line("write_bytes", [3, 4096, 2**63 + 10, 2**64 - 4096, 2**64 + 7],
                                "bytes", 4)
    assert line == ("write_bytes               3 samples [bytes] 4096 -9223372036854775798 "
                    "-4096 7\n")
    assert formats.counter_line("openclosetime", [5, 0, 2**63 - 1, 2**63 - 1, 2**63 - 1], "usecs", 4) == \
        ("openclosetime             5 samples [usecs] 0 9223372036854775807 9223372036854775807 "
         "9223372036854775807\n")


def test_read_ahead_pages_216_has_min_max_sum():
    ra = {"hits": [10, 1, 1, 10, 10], "readahead_pages": [4, 16, 1024, 1100, 1]}
    got = formats.render_ra_stats(profile("2.16.0"), ra, NOW, INIT, BOOT)
    assert got.endswith("hits                      10 samples [pages]\n"
                        "readahead_pages           4 samples [pages] 16 1024 1100\n")
    assert "readahead_pages" not in formats.render_ra_stats(profile("2.15.4"), ra, NOW, INIT, BOOT)


@pytest.mark.parametrize("version,path", [("1.8.9", "proc/sys/lnet/stats"),
                                          ("2.10.8", "proc/sys/lnet/stats"),
                                          ("2.12.9", "sys/kernel/debug/lnet/stats"),
                                          ("2.17.0", "sys/kernel/debug/lnet/stats")])
def test_lnet_stats_file(tmp_path, version, path):
    c = SimClient.create(tmp_path / "t", version=version, filesystems=[("scratch", 2, 1)],
                         background=False, clock=1_700_000_000)
    text = (c.root / path).read_text()
    f = text.split()
    assert text.endswith("\n") and text.count("\n") == 1 and len(f) == 11 and all(x.isdigit() for x in f)
    # no model: counts follow the import RPC counters, one request + one reply each
    rpcs = sum(rd.count(s, "req_waittime") for s in list(rd.snapshot(c.root)["osc_stats"].values())
               + list(rd.snapshot(c.root)["mdc_stats"].values()))
    assert int(f[3]) == int(f[4]) == rpcs > 0


def test_217_paths(tmp_path):
    """LF §0, 2.17 column: rpc_stats, osc_stats, import, state and mdc stats/rpc_stats in
    debugfs; md_stats still in /proc."""
    c = SimClient.create(tmp_path / "t", version="2.17.0", filesystems=[("scratch", 1, 1)],
                         background=False)
    sbi = c.mount_id("scratch")
    dbg, proc = c.root / "sys/kernel/debug/lustre", c.root / "proc/fs/lustre"
    osc, mdc = f"osc/scratch-OST0000-osc-{sbi}", f"mdc/scratch-MDT0000-mdc-{sbi}"
    for rel in ("rpc_stats", "osc_stats", "import", "state", "stats"):
        assert (dbg / osc / rel).is_file() and not (proc / osc / rel).exists(), rel
    for rel in ("rpc_stats", "import", "state", "stats"):
        assert (dbg / mdc / rel).is_file() and not (proc / mdc / rel).exists(), rel
    assert (proc / mdc / "md_stats").is_file() and not (dbg / mdc / "md_stats").exists()


def test_29_is_proc_only_with_one_line_version(tmp_path):
    c = SimClient.create(tmp_path / "t", version="2.9.0", filesystems=[("scratch", 1, 1)],
                         background=False)
    files = c.paths()
    assert not [f for f in files if f.startswith("sys/")]
    assert (c.root / "proc/fs/lustre/version").read_text() == "lustre: 2.9.0\n"
    assert any(f.endswith("/rpc_stats") and "/mdc/" in f for f in files)
