#!/usr/bin/env python3
"""Report build at scale: 1,000 hosts x 2,048 OSCs (4 filesystems x 512 OSTs), 2.15 layout.

One real client (a sim tree in a private pmcd with the real agent) is fetched for its metric
set and instance names; 1,000 hosts are made from it with per-host values (begin) and per-host
job deltas (end), some hosts with cleared stats, and written as snapshot files. Then
`lustre-jobreport report --format json` runs on them as a separate process, timed, with its
peak RSS. Goal (issue 5): <= 10 s and <= 2 GB. Floor, measured in the same run: a process that
only reads the two snapshot files (snapfile.read).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from kit.privpmcd import PrivatePmcd  # noqa: E402
from figures import against_floor, against_goal, verdict  # noqa: E402

from lustre_jobreport.acquire import pcpfetch, snapfile  # noqa: E402
from lustre_jobreport.acquire.column import Column  # noqa: E402
from lustre_jobreport.acquire.hostsnap import HostSnapshot  # noqa: E402
from lustre_jobreport.acquire.snapfile import Snapshot  # noqa: E402
from lustre_sim import SimClient  # noqa: E402

HOSTS, GOAL_S, GOAL_RSS = 1000, 10.0, 2 << 30


def template(tmp: Path) -> HostSnapshot:
    tree = tmp / "tree"
    SimClient.create(tree, version="2.15.4", filesystems=[(f"fs{i}", 512, 1) for i in range(4)],
                     seed=1, background=False)
    with PrivatePmcd(tmp / "pmcd", tree) as pmcd:
        host = pcpfetch.fetch_pmapi("template", pmcd.spec)
    if not host.ok:
        raise SystemExit(f"fetch failed: {host.error}")
    return host


def fleet(base: HostSnapshot, rng: np.random.Generator, deltas: dict | None) -> tuple[list[HostSnapshot], dict]:
    hosts, made = [], {}
    for h in range(HOSTS):
        metrics = {}
        for name, col in base.metrics.items():
            if col.is_string:
                metrics[name] = col
                continue
            if base.sems[name] != "counter":
                metrics[name] = col
                continue
            if deltas is None:
                values = rng.integers(0, 1 << 40, len(col.instances), dtype=np.uint64)
                made[(h, name)] = values
            elif name.endswith(("reconnects", "connect_count")):
                values = deltas[(h, name)] + (rng.random(len(col.instances)) < 1e-4).astype(np.uint64)
            else:
                values = deltas[(h, name)] + rng.integers(0, 1 << 20, len(col.instances), dtype=np.uint64)
                if h % 100 == 7:            # 1 % of hosts had their stats cleared during the job
                    values = values // np.uint64(1000)
            metrics[name] = Column(col.instances, values)
        hosts.append(HostSnapshot(f"node{h:04d}", f"node{h:04d}", ok=True, fetched_at=0.0,
                                  sems=base.sems, metrics=metrics, pmids=base.pmids))
    return hosts, made


def timed(cmd: list[str]) -> tuple[float, int]:
    """Wall time and peak RSS (bytes) of a child process: its own (wait4), not the largest of
    every child so far (RUSAGE_CHILDREN)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"{' '.join(cmd[:3])} ... failed (status {status})")
    return wall, usage.ru_maxrss * 1024


def main() -> int:
    rng = np.random.default_rng(1)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        base = template(tmp)
        values = sum(len(c.instances) for c in base.metrics.values())
        begin_hosts, made = fleet(base, rng, None)
        end_hosts, _ = fleet(base, rng, made)
        snapfile.write(Snapshot.from_hosts(1000.0, begin_hosts), tmp / "begin.json")
        snapfile.write(Snapshot.from_hosts(4600.0, end_hosts), tmp / "end.json")
        del begin_hosts, end_hosts, made
        size = (tmp / "begin.json").stat().st_size
        print(f"snapshots: {HOSTS} hosts x {values:,} values = {HOSTS * values / 1e6:.1f} M values each, "
              f"{size / 2**20:.0f} MiB per file")
        py = sys.executable
        floor, floor_rss = timed([py, "-c", "import sys; from lustre_jobreport.acquire import snapfile; "
                                  "snapfile.read(sys.argv[1]); snapfile.read(sys.argv[2])",
                                  str(tmp / "begin.json"), str(tmp / "end.json")])
        wall, rss = timed([py, "-m", "lustre_jobreport", "report", str(tmp / "begin.json"),
                           str(tmp / "end.json"), "--format", "json", "-o", str(tmp / "report.json")])
        wall_t, _ = timed([py, "-m", "lustre_jobreport", "report", str(tmp / "begin.json"),
                           str(tmp / "end.json"), "--format", "text", "-o", str(tmp / "report.txt")])
    floor_said = f"its floor, reading both snapshots ({floor:.2f} s)"
    print(against_goal("report build (json)", f"{wall:.2f} s", wall / GOAL_S, f"the {GOAL_S:g} s goal"))
    print("  " + against_floor("  the same", f"{wall:.2f} s", wall / floor, floor_said))
    print(against_goal("report build (text)", f"{wall_t:.2f} s", wall_t / GOAL_S, f"the {GOAL_S:g} s goal"))
    print("  " + against_floor("  the same", f"{wall_t:.2f} s", wall_t / floor, floor_said))
    print(against_goal("peak RSS (json)", f"{rss / 2**30:.2f} GiB", rss / GOAL_RSS, "the 2 GiB goal"))
    print("  " + against_floor("  the same", f"{rss / 2**30:.2f} GiB", rss / floor_rss,
                               f"its floor's ({floor_rss / 2**30:.2f} GiB)"))
    print(f"goals: build <= {GOAL_S:g} s {verdict(wall <= GOAL_S and wall_t <= GOAL_S)}; "
          f"peak RSS <= 2 GiB {verdict(rss <= GOAL_RSS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
