"""The cause side of a group: which client facts (Lustre version, kernel, OS image) and settings
differ between its baseline's and its candidate's trusted jobs, and how a difference is named."""

from __future__ import annotations

import numpy as np

from ..records import jobrow
from .grouping import codes_of

# Attribution: what a client is, per job (the row's columns), and how a difference is named.
CLIENT_FACTS = ("lustre", "kernel", "os")


CAUSE_OF = {"lustre": "lustre", "kernel": "kernel/os", "os": "kernel/os",
            **{s: "settings" for s in jobrow.SETTINGS}}


CAUSE_ORDER = ("lustre", "kernel/os", "settings")


def version_key(v: str):
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in v.replace("-", ".").split(".")]


def _present(keys: np.ndarray, size: int) -> np.ndarray:
    """The distinct values of non-negative int keys below size, sorted."""
    if size <= max(4 * len(keys), 1 << 20):
        return np.flatnonzero(np.bincount(keys, minlength=size))
    return np.unique(keys)


def attribution(table, gid, side, trusted, G):
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
        values = cell_values(t_g * 2 + t_side[keep], t_code[keep], labels,
                             version_key if name in CLIENT_FACTS else None)
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


def cell_values(cell: np.ndarray, code: np.ndarray, labels: list, key) -> dict[int, list]:
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
    codes, labels = codes_of(col)
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
