"""compare's groups at coarser levels, van Elteren's stratified test, the two stages and the
detectable shift, each against a plain reference written here with loops (or scipy), by
property where a rule decides what counts."""

from __future__ import annotations

import itertools
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings as hsettings, strategies as st
from scipy import stats

from lustre_jobreport import cli, config
from lustre_jobreport.compare import detectable, grouping, levels, model as compare, stats as cstats, twostage
from lustre_jobreport.compare.model import Settings

from kit.compare_rows import jobs, table


# ---- levels ------------------------------------------------------------------------------------

def reference_levels(rows, min_jobs, level_cols):
    """rows: (key tuple, side, trusted). The plain rule: strata by the whole key; at each level
    pool the strata left by the level's keys; a pool is judged when it holds min_jobs trusted
    jobs a side (level 0: its own; above: only in strata with trusted jobs on both sides), or at
    the last level whatever it holds. Returns {frozenset(rows): level}."""
    strata = defaultdict(list)
    for i, (key, _, _) in enumerate(rows):
        strata[key].append(i)
    good = {k: [sum(1 for i in ix if rows[i][1] == s and rows[i][2]) for s in (0, 1)] for k, ix in strata.items()}
    left = set(strata)
    out = {}
    for lvl, cols in enumerate(level_cols):
        pools = defaultdict(list)
        for k in left:
            pools[tuple(k[c] for c in cols)].append(k)
        for members in pools.values():
            if lvl == 0:
                counts = good[members[0]]
            else:
                counts = [sum(good[k][s] for k in members if min(good[k]) > 0) for s in (0, 1)]
            if min(counts) >= min_jobs or lvl == len(level_cols) - 1:
                out[frozenset(i for k in members for i in strata[k])] = lvl
                left -= set(members)
    return out


@st.composite
def level_cases(draw):
    n = draw(st.integers(0, 60))
    row = st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 3), st.integers(0, 1),
                    st.integers(0, 1), st.booleans())
    rows = draw(st.lists(row, min_size=n, max_size=n))
    return rows, draw(st.integers(1, 5)), draw(st.sampled_from([(), ("nodes_class",), ("nodes_class", "user"),
                                                                ("user", "nodes_class"), ("user",)]))


@hsettings(max_examples=400, deadline=None)
@given(level_cases())
def test_levels_pool_what_is_too_small_as_the_plain_rule_says(case):
    rows, min_jobs, coarsen = case
    group_by = ("job_name", "user", "nodes_class")
    cols = levels.level_keys(group_by, coarsen)
    keys = [r[:4] for r in rows]             # job_name, user, nodes_class, fs codes
    side = np.array([r[4] for r in rows], dtype=np.int8)
    trusted = np.array([r[5] for r in rows], dtype=bool)
    parts = [(np.array([k[i] for k in keys], dtype=np.int64), 4) for i in range(4)]
    lv = levels.build(parts, side, trusted, min_jobs, cols, grouping.combine)
    got = defaultdict(set)
    for i, g in enumerate(lv.gid.tolist()):
        got[g].add(i)
    got_levels = {frozenset(ix): int(lv.level[g]) for g, ix in got.items()}
    want = reference_levels([(k, s, t) for k, s, t in zip(keys, side.tolist(), trusted.tolist())], min_jobs, cols)
    assert got_levels == want
    assert all(lv.gid[lv.first[g]] == g for g in range(lv.count))


def test_level_keys_drop_the_coarsen_keys_in_order_and_skip_keys_not_grouped_by():
    assert levels.level_keys(("job_name", "user", "nodes_class"), ("nodes_class", "user")) == [(0, 1, 2, 3), (0, 1, 3), (0, 3)]
    assert levels.level_keys(("job_name", "nodes_class"), ("user", "nodes_class")) == [(0, 1, 2), (0, 2)]
    assert levels.level_keys(("job_name",), ()) == [(0, 1)]


# ---- van Elteren ---------------------------------------------------------------------------------

