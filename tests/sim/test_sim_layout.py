"""Where each file goes, per version (notes/lustre-formats.md §0), and device naming (DESIGN §2)."""

from __future__ import annotations

import os
import re

import pytest

from lustre_sim import SimClient

from kit import simreader as rd

PROC, SYSFS, DEBUG = "proc/fs/lustre", "sys/fs/lustre", "sys/kernel/debug/lustre"

# file -> root, per version family, straight from the LF §0 table
LAYOUT = {
    "1.8.9": {"llite/stats": PROC, "osc/rpc_stats": PROC, "osc/stats": PROC, "osc/import": None,
              "osc/state": PROC, "mdc/stats": PROC, "mdc/md_stats": None, "version": "proc/fs/lustre/version"},
    "2.10.8": {"llite/stats": PROC, "osc/rpc_stats": PROC, "osc/stats": PROC, "osc/import": PROC,
               "osc/state": PROC, "mdc/stats": PROC, "mdc/md_stats": PROC, "version": "sys/fs/lustre/version"},
    "2.12.9": {"llite/stats": DEBUG, "osc/rpc_stats": PROC, "osc/stats": DEBUG, "osc/import": PROC,
               "osc/state": PROC, "mdc/stats": DEBUG, "mdc/md_stats": PROC, "version": "sys/fs/lustre/version"},
    "2.15.4": {"llite/stats": DEBUG, "osc/rpc_stats": PROC, "osc/stats": DEBUG, "osc/import": PROC,
               "osc/state": PROC, "mdc/stats": DEBUG, "mdc/md_stats": PROC, "version": "sys/fs/lustre/version"},
    "2.16.0": {"llite/stats": DEBUG, "osc/rpc_stats": PROC, "osc/stats": DEBUG, "osc/import": PROC,
               "osc/state": PROC, "mdc/stats": DEBUG, "mdc/md_stats": PROC, "version": "sys/fs/lustre/version"},
}


def make(tmp_path, version, **kw):
    kw.setdefault("background", False)
    return SimClient.create(tmp_path / "t", version=version, filesystems=[("scratch", 2, 1), ("home", 1, 1)],
                            seed=5, clock=1_700_000_000, **kw)


@pytest.mark.parametrize("version", sorted(LAYOUT))
def test_files_are_where_the_version_puts_them(tmp_path, version):
    c = make(tmp_path, version)
    root = c.root
    m = c.st["mounts"]["scratch"]
    sbi = m["sbi"]
    dev = {"llite": f"scratch-{sbi}", "osc": f"scratch-OST0000-osc-{sbi}", "mdc": f"scratch-MDT0000-mdc-{sbi}"}
    for key, base in LAYOUT[version].items():
        if key == "version":
            assert (root / base).is_file()
            other = "proc/fs/lustre/version" if base.startswith("sys") else "sys/fs/lustre/version"
            assert not (root / other).exists()
            continue
        kind, name = key.split("/")
        rel = f"{kind}/{dev[kind]}/{name}"
        for r in (PROC, SYSFS, DEBUG):
            present = (root / r / rel).is_file()
            assert present == (r == base), f"{version}: {r}/{rel} present={present}"


def test_device_names_and_sbi(tmp_path):
    c = make(tmp_path, "2.15.4")
    names = {p.parent.name for p in rd.glob(c.root, "osc/*/rpc_stats")}
    sbi_s, sbi_h = c.mount_id("scratch"), c.mount_id("home")
    assert re.fullmatch(r"ffff[0-9a-f]{12}", sbi_s) and sbi_s != sbi_h
    assert names == {f"scratch-OST0000-osc-{sbi_s}", f"scratch-OST0001-osc-{sbi_s}",
                     f"home-OST0000-osc-{sbi_h}"}
    assert {p.parent.name for p in rd.glob(c.root, "llite/*/stats")} == {f"scratch-{sbi_s}", f"home-{sbi_h}"}
    assert {p.parent.name for p in rd.glob(c.root, "mdc/*/md_stats")} == \
        {f"scratch-MDT0000-mdc-{sbi_s}", f"home-MDT0000-mdc-{sbi_h}"}
    # the same seed gives the same pointers; another seed other ones
    d = SimClient.create(tmp_path / "u", version="2.15.4", filesystems=[("scratch", 2, 1)], seed=5,
                         background=False)
    e = SimClient.create(tmp_path / "v", version="2.15.4", filesystems=[("scratch", 2, 1)], seed=6,
                         background=False)
    assert d.mount_id("scratch") == sbi_s != e.mount_id("scratch")


