"""From tests to verdicts: the two stages' q-values, each metric's verdict in each group, each
group's verdict from its deciding metrics, and what a group's charts show (compare's module
docstring has the rules)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import twostage
from .grouptests import Stats
from .metrics import METRICS, can_decide, worse_is_higher
from .settings import Settings
from .stats import Tested


VERDICTS = ("regression", "improvement", "no_change", "not_enough_data")


# Verdicts as indices into VERDICTS (the arrays of verdicts hold these).
REGRESSION, IMPROVEMENT, NO_CHANGE, NOT_ENOUGH_DATA = range(len(VERDICTS))


def two_stages(stats: Stats, combined: Tested, settings: Settings) -> None:
    """The two stages (twostage) over the one-sided p-values of the metrics and of the combined
    statistic; each metric's q is the one of the direction its shift points to."""
    worse_way = stats.delta * np.where(worse_is_higher(), 1.0, -1.0)
    p_metric = np.stack([twostage.one_sided(stats.p, worse_way > 0), twostage.one_sided(stats.p, worse_way < 0)])
    p_comb = np.stack([twostage.one_sided(combined.p, combined.delta > 0),
                       twostage.one_sided(combined.p, combined.delta < 0)])
    stages = twostage.two_stage(p_metric, p_comb, stats.member, settings.q)
    stats.q = np.where(worse_way > 0, stages.metric_q[0],
                       np.where(worse_way < 0, stages.metric_q[1], np.fmin(stages.metric_q[0], stages.metric_q[1])))
    stats.stages = stages


def metric_verdicts(stats: Stats, settings: Settings) -> np.ndarray:
    """[m, g]: metric m's verdict in group g (model's module docstring has the rules)."""
    worse_up = worse_is_higher()
    sign = np.where(worse_up, 1.0, -1.0)
    with np.errstate(invalid="ignore"):
        significant = (stats.q <= settings.q) & (np.abs(stats.delta) >= settings.min_cliffs_delta)
        up = stats.ratio >= settings.min_ratio
        down = stats.ratio <= 1.0 / settings.min_ratio
        worse = significant & (stats.delta * sign > 0) & np.where(worse_up, up, down)
        better = significant & (stats.delta * sign < 0) & np.where(worse_up, down, up)
    verdict = np.full(stats.p.shape, NO_CHANGE, dtype=np.int8)
    verdict[~stats.tested] = NOT_ENOUGH_DATA
    verdict[worse] = REGRESSION
    verdict[better] = IMPROVEMENT
    return verdict


def group_verdicts(verdict: np.ndarray, expected: np.ndarray, tested: np.ndarray,
                   enough: np.ndarray) -> np.ndarray:
    """[g]: group g's verdict from its deciding metrics' (model's module docstring has the rules)."""
    deciding = can_decide() & ~expected
    out = np.full(len(enough), NO_CHANGE, dtype=np.int8)
    out[((verdict == IMPROVEMENT) & deciding).any(axis=0)] = IMPROVEMENT
    out[((verdict == REGRESSION) & deciding).any(axis=0)] = REGRESSION
    out[~enough] = NOT_ENOUGH_DATA
    # enough jobs, but no metric that could decide was tested (every job under the gates, e.g.
    # jobs that moved a few MiB): that is not "the same", it is "cannot tell"
    out[~(can_decide() & tested).any(axis=0)] = NOT_ENOUGH_DATA
    return out


@dataclass
class Charted:
    """Per group: its strongest effect (for ordering) and the metric its charts show, the worst
    one (largest delta the worse way), for an improvement the most improved deciding one."""
    strongest: np.ndarray   # [g]: the largest |Cliff's delta| of a deciding metric tested
    badness: np.ndarray     # [m, g]: Cliff's delta signed positive = worse, -inf where not charted
    metric: np.ndarray      # [g]: the metric shown

    def shown(self, g: int) -> tuple[str, float] | None:
        """The metric shown for group g and its signed delta; None if none is finite."""
        b = self.badness[self.metric[g], g]
        return (METRICS[self.metric[g]].id, float(b)) if np.isfinite(b) else None


def charted(stats: Stats, verdict: np.ndarray, expected: np.ndarray, group_verdict: np.ndarray) -> Charted:
    """What each group's charts show and how strong its effect is (Charted)."""
    may_decide = can_decide()
    deciding, decides = may_decide & ~expected, may_decide & stats.tested
    signed = stats.delta * np.where(worse_is_higher(), 1.0, -1.0)
    strongest = (np.where(decides, np.abs(stats.delta), -1.0).max(axis=0) if len(METRICS)
                 else np.zeros(len(group_verdict)))
    # a shift hybrid I/O explains is not the worst effect: the metrics that decided come first
    chartable = np.where((deciding & stats.tested).any(axis=0), deciding & stats.tested, decides)
    badness = np.where(chartable, signed, -np.inf)
    worst = badness.argmax(axis=0)
    best = np.where(deciding & (verdict == IMPROVEMENT), signed, np.inf).argmin(axis=0)
    return Charted(strongest, badness, np.where(group_verdict == IMPROVEMENT, best, worst))
