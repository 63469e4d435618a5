"""Job series of known phases, for testing phase detection: each channel's rate per bin laid out
by a schedule, with the noise real I/O has (multiplicative: a bin's count is its rate times a
lognormal factor; counts are whole numbers).

A schedule is a list of (first bin, end bin, channel, count per bin) pieces added up over a
background of every channel's steady level; `boundaries` are the bins where a piece starts or
ends: where a phase must change."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

CHANNELS = ("read", "write", "metadata")
MIB = 1 << 20


@dataclass
class Workload:
    bins: int
    background: dict[str, float]                     # per channel: count per bin
    pieces: list[tuple[int, int, str, float]] = field(default_factory=list)

    def rates(self) -> dict[str, np.ndarray]:
        out = {c: np.full(self.bins, float(self.background.get(c, 0.0))) for c in CHANNELS}
        for a, b, c, level in self.pieces:
            out[c][a:b] += level
        return out

    def series(self, rng: np.random.Generator, noise: float = 0.3) -> dict[str, np.ndarray]:
        """One draw: each bin's count = its rate x lognormal(0, noise), rounded."""
        return {c: np.rint(r * rng.lognormal(0.0, noise, self.bins)) for c, r in self.rates().items()}

    def boundaries(self) -> set[int]:
        return {b for a, e, _, _ in self.pieces for b in (a, e) if 0 < b < self.bins}


def steady(bins: int = 360) -> Workload:
    """Small reads and writes and a trickle of opens all the way through."""
    return Workload(bins, {"read": 40 * MIB, "write": 10 * MIB, "metadata": 50})


def startup_storm(bins: int = 360) -> Workload:
    """An open storm in the first 2 minutes (12 bins of 10 s), then steady reads."""
    w = Workload(bins, {"read": 200 * MIB, "write": 2 * MIB, "metadata": 20})
    w.pieces.append((0, 12, "metadata", 20_000))
    return w


def checkpoints(bins: int = 1080, period: int = 120, length: int = 2, first: int = 100) -> Workload:
    """Quiet compute with a little reading; a write burst of `length` bins every `period`."""
    w = Workload(bins, {"read": 5 * MIB, "write": 1 * MIB, "metadata": 5})
    for a in range(first, bins - length, period):
        w.pieces.append((a, a + length, "write", 26 * 1024 * MIB))
    return w


def read_then_write(bins: int = 300) -> Workload:
    """A read phase, then a write phase of the same length."""
    w = Workload(bins, {"metadata": 10})
    w.pieces += [(0, bins // 2, "read", 500 * MIB), (bins // 2, bins, "write", 500 * MIB)]
    return w


def final_flush(bins: int = 360) -> Workload:
    """Steady reads, then the results written in the last 3 bins."""
    w = Workload(bins, {"read": 100 * MIB, "write": 1 * MIB, "metadata": 10})
    w.pieces.append((bins - 3, bins, "write", 20 * 1024 * MIB))
    return w


def idle_gap(bins: int = 360) -> Workload:
    """Reads, an idle hour in the middle (nothing at all), reads again."""
    w = Workload(bins, {"metadata": 0})
    w.pieces += [(0, 120, "read", 300 * MIB), (240, bins, "read", 300 * MIB), (0, 120, "metadata", 30),
                 (240, bins, "metadata", 30)]
    return w
