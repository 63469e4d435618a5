#!/usr/bin/env python3
"""Fan-out snapshot: 1,000 hosts, many names resolving to a few local pmcds.

Four private pmcds, each running the real agent on its own simulated client (2.15 layout,
2 filesystems, 12 OSTs), stand for the nodes; 1,000 host names map onto them round robin
(config [hosts] style). Measured in one run:
  1. all 1,000 hosts alive (PMAPI backend): goal <= 5 s;
  2. the same with 5 % of the hosts dead - a port that accepts connections but never answers,
     the worst kind - goal: all of them together cost at most one host timeout of wall time;
  3. peer: the pminfo (command-line) backend on the same hosts.
"""

from __future__ import annotations

import socket
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from kit.privpmcd import PrivatePmcd  # noqa: E402
from figures import against_floor, against_goal, verdict  # noqa: E402

from lustre_jobreport.acquire import snapshot  # noqa: E402
from lustre_sim import SimClient  # noqa: E402

HOSTS, PMCDS, GOAL_S = 1000, 4, 5.0
CONNECT_TIMEOUT, FETCH_TIMEOUT = 2.0, 3.0
HOST_TIMEOUT = CONNECT_TIMEOUT + FETCH_TIMEOUT      # what one host may cost at most


def blackhole() -> tuple[socket.socket, str]:
    """A listening socket nobody accepts on: connects succeed, no pmcd ever answers."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(4096)
    return s, f"localhost:{s.getsockname()[1]}"


def take(targets, backend="pmapi") -> tuple[float, int]:
    t0 = time.perf_counter()
    snap = snapshot.take(targets, connect_timeout_s=CONNECT_TIMEOUT, fetch_timeout_s=FETCH_TIMEOUT, parallel=64,
                         backend=backend)
    wall = time.perf_counter() - t0
    return wall, sum(1 for h in snap.hosts.values() if h.ok)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        pmcds = []
        for i in range(PMCDS):
            SimClient.create(tmp / f"t{i}", version="2.15.4", filesystems=[("scratch", 8, 1), ("home", 4, 1)], seed=i)
            pmcds.append(PrivatePmcd(tmp / f"p{i}", tmp / f"t{i}").start())
        try:
            live = [snapshot.HostTarget(f"node{h:04d}", pmcds[h % PMCDS].spec) for h in range(HOSTS)]
            take(live[:PMCDS])                                       # warm up (agent instance caches)
            wall, ok = take(live)
            print(against_goal(f"fan-out, {HOSTS:,} hosts on {PMCDS} pmcds (PMAPI)", f"{wall:.2f} s",
                               wall / GOAL_S, f"the {GOAL_S:g} s goal", f" ({ok:,} read)"))
            hole, spec = blackhole()
            dead_every = 20                                          # 5 %
            mixed = [snapshot.HostTarget(t.name, spec) if h % dead_every == 0 else t for h, t in enumerate(live)]
            wall_dead, ok_dead = take(mixed)
            cost = wall_dead - wall * (len(mixed) - HOSTS // dead_every) / HOSTS
            print(against_goal(f"{HOSTS // dead_every} dead hosts (accept, never answer) among them",
                               f"{cost:.2f} s more ({wall_dead:.2f} s, {ok_dead:,} read)", cost / HOST_TIMEOUT,
                               f"the goal of one host timeout ({CONNECT_TIMEOUT:g} s connect + "
                               f"{FETCH_TIMEOUT:g} s fetch)"))
            hole.close()
            few = live[:200]
            wall_api, _ = take(few)
            wall_cli, _ = take(few, backend="cli")
            print(against_floor("pminfo backend (one pminfo a host), 200 hosts", f"{wall_cli:.2f} s",
                                wall_cli / wall_api, f"its peer, the PMAPI backend ({wall_api:.2f} s)"))
        finally:
            for p in pmcds:
                p.stop()
    print(f"goals: fan-out <= {GOAL_S:g} s {verdict(wall <= GOAL_S)}; dead hosts <= one host "
          f"timeout {verdict(cost <= HOST_TIMEOUT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
