"""docs/compare.md stays true to compare.

The parts of the page that restate the code are generated from it, between
`<!-- BEGIN generated: NAME -->` and `<!-- END generated: NAME -->`, and this test fails when
they differ from what the code gives now. After changing compare, rewrite them with

    PYTHONPATH=tests .venv/bin/python tests/docs/test_compare_docs.py --write

and read the diff: the prose around them may need the same change. Generated: the metric table
(comparemetrics.METRICS), the [compare] settings with their defaults (config.DEFAULTS), the
smallest p-value per group size (compare_stats.rank_tests), an example text report and an excerpt of
the JSON document (compare.compare + comparerender on synthetic job rows).

Checked besides: every metric id, every key of the JSON document, every verdict, cause value,
selection key and group key appears in the page; every snake_case name the page quotes is a
name compare, the dataset or the config knows (a metric it names exists); every error message
the page quotes is one the code prints.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import re
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from lustre_jobreport.compare import hints, model as compare, metrics as comparemetrics, stats as compare_stats, view as comparerender
from lustre_jobreport import config
from lustre_jobreport.records import jobrow, recordset

from kit.compare_rows import jobs, table

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "compare.md"
SOURCES = REPO / "reporter" / "lustre_jobreport"
WRITE = "PYTHONPATH=tests .venv/bin/python tests/docs/test_compare_docs.py --write"

# ---- the generated parts ----------------------------------------------------------------------

UNITS = {"share": "share (0–1)", "bytes": "bytes", "per_gib": "per GiB", "pages_per_gib": "pages per GiB",
         "per_open": "per open", "us": "µs", "times": "times"}
GATES = {"read": "read ≥ `min_bytes`", "write": "written ≥ `min_bytes`",
         "moved": "read + written ≥ `min_bytes`", "opens": "≥ 1 open"}


def metric_table() -> str:
    rows = ["| id | what it says about the job | computed from the dataset's columns | unit | worse when "
            "| counts when the job | context | hybrid I/O |",
            "|---|---|---|---|---|---|---|---|"]
    for m in comparemetrics.METRICS:
        hybrid = "expected" if m.hybrid else "—"
        rows.append(f"| `{m.id}` | {m.means} | `{m.formula}` | {UNITS[m.unit]} | {m.worse} | {GATES[m.gate]} "
                    f"| {'yes' if m.context else '—'} | {hybrid} |")
    return "\n".join(rows)


SETTING_MEANS = {
    "group_by": "the keys that make a group (with `fs`, always); `--by` overrides it for one run",
    "coarsen": "keys dropped, one more at each level, to pool the groups with fewer than `min_jobs` trusted jobs "
               "a side (§3.1); `--coarsen` overrides it for one run (`''`: no pooling)",
    "q": "false discovery rate of the two stages (§5.2): a group's q-value, then a metric's inside it, must be "
         "at most this",
    "min_jobs": "trusted jobs each side of a group needs to be compared (fewer: `not_enough_data`), and "
                "values each side of a metric needs to be tested",
    "min_ratio": "the medians must differ by at least this factor (candidate/baseline ≥ it, or ≤ 1/it)",
    "min_cliffs_delta": "Cliff's delta must be at least this far from 0 (0.33: a medium effect)",
    "min_bytes": "a job's read (write) metrics count when it read (wrote) at least this many bytes; "
                 "per-GiB metrics of both directions when it moved this much",
}
SETTING_RULES = {"group_by": "list of the group keys, each once", "coarsen": "list of the group keys, each once",
                 "q": "0 < q ≤ 1", "min_jobs": "whole, ≥ 2",
                 "min_ratio": "≥ 1", "min_cliffs_delta": "0 to 1", "min_bytes": "≥ 0"}


def settings_table() -> str:
    rows = ["| `[compare]` key | default | allowed | what it does |", "|---|---|---|---|"]
    for key, default in config.DEFAULTS["compare"].items():
        shown = (json.dumps(default) + (f" (= {default >> 20} MiB)" if key == "min_bytes" else "")).replace("|", "\\|")
        rows.append(f"| `{key}` | `{shown}` | {SETTING_RULES[key]} | {SETTING_MEANS[key]} |")
    return "\n".join(rows)


SMALL_SIZES = (5, 6, 7, 8, 9, 10, 12, 15, 20)
# the shapes of shift the table is for: (metrics that moved, metrics the group tested); the
# combined statistic moves with them when more than one does
SHAPES = ((1, 19), (5, 12))


def smallest_p(n: int) -> float:
    """The smallest two-sided p compare can give two groups of n jobs (all candidate values
    above all baseline ones, no ties)."""
    v = np.r_[np.arange(n), np.arange(n) + 100.0]
    side = np.r_[np.zeros(n), np.ones(n)].astype(np.int8)
    return float(compare_stats.rank_tests(v, np.zeros(2 * n, dtype=np.int64), side, 1, 2).p[0])


def alone_among(p_one: float, moved: int, tested: int, q: float) -> int:
    """The most groups (two tests each) among which a group of this shape is found alone: its
    Simes p (the moved metrics, and the combined statistic with them, at p_one) passes BH as
    the only discovery of 2G tests, and the metrics pass BH inside it at q / 2G."""
    combined = 1 if moved > 1 else 0
    simes = p_one * (tested + 1) / (moved + combined)
    within = p_one * tested / moved
    return max(0, math.floor(q / (2 * max(simes, within))))


def small_groups_table() -> str:
    q = config.DEFAULTS["compare"]["q"]
    rows = ["| jobs a side | smallest p (two-sided) | method | one metric of 19 moved: found alone among at most "
            "| a read regression, 5 of 12 metrics moved: found alone among at most |",
            "|---|---|---|---|---|"]
    for n in SMALL_SIZES:
        p = smallest_p(n)
        exact = n <= compare_stats.EXACT_MAX_SMALL
        cells = [alone_among(p / 2, moved, tested, q) for moved, tested in SHAPES]
        rows.append(f"| {n} | {p:.2g} | {'exact' if exact else 'normal approximation'} | "
                    + " | ".join(f"{c:,} group{'s' if c != 1 else ''}" if c else "none" for c in cells) + " |")
    return "\n".join(rows)


OCTOBER, NOVEMBER = (datetime(2026, m, 1, tzinfo=timezone.utc) for m in (10, 11))


def example() -> compare.Comparison:
    """A small comparison showing each kind of group: a Lustre regression, a regression that
    came with a settings change, hybrid I/O's expected shifts, an improvement, too few jobs, no
    change."""
    return compare.compare(*example_rows(), baseline_selection="until=2026-11-01",
                           candidate_selection="since=2026-11-01",
                           baseline_info={"records_read": 0, "json_rows": 0, "json_in_dataset": 0,
                                          "dataset_files": 2, "dataset_rows": 59, "records_dirs_skipped": 0,
                                          "dataset_files_left_out": 0, "skipped": 0},
                           candidate_info={"records_read": 59, "json_rows": 59, "json_in_dataset": 0,
                                           "dataset_files": 0, "dataset_rows": 0, "records_dirs_skipped": 0,
                                           "dataset_files_left_out": 0, "skipped": 0})


@functools.lru_cache(maxsize=1)
def example_rows():
    """The example's job rows: the baseline's and the candidate's tables."""
    rng = np.random.default_rng(20261102)
    new = dict(lustre="2.16.0")
    b, c = [], []

    def both(name, n, before, after, **common):
        b.append(jobs(rng, n, job_name=name, record_prefix=f"b-{name}", start=OCTOBER, **common, **before))
        c.append(jobs(rng, n, job_name=name, record_prefix=f"c-{name}", start=NOVEMBER, **common, **new, **after))

    both("enzo", 12, {}, {"small_read": 0.8}, user="ann", nodes=8)
    both("wrf", 10, {}, {"read_latency_us": 900.0, "settings": {"max_read_ahead_mb": 64}}, user="bob", nodes=64)
    both("ckpt", 9, {}, {"hybrid_write": True, "write_latency_us": 600.0, "small_write": 0.3}, user="cho", nodes=16)
    both("mitgcm", 11, {"small_write": 0.3}, {"small_write": 0.01}, user="dev", nodes=32)
    both("lammps", 14, {}, {}, user="eve", nodes=4)
    both("namd", 3, {}, {}, user="fay", nodes=2)
    return table(*b), table(*c)


