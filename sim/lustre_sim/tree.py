"""Write the client tree (proc, sysfs, debugfs) from the state, one atomic file at a time.

Paths per version follow notes/lustre-formats.md §0. Each file is written to a temp file in its
own directory and renamed over the old one, so a reader never sees a partial file. Device
directories that no longer exist in the state (after a remount) are removed afterwards.
"""

from __future__ import annotations

import os
import stat
import shutil
from pathlib import Path

from . import formats
from .state import atomic_write, now_ns
from .version import Profile, profile

ROOTS = {"proc": "proc/fs/lustre", "sysfs": "sys/fs/lustre", "debugfs": "sys/kernel/debug/lustre"}


def device_name(m: dict, kind: str, idx: int) -> str:
    if kind == "osc":
        return f"{m['fs']}-OST{idx:04x}-osc-{m['sbi']}"
    return f"{m['fs']}-MDT{idx:04x}-mdc-{m['sbi']}"


def llite_name(m: dict) -> str:
    return f"{m['fs']}-{m['sbi']}"


def files_for(st: dict, p: Profile | None = None, t_ns: int | None = None) -> dict[str, str]:
    """Every file of the tree: relative path -> content."""
    p = p or profile(st["version"])
    t = now_ns(st) if t_ns is None else t_ns
    boot = st["boot_ns"]
    out: dict[str, str] = {}

    def put(kind_root: str, rel: str, text: str) -> None:
        out[f"{ROOTS[kind_root]}/{rel}"] = text

    out[p.version_path] = p.version_text()
    out[p.health_path] = "healthy\n"
    if p.has_enable_stats_header:
        put("sysfs", "enable_stats_header", "1\n")
    tun = p.device_attr_root

    for m in st["mounts"].values():
        ll = llite_name(m)
        put(p.root_of("llite_stats"), f"llite/{ll}/stats", formats.render_llite_stats(p, m["llite"], t, boot))
        put(p.root_of("read_ahead_stats"), f"llite/{ll}/read_ahead_stats",
            formats.render_ra_stats(p, m["llite"]["ra"], t, m["llite"]["init_ns"], boot))
        if p.v >= (2, 12, 0):
            put("sysfs", f"llite/{ll}/uuid", f"{m['sbi'][-8:]}-{m['fs']}-uuid\n")
        for name, text in llite_tunables(p, m["llite"]["tun"]):
            put(p.llite_tunable_root(name), f"llite/{ll}/{name}", text)
        for osc in m["osc"]:
            d = device_name(m, "osc", osc["index"])
            put(p.root_of("rpc_stats"), f"osc/{d}/rpc_stats", formats.render_rpc_stats(p, osc, t, boot))
            put(p.root_of("osc_stats_ptlrpc"), f"osc/{d}/stats",
                formats.render_ptlrpc_stats(p, osc["stats"], t, osc["stats_init_ns"], boot))
            if p.v >= (2, 0, 0):        # osc_stats and import are 2.x files (LF §0, §7)
                put(p.root_of("osc_stats_lockless"), f"osc/{d}/osc_stats",
                    formats.render_osc_lockless(p, osc, t, boot))
                put(p.root_of("import"), f"osc/{d}/import",
                    formats.render_import(p, {**osc, "page_size": st["page_size"]}, "osc", t))
            put(p.root_of("state"), f"osc/{d}/state", formats.render_state(p, osc["imp"]))
            for name in OSC_TUNABLES:
                put(p.osc_tunable_root(name), f"osc/{d}/{name}", f"{osc[name]}\n")
        for mdc in m["mdc"]:
            d = device_name(m, "mdc", mdc["index"])
            if p.has_md_stats:
                put(p.root_of("md_stats"), f"mdc/{d}/md_stats",
                    formats.render_md_stats(p, mdc["md"], t, mdc["md_init_ns"], boot))
            put(p.root_of("mdc_stats"), f"mdc/{d}/stats",
                formats.render_ptlrpc_stats(p, mdc["stats"], t, mdc["stats_init_ns"], boot))
            if p.has_mdc_rpc_stats:
                put(p.root_of("mdc_rpc_stats"), f"mdc/{d}/rpc_stats",
                    formats.render_mdc_rpc_stats(p, mdc, t, boot))
            if p.v >= (2, 0, 0):
                put(p.root_of("import"), f"mdc/{d}/import", formats.render_import(p, mdc, "mdc", t))
            put(p.root_of("state"), f"mdc/{d}/state", formats.render_state(p, mdc["imp"]))
            put(tun, f"mdc/{d}/active", "1\n")
            put(tun, f"mdc/{d}/max_rpcs_in_flight", "8\n")

    out[p.lnet_stats_path] = formats.render_lnet_stats(st)
    out.update(host_files(st))

    for fsname, osp in st.get("osp", {}).items():
        d = f"{fsname}-OST0000-osc-MDT0000"
        dev = {"hist": osp["hist"], "gauges": osp["gauges"], "rpc_init_ns": osp["rpc_init_ns"]}
        put("proc", f"osp/{d}/rpc_stats", formats.render_rpc_stats(p, dev, t, boot))
        put("proc", f"osp/{d}/state", formats.render_state(
            p, {"state": "FULL", "history": [[osp["rpc_init_ns"] // 10**9, "FULL"]]}))
    return out


# osc settings files, in the order they are written; where each lives: Profile.osc_tunable_root
OSC_TUNABLES = ("max_pages_per_rpc", "active", "max_rpcs_in_flight", "max_dirty_mb", "checksums")


def llite_tunables(p: Profile, tun: dict):
    """(file name, content) of the llite settings this version has. Every value is a whole
    number ("%lu\n", "%u\n"; the older lprocfs_read_frac_helper prints whole MiB the same)."""
    for name in ("max_read_ahead_mb", "max_read_ahead_per_file_mb", "max_read_ahead_whole_mb",
                 "checksums", "checksum_pages", "hybrid_io", "hybrid_io_read_threshold_bytes",
                 "hybrid_io_write_threshold_bytes"):
        if p.llite_tunable_root(name) is not None:
            key = "checksums" if name == "checksum_pages" else name
            yield name, f"{tun[key]}\n"


# The node's identity, outside the Lustre roots: written with the tree, removed when unset.
HOST_FILES = ("proc/sys/kernel/osrelease", "usr/lib/os-release", "etc/redhat-release")
OS_RELEASE_LINK = ("etc/os-release", "../usr/lib/os-release")


def host_files(st: dict) -> dict[str, str]:
    h = st["host"]
    out = {HOST_FILES[0]: h["kernel"] + "\n"}
    if h.get("os_release") is not None:
        out[HOST_FILES[1]] = h["os_release"]
    if h.get("redhat_release") is not None:
        out[HOST_FILES[2]] = h["redhat_release"]
    return out


def symlinks_for(st: dict) -> dict[str, str]:
    """Server-side OSP devices: proc/fs/lustre/osc/<fs>-OST0000-osc-MDT0000 -> ../osp/...,
    and etc/os-release -> ../usr/lib/os-release (as RHEL 7+ ship it)."""
    out = {}
    if st["host"].get("os_release") is not None:
        out[OS_RELEASE_LINK[0]] = OS_RELEASE_LINK[1]
    for fsname in st.get("osp", {}):
        d = f"{fsname}-OST0000-osc-MDT0000"
        out[f"{ROOTS['proc']}/osc/{d}"] = f"../osp/{d}"
    return out


def write(root: Path, st: dict) -> list[str]:
    """Write every file atomically, then prune what the state no longer has. Returns paths."""
    root = Path(root)
    files = files_for(st)
    for base in ROOTS.values():
        (root / base).mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        if not _holds(root / rel, text):
            atomic_write(root / rel, text)
    links = symlinks_for(st)
    for rel, target in links.items():
        lp = root / rel
        if lp.is_symlink() and os.readlink(lp) == target:
            continue
        tmp = lp.parent / f".{lp.name}.lnk.tmp"
        lp.parent.mkdir(parents=True, exist_ok=True)
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()
        os.symlink(target, tmp)
        os.replace(tmp, lp)
    _prune(root, set(files), set(links))
    for rel in HOST_FILES + (OS_RELEASE_LINK[0],):
        lp = root / rel
        if rel not in files and rel not in links and (lp.is_symlink() or lp.exists()):
            lp.unlink()
    return sorted(files)


def _holds(path: Path, text: str) -> bool:
    """Whether the path is a regular file (not a link, a FIFO or anything a fault put there)
    that already holds exactly this text: a file the state did not change is left as it is, as
    the kernel's is (a workload changes a few dozen of a tree's hundreds, and rewriting each
    atomically costs a test driving workloads in real time)."""
    data = text.encode()
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode) or os.path.getsize(path) != len(data):
            return False
        with open(path, "rb") as f:
            return f.read(len(data) + 1) == data
    except OSError:
        return False


def _prune(root: Path, keep_files: set[str], keep_links: set[str]) -> None:
    keep_dirs = set()
    for rel in keep_files | keep_links:
        parts = rel.split("/")
        for i in range(1, len(parts)):
            keep_dirs.add("/".join(parts[:i]))
    for base in ROOTS.values():
        top = root / base
        for dirpath, dirnames, filenames in os.walk(top, topdown=True):
            rel_dir = os.path.relpath(dirpath, root)
            for name in list(dirnames):
                rel = f"{rel_dir}/{name}"
                full = Path(dirpath) / name
                if full.is_symlink():
                    if rel not in keep_links:
                        full.unlink()
                    dirnames.remove(name)
                elif rel not in keep_dirs:
                    shutil.rmtree(full)
                    dirnames.remove(name)
            for name in filenames:
                rel = f"{rel_dir}/{name}"
                full = Path(dirpath) / name
                if rel not in keep_files and rel not in keep_links:
                    full.unlink()
