"""The persistent client state: ROOT/.lustre-sim/state.json.

Everything the tree shows is derived from this document, so successive CLI calls advance the
same client. Page cache and open files of a run are not kept (see README, "simplifications");
long-lived "resident" handles are kept as a count per mount.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
import time
from pathlib import Path

from .counters import new_hist
from .settings import default_host
from .version import profile

SCHEMA = "lustre-sim/1"
STATE_DIR = ".lustre-sim"
STATE_FILE = "state.json"
NS = 1_000_000_000


def state_path(root: Path) -> Path:
    return Path(root) / STATE_DIR / STATE_FILE


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write a temp file in the same directory, then rename it over the target."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def load(root: Path) -> dict:
    p = state_path(root)
    if not p.exists():
        raise FileNotFoundError(f"{root}: no simulated client here (missing {p}); "
                                f"run 'lustre-sim create {root} ...' first")
    st = json.loads(p.read_text())
    if st.get("schema") != SCHEMA:
        raise ValueError(f"{p}: unknown schema {st.get('schema')!r}")
    return migrate(st)


def migrate(st: dict) -> dict:
    """State files written before the client settings existed: give them the defaults of their
    version (settings, node identity, no quirks). Nothing that was stored changes."""
    p = profile(st["version"])
    st.setdefault("quirks", [])
    if "host" not in st:
        st["host"] = default_host(p, st["page_size"])
    for m in st["mounts"].values():
        if "tun" not in m["llite"]:
            m["llite"]["tun"] = p.llite_defaults(st["max_pages_per_rpc"] * st["page_size"])
        for osc in m["osc"]:
            osc.setdefault("checksums", 1)
    return st


def save(root: Path, st: dict) -> None:
    atomic_write(state_path(root), json.dumps(st, separators=(",", ":"), sort_keys=True))


# ----------------------------------------------------------------------------------------------
# time

def now_ns(st: dict) -> int:
    c = st.get("clock")
    return int(c) if c is not None else time.time_ns()


def advance(st: dict, seconds: float) -> None:
    if st.get("clock") is not None:
        st["clock"] = int(st["clock"] + seconds * NS)


# ----------------------------------------------------------------------------------------------
# construction

def make_sbi(seed: int, fsname: str, mount_seq: int) -> str:
    r = random.Random(f"sbi:{seed}:{fsname}:{mount_seq}")
    # a kernel direct-map pointer, 64 KiB-aligned like the reference sample ffff88105db50000
    val = 0xFFFF880000000000 | (r.randrange(0x1000, 0x20000000) << 16)
    return f"{val:016x}"


def new_import(name: str, target: str, nid: str, t_sec: int, instance: int) -> dict:
    return {"name": name, "target": target, "nid": nid, "state": "FULL",
            "history": [[t_sec, "CONNECTING"], [t_sec, "FULL"]],
            "conn_attempts": 1, "generation": 1, "instance": instance, "timeouts": 0,
            "last_reply": t_sec}


def new_gauges() -> dict:
    return {"r_in_flight": 0, "w_in_flight": 0, "dio_r_in_flight": 0, "dio_w_in_flight": 0,
            "pending_w": 0, "pending_r": 0}


def new_osc(fsname: str, index: int, sbi: str, t_ns: int, st: dict) -> dict:
    name = f"{fsname}-OST{index:04x}"
    oss = index // 4                                # four OSTs per OSS
    return {"index": index, "stats": {}, "stats_init_ns": t_ns,
            "hist": {k: new_hist() for k in ("read_pages", "write_pages", "read_rif", "write_rif",
                                             "read_off", "write_off")},
            "rpc_init_ns": None if st["version_v"] < [2, 15, 2] else t_ns,
            "gauges": new_gauges(), "lockless": {"read": 0, "write": 0, "truncate": 0},
            "lockless_init_ns": None if st["version_v"] < [2, 15, 2] else t_ns,
            "max_pages_per_rpc": st["max_pages_per_rpc"], "max_rpcs_in_flight": 8,
            "max_dirty_mb": profile(st["version"]).max_dirty_mb_default, "checksums": 1,
            "active": 1, "page_size": st["page_size"],
            "imp": new_import(f"{name}-osc-{sbi}", f"{name}_UUID",
                              f"10.{10 + st['fs_seq'][fsname]}.1.{10 + oss}@o2ib",
                              t_ns // NS, 3)}


def new_mdc(fsname: str, index: int, sbi: str, t_ns: int, st: dict) -> dict:
    name = f"{fsname}-MDT{index:04x}"
    return {"index": index, "stats": {}, "stats_init_ns": t_ns, "md": {}, "md_init_ns": t_ns,
            "gauges": new_gauges(), "page_size": st["page_size"],
            "imp": new_import(f"{name}-mdc-{sbi}", f"{name}_UUID",
                              f"10.{10 + st['fs_seq'][fsname]}.0.{1 + index}@o2ib", t_ns // NS, 5)}


def new_mount(st: dict, fsname: str, n_ost: int, n_mdt: int, mount_seq: int, t_ns: int) -> dict:
    sbi = make_sbi(st["seed"], fsname, mount_seq)
    return {"fs": fsname, "sbi": sbi, "mount_seq": mount_seq, "mount_ns": t_ns,
            "stripe_count": 1, "stripe_size": 1 << 20, "next_ost": 0, "next_file": 0,
            "resident": 0, "n_ost": n_ost, "n_mdt": n_mdt,
            "llite": {"stats": {}, "ra": {}, "init_ns": t_ns,
                      "tun": profile(st["version"]).llite_defaults(
                          st["max_pages_per_rpc"] * st["page_size"])},
            "osc": [new_osc(fsname, i, sbi, t_ns, st) for i in range(n_ost)],
            "mdc": [new_mdc(fsname, i, sbi, t_ns, st) for i in range(n_mdt)]}


def new_state(version: str, version_v: tuple, filesystems, page_size: int, seed: int,
              clock_ns: int | None, max_pages_per_rpc: int | None, server_osp: bool) -> dict:
    if max_pages_per_rpc is None:
        max_pages_per_rpc = max(1, (1 << 20) // page_size)
    st = {"schema": SCHEMA, "version": version, "version_v": list(version_v),
          "page_size": page_size, "seed": seed, "clock": clock_ns,
          "max_pages_per_rpc": max_pages_per_rpc, "server_osp": bool(server_osp),
          "run_seq": 0, "fs_seq": {}, "mounts": {}, "osp": {}, "log": [], "quirks": []}
    st["host"] = default_host(profile(version), page_size)
    t = now_ns(st)
    st["boot_ns"] = t - 3 * 86400 * NS - 4242 * NS        # booted ~3 days before the sim starts
    for i, (fsname, n_ost, n_mdt) in enumerate(filesystems):
        if fsname in st["mounts"]:
            raise ValueError(f"filesystem {fsname} given twice")
        if not (1 <= n_ost <= 0xFFFF and 1 <= n_mdt <= 0xFFFF):
            raise ValueError(f"{fsname}: need 1..65535 OSTs and MDTs")
        st["fs_seq"][fsname] = i
        st["mounts"][fsname] = new_mount(st, fsname, n_ost, n_mdt, 0, t)
        if server_osp:
            st["osp"][fsname] = {"hist": {k: new_hist() for k in ("read_pages", "write_pages",
                                                                  "read_rif", "write_rif",
                                                                  "read_off", "write_off")},
                                 "gauges": new_gauges(), "rpc_init_ns": t}
    return st
