"""The smallest shift a group could have detected: what "no change" can claim.

A group that reads `no_change` with 5 jobs a side could not have seen anything but a very large
shift; saying so keeps "no change detected" from reading as "nothing changed". The figure is
the ratio of medians (either way) that the group's rank test would find with 80 % power at the
level a lone discovery needs in this run, given the group's jobs a side and its metric's
job-to-job spread:

- **The spread**: the metric's values taken as log-normal within each stratum and side (the
  per-job metrics are ratios, skewed and positive), with the standard deviation of log values
  pooled over the group's strata and sides. A metric with a value of 0 or less in the group
  has no log spread and no figure; nor has a share (bounded: a share of 0.99 cannot grow 1.25x).
- **The test's power**: van Elteren's statistic (a single stratum: Mann-Whitney's U) T =
  sum_s w_s (U_s - n_bs n_cs / 2), w_s = 1/(N_s + 1), rejects at one-sided level alpha when
  T >= z_alpha sd0 (sd0: its standard deviation under no shift). Under a shift of d standard
  deviations (of log values) its mean is sum_s w_s n_bs n_cs (p1 - 1/2) and its variance
  sum_s w_s^2 n_bs n_cs (p1 (1 - p1) + (N_s - 2)(p2 - p1^2)) (Lehmann's variance of U under an
  alternative), with p1 = P(candidate job > baseline job) = Phi(d / sqrt 2) and p2 = P(two
  candidate jobs both above one baseline job) = Phi2(d / sqrt 2, d / sqrt 2; 1/2), from Owen's
  T function. The shift detected with 80 % power is found by bisection on d; when even an
  unbounded shift is not (sum w n_b n_c / 2 < z_alpha sd0: the test's most extreme outcome is
  not significant enough, too few jobs), none is.
- **From d to a ratio**: r = exp(sigma d); a verdict also needs Cliff's delta 2 p1 - 1 >=
  min_cliffs_delta and r >= min_ratio, so the figure is at least what those need.
- **The level**: a shift seen in this one metric alone must pass Simes' combination over its
  group's family (m metrics and the combined statistic) and Benjamini-Hochberg over the run's F
  group tests as the only discovery: alpha = q / (F (m + 1)). A shift that several metrics show
  together is found at a smaller size: the figure is what the group could see for certain, not
  the least it might.
"""

from __future__ import annotations

import numpy as np

POWER = 0.8
TARGET_SHIFT = 2.0           # the fleet line: jobs a side a group needs to see a shift of 2x


def sizes(n_b: np.ndarray, n_c: np.ndarray, stratum_group: np.ndarray, n_groups: int) -> np.ndarray:
    """[4, G]: per group, over its strata with values on both sides (n_b, n_c per stratum), the
    sums the power needs: sum w n_b n_c, sum w^2 n_b n_c (N + 1) / 12 (the null variance of T
    without ties), sum w^2 n_b n_c, sum w^2 n_b n_c (N - 2); w = 1 / (N + 1)."""
    nb, nc = n_b.astype(np.float64), n_c.astype(np.float64)
    n = nb + nc
    both = (nb > 0) & (nc > 0)
    w = np.where(both, 1.0 / (n + 1.0), 0.0)
    terms = (w * nb * nc, w * w * nb * nc * (n + 1) / 12.0, w * w * nb * nc, w * w * nb * nc * (n - 2))
    return np.stack([np.bincount(stratum_group, weights=t, minlength=n_groups) for t in terms])


def equal_sizes(n: np.ndarray) -> np.ndarray:
    """[4, len(n)]: sizes() of one stratum of n jobs a side."""
    w = 1.0 / (2 * n + 1.0)
    return np.stack([w * n * n, w * n * n / 12.0, w * w * n * n, w * w * n * n * (2 * n - 2)])


def power(d: np.ndarray, size: np.ndarray, z_alpha: np.ndarray) -> np.ndarray:
    """The chance the one-sided test at z_alpha finds a shift of d standard deviations."""
    from scipy import special

    h = d / np.sqrt(2.0)
    p1 = special.ndtr(h)
    p2 = p1 - 2.0 * special.owens_t(h, np.sqrt(1.0 / 3.0))      # Phi2(h, h; 1/2)
    a, v0, b, e = size
    mean = a * (p1 - 0.5)
    with np.errstate(invalid="ignore", divide="ignore"):
        sd1 = np.sqrt(np.maximum(b * p1 * (1 - p1) + e * (p2 - p1 * p1), 0.0))
        z = (mean - z_alpha * np.sqrt(v0)) / sd1
    return np.where(sd1 > 0, special.ndtr(z), (mean > z_alpha * np.sqrt(v0)).astype(np.float64))


