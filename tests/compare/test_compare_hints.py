"""A regression says where to look next: the settings its regressed metrics point to, with the
group's own values from its jobs' records, and the known client regressions of that shape that
can explain a shift between the two sides' versions (compare.hints, the catalog in
compare.metrics).

Rows are made by kit.compare_rows.jobs and compared by compare.compare; the hints are read from
the text and the page as an admin reads them.
"""

from __future__ import annotations

import html
import re

import numpy as np
import pytest
from hypothesis import given, strategies as st

from lustre_jobreport.compare import hints, metrics as comparemetrics, model as compare, view as comparerender
from lustre_jobreport.records import jobrow
from kit.compare_rows import jobs, table
from kit.proptest import runs

READ_AHEAD_LOOK = ("look next: the group's settings, the same on both sides: max_read_ahead_mb 1024, "
                   "max_read_ahead_per_file_mb 256, max_read_ahead_whole_mb 64, max_pages_per_rpc 256")


def compared(base: list[dict], cand: list[dict], **kw):
    bt, ct = table(*base), table(*cand)
    return compare.compare(bt, ct, baseline_selection="b", candidate_selection="c", **kw), (bt, ct)


def flat(text: str) -> str:
    return " ".join(text.split())


def group_text(text: str, name: str) -> str:
    """One group's block of the text (its heading line up to the next heading or blank line),
    its line wrapping undone."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"[A-Z]+  " + re.escape(name), line))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith(" ")), len(lines))
    return flat("\n".join(lines[start:end]))


def test_a_read_rpc_regression_says_the_read_ahead_settings_with_the_groups_values_and_the_tickets():
    rng = np.random.default_rng(41)
    r, rows = compared([jobs(rng, 12, record_prefix="b")],
                       [jobs(rng, 12, small_read=0.9, lustre="2.16.0", record_prefix="c")])
    assert r.doc["groups"][0]["verdict"] == "regression"
    text = comparerender.render_text(r)
    block = group_text(text, "enzo")
    assert READ_AHEAD_LOOK in block
    assert block.index("cause: Lustre 2.15.4 → 2.16.0") < block.index("look next:")
    # LU-12533 and LU-13412 are fixed in 2.12.5/2.13 and 2.14, which a 2.16.0 client follows;
    # LU-18504 is fixed in 2.17
    assert block.endswith("known client regressions of this shape: LU-18504 (fixed in 2.17)")
    assert max(len(line) for line in text.splitlines()) <= comparerender.WIDTH
    # the page says the same, each regression's line telling what it did
    page = comparerender.render_html(r)
    assert READ_AHEAD_LOOK in flat(html.unescape(re.sub(r"<[^>]+>", "", page)))
    [what] = re.findall(r'<span title="([^"]*)">LU-18504 \(fixed in 2.17\)</span>', page)
    assert html.unescape(what) == comparemetrics.LU_18504.what


def test_each_group_shows_its_own_trusted_jobs_settings():
    """Two regressed applications on other settings, and untrusted jobs on a setting no trusted
    job has: each group names its own trusted jobs' values."""
    rng = np.random.default_rng(42)
    a = dict(job_name="a", settings={"max_read_ahead_mb": 512, "max_pages_per_rpc": 1024})
    b = dict(job_name="b", settings={"max_read_ahead_whole_mb": 2})
    odd = dict(job_name="a", settings={"max_read_ahead_mb": 7, "max_pages_per_rpc": 1024}, trusted=False)
    r, rows = compared([jobs(rng, 10, **a, record_prefix="ba"), jobs(rng, 10, **b, record_prefix="bb"),
                        jobs(rng, 3, **odd, record_prefix="bo")],
                       [jobs(rng, 10, **a, small_read=0.9, lustre="2.16.0", record_prefix="ca"),
                        jobs(rng, 10, **b, small_read=0.9, lustre="2.16.0", record_prefix="cb"),
                        jobs(rng, 3, **odd, lustre="2.16.0", record_prefix="co")])
    text = comparerender.render_text(r)
    same = "look next: the group's settings, the same on both sides: "
    assert (same + "max_read_ahead_mb 512, max_read_ahead_per_file_mb 256, max_read_ahead_whole_mb 64, "
            "max_pages_per_rpc 1024") in group_text(text, "a,")
    assert (same + "max_read_ahead_mb 1024, max_read_ahead_per_file_mb 256, max_read_ahead_whole_mb 2, "
            "max_pages_per_rpc 256") in group_text(text, "b,")
    assert "max_read_ahead_mb 7" not in text


