"""compare: groups, per-job metrics, statistics and verdicts, attribution, hybrid I/O, renderings.

Rows come from test_compare_rows.jobs (realistic per-job distributions); each side of a group
is a separate draw, so no test depends on exact numbers beyond what it sets up.
"""

import json
import re
import unicodedata
from html.parser import HTMLParser

import numpy as np
import pytest
from hypothesis import given, strategies as st
from scipy import stats

from lustre_jobreport.compare import document, model as compare, metrics as comparemetrics, stats as compare_stats, twostage, \
    view as comparerender
from lustre_jobreport import config
from lustre_jobreport.records import jobrow
from lustre_jobreport.compare.model import Settings
from kit.proptest import runs

from kit.compare_rows import jobs, table

MiB = 1 << 20


def run(base_parts, cand_parts, settings=Settings(), **kw):
    return compare.compare(table(*base_parts), table(*cand_parts), settings,
                           baseline_selection="lustre=2.15.*", candidate_selection="lustre=2.16.*", **kw)


def group(result, **key):
    for g in result.doc["groups"]:
        if all(g["key"].get(k) == v for k, v in key.items()):
            return g
    raise AssertionError(f"no group {key}")


def flat(text):
    """The text with its line wrapping undone (phrases may wrap at 100 columns)."""
    return " ".join(text.split())


def metric(g, mid):
    return next(m for m in g["metrics"] if m["id"] == mid)


# ---- the statistics against scipy --------------------------------------------------------------

def test_rank_tests_agree_with_scipy_mannwhitneyu_with_ties_and_small_samples():
    rng = np.random.default_rng(5)
    G = 240
    gid, side, v = [], [], []
    sizes = rng.integers(0, 30, size=(G, 2))
    for g in range(G):
        for s in (0, 1):
            n = sizes[g, s]
            vals = rng.integers(0, 5, n).astype(float) if g % 3 == 0 else rng.lognormal(size=n) + 0.6 * s * (g % 2)
            gid += [g] * n
            side += [s] * n
            v += list(vals)
    perm = rng.permutation(len(v))
    gid, side, v = np.array(gid)[perm], np.array(side, dtype=np.int8)[perm], np.array(v)[perm]
    r = compare_stats.rank_tests(v, gid, side, G, 5)
    checked = 0
    for g in range(G):
        b, c = v[(gid == g) & (side == 0)], v[(gid == g) & (side == 1)]
        if min(len(b), len(c)) < 5:
            assert np.isnan(r.p[g]) and np.isnan(r.delta[g])
            continue
        res = stats.mannwhitneyu(c, b)       # method "auto": exact for small samples without ties
        assert r.p[g] == pytest.approx(res.pvalue, rel=1e-9)
        assert r.delta[g] == pytest.approx(2 * res.statistic / (len(b) * len(c)) - 1)
        assert (r.med_b[g], r.med_c[g]) == pytest.approx((np.median(b), np.median(c)))
        checked += 1
    assert checked > 150


@pytest.mark.parametrize("n1,n2", [(1, 7), (3, 3), (5, 8), (8, 8), (6, 200), (8, 512)])
def test_exact_tail_is_scipys_exact_distribution(n1, n2):
    rng = np.random.default_rng(n1 * 1000 + n2)
    x, y = rng.random((30, n1)), rng.random((30, n2))
    res = stats.mannwhitneyu(x, y, axis=1, method="exact")
    u = np.maximum(res.statistic, n1 * n2 - res.statistic).astype(int)
    assert np.minimum(1, 2 * compare_stats.exact_tail(n1, n2)[u]) == pytest.approx(res.pvalue, rel=1e-12)


def test_bh_is_scipys_false_discovery_control():
    for seed in range(10):
        rng = np.random.default_rng(seed)
        p = rng.random(rng.integers(1, 400)) ** 3
        p[rng.random(len(p)) < 0.1] = np.nan
        q, ok = compare_stats.bh(p), ~np.isnan(p)
        assert q[ok] == pytest.approx(stats.false_discovery_control(p[ok], method="bh"))
        assert np.isnan(q[~ok]).all()


def test_median_ratio_of_zeros():
    r = compare_stats.median_ratio(np.array([0.0, 0.0, 2.0, 4.0]), np.array([0.0, 3.0, 0.0, 2.0]))
    assert r.tolist() == [1.0, np.inf, 0.0, 0.5]


# ---- verdicts ----------------------------------------------------------------------------------

def test_small_read_jump_is_a_regression_with_its_numbers():
    rng = np.random.default_rng(1)
    r = run([jobs(rng, 12, record_prefix="b")],
            [jobs(rng, 11, small_read=0.9, lustre="2.16.0", record_prefix="c")])
    g = group(r, job_name="enzo")
    assert (g["verdict"], g["n_baseline"], g["n_candidate"]) == ("regression", 12, 11)
    m = metric(g, "small_read_rpc_share")
    assert m["verdict"] == "regression"
    assert m["baseline_median"] < 0.06 and m["candidate_median"] > 0.8
    assert m["effect"] == 1.0 and m["ratio"] > 10
    assert m["p_value"] < 1e-3 and m["q_value"] <= 0.05
    assert (m["n_baseline"], m["n_candidate"]) == (12, 11)
    # reads are worse in the other shape metrics; writes are not
    assert metric(g, "mean_read_rpc_bytes")["verdict"] == "regression"
    assert metric(g, "full_read_rpc_share")["verdict"] == "regression"
    assert metric(g, "small_write_rpc_share")["verdict"] == "no_change"
    assert g["cause"] == "lustre"
    assert g["changes"] == [{"what": "lustre", "baseline": ["2.15.4"], "candidate": ["2.16.0"]}]
    assert r.doc["summary"] == {"regression": 1, "improvement": 0, "no_change": 0, "not_enough_data": 0}
    text = flat(comparerender.render_text(r))
    assert "read RPCs ≤16 KiB: " in text and "of read RPCs (median over 12 → 11 jobs), Cliff's δ +1.00" in text
    assert "Lustre 2.15.4 → 2.16.0" in text


