"""Renderings of a comparison (compare.Comparison): JSON as is, text for a terminal, HTML page.

The text is at most WIDTH columns wide: a header (both selections, job counts, Lustre
versions, the thresholds), the fleet's pooled RPC-size shares per side, the regressions (each
with the numbers that make it one, its cause and what differs in the clients, the expected
shifts, where to look next: compare.hints), the improvements, groups whose only shifts are
expected, and the rest counted and named up to a bound. A metric no job of a group has a value
of is left out of the group's table and said in a line (the JSON keeps it).
Every string that came from records (job names, users, versions...) is shown through
displayable (control and bidi characters as visible escapes) and long ones shortened;
the HTML is the same view through templates/compare.html.j2 (autoescaped) plus charts.
"""

from __future__ import annotations

import json
import math

from . import hints, metrics as comparemetrics
from .model import HYBRID_EXPECTED, Comparison
from .. import config
from ..present.text import (NAME_COLS, columns, compact, displayable, environment, fill_lines, human_bytes, render_as,
                            shorten)

WIDTH = 100
TEXT_REGRESSIONS, TEXT_IMPROVEMENTS, TEXT_EXPECTED = 50, 20, 20
HTML_CHARTS, HTML_EFFECT_GROUPS = 10, 40
# the no_change and the not_enough_data groups named, each list (a year of jobs has thousands)
TEXT_LISTED, HTML_LISTED = 10, 200


# -- numbers ------------------------------------------------------------------------------------

def value(unit: str, v: float | None) -> str:
    """A metric's value in its unit."""
    if v is None:
        return "n/a"
    if unit == "share":
        pct = 100.0 * v
        return "0%" if v == 0 else "<0.1%" if pct < 0.05 else f"{pct:.1f}%" if pct < 1 else f"{pct:.0f}%"
    if unit == "bytes":
        return human_bytes(int(round(v)))
    if unit == "us":
        return f"{v / 1000:.3g} ms" if v >= 1000 else f"{v:.3g} µs"
    if unit in ("per_gib", "pages_per_gib"):
        return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"
    if unit in ("per_open", "times"):
        return f"{v:.2f}"
    return f"{v:.3g}"


def pvalue(q: float | None) -> str:
    if q is None:
        return "n/a"
    if q == 0:
        return "0"
    if q < 0.001:
        mant, exp = f"{q:.0e}".split("e")
        return f"{mant}e{int(exp)}"
    return f"{q:.3f}".rstrip("0").rstrip(".")


def ratio_text(r) -> str:
    if r is None:
        return "n/a"
    if r == "inf":
        return "from 0"
    return f"{r:.2f}x" if r < 10 else f"{r:.0f}x"


def share_cell(v: float | None) -> str:
    if v is None:
        return "-"
    if v == 0:
        return "0"
    if v < 0.005:
        return "<1%"
    return f"{100 * v:.0f}%"


# -- words --------------------------------------------------------------------------------------

def group_name(g: dict, cols: int = NAME_COLS) -> str:
    """'enzo, user ann, 8-15 nodes, on scratch' (each part shortened)."""
    parts = []
    for k, v in g["key"].items():
        if k == "job_name":
            parts.append(shorten(str(v), cols) if v is not None else "(no job name)")
        elif k == "nodes_class":
            parts.append(f"{v} node{'s' if v != '1' else ''}" if v is not None else "? nodes")
        else:
            parts.append(f"{k} {shorten(str(v), cols) if v is not None else '?'}")
    for k, vs in (g.get("pooled") or {}).items():
        parts.append(_pooled(k, vs, cols))
    fs = shorten(str(g["fs"]), cols) if g["fs"] is not None else "?"
    return ", ".join(parts + [f"on {fs}"])


POOLED_NAMED = 3      # a pooled key's values named up to this many, else counted


def _pooled(key: str, values: list, cols: int) -> str:
    """A key a group was pooled over: '1 and 2-3 nodes pooled', 'users ann, bob pooled', '12 users pooled'
    (one value: as a key of the group, nothing else was pooled)."""
    if len(values) == 1:
        return group_name({"key": {key: values[0]}, "fs": None}, cols).rsplit(", on ", 1)[0]
    if key == "nodes_class":
        named = [v if v is not None else "?" for v in values]
        return (f"{_and(named)} nodes pooled" if len(values) <= POOLED_NAMED
                else f"{len(values)} node classes pooled ({named[0]} to {named[-1]})")
    noun = {"job_name": "job names", "user": "users"}.get(key, f"{key}s")
    if len(values) > POOLED_NAMED:
        return f"{len(values)} {noun} pooled"
    return f"{noun} " + ", ".join(shorten(str(v), cols) if v is not None else "?" for v in values) + " pooled"


