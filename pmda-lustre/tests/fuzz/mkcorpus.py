#!/usr/bin/env python3
"""Rebuild the seed corpus tests/fuzz/corpus/<target>/ (checked in; run by hand).

Seeds: every file of the fixture trees (tests/trees) sorted by kind, the same
files rendered by lustre-sim for every version family it knows (with counters
pushed to the edges the formats allow), hand-written edge cases, and any
file already in the corpus (e.g. crashes found by fuzzing, which must stay).
    .venv/bin/python pmda-lustre/tests/fuzz/mkcorpus.py
"""
from __future__ import annotations

import hashlib
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
AGENT = HERE.parents[1]
REPO = AGENT.parent
sys.path.insert(0, str(REPO / "sim"))
from lustre_sim import SimClient  # noqa: E402

CORPUS = HERE / "corpus"
KINDS = {"stats": "stats", "md_stats": "stats", "read_ahead_stats": "stats",
         "rpc_stats": "rpc_stats", "version": "version", "import": "import", "state": "import",
         "osc_stats": "lockless", "max_pages_per_rpc": "value", "max_rpcs_in_flight": "value",
         "enable_stats_header": "value", "active": "value", "max_dirty_mb": "value",
         "checksums": "value", "checksum_pages": "value", "max_read_ahead_mb": "value",
         "max_read_ahead_per_file_mb": "value", "max_read_ahead_whole_mb": "value",
         "hybrid_io": "value", "hybrid_io_read_threshold_bytes": "value",
         "hybrid_io_write_threshold_bytes": "value",
         "osrelease": "osrelease", "os-release": "osrelease"}
VERSIONS = ["1.8.9", "2.9.0", "2.10.8", "2.12.9", "2.14.0_ddn133", "2.15.0", "2.15.4", "2.16.0",
            "2.17.0", "2.17.55"]
EDGE = {
    "stats": {
        "wide_count": "snapshot_time             1.000000001 secs.nsecs\n"
                      "write_bytes               12345678901234 samples [bytes] 4096 4194304 "
                      "-9223372036854775808 18446744073709551615\n",
        "int64_max": "snapshot_time:            1790277040.614799671 secs.nsecs\n"
                     "openclosetime             5 samples [usecs] 0 9223372036854775807 "
                     "9223372036854775807 9223372036854775807\n",
        "header_only_216": "snapshot_time             1790277040.614799671 secs.nsecs\n",
        "empty": "",
    },
    "rpc_stats": {
        "bucket31": "snapshot_time:         1.1 (secs.usecs)\n\n\t\t\tread\t\t\twrite\n"
                    "pages per rpc         rpcs   % cum % |       rpcs   % cum %\n"
                    "-2147483648:\t\t18446744073709551615 100 100   | 12345678901 100 100\n",
    },
    "lnet": {"max": "4294967295 4294967295 0 4294967295 4294967295 0 0 18446744073709551615 "
                    "18446744073709551615 0 0\n"},
    "value": {"u64max": "18446744073709551615\n", "spaces": "  16\t\n",
              "frac": "40.25\n", "frac_seq_bug": "1.5\n", "frac_long": "1.1234567890\n",
              "two_dots": "1.2.3\n"},
    "osrelease": {
        "kernel": "6.1.0-18-amd64\n",
        "quoting": "PRETTY_NAME=\"a \\\"b\\\" \\$c\"\nNAME='x\\y'\nVERSION_ID=1\\ 2\n"
                   "IMAGE_ID=img IMAGE_VERSION=\"unclosed\n# comment\n\n",
        "defaults": "VERSION_ID=9\nIMAGE_VERSION=2024.03\n",
        "utf8_cut": "PRETTY_NAME=\"" + "x" * 254 + "\u00e9\u00e9\"\n",
        "crlf": "NAME=\"Windows line ends\"\r\nVERSION_ID=1\r\n",
    },
    "names": {"osp": "scratch-OST0000-osc-MDT0000", "llite": "scratch-ffff88105db50000",
              "mdc": "home-MDT0001-mdc-ffff8810a1c2e800", "dashes": "a-b-OST0000-osc-ffff88105db50000"},
}


def kind_of(path: Path) -> str | None:
    if path.parent.name == "lnet" and path.name == "stats":
        return "lnet"
    return KINDS.get(path.name)


class Corpus:
    def __init__(self):
        self.seen: dict[str, set[str]] = {}
        self.files: dict[str, dict[str, bytes]] = {}

    def add(self, target: str, name: str, data: bytes) -> None:
        h = hashlib.sha1(data).hexdigest()
        if h in self.seen.setdefault(target, set()):
            return
        self.seen[target].add(h)
        self.files.setdefault(target, {})[name] = data

    def add_tree(self, tag: str, root: Path) -> None:
        for p in sorted(root.rglob("*")):
            if p.is_symlink() or not p.is_file() or ".lustre-sim" in p.parts:
                continue
            k = kind_of(p)
            if k:
                self.add(k, f"{tag}_{p.parent.name.split('-')[0]}_{p.name}", p.read_bytes())
            for part in p.relative_to(root).parts[:-1]:
                if "-OST" in part or "-MDT" in part or part.count("-") == 1 and part[-4:].isalnum():
                    self.add("names", f"{tag}_{part}", part.encode())


def main() -> int:
    c = Corpus()
    for target in sorted(CORPUS.glob("*")):
        if target.is_dir():
            for f in sorted(target.iterdir()):
                c.add(target.name, f.name, f.read_bytes())
    for tree in sorted((AGENT / "tests/trees").iterdir()):
        if tree.is_dir():
            c.add_tree(f"tree{tree.name}", tree)
    with tempfile.TemporaryDirectory() as tmp:
        for v in VERSIONS:
            root = Path(tmp) / v
            sim = SimClient.create(root, version=v, filesystems=[("fz", 2, 1)], seed=3,
                                   clock=1_790_000_000, page_size=65536 if v == "2.16.0" else 4096)
            sim.run("ior", fs="fz", tasks=2, block_size=4 << 20, transfer_size=1 << 16)
            # counters at the edges: a >10-digit histogram count, sums past 2^63
            osc = sim.st["mounts"]["fz"]["osc"][0]
            osc["hist"]["read_pages"][3] += 12_345_678_901
            osc["stats"].setdefault("write_bytes", [1, 1, 1, 1, 1])[3] = (1 << 64) - 5
            sim.st["mounts"]["fz"]["llite"]["stats"].setdefault("read_bytes", [1, 1, 1, 1, 1])[3] = (1 << 63) + 7
            sim.write_tree()
            c.add_tree(f"sim{v}", root)
    for target, seeds in EDGE.items():
        for name, text in seeds.items():
            c.add(target, f"edge_{name}", text.encode())
    shutil.rmtree(CORPUS, ignore_errors=True)
    for target, files in c.files.items():
        d = CORPUS / target
        d.mkdir(parents=True)
        for name, data in files.items():
            (d / name.replace("/", "_")).write_bytes(data)
    for target in sorted(c.files):
        print(f"{target}: {len(c.files[target])} seeds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
