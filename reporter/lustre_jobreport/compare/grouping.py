"""The groups of "the same job": rows coded by the group keys and the filesystem, combined into
group ids, coarser levels for what is too small (levels.build), and each group's jobs per side."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import levels as grouplevels
from .metrics import Columns
from .settings import Settings


def nodes_class(num_nodes: np.ndarray, n_hosts: np.ndarray) -> np.ndarray:
    """Node-count class k (1 node: 0, 2-3: 1, 4-7: 2, ...) from num_nodes, else n_hosts; -1 unknown."""
    n = np.where(num_nodes > 0, num_nodes, n_hosts)
    known = n >= 1
    _, exp = np.frexp(np.where(known, n, 1.0))      # n = m * 2**exp, m in [0.5, 1)
    return np.where(known, exp - 1, -1).astype(np.int64)


def class_label(k: int) -> str | None:
    return None if k < 0 else "1" if k == 0 else f"{1 << k}-{(1 << (k + 1)) - 1}"


def codes_of(column) -> tuple[np.ndarray, list]:
    """A column as int codes (null: -1) and the value of each code."""
    import pyarrow as pa
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    enc = arr.dictionary_encode()
    codes = enc.indices.to_numpy(zero_copy_only=False)
    codes = np.where(np.isnan(codes), -1, codes).astype(np.int64) if codes.dtype.kind == "f" \
        else codes.astype(np.int64)
    return codes, enc.dictionary.to_pylist()


def combine(parts: list[tuple[np.ndarray, int]], n: int) -> tuple[np.ndarray, np.ndarray]:
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
    return dense(gid)


def dense(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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


def flag(column) -> np.ndarray:
    """A bool column as a numpy bool array, null as False (an unknown trust is no trust)."""
    import pyarrow.compute as pc
    return np.asarray(pc.fill_null(column, False).to_numpy(zero_copy_only=False), dtype=bool) \
        if len(column) else np.zeros(0, dtype=bool)


@dataclass
class Groups:
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
            codes, lab = codes_of(table[key])
            parts.append((codes, len(lab)))
            labels.append(lab)
    return parts, labels


def groups_of(table, cols: Columns, side: np.ndarray, settings: Settings) -> Groups:
    """The rows in groups (levels.build), and their jobs per side."""
    parts, labels = _key_codes(table, cols, (*settings.group_by, "fs"))
    trusted = flag(table["trusted"])
    lv = grouplevels.build(parts, side, trusted, settings.min_jobs,
                           grouplevels.level_keys(settings.group_by, settings.coarsen), combine)
    n_groups = lv.count
    keys = lv.gid * 2 + side
    jobs = np.bincount(keys, minlength=2 * n_groups).reshape(n_groups, 2)
    good = np.bincount(keys[trusted], minlength=2 * n_groups).reshape(n_groups, 2)
    enough = (lv.comparable >= settings.min_jobs).all(axis=1)     # level 0: its own jobs, both sides
    return Groups(lv.gid, lv.first, [codes for codes, _ in parts], labels, side, trusted, keys, jobs, good,
                  enough, lv)
