"""`lustre-jobreport compare`: which applications issue worse RPCs or read slower after a change.

Two selections of job rows (jobrow.COLUMNS: one row per job and filesystem), a baseline and a
candidate (e.g. Lustre 2.15.* against 2.16.*), are split into groups of "the same job": the
configured keys ([compare] group_by, default job_name, user, nodes_class) and the filesystem;
what is too small there is pooled at coarser keys ([compare] coarsen; levels). Per group and
metric (comparemetrics.METRICS) the two sides' per-job values are compared with a Mann-Whitney
U test (van Elteren's stratified test in a pooled group), Cliff's delta and the ratio of
medians; which shifts are discoveries is decided in two stages, groups then their metrics
(twostage), and a verdict needs a discovery that is also large and consistent in the metric's
worse (or better) direction. Each group also says what differs in the clients between the
sides (Lustre version, kernel/OS, settings): a tunable changed by an OS image must not pass for
a Lustre regression; and a group that found nothing says what it could have found (detectable).

Verdicts. A metric of a group: not_enough_data when either side has fewer than min_jobs
jobs with a value (in a pooled group: in strata with values on both sides); regression when its
two-stage q <= q, |Cliff's delta| >= min_cliffs_delta and both the delta and the ratio of
medians (>= min_ratio, or <= 1/min_ratio) point the metric's worse way; improvement the same
the better way; else no_change. A group: not_enough_data when either side has fewer than
min_jobs trusted jobs (pooled: comparable ones), or no deciding metric could be tested; else
regression when a deciding metric regressed, else improvement when one improved, else
no_change. Context metrics (the application's own call size) and expected shifts (hybrid I/O)
keep their statistics and verdicts but decide nothing.

Everything is computed over all rows at once with numpy: groups by a hash of their key codes,
one sort by value per metric for the ranks in every stratum and the pools' medians, p-values for
all groups at once (the exact ones of groups of one shape from one distribution).

This module reads the two sides into one table and runs the steps, each a module of its own:
grouping (the groups and their levels), grouptests (every metric's tests in every group),
attribution (what differs in the clients), verdicts (q-values, verdicts, what the charts show)
and document (the groups' entries, their order, what the quiet groups could have found).

The document (compare(); JSON rendering in comparerender) follows docs/compare.md §9:
  {"schema": "lustre-jobreport-compare/2", "baseline": {...}, "candidate": {...},
   "groups": [{"key", "fs", "level", "pooled", "n_baseline", "n_candidate", "verdict", "cause",
               "changes", "left_out", "tests", "detectable", "metrics": [{"id",
               "baseline_median", "candidate_median", "effect", "ratio", "p_value", "q_value",
               "verdict", "expected"?, "n_baseline", "n_candidate"}]}],
   "fleet": {...}, "summary": {"regression", "improvement", "no_change", "not_enough_data"},
   "tests": {"group_tests", "passed"}, "not_judged": {"groups", "jobs_a_side", "shift"},
   "data_quality": [{"id", "side", "direction", "detail"}]}
Numbers that are not finite never reach JSON: an undefined value (no test, no median) is null,
and a ratio of medians whose baseline median is 0 (and candidate's not) is the string "inf",
as is a detectable ratio when no shift would have been found. A group without enough trusted
jobs on a side carries no metrics ("metrics": []). Counts summed over rows (the RPC-size
histograms) are exact integers however large (comparemetrics.KeySums); a fleet figure of 2^63
or more, past what many JSON readers hold, is said in data_quality.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import metrics as comparemetrics
from ..records import jobrow
from .attribution import CAUSE_ORDER, attribution, version_key
from .document import (HYBRID_EXPECTED, SIDES, MetricFigures, Power, fleet_past_int64, group_docs, identities,
                       order_of, rpc_histograms)
from .grouping import class_label, flag, groups_of, nodes_class
from .grouptests import executor, hybrid_excused, test_every_metric
from .metrics import METRICS, Columns
from .settings import CompareError, NoRecordsError, Settings
from .verdicts import IMPROVEMENT, REGRESSION, VERDICTS, charted, group_verdicts, metric_verdicts, two_stages

# the names of compare's vocabulary its renderers, hints and command take from here
__all__ = ["SCHEMA", "VERDICTS", "SIDES", "CAUSE_ORDER", "HYBRID_EXPECTED", "METRICS", "Settings", "CompareError",
           "NoRecordsError", "Comparison", "SettingsSeen", "compare", "needed_columns", "class_label",
           "nodes_class", "fleet_past_int64"]


SCHEMA = "lustre-jobreport-compare/2"


@dataclass
class Comparison:
    """compare()'s result: the document, and what only the text and HTML need (per regressed
    group: its RPC-size histograms per side; per group: the metric charts show, the worst one
    or for an improvement the most improved, and its delta signed positive = worse)."""
    doc: dict
    group_rpc: dict[int, dict] = field(default_factory=dict)   # index into doc["groups"]
    worst: list[tuple[str, float] | None] = field(default_factory=list)
    lustre: list[list[list[str]]] = field(default_factory=list)  # per group: versions per side
    settings: Settings | None = None
    unknown: list[list[str]] = field(default_factory=list)   # per group: "kernel", "os", "settings"
                                                              # not recorded on both sides
    settings_seen: Sequence[dict[str, list[list[int]]]] = field(default_factory=list)   # per group: each
                                      # setting its trusted jobs recorded -> [baseline, candidate] values


class SettingsSeen(Sequence):
    """Per group (in an order): each setting its trusted jobs recorded -> [baseline values,
    candidate values], sorted; made when asked (the hints ask for the regressed groups only)."""

    def __init__(self, values: dict[str, dict[int, list]], order: list[int]):
        self._values = values        # per setting: (group * 2 + side) -> its values
        self._order = order

    def __len__(self) -> int:
        return len(self._order)

    def __getitem__(self, i: int) -> dict[str, list[list[int]]]:
        g = self._order[i]
        return {name: [list(vs.get(2 * g, ())), list(vs.get(2 * g + 1, ()))]
                for name, vs in self._values.items() if 2 * g in vs or 2 * g + 1 in vs}


_KEY_SOURCES = {"nodes_class": ("num_nodes", "n_hosts")}


_BASE_COLUMNS = ("record_id", "fs", "trusted", "begin", "end", "lustre", "kernel", "os", *jobrow.SETTINGS,
                 "hybrid_read_switch", "hybrid_write_switch")


def needed_columns(group_by) -> tuple[str, ...]:
    keys = [c for k in group_by for c in _KEY_SOURCES.get(k, (k,))]
    return tuple(dict.fromkeys((*keys, *_BASE_COLUMNS, *comparemetrics.COLUMNS)))


def _as_table(rows):
    import pyarrow as pa
    if isinstance(rows, pa.Table):
        return rows
    if isinstance(rows, list):
        return pa.Table.from_pylist(rows, schema=jobrow.arrow_schema())
    return pa.table(rows)


def _joined(tables, names):
    """Both sides' tables as one (only the columns needed), and each row's side."""
    import pyarrow as pa
    schema = jobrow.arrow_schema()
    parts = []
    for t in tables:
        cols = []
        for name in names:
            if name in t.column_names:
                col = t[name]
                want = schema.field(name).type
                cols.append(col if col.type == want else col.cast(want))
            else:
                cols.append(pa.nulls(t.num_rows, schema.field(name).type))
        parts.append(pa.table(cols, names=list(names)))
    table = pa.concat_tables(parts)
    side = np.concatenate([np.full(t.num_rows, i, dtype=np.int8) for i, t in enumerate(tables)])
    return table, side


def _side_info(table, selection: str, info: dict | None) -> dict:
    import pyarrow.compute as pc
    out: dict[str, Any] = {"selection": selection}
    ids = pc.unique(table["record_id"])
    out["jobs"] = len(ids) - ids.null_count
    out["rows"] = table.num_rows
    out["left_out"] = int(np.sum(~flag(table["trusted"])))
    versions = set()
    for v in pc.unique(table["lustre"]).to_pylist():
        if v:
            versions.update(v.split(";"))
    out["lustre"] = sorted(versions, key=version_key)
    begin = pc.min(table["begin"]).as_py() if table.num_rows else None
    end = pc.max(table["end"]).as_py() if table.num_rows else None
    out["since"] = begin.isoformat().replace("+00:00", "Z") if begin else None
    out["until"] = end.isoformat().replace("+00:00", "Z") if end else None
    if info:
        out["source"] = info
    return out


def compare(baseline, candidate, settings: Settings = Settings(), *, baseline_selection: str = "",
            candidate_selection: str = "", baseline_info: dict | None = None,
            candidate_info: dict | None = None, threads: int | None = None) -> Comparison:
    """Compare two sets of job rows (pyarrow Tables with jobrow columns, or lists of row dicts)."""
    base_t, cand_t = _as_table(baseline), _as_table(candidate)
    table, side = _joined((base_t, cand_t), needed_columns(settings.group_by))
    cols = Columns(table)
    groups = groups_of(table, cols, side, settings)
    for name in comparemetrics.PLAIN_COLUMNS:      # converted once here, not in each metric's thread
        cols(name)
    # one pass over the RPC-size buckets: per-row sums for the metrics, per (group, side) sums
    # of the trusted rows for the fleet line and the charts
    rpc_sums = comparemetrics.rpc_pass(cols, np.where(groups.trusted, groups.keys, -1), 2 * groups.count)
    excused = hybrid_excused(cols, groups)
    with executor(threads, table.num_rows) as pool:
        # attribution (Python, mostly) and the sides' facts need no test: they run beside the
        # tests (numpy, mostly)
        attributed = pool.submit(attribution, table, groups.gid, side, groups.trusted, groups.count)
        sides = [pool.submit(_side_info, t, selection, info) for t, selection, info in
                 ((base_t, baseline_selection, baseline_info), (cand_t, candidate_selection, candidate_info))]
        stats, combined = test_every_metric(cols, groups, settings, excused, pool)
        changes, lustre, unknown, seen = attributed.result()
        side_infos = [f.result() for f in sides]
    two_stages(stats, combined, settings)
    verdict = metric_verdicts(stats, settings)
    expected = excused & (verdict <= IMPROVEMENT)
    cols.drop()                                    # the per-row arrays are not needed any more
    group_verdict = group_verdicts(verdict, expected, stats.tested, groups.enough)
    shown = charted(stats, verdict, expected, group_verdict)
    idents = identities(groups, settings)
    order = order_of(group_verdict, shown.strongest, idents)
    fleet, group_rpc = rpc_histograms(rpc_sums, [g for g in order if group_verdict[g] == REGRESSION])
    power = Power.of(stats, groups, group_verdict, settings)
    doc = {"schema": SCHEMA,
           "baseline": side_infos[0],
           "candidate": side_infos[1],
           "groups": group_docs(order, idents, groups, group_verdict, changes,
                                MetricFigures.of(stats, verdict, expected), stats.stages, power),
           "fleet": fleet,
           "summary": dict(zip(VERDICTS, np.bincount(group_verdict, minlength=len(VERDICTS)).tolist())),
           "tests": {"group_tests": stats.stages.tests, "passed": stats.stages.passed},
           "not_judged": power.not_judged(group_verdict),
           "data_quality": fleet_past_int64(fleet)}
    return Comparison(doc, group_rpc, [shown.shown(g) for g in order], [lustre[g] for g in order], settings,
                      [unknown[g] for g in order], SettingsSeen(seen, order))