def detectable_text(g: dict) -> str:
    """What a quiet group could have found (its "detectable"), or ""."""
    d = g.get("detectable")
    if not d:
        return ""
    if d["ratio"] == "inf":
        return "too few jobs to find a shift of one metric alone, however large"
    label = comparemetrics.BY_ID[d["metric"]].label
    return f"could have found a shift of {ratio_up(d['ratio'])}× or more in {label}"


def ratio_up(r: float) -> str:
    """A detectable ratio rounded up (1.873 -> '1.88', 1.25 -> '1.25', 23.2 -> '24'): rounding
    down would claim a smaller shift than the group could find."""
    if r >= 10:
        return f"{math.ceil(r - 1e-6):,}"
    return f"{math.ceil(r * 100 - 1e-6) / 100:.2f}".rstrip("0").rstrip(".")


def _values(vs: list) -> str:
    return ", ".join(shorten(str(v), 24) for v in vs) or "?"


def _and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def cause_text(g: dict, lustre: list[list[str]] | None, unknown: list[str] = ()) -> str:
    """What differs in the clients between the sides, in words; a tunable is never said as a
    Lustre change, and what the records did not keep is said as not recorded, not as same."""
    changes = {c["what"]: c for c in g["changes"]}
    said = []
    if "lustre" in changes:
        c = changes["lustre"]
        said.append(f"Lustre {_values(c['baseline'])} → {_values(c['candidate'])}")
    for what, word in (("kernel", "kernel"), ("os", "OS")):
        if what in changes:
            said.append(f"{word} {_values(changes[what]['baseline'])} → {_values(changes[what]['candidate'])}")
    settings = [f"{c['what']} {_values(c['baseline'])} → {_values(c['candidate'])}"
                for w, c in changes.items() if w not in ("lustre", "kernel", "os")]
    if settings:
        said.append("settings change: " + "; ".join(settings))
    notes = []
    if "lustre" not in changes:
        base, cand = lustre or ([], [])
        if base and cand:
            notes.append(f"Lustre {_values(sorted(set(base) | set(cand)))} on both sides")
        else:
            notes.append("Lustre version not recorded" + (" on the baseline side" if cand else
                                                         " on the candidate side" if base else ""))
    words = {"kernel": "kernel", "os": "OS", "settings": "settings"}
    same = [words[w] for w, changed in (("kernel", "kernel" in changes), ("os", "os" in changes),
                                         ("settings", bool(settings))) if not changed and w not in unknown]
    if same:
        notes.append("same " + _and(same))
    if unknown:
        notes.append(_and([words[w] for w in unknown]) + " not recorded on both sides")
    if not said:
        return f"no client difference recorded ({'; '.join(notes)}): the change is in the workload or the servers"
    return "; ".join(said) + (f" ({'; '.join(notes)})" if notes else "")


def metric_line(m: dict) -> str:
    """'read RPCs ≤16 KiB: 2% → 91% of read RPCs (median over 12 → 11 jobs), Cliff's δ +1.00, q = 3e-5'"""
    md = comparemetrics.BY_ID[m["id"]]
    of = f" {md.of}" if md.of else ""
    text = (f"{md.label}: {value(md.unit, m['baseline_median'])} → {value(md.unit, m['candidate_median'])}{of} "
            f"(median over {m['n_baseline']} → {m['n_candidate']} jobs)")
    if m["effect"] is not None:
        text += f", Cliff's δ {m['effect']:+.2f}, q = {pvalue(m['q_value'])}"
    return text


def shown_metrics(metrics: list[dict], min_bytes: float) -> tuple[list[dict], list[str]]:
    """A group's metrics worth a row (a job of either side has a value), and a line for what is
    left out: per direction none of whose metrics has a value on either side (no job read, or
    wrote, min_bytes: its jobs did not do it), then the other metrics without a value, named
    (a column older records do not keep, a denominator of 0). The JSON keeps them all."""
    def empty(m: dict) -> bool:
        return m["n_baseline"] == 0 and m["n_candidate"] == 0
    gate = {m["id"]: comparemetrics.BY_ID[m["id"]].gate for m in metrics}
    size = f" of {human_bytes(int(min_bytes))} or more" if min_bytes > 0 else ""
    idle = [d for d in ("read", "write") if all(empty(m) for m in metrics if gate[m["id"]] == d)]
    said = [f"no {d}s{size} on either side: {d} metrics not compared" for d in idle]
    named = [comparemetrics.BY_ID[m["id"]].label for m in metrics if empty(m) and gate[m["id"]] not in idle]
    if named:
        said.append("no value on either side (not recorded, or undefined for these jobs): " + ", ".join(named))
    return [m for m in metrics if not empty(m)], said


