"""Golden formats: a small known state rendered per version must match text written by hand
from notes/lustre-formats.md (LF). Nothing here is produced by the simulator's own code: every
expected line was typed from the LF format strings (widths, TABs, omitted zeros, truncation).
"""

from __future__ import annotations

import pytest

from lustre_sim import formats
from lustre_sim.version import profile

NOW = 1_700_000_123_004_567_890          # ns: .004567890 -> usec 4567 (unpadded in <=2.9)
INIT = 1_700_000_000_000_000_001
BOOT = 1_699_000_000_000_000_000         # 2.15.0/2.15.1: monotonic = NOW - BOOT = 1000123.004567890

T = "\t"

LL = {
    "dirty_pages_hits": [7, 1, 1, 7, 7],
    "read_bytes": [3, 4096, 1048576, 1056768, 1099545182208],  # 4096, 4096, 1048576
    "write_bytes": [1, 100, 100, 100, 10000],
    "read": [3, 10, 500, 530, 250500],                         # 10, 20, 500 usec
    "open": [2, 100, 300, 400, 100000],
    "close": [2, 50, 70, 120, 7400],
    "getattr": [5, 2, 9, 25, 155],
    "statfs": [0, None, 0, 0, 0],                              # zero: the line is omitted
}

OSC = {
    "req_waittime": [3, 100, 2000, 2300, 4050000],
    "req_active": [3, 1, 2, 4, 6],
    "read_bytes": [2, 4096, 1048576, 1052672, 1099528404992],
    "write_bytes": [1, 1, 1, 1, 2**64 + 5],                     # u64 sumsq wraps
    "ost_read": [2, 200, 2000, 2200, 4040000],
    "ost_write": [0, None, 0, 0, 0],
    "obd_ping": [1, 100, 100, 100, 10000],
}

MD = {"close": [5, 1, 1, 5, 5], "intent_lock": [7, 1, 1, 7, 7], "getattr": [0, None, 0, 0, 0],
      "read_page": [2, 1, 1, 2, 2]}

RA = {"hits": [10, 1, 1, 10, 10], "readpage_not_consecutive": [3, 1, 1, 3, 3],
      "readahead_to_eof": [1, 1, 1, 1, 1], "wrong_page_from_grab_cache_page": [2, 1, 1, 2, 2]}


def hist(**buckets):
    h = [0] * 32
    for k, v in buckets.items():
        h[int(k[1:])] = v
    return h


OSC_HIST = {
    "hist": {
        "read_pages": hist(b0=2, b2=1, b8=5), "write_pages": hist(b8=3),
        "read_rif": hist(b1=4, b2=3, b3=1), "write_rif": hist(b1=3),
        "read_off": hist(b0=2, b3=1, b9=5), "write_off": hist(b0=3),
    },
    "gauges": {"r_in_flight": 0, "w_in_flight": 2, "dio_r_in_flight": 0, "dio_w_in_flight": 0,
               "pending_w": 17, "pending_r": 0},
    "rpc_init_ns": INIT,
    "lockless": {"read": 0, "write": 0, "truncate": 0}, "lockless_init_ns": INIT,
}

# -- expected text ---------------------------------------------------------------------------

HDR_NSECS = "snapshot_time             1700000123.004567890 secs.nsecs\n"
HDR_USECS = "snapshot_time             1700000123.4567 secs.usecs\n"
HDR_REAL3 = ("snapshot_time             1700000123.004567890 secs.nsecs\n"
             "start_time                1700000000.000000001 secs.nsecs\n"
             "elapsed_time              123.004567889 secs.nsecs\n")
HDR_MONO3 = ("snapshot_time             1000123.004567890 secs.nsecs\n"
             "start_time                0.000000000 secs.nsecs\n"
             "elapsed_time              1000123.004567890 secs.nsecs\n")

LLITE_OLD_BODY = ("dirty_pages_hits          7 samples [regs]\n"
                  "read_bytes                3 samples [bytes] 4096 1048576 1056768\n"
                  "write_bytes               1 samples [bytes] 100 100 100\n"
                  "open                      2 samples [regs]\n"
                  "close                     2 samples [regs]\n"
                  "getattr                   5 samples [regs]\n")