@pytest.mark.parametrize("base,cand,said", [
    ([256, 1024], [256, 1024], "the group's settings, the same on both sides: max_pages_per_rpc 256 or 1024"),
    ([], [1024], "the group's settings: max_pages_per_rpc 1024 (candidate only)"),
    ([256], [], "the group's settings: max_pages_per_rpc 256 (baseline only)"),
    ([256], [1024], "the group's settings: max_pages_per_rpc 256 → 1024"),
    ([], [], "settings max_pages_per_rpc (not in these jobs' records)"),
])
def test_a_setting_is_said_as_the_sides_had_it(base, cand, said):
    """Several values on a side, values on one side only, and values that differ although
    `changes` did not say so: each said for what it is."""
    g = {"metrics": [{"id": "small_write_rpc_share", "verdict": "regression"}], "changes": []}
    seen = {s: [[1], [1]] for s in jobrow.SETTINGS} | {"max_pages_per_rpc": [base, cand]}
    hint = hints.look_next(dict(g, changes=[{"what": w} for w in ("max_dirty_mb", "max_rpcs_in_flight", "checksums")]),
                           seen, [["2.15.4"], ["2.15.4"]])
    assert hint.lines() == [f"look next: {said}"]


def test_a_setting_that_differs_is_the_cause_not_a_hint():
    rng = np.random.default_rng(43)
    r, rows = compared([jobs(rng, 10, record_prefix="b")],
                       [jobs(rng, 10, read_latency_us=900.0, settings={"max_read_ahead_mb": 64}, lustre="2.16.0",
                             record_prefix="c")])
    block = group_text(comparerender.render_text(r), "enzo")
    assert "settings change: max_read_ahead_mb 1024 → 64" in block
    assert ("look next: the group's settings, the same on both sides: max_read_ahead_whole_mb 64, "
            "max_read_ahead_per_file_mb 256") in block
    assert block.count("max_read_ahead_mb") == 1
    # 2.15.4 -> 2.16.0: LU-15274 is fixed in 2.16.0, LU-19344 came in 2.15.3 (the baseline had it
    # too), the kernel and OS did not change: none can explain the slower reads
    assert "known client regressions" not in block


@pytest.mark.parametrize("before,after,named", [
    ("2.15.2", "2.15.4", ["LU-15274 (from LU-12043; fixed in 2.16.0)",
                          "LU-19344 (from LU-16025; in 2.15.3, fixed in 2.18-dev)"]),
    ("2.15.4", "2.16.0", []),
    ("2.16.0", "2.17.0", []),
    ("2.14.0", "2.15.1", ["LU-15274 (from LU-12043; fixed in 2.16.0)"]),
])
def test_the_tickets_named_are_those_the_candidate_may_have_and_the_baseline_did_not(before, after, named):
    rng = np.random.default_rng(44)
    r, rows = compared([jobs(rng, 10, lustre=before, record_prefix="b")],
                       [jobs(rng, 10, lustre=after, read_latency_us=900.0, record_prefix="c")])
    block = group_text(comparerender.render_text(r), "enzo")
    if named:
        assert block.endswith("known client regressions of this shape: " + ", ".join(named))
    else:
        assert "known client regressions" not in block


def test_an_os_image_change_names_the_read_ahead_kb_case_and_a_same_version_no_lustre_ticket():
    rng = np.random.default_rng(45)
    r, rows = compared([jobs(rng, 10, os="rhel9.4", record_prefix="b")],
                       [jobs(rng, 10, os="rhel9.5", read_latency_us=9000.0, record_prefix="c")])
    block = group_text(comparerender.render_text(r), "enzo")
    assert "cause: OS rhel9.4 → rhel9.5" in block
    assert ("known client regressions of this shape: Azure/azhpc-images#293 (an OS image's change)") in block
    assert "LU-" not in block                     # the same Lustre on both sides: no Lustre bug tells them apart


def test_metadata_and_write_regressions_say_what_to_look_at():
    rng = np.random.default_rng(46)
    r, rows = compared([jobs(rng, 10, record_prefix="b")],
                       [jobs(rng, 10, getattr_per_open=20.0, small_write=0.6, record_prefix="c")])
    block = group_text(comparerender.render_text(r), "enzo")
    assert ("look next: the group's settings, the same on both sides: max_dirty_mb 2000, max_rpcs_in_flight 8, "
            "max_pages_per_rpc 256, checksums 1; no metadata setting is recorded: the MDS (its load, its version), "
            "and whether the application now opens or stats more files") in block
    assert "known client regressions" not in block


def test_what_the_records_did_not_keep_is_said():
    rng = np.random.default_rng(47)

    def old(**kw):
        d = jobs(rng, 10, **kw)
        for k in jobrow.SETTINGS:
            d.pop(k, None)
        return d
    r, rows = compared([old(record_prefix="b")], [old(small_read=0.9, lustre="2.16.0", record_prefix="c")])
    block = group_text(comparerender.render_text(r), "enzo")
    assert ("look next: settings max_read_ahead_mb, max_read_ahead_per_file_mb, max_read_ahead_whole_mb, "
            "max_pages_per_rpc (not in these jobs' records)") in block


