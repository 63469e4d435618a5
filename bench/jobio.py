"""The I/O of a job's nodes, for the benchmarks' stand-in clients: what makes each node's job
view answer its own.

A job with file-per-process output (IOR's -F, a checkpoint per rank) has each node write its
tasks' files, each striped over 1 to 8 OSTs from where the nodes before it left off, on one or
two of the filesystems: every node touches its own few OSCs of the hundreds it has, and the
agent sends the job's OSC deltas of those alone (zeros are not sent). Stand-ins that all ran the
same I/O would answer alike, which no real job's nodes do.
"""

from __future__ import annotations

import random

TASKS = 8          # tasks (files) a node


def node_io(client, node: int, filesystems: list[str], seed: int = 0, differing: bool = True) -> None:
    """Node `node`'s share of a file-per-process IOR on a simulated client (lustre_sim.SimClient).
    differing False: every node does node 0's I/O (the same OSCs), as the benchmarks' stand-ins
    did before; the answers then have one shape."""
    rng = random.Random(seed * 1_000_003 + (node if differing else 0))
    for fs in rng.sample(filesystems, k=rng.randint(1, min(2, len(filesystems)))):
        client.run("ior", fs, tasks=TASKS, first_task=(node if differing else 0) * TASKS,
                   stripe_count=rng.randint(1, 8), block_size=8 << 20, seed=rng.randrange(1 << 30))