def llite_new_body(u):
    return ("read_bytes                3 samples [bytes] 4096 1048576 1056768 1099545182208\n"
            "write_bytes               1 samples [bytes] 100 100 100 10000\n"
            f"read                      3 samples [{u}] 10 500 530 250500\n"
            f"open                      2 samples [{u}] 100 300 400 100000\n"
            f"close                     2 samples [{u}] 50 70 120 7400\n"
            f"getattr                   5 samples [{u}] 2 9 25 155\n")


LLITE = {
    "1.8.9": HDR_USECS + LLITE_OLD_BODY,
    "2.10.8": HDR_NSECS + LLITE_OLD_BODY,
    "2.12.9": HDR_NSECS + LLITE_OLD_BODY,
    "2.15.1": HDR_MONO3 + llite_new_body("usec"),
    "2.15.4": HDR_REAL3 + llite_new_body("usec"),
    "2.16.0": HDR_REAL3 + llite_new_body("usecs"),
}


def osc_body(u):
    return (f"req_waittime              3 samples [{u}] 100 2000 2300 4050000\n"
            "req_active                3 samples [reqs] 1 2 4 6\n"
            "read_bytes                2 samples [bytes] 4096 1048576 1052672 1099528404992\n"
            "write_bytes               1 samples [bytes] 1 1 1 5\n"
            f"ost_read                  2 samples [{u}] 200 2000 2200 4040000\n"
            f"obd_ping                  1 samples [{u}] 100 100 100 10000\n")


OSC_STATS = {
    "1.8.9": HDR_USECS + osc_body("usec"),
    "2.10.8": HDR_NSECS + osc_body("usec"),
    "2.12.9": HDR_NSECS + osc_body("usec"),
    "2.15.1": HDR_MONO3 + osc_body("usec"),
    "2.15.4": HDR_REAL3 + osc_body("usec"),
    "2.16.0": HDR_REAL3 + osc_body("usecs"),
}

MD_BODY = ("close                     5 samples [reqs]\n"
           "intent_lock               7 samples [reqs]\n"
           "read_page                 2 samples [reqs]\n")
MD_STATS = {"2.10.8": HDR_NSECS + MD_BODY, "2.12.9": HDR_NSECS + MD_BODY,
            "2.15.4": HDR_REAL3 + MD_BODY, "2.16.0": HDR_REAL3 + MD_BODY}

RA_OLD = ("hits                      10 samples [pages]\n"
          "readpage not consecutive  3 samples [pages]\n"
          "read-ahead to EOF         1 samples [pages]\n"
          "wrong page from grab_cache_page 2 samples [pages]\n")
RA_NEW = ("hits                      10 samples [pages]\n"
          "readpage_not_consecutive  3 samples [pages]\n"
          "readahead_to_eof          1 samples [pages]\n"
          "wrong_page_from_grab_cache_page 2 samples [pages]\n")
RA_STATS = {"2.12.9": HDR_NSECS + RA_OLD, "2.15.4": HDR_REAL3 + RA_NEW}

SEC = "\n\t\t\tread\t\t\twrite\n"
PAGES = (SEC + "pages per rpc         rpcs   % cum % |       rpcs   % cum %\n"
         "1:\t\t         2  25  25   |          0   0   0\n"
         "2:\t\t         0   0  25   |          0   0   0\n"
         "4:\t\t         1  12  37   |          0   0   0\n"
         "8:\t\t         0   0  37   |          0   0   0\n"
         "16:\t\t         0   0  37   |          0   0   0\n"
         "32:\t\t         0   0  37   |          0   0   0\n"
         "64:\t\t         0   0  37   |          0   0   0\n"
         "128:\t\t         0   0  37   |          0   0   0\n"
         "256:\t\t         5  62 100   |          3 100 100\n")
RIF_HEAD = SEC + "rpcs in flight        rpcs   % cum % |       rpcs   % cum %\n"
RIF_ROW0 = "0:\t\t         0   0   0   |          0   0   0\n"
RIF_REST = ("1:\t\t         4  50  50   |          3 100 100\n"
            "2:\t\t         3  37  87   |          0   0 100\n"
            "3:\t\t         1  12 100   |          0   0 100\n")
