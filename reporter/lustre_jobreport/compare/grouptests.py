"""Every metric's rank tests in every group at once (stats: Mann-Whitney U in a group of its own,
van Elteren's test over a pooled group's strata), the combined rank statistic of each group, and
which shifts hybrid I/O explains. The metrics are tested side by side in threads: numpy's sorts
and array operations release the GIL."""

from __future__ import annotations

import functools
import os
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from . import detectable
from . import metrics as comparemetrics
from .grouping import Groups
from .metrics import METRICS, Columns, worse_is_higher
from .settings import Settings
from .stats import Tested, group_medians, median_ratio, rank_tests, value_order, van_elteren
from .twostage import TwoStage


# Most of a side's jobs: hybrid I/O switched calls in more than this share of them.
HYBRID_MOST = 0.5


@dataclass
class Stats(Tested):
    """The tests of every metric in every group: [m, g] for metric m (METRICS order) and group g
    (Tested's figures, stacked: a pooled group's delta and p are van Elteren's), the metric's
    values all the same (constant), its information and log spread (the detectable shift), its
    two-stage q-value in the direction of its shift (q), and the candidate's median over the
    baseline's (ratio); per group the combined rank statistic's and the two stages' figures."""
    q: np.ndarray
    ratio: np.ndarray
    constant: np.ndarray
    size: np.ndarray           # [4, m, g]: detectable.sizes
    log_sd: np.ndarray
    stages: TwoStage | None = None

    @property
    def tested(self) -> np.ndarray:
        return ~np.isnan(self.p)

    @property
    def member(self) -> np.ndarray:
        """[m, g]: the metric is in its group's family (tested, and its values not all the same)."""
        return self.tested & ~self.constant


@dataclass
class _Tested:
    """One metric's (or the combined statistic's) figures per group, and each row's centred
    rank in its stratum (for the combined statistic)."""
    group: Tested
    constant: np.ndarray
    size: np.ndarray           # [4, G]: detectable.sizes
    log_sd: np.ndarray
    rank: np.ndarray | None


def _per_group(v: np.ndarray, groups: Groups, min_jobs: int, keep_rank: bool,
               spread_of: np.ndarray | None = None) -> _Tested:
    """A value per row tested in every group: rank tests over the strata, a level-0 group being
    its one stratum; a pooled group's delta and p from van Elteren's test over its strata, its
    counts and medians over its rows; the log spread of spread_of per group (None: NaN, not
    wanted)."""
    lv = groups.levels
    S, G = len(lv.stratum_first), groups.count
    by_value = value_order(v)                          # one sort by value for the strata and the pools
    strata = rank_tests(v, lv.stratum, groups.side, S, min_jobs, by_value)
    out = Tested(*(np.full(G, np.nan) for _ in range(6)))
    out.n_b, out.n_c = np.zeros(G, dtype=np.int64), np.zeros(G, dtype=np.int64)
    constant = np.zeros(G, dtype=bool)
    whole = lv.level[lv.stratum_group] == 0            # strata that are groups of their own
    g0 = lv.stratum_group[whole]
    for name in ("n_b", "n_c", "med_b", "med_c", "delta", "p"):
        getattr(out, name)[g0] = getattr(strata, name)[whole]
    constant[g0] = strata.constant[whole]
    if lv.pooled.any():
        pooled = lv.pooled
        rows = pooled[lv.gid]
        n_b, n_c, med_b, med_c = group_medians(np.where(rows, v, np.nan), lv.gid, groups.side, G,
                                               by_value[rows[by_value]])
        ve = van_elteren(strata, lv.stratum_group, G, min_jobs, lv.stratum)
        for name, arr in (("n_b", n_b), ("n_c", n_c), ("med_b", med_b), ("med_c", med_c),
                          ("delta", ve.delta), ("p", ve.p)):
            getattr(out, name)[pooled] = arr[pooled]
        constant[pooled] = ve.constant[pooled]
    size = detectable.sizes(strata.n_b, strata.n_c, lv.stratum_group, G)
    log_sd = (np.full(G, np.nan) if spread_of is None
              else detectable.log_spread(spread_of, lv.stratum, groups.side, lv.stratum_group, G))
    return _Tested(out, constant, size, log_sd, strata.rank.astype(np.float32) if keep_rank else None)


