"""Client settings and the node's identity in the tree: the path of each file per version, its
default, its bytes, and `set` / `create(settings=)` / `lustre-sim set` changing them.

The expected paths and defaults are written out here from lustre-release (lproc_llite.c,
lproc_osc.c, llite_lib.c, llite_internal.h, obd.h at the tags named), not taken from the sim:
  llite max_read_ahead_{,per_file_,whole_}mb  lprocfs_llite_obd_vars: /proc until 2.11, debugfs
                                              with llite stats from 2.12.0, sysfs from 2.13.53
  llite checksum_pages                        /proc until 2.11.54, sysfs (with checksums) 2.11.55+
  llite hybrid_io / _read/_write_threshold_bytes  sysfs from 2.15.62 / 2.15.64
  osc checksums                               /proc until 2.11.51, sysfs from 2.11.52
  osc/mdc active, max_rpcs_in_flight, osc max_dirty_mb: /proc until 2.11.51, sysfs from 2.11.52
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from lustre_sim import SimClient, state

PROC, SYSFS, DEBUG = "proc/fs/lustre", "sys/fs/lustre", "sys/kernel/debug/lustre"
ROOTS = (PROC, SYSFS, DEBUG)

# version -> {llite file: (root, content)} ; None = the file does not exist on that version
LLITE = {
    "1.8.9": {"max_read_ahead_mb": (PROC, "40\n"), "max_read_ahead_per_file_mb": (PROC, "40\n"),
              "max_read_ahead_whole_mb": (PROC, "2\n"), "checksum_pages": (PROC, "0\n"),
              "checksums": None, "hybrid_io": None, "hybrid_io_read_threshold_bytes": None,
              "hybrid_io_write_threshold_bytes": None},
    "2.10.8": {"max_read_ahead_mb": (PROC, "64\n"), "max_read_ahead_per_file_mb": (PROC, "64\n"),
               "max_read_ahead_whole_mb": (PROC, "2\n"), "checksum_pages": (PROC, "1\n"),
               "checksums": None, "hybrid_io": None, "hybrid_io_read_threshold_bytes": None,
               "hybrid_io_write_threshold_bytes": None},
    "2.12.9": {"max_read_ahead_mb": (DEBUG, "64\n"), "max_read_ahead_per_file_mb": (DEBUG, "64\n"),
               "max_read_ahead_whole_mb": (DEBUG, "64\n"), "checksum_pages": (SYSFS, "1\n"),
               "checksums": (SYSFS, "1\n"), "hybrid_io": None,
               "hybrid_io_read_threshold_bytes": None, "hybrid_io_write_threshold_bytes": None},
    "2.15.4": {"max_read_ahead_mb": (SYSFS, "1024\n"),
               "max_read_ahead_per_file_mb": (SYSFS, "256\n"),
               "max_read_ahead_whole_mb": (SYSFS, "64\n"), "checksum_pages": (SYSFS, "1\n"),
               "checksums": (SYSFS, "1\n"), "hybrid_io": None,
               "hybrid_io_read_threshold_bytes": None, "hybrid_io_write_threshold_bytes": None},
    "2.16.0": {"max_read_ahead_mb": (SYSFS, "1024\n"),
               "max_read_ahead_per_file_mb": (SYSFS, "256\n"),
               "max_read_ahead_whole_mb": (SYSFS, "64\n"), "checksum_pages": (SYSFS, "1\n"),
               "checksums": (SYSFS, "1\n"), "hybrid_io": (SYSFS, "0\n"),
               "hybrid_io_read_threshold_bytes": (SYSFS, "8388608\n"),
               "hybrid_io_write_threshold_bytes": (SYSFS, "2097152\n")},
    # 2.16.51 LU-18504: whole = max(4 MiB, OST max_pages_per_rpc); 2.16.59 LU-18033: hybrid on
    "2.17.0": {"max_read_ahead_mb": (SYSFS, "1024\n"),
               "max_read_ahead_per_file_mb": (SYSFS, "256\n"),
               "max_read_ahead_whole_mb": (SYSFS, "4\n"), "checksum_pages": (SYSFS, "1\n"),
               "checksums": (SYSFS, "1\n"), "hybrid_io": (SYSFS, "1\n"),
               "hybrid_io_read_threshold_bytes": (SYSFS, "8388608\n"),
               "hybrid_io_write_threshold_bytes": (SYSFS, "2097152\n")},
}
OSC = {  # version -> {osc file: (root, content)}
    "1.8.9": {"checksums": (PROC, "1\n"), "max_dirty_mb": (PROC, "32\n"),
              "max_rpcs_in_flight": (PROC, "8\n"), "active": (PROC, "1\n"),
              "max_pages_per_rpc": (PROC, "256\n")},
    "2.10.8": {"checksums": (PROC, "1\n"), "max_dirty_mb": (PROC, "32\n"),
               "max_rpcs_in_flight": (PROC, "8\n"), "active": (PROC, "1\n"),
               "max_pages_per_rpc": (PROC, "256\n")},
    "2.12.9": {"checksums": (SYSFS, "1\n"), "max_dirty_mb": (SYSFS, "2000\n"),
               "max_rpcs_in_flight": (SYSFS, "8\n"), "active": (SYSFS, "1\n"),
               "max_pages_per_rpc": (PROC, "256\n")},
    "2.15.4": {"checksums": (SYSFS, "1\n"), "max_dirty_mb": (SYSFS, "2000\n"),
               "max_rpcs_in_flight": (SYSFS, "8\n"), "active": (SYSFS, "1\n"),
               "max_pages_per_rpc": (PROC, "256\n")},
    "2.16.0": {"checksums": (SYSFS, "1\n"), "max_dirty_mb": (SYSFS, "2000\n"),
               "max_rpcs_in_flight": (SYSFS, "8\n"), "active": (SYSFS, "1\n"),
               "max_pages_per_rpc": (PROC, "256\n")},
    "2.17.0": {"checksums": (SYSFS, "1\n"), "max_dirty_mb": (SYSFS, "2000\n"),
               "max_rpcs_in_flight": (SYSFS, "8\n"), "active": (SYSFS, "1\n"),
               "max_pages_per_rpc": (PROC, "256\n")},
}
HOST = {  # version -> (osrelease, os-release VERSION_ID or None, redhat-release)
    "1.8.9": ("2.6.32-431.23.3.el6.x86_64", None, "Red Hat Enterprise Linux Server release 6.5 (Santiago)\n"),
    "2.10.8": ("3.10.0-693.21.1.el7.x86_64", "7.4", "Red Hat Enterprise Linux Server release 7.4 (Maipo)\n"),
    "2.12.9": ("3.10.0-1160.25.1.el7.x86_64", "7.9", "Red Hat Enterprise Linux Server release 7.9 (Maipo)\n"),
    "2.15.4": ("4.18.0-477.27.1.el8_8.x86_64", "8.8", "Red Hat Enterprise Linux release 8.8 (Ootpa)\n"),
    "2.16.0": ("5.14.0-427.42.1.el9_4.x86_64", "9.4", "Red Hat Enterprise Linux release 9.4 (Plow)\n"),
    "2.17.0": ("5.14.0-570.17.1.el9_6.x86_64", "9.6", "Red Hat Enterprise Linux release 9.6 (Plow)\n"),
}


def make(tmp_path, version, name="t", **kw):
    kw.setdefault("background", False)
    return SimClient.create(tmp_path / name, version=version,
                            filesystems=[("scratch", 2, 1), ("home", 1, 1)], seed=5,
                            clock=1_700_000_000, **kw)


def where(root, rel):
    """{root: content} of every Lustre root holding rel."""
    return {r: (root / r / rel).read_text() for r in ROOTS if (root / r / rel).is_file()}


def os_release(root) -> dict:
    out = {}
    for line in (root / "etc/os-release").read_text().splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            out[k] = v.strip('"')
    return out


@pytest.mark.parametrize("version", sorted(LLITE))
def test_settings_files_per_version(tmp_path, version):
    c = make(tmp_path, version)
    dirs = c.device_dirs("scratch")
    for name, want in LLITE[version].items():
        got = where(c.root, f"llite/{dirs['llite']}/{name}")
        assert got == ({} if want is None else {want[0]: want[1]}), (version, name, got)
    for d in dirs["osc"]:
        for name, (root, text) in OSC[version].items():
            assert where(c.root, f"osc/{d}/{name}") == {root: text}, (version, name)
    mdc = dirs["mdc"][0]
    dev_root = OSC[version]["active"][0]
    assert where(c.root, f"mdc/{mdc}/active") == {dev_root: "1\n"}
    assert where(c.root, f"mdc/{mdc}/max_rpcs_in_flight") == {dev_root: "8\n"}


@pytest.mark.parametrize("version", sorted(HOST))
def test_host_identity_per_version(tmp_path, version):
    c = make(tmp_path, version)
    kernel, vid, rr = HOST[version]
    assert (c.root / "proc/sys/kernel/osrelease").read_text() == kernel + "\n"
    assert (c.root / "etc/redhat-release").read_text() == rr
    link = c.root / "etc/os-release"
    if vid is None:          # RHEL 6 has no os-release (it came with systemd, RHEL 7)
        assert not link.is_symlink() and not link.exists()
        assert not (c.root / "usr/lib/os-release").exists()
        return
    assert link.is_symlink() and os.readlink(link) == "../usr/lib/os-release"
    assert link.read_text() == (c.root / "usr/lib/os-release").read_text()
    f = os_release(c.root)
    assert f["VERSION_ID"] == vid and f["ID"] == "rhel" and f["NAME"].startswith("Red Hat")
    assert f["PRETTY_NAME"].startswith("Red Hat Enterprise Linux") and vid in f["PRETTY_NAME"]
    assert "IMAGE_ID" not in f


def test_64k_pages_are_an_aarch64_node(tmp_path):
    c = SimClient.create(tmp_path / "t", version="2.16.0", page_size=65536, background=False)
    assert (c.root / "proc/sys/kernel/osrelease").read_text().endswith(".aarch64\n")


def test_whole_mb_follows_the_rpc_size_on_217(tmp_path):
    """LU-18504 (2.16.51): max(4 MiB, the OSTs' max_pages_per_rpc), at most per_file."""
    c = SimClient.create(tmp_path / "t", version="2.17.0", max_pages_per_rpc=4096,
                         background=False)
    assert c.settings()["fs"]["scratch"]["max_read_ahead_whole_mb"] == 16


def test_set_changes_the_files(tmp_path):
    c = make(tmp_path, "2.16.0")
    d = c.device_dirs("scratch")
    h = c.device_dirs("home")
    ll = f"{SYSFS}/llite/{d['llite']}"
    c.set(max_read_ahead_mb=0, hybrid_io=1, hybrid_io_read_threshold_bytes="4M")
    assert (c.root / ll / "max_read_ahead_mb").read_text() == "0\n"
    assert (c.root / ll / "hybrid_io").read_text() == "1\n"
    assert (c.root / ll / "hybrid_io_read_threshold_bytes").read_text() == "4194304\n"
    # per filesystem: only home's OSCs
    c.set(fs="home", max_dirty_mb=512, max_rpcs_in_flight=16, max_pages_per_rpc=1024)
    assert (c.root / SYSFS / "osc" / h["osc"][0] / "max_dirty_mb").read_text() == "512\n"
    assert (c.root / SYSFS / "osc" / h["osc"][0] / "max_rpcs_in_flight").read_text() == "16\n"
    assert (c.root / PROC / "osc" / h["osc"][0] / "max_pages_per_rpc").read_text() == "1024\n"
    for o in d["osc"]:
        assert (c.root / SYSFS / "osc" / o / "max_dirty_mb").read_text() == "2000\n"
    # osc checksums alone; llite checksums reaches every OSC of the mount, as KEY_CHECKSUM does
    c.set(fs="scratch", osc_checksums=0)
    assert [(c.root / SYSFS / "osc" / o / "checksums").read_text() for o in d["osc"]] == ["0\n"] * 2
    assert (c.root / ll / "checksums").read_text() == "1\n"
    c.set(fs="scratch", checksums=0)
    c.set(fs="scratch", **{"osc.checksums": 1})
    assert (c.root / ll / "checksums").read_text() == (c.root / ll / "checksum_pages").read_text() == "0\n"
    assert [(c.root / SYSFS / "osc" / o / "checksums").read_text() for o in d["osc"]] == ["1\n"] * 2
    c.set(fs="home", checksums=False)
    assert (c.root / SYSFS / "osc" / h["osc"][0] / "checksums").read_text() == "0\n"
    # the state keeps them
    again = SimClient.load(c.root)
    assert again.settings()["fs"]["home"]["max_dirty_mb"] == 512
    assert again.settings()["fs"]["scratch"]["max_read_ahead_mb"] == 0


def test_set_checks_like_the_kernel(tmp_path):
    c = make(tmp_path, "2.15.4")
    with pytest.raises(ValueError, match="max_read_ahead_per_file_mb=300 > max_read_ahead_mb=256"):
        c.set(max_read_ahead_mb=256, max_read_ahead_per_file_mb=300)
    with pytest.raises(ValueError, match="max_read_ahead_whole_mb"):
        c.set(max_read_ahead_whole_mb=512)
    with pytest.raises(ValueError, match="has no llite hybrid_io"):
        c.set(hybrid_io=1)
    with pytest.raises(KeyError):
        c.set(read_ahead=1)
    with pytest.raises(ValueError, match="unknown quirk"):
        c.set(quirks=["lu-0"])
    with pytest.raises(ValueError):
        c.set(max_pages_per_rpc=1 << 20)
    # a refused set changes nothing, not even the settings before the refused one
    for d in (c, SimClient.load(c.root)):
        assert d.settings()["fs"]["scratch"]["max_read_ahead_mb"] == 1024
        assert d.quirks == []


def test_set_node_identity(tmp_path):
    c = make(tmp_path, "2.15.4")
    c.set(kernel="4.18.0-553.5.1.el8_10.x86_64", os_image="rocky-8.10", image_id="hpc-compute",
          image_version="2025.03")
    assert (c.root / "proc/sys/kernel/osrelease").read_text() == "4.18.0-553.5.1.el8_10.x86_64\n"
    f = os_release(c.root)
    assert (f["ID"], f["VERSION_ID"], f["IMAGE_ID"], f["IMAGE_VERSION"]) == \
        ("rocky", "8.10", "hpc-compute", "2025.03")
    assert f["PRETTY_NAME"] == "Rocky Linux 8.10 (Green Obsidian)"
    c.set(image_version="2025.04")
    text = (c.root / "usr/lib/os-release").read_text()
    assert text.count("IMAGE_VERSION=") == 1 and 'IMAGE_VERSION="2025.04"\n' in text
    c.set(os_image={"NAME": "Site OS", "ID": "siteos", "VERSION_ID": "3", "PRETTY_NAME": "Site OS 3",
                    "IMAGE_ID": "gpu"})
    assert (c.root / "usr/lib/os-release").read_text() == (
        'NAME="Site OS"\nID="siteos"\nVERSION_ID="3"\nPRETTY_NAME="Site OS 3"\nIMAGE_ID="gpu"\n')
    assert not (c.root / "etc/redhat-release").exists()
    c.set(os_image="none")
    assert not (c.root / "etc/os-release").is_symlink() and not (c.root / "usr/lib/os-release").exists()
    with pytest.raises(ValueError, match="no os-release"):
        c.set(image_id="x")
    c.set(os_image="rhel-9.4")
    assert os.readlink(c.root / "etc/os-release") == "../usr/lib/os-release"
    assert os_release(c.root)["VERSION_ID"] == "9.4"


def test_create_with_settings_and_quirks(tmp_path):
    c = make(tmp_path, "2.16.0", settings={"hybrid_io": 1, "max_read_ahead_per_file_mb": 64,
                                           "kernel": "5.14.0-1.el9.x86_64"},
             quirks=["lu15274", "ra-8k-rpcs"])
    assert c.quirks == ["ra-8k-rpcs", "lu15274"]
    s = c.settings()
    assert s["fs"]["scratch"]["hybrid_io"] == s["fs"]["home"]["hybrid_io"] == 1
    assert s["fs"]["home"]["max_read_ahead_per_file_mb"] == 64
    assert s["kernel"] == "5.14.0-1.el9.x86_64"
    c.set(quirks="poor-write-aggregation")
    assert SimClient.load(c.root).quirks == ["poor-write-aggregation"]
    c.set(quirks=[])
    assert SimClient.load(c.root).quirks == []


def test_settings_survive_remount_and_reach_a_new_ost(tmp_path):
    c = make(tmp_path, "2.15.4")
    c.set(fs="scratch", max_read_ahead_mb=128, max_dirty_mb=256, osc_checksums=0)
    c.fault("remount", fs="scratch")
    c.fault("add-ost", fs="scratch")
    d = c.device_dirs("scratch")
    assert (c.root / SYSFS / "llite" / d["llite"] / "max_read_ahead_mb").read_text() == "128\n"
    assert len(d["osc"]) == 3
    for o in d["osc"]:
        assert (c.root / SYSFS / "osc" / o / "max_dirty_mb").read_text() == "256\n"
        assert (c.root / SYSFS / "osc" / o / "checksums").read_text() == "0\n"


def test_old_state_files_load_with_defaults(tmp_path):
    """A state.json written before the settings existed: no host, quirks, llite tun or osc
    checksums. It loads, gets its version's defaults, and keeps what it stored."""
    c = make(tmp_path, "2.12.9")
    c.run("ior", fs="scratch", tasks=2, block_size=4 << 20)
    st = json.loads(state.state_path(c.root).read_text())
    del st["host"], st["quirks"]
    for m in st["mounts"].values():
        del m["llite"]["tun"]
        for o in m["osc"]:
            del o["checksums"]
            o["max_dirty_mb"] = 32                # what the sim wrote for every version then
    state.state_path(c.root).write_text(json.dumps(st))
    old = SimClient.load(c.root)
    assert old.quirks == [] and old.settings()["kernel"] == HOST["2.12.9"][0]
    assert old.settings()["fs"]["scratch"]["max_read_ahead_whole_mb"] == 64
    before = old.st["mounts"]["scratch"]["osc"][0]["hist"]["write_pages"][:]
    old.run("seqread", fs="scratch", size=4 << 20, call=1 << 20)
    d = old.device_dirs("scratch")
    assert (c.root / SYSFS / "osc" / d["osc"][0] / "max_dirty_mb").read_text() == "32\n"
    assert (c.root / SYSFS / "osc" / d["osc"][0] / "checksums").read_text() == "1\n"
    assert old.st["mounts"]["scratch"]["osc"][0]["hist"]["write_pages"] == before
    old.set(max_read_ahead_mb=0)
    assert SimClient.load(c.root).settings()["fs"]["scratch"]["max_read_ahead_mb"] == 0


def test_cli_set_and_create(tmp_path):
    exe = [sys.executable, "-m", "lustre_sim"]
    env = dict(os.environ)
    root = tmp_path / "t"
    subprocess.run(exe + ["create", str(root), "--version", "2.16.0", "--fs", "scratch:2:1",
                          "--fs", "home:1:1", "--no-background", "--set", "hybrid_io=1",
                          "--quirk", "lu15274"], check=True, env=env, capture_output=True)
    subprocess.run(exe + ["set", str(root), "max_read_ahead_mb=0", "osc.checksums=0",
                          "--fs", "home"], check=True, env=env, capture_output=True)
    subprocess.run(exe + ["set", str(root), "kernel=5.14.0-9.el9.x86_64", "image_id=login",
                          "quirks=ra-8k-rpcs,lu15274"], check=True, env=env, capture_output=True)
    c = SimClient.load(root)
    s = c.settings()
    assert s["fs"]["home"]["max_read_ahead_mb"] == 0 and s["fs"]["scratch"]["max_read_ahead_mb"] == 1024
    assert s["fs"]["home"]["osc_checksums"] == 0 and s["fs"]["scratch"]["osc_checksums"] == 1
    assert s["fs"]["scratch"]["hybrid_io"] == 1
    assert c.quirks == ["ra-8k-rpcs", "lu15274"]
    assert os_release(root)["IMAGE_ID"] == "login"
    bad = subprocess.run(exe + ["set", str(root), "hybrid_io=2"], env=env, capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "hybrid_io" in bad.stderr
    out = subprocess.run(exe + ["quirks"], env=env, capture_output=True, text=True, check=True)
    assert "LU-15274" in out.stdout and "LU-8515" in out.stdout and "ra-8k-rpcs" in out.stdout
