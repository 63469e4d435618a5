"""The statistics of compare: a rank test per group for every metric at once, its exact small
sample p-values, the false discovery rate over the run, and the ratio of medians.

Why a Mann-Whitney U test: the jobs of one application are not repeated measurements of one
number. They run on different inputs, node counts and machines' noise, and the per-job metrics
are ratios (shares, bytes per RPC, ops per GiB) with skewed, bounded or heavy-tailed
distributions, often with many exact ties (a share of 0). A t-test's normality does not hold
and a few odd jobs would dominate means. The rank test assumes no distribution, is robust to
outliers and compares the whole distributions of the two sides' jobs ("is a candidate job
likely to have a larger value than a baseline job?"). Its natural effect size is Cliff's
delta, P(cand > base) - P(cand < base) = 2U/(n1 n2) - 1, in [-1, 1], which says how far the
two sets of jobs are apart regardless of scale; the ratio of medians says how much, in the
metric's own unit. A verdict needs all three: significance after the FDR adjustment over the
whole run (thousands of tests), a large effect and a large enough ratio.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

# The exact Mann-Whitney distribution is used for samples without ties when one side has at
# most 8 values (scipy's own rule for method "auto"), while n1 x n2 stays small enough for its
# table (exact_tail); beyond that the normal approximation (then one side has hundreds of values,
# where it is close, and conservative in the far tail for a tiny other side).
EXACT_MAX_SMALL, EXACT_MAX_PRODUCT = 8, 4096


@dataclass
class Tested:
    """Per group, for one metric: counts, medians, Cliff's delta and p-value (NaN: no test)."""
    n_b: np.ndarray
    n_c: np.ndarray
    med_b: np.ndarray
    med_c: np.ndarray
    delta: np.ndarray
    p: np.ndarray


@dataclass
class Ranked(Tested):
    """Tested, and what a stratified test and a combined score need of each group (a stratum
    there): the candidate's U, the ties' sum of t^3 - t, whether every value is the same
    (constant: no arrangement of the sides can differ, the test cannot say anything), and per
    row its rank in its group, centred and scaled to (-1/2, 1/2) (NaN: not counted)."""
    u_c: np.ndarray
    tie_term: np.ndarray
    constant: np.ndarray
    rank: np.ndarray


