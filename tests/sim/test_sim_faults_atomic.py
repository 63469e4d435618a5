"""(d) atomic replacement and (e) faults: clear, remount, evict, add-ost; and the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from lustre_sim import SimClient, state

from kit import simreader as rd

ROOTS = rd.ROOTS
CLOCK = 1_700_000_000


def tree_files(root: Path) -> list[Path]:
    out = []
    for r in ROOTS:
        for dp, _, fns in os.walk(Path(root) / r):
            out += [Path(dp) / f for f in fns]
    return out


def make(tmp_path, version="2.15.4", **kw):
    kw.setdefault("seed", 2)
    return SimClient.create(tmp_path / "t", version=version,
                            filesystems=[("scratch", 4, 1), ("home", 2, 1)], clock=CLOCK, **kw)


# -- (d) atomic replacement ----------------------------------------------------------------------

def test_every_file_is_written_by_rename_in_its_own_dir(tmp_path, monkeypatch):
    c = make(tmp_path)
    calls = []
    real = os.replace

    def spy(src, dst):
        calls.append((Path(src), Path(dst)))
        assert Path(src).parent == Path(dst).parent, (src, dst)
        assert Path(dst).exists() or True
        return real(src, dst)

    monkeypatch.setattr(state.os, "replace", spy)
    before = {p: p.read_bytes() for p in tree_files(c.root) if not p.is_symlink()}
    c.run("overflow", fs="scratch")
    targets = {d for _, d in calls}
    files = set(tree_files(c.root))
    # every file the run changed was replaced whole; one it did not change was left as it was
    changed = {p for p in files if not p.is_symlink() and before.get(p) != p.read_bytes()}
    assert changed and changed <= targets, sorted(changed - targets)[:5]
    # no temp file left anywhere, and no file in the tree is a temp name
    left = [p for p in c.root.rglob("*") if p.name.endswith(".tmp")]
    assert left == []
    # a replaced file is a new inode: readers holding the old one see it whole
    f = next(p for p in files if p.name == "rpc_stats")
    ino = f.stat().st_ino
    c.run("overflow", fs="scratch")
    assert f.stat().st_ino != ino


def test_readers_never_see_a_partial_file(tmp_path):
    c = make(tmp_path)
    inst = f"scratch-OST0001-osc-{c.mount_id('scratch')}"
    rpc = c.root / "proc/fs/lustre/osc" / inst / "rpc_stats"
    stats = c.root / "sys/kernel/debug/lustre/osc" / inst / "stats"
    stop = threading.Event()
    seen, bad = [0], []

    def reader():
        while not stop.is_set():
            for p in (rpc, stats):
                t = p.read_text()
                seen[0] += 1
                if p is rpc:
                    ok = t.endswith("\n") and t.count("\t\t\tread\t\t\twrite\n") == 3 and \
                        "offset " in t
                else:
                    ok = t.endswith("\n") and t.startswith("snapshot_time ") and "elapsed_time" in t
                if not ok:
                    bad.append(t)

    th = threading.Thread(target=reader)
    th.start()
    try:
        for _ in range(3):
            c.run("ior", fs="scratch", tasks=2, block_size=4 << 20)
    finally:
        stop.set()
        th.join()
    assert seen[0] > 0 and bad == []


# -- (e) faults ------------------------------------------------------------------------------------

@pytest.mark.parametrize("version,three_line", [("2.15.4", True), ("2.10.8", False)])
def test_clear_zeroes_and_omits(tmp_path, version, three_line):
    c = make(tmp_path, version)
    c.run("overflow", fs="scratch")
    before = rd.snapshot(c.root)
    assert rd.count(before["llite"]["scratch"], "open") > 0
    c.fault("clear", fs="scratch")
    after = rd.snapshot(c.root)
    ll_dir = rd.glob(c.root, f"llite/scratch-{c.mount_id('scratch')}/stats")[0]
    text = ll_dir.read_text()
    lines = text.splitlines()
    assert after["llite"]["scratch"].keys() == {"mount_id"}           # every counter omitted
    if three_line:
        assert [ln.split()[0] for ln in lines] == ["snapshot_time", "start_time", "elapsed_time"]
        now = c.st["clock"]
        assert lines[1] == f"start_time                {now // 10**9}.{now % 10**9:09d} secs.nsecs"
        assert lines[2] == "elapsed_time              0.000000000 secs.nsecs"
        rpc = rd.glob(c.root, f"osc/scratch-OST0000-osc-{c.mount_id('scratch')}/rpc_stats")[0].read_text()
        assert rpc.splitlines()[1].startswith(f"start_time:               {now // 10**9}.")
    else:
        assert len(lines) == 1 and lines[0].startswith("snapshot_time ")
    assert sum(rd.fs_hist(after, "scratch", "read").values()) == 0
    for inst, s in after["osc_stats"].items():
        if inst.startswith("scratch"):
            assert s == {}
    # the other filesystem was left alone
    assert after["llite"]["home"] == before["llite"]["home"]
    # counters come back when hit again
    c.run("overflow", fs="scratch")
    again = rd.snapshot(c.root)
    assert rd.count(again["llite"]["scratch"], "open") == 40


def test_clear_only_rpc_stats(tmp_path):
    c = make(tmp_path)
    c.run("overflow", fs="scratch")
    c.fault("clear", fs="scratch", what="rpc_stats")
    s = rd.snapshot(c.root)
    assert sum(rd.fs_hist(s, "scratch", "write").values()) == 0
    assert rd.count(s["llite"]["scratch"], "open") > 0
    assert rd.count(s["osc_stats"]["scratch-OST0000"], "req_waittime") > 0


def test_remount_new_sbi_and_counters_from_zero(tmp_path):
    c = make(tmp_path)
    old = c.mount_id("scratch")
    old_dirs = [p.parent for p in rd.glob(c.root, f"*/*{old}/*")]
    assert old_dirs
    c.fault("remount", fs="scratch")
    new = c.mount_id("scratch")
    assert new != old and len(new) == 16
    assert not any(p.exists() for p in old_dirs)
    s = rd.snapshot(c.root)
    assert s["llite"]["scratch"] == {"mount_id": new}
    assert sum(rd.fs_hist(s, "scratch", "read").values()) == sum(rd.fs_hist(s, "scratch", "write").values()) == 0
    # only what the mount itself costs
    assert set(s["osc_stats"]["scratch-OST0000"]) == {"req_waittime", "req_active", "ost_connect"}
    assert c.st["mounts"]["scratch"]["resident"] == 0
    # home was not remounted
    assert c.mount_id("home") == SimClient.load(c.root).mount_id("home")
    assert rd.count(s["llite"]["home"], "open") > 0


def test_evict_then_reconnect(tmp_path):
    c = make(tmp_path)
    inst = f"scratch-OST0002-osc-{c.mount_id('scratch')}"
    state_f = c.root / "proc/fs/lustre/osc" / inst / "state"
    import_f = c.root / "proc/fs/lustre/osc" / inst / "import"
    c.fault("evict", fs="scratch", target="OST0002", hold=True)
    assert state_f.read_text().startswith("current_state: EVICTED\n")
    assert "    state: EVICTED\n" in import_f.read_text()
    assert "connection_attempts: 2\n" in import_f.read_text()
    c.fault("reconnect", fs="scratch", target="OST0002")
    text = state_f.read_text()
    assert text.startswith("current_state: FULL\n") and ", EVICTED ]\n" in text
    # the default evict reconnects at once; other OSTs untouched
    c.fault("evict", fs="scratch", target="OST0001")
    s = rd.snapshot(c.root)
    assert set(s["state"].values()) == {"FULL"}
    other = (c.root / "proc/fs/lustre/osc" / inst.replace("OST0002", "OST0000") / "state").read_text()
    assert "EVICTED" not in other


def test_add_ost(tmp_path):
    c = make(tmp_path)
    c.fault("add-ost", fs="scratch")
    names = sorted(p.parent.name.split("-")[1] for p in rd.glob(c.root, "osc/scratch-*/rpc_stats"))
    assert names == ["OST0000", "OST0001", "OST0002", "OST0003", "OST0004"]
    c.run("ior", fs="scratch", tasks=10, block_size=1 << 20)
    s = rd.snapshot(c.root)
    assert sum(s["osc"]["scratch-OST0004"]["pages"]["write"].values()) > 0


def test_fixed_clock_advances_by_run(tmp_path):
    c = make(tmp_path, background=False)
    t0 = c.st["clock"]
    c.run("overflow", fs="scratch")
    assert c.st["clock"] - t0 == 1800 * 10**9
    rpc = rd.glob(c.root, f"osc/scratch-OST0000-osc-{c.mount_id('scratch')}/rpc_stats")[0].read_text()
    assert rpc.startswith(f"snapshot_time:            {CLOCK + 1800}.000000000 secs.nsecs\n")


# -- CLI -------------------------------------------------------------------------------------------

def cli(*args, check=True):
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2] / "sim")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "lustre_sim", *map(str, args)], env=env,
                          capture_output=True, text=True, check=check)


def test_cli_create_run_fault(tmp_path):
    root = tmp_path / "cli"
    r = cli("create", root, "--version", "2.12.9", "--fs", "scratch:3:1", "--fs", "home:2:1",
            "--seed", "4", "--clock", "1700000000.25")
    assert "2.12.9" in r.stdout
    assert (root / "sys/fs/lustre/version").read_text() == "2.12.9\n"
    r = cli("run", root, "ior", "--fs", "home", "--param", "tasks=2", "--param", "block_size=2M",
            "--param", "file_per_process=false", "--json")
    assert '"open": 4' in r.stdout
    s = rd.snapshot(root)
    assert rd.count(s["llite"]["home"], "open") >= 4
    cli("fault", root, "clear", "--fs", "home", "--what", "llite")
    assert rd.snapshot(root)["llite"]["home"] == {"mount_id": s["llite"]["home"]["mount_id"]}
    r = cli("workloads")
    assert "enzo" in r.stdout and "overflow" in r.stdout and "ior" in r.stdout
    bad = cli("run", root, "nosuch", check=False)
    assert bad.returncode == 2 and "unknown workload" in bad.stderr
    bad = cli("create", root, check=False)
    assert bad.returncode == 2 and "already" in bad.stderr
    bad = cli("run", root, "ior", "--param", "colour=red", check=False)
    assert bad.returncode == 2 and "colour" in bad.stderr
