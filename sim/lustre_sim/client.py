"""SimClient: the Python API (tests, demo, benchmarks use it; the CLI wraps it)."""

from __future__ import annotations

import contextlib
import copy
import fcntl
import random
import shutil
from decimal import Decimal
from pathlib import Path

from . import faults, settings as settings_mod, state, tree, workloads
from .model import Client, mount_rpcs
from .version import profile


@contextlib.contextmanager
def _locked(root: Path):
    d = Path(root) / state.STATE_DIR
    d.mkdir(parents=True, exist_ok=True)
    with open(d / "lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _fs_spec(x) -> tuple[str, int, int]:
    if isinstance(x, str):
        parts = x.split(":")
        name = parts[0]
        n_ost = int(parts[1]) if len(parts) > 1 else 4
        n_mdt = int(parts[2]) if len(parts) > 2 else 1
        x = (name, n_ost, n_mdt)
    name, n_ost, n_mdt = x
    if not name or not name.replace("_", "").isalnum() or len(name) > 8:
        raise ValueError(f"bad filesystem name {name!r} (1-8 letters/digits, as mkfs.lustre wants)")
    return name, int(n_ost), int(n_mdt)


class SimClient:
    """A simulated Lustre client whose tree lives under ROOT."""

    def __init__(self, root: Path, st: dict):
        self.root = Path(root)
        self.st = st

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def create(cls, root, version: str = "2.15.4", filesystems=(("scratch", 8, 1),),
               page_size: int = 4096, seed: int = 1, background: bool = True,
               clock: float | None = None, max_pages_per_rpc: int | None = None,
               server_osp: bool = False, force: bool = False, settings: dict | None = None,
               quirks=()) -> "SimClient":
        """Build a fresh client tree. clock: None = wall clock, else a fixed epoch (seconds)
        that each run advances by its simulated duration. settings: what `set` takes, applied
        to every filesystem before the background activity; quirks: names from
        settings.QUIRKS."""
        root = Path(root)
        p = profile(version)
        if page_size <= 0 or page_size & (page_size - 1) or not 4096 <= page_size <= 65536:
            raise ValueError("page size must be a power of two between 4096 and 65536")
        specs = [_fs_spec(x) for x in filesystems]
        if not specs:
            raise ValueError("at least one filesystem")
        if state.state_path(root).exists():
            if not force:
                raise FileExistsError(f"{root} already holds a simulated client (use force=True)")
            for d in ("proc", "sys", state.STATE_DIR):
                shutil.rmtree(root / d, ignore_errors=True)
        root.mkdir(parents=True, exist_ok=True)
        clock_ns = None if clock is None else int(Decimal(str(clock)) * 1_000_000_000)
        if max_pages_per_rpc is not None and not 1 <= max_pages_per_rpc <= p.max_brw_pages_4k * 4096 // page_size:
            raise ValueError(f"max_pages_per_rpc {max_pages_per_rpc} above the {p.version} limit")
        st = state.new_state(p.version, p.v, specs, page_size, seed, clock_ns, max_pages_per_rpc,
                             server_osp)
        wanted = dict(settings or {})
        if quirks:
            wanted["quirks"] = quirks                   # a list or a comma string: parse_quirks
        settings_mod.apply(st, p, wanted)
        self = cls(root, st)
        with _locked(root):
            cl = Client(st, p, "mount")
            for m in st["mounts"].values():
                mount_rpcs(cl, m)
            if server_osp:
                self._osp_activity(random.Random(f"osp:{seed}"))
            if background:
                for fsname in st["mounts"]:
                    self._run_locked("background", fsname, {})
            state.save(root, st)
            tree.write(root, st)
        return self

    @classmethod
    def load(cls, root) -> "SimClient":
        root = Path(root)
        return cls(root, state.load(root))

    # -- info ---------------------------------------------------------------------------------
    @property
    def version(self) -> str:
        return self.st["version"]

    @property
    def page_size(self) -> int:
        return self.st["page_size"]

    @property
    def filesystems(self) -> list[str]:
        return list(self.st["mounts"])

    def mount_id(self, fs: str) -> str:
        return self.st["mounts"][fs]["sbi"]

    def device_dirs(self, fs: str) -> dict:
        m = self.st["mounts"][fs]
        return {"llite": tree.llite_name(m),
                "osc": [tree.device_name(m, "osc", o["index"]) for o in m["osc"]],
                "mdc": [tree.device_name(m, "mdc", d["index"]) for d in m["mdc"]]}

    def paths(self) -> list[str]:
        """Relative paths of every file of the tree (for inspection)."""
        return sorted(tree.files_for(self.st))

    # -- actions ------------------------------------------------------------------------------
    def _reload(self) -> None:
        if state.state_path(self.root).exists():
            self.st = state.load(self.root)

    def run(self, workload: str, fs: str | None = None, **params) -> dict:
        """Run a workload on one filesystem, advance the counters and rewrite the tree."""
        with _locked(self.root):
            self._reload()
            summary = self._run_locked(workload, fs, params)
            state.save(self.root, self.st)
            tree.write(self.root, self.st)
        return summary

    def run_many(self, runs: list[tuple[str, str | None, dict]]) -> list[dict]:
        """Several workloads (name, fs, params) one after the other, the tree rewritten once
        after the last: what a test driving a schedule in real time does in one time slot."""
        with _locked(self.root):
            self._reload()
            summaries = [self._run_locked(name, fs, dict(params)) for name, fs, params in runs]
            state.save(self.root, self.st)
            tree.write(self.root, self.st)
        return summaries

    def _run_locked(self, name: str, fs: str | None, params: dict) -> dict:
        w = workloads.get(name)
        fs = fs or next(iter(self.st["mounts"]))
        if fs not in self.st["mounts"]:
            raise KeyError(f"no filesystem {fs!r} mounted (have: {', '.join(self.st['mounts'])})")
        params = dict(params)
        seed = params.pop("seed", None)             # every workload: vary a job's random choices
        args = workloads.coerce_params(w, params)
        before = copy.deepcopy(self.st["mounts"][fs])
        self.st["run_seq"] += 1
        p = profile(self.st["version"])
        cl = Client(self.st, p, f"{name}:{fs}")
        rng = random.Random(f"{name}:{self.st['seed']}:{fs}" if seed is None
                            else f"{name}:{self.st['seed']}:{fs}:{seed}")
        elapsed = w.fn(cl, fs, rng, **args)
        cl.finish(elapsed)
        state.advance(self.st, elapsed)
        t = state.now_ns(self.st) // state.NS
        for m in self.st["mounts"].values():
            for dev in m["osc"] + m["mdc"]:
                if dev["imp"]["state"] == "FULL":
                    dev["imp"]["last_reply"] = t
        self.st["log"].append({"run": self.st["run_seq"], "workload": name, "fs": fs,
                               "params": {k: v for k, v in params.items()},
                               **({"seed": seed} if seed is not None else {})})
        self.st["log"] = self.st["log"][-50:]
        out = _summary(name, fs, elapsed, before, self.st["mounts"][fs], p.llite_family == "2.14")
        out["notes"] = cl.notes
        return out

    def fault(self, kind: str, fs: str | None = None, **params) -> None:
        """clear, remount, evict, reconnect, add-ost (see faults.FAULTS)."""
        with _locked(self.root):
            self._reload()
            p = profile(self.st["version"])
            self.st["run_seq"] += 1
            cl = Client(self.st, p, f"fault:{kind}")
            if kind == "clear":
                faults.clear(self.st, fs, **params)
            elif kind == "remount":
                faults.remount(cl, fs, **params)
            elif kind == "evict":
                faults.evict(cl, fs, **{k: _boolish(v) if k == "hold" else v for k, v in params.items()})
            elif kind == "reconnect":
                faults.reconnect(cl, fs, **params)
            elif kind in ("add-ost", "add_ost"):
                faults.add_ost(cl, fs, **{k: int(v) for k, v in params.items()})
            else:
                raise KeyError(f"unknown fault {kind!r}; known: {', '.join(faults.FAULTS)}")
            self.st["log"].append({"run": self.st["run_seq"], "fault": kind, "fs": fs,
                                   "params": dict(params)})
            state.save(self.root, self.st)
            tree.write(self.root, self.st)

    def set(self, fs: str | None = None, **settings) -> dict:
        """Change client settings, the node's identity or the quirks, and rewrite the tree.

        llite (per mount; every mount unless fs is given): max_read_ahead_mb,
        max_read_ahead_per_file_mb, max_read_ahead_whole_mb (MiB), checksums (0/1; like the
        kernel it also sets every OSC of the mount), hybrid_io (0/1),
        hybrid_io_read_threshold_bytes, hybrid_io_write_threshold_bytes (2.15.62+/2.15.64+).
        osc (every OSC of the mount): max_pages_per_rpc, max_rpcs_in_flight, max_dirty_mb,
        osc_checksums. node: kernel (uname -r), os_image (rhel-9.4, rocky-8.8, none, or a dict
        of os-release fields), image_id, image_version. quirks: a list (or comma string) of
        settings.QUIRKS names, replacing the current ones. Dotted names (llite.checksums,
        osc.checksums) are accepted too. Returns what was set."""
        with _locked(self.root):
            self._reload()
            p = profile(self.st["version"])
            st = copy.deepcopy(self.st)                 # all or nothing
            done = settings_mod.apply(st, p, settings, fs)
            self.st = st
            self.st["run_seq"] += 1
            self.st["log"].append({"run": self.st["run_seq"], "set": dict(done),
                                   "fs": fs})
            self.st["log"] = self.st["log"][-50:]
            state.save(self.root, self.st)
            tree.write(self.root, self.st)
        return done

    @property
    def quirks(self) -> list[str]:
        return list(self.st.get("quirks", []))

    def settings(self) -> dict:
        """The settings in force: quirks, kernel, os-release text, and per filesystem its llite
        and (first) OSC settings."""
        return settings_mod.describe(self.st)

    def write_tree(self) -> None:
        with _locked(self.root):
            tree.write(self.root, self.st)

    def _osp_activity(self, rng: random.Random) -> None:
        """Server-side OSP devices (MDT -> OST): some traffic, so counting them would show."""
        from .counters import tally, tally_log2
        for osp in self.st["osp"].values():
            h = osp["hist"]
            for _ in range(500):
                tally_log2(h["write_pages"], rng.choice((1, 1, 2, 256)))
                tally(h["write_rif"], rng.randint(1, 4))
                tally_log2(h["write_off"], rng.randint(1, 10000))


def _boolish(v) -> bool:
    if isinstance(v, str):
        return v.strip().lower() in ("1", "true", "yes", "on")
    return bool(v)


def _summary(name: str, fs: str, elapsed: float, before: dict, after: dict, latencies: bool) -> dict:
    """What a run did on fs, from its stats before and after: llite bytes and calls, the calls'
    latency sums in µs as llite stats' read and write lines give them (None where the client's
    stats have no latency: before 2.14), the other ops, RPC pages per size, OSC bytes."""
    def cnt(stats, k):
        c = stats.get(k)
        return c[0] if c else 0

    def sm(stats, k):
        c = stats.get(k)
        return c[3] if c else 0

    lb, la = before["llite"]["stats"], after["llite"]["stats"]
    ops = {}
    for k in set(la) | set(lb):
        if k in ("read_bytes", "write_bytes", "read", "write", "opencount", "openclosetime"):
            continue
        d = cnt(la, k) - cnt(lb, k)
        if d:
            ops[k] = d
    rpc = {"read": [0] * 32, "write": [0] * 32}
    osc_bytes = {"read": 0, "write": 0}
    for ob, oa in zip(before["osc"], after["osc"]):
        for d in ("read", "write"):
            for i in range(32):
                rpc[d][i] += oa["hist"][f"{d}_pages"][i] - ob["hist"][f"{d}_pages"][i]
            osc_bytes[d] += sm(oa["stats"], f"{d}_bytes") - sm(ob["stats"], f"{d}_bytes")
    for oa in after["osc"][len(before["osc"]):]:
        for d in ("read", "write"):
            for i in range(32):
                rpc[d][i] += oa["hist"][f"{d}_pages"][i]
            osc_bytes[d] += sm(oa["stats"], f"{d}_bytes")
    last = max([i for d in rpc for i in range(32) if rpc[d][i]] + [0])
    return {"workload": name, "fs": fs, "elapsed_s": elapsed,
            "read_bytes": sm(la, "read_bytes") - sm(lb, "read_bytes"),
            "write_bytes": sm(la, "write_bytes") - sm(lb, "write_bytes"),
            "read_calls": cnt(la, "read_bytes") - cnt(lb, "read_bytes"),
            "write_calls": cnt(la, "write_bytes") - cnt(lb, "write_bytes"),
            **{f"{d}_latency_us": sm(la, d) - sm(lb, d) if latencies else None for d in ("read", "write")},
            "ops": dict(sorted(ops.items())),
            "rpc_pages": {d: {1 << i: rpc[d][i] for i in range(last + 1)} for d in rpc},
            "osc_bytes": osc_bytes}