def _medians(x: np.ndarray, rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Medians per group of x[rows], rows ordered by group and value, counts per group."""
    out = np.full(len(counts), np.nan)
    start = np.concatenate(([0], np.cumsum(counts)[:-1]))
    has = counts > 0
    lo = rows[start[has] + (counts[has] - 1) // 2]
    hi = rows[start[has] + counts[has] // 2]
    out[has] = (x[lo] + x[hi]) / 2
    return out


def group_medians(v: np.ndarray, gid: np.ndarray, side: np.ndarray, n_groups: int,
                  by_value: np.ndarray | None = None):
    """Per group, the values each side has and their medians: (n_b, n_c, med_b, med_c).
    by_value: the rows with a value ordered by it (value_order), when known."""
    x, g, s, _ = _by_group_then_value(v, gid, side, n_groups, by_value)
    n_c = np.bincount(g, weights=s, minlength=n_groups).astype(np.int64)
    n_b = np.bincount(g, minlength=n_groups).astype(np.int64) - n_c
    cand = s == 1
    return n_b, n_c, _medians(x, np.flatnonzero(~cand), n_b), _medians(x, np.flatnonzero(cand), n_c)


def rank_tests(v: np.ndarray, gid: np.ndarray, side: np.ndarray, n_groups: int, min_jobs: int,
               by_value: np.ndarray | None = None) -> Ranked:
    """Two-sided Mann-Whitney U (candidate against baseline) in every group at once.

    v: the metric per row (NaN: not counted); gid: group per row; side: 0 baseline, 1 candidate.
    A group is tested when both sides have at least min_jobs values. Ranks (ties averaged) come
    from one sort of all rows by (group, value). p-values are those of
    scipy.stats.mannwhitneyu(cand, base) with method "auto" (tests check they agree), computed
    for every group at once instead of one scipy call per group and metric (~1 ms each: about
    200 s for 10,000 groups x 19 metrics): the normal approximation with tie and continuity
    correction, or the exact distribution (exact_tail) for samples without ties where one side
    has at most 8 values. by_value: the rows with a value ordered by it (value_order), when
    known."""
    G = n_groups
    x, g, s, rows = _by_group_then_value(v, gid, side, G, by_value)
    n_c = np.bincount(g, weights=s, minlength=G).astype(np.int64)
    n_b = np.bincount(g, minlength=G).astype(np.int64) - n_c
    cand = s == 1
    med_b = _medians(x, np.flatnonzero(~cand), n_b)
    med_c = _medians(x, np.flatnonzero(cand), n_c)
    tested = (n_b >= min_jobs) & (n_c >= min_jobs)
    pos, tie_term = _tied_positions(x, g, G)
    u_c, start = _candidate_u(pos, g, cand, n_b, n_c)
    nn = (n_b + n_c).astype(np.float64)
    constant = (nn >= 2) & (tie_term >= nn ** 3 - nn)
    rank = np.full(len(v), np.nan)
    rank[rows] = (pos - start[g] + 1 - (nn[g] + 1) / 2) / nn[g]
    delta, p = _effect_and_normal_p(u_c, n_b, n_c, tie_term, tested)
    exact = tested & (tie_term <= 0) & (np.minimum(n_b, n_c) <= EXACT_MAX_SMALL) & (n_b * n_c <= EXACT_MAX_PRODUCT)
    if exact.any():
        p[exact] = _exact_p(u_c, n_b, n_c, np.flatnonzero(exact))
    return Ranked(n_b, n_c, med_b, med_c, delta, p, u_c, tie_term, constant, rank)


@dataclass
class Stratified:
    """Per group, van Elteren's test over its strata: the values in strata that have values on
    both sides (n_b, n_c), the stratified Cliff's delta and the two-sided p (NaN: not tested),
    and whether every compared stratum's values are all the same (constant)."""
    n_b: np.ndarray
    n_c: np.ndarray
    delta: np.ndarray
    p: np.ndarray
    constant: np.ndarray


def van_elteren(strata: Ranked, stratum_group: np.ndarray, n_groups: int, min_jobs: int,
                row_stratum: np.ndarray) -> Stratified:
    """Van Elteren's stratified rank test, candidate against baseline, in every group at once,
    from the rank tests of its strata (rank_tests over the strata).

    A pooled group holds jobs of several strata (node-count classes, users) that may differ in
    level: a plain rank test over the pool would take a side with more jobs at a high-valued
    stratum for a shift. Van Elteren's test compares within each stratum only: per stratum s
    the candidate's U_s (its Mann-Whitney U there), centred, weighted by w_s = 1/(N_s + 1) (N_s:
    the stratum's values; the locally most powerful weights for a shift common to the strata),
    summed: T = sum w_s (U_s - n_bs n_cs / 2), Var T = sum w_s^2 n_bs n_cs / 12 (N_s + 1 -
    t_s / (N_s (N_s - 1))) with t_s the stratum's ties' sum of t^3 - t, and z = T / sqrt(Var T)
    against the normal distribution with a continuity correction of half the smallest weight
    (T's lattice step for equal weights), and, where that p is at most EXACT_STRATIFIED_BELOW in
    a small group, against T's exact distribution (exact_stratified_p: the pooled groups are
    small by construction, and there the normal tail is anti-conservative, up to 2-3x the
    nominal level at a few jobs a stratum without the correction). A stratum
    with values on one side only says nothing and is left out. The effect is the same weighting
    of the strata's Cliff's deltas: sum w_s (2 U_s - n_bs n_cs) / sum w_s n_bs n_cs.

    row_stratum: each row's stratum (with strata.rank: the rows' ranks, for the exact
    distribution's ties). A group is tested when its compared strata hold at least min_jobs
    values a side."""
    from scipy import special

    G = n_groups
    nb, nc = strata.n_b.astype(np.float64), strata.n_c.astype(np.float64)
    both = (strata.n_b > 0) & (strata.n_c > 0)
    sg = stratum_group
    nb_g = np.bincount(sg, weights=np.where(both, nb, 0), minlength=G).astype(np.int64)
    nc_g = np.bincount(sg, weights=np.where(both, nc, 0), minlength=G).astype(np.int64)
    tested = (nb_g >= min_jobs) & (nc_g >= min_jobs)
    nn = nb + nc
    w = np.where(both, 1.0 / (nn + 1.0), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        var_s = np.where(both, nb * nc / 12.0 * ((nn + 1) - strata.tie_term / (nn * (nn - 1))), 0.0)
        t = np.bincount(sg, weights=np.where(both, w * (strata.u_c - nb * nc / 2.0), 0.0), minlength=G)
        var = np.bincount(sg, weights=w * w * var_s, minlength=G)
        scale = np.bincount(sg, weights=w * nb * nc, minlength=G)
        delta = np.where(tested, 2.0 * t / scale, np.nan)
        step = np.full(G, np.inf)
        np.minimum.at(step, sg[both], w[both])
        z = np.maximum(np.abs(t) - step / 2.0, 0.0) / np.sqrt(var)
    constant = tested & ~(var > 0)
    p = np.where(tested, np.clip(2.0 * special.ndtr(-np.nan_to_num(z, nan=-np.inf)), 0.0, 1.0), np.nan)
    support = np.ones(G)
    np.multiply.at(support, sg[both], 2.0 * nb[both] * nc[both] + 1.0)     # bounds T's distinct values
    values = nb_g + nc_g
    small = np.flatnonzero(tested & ~constant & (support <= EXACT_STRATIFIED_SUPPORT)
                           & (values <= EXACT_STRATIFIED_VALUES) & (p <= EXACT_STRATIFIED_BELOW))
    if len(small):
        p[small] = exact_stratified_p(strata, stratum_group, row_stratum, small)
    p[constant] = 1.0
    return Stratified(nb_g, nc_g, delta, p, constant)


# Van Elteren's T is tested against its exact distribution while it has at most this many values
# (the product over the strata of 2 n_b n_c + 1 bounds it) and its strata hold at most this many
# values in all: a pooled group of a few jobs a stratum, where the normal tail is poor; past
# that the normal one is close, and the exact one's cost grows fast.
EXACT_STRATIFIED_SUPPORT = 200_000
EXACT_STRATIFIED_VALUES = 60
# ... and where the normal approximation's p is at most this: a p reported is then never below
# the exact one where it could decide anything (a test at a level up to this one rejects only
# when the exact p does), and the many groups where nothing moved cost no exact distribution.
EXACT_STRATIFIED_BELOW = 0.25


def exact_stratified_p(strata: Ranked, stratum_group: np.ndarray, row_stratum: np.ndarray,
                       groups: np.ndarray) -> np.ndarray:
    """Exact two-sided p-values of van Elteren's T in these groups: under no shift, every way of
    splitting each stratum's values into its two sides (sizes kept) is equally likely; T's
    distribution is the convolution of the strata's weighted U distributions (stratum_u_distribution,
    ties as the midranks they are). p = 2 min(P(T >= t), P(T <= t)), at most 1, as the exact
    Mann-Whitney test's.

    The strata's tie runs and observed terms are found for all these groups at once
    (_stratum_runs); groups with the same strata shapes share one distribution and their tails
    are read from it together (_t_tails)."""
    compared = np.isin(stratum_group, groups) & (strata.n_b > 0) & (strata.n_c > 0)      # [S]
    runs_of = _stratum_runs(strata.rank, row_stratum, strata.n_b + strata.n_c, compared)
    n_b, n_c = strata.n_b.tolist(), strata.n_c.tolist()
    u_c = strata.u_c.tolist()
    members = np.argsort(stratum_group, kind="stable")
    g_bounds = np.searchsorted(stratum_group[members], np.arange(stratum_group.max(initial=-1) + 2)).tolist()
    members = members.tolist()
    is_compared = compared.tolist()
    shapes: dict[tuple, list[tuple[int, float]]] = {}
    for k, g in enumerate(groups.tolist()):
        dists, t_obs = [], 0.0
        for s_ in members[g_bounds[g]:g_bounds[g + 1]]:      # in stratum order, as T is summed
            if not is_compared[s_]:
                continue
            nb, nc = n_b[s_], n_c[s_]
            n = nb + nc
            dists.append((n, nc, runs_of[s_]))
            t_obs += 1.0 / (n + 1) * (u_c[s_] - nb * nc / 2.0)
        shapes.setdefault(tuple(sorted(dists)), []).append((k, t_obs))
    out = np.empty(len(groups))
    for shape, observed in shapes.items():
        which, t_obs = (np.array(a) for a in zip(*observed))
        out[which] = _t_tails(shape).p(t_obs)
    return out


def _stratum_runs(rank: np.ndarray, row_stratum: np.ndarray, n: np.ndarray, wanted: np.ndarray) -> dict[int, tuple]:
    """Per wanted stratum: the lengths of its runs of tied values, in value order, from its rows'
    centred ranks (rank_tests: NaN where not counted) and its counted values n."""
    rows = np.flatnonzero(wanted[row_stratum] & ~np.isnan(rank))
    rs = row_stratum[rows]
    nn = n[rs].astype(np.float64)
    mid = np.rint((rank[rows] * nn + (nn + 1) / 2.0) * 2).astype(np.int64)         # doubled midranks
    order = np.lexsort((mid, rs))
    rs, mid = rs[order], mid[order]
    new_run = np.r_[True, (rs[1:] != rs[:-1]) | (mid[1:] != mid[:-1])]
    starts = np.flatnonzero(new_run)
    lengths = np.diff(np.r_[starts, len(rs)]).tolist()
    run_stratum = rs[starts]
    firsts = np.flatnonzero(np.r_[True, run_stratum[1:] != run_stratum[:-1]])
    bounds = np.r_[firsts, len(run_stratum)].tolist()
    return {s_: tuple(lengths[bounds[i]:bounds[i + 1]]) for i, s_ in enumerate(run_stratum[firsts].tolist())}


@dataclass(frozen=True)
class _Tails:
    """T's null distribution as its values (ascending) and the probabilities of T at least and
    at most each value."""
    values: np.ndarray
    at_least: np.ndarray     # [len(values) + 1]: P(T >= values[i]); 0 past the last
    at_most: np.ndarray      # [len(values) + 1]: P(T <= values[i - 1]); 0 before the first
    tol: float               # values this close to an observed T count as it

    def p(self, t_obs: np.ndarray) -> np.ndarray:
        """2 min(P(T >= t), P(T <= t)), at most 1, for each observed t."""
        upper = self.at_least[np.searchsorted(self.values, t_obs - self.tol, side="left")]
        lower = self.at_most[np.searchsorted(self.values, t_obs + self.tol, side="right")]
        return np.minimum(1.0, 2.0 * np.minimum(upper, lower))


@functools.lru_cache(maxsize=4096)
def _t_tails(strata: tuple[tuple[int, int, tuple[int, ...]], ...]) -> _Tails:
    """_Tails of T over these strata (_t_distribution's)."""
    values, probs = _t_distribution(strata)
    zero = np.zeros(1)
    return _Tails(values, np.concatenate((np.cumsum(probs[::-1])[::-1], zero)),
                  np.concatenate((zero, np.cumsum(probs))), 1e-9 * max(1.0, float(np.abs(values).max())))


def _t_distribution(strata: tuple[tuple[int, int, tuple[int, ...]], ...]) -> tuple[np.ndarray, np.ndarray]:
    """The null distribution of T = sum w_s (U_s - n_bs n_cs / 2) over strata given as (N_s,
    n_cs, the runs of tied values in order), as (values, probabilities)."""
    values, probs = np.zeros(1), np.ones(1)
    for n, nc, runs in strata:
        u, pu = stratum_u_distribution(nc, runs)
        v = (u - (n - nc) * nc / 2.0) / (n + 1)
        values = (values[:, None] + v[None, :]).ravel()
        probs = (probs[:, None] * pu[None, :]).ravel()
        key, inverse = np.unique(np.rint(values * 1e9).astype(np.int64), return_inverse=True)
        probs = np.bincount(inverse, weights=probs)
        values = key / 1e9
    return values, probs


@functools.lru_cache(maxsize=16384)
def stratum_u_distribution(n_c: int, runs: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The null distribution of the candidate's U in one stratum: n_c of its values drawn at
    random, the values in runs of ties (in order; each value of a run has the run's midrank).
    The smaller side's rank sum is counted by a 0/1 knapsack over the values (the counts are
    at most C(N, k), exact in float64 at the sizes computed: N <= EXACT_STRATIFIED_VALUES keeps
    the probabilities' rounding far below what matters); the candidate's U follows (U_c = n_b n_c
    - U_b when the baseline is the smaller side). Returns (U, probability).

    The knapsack touches only what can matter: after i values, the subsets of at most i of them
    from which k can still be reached with the values left, and the sums reached so far."""
    n = sum(runs)
    if all(t == 1 for t in runs):                     # no ties: the Gaussian binomial's, cached
        k = min(n_c, n - n_c)
        tail = exact_tail(k, n - k)                   # P(U_k >= u), u = 0 .. k (n - k)
        pmf = tail - np.r_[tail[1:], 0.0]
        u = np.arange(len(pmf), dtype=np.float64)     # symmetric: U_c has the same distribution
        keep = pmf > 0
        return u[keep], pmf[keep]
    doubled = []
    position = 1
    for t in runs:
        doubled += [2 * position + t - 1] * t          # 2 x midrank of positions position..position+t-1
        position += t
    k = min(n_c, n - n_c)
    top = sum(sorted(doubled)[n - k:]) if k else 0
    counts = np.zeros((k + 1, top + 1))
    counts[0, 0] = 1.0
    reach = 0                                          # the largest sum held so far
    for i, r in enumerate(doubled):
        lo, hi = max(1, k - (n - 1 - i)), min(i + 1, k)  # subset sizes that matter after this value
        reach = min(top, reach + r)
        if lo <= hi and r <= reach:       # the rows overlap: numpy adds as if the source were copied
            counts[lo:hi + 1, r:reach + 1] += counts[lo - 1:hi, :reach + 1 - r]
    sums = np.flatnonzero(counts[k])
    u_k = sums / 2.0 - k * (k + 1) / 2.0
    prob = counts[k][sums] / counts[k][sums].sum()
    u_c = u_k if k == n_c else n_c * (n - n_c) - u_k
    order = np.argsort(u_c, kind="stable")
    return u_c[order], prob[order]


def value_order(v: np.ndarray) -> np.ndarray:
    """The rows with a value (v not NaN), ordered by it."""
    idx = np.flatnonzero(~np.isnan(v))
    return idx[np.argsort(v[idx])]


def _by_group_then_value(v: np.ndarray, gid: np.ndarray, side: np.ndarray, n_groups: int,
                         by_value: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The counted rows (v not NaN) as (value, group, side, row), ordered by group and, in a
    group, by value: one sort by value (by_value, if given), then a stable one (a radix sort
    for small ints) by group."""
    rows = value_order(v) if by_value is None else by_value
    g = gid[rows]
    o = np.argsort(g.astype(np.uint16 if n_groups < 1 << 16 else np.uint32), kind="stable")
    rows = rows[o]
    return v[rows], g[o], side[rows], rows


def _tied_positions(x: np.ndarray, g: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Each sorted row's position (0-based), tied rows (runs of equal values in a group) sharing
    their run's mean position; and per group the ties' sum of t^3 - t (t: a run's length), the
    normal approximation's tie correction (0: no ties)."""
    n = len(x)
    new_block = np.ones(n, dtype=bool)
    new_block[1:] = (g[1:] != g[:-1]) | (x[1:] != x[:-1])
    bstart = np.flatnonzero(new_block)
    bsize = np.diff(np.append(bstart, n))
    tied = bsize > 1
    pos = np.arange(n, dtype=np.float64)
    tie_term = np.zeros(n_groups)
    if tied.any():
        tb, ts = bstart[tied], bsize[tied]
        rows = np.repeat(tb, ts) + (np.arange(int(ts.sum())) - np.repeat(np.cumsum(ts) - ts, ts))
        pos[rows] = np.repeat(tb + (ts - 1) / 2.0, ts)
        tf = ts.astype(np.float64)
        tie_term = np.bincount(g[tb], weights=tf ** 3 - tf, minlength=n_groups)
    return pos, tie_term


def _candidate_u(pos: np.ndarray, g: np.ndarray, cand: np.ndarray, n_b: np.ndarray,
                 n_c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per group, the candidate's U (its rank sum less n_c (n_c + 1) / 2) and the group's first
    position. A row's rank in its group is its position less its group's first position, plus 1."""
    G = len(n_b)
    group_start = np.zeros(G)
    present = n_b + n_c > 0
    group_start[present] = np.concatenate(([0], np.cumsum((n_b + n_c)[present])[:-1]))
    r_c = np.bincount(g, weights=np.where(cand, pos, 0.0), minlength=G) - n_c * group_start + n_c
    return r_c - n_c * (n_c + 1) / 2.0, group_start


def _effect_and_normal_p(u_c: np.ndarray, n_b: np.ndarray, n_c: np.ndarray, tie_term: np.ndarray,
                         tested: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per tested group (NaN elsewhere), Cliff's delta and the two-sided p-value of the normal
    approximation with tie and continuity correction."""
    from scipy import special

    nb, nc = n_b.astype(np.float64), n_c.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        delta = np.where(tested, 2.0 * u_c / (nc * nb) - 1.0, np.nan)
        nn = nb + nc
        sd = np.sqrt(nb * nc / 12.0 * ((nn + 1) - tie_term / (nn * (nn - 1))))
        u = np.maximum(u_c, nb * nc - u_c)
        z = (u - nb * nc / 2.0 - 0.5) / sd
    p = np.where(tested, np.clip(2.0 * special.ndtr(-np.nan_to_num(z, nan=-np.inf)), 0.0, 1.0), np.nan)
    return delta, p


@functools.lru_cache(maxsize=4096)
def exact_tail(n1: int, n2: int) -> np.ndarray:
    """P(U >= u) for u = 0 .. n1*n2 under the null hypothesis, samples of n1 and n2 without ties.

    The number of arrangements with U = u is the coefficient of q^u in the Gaussian binomial
    [n1+n2 choose n1]_q = prod_{i=1..n1} (1 - q^(n2+i)) / (1 - q^i), built one factor at a
    time in exact integers (each step is itself a Gaussian binomial, so no coefficient exceeds
    2 * C(n1+n2, n1), inside int64 for the sizes used: n1 <= 8, n1*n2 <= 4096 for a group's test,
    n1 + n2 <= EXACT_STRATIFIED_VALUES = 60 for a stratum's: C(60, 30) < 2^57). The same
    distribution scipy.stats.mannwhitneyu(method="exact") uses; tests check they agree."""
    n1, n2 = min(n1, n2), max(n1, n2)
    poly = np.zeros(n1 * n2 + 1, dtype=np.int64)
    poly[0] = 1
    for i in range(1, n1 + 1):
        poly[n2 + i:] -= poly[:len(poly) - n2 - i].copy()      # times (1 - q^(n2+i))
        pad = -len(poly) % i                                     # divided by (1 - q^i): a running
        rows = np.concatenate((poly, np.zeros(pad, dtype=np.int64))).reshape(-1, i)   # sum with stride i
        poly = np.cumsum(rows, axis=0).ravel()[:len(poly)]
    tail = np.cumsum(poly[::-1])[::-1].astype(np.float64)
    return tail / tail[0]



def _exact_p(u_c: np.ndarray, n_b: np.ndarray, n_c: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Exact two-sided p-values of these groups: 2 P(U >= max(U1, U2)), at most 1."""
    u = np.rint(np.maximum(u_c[groups], n_b[groups] * n_c[groups] - u_c[groups])).astype(np.int64)
    out = np.empty(len(groups))
    pairs = n_c[groups] * (1 << 32) + n_b[groups]
    for pair in np.unique(pairs):
        which = np.flatnonzero(pairs == pair)
        tail = exact_tail(int(pair >> 32), int(pair & 0xFFFFFFFF))
        out[which] = np.minimum(1.0, 2.0 * tail[u[which]])
    return out



def bh(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (q-values) of the finite p's; NaN stays NaN.

    q_(i) = min over j >= i of p_(j) m / j (p sorted ascending, m tests), at most 1: the same
    as scipy.stats.false_discovery_control(p, method="bh") (tests check they agree), without
    importing scipy.stats (a second of start-up)."""
    q = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = len(ok)
    if m:
        order = np.argsort(p[ok], kind="stable")
        scaled = p[ok][order] * m / np.arange(1, m + 1)
        adjusted = np.minimum.accumulate(scaled[::-1])[::-1]
        q[ok[order]] = np.minimum(adjusted, 1.0)
    return q



def median_ratio(med_b: np.ndarray, med_c: np.ndarray) -> np.ndarray:
    """candidate / baseline median: 1 when both are 0, inf when only the baseline's is."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = med_c / med_b
    r[(med_b == 0) & (med_c == 0)] = 1.0
    r[(med_b == 0) & (med_c > 0)] = np.inf
    return r