def test_lower_latency_is_an_improvement():
    rng = np.random.default_rng(2)
    r = run([jobs(rng, 15, read_latency_us=400)], [jobs(rng, 14, read_latency_us=100)])
    g = group(r, job_name="enzo")
    assert g["verdict"] == "improvement"
    m = metric(g, "read_latency_us")
    assert m["verdict"] == "improvement" and m["effect"] < -0.9 and m["ratio"] < 0.5
    assert [x["id"] for x in g["metrics"] if x["verdict"] != "no_change"] == ["read_latency_us"]
    assert g["cause"] == "none" and g["changes"] == []
    assert "the change is in the workload or the servers" in flat(comparerender.render_text(r))


def test_same_jobs_on_both_sides_are_no_change():
    rng = np.random.default_rng(3)
    r = run([jobs(rng, 30)], [jobs(rng, 30)])
    g = group(r, job_name="enzo")
    assert g["verdict"] == "no_change"
    assert all(m["verdict"] == "no_change" for m in g["metrics"])
    assert all(m["q_value"] is not None for m in g["metrics"] if m["id"] != "full_read_rpc_share")


def test_four_jobs_are_not_enough_data():
    rng = np.random.default_rng(4)
    r = run([jobs(rng, 12), jobs(rng, 4, job_name="tiny", record_prefix="t")],
            [jobs(rng, 12, small_read=0.9), jobs(rng, 4, job_name="tiny", small_read=0.9, record_prefix="u")])
    g = group(r, job_name="tiny")
    assert (g["verdict"], g["n_baseline"], g["n_candidate"], g["metrics"]) == ("not_enough_data", 4, 4, [])
    assert r.doc["summary"]["not_enough_data"] == 1 and r.doc["summary"]["regression"] == 1
    # a metric defined for too few jobs of a group that has enough
    rng = np.random.default_rng(5)
    r = run([jobs(rng, 8, write_gib=np.array([4.0] * 4 + [0.001] * 4), sigma=0.1)],
            [jobs(rng, 8, write_gib=np.array([4.0] * 4 + [0.001] * 4), sigma=0.1)])
    m = metric(group(r, job_name="enzo"), "small_write_rpc_share")
    assert (m["verdict"], m["n_baseline"], m["n_candidate"], m["p_value"]) == ("not_enough_data", 4, 4, None)


def test_untrusted_jobs_are_left_out_and_counted():
    rng = np.random.default_rng(6)
    r = run([jobs(rng, 10), jobs(rng, 3, trusted=False, record_prefix="x")], [jobs(rng, 9, small_read=0.9)])
    g = group(r, job_name="enzo")
    assert (g["n_baseline"], g["n_candidate"], g["left_out"]) == (10, 9, {"baseline": 3, "candidate": 0})
    assert r.doc["baseline"]["left_out"] == 3 and r.doc["baseline"]["rows"] == 13
    assert "left out: 3 jobs with untrusted numbers (3 baseline, 0 candidate)" in flat(comparerender.render_text(r))
    # untrusted jobs alone do not make a side
    r = run([jobs(rng, 3), jobs(rng, 9, trusted=False, record_prefix="x")], [jobs(rng, 9)])
    assert group(r, job_name="enzo")["verdict"] == "not_enough_data"


def test_the_application_call_size_alone_never_makes_a_regression():
    rng = np.random.default_rng(8)
    r = run([jobs(rng, 20, read_call=MiB)], [jobs(rng, 20, read_call=4096)])
    g = group(r, job_name="enzo")
    m = metric(g, "mean_read_call_bytes")
    assert m["verdict"] == "regression" and m["ratio"] < 0.01       # the metric did shift ...
    assert comparemetrics.BY_ID["mean_read_call_bytes"].context
    assert g["verdict"] == "no_change"                               # ... the group is not a regression
    assert r.doc["summary"]["regression"] == 0


def test_a_settings_change_alone_is_cause_settings_not_a_lustre_regression():
    rng = np.random.default_rng(8)
    r = run([jobs(rng, 14, settings={"max_read_ahead_mb": 1024})],
            [jobs(rng, 14, settings={"max_read_ahead_mb": 0}, read_latency_us=3000, ra_hit=0.2)])
    g = group(r, job_name="enzo")
    assert g["verdict"] == "regression" and g["cause"] == "settings"
    assert g["changes"] == [{"what": "max_read_ahead_mb", "baseline": [1024], "candidate": [0]}]
    text = flat(comparerender.render_text(r))
    assert "settings change: max_read_ahead_mb 1024 → 0 (Lustre 2.15.4 on both sides" in text
    assert "Lustre 2.15.4 →" not in text
    # kernel and OS, and both kinds at once
    r = run([jobs(rng, 10, kernel="5.14.0-427")],
            [jobs(rng, 10, kernel="5.14.0-503", lustre="2.16.0", settings={"max_pages_per_rpc": 1024})])
    g = group(r, job_name="enzo")
    assert g["cause"] == "lustre+kernel/os+settings"
    assert [c["what"] for c in g["changes"]] == ["lustre", "kernel", "max_pages_per_rpc"]


