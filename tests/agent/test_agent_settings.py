"""The settings and host identity a job record keeps, so that a tunable, kernel or OS image change
can be told from a Lustre client change: osc max_dirty_mb/checksums, the llite read-ahead,
checksum and hybrid I/O tunables, the hybrid I/O counters of llite stats, the kernel release and
the OS image (os-release). Each on small trees made by hand here (copies of the agent's fixture
trees, pmda-lustre/tests/trees, edited), through a private pmcd and PMAPI.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest

from kit.privpmcd import AGENT_DIR, PrivatePmcd

from kit.agentfetch import fetch_all

P = "lustreclient."
TREES = AGENT_DIR / "tests" / "trees"
HYBRID = [f"llite.hybrid.{m}" for m in ("read_bytes", "write_bytes", "read_calls", "write_calls",
                                        "noswitch", "readsize_switch", "writesize_switch")]
LLITE_TUN = ["llite.max_read_ahead_mb", "llite.max_read_ahead_per_file_mb", "llite.max_read_ahead_whole_mb",
             "llite.checksums", "llite.hybrid_io", "llite.hybrid_io_read_threshold_bytes",
             "llite.hybrid_io_write_threshold_bytes"]
NEW = ["kernel", "os", "osc.max_dirty_mb", "osc.checksums", *LLITE_TUN, *HYBRID]


def tree_copy(tmp: Path, layout: str) -> Path:
    dst = tmp / f"tree-{layout}"
    shutil.copytree(TREES / layout, dst, symlinks=True)
    return dst


class Agent:
    """One agent (with its -D appl0 read trace) on a tree, kept across fetches."""

    def __init__(self, tmp: Path, tree: Path, *args: str):
        self.pmcd = PrivatePmcd(tmp / f"pmcd-{tree.name}", tree, extra_agent_args=("-D", "appl0", *args))
        self.log = tmp / f"pmcd-{tree.name}" / "lustreclient.log"

    def __enter__(self) -> "Agent":
        self.pmcd.start()
        return self

    def __exit__(self, *exc) -> None:
        self.pmcd.stop()

    def fetch(self, *metrics: str) -> dict:
        got, _ = fetch_all(self.pmcd.spec, names=[P + m for m in metrics])
        return {k[len(P):]: v for k, v in got.items()}

    def reads(self, *metrics: str) -> tuple[dict, list[str]]:
        """Fetch; the values and the ROOT-relative paths the agent read (the trace)."""
        before = self.log.stat().st_size
        got = self.fetch(*metrics)
        time.sleep(0.05)
        with open(self.log) as f:
            f.seek(before)
            return got, re.findall(r" read \S+ -> \d+ \[(\S+)\]", f.read())


def test_every_new_metric_per_layout(tmp_path):
    """What each version's files give (the fixture trees hold each version's real layout:
    /proc up to 2.11, checksums in sysfs and read-ahead in debugfs on 2.12, all sysfs later;
    checksum_pages before 2.12; hybrid I/O files and counters from 2.16). A file a version does
    not have is no value, never 0."""
    want = {
        "1.8": {"kernel": {"": "2.6.18-348.el5"},
                "llite.max_read_ahead_mb": {"lustre": 40, "scratch": 40},        # "40.25"
                "llite.max_read_ahead_per_file_mb": {"lustre": 40, "scratch": 0},  # "0.5"
                "llite.checksums": {"lustre": 1, "scratch": 0},                    # checksum_pages
                "osc.max_dirty_mb": {"lustre-OST0000": 32, "lustre-OST0001": 31, "scratch-OST0000": 4}},
        "2.12": {"os": {"": "Rocky Linux 8.9"},                                    # usr/lib only
                 "llite.max_read_ahead_mb": {"lustre": 1024, "work": 512},         # sysfs, debugfs
                 "llite.checksums": {"lustre": 0, "work": 0}},
        "2.15": {"os": {"": "Rocky Linux 8.9 (Green Obsidian) (compute-node 2024.03)"},
                 "llite.max_read_ahead_whole_mb": {"proj": 2, "scratch": 64}},
        "2.16": {"llite.hybrid_io": {"ddn": 1, "home": 0},
                 "llite.hybrid.noswitch": {"ddn": 12, "home": 0},   # 2.16.0: absent line = 0
                 "llite.hybrid.writesize_switch": {"ddn": 7, "home": 0},
                 "llite.hybrid_io_read_threshold_bytes": {"ddn": 8388608, "home": 8388608}},
        "2.17": {"llite.hybrid.read_bytes": {"work": 67108864}, "llite.hybrid.read_calls": {"work": 3},
                 "llite.hybrid.write_bytes": {"work": 12582912}, "llite.hybrid.noswitch": {"work": 0},
                 "os": {"": "Debian GNU/Linux 12 (bookworm)"}, "kernel": {"": "6.1.0-18-amd64"}},
    }
    # no value at all on these layouts
    absent = {
        "1.8": ["os", "llite.hybrid_io", "llite.hybrid_io_read_threshold_bytes", *HYBRID],
        "2.12": ["llite.hybrid_io", *HYBRID],
        "2.15": ["llite.hybrid_io", "llite.hybrid_io_write_threshold_bytes", *HYBRID],
        "2.16": ["llite.hybrid.read_bytes", "llite.hybrid.write_calls"],   # bytes lines: 2.16.52+
    }
    for layout, metrics in want.items():
        args = ("-P", "64K") if layout == "2.16" else ()
        with Agent(tmp_path, tree_copy(tmp_path, layout), *args) as a:
            got = a.fetch(*NEW)
        for m, v in metrics.items():
            assert got.get(m) == v, (layout, m, got.get(m))
        for m in absent.get(layout, []):
            assert m not in got, (layout, m, got[m])


def test_os_release_follows_links_only_inside_the_root(tmp_path):
    """os-release(5): /etc/os-release, usually a relative link to ../usr/lib/os-release,
    followed while it stays inside ROOT; a link leading out (absolute, or up past ROOT) is
    refused and ROOT/usr/lib/os-release read instead. Read at every fetch: an in-place upgrade
    shows without restarting the agent; gone files give no value."""
    t = tree_copy(tmp_path, "2.15")
    etc, lib = t / "etc" / "os-release", t / "usr" / "lib" / "os-release"
    outside = tmp_path / "outside-os-release"
    outside.write_text('PRETTY_NAME="the host outside the tree"\n')
    with Agent(tmp_path, t) as a:
        got, read = a.reads("os", "agent.fetch.files_read", "agent.fetch.read_failures")
        assert got["os"] == {"": "Rocky Linux 8.9 (Green Obsidian) (compute-node 2024.03)"}
        assert read == ["etc/os-release"]
        assert got["agent.fetch.files_read"] == {"": 1} and got["agent.fetch.read_failures"] == {"": 0}

        # a link out of the tree, absolute or relative: refused, usr/lib read instead
        for target in (str(outside), os.path.relpath(outside, etc.parent)):
            etc.unlink()
            etc.symlink_to(target)
            got, read = a.reads("os", "agent.fetch.read_failures")
            assert got["os"] == {"": "Rocky Linux 8.9 (Green Obsidian) (compute-node 2024.03)"}, target
            assert read == ["usr/lib/os-release"] and got["agent.fetch.read_failures"] == {"": 1}

        # a regular /etc/os-release, then upgraded in place
        etc.unlink()
        etc.write_text("NAME='Rocky Linux'\nVERSION_ID=\"9.3\"\nIMAGE_VERSION=2024.09\n")
        assert a.fetch("os")["os"] == {"": "Rocky Linux 9.3 (2024.09)"}
        etc.write_text("NAME='Rocky Linux'\nVERSION_ID=\"9.4\"\nIMAGE_VERSION=2025.01\n")
        assert a.fetch("os")["os"] == {"": "Rocky Linux 9.4 (2025.01)"}

        # garbage, then nothing at all: no value (never an empty string)
        etc.write_text("\x00\x01 not an os-release file\n")
        assert "os" not in a.fetch("os", "kernel")
        etc.unlink()
        lib.unlink()
        got = a.fetch("os", "kernel")
        assert "os" not in got and got["kernel"] == {"": "4.18.0-513.24.1.el8_9.x86_64"}
        (t / "proc" / "sys" / "kernel" / "osrelease").unlink()
        assert a.fetch("os", "kernel", "pagesize").keys() == {"pagesize"}


def test_hybrid_counters_only_where_the_version_has_them(tmp_path):
    """llite stats omit zero counters, so an absent hybrid line reads 0 only on a version that
    has the counter (switch counts 2.15.64+, i.e. 2.16.0; hybrid_read/write_bytes 2.16.52+,
    i.e. 2.17); before that, no value. The version file says which, or a hybrid line in the
    file itself (a vendor backport); with neither, no value."""
    t = tree_copy(tmp_path, "2.15")
    version = t / "sys" / "fs" / "lustre" / "version"
    stats = t / "sys" / "kernel" / "debug" / "lustre" / "llite" / "scratch-ffff8c2a4b9e0000" / "stats"
    with Agent(tmp_path, t) as a:
        def hyb():
            got = a.fetch(*HYBRID)
            return {m.split(".")[-1]: v.get("scratch") for m, v in got.items()}

        assert hyb() == {}                                              # 2.15.4
        version.write_text("2.16.0\n")
        assert hyb() == {"noswitch": 0, "readsize_switch": 0, "writesize_switch": 0}
        version.write_text("2.17.0\n")
        assert hyb() == dict.fromkeys(["read_bytes", "write_bytes", "read_calls", "write_calls",
                                       "noswitch", "readsize_switch", "writesize_switch"], 0)
        # a 2.14 vendor build that backported the switch counts: its own lines tell
        version.write_text("2.14.0_ddn133\n")
        text = stats.read_text()
        stats.write_text(text + "hybrid_readsize_switch    5 samples [reqs]\n")
        assert hyb() == {"noswitch": 0, "readsize_switch": 5, "writesize_switch": 0}
        stats.write_text(text + "hybrid_write_bytes        2 samples [bytes] 1048576 3145728 4194304"
                                " 10995116277760\n")
        assert hyb() == {"read_bytes": 0, "write_bytes": 4194304, "read_calls": 0, "write_calls": 2,
                         "noswitch": 0, "readsize_switch": 0, "writesize_switch": 0}
        # no version file and no hybrid line: cannot tell, so no value
        stats.write_text(text)
        version.unlink()
        assert hyb() == {}
        # the counts of the other llite ops do not depend on any of this
        assert a.fetch("llite.open")["llite.open"]["scratch"] > 0


def test_tunables_read_only_when_asked_and_counted(tmp_path):
    """A fetch reads the files of the metrics it asks for, nothing else (llite read_bytes: the
    stats file only; one tunable: that file per device), and agent.fetch.* count them like any
    other file; a file this version does not have (hybrid_io on 2.15) is no failure."""
    t = tree_copy(tmp_path, "2.15")
    with Agent(tmp_path, t) as a:
        _, read = a.reads("llite.read_bytes")
        assert sorted(Path(r).name for r in read) == ["stats", "stats"]
        _, read = a.reads("osc.max_pages_per_rpc")
        assert {Path(r).name for r in read} == {"max_pages_per_rpc"} and len(read) == 5
        got, read = a.reads("llite.checksums", "llite.hybrid_io", "osc.checksums",
                            "agent.fetch.files_read", "agent.fetch.read_failures")
        assert sorted(Path(r).name for r in read) == ["checksums"] * 7
        assert got["agent.fetch.files_read"] == {"": 7} and got["agent.fetch.read_failures"] == {"": 0}
        assert "llite.hybrid_io" not in got
        got, read = a.reads("kernel", "agent.fetch.files_read")
        assert read == ["proc/sys/kernel/osrelease"] and got["agent.fetch.files_read"] == {"": 1}


def test_checksums_falls_back_to_checksum_pages(tmp_path):
    """llite 'checksums' exists from 2.12 (LU-10906); before, the same setting is
    'checksum_pages'. Either is read, the one that answered last first."""
    t = tree_copy(tmp_path, "2.15")
    dev = t / "sys" / "fs" / "lustre" / "llite" / "proj-ffff8c2a4f1c3000"
    with Agent(tmp_path, t) as a:
        assert a.fetch("llite.checksums")["llite.checksums"] == {"proj": 0, "scratch": 1}
        (dev / "checksums").unlink()
        (dev / "checksum_pages").write_text("1\n")
        assert a.fetch("llite.checksums")["llite.checksums"] == {"proj": 1, "scratch": 1}
        _, read = a.reads("llite.checksums")
        assert sorted(Path(r).name for r in read) == ["checksum_pages", "checksums"]
        (dev / "checksum_pages").unlink()
        assert a.fetch("llite.checksums")["llite.checksums"] == {"scratch": 1}
        (dev / "checksums").write_text("0\n")
        assert a.fetch("llite.checksums")["llite.checksums"] == {"proj": 0, "scratch": 1}


@pytest.mark.parametrize("text,want", [("64\n", 64), ("40.25\n", 40), ("0.5\n", 0), ("2000", 2000),
                                       ("lots\n", None), ("-1\n", None), ("1.2.3\n", None),
                                       ("4294967296\n", None)])
def test_mib_tunables_values(tmp_path, text, want):
    """MiB settings: up to 2.13 the kernel printed a fraction of a MiB (lprocfs_read_frac_helper);
    the metric is the whole MiB below, as later versions print it. Anything else: no value."""
    t = tree_copy(tmp_path, "2.15")
    (t / "sys" / "fs" / "lustre" / "llite" / "scratch-ffff8c2a4b9e0000" / "max_read_ahead_mb").write_text(text)
    (t / "sys" / "fs" / "lustre" / "osc" / "scratch-OST0000-osc-ffff8c2a4b9e0000" / "max_dirty_mb").write_text(text)
    with Agent(tmp_path, t) as a:
        got = a.fetch("llite.max_read_ahead_mb", "osc.max_dirty_mb", "agent.fetch.parse_failures")
    assert got["llite.max_read_ahead_mb"].get("scratch") == want
    assert got["osc.max_dirty_mb"].get("scratch-OST0000") == want
    assert got["llite.max_read_ahead_mb"]["proj"] == 64                     # the other fs unaffected
    assert got["agent.fetch.parse_failures"] == {"": 0 if want is not None else 2}
