"""compare's all-groups-at-once routines against plain per-group references written here with
loops (itertools, np.median, scipy.stats.rankdata), by property: the exact stratified
distribution and its p-values over many groups at once."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, strategies as st

from lustre_jobreport.compare import stats as cstats
from kit.proptest import runs


# ---- the exact distribution of a stratum's U, ties as midranks -----------------------------------

def reference_u_distribution(n_c: int, run_lengths: tuple[int, ...]) -> dict[float, float]:
    """Every choice of the candidate's n_c values among the stratum's, each equally likely:
    {U_c: probability}, U_c = the chosen values' midranks summed, less n_c (n_c + 1) / 2."""
    midranks, position = [], 1
    for t in run_lengths:
        midranks += [position + (t - 1) / 2] * t
        position += t
    counts = Counter(sum(chosen) - n_c * (n_c + 1) / 2 for chosen in itertools.combinations(midranks, n_c))
    total = sum(counts.values())
    return {u: c / total for u, c in counts.items()}


@st.composite
def strata_shapes(draw, most=14):
    run_lengths = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=most)))
    while sum(run_lengths) > most:
        run_lengths = run_lengths[:-1]
    return draw(st.integers(0, sum(run_lengths))), run_lengths


@runs(300)
@given(strata_shapes())
def test_a_strata_u_distribution_counts_every_choice_of_the_candidates_values(shape):
    n_c, run_lengths = shape
    u, prob = cstats.stratum_u_distribution.__wrapped__(n_c, run_lengths)
    want = reference_u_distribution(n_c, run_lengths)
    assert sorted(want) == pytest.approx(u.tolist(), abs=1e-9)
    assert [want[k] for k in sorted(want)] == pytest.approx(prob.tolist(), rel=1e-12)


# ---- the exact stratified p-value of many groups at once ---------------------------------------------

def _t(strata) -> float:
    """Van Elteren's T of strata [(baseline values, candidate values)]: plain loops."""
    t = 0.0
    for b, c in strata:
        if b and c:
            u = sum((x > y) + 0.5 * (x == y) for x in c for y in b)
            t += (u - len(b) * len(c) / 2) / (len(b) + len(c) + 1)
    return t


def reference_exact_p(strata) -> float:
    """The share of every within-stratum split (sizes kept) at least as far out as the observed
    T, either tail, doubled, at most 1."""
    t_obs = _t(strata)
    splits = []
    for b, c in strata:
        pool = b + c
        splits.append([([pool[i] for i in range(len(pool)) if i not in chosen], [pool[i] for i in chosen])
                       for chosen in map(set, itertools.combinations(range(len(pool)), len(c)))])
    ts = [_t(arr) for arr in itertools.product(*splits)]
    upper = sum(t >= t_obs - 1e-9 for t in ts) / len(ts)
    lower = sum(t <= t_obs + 1e-9 for t in ts) / len(ts)
    return min(1.0, 2 * min(upper, lower))


stratum_values = st.lists(st.sampled_from([0.0, 1.0, 2.0]) | st.integers(0, 30).map(float), min_size=2, max_size=6)


@st.composite
def groups_sharing_shapes(draw):
    """Groups of 1-2 strata; several groups take the same values split otherwise between the
    sides (the same shape, another observed T)."""
    out = []
    for _ in range(draw(st.integers(1, 4))):
        template = draw(st.lists(stratum_values, min_size=1, max_size=2))
        for _ in range(draw(st.integers(1, 4))):
            strata = []
            for pool in template:
                order = draw(st.permutations(pool))
                k = draw(st.integers(1, len(pool) - 1))
                strata.append((list(order[:k]), list(order[k:])))
            out.append(strata)
    return out


@runs(150)
@given(groups_sharing_shapes())
def test_exact_stratified_p_of_many_groups_at_once_is_each_groups_own_count(groups):
    v, stratum, side, stratum_group = [], [], [], []
    for g, strata in enumerate(groups):
        for b, c in strata:
            for x, sd in [(x, 0) for x in b] + [(x, 1) for x in c]:
                v.append(x)
                stratum.append(len(stratum_group))
                side.append(sd)
            stratum_group.append(g)
    stratum = np.array(stratum, dtype=np.int64)
    ranked = cstats.rank_tests(np.array(v), stratum, np.array(side, dtype=np.int8), len(stratum_group), 1)
    got = cstats.exact_stratified_p(ranked, np.array(stratum_group, dtype=np.int64), stratum,
                                    np.arange(len(groups)))
    assert got.tolist() == pytest.approx([reference_exact_p(strata) for strata in groups], rel=1e-9, abs=1e-12)


