"""`lustre-jobreport compare`: which applications issue worse RPCs or read slower after a change.

Two selections of job rows (jobrow.COLUMNS: one row per job and filesystem), a baseline and a
candidate (e.g. Lustre 2.15.* against 2.16.*), are split into groups of "the same job": the
configured keys ([compare] group_by, default job_name, user, nodes_class) and the filesystem.
Per group and metric (comparemetrics.METRICS) the two sides' per-job values are compared with
a Mann-Whitney U test, Cliff's delta and the ratio of medians; p-values are adjusted over every
test of the run (Benjamini-Hochberg), and a verdict needs a significant, large and consistent
shift in the metric's worse (or better) direction. Each group also says what differs in the
clients between the sides (Lustre version, kernel/OS, settings): a tunable changed by an OS
image must not pass for a Lustre regression.

Verdicts. A metric of a group: not_enough_data when either side has fewer than min_jobs
jobs with a value; regression when q <= q, |Cliff's delta| >= min_cliffs_delta and both the
delta and the ratio of medians (>= min_ratio, or <= 1/min_ratio) point the metric's worse way;
improvement the same the better way; else no_change. A group: not_enough_data when either side
has fewer than min_jobs trusted jobs, or no deciding metric could be tested; else regression when a deciding metric regressed, else
improvement when one improved, else no_change. Context metrics (the application's own call
size) and expected shifts (hybrid I/O) keep their statistics and verdicts but decide nothing.

Everything is computed over all rows at once with numpy: groups by np.unique over key codes,
one sort per metric for the ranks in every group, p-values for all groups at once.

The document (compare(); JSON rendering in comparerender) follows DESIGN §3:
  {"schema": "lustre-jobreport-compare/1", "baseline": {...}, "candidate": {...},
   "groups": [{"key", "fs", "n_baseline", "n_candidate", "verdict", "cause", "changes",
               "left_out", "metrics": [{"id", "baseline_median", "candidate_median", "effect",
               "ratio", "p_value", "q_value", "verdict", "expected"?, "n_baseline",
               "n_candidate"}]}],
   "fleet": {...}, "summary": {"regression", "improvement", "no_change", "not_enough_data"},
   "data_quality": [{"id", "side", "direction", "detail"}]}
Numbers that are not finite never reach JSON: an undefined value (no test, no median) is null,
and a ratio of medians whose baseline median is 0 (and candidate's not) is the string "inf".
A group without enough trusted jobs on a side carries no metrics ("metrics": []). Counts summed
over rows (the RPC-size histograms) are exact integers however large (comparemetrics.KeySums);
a fleet figure of 2^63 or more, past what many JSON readers hold, is said in data_quality.
"""

from __future__ import annotations

import functools
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import metrics as comparemetrics
from .. import config
from ..records import jobrow
from .metrics import METRICS, Columns
from .stats import Tested, bh, median_ratio, rank_tests
from ..errors import JobReportError