def _reference_t(strata):
    """Loops and scipy: T = sum w (U - nb nc / 2), its variance (tie-corrected), the scale of the
    weighted Cliff's delta, the smallest weight, and the compared values a side."""
    t = var = scale = 0.0
    nb_all = nc_all = 0
    weights = []
    for b, c in strata:
        if not b or not c:
            continue
        nb, nc = len(b), len(c)
        nb_all, nc_all = nb_all + nb, nc_all + nc
        u = sum((x > y) + 0.5 * (x == y) for x in c for y in b)      # the candidate's U
        N = nb + nc
        _, counts = np.unique(np.array(b + c), return_counts=True)
        ties = float(np.sum(counts ** 3 - counts))
        w = 1.0 / (N + 1)
        weights.append(w)
        t += w * (u - nb * nc / 2)
        var += w * w * nb * nc / 12 * ((N + 1) - ties / (N * (N - 1)))
        scale += w * nb * nc
    return t, var, scale, min(weights, default=0.0), nb_all, nc_all


def reference_van_elteren(strata):
    """The normal approximation with a continuity correction of half the smallest weight."""
    t, var, scale, step, nb, nc = _reference_t(strata)
    if var <= 0:
        return nb, nc, 2 * t / scale if scale else np.nan, 1.0
    z = max(abs(t) - step / 2, 0.0) / np.sqrt(var)
    return nb, nc, 2 * t / scale, float(2 * stats.norm.sf(z))


def reference_exact_p(strata):
    """Every split of each stratum's values into sides of the same sizes, T of each: the share
    at least as far out as the observed one, either tail, doubled, at most 1."""
    t_obs = _reference_t(strata)[0]
    ts = [_reference_t(arr)[0] for arr in _arrangements([(b, c) for b, c in strata if b and c])]
    upper = sum(t >= t_obs - 1e-9 for t in ts) / len(ts)
    lower = sum(t <= t_obs + 1e-9 for t in ts) / len(ts)
    return min(1.0, 2 * min(upper, lower))


def _run_van_elteren(groups_of_strata, min_jobs=1):
    """Each item: a group's strata [(b values, c values)] -> van_elteren over them all at once."""
    v, stratum, side, sg = [], [], [], []
    s_id = 0
    for g, strata in enumerate(groups_of_strata):
        for b, c in strata:
            for x, sd in [(x, 0) for x in b] + [(x, 1) for x in c]:
                v.append(x)
                stratum.append(s_id)
                side.append(sd)
            sg.append(g)
            s_id += 1
    ranked = cstats.rank_tests(np.array(v, dtype=float), np.array(stratum, dtype=np.int64),
                               np.array(side, dtype=np.int8), s_id, min_jobs)
    return cstats.van_elteren(ranked, np.array(sg, dtype=np.int64), len(groups_of_strata), min_jobs,
                              np.array(stratum, dtype=np.int64))


values = st.lists(st.sampled_from([0.0, 1.0, 2.0, 2.5, 3.0, 10.0]) | st.floats(0, 100), max_size=7)


@hsettings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.tuples(values, values), min_size=1, max_size=4), min_size=1, max_size=5))
def test_van_elteren_in_the_normal_approximation_is_the_plain_sum_over_strata(groups_of_strata):
    saved = cstats.EXACT_STRATIFIED_SUPPORT
    cstats.EXACT_STRATIFIED_SUPPORT = 0                    # every group by the normal approximation
    try:
        ve = _run_van_elteren(groups_of_strata)
    finally:
        cstats.EXACT_STRATIFIED_SUPPORT = saved
    for g, strata in enumerate(groups_of_strata):
        nb, nc, delta, p = reference_van_elteren(strata)
        assert (ve.n_b[g], ve.n_c[g]) == (nb, nc)
        if nb == 0 or nc == 0:
            assert np.isnan(ve.p[g])
            continue
        assert ve.p[g] == pytest.approx(p, rel=1e-9, abs=1e-12)
        assert ve.delta[g] == pytest.approx(delta, rel=1e-9, abs=1e-12)


small_values = st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0]) | st.integers(0, 50).map(float), min_size=0, max_size=3)


@hsettings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.tuples(small_values, small_values), min_size=1, max_size=3), min_size=1, max_size=3))
def test_van_elteren_exact_p_is_the_share_of_every_split_of_the_strata(groups_of_strata):
    ve = _run_van_elteren(groups_of_strata)
    for g, strata in enumerate(groups_of_strata):
        nb, nc = _reference_t(strata)[4:]
        if nb == 0 or nc == 0 or ve.constant[g]:
            continue
        normal = reference_van_elteren(strata)[3]
        if normal > cstats.EXACT_STRATIFIED_BELOW:        # nothing to decide there: the approximation
            assert ve.p[g] == pytest.approx(normal, rel=1e-9, abs=1e-12), strata
        else:
            assert ve.p[g] == pytest.approx(reference_exact_p(strata), rel=1e-9, abs=1e-12), strata