def test_the_same_several_values_on_both_sides_are_no_change():
    """Both sides ran on two Lustre versions and two max_pages_per_rpc values: the sets are the
    same, so neither differs (and one side with one value more does)."""
    rng = np.random.default_rng(19)
    def mixed(prefix, extra=()):
        return [jobs(rng, 4, lustre="2.15.4", settings={"max_pages_per_rpc": 256}, record_prefix=prefix + "a"),
                jobs(rng, 4, lustre="2.15.5", settings={"max_pages_per_rpc": 1024}, record_prefix=prefix + "b"),
                *extra]
    g = group(run(mixed("b"), mixed("c")), job_name="enzo")
    assert g["changes"] == [] and g["cause"] == "none"
    more = [jobs(rng, 2, lustre="2.15.5", settings={"max_pages_per_rpc": 4096}, record_prefix="cx")]
    g = group(run(mixed("b"), mixed("c", more)), job_name="enzo")
    assert g["changes"] == [{"what": "max_pages_per_rpc", "baseline": [256, 1024], "candidate": [256, 1024, 4096]}]


def test_a_setting_the_baseline_did_not_record_is_not_a_change():
    rng = np.random.default_rng(9)
    r = run([jobs(rng, 10)], [jobs(rng, 10, settings={"hybrid_io": 1, "hybrid_io_read_threshold_bytes": 8 * MiB})])
    assert group(r, job_name="enzo")["changes"] == []


def test_hybrid_io_shifts_are_expected_not_a_regression():
    rng = np.random.default_rng(10)
    shifted = dict(small_read=0.5, ra_hit=0.3, lustre="2.16.0", record_prefix="c")
    r = run([jobs(rng, 15)], [jobs(rng, 15, hybrid_read=True, **shifted)])
    g = group(r, job_name="enzo")
    assert g["verdict"] == "no_change"
    m = metric(g, "small_read_rpc_share")
    assert m["verdict"] == "regression" and m["expected"] == compare.HYBRID_EXPECTED     # statistics kept
    assert metric(g, "ra_hit_share")["expected"] == compare.HYBRID_EXPECTED
    assert all("expected" not in m for m in g["metrics"] if m["verdict"] == "no_change")
    assert all("expected" not in m for m in g["metrics"] if comparemetrics.BY_ID[m["id"]].direction == "write")
    text = flat(comparerender.render_text(r))
    assert "Only expected shifts (1):" in text and "expected, hybrid I/O" in text
    # the same shift with hybrid I/O on both sides is a regression
    r = run([jobs(rng, 15, hybrid_read=True)], [jobs(rng, 15, hybrid_read=True, **shifted)])
    assert group(r, job_name="enzo")["verdict"] == "regression"
    # a read switched to direct I/O that got slower is still a regression
    r = run([jobs(rng, 15)], [jobs(rng, 15, hybrid_read=True, read_latency_us=1500, **shifted)])
    g = group(r, job_name="enzo")
    assert g["verdict"] == "regression"
    assert "expected" not in metric(g, "read_latency_us") and metric(g, "read_latency_us")["verdict"] == "regression"
    # a write switched to direct I/O waits for the OSTs: a longer write() is expected
    r = run([jobs(rng, 15)], [jobs(rng, 15, hybrid_write=True, write_latency_us=1500)])
    g = group(r, job_name="enzo")
    assert g["verdict"] == "no_change" and "expected" in metric(g, "write_latency_us")
    # a write-side switch does not excuse a read-side shift
    r = run([jobs(rng, 15)], [jobs(rng, 15, hybrid_write=True, **shifted)])
    assert group(r, job_name="enzo")["verdict"] == "regression"


def test_false_regressions_on_null_data_stay_under_q_thanks_to_bh(monkeypatch):
    """Same distribution on both sides, 30 groups x 19 metrics per run: a run with any verdict
    is a false discovery. BH keeps that rate under q (0.05); without it nearly every run has
    some (570 tests at 5 % each)."""
    def runs(seeds):
        bad = 0
        for seed in seeds:
            rng = np.random.default_rng(seed)
            sizes = rng.integers(6, 16, size=(2, 30))
            sides = []
            for s in range(2):
                names = np.repeat(np.array([f"app{g}" for g in range(30)], dtype=object), sizes[s])
                sides.append(table(jobs(rng, int(sizes[s].sum()), job_name=names, record_prefix=f"s{s}")))
            r = compare.compare(sides[0], sides[1], threads=1)
            bad += any(m["verdict"] in ("regression", "improvement") for g in r.doc["groups"] for m in g["metrics"])
        return bad / len(seeds)
    with_bh = runs(range(200))
    assert with_bh <= 0.05 + 0.03
    def raw(p_metric, p_combined, member, q):                  # broken: raw p-values as q
        d, _, G = p_metric.shape
        nan = np.full((d, G), np.nan)
        return twostage.TwoStage(nan, nan, np.where(member[None], p_metric, np.nan), 0, 0)
    monkeypatch.setattr(twostage, "two_stage", raw)
    without = runs(range(40))
    assert without > 0.5, without
    print(f"runs with a false verdict: {with_bh:.3f} with BH, {without:.3f} without")