# ---- ranks, ties and medians per group, from one sort by value -------------------------------------

@st.composite
def grouped_values(draw):
    """Values (NaN: not counted) of rows in a few groups and two sides, with many ties."""
    n = draw(st.integers(0, 80))
    value = st.one_of(st.just(float("nan")), st.sampled_from([0.0, 1.0, 2.5]), st.floats(-1e6, 1e6))
    v = np.array(draw(st.lists(value, min_size=n, max_size=n)), dtype=np.float64)
    groups = draw(st.integers(1, 6))
    gid = np.array(draw(st.lists(st.integers(0, groups - 1), min_size=n, max_size=n)), dtype=np.int64)
    side = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=np.int8)
    return v, gid, side, groups


def _median_or_nan(x):
    return float(np.median(x)) if len(x) else float("nan")


@runs(1000)
@given(grouped_values())
def test_ranks_ties_and_medians_of_every_group_at_once_are_each_groups_own(case):
    from scipy.stats import rankdata
    v, gid, side, G = case
    r = cstats.rank_tests(v, gid, side, G, 1, cstats.value_order(v))
    for g in range(G):
        rows = np.flatnonzero((gid == g) & ~np.isnan(v))
        x, s = v[rows], side[rows]
        n = len(rows)
        assert (r.n_b[g], r.n_c[g]) == (int((s == 0).sum()), int((s == 1).sum()))
        assert [r.med_b[g], r.med_c[g]] == pytest.approx([_median_or_nan(x[s == 0]), _median_or_nan(x[s == 1])],
                                                         nan_ok=True)
        ranks = rankdata(x)                                # ties averaged
        assert r.rank[rows].tolist() == pytest.approx(((ranks - (n + 1) / 2) / n).tolist())
        ties = sum(t ** 3 - t for t in Counter(x.tolist()).values())
        assert r.tie_term[g] == ties
        u_c = sum(ranks[s == 1]) - r.n_c[g] * (r.n_c[g] + 1) / 2
        assert r.u_c[g] == pytest.approx(u_c)
    assert np.isnan(r.rank[np.isnan(v)]).all()


@runs(500)
@given(grouped_values(), st.data())
def test_medians_of_some_rows_from_the_order_of_them_all_are_each_groups_own(case, data):
    v, gid, side, G = case
    some = np.array(data.draw(st.lists(st.booleans(), min_size=len(v), max_size=len(v))), dtype=bool)
    order = cstats.value_order(v)
    n_b, n_c, med_b, med_c = cstats.group_medians(np.where(some, v, np.nan), gid, side, G, order[some[order]])
    for g in range(G):
        x, s = v[(gid == g) & some & ~np.isnan(v)], side[(gid == g) & some & ~np.isnan(v)]
        assert (n_b[g], n_c[g]) == (int((s == 0).sum()), int((s == 1).sum()))
        assert [med_b[g], med_c[g]] == pytest.approx([_median_or_nan(x[s == 0]), _median_or_nan(x[s == 1])],
                                                     nan_ok=True)


# ---- the values each group's side holds (attribution) ------------------------------------------------

@runs(500)
@given(st.sets(st.tuples(st.integers(0, 30), st.integers(0, 6)), max_size=60), st.booleans())
def test_each_cells_values_are_its_codes_labels_in_order(pairs, by_version):
    from lustre_jobreport.compare import attribution
    labels = ["2.16.0", "2.15.4", "2.9.1", "2.15.10", "2.15.4-rc1", "1", "10"]
    cell, code = (np.array(a, dtype=np.int64) for a in zip(*sorted(pairs))) if pairs else (np.zeros(0, np.int64),) * 2
    got = attribution.cell_values(cell, code, labels, attribution.version_key if by_version else None)
    want: dict[int, list] = {}
    for c, k in sorted(pairs):
        want.setdefault(c, []).append(labels[k])
    if by_version:
        want = {c: sorted(vs, key=attribution.version_key) for c, vs in want.items()}
    assert got == want


# ---- groups numbered by their keys ---------------------------------------------------------------

@runs(1000)
@given(st.lists(st.integers(-1, 2**62), max_size=50) | st.lists(st.integers(0, 5), max_size=50))
def test_dense_keys_are_np_uniques_inverse_and_first_rows(keys):
    from lustre_jobreport.compare import grouping
    keys = np.array(keys, dtype=np.int64)
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    got_rank, got_first = grouping.dense(keys)
    assert got_rank.tolist() == inverse.tolist() and got_first.tolist() == first.tolist()