SCHEMA = "lustre-jobreport-compare/1"
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

    @classmethod
    def of(cls, values: dict[str, Any], by: str | None = None) -> "Settings":
        """[compare] values, group keys overridden by --by (comma-separated)."""
        keys = list(values["group_by"])
        if by is not None:
            keys = [k.strip() for k in by.split(",") if k.strip()]
            bad = [k for k in keys if k not in config.GROUP_KEYS]
            if bad:
                raise CompareError(f"--by: unknown key {bad[0]!r} (known: {', '.join(config.GROUP_KEYS)})")
            if len(set(keys)) != len(keys):
                raise CompareError("--by: a key is listed twice")
        return cls(tuple(keys), float(values["q"]), int(values["min_jobs"]), float(values["min_ratio"]),
                   float(values["min_cliffs_delta"]), float(values["min_bytes"]))


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
    uniq, first, gid = np.unique(gid, return_index=True, return_inverse=True)
    return gid.astype(np.int64), first


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
    out["jobs"] = len(table["record_id"].combine_chunks().dictionary_encode().dictionary) if table.num_rows else 0
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
    "kernel", "os", "settings" (no setting known on both sides, or one known on one side only))."""
    changes: list[list[dict]] = [[] for _ in range(G)]
    lustre: list[list[list]] = [[[], []] for _ in range(G)]
    gs = (gid * 2 + side)[trusted]
    known_both: dict[str, np.ndarray] = {}
    known_one: dict[str, np.ndarray] = {}     # recorded on one side only: cannot be compared
    for name in (*CLIENT_FACTS, *jobrow.SETTINGS):
        codes, labels = _column_codes(table[name], name in CLIENT_FACTS, trusted)
        seen = np.bincount(gs[codes >= 0], minlength=2 * G).reshape(G, 2) > 0
        known_both[name] = seen.all(axis=1)
        known_one[name] = seen.any(axis=1) & ~known_both[name]
        K = len(labels)
        if K == 0 or (K == 1 and name != "lustre"):
            continue                       # one value (or none) everywhere: no group differs
        t_g, t_side, t_code, differs = _side_values(gs, codes, K, G)
        keep = differs[t_g] if name != "lustre" else np.ones(len(t_g), dtype=bool)
        found: dict[int, list[list]] = {}
        for g, sd, c in zip(t_g[keep].tolist(), t_side[keep].tolist(), t_code[keep].tolist()):
            found.setdefault(g, [[], []])[sd].append(labels[c])
        for g, (b, c) in found.items():
            if name in CLIENT_FACTS:
                b, c = sorted(b, key=_version_key), sorted(c, key=_version_key)
            if name == "lustre":
                lustre[g] = [b, c]
            if differs[g]:
                changes[g].append({"what": name, "baseline": b, "candidate": c})
    return changes, lustre, _unknown(known_both, known_one, G)


def _column_codes(col, is_fact: bool, trusted: np.ndarray) -> tuple[np.ndarray, list]:
    """The trusted rows' values of a client fact (strings) or a setting (numbers) as codes into
    labels, -1 where the record did not keep it."""
    if is_fact:
        codes, labels = _codes(col)
        return codes[trusted], labels
    raw = col.to_numpy(zero_copy_only=False).astype(np.float64)[trusted]
    known = ~np.isnan(raw)
    labels_arr, inv = np.unique(raw[known], return_inverse=True)
    codes = np.full(len(raw), -1, dtype=np.int64)
    codes[known] = inv
    return codes, [int(v) for v in labels_arr]


def _side_values(gs: np.ndarray, codes: np.ndarray, K: int, G: int):
    """Which values each group's sides hold, as (group, side, value code) triples seen, and per
    group whether the two sides' sets of values differ (both sides knowing some)."""
    m = codes >= 0
    triples = _present(gs[m] * K + codes[m], 2 * G * K)     # (group, side, value) seen
    t_gs, t_code = triples // K, triples % K
    t_g, t_side = t_gs // 2, t_gs % 2
    has = np.zeros((G, 2), dtype=bool)
    has[t_g, t_side] = True
    # a (group, value) seen on one side only: the sides' sets differ
    pair = t_g * K + t_code
    one_side = np.ones(len(pair), dtype=bool)
    same = pair[1:] == pair[:-1]
    one_side[1:] &= ~same
    one_side[:-1] &= ~same
    differs = np.zeros(G, dtype=bool)
    differs[t_g[one_side]] = True
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
    stats = _tested(cols, groups, settings, threads)
    verdict = _metric_verdicts(stats, settings)
    expected = _hybrid_expected(cols, groups, verdict)
    cols.drop()                                    # the per-row arrays are not needed any more
    group_verdict = _group_verdicts(verdict, expected, stats.tested, groups.enough)
    charted = _charted(stats, verdict, expected, group_verdict)
    changes, lustre, unknown = _attribution(table, groups.gid, side, groups.trusted, groups.count)
    key_of = _group_keys(groups)
    order = _order(group_verdict, charted.strongest, key_of)
    fleet, group_rpc = _rpc_histograms(rpc_sums, [g for g in order if group_verdict[g] == _REGRESSION])
    doc = {"schema": SCHEMA,
           "baseline": _side_info(base_t, baseline_selection, baseline_info),
           "candidate": _side_info(cand_t, candidate_selection, candidate_info),
           "groups": _group_docs(order, key_of, settings, groups, group_verdict, changes,
                                 _MetricFigures.of(stats, verdict, expected)),
           "fleet": fleet,
           "summary": dict(zip(VERDICTS, np.bincount(group_verdict, minlength=len(VERDICTS)).tolist())),
           "data_quality": fleet_past_int64(fleet)}
    return Comparison(doc, group_rpc, [charted.shown(g) for g in order], [lustre[g] for g in order], settings,
                      [unknown[g] for g in order])