def test_ost_index_is_hex(tmp_path):
    c = SimClient.create(tmp_path / "t", version="2.12.9", filesystems=[("big", 12, 2)], background=False)
    names = sorted(p.parent.name.split("-")[1] for p in rd.glob(c.root, "osc/*/rpc_stats"))
    assert names[-2:] == ["OST000a", "OST000b"]
    assert len(rd.glob(c.root, "mdc/*/md_stats")) == 2


def test_fresh_client_without_background(tmp_path):
    c = make(tmp_path, "2.15.4")
    snap = rd.snapshot(c.root)
    # llite: only the 3-line header; no counter was hit
    ll = (c.root / DEBUG / f"llite/scratch-{c.mount_id('scratch')}/stats").read_text()
    assert ll.count("\n") == 3 and ll.startswith("snapshot_time ")
    assert snap["llite"]["scratch"].keys() == {"mount_id"}
    # the mount itself costs a connect per import
    assert rd.count(snap["osc_stats"]["scratch-OST0000"], "ost_connect") == 1
    assert sum(rd.fs_hist(snap, "scratch", "read").values()) == 0


def test_background_makes_counters_nonzero(tmp_path):
    c = make(tmp_path, "2.15.4", background=True)
    snap = rd.snapshot(c.root)
    for fs in ("scratch", "home"):
        ll = snap["llite"][fs]
        assert rd.count(ll, "open") > 0 and rd.total(ll, "write_bytes") > 0 and rd.count(ll, "statfs") > 0
        assert sum(rd.fs_hist(snap, fs, "write").values()) > 0
    assert all(st == "FULL" for st in snap["state"].values())


def test_server_osp_entry_is_a_symlink_and_skippable(tmp_path):
    c = make(tmp_path, "2.15.4", server_osp=True)
    link = c.root / PROC / "osc/scratch-OST0000-osc-MDT0000"
    assert link.is_symlink() and os.readlink(link) == "../osp/scratch-OST0000-osc-MDT0000"
    text = (link / "rpc_stats").read_text()
    osp = rd.parse_rpc_stats(text)
    assert sum(osp["pages"]["write"].values()) > 0
    # a reader that applies the skip rule sees only client OSCs, with no write RPCs on a fresh client
    snap = rd.snapshot(c.root)
    assert "scratch-OST0000" in snap["osc"] and sum(rd.fs_hist(snap, "scratch", "write").values()) == 0


def test_enable_stats_header_only_on_216(tmp_path):
    assert (make(tmp_path / "a", "2.16.0").root / SYSFS / "enable_stats_header").read_text() == "1\n"
    assert not (make(tmp_path / "b", "2.15.4").root / SYSFS / "enable_stats_header").exists()


def test_page_size_64k(tmp_path):
    c = SimClient.create(tmp_path / "t", version="2.16.0", filesystems=[("scratch", 2, 1)],
                         page_size=65536, background=False)
    c.run("ior", fs="scratch", tasks=2, block_size=8 << 20, transfer_size=1 << 20)
    snap = rd.snapshot(c.root)
    h = rd.fs_hist(snap, "scratch", "write")
    # 1 MiB RPCs are 16 pages of 64 KiB
    assert h.get(16, 0) == 16 and sum(h.values()) == 16
    assert (c.root / PROC / f"osc/scratch-OST0000-osc-{c.mount_id('scratch')}/max_pages_per_rpc").read_text() == "16\n"