# ---- grouping ----------------------------------------------------------------------------------

def test_node_classes_and_group_keys():
    assert [compare.class_label(k) for k in compare.nodes_class(
        np.array([1, 2, 3, 4, 7, 8, 15, 16, np.nan, 0]), np.array([0, 0, 0, 0, 0, 0, 0, 0, 5, 0]))] == \
        ["1", "2-3", "2-3", "4-7", "4-7", "8-15", "8-15", "16-31", "4-7", None]
    rng = np.random.default_rng(11)
    base = [jobs(rng, 6, nodes=2), jobs(rng, 6, nodes=3, record_prefix="b"), jobs(rng, 6, nodes=16, record_prefix="c"),
            jobs(rng, 6, nodes=2, fs="project", record_prefix="d")]
    r = run(base, base)
    keys = sorted((g["key"]["nodes_class"], g["fs"]) for g in r.doc["groups"])
    assert keys == [("16-31", "scratch"), ("2-3", "project"), ("2-3", "scratch")]
    assert group(r, nodes_class="2-3")["key"] == {"job_name": "enzo", "user": "ann", "nodes_class": "2-3"}
    r = run(base, base, Settings.of(config.DEFAULTS["compare"], by="user"))
    assert sorted((g["key"], g["fs"], g["n_baseline"]) for g in r.doc["groups"]) == \
        [({"user": "ann"}, "project", 6), ({"user": "ann"}, "scratch", 18)]
    assert Settings.of(config.DEFAULTS["compare"], by="").group_by == ()
    with pytest.raises(compare.CompareError, match="unknown key 'host'"):
        Settings.of(config.DEFAULTS["compare"], by="user,host")


def test_groups_sorted_regressions_first_then_strongest_effect():
    rng = np.random.default_rng(12)
    r = run([jobs(rng, 10, job_name=n, record_prefix=n) for n in ("a", "b", "c", "d")],
            [jobs(rng, 10, job_name="a", record_prefix="A"), jobs(rng, 10, job_name="b", small_read=0.3, record_prefix="B"),
             jobs(rng, 10, job_name="c", small_read=0.9, record_prefix="C"), jobs(rng, 3, job_name="d", record_prefix="D")])
    verdicts = [(g["key"]["job_name"], g["verdict"]) for g in r.doc["groups"]]
    assert verdicts[-1] == ("d", "not_enough_data") and verdicts[2] == ("a", "no_change")
    assert {verdicts[0], verdicts[1]} == {("b", "regression"), ("c", "regression")}


# ---- renderings --------------------------------------------------------------------------------

GROUP_KEYS = ["key", "fs", "level", "pooled", "n_baseline", "n_candidate", "verdict", "cause", "changes", "left_out",
              "tests", "detectable", "metrics"]
METRIC_KEYS = ["id", "baseline_median", "candidate_median", "effect", "ratio", "p_value", "q_value", "verdict",
               "n_baseline", "n_candidate"]


def _no_constants(name):
    raise AssertionError(f"{name} in JSON")


def test_json_keys_exactly_and_no_nan_or_infinity():
    rng = np.random.default_rng(13)
    r = run([jobs(rng, 10, small_read=1e-7), jobs(rng, 3, job_name="tiny", record_prefix="t")],
            [jobs(rng, 10, small_read=0.5, hybrid_read=True), jobs(rng, 3, job_name="tiny", record_prefix="u")])
    text = comparerender.render_json(r)
    doc = json.loads(text, parse_constant=_no_constants)
    assert list(doc) == ["schema", "baseline", "candidate", "groups", "fleet", "summary", "tests", "not_judged",
                         "data_quality"]
    assert doc["schema"] == "lustre-jobreport-compare/2"
    for side in ("baseline", "candidate"):
        assert list(doc[side])[:2] == ["selection", "jobs"]
        assert {"rows", "lustre", "since", "until", "left_out"} <= set(doc[side])
    assert doc["baseline"]["selection"] == "lustre=2.15.*" and doc["baseline"]["jobs"] == 13
    for g in doc["groups"]:
        assert list(g) == GROUP_KEYS
        assert list(g["left_out"]) == ["baseline", "candidate"]
        for m in g["metrics"]:
            want = METRIC_KEYS[:8] + (["expected"] if "expected" in m else []) + METRIC_KEYS[8:]
            assert list(m) == want
    m = metric(group(r, job_name="enzo"), "small_read_rpc_share")
    assert m["baseline_median"] == 0 and m["ratio"] == "inf" and "expected" in m
    assert list(doc["summary"]) == ["regression", "improvement", "no_change", "not_enough_data"]
    assert list(doc["fleet"]) == ["baseline", "candidate"]
    assert list(doc["fleet"]["baseline"]["read"]["shares"]) == list(comparemetrics.ALL_BUCKETS)
    assert sum(doc["fleet"]["candidate"]["write"]["shares"].values()) == pytest.approx(1.0)
    assert doc == json.loads(json.dumps(r.doc))          # the text is the document


HOSTILE = "<script>x</script>\x1b[2J$x^2$"      # 31 columns once escaped: shown whole


def _hostile_result():
    rng = np.random.default_rng(14)
    return run([jobs(rng, 10, job_name=HOSTILE, user="u\u202e\x1b]0;t\x07", kernel="k\x1b[31m", fs="fs\u200b1"),
                jobs(rng, 10, job_name="y" * 200, record_prefix="y")],
               [jobs(rng, 10, job_name=HOSTILE, user="u\u202e\x1b]0;t\x07", kernel="k2\x9b", fs="fs\u200b1",
                     small_read=0.8), jobs(rng, 10, job_name="y" * 200, record_prefix="z")])