def example_text() -> str:
    return "```\n" + comparerender.render_text(example()) + "```"


def look_next_table() -> str:
    """Per look-next of the catalog: the metrics that carry it, the settings to check (and what
    else), the known regressions of that shape with their versions and what they did."""
    rows = ["| when these regress | look at | known client regressions of that shape (named when they can explain "
            "the shift, above) |", "|---|---|---|"]
    by_look: dict = {}
    for m in comparemetrics.METRICS:
        if m.look is not None:
            by_look.setdefault(m.look, []).append(m.id)
    for look, ids in by_look.items():
        what = ", ".join(f"`{s}`" for s in look.settings) + ("; " if look.settings and look.also else "") + look.also
        known = "; ".join(f"{hints.known_label(k)}: {k.what}" for k in look.known) or "—"
        rows.append(f"| {', '.join(f'`{i}`' for i in ids)} | {what} | {known} |")
    return "\n".join(rows)


def _rounded(v):
    if isinstance(v, float):
        return float(f"{v:.4g}")
    if isinstance(v, dict):
        return {k: _rounded(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_rounded(x) for x in v]
    return v


def _pretty(v, indent: str = "") -> str:
    """JSON, indented, with an object or array of scalars on one line when it fits 100 columns."""
    flat = json.dumps(v, ensure_ascii=False)
    inner = indent + "  "
    scalars = isinstance(v, (dict, list)) and not any(isinstance(x, (dict, list)) for x in
                                                      (v.values() if isinstance(v, dict) else v))
    if not isinstance(v, (dict, list)) or (scalars and len(indent) + len(flat) <= 100):
        return flat
    if isinstance(v, dict):
        items = [f"{inner}{json.dumps(k)}: {_pretty(x, inner)}" for k, x in v.items()]
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    return "[\n" + ",\n".join(inner + _pretty(x, inner) for x in v) + f"\n{indent}]"


def example_json() -> str:
    """The example's document cut to its first group with the group's first two metrics and
    to the baseline's fleet shares, numbers rounded to 4 digits (compare writes every digit,
    one group per line)."""
    doc = json.loads(comparerender.render_json(example()))
    g = dict(doc["groups"][0], metrics=doc["groups"][0]["metrics"][:2])
    doc = _rounded(dict(doc, groups=[g], fleet={"baseline": doc["fleet"]["baseline"]}))
    return "```json\n" + _pretty(doc) + "\n```"


GENERATED = {"metrics": metric_table, "settings": settings_table, "small-groups": small_groups_table,
             "example-text": example_text, "example-json": example_json, "look-next": look_next_table}


def _section(text: str, name: str) -> re.Match:
    m = re.search(rf"<!-- BEGIN generated: {re.escape(name)} [^\n]*-->\n(.*?)\n<!-- END generated: "
                  rf"{re.escape(name)} -->", text, re.S)
    assert m, f"docs/compare.md has no generated section {name!r}"
    return m


def write() -> None:
    text = DOC.read_text()
    for name, make in GENERATED.items():
        m = _section(text, name)
        text = text[:m.start(1)] + make() + text[m.end(1):]
    DOC.write_text(text)


# ---- the tests --------------------------------------------------------------------------------

def test_generated_parts_are_what_the_code_gives_now():
    text = DOC.read_text()
    stale = [name for name, make in GENERATED.items() if _section(text, name).group(1) != make()]
    assert stale == [], f"docs/compare.md: {', '.join(stale)} out of date; run {WRITE} and read the diff"


def _quoted(text: str) -> set[str]:
    return set(re.findall(r"`([^`\n]+)`", text))


def test_every_metric_id_is_in_the_table_in_order():
    text = DOC.read_text()
    ids = re.findall(r"^\| `([a-z0-9_]+)` \|", _section(text, "metrics").group(1), re.M)
    assert ids == [m.id for m in comparemetrics.METRICS]


def json_keys(obj, into: set[str]) -> set[str]:
    """Every key of the document's objects."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            into.add(k)
            json_keys(v, into)
    elif isinstance(obj, list):
        for v in obj:
            json_keys(v, into)
    return into


def test_every_key_of_the_json_document_is_described():
    doc = example().doc
    keys = json_keys(doc, set())
    assert {"expected", "source", "changes", "what", "fleet", "shares"} <= keys      # the example has them all
    quoted = _quoted(DOC.read_text())
    missing = sorted(k for k in keys if k not in quoted)
    assert missing == []


def test_every_verdict_cause_selection_key_and_group_key_is_described():
    quoted = _quoted(DOC.read_text())
    causes = ["+".join(c) for n in range(1, 4) for c in itertools.combinations(compare.CAUSE_ORDER, n)] + ["none"]
    for what, values in (("verdict", compare.VERDICTS), ("cause", causes), ("selection key", recordset.KEYS),
                         ("group key", config.GROUP_KEYS), ("schema", (compare.SCHEMA,)),
                         ("bucket", comparemetrics.ALL_BUCKETS)):
        missing = [v for v in values if v not in quoted]
        assert missing == [], f"{what}s not in docs/compare.md: {missing}"
    assert compare.HYBRID_EXPECTED in DOC.read_text()


def _known_names() -> set[str]:
    names = {m.id for m in comparemetrics.METRICS} | set(jobrow.COLUMNS) | set(recordset.KEYS)
    names |= {f"{section}.{k}" for section, v in config.DEFAULTS.items() if isinstance(v, dict) for k in v}
    names |= {k for v in config.DEFAULTS.values() if isinstance(v, dict) for k in v}
    names |= json_keys(example().doc, set()) | set(compare.VERDICTS) | set(config.GROUP_KEYS)
    names |= set(comparemetrics.DERIVED) | {"hybrid_io_read_threshold_bytes", "hybrid_io_write_threshold_bytes"}
    names |= {f"rpc_{d}_{b}" for d in ("read", "write") for b in comparemetrics.ALL_BUCKETS}
    names |= {"data_quality", "lustre_versions"}                 # keys of the job records (docs/records.md)
    return names


def test_every_name_the_page_quotes_exists():
    """A snake_case name in backquotes is a metric, a column, a setting, a JSON key or a
    selection or group key: a metric the page names exists, and a renamed one fails here."""
    known = _known_names()
    quoted = {q for q in _quoted(DOC.read_text()) if re.fullmatch(r"(\[compare\] )?[a-z][a-z0-9]*(_[a-z0-9]+)+", q)}
    unknown = sorted(q for q in quoted if q.removeprefix("[compare] ") not in known)
    assert unknown == []


def test_every_error_message_the_page_quotes_is_printed_by_the_code():
    """The messages table quotes a fixed part of each message (first column); each is in the
    reporter's sources."""
    text = DOC.read_text()
    section = text[text.index("## 10."):]
    table_rows = re.findall(r"^\| `([^`]+)`", section, re.M)
    assert len(table_rows) >= 8
    paths = sorted(SOURCES.rglob("*.py"))
    assert {"cli.py", "command.py", "recordset.py"} <= {p.name for p in paths}   # where they are printed
    sources = "\n".join(p.read_text() for p in paths)
    missing = [m for m in table_rows if m not in sources]
    assert missing == []


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write()
        print(f"rewrote the generated parts of {DOC}")
    else:
        sys.exit(f"usage: {sys.argv[0]} --write")