def _wrap(text: str, indent: int) -> list[str]:
    """Words filled into lines of WIDTH columns under `indent` spaces (continuations +2)."""
    return fill_lines(text.split(" "), " " * indent, " " * (indent + 2), WIDTH)


# -- the view -----------------------------------------------------------------------------------

def _fleet_rows(fleet: dict) -> tuple[list[str], list[dict]]:
    """Buckets worth a column (up to the largest non-empty one, at least 1M) and a row per
    direction and side."""
    shown = list(comparemetrics.shown_buckets(side[d]["shares"] for side in fleet.values()
                                              for d in ("read", "write")))
    rows = []
    for d in ("read", "write"):
        for name, side in fleet.items():
            h = side[d]
            rows.append({"direction": d, "side": name, "rpcs": h["rpcs"],
                         "cells": [share_cell(h["shares"][b]) for b in shown]})
    return shown, rows


def _side_line(name: str, s: dict) -> str:
    span = ""
    if s.get("since") and s.get("until"):
        span = f", {s['since'][:10]} .. {s['until'][:10]}"
    left = f", {s['left_out']:,} left out for untrusted numbers" if s.get("left_out") else ""
    versions = ", ".join(shorten(str(v), 20) for v in s.get("lustre") or []) or "unknown"
    sel = shorten(str(s.get("selection") or "(all)"), 40)
    return f"{name:<9} {sel}: {s['jobs']:,} jobs in {s['rows']:,} rows{left}, Lustre {versions}{span}"


def _shifts(g: dict) -> tuple[list, list, list]:
    """A group's metrics that shifted (regression or improvement): deciding ones (regressions
    first, strongest first), context ones, expected ones."""
    changed, context, expected = [], [], []
    for m in g["metrics"]:
        if m["verdict"] not in ("regression", "improvement"):
            continue
        if "expected" in m:
            expected.append(m)
        elif comparemetrics.BY_ID[m["id"]].context:
            context.append(m)
        else:
            changed.append(m)
    changed.sort(key=lambda m: (m["verdict"] != "regression", -abs(m["effect"] or 0)))
    return changed, context, expected


def _group_view(g: dict, shown: dict, index: int, rpc: dict | None, min_bytes: float,
                hint: hints.Hint | None) -> dict:
    """One group as the text and HTML show it; `shown`: its strings from records, displayable;
    `hint`: where to look next (a regression's)."""
    changed, context, expected = _shifts(g)
    metrics, not_compared = shown_metrics(g["metrics"], min_bytes)
    g = dict(g, key=shown["key"], fs=shown["fs"], changes=shown["changes"], pooled=shown["pooled"])
    left = g["left_out"]
    n_left = left["baseline"] + left["candidate"]
    left_text = (f"left out: {n_left} job{'s' if n_left != 1 else ''} with untrusted numbers "
                 f"({left['baseline']} baseline, {left['candidate']} candidate)") if n_left else ""
    return {"index": index, "name": group_name(g), "verdict": g["verdict"],
            "counts": f"{g['n_baseline']} → {g['n_candidate']} jobs", "cause": g["cause"],
            "cause_text": cause_text(g, shown["lustre"], shown["unknown"]), "changed": [metric_line(m) for m in changed],
            "context": [metric_line(m) for m in context], "expected": [metric_line(m) for m in expected],
            "not_compared": not_compared, "hint": hint, "left_out": left_text, "metrics": metrics, "rpc": rpc,
            "detectable": detectable_text(g),
            "group": g, "charts": [], "rows": []}