def test_text_escapes_what_came_from_records_and_fits_100_columns():
    r = _hostile_result()
    text = comparerender.render_text(r)
    hidden = [c for c in text if c != "\n" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cs")]
    assert hidden == []
    assert "<script>x</script>\\x1b[2J$x^2$" in text and "user u\\u202e\\x1b]0;t\\x07" in text
    assert max(len(line) for line in text.splitlines()) <= comparerender.WIDTH
    assert "REGRESSION" in text and "kernel k\\x1b[31m → k2\\x9b" in text


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.text = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def test_html_renders_with_charts_and_escapes():
    r = _hostile_result()
    html = comparerender.render_html(r)
    page = _Page()
    page.feed(html)
    page.close()
    assert page.tags.count("svg") == 2          # effect sizes, and the RPC sizes of the regression
    assert "script" not in page.tags
    assert "&lt;script&gt;x&lt;/script&gt;\\x1b[2J$x^2$" in html and "\x1b" not in html and "\u202e" not in html
    assert "Regression: <script>x</script>\\x1b[2J$x^2$" in "".join(page.text)
    assert 'class="chart effect"' in html and html.count('class="chart rpc"') == 1


def test_render_formats():
    r = _hostile_result()
    assert comparerender.render(r, "json").startswith("{\n  \"schema\"")
    with pytest.raises(ValueError):
        comparerender.render(r, "xml")


def test_what_older_records_did_not_keep_is_said_as_not_recorded():
    """Schema 1-2 records have no kernel, settings, latency or read-ahead: those metrics have no
    data and the cause does not claim the clients were the same."""
    rng = np.random.default_rng(15)

    def old(**kw):
        d = jobs(rng, 10, **kw)
        for k in [k for k in d if k in jobrow.SETTINGS or k.startswith(("latency_", "ra_", "hybrid_"))]:
            d.pop(k)
        d.pop("kernel")
        return d
    r = run([old(record_prefix="b")], [old(small_read=0.9, record_prefix="c")])
    g = group(r, job_name="enzo")
    assert g["verdict"] == "regression" and g["cause"] == "none" and g["changes"] == []
    assert {m["id"] for m in g["metrics"] if m["verdict"] == "not_enough_data"} == {
        "full_read_rpc_share", "full_write_rpc_share", "read_latency_us", "write_latency_us",
        "ra_hit_share", "ra_discard_per_gib"}
    assert ("no client difference recorded (Lustre 2.15.4 on both sides; same OS; kernel and settings not "
            "recorded on both sides): the change is in the workload or the servers") in flat(comparerender.render_text(r))


def test_html_of_many_groups_adds_the_histogram_of_every_group():
    rng = np.random.default_rng(16)
    per_app = np.where(np.arange(45) == 7, 20, 10)       # a shift of one metric alone: 20 jobs a side
    names = np.repeat(np.array([f"app{i}" for i in range(45)], dtype=object), per_app)
    n = len(names)
    r = run([jobs(rng, n, job_name=names)],
            [jobs(rng, n, job_name=names, small_read=np.where(names == "app3", 0.9, 0.02),
                  read_latency_us=np.where(names == "app7", 60.0, 300.0), record_prefix="c")])
    assert r.doc["summary"]["regression"] >= 1 and r.doc["summary"]["improvement"] >= 1
    html = comparerender.render_html(r)
    assert 'class="chart effect-all"' in html and 'class="chart effect"' in html
    improved = group(r, job_name="app7")
    assert improved["verdict"] == "improvement"
    assert r.worst[r.doc["groups"].index(improved)] == ("read_latency_us", pytest.approx(-1.0))


def test_a_group_whose_jobs_all_moved_too_little_is_not_enough_data_not_no_change():
    """10 jobs a side, each a few MiB and no opens: every metric is under its gate, so nothing
    was tested — the group says it cannot tell, and lists its untested metrics."""
    rng = np.random.default_rng(11)
    tiny = dict(read_gib=0.001, write_gib=0.001, sigma=0.1)
    sides = [jobs(rng, 10, **tiny), jobs(rng, 10, **tiny)]
    for side in sides:
        side["open"] = np.zeros(10, dtype=np.int64)       # no opens: getattr per open is undefined
    r = run([sides[0]], [sides[1]])
    g = group(r, job_name="enzo")
    assert g["verdict"] == "not_enough_data" and (g["n_baseline"], g["n_candidate"]) == (10, 10)
    assert g["metrics"] and {m["verdict"] for m in g["metrics"]} == {"not_enough_data"}
    assert r.doc["summary"]["not_enough_data"] == 1


def test_a_setting_recorded_on_one_side_only_is_not_called_the_same():
    """A 2.15 client has no hybrid_io tunable, a 2.17 one has: settings are then not all
    comparable, and compare must not say "same settings"."""
    rng = np.random.default_rng(21)
    base = jobs(rng, 10, settings={"hybrid_io": None})
    cand = jobs(rng, 10, lustre="2.17.0", settings={"hybrid_io": 1}, small_read=0.9)
    r = run([base], [cand])
    g = group(r, job_name="enzo")
    assert g["verdict"] == "regression"
    assert not [c for c in g["changes"] if c["what"] == "hybrid_io"]       # not a change: unknown before
    cause = flat(comparerender.render(r, "text")).split("cause: ", 1)[1]
    assert cause.startswith("Lustre 2.15.4 → 2.17.0") and "same kernel, OS and settings" not in cause


def test_the_charted_worst_effect_is_one_that_decided_not_an_expected_hybrid_shift():
    rng = np.random.default_rng(10)
    shifted = dict(small_read=0.5, ra_hit=0.3, lustre="2.16.0", record_prefix="c")
    r = run([jobs(rng, 15)], [jobs(rng, 15, hybrid_read=True, read_latency_us=1500, **shifted)])
    g = group(r, job_name="enzo")
    assert g["verdict"] == "regression" and "expected" in metric(g, "small_read_rpc_share")
    worst_id, _ = r.worst[r.doc["groups"].index(g)]
    assert worst_id == "read_latency_us"


def test_a_not_enough_data_group_says_its_untrusted_jobs_too():
    rng = np.random.default_rng(6)
    r = run([jobs(rng, 3), jobs(rng, 9, trusted=False, record_prefix="x")], [jobs(rng, 9)])
    assert group(r, job_name="enzo")["verdict"] == "not_enough_data"
    text = flat(comparerender.render_text(r))
    assert "3 → 9 jobs; left out: 9 jobs with untrusted numbers (9 baseline, 0 candidate)" in text, text


# ---- fleet and group RPC figures: exact sums, and what compare says past int64 ------------------

def _bucket_sums(t, side_rows) -> dict[str, list[int]]:
    """Per direction, each bucket's RPCs summed over the rows given, in Python ints (a loop)."""
    d = t.to_pydict()
    return {direction: [sum(d[f"rpc_{direction}_{b}"][i] or 0 for i in side_rows)
                        for b in comparemetrics.ALL_BUCKETS] for direction in ("read", "write")}


def test_fleet_rpc_figures_past_2_63_are_exact_and_said():
    """Each row's RPC counts are valid (below 2^63), but a side's sum passes 2^63: the fleet
    figures and a regression's histograms are the exact sums (a float64 sum cast to int64 wrapped
    or went undefined at 2^63, and was inexact from 2^53), and compare says which figures reach
    2^63 (data_quality, the text)."""
    rng = np.random.default_rng(21)
    base, cand = jobs(rng, 12, record_prefix="b"), jobs(rng, 12, small_read=0.9, record_prefix="c")
    huge = (1 << 62) + 12_345                      # four rows of it pass 2^63
    base["rpc_read_1M"] = np.full(12, huge, dtype=np.int64)
    base["rpc_read_4K"] = np.full(12, (1 << 53) + 1, dtype=np.int64)      # exact past 2^53 too
    cand["rpc_read_4K"] = np.full(12, huge, dtype=np.int64)
    untrusted = jobs(rng, 2, record_prefix="x", trusted=False)            # never in the sums
    untrusted["rpc_read_1M"] = np.full(2, 7, dtype=np.int64)
    bt, ct = table(base, untrusted), table(cand)
    r = compare.compare(bt, ct, Settings(), baseline_selection="b", candidate_selection="c")
    doc = json.loads(comparerender.render_json(r))
    for name, t, rows in (("baseline", bt, range(12)), ("candidate", ct, range(12))):
        want = _bucket_sums(t, rows)
        for direction in ("read", "write"):
            got = doc["fleet"][name][direction]
            total = sum(want[direction])
            assert got["rpcs"] == total
            assert list(got["shares"].values()) == [n / total for n in want[direction]]
    [g] = [i for i, gr in enumerate(r.doc["groups"]) if gr["verdict"] == "regression"]
    assert r.group_rpc[g]["baseline"]["read"]["rpcs"] == sum(_bucket_sums(bt, range(12))["read"])
    assert r.group_rpc[g]["candidate"]["read"]["rpcs"] == sum(_bucket_sums(ct, range(12))["read"])
    assert doc["data_quality"] == [
        {"id": "VALUE_TOO_LARGE", "side": side, "direction": "read",
         "detail": f"the {side}'s read RPCs add up to 2^63 or more over its trusted jobs: exact here, but past "
                   f"what a 64-bit integer holds (a reader that takes JSON integers as int64 or double cannot "
                   f"hold fleet.{side}.read.rpcs)"} for side in ("baseline", "candidate")]
    text = flat(comparerender.render_text(r))
    assert ("data quality: VALUE_TOO_LARGE: the baseline's read RPCs add up to 2^63 or more over its trusted "
            "jobs") in text
    page = comparerender.render_html(r)
    assert "VALUE_TOO_LARGE" in page and f"{sum(_bucket_sums(bt, range(12))['read']):,}" in page


def test_fleet_figures_below_2_63_say_nothing():
    rng = np.random.default_rng(22)
    r = run([jobs(rng, 6)], [jobs(rng, 6)])
    assert r.doc["data_quality"] == [] and "data quality" not in comparerender.render_text(r)


# A count as the dataset may hold one (0 to 2^63 - 1, or null), drawn where sums change: small,
# around 2^53 (where float64 stops counting by ones) and near 2^63.
WHOLE = st.one_of(st.integers(0, 50), st.integers((1 << 53) - 3, (1 << 53) + 3),
                  st.integers((1 << 62) - 3, jobrow.INT64_MAX))
COUNT = st.one_of(st.none(), WHOLE)
RPC_COLUMNS = [f"rpc_{d}_{b}" for d in ("read", "write") for b in comparemetrics.ALL_BUCKETS]


@runs(1000)
@given(st.data())
def test_key_sums_are_exact_against_a_loop(data):
    n = data.draw(st.integers(0, 12))
    n_keys = data.draw(st.integers(1, 4))
    values = data.draw(st.lists(WHOLE, min_size=n, max_size=n))
    key = data.draw(st.lists(st.integers(0, n_keys - 1), min_size=n, max_size=n))
    chunk = data.draw(st.integers(1, 5))
    high, low = comparemetrics.key_sums(np.array(key, dtype=np.int64), np.array(values, dtype=np.float64), n_keys,
                                        lambda: np.array(values, dtype=np.int64), chunk=chunk)
    want = [0] * n_keys
    for k, v in zip(key, values):
        want[k] += v
    high = [0] * n_keys if high is None else high.tolist()
    assert [(int(h) << 32) + int(lo) for h, lo in zip(high, low.tolist())] == want


def _rpc_sums(cols: dict[str, list], key: list[int], groups: int):
    """rpc_pass over a table of these RPC-size columns (the others 0) and the fleet made of it."""
    import pyarrow as pa
    n = len(key)
    t = pa.table({**{c: pa.array(cols.get(c, [0] * n), pa.int64()) for c in RPC_COLUMNS},
                  "pagesize": pa.array([4096] * n, pa.int64()), "max_pages_per_rpc": pa.array([256] * n, pa.int64())})
    sums = comparemetrics.rpc_pass(comparemetrics.Columns(t), np.array(key, dtype=np.int64), 2 * groups)
    fleet = {name: document.shares(sums.ints(slice(i, None, 2))) for i, name in enumerate(compare.SIDES)}
    return sums, fleet


@runs(500)
@given(st.data())
def test_fleet_and_group_rpc_figures_by_property(data):
    """rpc_pass's sums per (group, side) and the fleet's, against sums in loops over the rows'
    Python ints; VALUE_TOO_LARGE exactly for a side and direction whose RPCs reach 2^63."""
    n, groups = data.draw(st.integers(1, 8)), data.draw(st.integers(1, 3))
    cells = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.sampled_from(RPC_COLUMNS), COUNT), max_size=24))
    key = data.draw(st.lists(st.integers(-1, 2 * groups - 1), min_size=n, max_size=n))   # -1: not counted
    cols = {c: [0] * n for c in RPC_COLUMNS}
    for row, c, v in cells:
        cols[c][row] = v
    sums, fleet = _rpc_sums(cols, key, groups)

    def loop(keys) -> list[list[int]]:
        return [[sum(cols[f"rpc_{d}_{b}"][i] or 0 for i in range(n) if key[i] in keys)
                 for b in comparemetrics.ALL_BUCKETS] for d in ("read", "write")]

    for k in range(2 * groups):
        assert sums.ints(k) == loop({k})
    said = set()
    for i, name in enumerate(compare.SIDES):
        want = loop(set(range(i, 2 * groups, 2)))
        for j, d in enumerate(("read", "write")):
            total = sum(want[j])
            assert fleet[name][d]["rpcs"] == total
            assert list(fleet[name][d]["shares"].values()) == [v / total if total else None for v in want[j]]
            if total >= 1 << 63:
                said.add((name, d))
    assert {(q["side"], q["direction"]) for q in compare.fleet_past_int64(fleet)} == said