def _test_metric(metric, cols: Columns, groups: Groups, counted: np.ndarray, settings: Settings) -> _Tested:
    """One metric's rank tests in every group, over the counted rows."""
    v = comparemetrics.values(metric, cols, settings.min_bytes)
    # the spread (of every group's trusted jobs) only where a detectable figure is said
    trusted = np.where(groups.trusted, v, np.nan) if said_detectable(metric) else None
    v[~counted] = np.nan
    return _per_group(v, groups, settings.min_jobs, keep_rank=not metric.context, spread_of=trusted)


def said_detectable(metric) -> bool:
    """Whether a group's detectable figure may be of this metric: one that can decide, and not
    a share (bounded: a share of 0.99 cannot grow 1.25x)."""
    return not metric.context and metric.unit != "share"


class _Inline(Executor):
    """An executor that runs each call when it is submitted, in the caller's thread."""

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:
            future.set_exception(exc)
        return future


def executor(threads: int | None, rows: int) -> Executor:
    """Where compare's independent steps run: threads from 100,000 rows on (numpy's sorts and
    array operations release the GIL), else one after the other."""
    workers = threads or (min(4, os.cpu_count() or 1) if rows >= 100_000 else 1)
    return ThreadPoolExecutor(max_workers=workers) if workers > 1 else _Inline()


def test_every_metric(cols: Columns, groups: Groups, settings: Settings, excused: np.ndarray,
                      pool: Executor) -> tuple[Stats, Tested]:
    """Every metric tested in every group (each a task of the pool), over the trusted jobs of
    the groups that have enough of them; and the combined rank statistic of each group
    (_combined)."""
    counted = groups.trusted & groups.enough[groups.gid]
    run = functools.partial(_test_metric, cols=cols, groups=groups, counted=counted, settings=settings)
    results: list[_Tested] = list(pool.map(run, METRICS))
    combined = _combined(results, groups, excused, settings.min_jobs)
    stack = {name: np.stack([getattr(r.group, name) for r in results])
             for name in ("n_b", "n_c", "med_b", "med_c", "delta", "p")}
    stats = Stats(**stack, q=np.full(stack["p"].shape, np.nan), ratio=median_ratio(stack["med_b"], stack["med_c"]),
                   constant=np.stack([r.constant for r in results]), size=np.stack([r.size for r in results], axis=1),
                   log_sd=np.stack([r.log_sd for r in results]))
    return stats, combined


def _combined(results: list[_Tested], groups: Groups, excused: np.ndarray, min_jobs: int) -> Tested:
    """The combined rank statistic of each group, tested like a metric: per job, the mean of its
    centred ranks in its stratum over the group's deciding metrics it has a value of, each
    oriented so that higher is worse. A shift that several metrics show each a little adds up
    here; metrics that did not move add noise only."""
    total = np.zeros(len(groups.gid))
    count = np.zeros(len(groups.gid))
    sign = np.where(worse_is_higher()[:, 0], 1.0, -1.0)
    for i, r in enumerate(results):
        if r.rank is None:
            continue
        use = ~np.isnan(r.rank)
        if excused[i].any():
            use &= ~excused[i][groups.gid]
        total += np.where(use, sign[i] * r.rank, 0.0)
        count += use
        r.rank = None
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(count > 0, total / count, np.nan)
    return _per_group(score, groups, min_jobs, keep_rank=False).group


def hybrid_excused(cols: Columns, groups: Groups) -> np.ndarray:
    """[m, g]: a shift of metric m in group g is one hybrid I/O would explain: the candidate
    switched calls of the metric's direction in most of its jobs, the baseline not. Among
    trusted rows a null switch count is a client without hybrid I/O (no values at either end);
    a host that did not give it would have made the job untrusted (VALUES_MISSING)."""
    n_groups = groups.count
    excused = np.zeros((len(METRICS), n_groups), dtype=bool)
    for d in ("read", "write"):
        switched = np.nan_to_num(cols(f"hybrid_{d}_switch")) > 0
        share = (np.bincount(groups.keys[groups.trusted & switched], minlength=2 * n_groups).reshape(n_groups, 2)
                 / np.maximum(groups.good, 1))
        hybrid = (share[:, 1] > HYBRID_MOST) & (share[:, 0] <= HYBRID_MOST)
        rows = np.array([m.direction == d and m.hybrid for m in METRICS])
        excused[rows] = hybrid[None, :]
    return excused
