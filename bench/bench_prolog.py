#!/usr/bin/env python3
"""Prolog latency: what a Slurm job waits at start for lustre-jobreport, one host.

A private pmcd runs the real agent on a simulated 2.15 client (2 filesystems, 12 OSTs), with the
[access] PCP ships (stores over local connections only); the config maps the Slurm node name to
it; the Slurm Prolog environment is the one slurmd gives (notes/slurm.md §4.2). Measured in one
run, N times each, interleaved, medians:
  1. hooks/slurm/prolog, the wrapper slurm.conf names (sh, timeout, the reporter under the
     built-in bound, which is the config's), as shipped: every Slurm job read through the job
     view, so the prolog stores the job's start into the node's own agent (one local pmstore):
     goal <= 1.5x its floors' sum (4 + 6) and <= 0.3 s;
  2. the same with a site's own bound in the config (the reporter started twice: the first
     says the config's bound and stops);
  3. `lustre-jobreport prolog` alone (no wrapper);
  4. the snapshot path (PBS jobs, job_view_from_nodes = 0): the wrapper, goal <= 1.5x its
     floors' sum (5 + 7), and forced onto the in-process path that jobs on more than
     [hooks] prolog_cli_max_hosts nodes take;
  floors: 5. `python -c pass` with the same interpreter; 6. `pmstore` of the job's start into
  the same agent (the C tool); 7. `pminfo -f lustreclient` of the same host (one fetch).
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
from kit.privpmcd import DEFAULT_ACCESS, PrivatePmcd  # noqa: E402
from figures import against_floor, against_goal  # noqa: E402

from lustre_sim import SimClient  # noqa: E402

N, GOAL_S, GOAL_FLOORS = 40, 0.3, 1.5


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


def median_ms(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1000:.1f} ms (p90 {sorted(xs)[int(0.9 * (len(xs) - 1))] * 1000:.1f})"


def main() -> int:
    if os.geteuid() != 0:
        print("bench_prolog: needs root (the hooks' spool is root's); skipped")
        return 0
    pw = ensure_user()
    node = os.uname().nodename.split(".")[0]
    with world_dir("ljr-bench-") as d:
        SimClient.create(d / "tree", version="2.15.4", filesystems=[("scratch", 8, 1), ("home", 4, 1)], seed=1)
        with PrivatePmcd(d / "pmcd", d / "tree", access=DEFAULT_ACCESS) as pmcd:
            local = f'local_spec = "{pmcd.local_spec}"'
            config = write_config(d / "config.toml", hosts={node: pmcd.spec}, spool=d / "spool",
                                  records=d / "records", log=d / "hooks.log", snapshot=local,
                                  hooks_extra="job_view_from_nodes = 1")
            env = slurm_env("1001", pw, write_defaults(d / "default", config=config), nodelist=node, node=node)
            snap = write_config(d / "snap.toml", hosts={node: pmcd.spec}, spool=d / "spool",
                                records=d / "records", log=d / "hooks.log", hooks_extra="job_view_from_nodes = 0")
            snap_env = dict(env, LUSTRE_JOBREPORT_DEFAULTS=str(write_defaults(d / "snap.default", config=snap)))
            begin = d / "spool" / "1001.begin.json"
            # warm up caches (page cache, agent instance tables) once, and check both paths work
            subprocess.run([str(HOOKS / "slurm" / "prolog")], env=env, check=True)
            if "job start kept by the local agent" not in (d / "hooks.log").read_text():
                print(f"bench_prolog: the prolog kept no job start; log:\n{(d / 'hooks.log').read_text()}")
                return 1
            subprocess.run([str(HOOKS / "slurm" / "prolog")], env=snap_env, check=True)
            if not begin.exists():
                print(f"bench_prolog: the prolog wrote no begin snapshot; log:\n{(d / 'hooks.log').read_text()}")
                return 1
            large = write_config(d / "large.toml", hosts={node: pmcd.spec}, spool=d / "spool",
                                 records=d / "records", log=d / "hooks.log",
                                 hooks_extra="prolog_cli_max_hosts = 0\njob_view_from_nodes = 0")
            own = write_config(d / "own.toml", hosts={node: pmcd.spec}, spool=d / "spool", records=d / "records",
                               log=d / "hooks.log", prolog_timeout_s=6.0, snapshot=local,
                               hooks_extra="job_view_from_nodes = 1")
            own_env = dict(env, LUSTRE_JOBREPORT_DEFAULTS=str(write_defaults(d / "own.default", config=own)))
            print(f"prolog latency, one host, {N} runs each, interleaved, medians:")
            t = timed({"wrapper": ([str(HOOKS / "slurm" / "prolog")], env),
                       "own bound": ([str(HOOKS / "slurm" / "prolog")], own_env),
                       "direct": ([str(REPORTER), "--config", str(config), "prolog"], env),
                       "snapshot": ([str(HOOKS / "slurm" / "prolog")], snap_env),
                       "pmapi": ([str(REPORTER), "--config", str(large), "prolog"], env),
                       "python": ([sys.executable, "-c", "pass"], None),
                       "pmstore": (["pmstore", "-h", pmcd.local_spec, "lustreclient.control.job_begin", "1001"], None),
                       "pminfo": (["pminfo", "-h", pmcd.spec, "-f", "lustreclient"], None)})
            med = {name: statistics.median(xs) for name, xs in t.items()}
            floors = med["python"] + med["pmstore"]
            snap_floors = med["python"] + med["pminfo"]
            print(f"  floors: python -c pass {median_ms(t['python'])}; pmstore of the job's start "
                  f"{median_ms(t['pmstore'])}; pminfo -f lustreclient (one fetch) {median_ms(t['pminfo'])}")
            of_floors = f"its floors (python + pmstore, {floors * 1000:.1f} ms)"
            of_snap = f"its floors (python + pminfo, {snap_floors * 1000:.1f} ms)"
            print("  " + against_floor("hooks/slurm/prolog (what Slurm runs: the job view)", median_ms(t["wrapper"]),
                                       med["wrapper"] / floors, of_floors, GOAL_FLOORS))
            print("  " + against_goal("  the same against the absolute goal", f"{med['wrapper'] * 1000:.1f} ms",
                                      med["wrapper"] / GOAL_S, f"the {GOAL_S} s goal"))
            print("  " + against_floor("  a site's own bound (the reporter started twice)", median_ms(t["own bound"]),
                                       med["own bound"] / floors, of_floors, GOAL_FLOORS))
            print("  " + against_floor("lustre-jobreport prolog (no wrapper)", median_ms(t["direct"]),
                                       med["direct"] / floors, of_floors, GOAL_FLOORS,
                                       f" (the wrapper adds {(med['wrapper'] - med['direct']) * 1000:+.1f} ms)"))
            print("  " + against_floor("the snapshot path (PBS, job_view_from_nodes = 0)", median_ms(t["snapshot"]),
                                       med["snapshot"] / snap_floors, of_snap, GOAL_FLOORS))
            print("  " + against_floor("  in-process path (large jobs: PCP bindings + numpy)", median_ms(t["pmapi"]),
                                       med["pmapi"] / snap_floors, of_snap))
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
