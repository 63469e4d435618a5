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

import functools
import os
from collections.abc import Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import levels as grouplevels
from . import metrics as comparemetrics
from .. import config
from ..records import jobrow
from .metrics import METRICS, Columns
from . import detectable, twostage
from .stats import Tested, group_medians, median_ratio, rank_tests, value_order, van_elteren
from ..errors import JobReportError

SCHEMA = "lustre-jobreport-compare/2"
VERDICTS = ("regression", "improvement", "no_change", "not_enough_data")
SIDES = ("baseline", "candidate")
# Attribution: what a client is, per job (the row's columns), and how a difference is named.
CLIENT_FACTS = ("lustre", "kernel", "os")
CAUSE_OF = {"lustre": "lustre", "kernel": "kernel/os", "os": "kernel/os",
            **{s: "settings" for s in jobrow.SETTINGS}}
CAUSE_ORDER = ("lustre", "kernel/os", "settings")
HYBRID_EXPECTED = "hybrid I/O: 2.16+ sends buffered calls ≥ threshold as direct I/O (LU-13802)"
# Most of a side's jobs: hybrid I/O switched calls in more than this share of them.
HYBRID_MOST = 0.5


class CompareError(JobReportError):
    """Bad compare input: no matching records, a bad --by, unreadable records."""


class NoRecordsError(CompareError):
    """A side's selection matched no job records."""


@dataclass(frozen=True)
class Settings:
    group_by: tuple[str, ...] = tuple(config.DEFAULTS["compare"]["group_by"])
    q: float = config.DEFAULTS["compare"]["q"]
    min_jobs: int = config.DEFAULTS["compare"]["min_jobs"]
    min_ratio: float = config.DEFAULTS["compare"]["min_ratio"]
    min_cliffs_delta: float = config.DEFAULTS["compare"]["min_cliffs_delta"]
    min_bytes: float = config.DEFAULTS["compare"]["min_bytes"]
    coarsen: tuple[str, ...] = tuple(config.DEFAULTS["compare"]["coarsen"])

    @classmethod
    def of(cls, values: dict[str, Any], by: str | None = None, coarsen: str | None = None) -> "Settings":
        """[compare] values, group keys overridden by --by and the pooling keys by --coarsen
        (comma-separated)."""
        keys = list(values["group_by"]) if by is None else _key_list("--by", by)
        pool = list(values.get("coarsen", cls.coarsen)) if coarsen is None else _key_list("--coarsen", coarsen)
        return cls(tuple(keys), float(values["q"]), int(values["min_jobs"]), float(values["min_ratio"]),
                   float(values["min_cliffs_delta"]), float(values["min_bytes"]), tuple(pool))


def _key_list(option: str, text: str) -> list[str]:
    keys = [k.strip() for k in text.split(",") if k.strip()]
    bad = [k for k in keys if k not in config.GROUP_KEYS]
    if bad:
        raise CompareError(f"{option}: unknown key {bad[0]!r} (known: {', '.join(config.GROUP_KEYS)})")
    if len(set(keys)) != len(keys):
        raise CompareError(f"{option}: a key is listed twice")
    return keys


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


# ---- grouping ---------------------------------------------------------------------------------

def nodes_class(num_nodes: np.ndarray, n_hosts: np.ndarray) -> np.ndarray:
    """Node-count class k (1 node: 0, 2-3: 1, 4-7: 2, ...) from num_nodes, else n_hosts; -1 unknown."""
    n = np.where(num_nodes > 0, num_nodes, n_hosts)
    known = n >= 1
    _, exp = np.frexp(np.where(known, n, 1.0))      # n = m * 2**exp, m in [0.5, 1)
    return np.where(known, exp - 1, -1).astype(np.int64)


def class_label(k: int) -> str | None:
    return None if k < 0 else "1" if k == 0 else f"{1 << k}-{(1 << (k + 1)) - 1}"


def _codes(column) -> tuple[np.ndarray, list]:
    """A column as int codes (null: -1) and the value of each code."""
    import pyarrow as pa
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    enc = arr.dictionary_encode()
    codes = enc.indices.to_numpy(zero_copy_only=False)
    codes = np.where(np.isnan(codes), -1, codes).astype(np.int64) if codes.dtype.kind == "f" \
        else codes.astype(np.int64)
    return codes, enc.dictionary.to_pylist()