@pytest.mark.parametrize("values,said", [([1 << 62, (1 << 62) - 1], False), ([1 << 62, 1 << 62], True)])
def test_value_too_large_from_2_63_exactly(values, said):
    _, fleet = _rpc_sums({"rpc_write_8K": values}, [1, 1], 1)          # the candidate's, both
    assert fleet["candidate"]["write"]["rpcs"] == sum(values)
    assert [(q["side"], q["direction"]) for q in compare.fleet_past_int64(fleet)] == [("candidate", "write")] * said


# ---- what the text and the page list ------------------------------------------------------------

def _listed(text: str, heading: str) -> list[str]:
    """The indented lines under the text's line starting with heading, up to the next line that
    is not indented."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    out = []
    for line in lines[start + 1:]:
        if not line.startswith("  "):
            break
        if line.startswith("    ") and out:          # a wrapped line goes on
            out[-1] += " " + line.strip()
        else:
            out.append(line.strip())
    return out


def test_no_change_groups_are_named_with_their_job_counts():
    """Each no_change group is named with its jobs a side: in the text the first TEXT_LISTED
    (strongest shift first, as in the JSON) and how many more; in the page the first
    HTML_LISTED. A group with only expected shifts is listed above, not again."""
    rng = np.random.default_rng(31)
    names = [f"app{k:02d}" for k in range(comparerender.TEXT_LISTED + 3)]
    base = [jobs(rng, 6 + k % 3, job_name=n, record_prefix=f"b{n}") for k, n in enumerate(names)]
    cand = [jobs(rng, 7, job_name=n, record_prefix=f"c{n}") for n in names]
    base.append(jobs(rng, 9, job_name="ckpt", record_prefix="bh"))
    cand.append(jobs(rng, 9, job_name="ckpt", hybrid_write=True, small_write=0.4, write_latency_us=900,
                     record_prefix="ch"))
    r = run(base, cand)
    unchanged = [g for g in r.doc["groups"] if g["verdict"] == "no_change" and g["key"]["job_name"] != "ckpt"]
    assert len(unchanged) == len(names) and r.doc["summary"]["no_change"] == len(names) + 1
    want = [f"{g['key']['job_name']}, user ann, 8-15 nodes, on scratch ({g['n_baseline']} → {g['n_candidate']} jobs)"
            f": {comparerender.detectable_text(g)}" for g in unchanged]
    assert all(g["detectable"] for g in unchanged)
    text = comparerender.render_text(r)
    assert f"No change: {len(names) + 1} groups (1 of them with only the expected shifts above):" in text
    listed = _listed(text, "No change:")
    assert listed == want[:comparerender.TEXT_LISTED]
    more = f"... and 3 more groups (the JSON report lists all, the HTML the first {comparerender.HTML_LISTED})"
    lines = text.splitlines()
    below = lines[lines.index(next(l for l in lines if l.startswith("No change:"))) + 1:]
    assert more in below and all(l.startswith("  ") for l in below[:below.index(more)])
    assert _items(comparerender.render_html(r), "no-change") == want


def _items(page: str, cls: str) -> list[str]:
    """The text of each item of the page's list of that class."""
    import html
    block = re.search(rf'<ul class="{cls}">(.*?)</ul>', page, re.S)
    return [html.unescape(i) for i in re.findall(r"<li>(.*?)</li>", block.group(1), re.S)] if block else []


