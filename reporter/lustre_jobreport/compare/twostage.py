"""Which shifts of a run are discoveries: groups first, then the metrics inside them.

Why two stages. A run tests every group x metric (about 2,000 tests in a 120-group fleet,
100,000 in a year). Benjamini-Hochberg over all of them treats each metric as a separate
chance of a false alarm, while the metrics of a group are measured on the same jobs and a
real client change moves several of them together (a read-ahead regression: small-RPC share,
mean RPC size, RPCs per GiB, full-size share, read latency). The question an admin asks is
first "which applications moved?", then "in what?". So:

1. **Groups.** Per group and direction (worse, better) one test of "no metric of the group
   moved that way": Simes' combination of the one-sided p-values of its metrics and of one
   combined rank statistic (the mean of each job's centred ranks over the group's deciding
   metrics, oriented worse-is-higher, tested like a metric: it gathers a shift that several
   metrics show each a little, while the metrics' own p-values keep a shift of one metric
   alone visible). Simes' p is valid for positively dependent p-values, as metrics computed
   from the same jobs are. Benjamini-Hochberg across all these group tests (F of them) selects
   R at the run's q: the groups of different jobs are independent, and a group's two
   directions cannot both be small.
2. **Metrics inside the selected groups.** Benjamini-Hochberg over the group's metrics in the
   selected direction, at q R / F (Benjamini and Bogomolov 2014, "Selective inference on
   multiple families of hypotheses"): the expected share of false discoveries among the
   metrics called, averaged over the selected groups, stays at most q.

A metric's q-value says both: max(its group's q, its within-group BH q x F / R), at most q
exactly when both stages pass. A metric whose values are all the same in the group (every job
1.0 getattr per open) is tested (p = 1) but left out of its group's family: no arrangement of
the sides could have made it significant, so it would only dilute the others (its exclusion
depends on the values alone, not on which side holds them, as Tarone's rule for discrete tests
allows).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .stats import bh

DIRECTIONS = ("worse", "better")


def one_sided(p_two: np.ndarray, toward: np.ndarray) -> np.ndarray:
    """The one-sided p-value of a shift in a given direction, from the two-sided p and whether
    the observed shift points that way (toward): p/2 if it does, 1 - p/2 if it does not (NaN
    stays NaN; a shift of exactly nothing counts as neither, p/2 = 1/2 at most both ways)."""
    half = p_two / 2.0
    return np.where(toward, half, 1.0 - half)


def simes(p: np.ndarray) -> np.ndarray:
    """[k, F] p-values (NaN: not a member) -> [F] Simes' p of each column: min over i of
    p_(i) k_F / i, k_F the column's members; NaN for a column without any."""
    k = (~np.isnan(p)).sum(axis=0)
    ordered = np.sort(np.where(np.isnan(p), np.inf, p), axis=0)
    i = np.arange(1, p.shape[0] + 1, dtype=np.float64)[:, None]
    with np.errstate(invalid="ignore"):
        scaled = np.where(np.isfinite(ordered), ordered * k / i, np.inf)
    out = np.minimum(scaled.min(axis=0, initial=np.inf), 1.0)
    return np.where(k > 0, out, np.nan)


def bh_columns(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg within each column of [k, F] (NaN: not a member)."""
    k = (~np.isnan(p)).sum(axis=0)
    order = np.argsort(np.where(np.isnan(p), np.inf, p), axis=0, kind="stable")
    ordered = np.take_along_axis(p, order, axis=0)
    i = np.arange(1, p.shape[0] + 1, dtype=np.float64)[:, None]
    scaled = np.where(np.isnan(ordered), np.inf, ordered * k / i)
    adjusted = np.minimum.accumulate(scaled[::-1], axis=0)[::-1]
    out = np.full(p.shape, np.nan)
    np.put_along_axis(out, order, np.minimum(adjusted, 1.0), axis=0)
    out[np.isnan(p)] = np.nan
    return out


@dataclass
class TwoStage:
    """[d, ...] per direction (DIRECTIONS order)."""
    group_p: np.ndarray      # [d, G]: Simes' p of the group's family (NaN: no family)
    group_q: np.ndarray      # [d, G]: its BH q over every group test of the run
    metric_q: np.ndarray     # [d, M, G]: each metric's two-stage q (NaN: not in the family)
    tests: int               # F: group tests of the run
    passed: int              # R: those at most q


def two_stage(p_metric: np.ndarray, p_combined: np.ndarray, member: np.ndarray, q: float) -> TwoStage:
    """The two stages over one-sided p-values: p_metric [d, M, G], p_combined [d, G] (NaN: not
    computed), member [M, G]: the metric is in its group's family."""
    d, M, G = p_metric.shape
    fam = np.where(member[None], p_metric, np.nan)                 # [d, M, G]
    with_combined = np.concatenate((fam, p_combined[:, None, :]), axis=1)
    has = member.any(axis=0)                                        # [G]
    group_p = np.where(has[None], simes(with_combined.transpose(1, 0, 2).reshape(M + 1, d * G)).reshape(d, G),
                       np.nan)
    group_q = bh(group_p.ravel()).reshape(d, G)
    tests = int((~np.isnan(group_p)).sum())
    passed = int((group_q <= q).sum())
    within = np.stack([bh_columns(fam[i]) for i in range(d)])     # [d, M, G]
    with np.errstate(invalid="ignore"):
        metric_q = np.maximum(group_q[:, None, :], np.minimum(within * tests / max(passed, 1), 1.0))
    return TwoStage(group_p, group_q, metric_q, tests, passed)