OFFSET = (SEC + "offset                rpcs   % cum % |       rpcs   % cum %\n"
          "0:\t\t         2  25  25   |          3 100 100\n"
          "1:\t\t         0   0  25   |          0   0 100\n"
          "2:\t\t         0   0  25   |          0   0 100\n"
          "4:\t\t         1  12  37   |          0   0 100\n"
          "8:\t\t         0   0  37   |          0   0 100\n"
          "16:\t\t         0   0  37   |          0   0 100\n"
          "32:\t\t         0   0  37   |          0   0 100\n"
          "64:\t\t         0   0  37   |          0   0 100\n"
          "128:\t\t         0   0  37   |          0   0 100\n"
          "256:\t\t         5  62 100   |          0   0 100\n")
GAUGES = ("read RPCs in flight:  0\n"
          "write RPCs in flight: 2\n"
          "pending write pages:  17\n"
          "pending read pages:   0\n")
RPC_STATS = {
    "1.8.9": ("snapshot_time:            1700000123.4567 (secs.usecs)\n"
              "read RPCs in flight:      0\n"
              "write RPCs in flight:     2\n"
              "dio read RPCs in flight:  0\n"
              "dio write RPCs in flight: 0\n"
              "pending write pages:      17\n"
              "pending read pages:       0\n" + PAGES + RIF_HEAD + RIF_ROW0 + RIF_REST + OFFSET),
    "2.9.0": ("snapshot_time:         1700000123.4567 (secs.usecs)\n"
              + GAUGES + PAGES + RIF_HEAD + RIF_ROW0 + RIF_REST + OFFSET),
    "2.10.8": ("snapshot_time:         1700000123.004567890 (secs.nsecs)\n"
               + GAUGES + PAGES + RIF_HEAD + RIF_ROW0 + RIF_REST + OFFSET),
    "2.12.9": ("snapshot_time:         1700000123.004567890 (secs.nsecs)\n"
               + GAUGES + PAGES + RIF_HEAD + RIF_ROW0 + RIF_REST + OFFSET),
    "2.15.1": ("snapshot_time            : 1000123.004567890 secs.nsecs\n"
               "start_time               : 999999.999999999 secs.nsecs\n"      # after a clear
               "elapsed_time             : 123.004567891 secs.nsecs\n"
               + GAUGES + PAGES + RIF_HEAD + RIF_REST + OFFSET),
    "2.15.4": ("snapshot_time:            1700000123.004567890 secs.nsecs\n"
               "start_time:               1700000000.000000001 secs.nsecs\n"
               "elapsed_time:             123.004567889 secs.nsecs\n"
               + GAUGES + PAGES + RIF_HEAD + RIF_REST + OFFSET),
}

VERSIONS = ["1.8.9", "2.10.8", "2.12.9", "2.15.1", "2.15.4", "2.16.0"]


def show(a: str, b: str) -> str:
    """A readable diff for assertion messages."""
    import difflib
    return "\n".join(difflib.unified_diff(b.splitlines(), a.splitlines(), "expected", "rendered",
                                          lineterm=""))


@pytest.mark.parametrize("version", VERSIONS)
def test_llite_stats(version):
    p = profile(version)
    got = formats.render_llite_stats(p, {"stats": LL, "init_ns": INIT}, NOW, BOOT)
    assert got == LLITE[version], show(got, LLITE[version])


@pytest.mark.parametrize("version", VERSIONS)
def test_osc_stats(version):
    got = formats.render_ptlrpc_stats(profile(version), OSC, NOW, INIT, BOOT)
    assert got == OSC_STATS[version], show(got, OSC_STATS[version])


@pytest.mark.parametrize("version", sorted(MD_STATS))
def test_md_stats(version):
    got = formats.render_md_stats(profile(version), MD, NOW, INIT, BOOT)
    assert got == MD_STATS[version], show(got, MD_STATS[version])


@pytest.mark.parametrize("version", sorted(RA_STATS))
def test_read_ahead_stats_names(version):
    got = formats.render_ra_stats(profile(version), RA, NOW, INIT, BOOT)
    assert got == RA_STATS[version], show(got, RA_STATS[version])


@pytest.mark.parametrize("version", sorted(RPC_STATS))
def test_rpc_stats(version):
    dev = dict(OSC_HIST)
    if version == "2.15.1":           # cl_stats_init set by a clear, monotonic like snapshot_time
        dev = {**dev, "rpc_init_ns": BOOT + 999_999_999_999_999}
    got = formats.render_rpc_stats(profile(version), dev, NOW, BOOT)
    assert got == RPC_STATS[version], show(got, RPC_STATS[version])