def _table_rows(page: str) -> list[list[str]]:
    """Per metric table of the page, the labels of its rows."""
    import html
    return [[html.unescape(label) for label in re.findall(r'<td class="label">(.*?)</td>', t)]
            for t in re.findall(r'<table class="metrics">(.*?)</table>', page, re.S)]


def _label(mid: str) -> str:
    md = comparemetrics.BY_ID[mid]
    return md.label + (f" {md.of}" if md.of else "")


def test_metrics_no_job_has_are_left_out_of_the_text_and_the_table_and_said():
    """Read-only jobs: the write metrics have no value on either side. The page's table leaves
    them out and one line says writes were not exercised; a metric no job has a value of for
    another reason (latency, not recorded) is named in one line. The JSON keeps every metric."""
    rng = np.random.default_rng(32)
    reader = dict(write_gib=0.01, sigma=0.3)
    base, cand = jobs(rng, 10, **reader, record_prefix="b"), jobs(rng, 10, **reader, small_read=0.9,
                                                                  lustre="2.16.0", record_prefix="c")
    for side in (base, cand):
        side.pop("latency_read_us")
        side.pop("latency_write_us")
    r = run([base], [cand])
    g = group(r, job_name="enzo")
    assert g["verdict"] == "regression" and [m["id"] for m in g["metrics"]] == [m.id for m in comparemetrics.METRICS]
    empty = {m["id"] for m in g["metrics"] if m["n_baseline"] == m["n_candidate"] == 0}
    writes = {m.id for m in comparemetrics.METRICS if m.gate == "write"}
    assert empty == writes | {"read_latency_us"}
    text = comparerender.render_text(r)
    assert "  no writes of 64.0 MiB or more on either side: write metrics not compared" in text.splitlines()
    assert "  no value on either side (not recorded, or undefined for these jobs): read call latency" in text.splitlines()
    page = comparerender.render_html(r)
    [rows] = _table_rows(page)
    assert rows == [_label(m.id) for m in comparemetrics.METRICS if m.id not in empty]
    assert "no writes of 64.0 MiB or more on either side: write metrics not compared" in page
    # a metric with a value on one side only is shown
    cand["write_bytes"] = np.full(10, 1 << 30, dtype=np.int64)
    r = run([base], [cand])
    [rows] = _table_rows(comparerender.render_html(r))
    assert _label("ost_read_per_llite_read") in rows and _label("mean_write_call_bytes") in rows
    assert "write metrics not compared" not in comparerender.render_text(r)


