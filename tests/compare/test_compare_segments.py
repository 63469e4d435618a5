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