def _combine(parts: list[tuple[np.ndarray, int]], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Row codes of several columns (each in [-1, card)) -> (group id per row, first row of each
    group), groups numbered in the order of the combined codes."""
    gid = np.zeros(n, dtype=np.int64)
    span = 1
    for codes, card in parts:
        if span * (card + 1) >= 1 << 62:             # compact before the product overflows
            _, gid = np.unique(gid, return_inverse=True)
            span = int(gid.max()) + 1 if n else 1
        gid = gid * (card + 1) + (codes + 1)
        span *= card + 1
    return _dense(gid)


def _dense(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int64 keys -> (each key's rank among the distinct keys, the first row of each distinct
    key), as np.unique(keys, return_index=True, return_inverse=True) gives them, by a hash of
    the keys (pyarrow's dictionary, its values in the order they first appear) rather than a
    sort of them all: only the distinct keys are sorted."""
    import pyarrow as pa
    enc = pa.array(keys, type=pa.int64()).dictionary_encode()
    codes = enc.indices.to_numpy()
    distinct = enc.dictionary.to_numpy()
    order = np.argsort(distinct, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    # codes are given in order of first appearance: a row is a key's first when its code is new
    newest = np.maximum.accumulate(codes) if len(codes) else codes
    first = np.flatnonzero(np.r_[True, codes[1:] > newest[:-1]]) if len(codes) else np.zeros(0, dtype=np.int64)
    return rank[codes], first[order]


# ---- the comparison ---------------------------------------------------------------------------

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


def _flag(column) -> np.ndarray:
    """A bool column as a numpy bool array, null as False (an unknown trust is no trust)."""
    import pyarrow.compute as pc
    return np.asarray(pc.fill_null(column, False).to_numpy(zero_copy_only=False), dtype=bool) \
        if len(column) else np.zeros(0, dtype=bool)


def _side_info(table, selection: str, info: dict | None) -> dict:
    import pyarrow.compute as pc
    out: dict[str, Any] = {"selection": selection}
    ids = pc.unique(table["record_id"])
    out["jobs"] = len(ids) - ids.null_count
    out["rows"] = table.num_rows
    out["left_out"] = int(np.sum(~_flag(table["trusted"])))
    versions = set()
    for v in pc.unique(table["lustre"]).to_pylist():
        if v:
            versions.update(v.split(";"))
    out["lustre"] = sorted(versions, key=_version_key)
    begin = pc.min(table["begin"]).as_py() if table.num_rows else None
    end = pc.max(table["end"]).as_py() if table.num_rows else None
    out["since"] = begin.isoformat().replace("+00:00", "Z") if begin else None
    out["until"] = end.isoformat().replace("+00:00", "Z") if end else None
    if info:
        out["source"] = info
    return out


def _version_key(v: str):
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in v.replace("-", ".").split(".")]


def _present(keys: np.ndarray, size: int) -> np.ndarray:
    """The distinct values of non-negative int keys below size, sorted."""
    if size <= max(4 * len(keys), 1 << 20):
        return np.flatnonzero(np.bincount(keys, minlength=size))
    return np.unique(keys)


def _attribution(table, gid, side, trusted, G):
    """Per group: the client facts and settings that differ between the sides.

    For each column, the set of values over the side's trusted jobs (nulls left out: an older
    record that did not keep a setting says nothing about it). A column differs in a group when
    both sides know it and the sets are not the same. Returns (the changes of each group, the
    Lustre versions of each group's sides, what is not known on both sides of each group:
    "kernel", "os", "settings" (no setting known on both sides, or one known on one side only),
    and per setting some trusted job recorded, each group's side's values, sorted: (group * 2 +
    side) -> values, SettingsSeen's)."""
    changes: list[list[dict]] = [[] for _ in range(G)]
    lustre: list[list[list]] = [[[], []] for _ in range(G)]
    settings: dict[str, dict[int, list]] = {}
    gs = (gid * 2 + side)[trusted]
    known_both: dict[str, np.ndarray] = {}
    known_one: dict[str, np.ndarray] = {}     # recorded on one side only: cannot be compared
    for name in (*CLIENT_FACTS, *jobrow.SETTINGS):
        codes, labels = _column_codes(table[name], name in CLIENT_FACTS, trusted)
        seen = np.bincount(gs[codes >= 0], minlength=2 * G).reshape(G, 2) > 0
        known_both[name] = seen.all(axis=1)
        known_one[name] = seen.any(axis=1) & ~known_both[name]
        K = len(labels)
        if K == 0 or (K == 1 and name in CLIENT_FACTS and name != "lustre"):
            continue                       # one value (or none) everywhere: no group differs
        t_g, t_side, t_code, differs = _side_values(gs, codes, K, G)
        keep = differs[t_g] if name in CLIENT_FACTS and name != "lustre" else np.ones(len(t_g), dtype=bool)
        t_g = t_g[keep]
        values = _cell_values(t_g * 2 + t_side[keep], t_code[keep], labels,
                              _version_key if name in CLIENT_FACTS else None)
        if name not in CLIENT_FACTS:
            settings[name] = values
        differ = differs.tolist()
        for g in np.unique(t_g).tolist() if name == "lustre" else np.flatnonzero(differs).tolist():
            b, c = list(values.get(2 * g, ())), list(values.get(2 * g + 1, ()))
            if name == "lustre":
                lustre[g] = [b, c]
            if differ[g]:
                changes[g].append({"what": name, "baseline": b, "candidate": c})
    return changes, lustre, _unknown(known_both, known_one, G), settings


def _cell_values(cell: np.ndarray, code: np.ndarray, labels: list, key) -> dict[int, list]:
    """Per cell, the labels of its codes ((cell, code) pairs distinct, ordered by cell then
    code), in code order or sorted by key. Cells holding the same codes (most groups' sides
    hold the same one or two values) share one list: each is made once."""
    if not len(cell):
        return {}
    starts = np.flatnonzero(np.r_[True, cell[1:] != cell[:-1]])
    counts = np.diff(np.r_[starts, len(cell)])
    which = np.repeat(np.arange(len(starts)), counts)
    padded = np.full((len(starts), int(counts.max())), -1, dtype=np.int64)    # each cell's codes, -1 after
    padded[which, np.arange(len(cell)) - starts[which]] = code
    sets, inverse = np.unique(padded, axis=0, return_inverse=True)
    lists = [[labels[c] for c in row if c >= 0] for row in sets.tolist()]
    if key is not None:
        lists = [sorted(vs, key=key) for vs in lists]
    return dict(zip(cell[starts].tolist(), (lists[i] for i in inverse.ravel().tolist())))


def _column_codes(col, is_fact: bool, trusted: np.ndarray) -> tuple[np.ndarray, list]:
    """The trusted rows' values of a client fact (strings) or a setting (numbers) as codes into
    labels, -1 where the record did not keep it: a fact's labels are the column's values, a
    setting's those of trusted rows, in ascending order."""
    codes, labels = _codes(col)
    codes = codes[trusted]
    if is_fact:
        return codes, labels
    used = np.flatnonzero(np.bincount(codes[codes >= 0], minlength=len(labels)))
    ordered = sorted(used.tolist(), key=labels.__getitem__)
    remap = np.full(len(labels) + 1, -1, dtype=np.int64)          # the last: -1 (null) stays -1
    remap[ordered] = np.arange(len(ordered))
    return remap[codes], [int(labels[c]) for c in ordered]


def _side_values(gs: np.ndarray, codes: np.ndarray, K: int, G: int):
    """Which values each group's sides hold, as (group, side, value code) triples seen, and per
    group whether the two sides' sets of values differ (both sides knowing some)."""
    m = codes >= 0
    triples = _present(gs[m] * K + codes[m], 2 * G * K)     # (group, side, value) seen
    t_gs, t_code = triples // K, triples % K
    t_g, t_side = t_gs // 2, t_gs % 2
    has = np.zeros((G, 2), dtype=bool)
    has[t_g, t_side] = True
    # a (group, value) seen on one side only: the sides' sets differ (the triples are ordered
    # by group, side, value: a value's two sides are not neighbours, so count them)
    pair = t_g * K + t_code
    pairs, sides_seen = np.unique(pair, return_counts=True)
    differs = np.zeros(G, dtype=bool)
    differs[pairs[sides_seen == 1] // K] = True
    differs &= has[:, 0] & has[:, 1]
    return t_g, t_side, t_code, differs


def _unknown(known_both: dict[str, np.ndarray], known_one: dict[str, np.ndarray], G: int) -> list[list[str]]:
    """Per group, what is not known on both sides: "kernel", "os", "settings". Settings are
    known when some setting is recorded on both sides and none on one side only (e.g.
    hybrid_io, which a 2.15 client does not have, against a 2.17 one)."""
    settings_known = (np.any([known_both[s] for s in jobrow.SETTINGS], axis=0)
                      & ~np.any([known_one[s] for s in jobrow.SETTINGS], axis=0))
    return [[w for w, k in (("kernel", known_both["kernel"][g]), ("os", known_both["os"][g]),
                            ("settings", settings_known[g])) if not k] for g in range(G)]


def cause_of(changes: list[dict]) -> str:
    kinds = {CAUSE_OF[c["what"]] for c in changes}
    return "+".join(k for k in CAUSE_ORDER if k in kinds) or "none"


def compare(baseline, candidate, settings: Settings = Settings(), *, baseline_selection: str = "",
            candidate_selection: str = "", baseline_info: dict | None = None,
            candidate_info: dict | None = None, threads: int | None = None) -> Comparison:
    """Compare two sets of job rows (pyarrow Tables with jobrow columns, or lists of row dicts)."""
    base_t, cand_t = _as_table(baseline), _as_table(candidate)
    table, side = _joined((base_t, cand_t), needed_columns(settings.group_by))
    cols = Columns(table)
    groups = _groups(table, cols, side, settings)
    for name in comparemetrics.PLAIN_COLUMNS:      # converted once here, not in each metric's thread
        cols(name)
    # one pass over the RPC-size buckets: per-row sums for the metrics, per (group, side) sums
    # of the trusted rows for the fleet line and the charts
    rpc_sums = comparemetrics.rpc_pass(cols, np.where(groups.trusted, groups.keys, -1), 2 * groups.count)
    excused = _hybrid_excused(cols, groups)
    with _executor(threads, table.num_rows) as pool:
        # attribution (Python, mostly) and the sides' facts need no test: they run beside the
        # tests (numpy, mostly)
        attributed = pool.submit(_attribution, table, groups.gid, side, groups.trusted, groups.count)
        sides = [pool.submit(_side_info, t, selection, info) for t, selection, info in
                 ((base_t, baseline_selection, baseline_info), (cand_t, candidate_selection, candidate_info))]
        stats, combined = _tested(cols, groups, settings, excused, pool)
        changes, lustre, unknown, seen = attributed.result()
        side_infos = [f.result() for f in sides]
    _two_stages(stats, combined, settings)
    verdict = _metric_verdicts(stats, settings)
    expected = excused & (verdict <= _IMPROVEMENT)
    cols.drop()                                    # the per-row arrays are not needed any more
    group_verdict = _group_verdicts(verdict, expected, stats.tested, groups.enough)
    charted = _charted(stats, verdict, expected, group_verdict)
    idents = _identities(groups, settings)
    order = _order(group_verdict, charted.strongest, idents)
    fleet, group_rpc = _rpc_histograms(rpc_sums, [g for g in order if group_verdict[g] == _REGRESSION])
    power = _Power.of(stats, groups, group_verdict, settings)
    doc = {"schema": SCHEMA,
           "baseline": side_infos[0],
           "candidate": side_infos[1],
           "groups": _group_docs(order, idents, groups, group_verdict, changes,
                                 _MetricFigures.of(stats, verdict, expected), stats.stages, power),
           "fleet": fleet,
           "summary": dict(zip(VERDICTS, np.bincount(group_verdict, minlength=len(VERDICTS)).tolist())),
           "tests": {"group_tests": stats.stages.tests, "passed": stats.stages.passed},
           "not_judged": power.not_judged(group_verdict),
           "data_quality": fleet_past_int64(fleet)}
    return Comparison(doc, group_rpc, [charted.shown(g) for g in order], [lustre[g] for g in order], settings,
                      [unknown[g] for g in order], SettingsSeen(seen, order))


# Verdicts as indices into VERDICTS (the arrays of verdicts hold these).
_REGRESSION, _IMPROVEMENT, _NO_CHANGE, _NOT_ENOUGH_DATA = range(len(VERDICTS))


@dataclass
class _Groups:
    """The groups of "the same job" over both sides' rows (levels.build: the configured keys and
    the filesystem, coarser keys for what is too small), and how many jobs each side has in each."""
    gid: np.ndarray               # each row's group
    first: np.ndarray             # each group's first row
    key_codes: list[np.ndarray]   # per key (settings.group_by, then fs): each row's code, -1 null
    labels: list[list]            # per key: the value of each code
    side: np.ndarray              # each row's side: 0 baseline, 1 candidate
    trusted: np.ndarray           # each row is trusted
    keys: np.ndarray              # each row's (group, side) as one key: group * 2 + side
    jobs: np.ndarray              # [g, side]: rows
    good: np.ndarray              # [g, side]: trusted rows
    enough: np.ndarray            # [g]: both sides have at least min_jobs trusted rows (pooled:
                                  # in strata with trusted rows on both sides)
    levels: grouplevels.Levels    # the strata, and each group's level

    @property
    def count(self) -> int:
        return len(self.first)


def _key_codes(table, cols: Columns, keys: tuple[str, ...]) -> tuple[list[tuple[np.ndarray, int]], list[list]]:
    """Per group key: each row's code and how many codes there are, and the value of each code
    (nodes_class from the node counts, the others as the column's distinct values)."""
    parts, labels = [], []
    for key in keys:
        if key == "nodes_class":
            codes = nodes_class(cols("num_nodes"), cols("n_hosts"))
            kmax = int(codes.max()) + 1 if table.num_rows else 0
            parts.append((codes, kmax))
            labels.append([class_label(k) for k in range(kmax)])
        else:
            codes, lab = _codes(table[key])
            parts.append((codes, len(lab)))
            labels.append(lab)
    return parts, labels


def _groups(table, cols: Columns, side: np.ndarray, settings: Settings) -> _Groups:
    """The rows in groups (levels.build), and their jobs per side."""
    parts, labels = _key_codes(table, cols, (*settings.group_by, "fs"))
    trusted = _flag(table["trusted"])
    lv = grouplevels.build(parts, side, trusted, settings.min_jobs,
                           grouplevels.level_keys(settings.group_by, settings.coarsen), _combine)
    n_groups = lv.count
    keys = lv.gid * 2 + side
    jobs = np.bincount(keys, minlength=2 * n_groups).reshape(n_groups, 2)
    good = np.bincount(keys[trusted], minlength=2 * n_groups).reshape(n_groups, 2)
    enough = (lv.comparable >= settings.min_jobs).all(axis=1)     # level 0: its own jobs, both sides
    return _Groups(lv.gid, lv.first, [codes for codes, _ in parts], labels, side, trusted, keys, jobs, good,
                   enough, lv)


@dataclass
class _Stats(Tested):
    """The tests of every metric in every group: [m, g] for metric m (METRICS order) and group g
    (Tested's figures, stacked: a pooled group's delta and p are van Elteren's), the metric's
    values all the same (constant), its information and log spread (the detectable shift), its
    two-stage q-value in the direction of its shift (q), and the candidate's median over the
    baseline's (ratio); per group the combined rank statistic's and the two stages' figures."""
    q: np.ndarray
    ratio: np.ndarray
    constant: np.ndarray
    size: np.ndarray           # [4, m, g]: detectable.sizes
    log_sd: np.ndarray
    stages: twostage.TwoStage | None = None

    @property
    def tested(self) -> np.ndarray:
        return ~np.isnan(self.p)

    @property
    def member(self) -> np.ndarray:
        """[m, g]: the metric is in its group's family (tested, and its values not all the same)."""
        return self.tested & ~self.constant


@dataclass
class _Tested:
    """One metric's (or the combined statistic's) figures per group, and each row's centred
    rank in its stratum (for the combined statistic)."""
    group: Tested
    constant: np.ndarray
    size: np.ndarray           # [4, G]: detectable.sizes
    log_sd: np.ndarray
    rank: np.ndarray | None


def _per_group(v: np.ndarray, groups: _Groups, min_jobs: int, keep_rank: bool,
               spread_of: np.ndarray | None = None) -> _Tested:
    """A value per row tested in every group: rank tests over the strata, a level-0 group being
    its one stratum; a pooled group's delta and p from van Elteren's test over its strata, its
    counts and medians over its rows; the log spread of spread_of per group (None: NaN, not
    wanted)."""
    lv = groups.levels
    S, G = len(lv.stratum_first), groups.count
    by_value = value_order(v)                          # one sort by value for the strata and the pools
    strata = rank_tests(v, lv.stratum, groups.side, S, min_jobs, by_value)
    out = Tested(*(np.full(G, np.nan) for _ in range(6)))
    out.n_b, out.n_c = np.zeros(G, dtype=np.int64), np.zeros(G, dtype=np.int64)
    constant = np.zeros(G, dtype=bool)
    whole = lv.level[lv.stratum_group] == 0            # strata that are groups of their own
    g0 = lv.stratum_group[whole]
    for name in ("n_b", "n_c", "med_b", "med_c", "delta", "p"):
        getattr(out, name)[g0] = getattr(strata, name)[whole]
    constant[g0] = strata.constant[whole]
    if lv.pooled.any():
        pooled = lv.pooled
        rows = pooled[lv.gid]
        n_b, n_c, med_b, med_c = group_medians(np.where(rows, v, np.nan), lv.gid, groups.side, G,
                                               by_value[rows[by_value]])
        ve = van_elteren(strata, lv.stratum_group, G, min_jobs, lv.stratum)
        for name, arr in (("n_b", n_b), ("n_c", n_c), ("med_b", med_b), ("med_c", med_c),
                          ("delta", ve.delta), ("p", ve.p)):
            getattr(out, name)[pooled] = arr[pooled]
        constant[pooled] = ve.constant[pooled]
    size = detectable.sizes(strata.n_b, strata.n_c, lv.stratum_group, G)
    log_sd = (np.full(G, np.nan) if spread_of is None
              else detectable.log_spread(spread_of, lv.stratum, groups.side, lv.stratum_group, G))
    return _Tested(out, constant, size, log_sd, strata.rank.astype(np.float32) if keep_rank else None)


def _test_metric(metric, cols: Columns, groups: _Groups, counted: np.ndarray, settings: Settings) -> _Tested:
    """One metric's rank tests in every group, over the counted rows."""
    v = comparemetrics.values(metric, cols, settings.min_bytes)
    # the spread (of every group's trusted jobs) only where a detectable figure is said
    trusted = np.where(groups.trusted, v, np.nan) if _said_detectable(metric) else None
    v[~counted] = np.nan
    return _per_group(v, groups, settings.min_jobs, keep_rank=not metric.context, spread_of=trusted)


def _said_detectable(metric) -> bool:
    """Whether a group's detectable figure may be of this metric: one that can decide, and not
    a share (bounded: a share of 0.99 cannot grow 1.25x)."""
    return not metric.context and metric.unit != "share"


class _Inline(Executor):
    """An executor that runs each call when it is submitted, in the caller's thread."""

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:
            future.set_exception(exc)
        return future


def _executor(threads: int | None, rows: int) -> Executor:
    """Where compare's independent steps run: threads from 100,000 rows on (numpy's sorts and
    array operations release the GIL), else one after the other."""
    workers = threads or (min(4, os.cpu_count() or 1) if rows >= 100_000 else 1)
    return ThreadPoolExecutor(max_workers=workers) if workers > 1 else _Inline()


def _tested(cols: Columns, groups: _Groups, settings: Settings, excused: np.ndarray,
            pool: Executor) -> tuple[_Stats, Tested]:
    """Every metric tested in every group (each a task of the pool), over the trusted jobs of
    the groups that have enough of them; and the combined rank statistic of each group
    (_combined)."""
    counted = groups.trusted & groups.enough[groups.gid]
    run = functools.partial(_test_metric, cols=cols, groups=groups, counted=counted, settings=settings)
    results: list[_Tested] = list(pool.map(run, METRICS))
    combined = _combined(results, groups, excused, settings.min_jobs)
    stack = {name: np.stack([getattr(r.group, name) for r in results])
             for name in ("n_b", "n_c", "med_b", "med_c", "delta", "p")}
    stats = _Stats(**stack, q=np.full(stack["p"].shape, np.nan), ratio=median_ratio(stack["med_b"], stack["med_c"]),
                   constant=np.stack([r.constant for r in results]), size=np.stack([r.size for r in results], axis=1),
                   log_sd=np.stack([r.log_sd for r in results]))
    return stats, combined


def _combined(results: list[_Tested], groups: _Groups, excused: np.ndarray, min_jobs: int) -> Tested:
    """The combined rank statistic of each group, tested like a metric: per job, the mean of its
    centred ranks in its stratum over the group's deciding metrics it has a value of, each
    oriented so that higher is worse. A shift that several metrics show each a little adds up
    here; metrics that did not move add noise only."""
    total = np.zeros(len(groups.gid))
    count = np.zeros(len(groups.gid))
    sign = np.where(_worse_is_higher()[:, 0], 1.0, -1.0)
    for i, r in enumerate(results):
        if r.rank is None:
            continue
        use = ~np.isnan(r.rank)
        if excused[i].any():
            use &= ~excused[i][groups.gid]
        total += np.where(use, sign[i] * r.rank, 0.0)
        count += use
        r.rank = None
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(count > 0, total / count, np.nan)
    return _per_group(score, groups, min_jobs, keep_rank=False).group


def _worse_is_higher() -> np.ndarray:
    """[m, 1]: a higher value of metric m is the worse one."""
    return np.array([m.worse == "higher" for m in METRICS])[:, None]


def _two_stages(stats: _Stats, combined: Tested, settings: Settings) -> None:
    """The two stages (twostage) over the one-sided p-values of the metrics and of the combined
    statistic; each metric's q is the one of the direction its shift points to."""
    worse_way = stats.delta * np.where(_worse_is_higher(), 1.0, -1.0)
    p_metric = np.stack([twostage.one_sided(stats.p, worse_way > 0), twostage.one_sided(stats.p, worse_way < 0)])
    p_comb = np.stack([twostage.one_sided(combined.p, combined.delta > 0),
                       twostage.one_sided(combined.p, combined.delta < 0)])
    stages = twostage.two_stage(p_metric, p_comb, stats.member, settings.q)
    stats.q = np.where(worse_way > 0, stages.metric_q[0],
                       np.where(worse_way < 0, stages.metric_q[1], np.fmin(stages.metric_q[0], stages.metric_q[1])))
    stats.stages = stages


def _metric_verdicts(stats: _Stats, settings: Settings) -> np.ndarray:
    """[m, g]: metric m's verdict in group g (the module docstring's rules)."""
    worse_up = _worse_is_higher()
    sign = np.where(worse_up, 1.0, -1.0)
    with np.errstate(invalid="ignore"):
        significant = (stats.q <= settings.q) & (np.abs(stats.delta) >= settings.min_cliffs_delta)
        up = stats.ratio >= settings.min_ratio
        down = stats.ratio <= 1.0 / settings.min_ratio
        worse = significant & (stats.delta * sign > 0) & np.where(worse_up, up, down)
        better = significant & (stats.delta * sign < 0) & np.where(worse_up, down, up)
    verdict = np.full(stats.p.shape, _NO_CHANGE, dtype=np.int8)
    verdict[~stats.tested] = _NOT_ENOUGH_DATA
    verdict[worse] = _REGRESSION
    verdict[better] = _IMPROVEMENT
    return verdict


def _hybrid_excused(cols: Columns, groups: _Groups) -> np.ndarray:
    """[m, g]: a shift of metric m in group g is one hybrid I/O would explain: the candidate
    switched calls of the metric's direction in most of its jobs, the baseline not. Among
    trusted rows a null switch count is a client without hybrid I/O (no values at either end);
    a host that did not give it would have made the job untrusted (VALUES_MISSING)."""
    n_groups = groups.count
    excused = np.zeros((len(METRICS), n_groups), dtype=bool)
    for d in ("read", "write"):
        switched = np.nan_to_num(cols(f"hybrid_{d}_switch")) > 0
        share = (np.bincount(groups.keys[groups.trusted & switched], minlength=2 * n_groups).reshape(n_groups, 2)
                 / np.maximum(groups.good, 1))
        hybrid = (share[:, 1] > HYBRID_MOST) & (share[:, 0] <= HYBRID_MOST)
        rows = np.array([m.direction == d and m.hybrid for m in METRICS])
        excused[rows] = hybrid[None, :]
    return excused


def _can_decide() -> np.ndarray:
    """[m, 1]: metric m may decide its group's verdict (a context metric never does)."""
    return np.array([not m.context for m in METRICS], dtype=bool)[:, None]


def _group_verdicts(verdict: np.ndarray, expected: np.ndarray, tested: np.ndarray,
                    enough: np.ndarray) -> np.ndarray:
    """[g]: group g's verdict from its deciding metrics' (the module docstring's rules)."""
    deciding = _can_decide() & ~expected
    out = np.full(len(enough), _NO_CHANGE, dtype=np.int8)
    out[((verdict == _IMPROVEMENT) & deciding).any(axis=0)] = _IMPROVEMENT
    out[((verdict == _REGRESSION) & deciding).any(axis=0)] = _REGRESSION
    out[~enough] = _NOT_ENOUGH_DATA
    # enough jobs, but no metric that could decide was tested (every job under the gates, e.g.
    # jobs that moved a few MiB): that is not "the same", it is "cannot tell"
    out[~(_can_decide() & tested).any(axis=0)] = _NOT_ENOUGH_DATA
    return out


@dataclass
class _Charted:
    """Per group: its strongest effect (for ordering) and the metric its charts show, the worst
    one (largest delta the worse way), for an improvement the most improved deciding one."""
    strongest: np.ndarray   # [g]: the largest |Cliff's delta| of a deciding metric tested
    badness: np.ndarray     # [m, g]: Cliff's delta signed positive = worse, -inf where not charted
    metric: np.ndarray      # [g]: the metric shown

    def shown(self, g: int) -> tuple[str, float] | None:
        """The metric shown for group g and its signed delta; None if none is finite."""
        b = self.badness[self.metric[g], g]
        return (METRICS[self.metric[g]].id, float(b)) if np.isfinite(b) else None


def _charted(stats: _Stats, verdict: np.ndarray, expected: np.ndarray, group_verdict: np.ndarray) -> _Charted:
    """What each group's charts show and how strong its effect is (_Charted)."""
    can_decide = _can_decide()
    deciding, decides = can_decide & ~expected, can_decide & stats.tested
    signed = stats.delta * np.where(_worse_is_higher(), 1.0, -1.0)
    strongest = (np.where(decides, np.abs(stats.delta), -1.0).max(axis=0) if len(METRICS)
                 else np.zeros(len(group_verdict)))
    # a shift hybrid I/O explains is not the worst effect: the metrics that decided come first
    chartable = np.where((deciding & stats.tested).any(axis=0), deciding & stats.tested, decides)
    badness = np.where(chartable, signed, -np.inf)
    worst = badness.argmax(axis=0)
    best = np.where(deciding & (verdict == _IMPROVEMENT), signed, np.inf).argmin(axis=0)
    return _Charted(strongest, badness, np.where(group_verdict == _IMPROVEMENT, best, worst))


@dataclass
class _Identity:
    """What names a group: its keys at its level (the filesystem last), and per key pooled over
    the values its jobs had (a level-0 group pools nothing)."""
    key: dict
    fs: Any
    pooled: dict

    def sort_key(self) -> list:
        return [(v is None, str(v)) for v in (*self.key.values(), self.fs)] + [str(sorted(self.pooled))]


def _identities(groups: _Groups, settings: Settings) -> list[_Identity]:
    """Each group's _Identity, from its first row and its strata."""
    lv = groups.levels
    names = settings.group_by
    fs_at = len(names)

    def label(k: int, row: int):
        code = groups.key_codes[k][row]
        return groups.labels[k][code] if code >= 0 else None

    pooled_values: dict[int, dict[int, set]] = {}
    for s_, g in enumerate(lv.stratum_group.tolist()):
        lvl = int(lv.level[g])
        if lvl:
            row = int(lv.stratum_first[s_])
            for k in range(fs_at):
                if k not in lv.keys[lvl]:
                    pooled_values.setdefault(g, {}).setdefault(k, set()).add(label(k, row))
    out = []
    for g, row in enumerate(groups.first.tolist()):
        kept = lv.keys[int(lv.level[g])]
        pooled = {names[k]: sorted(v, key=lambda x: (x is None, _label_order(names[k], x)))
                  for k, v in sorted(pooled_values.get(g, {}).items())}
        out.append(_Identity({names[k]: label(k, row) for k in kept if k < fs_at}, label(fs_at, row), pooled))
    return out


def _label_order(key: str, value):
    """Node classes in size order ("2-3" before "16-31"), other values as text."""
    if key == "nodes_class" and isinstance(value, str):
        return (int(value.split("-")[0]), "")
    return (0, str(value))


def _order(group_verdict: np.ndarray, strongest: np.ndarray, idents: list[_Identity]) -> list[int]:
    """The groups in the document's order: regressions first, then by strongest effect, then key."""
    return sorted(range(len(idents)), key=lambda g: (int(group_verdict[g]), -float(strongest[g]),
                                                     idents[g].sort_key()))


@dataclass
class _Power:
    """What the groups that found nothing could have found (detectable): per group the
    smallest detectable ratio of medians of its deciding metrics and which metric it is; the
    fleet's spread per metric; the jobs a side a group needs to see a 2x shift."""
    ratio: np.ndarray           # [g]: NaN for a group that found something, or without a figure
    metric: np.ndarray          # [g]: index into METRICS, -1 none
    jobs_needed: int | None

    @classmethod
    def of(cls, stats: _Stats, groups: _Groups, group_verdict: np.ndarray, settings: Settings) -> "_Power":
        G = groups.count
        deciding = np.array([_said_detectable(m) for m in METRICS])
        fleet_sd = np.array([np.nanmedian(row) if np.isfinite(row).any() else np.nan for row in stats.log_sd])
        members = stats.member.sum(axis=0)
        typical_m = int(np.median(members[members > 0])) if (members > 0).any() else int(deciding.sum())
        F = max(stats.stages.tests, 1)
        alpha = settings.q / (F * (np.where(members > 0, members, typical_m) + 1))
        # a group not judged: its trusted jobs (no metric was tested) and the fleet's spread
        lv = groups.levels
        size_jobs = detectable.sizes(lv.stratum_good[:, 0], lv.stratum_good[:, 1], lv.stratum_group, G)
        judged = stats.member.any(axis=0)
        quiet = np.flatnonzero((group_verdict == _NO_CHANGE) | (group_verdict == _NOT_ENOUGH_DATA))
        dm = np.flatnonzero(deciding)                # only these figures are said: computed alone
        size = np.where(judged[None, None, quiet], stats.size[:, dm][:, :, quiet], size_jobs[:, None, quiet])
        own_sd = stats.log_sd[dm][:, quiet]
        sd = np.where(judged[None, quiet] & np.isfinite(own_sd), own_sd, fleet_sd[dm][:, None])
        r = detectable.detectable_ratio(size, sd, np.broadcast_to(alpha[None, quiet], sd.shape), settings.min_ratio,
                                        settings.min_cliffs_delta)
        has = ~np.isnan(r)                       # a figure, finite or inf (no shift would be seen)
        filled = np.where(has, r, np.inf)
        ratio, metric = np.full(G, np.nan), np.full(G, -1)
        if len(dm) and len(quiet):
            ratio[quiet] = np.where(has.any(axis=0), filled.min(axis=0), np.nan)
            metric[quiet] = np.where(has.any(axis=0), dm[filled.argmin(axis=0)], -1)
        alpha_fleet = settings.q / ((F + 2) * (typical_m + 1))
        needed = [detectable.jobs_needed(float(fleet_sd[m]), alpha_fleet, settings.min_ratio,
                                         settings.min_cliffs_delta, settings.min_jobs)
                  for m in range(len(METRICS)) if deciding[m]]
        needed = [n for n in needed if n is not None]
        return cls(ratio, metric, min(needed) if needed else None)

    def item(self, g: int) -> dict | None:
        """Group g's "detectable", or None."""
        if self.metric[g] < 0 or np.isnan(self.ratio[g]):
            return None
        r = float(self.ratio[g])
        if np.isinf(r):          # no shift of any one metric, however large, would have been found
            return {"ratio": "inf", "metric": None}
        return {"ratio": r, "metric": METRICS[int(self.metric[g])].id}

    def not_judged(self, group_verdict: np.ndarray) -> dict:
        return {"groups": int((group_verdict == _NOT_ENOUGH_DATA).sum()),
                "jobs_a_side": self.jobs_needed, "shift": detectable.TARGET_SHIFT}


def _json_floats(arr: np.ndarray) -> list[list]:
    """[m, g] floats as lists of JSON values: NaN and infinities are null."""
    a = arr.astype(object)
    a[~np.isfinite(arr)] = None
    return a.tolist()


_METRIC_KEYS = ("id", "baseline_median", "candidate_median", "effect", "ratio", "p_value", "q_value", "verdict",
                "n_baseline", "n_candidate")


@dataclass
class _MetricFigures:
    """The metrics' figures as JSON values, [g][m] (lists: converted once, not item by item)."""
    med_b: list[list]
    med_c: list[list]
    delta: list[list]
    ratio: list[list]        # null: undefined; "inf": the baseline's median is 0, the candidate's not
    p: list[list]
    q: list[list]
    verdict: list[list]      # names
    expected: list[list]
    n_b: list[list]
    n_c: list[list]

    @classmethod
    def of(cls, stats: _Stats, verdict: np.ndarray, expected: np.ndarray) -> "_MetricFigures":
        ratio = stats.ratio.astype(object)
        ratio[np.isnan(stats.ratio)] = None
        ratio[np.isinf(stats.ratio)] = "inf"
        per_group = [_json_floats(a.T) for a in (stats.med_b, stats.med_c, stats.delta)]
        return cls(*per_group, ratio.T.tolist(), _json_floats(stats.p.T), _json_floats(stats.q.T),
                   np.array(VERDICTS, dtype=object)[verdict.T].tolist(), expected.T.tolist(),
                   stats.n_b.T.tolist(), stats.n_c.T.tolist())

    def items(self, g: int) -> list[dict]:
        """Group g's "metrics" entries (the keys in _METRIC_KEYS' order, "expected" before the
        counts where hybrid I/O explains the shift)."""
        out = []
        rows = zip(_METRIC_IDS, self.med_b[g], self.med_c[g], self.delta[g], self.ratio[g], self.p[g], self.q[g],
                   self.verdict[g], self.n_b[g], self.n_c[g])
        for row, expected in zip(rows, self.expected[g]):
            item = dict(zip(_METRIC_KEYS, row))
            if expected:
                item = {**dict(zip(_METRIC_KEYS[:-2], row)), "expected": HYBRID_EXPECTED,
                        "n_baseline": row[-2], "n_candidate": row[-1]}
            out.append(item)
        return out


_METRIC_IDS = tuple(m.id for m in METRICS)


def _group_docs(order: list[int], idents: list[_Identity], groups: _Groups, group_verdict: np.ndarray,
                changes: list[list[dict]], figures: _MetricFigures, stages: twostage.TwoStage,
                power: _Power) -> list[dict]:
    """The document's "groups", in this order; a group without enough trusted jobs on a side
    carries no metrics."""
    jobs, good, verdicts = groups.jobs.tolist(), groups.good.tolist(), group_verdict.tolist()
    level = groups.levels.level.tolist()
    tests = [_json_floats(stages.group_p), _json_floats(stages.group_q)]
    out = []
    for g in order:
        item = {"key": idents[g].key, "fs": idents[g].fs, "level": level[g], "pooled": idents[g].pooled,
                "n_baseline": good[g][0], "n_candidate": good[g][1],
                "verdict": VERDICTS[verdicts[g]], "cause": cause_of(changes[g]), "changes": changes[g],
                "left_out": {"baseline": jobs[g][0] - good[g][0], "candidate": jobs[g][1] - good[g][1]},
                "tests": ({d: {"p_value": tests[0][i][g], "q_value": tests[1][i][g]}
                           for i, d in enumerate(twostage.DIRECTIONS)} if tests[0][0][g] is not None else None),
                "detectable": power.item(g),
                "metrics": figures.items(g) if groups.enough[g] else []}
        out.append(item)
    return out


def _rpc_histograms(rpc_sums, regressed: list[int]) -> tuple[dict, dict[int, dict]]:
    """The RPC-size histograms per side (sums keyed g * 2 + side): the fleet's (every group of
    the side) and each regressed group's, keyed by its place (regressions come first)."""
    fleet = {name: _shares(rpc_sums.ints(slice(i, None, 2))) for i, name in enumerate(SIDES)}
    group_rpc = {k: {name: _shares(rpc_sums.ints(2 * g + i)) for i, name in enumerate(SIDES)}
                 for k, g in enumerate(regressed)}
    return fleet, group_rpc


def _shares(counts: list[list[int]]) -> dict:
    """Per direction (read, write): the RPCs in all and each bucket's share of them, from the
    buckets' exact sums (a share of Python ints is rounded once, however large they are)."""
    out = {}
    for d, cs in zip(("read", "write"), counts):
        total = sum(cs)
        out[d] = {"rpcs": total,
                  "shares": {b: (n / total if total else None) for b, n in zip(comparemetrics.ALL_BUCKETS, cs)}}
    return out


def fleet_past_int64(fleet: dict) -> list[dict]:
    """A data_quality entry (VALUE_TOO_LARGE) for each side and direction whose RPCs add up to
    2^63 or more: each trusted row's counts are below 2^63 (jobrow), their sum need not be. The
    figure stays exact in the document; many JSON readers hold an integer as int64 or double.
    (A bucket past it makes the side's total past it: `rpcs` is the one integer said. A group's
    histograms are shown as shares only.)"""
    out = []
    for name, side in fleet.items():
        for d, h in side.items():
            if h["rpcs"] > jobrow.INT64_MAX:
                out.append({"id": "VALUE_TOO_LARGE", "side": name, "direction": d,
                            "detail": f"the {name}'s {d} RPCs add up to 2^63 or more over its trusted jobs: exact "
                                      f"here, but past what a 64-bit integer holds (a reader that takes JSON "
                                      f"integers as int64 or double cannot hold fleet.{name}.{d}.rpcs)"})
    return out