def _arrangements(strata):
    """Every assignment of each stratum's values to its sides with the sizes kept: the exact
    stratified permutation distribution, one list of strata per arrangement."""
    per_stratum = []
    for b, c in strata:
        pool = b + c
        per_stratum.append([([pool[i] for i in range(len(pool)) if i not in chosen], [pool[i] for i in chosen])
                            for chosen in map(set, itertools.combinations(range(len(pool)), len(c)))])
    return [list(combo) for combo in itertools.product(*per_stratum)]


@pytest.mark.parametrize("strata", [
    [([1, 2, 3], [4, 5, 6]), ([1, 2, 3], [4, 5, 6])],
    [([1, 2], [3, 4, 5, 6]), ([1, 2, 3, 4], [5, 6])],
    [([1], [2, 3, 4, 5, 6]), ([1, 2, 3], [4, 5, 6]), ([1, 2], [3, 4])],
    [([1, 2, 3, 4], [5, 6, 7]), ([1, 2, 3], [4, 5, 6, 7]), ([1, 2], [3, 4, 5])],
    [([0, 0, 1], [1, 2, 2]), ([0, 0, 0, 1], [1, 1])],                       # ties
    [([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])],                                    # one stratum
])
def test_van_elteren_keeps_its_size_under_the_exact_stratified_permutation_distribution(strata):
    """Under no shift every within-stratum arrangement is equally likely: the share of them with
    p <= alpha must not exceed alpha (the test is not anti-conservative at the sizes pooled)."""
    arrangements = _arrangements(strata)
    p = _run_van_elteren(arrangements).p
    for alpha in (0.01, 0.05, 0.1):
        assert np.mean(p <= alpha) <= alpha * 1.1 + 1e-12, (alpha, np.mean(p <= alpha))


def test_a_pooled_group_is_not_a_shift_because_its_sides_ran_at_other_node_counts():
    """Node class 1 sends many small read RPCs, class 8-15 few; the baseline ran mostly at 1
    node, the candidate mostly at 8: pooled plainly, the candidate's RPCs look far larger;
    compared within each class, nothing moved."""
    rng = np.random.default_rng(3)

    def side(n1, n8, prefix):
        return table(*[jobs(rng, n1, nodes=1, small_read=0.6, record_prefix=prefix + "a"),
                      jobs(rng, n8, nodes=8, small_read=0.02, record_prefix=prefix + "b")])
    b, c = side(8, 2, "b"), side(2, 8, "c")
    small = lambda r: next(m for m in r.doc["groups"][0]["metrics"] if m["id"] == "small_read_rpc_share")
    pooled = compare.compare(b, c, threads=1)
    g = pooled.doc["groups"][0]
    assert len(pooled.doc["groups"]) == 1 and g["level"] == 1 and g["pooled"] == {"nodes_class": ["1", "8-15"]}
    plain = compare.compare(b, c, Settings(group_by=("job_name", "user"), coarsen=()), threads=1)
    assert plain.doc["groups"][0]["level"] == 0 and small(plain)["effect"] <= -0.5      # what plain pooling sees
    assert small(plain)["p_value"] < 0.05
    assert g["verdict"] == "no_change" and small(pooled)["p_value"] > 0.05


# ---- Simes, BH within families, the two stages ------------------------------------------------------

def reference_simes(ps):
    ps = sorted(p for p in ps if not np.isnan(p))
    return min(min(p * len(ps) / (i + 1) for i, p in enumerate(ps)), 1.0) if ps else np.nan


def reference_bh(ps):
    idx = [i for i, p in enumerate(ps) if not np.isnan(p)]
    m = len(idx)
    out = [np.nan] * len(ps)
    for i in idx:
        out[i] = min(1.0, min(ps[j] * m / sum(1 for k in idx if ps[k] <= ps[j]) for j in idx if ps[j] >= ps[i]))
    return out