def view(result: Comparison, listed: int | None = None, others: int = 0,
         hinted: int | None = None) -> dict:
    """What the text and HTML show: every regression, improvement and group whose only shifts
    are expected; the first `listed` no_change groups (the others than those) and the first
    `listed` not_enough_data groups (all: None), in the document's order; the `others` no_change
    groups of strongest worst effect (the HTML's effect chart); where to look next for the
    first `hinted` regressions (all: None), with the groups' settings as compare gathered them.
    Only the strings of what is shown go through displayable (a year of jobs has ~10,000 groups
    of 19 metrics each)."""
    doc, st = result.doc, result.settings
    groups = doc["groups"]
    by_verdict: dict[str, list[int]] = {v: [] for v in ("regression", "improvement", "expected", "small", "other",
                                                        "unchanged")}
    for i, g in enumerate(groups):
        v = g["verdict"]
        if v in ("regression", "improvement"):
            by_verdict[v].append(i)
        elif v == "not_enough_data":
            by_verdict["small"].append(i)
        elif any("expected" in m for m in g["metrics"]):
            by_verdict["expected"].append(i)
        else:
            by_verdict["other"].append(i)
    n_small, n_unchanged = len(by_verdict["small"]), len(by_verdict["other"])
    by_verdict["small"] = by_verdict["small"][:listed]
    by_verdict["unchanged"] = by_verdict["other"][:listed]
    if others:
        worst = [result.worst[i][1] if i < len(result.worst) and result.worst[i] else -2.0 for i in range(len(groups))]
        by_verdict["other"] = sorted(by_verdict["other"], key=lambda i: -abs(worst[i]))[:others]
    else:
        by_verdict["other"] = []
    wanted = sorted(i for ids in by_verdict.values() for i in ids)
    lustre = result.lustre or [None] * len(groups)
    unknown = result.unknown or [[] for _ in groups]
    shown = displayable({
        "sides": {n: doc[n] for n in ("baseline", "candidate")},
        "groups": {str(i): {"key": groups[i]["key"], "fs": groups[i]["fs"], "changes": groups[i]["changes"],
                            "pooled": groups[i].get("pooled") or {}, "lustre": lustre[i]} for i in wanted}})
    for i in wanted:
        shown["groups"][str(i)]["unknown"] = unknown[i]
    min_bytes = st.min_bytes if st is not None else config.DEFAULTS["compare"]["min_bytes"]
    regressions = by_verdict["regression"][:hinted]
    seen = hints.settings_seen(result, regressions)
    hint = {i: hints.look_next(groups[i], seen.get(i), lustre[i], unknown[i])
            for i in regressions}
    views = {i: _group_view(groups[i], shown["groups"][str(i)], i, result.group_rpc.get(i), min_bytes, hint.get(i))
             for i in wanted}
    summary = doc["summary"]
    title = (f"Lustre client comparison: {summary['regression']} regression{'s' if summary['regression'] != 1 else ''}, "
             f"{summary['improvement']} improvement{'s' if summary['improvement'] != 1 else ''}, "
             f"{summary['no_change']} no change, {summary['not_enough_data']} not enough data")
    rules = ""
    if st is not None:
        keys = ", ".join(st.group_by) or "nothing"
        coarser = [k for k in st.coarsen if k in st.group_by]
        pooled = (f" (fewer than {st.min_jobs} jobs a side: pooled without {' then '.join(coarser)})"
                  if coarser else "")
        tests = doc.get("tests") or {}
        rules = (f"groups: same {keys} and filesystem{pooled}; a verdict needs q ≤ {st.q:g} in two stages "
                 f"(the group among the run's {tests.get('group_tests', 0):,} group tests, then the metric "
                 f"inside it), |Cliff's δ| ≥ {st.min_cliffs_delta:g} and medians {st.min_ratio:g}x apart, "
                 f"≥ {st.min_jobs} jobs a side; read/write metrics of jobs that moved ≥ "
                 f"{human_bytes(int(st.min_bytes))} that way")
    buckets, fleet_rows = _fleet_rows(doc["fleet"])
    sides = shown["sides"]
    return {"title": title, "rules": rules,
            "sides": [_side_line(n, sides[n]) for n in ("baseline", "candidate")],
            "fleet_buckets": buckets, "fleet_rows": fleet_rows,
            "data_quality": [f"{q['id']}: {q['detail']}" for q in doc.get("data_quality") or []],
            "regressions": [views[i] for i in by_verdict["regression"]],
            "improvements": [views[i] for i in by_verdict["improvement"]],
            "expected_only": [views[i] for i in by_verdict["expected"]],
            "no_change": summary["no_change"],
            "unchanged": [views[i] for i in by_verdict["unchanged"]], "n_unchanged": n_unchanged,
            "small": [views[i] for i in by_verdict["small"]], "n_small": n_small,
            "others": [views[i] for i in by_verdict["other"]],
            "min_jobs": st.min_jobs if st else None, "expected_why": HYBRID_EXPECTED,
            "needed": _needed_text(doc.get("not_judged"))}