def test_improvements_and_expected_shifts_get_no_hint():
    rng = np.random.default_rng(48)
    r, rows = compared([jobs(rng, 10, job_name="up", small_write=0.4, record_prefix="b"),
                        jobs(rng, 10, job_name="hy", record_prefix="h")],
                       [jobs(rng, 10, job_name="up", small_write=0.01, record_prefix="c"),
                        jobs(rng, 10, job_name="hy", hybrid_read=True, small_read=0.5, record_prefix="i")])
    assert {g["verdict"] for g in r.doc["groups"]} == {"improvement", "no_change"}
    assert "look next" not in comparerender.render_text(r)
    assert "look next" not in comparerender.render_html(r)


# ---- the rules, by property --------------------------------------------------------------------

VERSIONS = st.tuples(st.just(2), st.integers(10, 19), st.integers(0, 60))


def _dotted(v) -> str:
    return ".".join(map(str, v))


@runs(2000)
@given(VERSIONS, st.one_of(st.none(), VERSIONS), st.lists(VERSIONS, max_size=3, unique=True))
def test_which_client_has_a_known_regression_by_property(v, introduced, fixed):
    """Against a loop: a fix released on the main line (the newest release named) reaches every
    later version; one released on a maintenance branch reaches that branch's later versions
    only; unfixed, a version has it from `introduced` on, or cannot be told."""
    known = comparemetrics.KnownRegression("LU-1", "x", _dotted(introduced) if introduced else None,
                                           tuple(_dotted(f) for f in fixed))
    fixed_here = False
    for f in fixed:
        newest = all(f >= other for other in fixed)
        if (newest and v >= f) or (v[:2] == f[:2] and v >= f):
            fixed_here = True
    want = False if fixed_here else None if introduced is None else v >= introduced
    assert hints.has_it(known, _dotted(v)) is want


def _reference_settings(t, group_by) -> dict[tuple, dict[str, list[int]]]:
    d = t.to_pydict()
    out: dict[tuple, dict[str, set]] = {}
    for i in range(t.num_rows):
        key = []
        for k in group_by:
            if k == "nodes_class":
                n = d["num_nodes"][i] if d["num_nodes"][i] and d["num_nodes"][i] > 0 else d["n_hosts"][i]
                key.append(None if not n or n < 1 else compare.class_label(int(n).bit_length() - 1))
            else:
                key.append(d[k][i])
        if not d["trusted"][i]:
            continue
        seen = out.setdefault((*key, d["fs"][i]), {s: set() for s in hints.HINTED})
        for s in hints.HINTED:
            if d[s][i] is not None:
                seen[s].add(d[s][i])
    return {k: {s: sorted(v) for s, v in seen.items()} for k, seen in out.items()}


@runs(300)
@given(st.data())
def test_the_settings_of_each_group_by_property(data):
    """The settings compare gathers per group against a loop over the rows: per group (its key
    and fs; no pooling), each setting a hint may name, its distinct values over the group's
    trusted rows of each side (nulls: not recorded)."""
    pick = lambda values, n: data.draw(st.lists(st.sampled_from(values), min_size=n, max_size=n))  # noqa: E731
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))

    def side(prefix):
        n = data.draw(st.integers(1, 12))
        return table(jobs(rng, n, job_name=np.array(pick(["a", "b", None], n), dtype=object),
                          nodes=np.array(pick([1, 2, 3, 8], n), dtype=np.int64),
                          fs=np.array(pick(["s", "p"], n), dtype=object), trusted=np.array(pick([True, True, False], n)),
                          settings={"max_read_ahead_mb": np.array(pick([64, 1024], n), dtype=np.int64),
                                    "max_pages_per_rpc": np.array(pick([256, 1024], n), dtype=np.int64)},
                          record_prefix=prefix))
    bt, ct = side("b"), side("c")
    group_by = data.draw(st.sampled_from([("job_name", "user", "nodes_class"), ("nodes_class",), ()]))
    r = compare.compare(bt, ct, compare.Settings(group_by=group_by, coarsen=()), threads=1)
    want = [_reference_settings(t, group_by) for t in (bt, ct)]
    empty = {s: [] for s in hints.HINTED}
    seen = hints.settings_seen(r, list(range(len(r.doc["groups"]))))
    for i, g in enumerate(r.doc["groups"]):
        key = (*(g["key"][k] for k in group_by), g["fs"])
        assert seen[i] == {s: [w.get(key, empty)[s] for w in want] for s in hints.HINTED}