# Verdicts as indices into VERDICTS (the arrays of verdicts hold these).
_REGRESSION, _IMPROVEMENT, _NO_CHANGE, _NOT_ENOUGH_DATA = range(len(VERDICTS))


@dataclass
class _Groups:
    """The groups of "the same job" (the configured keys and the filesystem) over both sides'
    rows, and how many jobs each side has in each."""
    gid: np.ndarray               # each row's group
    first: np.ndarray             # each group's first row
    key_codes: list[np.ndarray]   # per key (settings.group_by, then fs): each row's code, -1 null
    labels: list[list]            # per key: the value of each code
    side: np.ndarray              # each row's side: 0 baseline, 1 candidate
    trusted: np.ndarray           # each row is trusted
    keys: np.ndarray              # each row's (group, side) as one key: group * 2 + side
    jobs: np.ndarray              # [g, side]: rows
    good: np.ndarray              # [g, side]: trusted rows
    enough: np.ndarray            # [g]: both sides have at least min_jobs trusted rows

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
    """The rows in groups of the configured keys and the filesystem, and their jobs per side."""
    parts, labels = _key_codes(table, cols, (*settings.group_by, "fs"))
    gid, first = _combine(parts, table.num_rows)
    n_groups = len(first)
    trusted = _flag(table["trusted"])
    keys = gid * 2 + side
    jobs = np.bincount(keys, minlength=2 * n_groups).reshape(n_groups, 2)
    good = np.bincount(keys[trusted], minlength=2 * n_groups).reshape(n_groups, 2)
    enough = (good >= settings.min_jobs).all(axis=1)
    return _Groups(gid, first, [codes for codes, _ in parts], labels, side, trusted, keys, jobs, good, enough)


@dataclass
class _Stats(Tested):
    """The tests of every metric in every group: [m, g] for metric m (METRICS order) and group g
    (Tested's figures, stacked), with the p-values adjusted over every test of the run (q) and
    the candidate's median over the baseline's (ratio)."""
    q: np.ndarray
    ratio: np.ndarray

    @classmethod
    def of(cls, results: list[Tested]) -> "_Stats":
        n_b, n_c, med_b, med_c, delta, p = (np.stack([getattr(r, name) for r in results])
                                            for name in ("n_b", "n_c", "med_b", "med_c", "delta", "p"))
        return cls(n_b, n_c, med_b, med_c, delta, p, bh(p.ravel()).reshape(p.shape), median_ratio(med_b, med_c))

    @property
    def tested(self) -> np.ndarray:
        return ~np.isnan(self.p)


def _test_metric(metric, cols: Columns, groups: _Groups, counted: np.ndarray, settings: Settings) -> Tested:
    """One metric's rank tests in every group, over the counted rows."""
    v = comparemetrics.values(metric, cols, settings.min_bytes)
    v[~counted] = np.nan
    return rank_tests(v, groups.gid, groups.side, groups.count, settings.min_jobs)


def _tested(cols: Columns, groups: _Groups, settings: Settings, threads: int | None) -> _Stats:
    """Every metric tested in every group, over the trusted jobs of the groups that have enough
    of them; in threads from 100,000 rows on (numpy's sorts release the GIL)."""
    counted = groups.trusted & groups.enough[groups.gid]
    run = functools.partial(_test_metric, cols=cols, groups=groups, counted=counted, settings=settings)
    workers = threads or (min(4, os.cpu_count() or 1) if len(groups.gid) >= 100_000 else 1)
    if workers > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results: list[Tested] = list(pool.map(run, METRICS))
    else:
        results = [run(m) for m in METRICS]
    return _Stats.of(results)


def _worse_is_higher() -> np.ndarray:
    """[m, 1]: a higher value of metric m is the worse one."""
    return np.array([m.worse == "higher" for m in METRICS])[:, None]


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