def test_rpc_stats_2151_never_cleared_starts_at_zero():
    got = formats.render_rpc_stats(profile("2.15.1"), {**OSC_HIST, "rpc_init_ns": None}, NOW, BOOT)
    assert got.startswith("snapshot_time            : 1000123.004567890 secs.nsecs\n"
                          "start_time               : 0.000000000 secs.nsecs\n"
                          "elapsed_time             : 1000123.004567890 secs.nsecs\n")


@pytest.mark.parametrize("version,rif_first", [("2.12.9", "0"), ("2.15.4", "1")])
def test_rpc_stats_empty_prints_first_row_only(version, rif_first):
    empty = {"hist": {k: [0] * 32 for k in OSC_HIST["hist"]}, "gauges": OSC_HIST["gauges"],
             "rpc_init_ns": INIT}
    got = formats.render_rpc_stats(profile(version), empty, NOW, BOOT)
    body = got[got.index("\n\n") + 1:]
    assert body == (SEC + "pages per rpc         rpcs   % cum % |       rpcs   % cum %\n"
                    "1:\t\t         0   0   0   |          0   0   0\n"
                    + RIF_HEAD + f"{rif_first}:\t\t         0   0   0   |          0   0   0\n"
                    + SEC + "offset                rpcs   % cum % |       rpcs   % cum %\n"
                    "0:\t\t         0   0   0   |          0   0   0\n")


def test_rpc_stats_wide_count_pushes_columns():
    h = {k: [0] * 32 for k in OSC_HIST["hist"]}
    h["read_pages"][8] = 12345678901
    got = formats.render_rpc_stats(profile("2.12.9"), {**OSC_HIST, "hist": h}, NOW, BOOT)
    assert "256:\t\t12345678901 100 100   |          0   0   0\n" in got
    assert "1:\t\t         0   0   0   |          0   0   0\n" in got


@pytest.mark.parametrize("version,expected", [
    ("2.10.8", "snapshot_time:         1700000123.004567890 (secs.nsecs)\n"
               "lockless_write_bytes\t\t0\nlockless_read_bytes\t\t0\nlockless_truncate\t\t0\n"),
    ("2.15.4", "snapshot_time:            1700000123.004567890 secs.nsecs\n"
               "start_time:               1700000000.000000001 secs.nsecs\n"
               "elapsed_time:             123.004567889 secs.nsecs\n"
               "lockless_write_bytes\t\t0\nlockless_read_bytes\t\t0\n"),
])
def test_osc_lockless_stats(version, expected):
    assert formats.render_osc_lockless(profile(version), OSC_HIST, NOW, BOOT) == expected


def test_state_file():
    imp = {"state": "EVICTED", "history": [[1700000000, "CONNECTING"], [1700000000, "FULL"],
                                           [1700000100, "EVICTED"]]}
    assert formats.render_state(profile("2.15.4"), imp) == (
        "current_state: EVICTED\nstate_history:\n"
        " - [ 1700000000, CONNECTING ]\n - [ 1700000000, FULL ]\n - [ 1700000100, EVICTED ]\n")


@pytest.mark.parametrize("version,path,text", [
    ("1.8.9", "proc/fs/lustre/version", "lustre: 1.8.9\nkernel: patchless_client\nbuild:  "),
    ("2.9.0", "proc/fs/lustre/version", "lustre: 2.9.0\n"),
    ("2.10.8", "sys/fs/lustre/version", "2.10.8\n"),
    ("2.14.0_ddn133", "sys/fs/lustre/version", "2.14.0_ddn133\n"),
    ("2.15.4", "sys/fs/lustre/version", "2.15.4\n"),
])
def test_version_file(version, path, text):
    p = profile(version)
    assert p.version_path == path
    got = p.version_text()
    if text.endswith("build:  "):
        assert got.startswith(text) and got.count("\n") == 3
    else:
        assert got == text


def test_counter_name_column_is_25_wide():
    # LF §2: "%-25s %lld samples [%s]" -> the count starts in column 27 (1-based)
    for line in LLITE["2.15.4"].splitlines()[3:]:
        assert line[25] == " " and line[26].isdigit(), line
