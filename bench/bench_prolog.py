#!/usr/bin/env python3
"""Prolog latency: what a Slurm job waits at start for lustre-jobreport, one host.

A private pmcd runs the real agent on a simulated 2.15 client (2 filesystems, 12 OSTs); the
config maps the Slurm node name to it; the Slurm Prolog environment is the one slurmd gives
(notes/slurm.md §4.2). Measured in one run, N times each, medians:
  1. hooks/slurm/prolog, the wrapper slurm.conf names (sh, the reporter asked for its bound (--limits), timeout, the reporter):
     goal <= 0.3 s;
  2. `lustre-jobreport prolog` alone (no wrapper), and the same forced onto the in-process
     path that jobs on more than [hooks] prolog_cli_max_hosts nodes take;
  floors: 3. `python -c pass` with the same interpreter; 4. `pminfo -f lustreclient` of the
  same host (one fetch, the C tool).
Also checked: the prolog path imports neither pandas nor Jinja2 (`python -X importtime`).
Needs root (the spool must be root's); exits 1 if the import rule is broken.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from kit.hookkit import HOOKS, REPORTER, ensure_user, slurm_env, world_dir, write_config, write_defaults  # noqa: E402
from kit.privpmcd import PrivatePmcd  # noqa: E402

from lustre_sim import SimClient  # noqa: E402

N, GOAL_S = 20, 0.3


def timed(cmds: dict[str, tuple[list[str], dict | None]], n: int = N) -> dict[str, list[float]]:
    """Each command n times, interleaved (a burst of load elsewhere hits all of them alike)."""
    out: dict[str, list[float]] = {name: [] for name in cmds}
    for _ in range(n):
        for name, (cmd, env) in cmds.items():
            t0 = time.perf_counter()
            subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=False)
            out[name].append(time.perf_counter() - t0)
    return out


def line(name: str, xs: list[float], extra: str = "") -> float:
    med = statistics.median(xs)
    p90 = sorted(xs)[int(0.9 * (len(xs) - 1))]
    print(f"  {name:<44} median {med * 1000:6.1f} ms  p90 {p90 * 1000:6.1f} ms{extra}")
    return med


def main() -> int:
    if os.geteuid() != 0:
        print("bench_prolog: needs root (the hooks' spool is root's); skipped")
        return 0
    pw = ensure_user()
    node = os.uname().nodename.split(".")[0]
    with world_dir("ljr-bench-") as d:
        SimClient.create(d / "tree", version="2.15.4", filesystems=[("scratch", 8, 1), ("home", 4, 1)], seed=1)
        with PrivatePmcd(d / "pmcd", d / "tree") as pmcd:
            config = write_config(d / "config.toml", hosts={node: pmcd.spec}, spool=d / "spool",
                                  records=d / "records", log=d / "hooks.log")
            defaults = write_defaults(d / "default", config=config)
            env = slurm_env("1001", pw, defaults, nodelist=node, node=node)
            begin = d / "spool" / "1001.begin.json"
            # warm up caches (page cache, agent instance tables) once, and check it works
            subprocess.run([str(HOOKS / "slurm" / "prolog")], env=env, check=True)
            if not begin.exists():
                print(f"bench_prolog: the prolog wrote no begin snapshot; log:\n{(d / 'hooks.log').read_text()}")
                return 1
            large = write_config(d / "large.toml", hosts={node: pmcd.spec}, spool=d / "spool",
                                 records=d / "records", log=d / "hooks.log", hooks_extra="prolog_cli_max_hosts = 0")
            print(f"prolog latency, one host, {N} runs each, interleaved:")
            t = timed({"wrapper": ([str(HOOKS / "slurm" / "prolog")], env),
                       "direct": ([str(REPORTER), "--config", str(config), "prolog"], env),
                       "pmapi": ([str(REPORTER), "--config", str(large), "prolog"], env),
                       "python": ([sys.executable, "-c", "pass"], None),
                       "pminfo": (["pminfo", "-h", pmcd.spec, "-f", "lustreclient"], None)})
            wrapper = line("hooks/slurm/prolog (what Slurm runs)", t["wrapper"])
            direct = line("lustre-jobreport prolog (no wrapper)", t["direct"])
            line("  the same, in-process path (large jobs)", t["pmapi"], "  (PCP bindings + numpy imports)")
            py = line("floor: python -c pass", t["python"])
            fetch = line("floor: pminfo -f lustreclient (one fetch)", t["pminfo"])
            print(f"  wrapper = {wrapper / GOAL_S:.2f}x the {GOAL_S} s goal "
                  f"({'met' if wrapper <= GOAL_S else 'NOT met'}); "
                  f"{wrapper / (py + fetch):.1f}x the floors' sum ({(py + fetch) * 1000:.0f} ms); "
                  f"wrapper overhead {(wrapper - direct) * 1000:+.0f} ms")
            proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "lustre_jobreport", "--config",
                                   str(config), "prolog"], env=env, capture_output=True, text=True)
            mods = {l.split("|")[-1].strip() for l in proc.stderr.splitlines() if l.startswith("import time:")}
            heavy = sorted(m for m in mods if m.split(".")[0] in ("pandas", "jinja2"))
            print(f"  prolog imports {len(mods)} modules; pandas/Jinja2 among them: {heavy or 'none'}")
            errors = [l for l in (d / "hooks.log").read_text().splitlines() if ": error: " in l] \
                if (d / "hooks.log").exists() else []
            if errors:
                print("  hook errors:\n    " + "\n    ".join(errors[:5]))
            return 1 if heavy or errors else 0


if __name__ == "__main__":
    sys.exit(main())