def _hybrid_expected(cols: Columns, groups: _Groups, verdict: np.ndarray) -> np.ndarray:
    """[m, g]: metric m's regression or improvement in group g is one hybrid I/O explains: the
    candidate switched calls of the metric's direction in most of its jobs, the baseline not.
    Among trusted rows a null switch count is a client without hybrid I/O (no values at either
    end); a host that did not give it would have made the job untrusted (VALUES_MISSING)."""
    n_groups = groups.count
    expected = np.zeros(verdict.shape, dtype=bool)
    for d in ("read", "write"):
        switched = np.nan_to_num(cols(f"hybrid_{d}_switch")) > 0
        share = (np.bincount(groups.keys[groups.trusted & switched], minlength=2 * n_groups).reshape(n_groups, 2)
                 / np.maximum(groups.good, 1))
        hybrid = (share[:, 1] > HYBRID_MOST) & (share[:, 0] <= HYBRID_MOST)
        rows = np.array([m.direction == d and m.hybrid for m in METRICS])
        expected[rows] = hybrid[None, :] & (verdict[rows] <= _IMPROVEMENT)
    return expected


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


def _group_keys(groups: _Groups) -> list[list]:
    """Each group's key values (settings.group_by's, then the filesystem), None for a null."""
    return [[labels[codes[r]] if codes[r] >= 0 else None for codes, labels in zip(groups.key_codes, groups.labels)]
            for r in groups.first.tolist()]


def _order(group_verdict: np.ndarray, strongest: np.ndarray, key_of: list[list]) -> list[int]:
    """The groups in the document's order: regressions first, then by strongest effect, then key."""
    return sorted(range(len(key_of)), key=lambda g: (int(group_verdict[g]), -float(strongest[g]),
                                                     [(v is None, str(v)) for v in key_of[g]]))


def _json_floats(arr: np.ndarray) -> list[list]:
    """[m, g] floats as lists of JSON values: NaN and infinities are null."""
    a = arr.astype(object)
    a[~np.isfinite(arr)] = None
    return a.tolist()


@dataclass
class _MetricFigures:
    """The metrics' figures as JSON values, [m][g] (lists: converted once, not item by item)."""
    med_b: list[list]
    med_c: list[list]
    delta: list[list]
    ratio: list[list]        # null: undefined; "inf": the baseline's median is 0, the candidate's not
    p: list[list]
    q: list[list]
    verdict: list[list]
    expected: list[list]
    n_b: list[list]
    n_c: list[list]

    @classmethod
    def of(cls, stats: _Stats, verdict: np.ndarray, expected: np.ndarray) -> "_MetricFigures":
        ratio = stats.ratio.astype(object)
        ratio[np.isnan(stats.ratio)] = None
        ratio[np.isinf(stats.ratio)] = "inf"
        return cls(*map(_json_floats, (stats.med_b, stats.med_c, stats.delta)), ratio.tolist(),
                   *map(_json_floats, (stats.p, stats.q)), verdict.tolist(), expected.tolist(),
                   stats.n_b.tolist(), stats.n_c.tolist())

    def items(self, g: int) -> list[dict]:
        """Group g's "metrics" entries."""
        out = []
        for i, m in enumerate(METRICS):
            item = {"id": m.id, "baseline_median": self.med_b[i][g], "candidate_median": self.med_c[i][g],
                    "effect": self.delta[i][g], "ratio": self.ratio[i][g], "p_value": self.p[i][g],
                    "q_value": self.q[i][g], "verdict": VERDICTS[self.verdict[i][g]]}
            if self.expected[i][g]:
                item["expected"] = HYBRID_EXPECTED
            item["n_baseline"] = self.n_b[i][g]
            item["n_candidate"] = self.n_c[i][g]
            out.append(item)
        return out


def _group_docs(order: list[int], key_of: list[list], settings: Settings, groups: _Groups,
                group_verdict: np.ndarray, changes: list[list[dict]], figures: _MetricFigures) -> list[dict]:
    """The document's "groups", in this order; a group without enough trusted jobs on a side
    carries no metrics."""
    jobs, good, verdicts = groups.jobs.tolist(), groups.good.tolist(), group_verdict.tolist()
    return [{"key": dict(zip(settings.group_by, key_of[g][:-1])), "fs": key_of[g][-1],
             "n_baseline": good[g][0], "n_candidate": good[g][1],
             "verdict": VERDICTS[verdicts[g]], "cause": cause_of(changes[g]), "changes": changes[g],
             "left_out": {"baseline": jobs[g][0] - good[g][0], "candidate": jobs[g][1] - good[g][1]},
             "metrics": figures.items(g) if groups.enough[g] else []}
            for g in order]


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