def _needed_text(not_judged: dict | None) -> str:
    """The fleet line of the groups not judged: the jobs a side a 2x shift would need."""
    if not not_judged or not not_judged.get("groups"):
        return ""
    n, shift = not_judged.get("jobs_a_side"), not_judged.get("shift", 2.0)
    if n is None:
        return ""
    return (f"With the job-to-job spread of this run's jobs, a group needs about {n} trusted jobs a side "
            f"to find a {shift:g}× shift of a metric alone (fewer when several metrics move together).")


# -- text ---------------------------------------------------------------------------------------

def _group_text(v: dict, label: str) -> list[str]:
    out = _wrap(f"{label}  {v['name']} ({v['counts']})", 0)
    for line in v["changed"]:
        out += _wrap(line, 2)
    for line in v["context"]:
        out += _wrap("context (the application's own choice): " + line, 2)
    if v["expected"]:
        out += _wrap(f"expected, {HYBRID_EXPECTED}:", 2)
        for line in v["expected"]:
            out += _wrap(line, 4)
    for line in v["not_compared"]:
        out += _wrap(line, 2)
    out += _wrap(f"cause: {v['cause_text']}", 2)
    for line in v["hint"].lines() if v["hint"] else []:
        out += _wrap(line, 2)
    if v["left_out"]:
        out += _wrap(v["left_out"], 2)
    return out


def _more(n_all: int, n_shown: int, what: str, html: int | None = None) -> list[str]:
    """'... and N more <what>' when the text showed fewer than all, saying where the rest are
    (the page lists the first `html`, or all)."""
    where = ("the JSON and HTML reports list all" if html is None
             else f"the JSON report lists all, the HTML the first {html}")
    return [f"... and {n_all - n_shown} more {what} ({where})"] if n_all > n_shown else []


def _listed_line(g: dict) -> str:
    """A group named in a list: its name, jobs a side, its untrusted jobs and what it could
    have found."""
    return (f"{g['name']} ({g['counts']}" + (f"; {g['left_out']}" if g["left_out"] else "") + ")"
            + (f": {g['detectable']}" if g["detectable"] else ""))


def render_text(result: Comparison) -> str:
    """The text report."""
    v = view(result, listed=TEXT_LISTED, hinted=TEXT_REGRESSIONS)
    rule = "-" * WIDTH
    out = [rule, *_wrap(v["title"], 0), rule]
    for line in v["sides"]:
        out += _wrap(line, 0)
    if v["rules"]:
        out += _wrap(v["rules"], 0)
    out.append("")
    label_w = 16
    cells = "".join(b.rjust(5) for b in v["fleet_buckets"])
    out.append("Fleet RPC sizes".ljust(label_w) + cells)
    for r in v["fleet_rows"]:
        line = f"{r['direction']:<6}{r['side']:<10}" + "".join(c.rjust(5) for c in r["cells"])
        extra = f"  {compact(r['rpcs'], 4)} RPCs"
        out.append(line + extra if columns(line + extra) <= WIDTH else line)
    for line in v["data_quality"]:
        out += _wrap(f"data quality: {line}", 0)
    for title, items, cap in (("Regressions", v["regressions"], TEXT_REGRESSIONS),
                              ("Improvements", v["improvements"], TEXT_IMPROVEMENTS),
                              ("Only expected shifts", v["expected_only"], TEXT_EXPECTED)):
        if not items:
            continue
        out += ["", f"{title} ({len(items)}):"]
        label = {"Regressions": "REGRESSION", "Improvements": "IMPROVEMENT"}.get(title, "EXPECTED")
        for g in items[:cap]:
            out += _group_text(g, label)
        out += _more(len(items), cap, title.lower())
    out.append("")
    n_expected = len(v["expected_only"])
    out += _wrap(f"No change: {v['no_change']} group{'s' if v['no_change'] != 1 else ''}"
                 + (f" ({n_expected} of them with only the expected shifts above)" if n_expected else "")
                 + (":" if v["unchanged"] else "."), 0)
    for g in v["unchanged"]:
        out += _wrap(_listed_line(g), 2)
    out += _more(v["n_unchanged"], len(v["unchanged"]), "groups", HTML_LISTED)
    if v["n_small"]:
        out += _wrap(f"Not enough data (fewer than {v['min_jobs']} trusted jobs on a side, or jobs too small "
                     f"for any metric to be judged): "
                     f"{v['n_small']} group{'s' if v['n_small'] != 1 else ''}", 0)
        for g in v["small"]:
            out += _wrap(_listed_line(g), 2)
        out += _more(v["n_small"], len(v["small"]), "groups", HTML_LISTED)
        if v["needed"]:
            out += _wrap(v["needed"], 2)
    out.append(rule)
    return "\n".join(out) + "\n"


