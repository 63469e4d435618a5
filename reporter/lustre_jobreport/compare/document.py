"""compare's document (docs/compare.md §9) from the verdicts: each group's identity and entry,
their order, what the groups that found nothing could have found, and the RPC-size histograms."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import detectable, twostage
from . import metrics as comparemetrics
from ..records import jobrow
from .attribution import cause_of
from .grouping import Groups
from .grouptests import Stats, said_detectable
from .metrics import METRICS
from .settings import Settings
from .verdicts import NO_CHANGE, NOT_ENOUGH_DATA, VERDICTS


HYBRID_EXPECTED = "hybrid I/O: 2.16+ sends buffered calls ≥ threshold as direct I/O (LU-13802)"


SIDES = ("baseline", "candidate")


@dataclass
class Identity:
    """What names a group: its keys at its level (the filesystem last), and per key pooled over
    the values its jobs had (a level-0 group pools nothing)."""
    key: dict
    fs: Any
    pooled: dict

    def sort_key(self) -> list:
        return [(v is None, str(v)) for v in (*self.key.values(), self.fs)] + [str(sorted(self.pooled))]


def identities(groups: Groups, settings: Settings) -> list[Identity]:
    """Each group's Identity, from its first row and its strata."""
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
        out.append(Identity({names[k]: label(k, row) for k in kept if k < fs_at}, label(fs_at, row), pooled))
    return out


def _label_order(key: str, value):
    """Node classes in size order ("2-3" before "16-31"), other values as text."""
    if key == "nodes_class" and isinstance(value, str):
        return (int(value.split("-")[0]), "")
    return (0, str(value))


def order_of(group_verdict: np.ndarray, strongest: np.ndarray, idents: list[Identity]) -> list[int]:
    """The groups in the document's order: regressions first, then by strongest effect, then key."""
    return sorted(range(len(idents)), key=lambda g: (int(group_verdict[g]), -float(strongest[g]),
                                                     idents[g].sort_key()))


@dataclass
class Power:
    """What the groups that found nothing could have found (detectable): per group the
    smallest detectable ratio of medians of its deciding metrics and which metric it is; the
    fleet's spread per metric; the jobs a side a group needs to see a 2x shift."""
    ratio: np.ndarray           # [g]: NaN for a group that found something, or without a figure
    metric: np.ndarray          # [g]: index into METRICS, -1 none
    jobs_needed: int | None

    @classmethod
    def of(cls, stats: Stats, groups: Groups, group_verdict: np.ndarray, settings: Settings) -> "Power":
        G = groups.count
        deciding = np.array([said_detectable(m) for m in METRICS])
        fleet_sd = np.array([np.nanmedian(row) if np.isfinite(row).any() else np.nan for row in stats.log_sd])
        members = stats.member.sum(axis=0)
        typical_m = int(np.median(members[members > 0])) if (members > 0).any() else int(deciding.sum())
        F = max(stats.stages.tests, 1)
        alpha = settings.q / (F * (np.where(members > 0, members, typical_m) + 1))
        # a group not judged: its trusted jobs (no metric was tested) and the fleet's spread
        lv = groups.levels
        size_jobs = detectable.sizes(lv.stratum_good[:, 0], lv.stratum_good[:, 1], lv.stratum_group, G)
        judged = stats.member.any(axis=0)
        quiet = np.flatnonzero((group_verdict == NO_CHANGE) | (group_verdict == NOT_ENOUGH_DATA))
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
        return {"groups": int((group_verdict == NOT_ENOUGH_DATA).sum()),
                "jobs_a_side": self.jobs_needed, "shift": detectable.TARGET_SHIFT}


def _json_floats(arr: np.ndarray) -> list[list]:
    """[m, g] floats as lists of JSON values: NaN and infinities are null."""
    a = arr.astype(object)
    a[~np.isfinite(arr)] = None
    return a.tolist()


_METRIC_KEYS = ("id", "baseline_median", "candidate_median", "effect", "ratio", "p_value", "q_value", "verdict",
                "n_baseline", "n_candidate")


@dataclass
class MetricFigures:
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
    def of(cls, stats: Stats, verdict: np.ndarray, expected: np.ndarray) -> "MetricFigures":
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


def group_docs(order: list[int], idents: list[Identity], groups: Groups, group_verdict: np.ndarray,
               changes: list[list[dict]], figures: MetricFigures, stages: twostage.TwoStage,
               power: Power) -> list[dict]:
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


def rpc_histograms(rpc_sums, regressed: list[int]) -> tuple[dict, dict[int, dict]]:
    """The RPC-size histograms per side (sums keyed g * 2 + side): the fleet's (every group of
    the side) and each regressed group's, keyed by its place (regressions come first)."""
    fleet = {name: shares(rpc_sums.ints(slice(i, None, 2))) for i, name in enumerate(SIDES)}
    group_rpc = {k: {name: shares(rpc_sums.ints(2 * g + i)) for i, name in enumerate(SIDES)}
                 for k, g in enumerate(regressed)}
    return fleet, group_rpc


def shares(counts: list[list[int]]) -> dict:
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
