#!/usr/bin/env python3
"""What keeping a running job on disk costs the node (docs/design.md §2.4, "A restart keeps the
jobs"): the CPU and the bytes of one checkpoint of one slot (its begin values and its timeline,
written whole: a temporary file, fsync, rename, fsync of the directory), on a simulated 2.15
client of 600 OSCs (4 filesystems x 150 OSTs), and that as a share of a core at the shipped
period (-K 60).

1. A job just begun: its begin values of 600 OSCs, a timeline of one point.
2. A job whose timeline is at its largest: an agent at -T 0.01 until its timeline has merged and
   filled 512 points again (4 filesystems x 512 points x 159 values), stopped (it writes the slot
   as it leaves); the next agent takes the job up from that file.
Each: the agent at -K 0.1 and -T 3600 (no timeline sample in the run) for BENCH_PERSIST_S
seconds (default 20), less the same agent at -K 3600 over as long; the checkpoints and their
bytes counted from the agent's -Dappl3 log lines. Runs in about 2 minutes; the system pmcd is
not touched.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:0] = [str(REPO / "tests"), str(REPO / "sim")]

from lustre_sim import SimClient  # noqa: E402
from kit.privpmcd import PrivatePmcd, children_of, cpu_seconds  # noqa: E402
from kit.seriesread import decode, fetch_together  # noqa: E402
from figures import against_goal  # noqa: E402

SECONDS = int(os.environ.get("BENCH_PERSIST_S", "20"))
NFS, NOST = 4, 150
SHIPPED_S = 60
CPU_GOAL_PCT = 0.5      # the timeline's goal (bench_timeline): a checkpoint is part of its cost
JOB = "bench-1"
SERIES = "lustreclient.job.slot0.series"
KEPT = re.compile(r"job \S+: slot \d+ kept, (\d+) bytes")


def say(*a):
    print(*a, flush=True)


def store(pmcd: PrivatePmcd, control: str) -> None:
    done = subprocess.run(["pmstore", "-h", pmcd.local_spec, f"lustreclient.control.{control}", JOB],
                          capture_output=True, text=True, timeout=60)
    if done.returncode:
        raise RuntimeError(done.stderr)


def fill(tree: Path, work: Path, state: Path) -> tuple[int, int]:
    """A job whose timeline is at its most points, left in state by the agent as it stops: its
    points and filesystems."""
    with PrivatePmcd(work, tree, interval=0.01, extra_agent_args=("-S", str(state), "-K", "3600")) as pmcd:
        store(pmcd, "job_begin")
        deadline = time.monotonic() + 600
        s = decode(fetch_together(pmcd.spec, [SERIES])[0][SERIES][""])
        while time.monotonic() < deadline and not (s.level >= 1 and len(s.samples) >= 500):
            time.sleep(1)
            s = decode(fetch_together(pmcd.spec, [SERIES])[0][SERIES][""])
    return len(s.samples), len(s.points)


def checkpoints(tree: Path, work: Path, state: Path, period: float, begin: bool) -> tuple[float, int, int]:
    """The agent's CPU over SECONDS at -K period with the job in state (begun first when begin),
    and the checkpoints it made and the bytes of the last."""
    args = ("-S", str(state), "-K", f"{period:g}", "-D", "appl3")
    with PrivatePmcd(work, tree, interval=3600, extra_agent_args=args) as pmcd:
        if begin:
            store(pmcd, "job_begin")
        [pid] = children_of(pmcd.proc.pid)
        log = work / "lustreclient.log"
        before = len(KEPT.findall(log.read_text()))
        c0 = cpu_seconds(pid)
        time.sleep(SECONDS)
        cpu = cpu_seconds(pid) - c0
        kept = KEPT.findall(log.read_text())
    return cpu, len(kept) - before, int(kept[-1]) if kept else 0


def cost(tree: Path, work: Path, state: Path, label: str, begin: bool) -> None:
    idle, _, _ = checkpoints(tree, work / "idle", state, 3600, begin)
    busy, n, size = checkpoints(tree, work / "busy", state, 0.1, False)
    per = max(busy - idle, 0.0) / max(n, 1)
    pct = 100 * per / SHIPPED_S
    say(f"    {n} checkpoints in {SECONDS} s, {size / 2**20:.2f} MiB each, {1000 * per:.2f} ms of CPU each")
    say("  " + against_goal(f"a slot's checkpoint at {SHIPPED_S} s, {NFS * NOST} OSCs, {label}",
                            f"{pct:.4f} % of a core", pct / CPU_GOAL_PCT, f"the {CPU_GOAL_PCT} % goal",
                            f" ({size / 2**10:.0f} KiB written a minute)"))


def run(work: Path) -> int:
    say(f"building a simulated Lustre 2.15.4 client: {NFS} filesystems x {NOST} OSTs ({NFS * NOST} OSCs) ...")
    tree = work / "tree"
    client = SimClient.create(tree, version="2.15.4", filesystems=[(f"fs{i}", NOST, 1) for i in range(NFS)], seed=1)
    client.run("ior", fs="fs0", tasks=8, block_size=64 << 20, transfer_size=1 << 20, stripe_count=-1)
    say("[1] a job just begun: its begin values and a timeline of one point ...")
    cost(tree, work / "fresh", work / "state-fresh", "a job just begun", begin=True)
    say("[2] a job whose timeline is at its largest (-T 0.01 until 512 points merged) ...")
    npoints, nfs = fill(tree, work / "fill", work / "state-full")
    say(f"    {npoints} points x {nfs} filesystems")
    cost(tree, work / "full", work / "state-full", f"timeline of {npoints} points x {nfs} filesystems",
         begin=False)
    return 0


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="bench-persist-") as d:
        return run(Path(d))


if __name__ == "__main__":
    sys.exit(main())