p_or_nan = st.one_of(st.just(float("nan")), st.floats(0, 1), st.sampled_from([0.0, 0.01, 0.5, 1.0]))


@hsettings(max_examples=300, deadline=None)
@given(st.integers(1, 6).flatmap(lambda k: st.lists(st.lists(p_or_nan, min_size=k, max_size=k), min_size=1, max_size=6)))
def test_simes_and_bh_within_columns_are_the_plain_rules(columns):
    arr = np.array(columns, dtype=float).T                      # [k, F]
    got_s, got_b = twostage.simes(arr), twostage.bh_columns(arr)
    for f, col in enumerate(columns):
        want = reference_simes(col)
        assert (np.isnan(got_s[f]) and np.isnan(want)) or got_s[f] == pytest.approx(want)
        for i, w in enumerate(reference_bh(col)):
            assert (np.isnan(got_b[i, f]) and np.isnan(w)) or got_b[i, f] == pytest.approx(w)


@hsettings(max_examples=200, deadline=None)
@given(st.integers(1, 5), st.integers(1, 6), st.data())
def test_two_stages_are_benjamini_bogomolov_with_simes(M, G, data):
    """A metric is a discovery (q <= 0.05) exactly when its group's Simes p (its metrics' and the
    combined one's) passes BH across the group tests and the metric passes BH inside its
    group at 0.05 R / F."""
    q = 0.05
    p_metric = np.array(data.draw(st.lists(st.floats(0, 0.2), min_size=2 * M * G, max_size=2 * M * G))).reshape(2, M, G)
    p_comb = np.array(data.draw(st.lists(st.floats(0, 0.2), min_size=2 * G, max_size=2 * G))).reshape(2, G)
    member = np.array(data.draw(st.lists(st.booleans(), min_size=M * G, max_size=M * G))).reshape(M, G)
    got = twostage.two_stage(p_metric, p_comb, member, q)
    families = [(d, g) for d in range(2) for g in range(G) if member[:, g].any()]
    fam_p = {f: reference_simes([p_metric[f[0], m, f[1]] for m in range(M) if member[m, f[1]]] + [p_comb[f]])
             for f in families}
    fam_q = dict(zip(families, reference_bh([fam_p[f] for f in families])))
    selected = [f for f in families if fam_q[f] <= q]
    assert got.tests == len(families) and got.passed == len(selected)
    for d in range(2):
        for g in range(G):
            ms = [m for m in range(M) if member[m, g]]
            within = dict(zip(ms, reference_bh([p_metric[d, m, g] for m in ms])))
            for m in range(M):
                if m not in within:
                    assert np.isnan(got.metric_q[d, m, g])
                    continue
                level = q * len(selected) / len(families)
                if abs(within[m] - level) < 1e-12 or abs(fam_q[(d, g)] - q) < 1e-12:
                    continue                           # on the boundary: rounding decides
                found = (d, g) in selected and within[m] <= level
                assert (got.metric_q[d, m, g] <= q) == found, (d, m, g)


# ---- the detectable shift ----------------------------------------------------------------------

@pytest.mark.parametrize("n,sigma", [(8, 0.3), (12, 0.3), (20, 0.6), (40, 0.2)])
def test_the_detectable_ratio_is_found_with_80_percent_power_and_a_smaller_one_is_not(n, sigma):
    """Simulate many groups of n log-normal jobs a side (spread sigma) shifted by the detectable
    ratio: the one-sided rank test at alpha finds about 80 % of them; at a ratio half as far
    (in log) clearly fewer."""
    alpha = 0.005
    r = float(detectable.detectable_ratio(detectable.equal_sizes(np.array([float(n)])), np.array([sigma]), alpha,
                                          1.0, 0.0)[0])
    assert 1.0 < r < np.inf
    rng = np.random.default_rng(n)
    G = 4000

    def power(ratio):
        x = rng.lognormal(0.0, sigma, size=(G, 2 * n))
        x[:, n:] *= ratio
        gid = np.repeat(np.arange(G), 2 * n)
        side = np.tile(np.repeat(np.array([0, 1], dtype=np.int8), n), G)
        t = cstats.rank_tests(x.ravel(), gid, side, G, 2)
        return np.mean((t.delta > 0) & (t.p / 2 <= alpha))
    assert 0.75 <= power(r) <= 0.85
    assert power(np.sqrt(r)) < 0.5