def detectable_ratio(size: np.ndarray, log_sd: np.ndarray, alpha, min_ratio: float, min_delta: float) -> np.ndarray:
    """The smallest ratio of medians (>= 1, either way) found with 80 % power (the module's
    docstring); inf where no shift would be, NaN where the spread is unknown."""
    from scipy import special

    size = np.asarray(size, dtype=np.float64)
    shape = size.shape[1:]
    z_alpha = special.ndtri(1.0 - np.broadcast_to(np.asarray(alpha, dtype=np.float64), shape))
    log_sd = np.broadcast_to(np.asarray(log_sd, dtype=np.float64), shape)
    a, v0 = size[0], size[1]
    possible = (a > 0) & (a / 2.0 > z_alpha * np.sqrt(v0))
    out = np.where(np.isnan(log_sd), np.nan, np.inf)
    todo = possible & ~np.isnan(log_sd)              # only these need the bisection
    sz, za = size[:, todo], z_alpha[todo]
    lo, hi = np.zeros(len(za)), np.full(len(za), 40.0)
    for _ in range(48):                       # power grows with d: bisection to ~1e-13 of 40
        mid = (lo + hi) / 2.0
        ok = power(mid, sz, za) >= POWER
        hi, lo = np.where(ok, mid, hi), np.where(ok, lo, mid)
    d = np.maximum(hi, np.sqrt(2.0) * special.ndtri((1.0 + min_delta) / 2.0))
    with np.errstate(over="ignore", invalid="ignore"):
        out[todo] = np.maximum(np.exp(log_sd[todo] * d), min_ratio)
    return out


def log_spread(v: np.ndarray, stratum: np.ndarray, side: np.ndarray, stratum_group: np.ndarray,
               n_groups: int) -> np.ndarray:
    """[G]: the standard deviation of log(v) within each (stratum, side), pooled over the group;
    NaN when the group has a value of 0 or less, or no (stratum, side) with two values."""
    cell = stratum * 2 + side
    S2 = 2 * len(stratum_group)
    group_of_cell = np.repeat(stratum_group, 2)
    bad = np.bincount(group_of_cell[cell[v <= 0]], minlength=n_groups) > 0
    lx = np.log(np.where(v > 0, v, 1.0))            # a row without a value (or bad) adds 0
    n = np.bincount(cell, weights=~np.isnan(v), minlength=S2)
    s1 = np.bincount(cell, weights=lx, minlength=S2)
    s2 = np.bincount(cell, weights=lx * lx, minlength=S2)
    with np.errstate(invalid="ignore", divide="ignore"):
        ss = np.where(n > 1, np.maximum(s2 - s1 * s1 / np.maximum(n, 1), 0.0), 0.0)
    df = np.bincount(group_of_cell, weights=np.maximum(n - 1, 0), minlength=n_groups)
    total = np.bincount(group_of_cell, weights=ss, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.sqrt(total / df)
    return np.where(bad | (df < 1), np.nan, sd)


def jobs_needed(log_sd: float, alpha: float, min_ratio: float, min_delta: float, min_jobs: int,
                shift: float = TARGET_SHIFT, limit: int = 100_000) -> int | None:
    """The fewest jobs a side (equal sides, one stratum) with which a shift of `shift` is
    detectable (detectable_ratio <= shift), at least min_jobs; None past limit or unknown spread."""
    if not np.isfinite(log_sd):
        return None
    grid = np.unique(np.r_[np.arange(min_jobs, max(min_jobs, 200) + 1),
                           np.geomspace(max(min_jobs, 200), limit, 100).astype(np.int64)]).astype(np.float64)
    ok = np.flatnonzero(_found(grid, log_sd, alpha, min_ratio, min_delta, shift))
    if not len(ok):
        return None
    hi = int(grid[ok[0]])
    lo = int(grid[ok[0] - 1]) if ok[0] else hi - 1         # not enough there (or below min_jobs)
    while hi - lo > 1:                                     # the grid is sparse past 200
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if _found(np.array([float(mid)]), log_sd, alpha, min_ratio, min_delta, shift)[0] else (mid, hi)
    return hi


def _found(n: np.ndarray, log_sd: float, alpha: float, min_ratio: float, min_delta: float, shift: float) -> np.ndarray:
    return detectable_ratio(equal_sizes(n), np.full(len(n), log_sd), alpha, min_ratio, min_delta) <= shift
