"""When a job did its I/O: the phases of a job's series on one filesystem, found by a method that
can be defended in a test, not by eye.

Input: the job's channels over time (e.g. read bytes, write bytes and metadata operations), each
a count per bin of `width` seconds, summed over the job's hosts. Output: the phases, each a run
of bins of one level, in words (start-up burst, steady, burst, final flush, idle), and the
bursts that repeat at a regular period (checkpoints).

The method, in three steps:

1. **Change points** (`change_points`): the bins are split where the level of the channels
   changes, by *optimal partitioning* (Jackson et al. 2005, "An algorithm for optimal
   partitioning of data on an interval"): of all the ways to cut the series into segments, the
   one minimising the segments' squared deviations from their means plus a penalty per segment,
   found exactly by dynamic programming over cumulative sums (O(n^2) for n bins: a series has at
   most a few hundred). The channels are taken as log2(1 + count / unit), since I/O rates vary
   multiplicatively (a burst is 10x the steady level, whatever that level is); each channel is
   scaled by its noise, estimated robustly from the differences of its adjacent active bins
   (`_noise`: the smallest half of them, so that level changes, up to half of the differences
   when checkpoints come every few bins, do not count as noise), so that the penalty, a
   BIC-like PENALTY_PER_CHANNEL x channels x log(n), is in units of the noise. This is the
   standard penalised least-squares change-point model (ruptures' "l2" cost with a penalty), in
   numpy: the node side does not have ruptures (no distribution ships it).
2. **Levels that matter** (`_merge_close`): adjacent segments whose levels differ by less than
   MIN_LEVEL_RATIO in every channel are joined, the closest first: a change worth a phase in
   words is a change by a factor, not a statistically detectable wiggle.
3. **Words** (`_label`): a segment with every channel under IDLE_SHARE of the job's mean rate is
   idle; one at least BURST_RATIO times its neighbours' level and at most BURST_SHARE of the job
   is a burst: the first one a start-up burst when it comes in the job's first EDGE_SHARE, the
   last a final flush when it writes in the last EDGE_SHARE; the rest is steady. Bursts of one
   channel, at least MIN_REPEATS of them, whose starts are evenly spaced (each gap within
   PERIOD_TOLERANCE of the median gap, or one bin) are periodic (`Periodic`: the period, the
   count, the mean amount a burst).

The thresholds are named constants here; tests/report/test_phases.py holds the method to
workloads of known phases (every phase found within one bin) and to steady I/O over many seeds
(no phase that is not there).
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

PENALTY_PER_CHANNEL = 4.0   # x log(n) per segment, in units of each channel's noise
PENALTY_MIN_BINS = 360       # the penalty of a shorter series is that of this many bins: its noise,
                            # estimated from few differences, may be too low
NOISE_FLOOR = 0.05          # the least noise a channel is taken to have (log2 units): a perfectly
                            # regular series must not split on rounding
UNIT_SHARE = 0.01           # counts are taken as log2(1 + count / unit), unit this share of a channel's
                            # median active bin
MIN_UNIT = 10.0             # ... and at least this many: a few operations (or bytes) more or less in a
                            # bin are counting noise, not a change
NOISE_KEEP = 0.5            # the noise is measured over this share of the smallest bin-to-bin differences
                            # (the rest may be level changes: bursts every 6 bins make a third of them) ...
NOISE_MIN_KEPT = 8          # ... and over at least this many (all of a shorter series'): the smallest half
                            # of a few differences would often make noise look like phases
MIN_LEVEL_RATIO = 2.0       # adjacent segments closer than this in every channel are one phase
IDLE_SHARE = 0.05           # a segment below this share of the job's mean rate in every channel is idle
BURST_RATIO = 4.0           # a burst: this many times its neighbours' level in its channel ...
BURST_SHARE = 0.10          # ... for at most this share of the job's bins
EDGE_SHARE = 0.15           # a start-up burst starts in the job's first share, a final flush ends in its last
MIN_REPEATS = 3             # periodic: at least this many bursts ...
PERIOD_TOLERANCE = 0.2      # ... each gap within this share of the median gap (or one bin)
MIN_BINS = 6                # fewer bins than this: no timeline (too short to say when)
_NORMAL = NormalDist()


@dataclass(frozen=True)
class Phase:
    """A run of bins [first, end) of one level: its kind (KINDS), the channel that dominates it
    (the one furthest above the job's mean, None when idle) and its total per channel."""
    kind: str
    first: int
    end: int
    channel: str | None
    sums: dict[str, float]


@dataclass(frozen=True)
class Periodic:
    """Bursts of one channel at a regular period: the period in bins (the median gap between
    their starts), how many, their mean amount, and the first bin of each."""
    channel: str
    period_bins: float
    count: int
    mean_amount: float
    starts: tuple[int, ...]


@dataclass(frozen=True)
class Phases:
    """A series' phases (in order, covering every bin) and its periodic bursts; empty when the
    series has fewer than MIN_BINS bins (too_short)."""
    bins: int
    width: float
    phases: tuple[Phase, ...]
    periodic: tuple[Periodic, ...]

    @property
    def too_short(self) -> bool:
        return self.bins < MIN_BINS


KINDS = ("start-up burst", "steady", "burst", "final flush", "idle")


def find(channels: dict[str, np.ndarray], width: float) -> Phases:
    """The phases of a job's series: channels name -> count per bin (all of one length), bins
    of width seconds. A negative count (a source left out mid-job takes its earlier counts back
    in one bin) is taken as no I/O seen in that bin when finding the phases; the phases' sums
    are of the counts as they are, so they add up to the series' totals."""
    names = list(channels)
    counts = np.array([np.asarray(channels[c], dtype=np.float64) for c in names]).reshape(len(names), -1)
    n = counts.shape[1]
    if n < MIN_BINS or not names:
        return Phases(n, width, (), ())
    x = np.clip(counts, 0.0, None)
    z = _scaled(x)
    starts = change_points(z.T, PENALTY_PER_CHANNEL * len(names) * np.log(max(n, PENALTY_MIN_BINS)))
    bounds = _merge_close(x, [0, *starts, n])
    phases = _label(x, counts, bounds, names)
    return Phases(n, width, tuple(phases), tuple(_periodic(phases)))


def _scaled(x: np.ndarray) -> np.ndarray:
    """[c, t]: each channel as log2(1 + count / unit), divided by its noise. The unit is the
    channel's mean count per bin: above it a level change is a ratio (a burst stands out from any
    steady level), below it the transform flattens, so that a few operations more or less in a
    bin of a channel that hardly moves (an open now and then) are not a change."""
    out = np.zeros_like(x)
    for i, row in enumerate(x):
        active = row[row > 0]
        if not len(active):
            continue                                   # a channel that never moved: no signal
        unit = max(UNIT_SHARE * float(np.median(active)), MIN_UNIT)
        y = np.log2(1.0 + row / unit)
        # the noise of the levels the channel moves at: differences of two active bins (a run of
        # idle bins has none, and would make any activity look like a change)
        noise = _noise(np.diff(y)[(row[:-1] > 0) & (row[1:] > 0)])
        # at least a count's own (Poisson) noise: sqrt(m) at the mean m, in these units
        counting = 1.0 / (2.0 * np.log(2.0) * np.sqrt(np.median(active)))
        out[i] = y / max(noise, counting, NOISE_FLOOR)
    return out


def _noise(d: np.ndarray) -> float:
    """The noise of a series from its bin-to-bin differences d: their root mean square over the
    smallest of them (NOISE_KEEP, at least NOISE_MIN_KEPT: the largest are where the level
    changes, up to half of them), corrected for the trimming as for normal noise, over sqrt(2)
    (a difference holds two bins' noise). More efficient than the median absolute difference,
    which is 0 whenever most bins are alike."""
    m = len(d)
    if not m:
        return 0.0
    kept = min(m, max(int(np.ceil(NOISE_KEEP * m)), NOISE_MIN_KEPT))
    small = np.sort(d * d)[:kept]
    return float(np.sqrt(small.mean() / _trimmed_second_moment(kept / m) / 2.0))


def _trimmed_second_moment(q: float) -> float:
    """E[X^2 | |X| < a] for a standard normal X, a the q quantile of |X|: what the mean square of
    the smallest q of normal noise is of its variance."""
    if q >= 1.0:
        return 1.0
    a = _NORMAL.inv_cdf((1.0 + q) / 2.0)
    return 1.0 - 2.0 * a * _NORMAL.pdf(a) / q


def change_points(z: np.ndarray, penalty: float) -> list[int]:
    """Optimal partitioning of z's rows ([t, c]): the segment starts (0 left out) of the
    segmentation minimising the sum over segments of squared deviations from the segment's mean
    (all columns) plus `penalty` per segment; exact (dynamic programming over cumulative sums)."""
    n = len(z)
    cum = np.vstack([np.zeros((1, z.shape[1])), np.cumsum(z, axis=0)])     # [n + 1, c]
    cum_sq = np.concatenate([[0.0], np.cumsum((z * z).sum(axis=1))])       # [n + 1]
    best = np.full(n + 1, np.inf)
    best[0] = -penalty
    start_of = np.zeros(n + 1, dtype=np.int64)
    for t in range(1, n + 1):
        s = np.arange(t)                                                   # segment [s, t)
        cost = cum_sq[t] - cum_sq[s] - ((cum[t] - cum[s]) ** 2).sum(axis=1) / (t - s)
        total = best[s] + cost + penalty
        k = int(np.argmin(total))
        best[t], start_of[t] = total[k], k
    starts, t = [], n
    while t > 0:
        t = int(start_of[t])
        starts.append(t)
    return sorted(starts)[1:]


def _levels(x: np.ndarray, bounds: list[int]) -> np.ndarray:
    """[c, segment]: each segment's mean count per bin."""
    return np.array([[row[a:b].mean() for a, b in zip(bounds[:-1], bounds[1:])] for row in x]).reshape(len(x), -1)


def _merge_close(x: np.ndarray, bounds: list[int]) -> list[int]:
    """The bounds with adjacent segments joined while some pair's levels differ by less than
    MIN_LEVEL_RATIO in every channel (the closest pair first). Levels are compared as log2(1 +
    level / unit), the unit a hundredth of the channel's mean count: two idle stretches are
    alike however their few counts differ."""
    bounds = list(bounds)
    unit = np.maximum(x.mean(axis=1, keepdims=True) / 100.0, 1e-300)
    while len(bounds) > 2:
        lv = np.log2(1.0 + _levels(x, bounds) / unit)
        gap = np.abs(np.diff(lv, axis=1)).max(axis=0)                       # per adjacent pair
        k = int(np.argmin(gap))
        if gap[k] >= np.log2(MIN_LEVEL_RATIO):
            break
        del bounds[k + 1]
    return bounds


def _label(x: np.ndarray, counts: np.ndarray, bounds: list[int], names: list[str]) -> list[Phase]:
    """The segments in words (the module docstring's rules), from x; each phase's sums of
    counts."""
    n = x.shape[1]
    mean = np.maximum(x.mean(axis=1), 1e-300)                    # per channel, per bin
    lv = _levels(x, bounds)
    rel = lv / mean[:, None]                                     # [c, segment]: x the job's mean
    segments = list(zip(bounds[:-1], bounds[1:]))
    idle = (rel < IDLE_SHARE).all(axis=0)
    out = []
    for i, (a, b) in enumerate(segments):
        channel = None if idle[i] else names[int(np.argmax(rel[:, i]))]
        kind = "idle" if idle[i] else "steady"
        if not idle[i] and (b - a) <= max(1, BURST_SHARE * n):
            c = int(np.argmax(rel[:, i]))
            around = [lv[c, j] for j in (i - 1, i + 1) if 0 <= j < len(segments)]
            if around and lv[c, i] >= BURST_RATIO * max(around):
                kind = "burst"
        out.append(Phase(kind, a, b, channel, {nm: float(counts[k, a:b].sum()) for k, nm in enumerate(names)}))
    return _edges(out, n)


def _edges(phases: list[Phase], n: int) -> list[Phase]:
    """The first burst a start-up burst when it starts in the job's first EDGE_SHARE; the last
    a final flush when it writes and ends in the last EDGE_SHARE (nothing but idle after it)."""
    active = [i for i, p in enumerate(phases) if p.kind != "idle"]
    if not active:
        return phases
    out = list(phases)
    first, last = active[0], active[-1]
    if out[first].kind == "burst" and out[first].first < EDGE_SHARE * n:
        out[first] = _as(out[first], "start-up burst")
    if (out[last].kind == "burst" and last != first and out[last].channel == "write"
            and out[last].end > (1 - EDGE_SHARE) * n):
        out[last] = _as(out[last], "final flush")
    return out


def _as(p: Phase, kind: str) -> Phase:
    return Phase(kind, p.first, p.end, p.channel, p.sums)


def _periodic(phases: list[Phase]) -> list[Periodic]:
    """Per channel, its bursts (and a final flush or start-up burst of it) when at least
    MIN_REPEATS of them start at an even spacing."""
    out = []
    for channel in dict.fromkeys(p.channel for p in phases if p.channel):
        bursts = [p for p in phases if p.channel == channel and p.kind in ("burst", "start-up burst", "final flush")]
        if len(bursts) < MIN_REPEATS:
            continue
        starts = np.array([p.first for p in bursts], dtype=np.float64)
        gaps = np.diff(starts)
        period = float(np.median(gaps))
        if np.all(np.abs(gaps - period) <= np.maximum(PERIOD_TOLERANCE * period, 1.0)):
            amounts = [p.sums[channel] for p in bursts]
            out.append(Periodic(channel, period, len(bursts), float(np.mean(amounts)),
                                tuple(int(s) for s in starts)))
    return out
