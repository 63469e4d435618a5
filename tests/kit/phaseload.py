"""Workloads of known phases driven through the simulator in real time, for the timeline's tests
through the real agent: each filesystem of one sim client gets a schedule (which sim workload
runs in which bin), and `drive` runs every bin's workloads early in that bin of the agent's
epoch-aligned clock, so that the agent's samples see the I/O bin by bin.

The phases are the schedule's: `boundaries` are the bins where what runs changes in level,
`periodic` the bursts that repeat. The agent's point j holds the I/O of the sample before it
up to its own, i.e. the bin's I/O shows in the point of the bin it was done in or the next:
a test allows one bin either way, as the detection must find phases within one interval.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

MIB = 1 << 20

# (workload, params): one run of a sim workload, its random choices drawn from `seed`
Run = tuple[str, dict]


@dataclass
class Schedule:
    """One filesystem's runs, bin by bin, and what a phase finder must say of them."""
    fs: str
    runs: list[list[Run]]                      # per bin: the runs in it
    boundaries: set[int] = field(default_factory=set)
    periodic: tuple[str, int, int] | None = None    # channel, period in bins, count
    kinds: list[tuple[int, str]] = field(default_factory=list)   # (bin, the phase's kind there)

    @property
    def bins(self) -> int:
        return len(self.runs)


def startup_storm(bins: int, fs: str = "startup", storm: int = 4) -> Schedule:
    """An open storm (hundreds of small files opened and read whole) in the first bins, then
    small random reads of one file all the way through."""
    runs = [[("smallfile-read", {"files": 150, "size": 4096, "max_size": 4096, "call": 4096, "jitter": 0.0})]
            if b < storm else [] for b in range(bins)]
    for b in range(bins):
        runs[b].append(("random-read", {"reads": 100, "call": 4096, "procs": 1}))
    return Schedule(fs, runs, {storm}, None, [(0, "start-up burst"), (bins // 2, "steady")])


def checkpoints(bins: int, fs: str = "ckpt", period: int = 12, first: int = 6) -> Schedule:
    """Steady reads, and a checkpoint (large writes, fsync) every `period` bins."""
    runs: list[list[Run]] = [[("seqread", {"files": 1, "size": 4 * MIB, "call": MIB})] for _ in range(bins)]
    at = list(range(first, bins - 1, period))
    for b in at:
        runs[b].append(("checkpoint", {"ranks": 2, "size": 64 * MIB, "call": 4 * MIB, "jitter": 0.0}))
    return Schedule(fs, runs, {x for b in at for x in (b, b + 1)}, ("write_bytes", period, len(at)),
                    [(first, "burst")])


def read_then_write(bins: int, fs: str = "rdwr") -> Schedule:
    """A read phase, then a write phase of the same length."""
    half = bins // 2
    runs = [[("seqread", {"files": 1, "size": 64 * MIB, "call": MIB})] if b < half else
            [("checkpoint", {"ranks": 1, "size": 64 * MIB, "call": 4 * MIB, "jitter": 0.0, "fsync": False})]
            for b in range(bins)]
    return Schedule(fs, runs, {half}, None, [(half // 2, "steady"), (half + half // 2, "steady")])


def steady(bins: int, fs: str = "steady") -> Schedule:
    """Small random reads at one rate all the way through: one phase, nothing else."""
    return Schedule(fs, [[("random-read", {"reads": 50, "call": 4096, "procs": 1})] for _ in range(bins)],
                    set(), None, [(bins // 2, "steady")])


def ALL(bins: int) -> list[Schedule]:
    return [startup_storm(bins), checkpoints(bins), read_then_write(bins), steady(bins)]


def drive(clients, schedules: list[Schedule], width_s: float, lead: float = 0.15) -> int:
    """Run the schedules on the sim client (or on each of a list of clients: the nodes of a job
    doing the same), bin b's runs `lead` of a width into the b-th bin
    after the next boundary of the agent's clock (bins of width_s since the epoch). Returns the
    epoch bin of schedule bin 0. A bin whose runs end after the bin is over fails the drive
    (AssertionError): the test machine was too slow for the width, and the phases would blur."""
    first = int(time.time() / width_s) + 1
    bins = max(s.bins for s in schedules)
    for b in range(bins):
        start = (first + b + lead) * width_s
        time.sleep(max(0.0, start - time.time()))
        runs = [(workload, s.fs, dict(params, seed=f"{b}.{n}"))
                for s in schedules for n, (workload, params) in enumerate(s.runs[b] if b < s.bins else ())]
        for client in clients if isinstance(clients, (list, tuple)) else [clients]:
            client.run_many(runs)
        late = time.time() - (first + b + 1) * width_s
        assert late < 0, f"bin {b}'s runs ended {late:.3f} s after the bin: widen the bins"
    return first