COUNTS = st.sampled_from([0, 0, 1, 7])


@runs(1000)
@given(st.lists(st.tuples(COUNTS, COUNTS), min_size=len(comparemetrics.METRICS), max_size=len(comparemetrics.METRICS)),
       st.sampled_from([0, 1 << 20, 64 << 20]))
def test_which_metrics_are_shown_and_said_by_property(counts, min_bytes):
    """Against a loop: a metric is shown when a job of either side has a value; a direction
    whose every metric has none is said in one line; every other metric with none is named."""
    metrics = [{"id": m.id, "n_baseline": b, "n_candidate": c} for m, (b, c) in zip(comparemetrics.METRICS, counts)]
    shown, said = comparerender.shown_metrics(metrics, min_bytes)
    assert [m["id"] for m in shown] == [m["id"] for m in metrics if m["n_baseline"] or m["n_candidate"]]
    want, named = [], []
    for d, verb in (("read", "reads"), ("write", "writes")):
        if all(m["n_baseline"] == m["n_candidate"] == 0 for m, md in zip(metrics, comparemetrics.METRICS)
               if md.gate == d):
            size = f" of {comparerender.human_bytes(min_bytes)} or more" if min_bytes else ""
            want.append(f"no {verb}{size} on either side: {d} metrics not compared")
    for m, md in zip(metrics, comparemetrics.METRICS):
        unexercised = any(line.endswith(f" {md.gate} metrics not compared") for line in want)
        if m["n_baseline"] == m["n_candidate"] == 0 and not unexercised:
            named.append(md.label)
    if named:
        want.append("no value on either side (not recorded, or undefined for these jobs): " + ", ".join(named))
    assert said == want