# -- JSON, HTML ---------------------------------------------------------------------------------

def render_json(result: Comparison) -> str:
    """The document as it is (no NaN or infinity: compare wrote null and "inf"), one group per
    line: json's C encoder only runs without indent, and a year of jobs has ~10,000 groups
    (indenting them all took seconds). ensure_ascii: no control or non-ASCII character in the
    text itself. check_circular off: the document is a tree compare built (no container twice
    in it), and the encoder's bookkeeping of every dict and list it enters costs ~8 %."""
    one = json.JSONEncoder(ensure_ascii=True, allow_nan=False, check_circular=False).encode   # for every group
    parts = []
    for key, v in result.doc.items():
        if key == "groups" and v:
            parts.append(f'  {one(key)}: [\n' + ",\n".join("    " + one(g) for g in v) + "\n  ]")
        else:
            parts.append(f"  {one(key)}: {one(v)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def _metric_rows(metrics: list[dict]) -> list[dict]:
    rows = []
    for m in metrics:
        md = comparemetrics.BY_ID[m["id"]]
        rows.append({"label": md.label + (f" {md.of}" if md.of else ""), "means": md.means,
                     "base": value(md.unit, m["baseline_median"]), "cand": value(md.unit, m["candidate_median"]),
                     "n": f"{m['n_baseline']} → {m['n_candidate']}",
                     "effect": f"{m['effect']:+.2f}" if m["effect"] is not None else "n/a",
                     "ratio": ratio_text(m["ratio"]), "q": pvalue(m["q_value"]),
                     "verdict": m["verdict"].replace("_", " "),
                     "expected": "expected" in m, "context": md.context})
    return rows


def html_view(result: Comparison) -> dict:
    from . import charts   # matplotlib: only the HTML needs it

    v = view(result, listed=HTML_LISTED, others=HTML_EFFECT_GROUPS)
    for i, g in enumerate(v["regressions"]):
        g["rows"] = _metric_rows(g["metrics"])
        if i < HTML_CHARTS and g["rpc"]:
            hist = {d: {side: g["rpc"][side][d]["shares"] for side in ("baseline", "candidate")}
                    for d in ("read", "write")}
            g["charts"] = [charts.compare_rpc_shares(hist)]
    for g in v["improvements"] + v["expected_only"]:
        g["rows"] = _metric_rows(g["metrics"])
    v["charted"] = min(len(v["regressions"]), HTML_CHARTS)
    # effect sizes: named bars for up to 40 groups (the strongest regressions, improvements,
    # then others), and when there are more, every tested group in a histogram by verdict
    n = HTML_EFFECT_GROUPS
    picked = v["regressions"][:n // 2] + v["improvements"][:n // 4]
    picked += (v["others"] + v["regressions"][n // 2:] + v["improvements"][n // 4:])[:n - len(picked)]
    order = {"regression": 0, "improvement": 1}
    picked.sort(key=lambda g: (order.get(g["verdict"], 2), g["index"]))
    bars = [(g["name"], result.worst[g["index"]], g["verdict"]) for g in picked if result.worst[g["index"]]]
    v["effect_chart"] = charts.effect_sizes([(n, w[1], verdict, w[0]) for n, w, verdict in bars]) if bars else ""
    v["effect_shown"] = len(bars)
    everyone = [(w[1], g["verdict"]) for g, w in zip(result.doc["groups"], result.worst)
                if w and g["verdict"] != "not_enough_data"]
    v["effect_all"] = charts.effect_histogram(everyone) if len(everyone) > len(bars) else ""
    v["effect_groups"] = len(everyone)
    return v


def render_html(result: Comparison) -> str:
    """The page; `rows` as for render_text."""
    return environment(autoescape=True).get_template("compare.html.j2").render(**html_view(result))


def render(result: Comparison, fmt: str) -> str:
    """The result as --format says; `rows`: the baseline's and the candidate's rows compare was
    given, for the text's and the page's regressions (their settings), or None."""
    return render_as(fmt, result, text=render_text, json=render_json, html=render_html)