def test_too_few_jobs_detect_no_shift_at_all():
    three = detectable.equal_sizes(np.array([3.0]))          # 3 jobs a side: at best p = 1/20 one-sided
    assert np.isinf(detectable.detectable_ratio(three, np.array([0.3]), 0.01, 1.25, 0.33)[0])
    assert np.isfinite(detectable.detectable_ratio(three, np.array([0.3]), 0.1, 1.25, 0.33)[0])
    assert detectable.jobs_needed(0.3, 0.001, 1.25, 0.33, 5) > 5
    assert detectable.jobs_needed(float("nan"), 0.001, 1.25, 0.33, 5) is None


# ---- the whole: a regression in an application run at mixed node counts ----------------------

def _mixed_fleet(rng, regressed="enzo"):
    """4 reading applications, 6 jobs a side each, 3 at 1 node and 3 at 2; `regressed` reads
    8 KiB RPCs on the candidate side, and its reads are slower for it (the read-ahead
    regression's shape on the real path: tests/integration/test_compare_power.py)."""
    base, cand = [], []
    for app in ("enzo", "wrf", "lammps", "namd"):
        for nodes in (1, 2):
            profile = dict(job_name=app, nodes=nodes, write_gib=0.01)
            base.append(jobs(rng, 3, record_prefix=f"b{app}{nodes}", **profile))
            hit = app == regressed
            cand.append(jobs(rng, 3, record_prefix=f"c{app}{nodes}", small_read=0.95 if hit else 0.02,
                             read_latency_us=3000.0 if hit else 300.0, **profile))
    return table(*base), table(*cand)


def test_a_regression_at_mixed_node_counts_is_judged_without_the_node_class():
    b, c = _mixed_fleet(np.random.default_rng(8))
    r = compare.compare(b, c, threads=1)
    g = next(g for g in r.doc["groups"] if g["key"]["job_name"] == "enzo")
    assert g["verdict"] == "regression" and g["level"] == 1
    assert g["key"] == {"job_name": "enzo", "user": "ann"} and g["pooled"] == {"nodes_class": ["1", "2-3"]}
    assert g["n_baseline"] == g["n_candidate"] == 6 and g["tests"]["worse"]["q_value"] <= 0.05
    assert r.doc["summary"]["regression"] == 1
    # without pooling, every group has 3 jobs a side: nothing can be judged
    flat = compare.compare(b, c, Settings(coarsen=()), threads=1)
    assert flat.doc["summary"]["not_enough_data"] == len(flat.doc["groups"]) == 8
    assert all(g["level"] == 0 and g["pooled"] == {} and g["tests"] is None for g in flat.doc["groups"])
    assert flat.doc["not_judged"]["groups"] == 8 and flat.doc["not_judged"]["jobs_a_side"] >= 5


def test_no_change_groups_say_what_they_could_have_seen():
    rng = np.random.default_rng(9)
    b = table(*[jobs(rng, 12, job_name="a"), jobs(rng, 40, job_name="b", record_prefix="bb")])
    c = table(*[jobs(rng, 12, job_name="a", record_prefix="c"), jobs(rng, 40, job_name="b", record_prefix="cb")])
    r = compare.compare(b, c, threads=1)
    det = {g["key"]["job_name"]: g["detectable"] for g in r.doc["groups"]}
    assert all(g["verdict"] == "no_change" for g in r.doc["groups"])
    assert det["a"]["metric"] and det["b"]["metric"]
    assert 1.25 <= det["b"]["ratio"] <= det["a"]["ratio"] < np.inf     # more jobs: smaller shifts seen


def test_coarsen_is_checked_like_group_by(tmp_path):
    with pytest.raises(compare.CompareError, match="--coarsen: unknown key 'node'"):
        Settings.of(dict(config.DEFAULTS["compare"]), None, "node")
    assert Settings.of(dict(config.DEFAULTS["compare"]), None, "").coarsen == ()
    conf = tmp_path / "c.toml"
    conf.write_text('[compare]\ncoarsen = ["user", "user"]\n')
    assert cli.main(["--config", str(conf), "compare", "--baseline", "", "--candidate", ""]) == 2
