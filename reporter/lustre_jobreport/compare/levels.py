"""Groups that hold enough jobs: the configured keys first, coarser keys for what is left.

An application runs at many node counts and by several users; split by every configured key
([compare] group_by, default job_name, user, nodes_class) it often leaves a few jobs a side in
each group, too few to judge, while most metrics compare is built on (small-RPC share, mean
RPC size, RPCs per GiB, latency per call) are per-RPC or per-byte shapes that can be compared
across node counts. So a group with fewer than min_jobs trusted jobs on a side is not given up
at once: its jobs are pooled with the other such jobs of the same coarser key ([compare]
coarsen, default nodes_class, then user: level 1 drops nodes_class, level 2 drops user too),
and judged there when the pool is enough, else pooled again, and what is left at the last level
is `not_enough_data` there. A group judged at a level keeps its jobs: every job is in exactly
one group, so the groups' tests stay independent of each other.

The finest groups (every configured key and the filesystem) are the *strata*. A pooled group is
compared stratum by stratum (stats.stratified_tests: van Elteren's test), so a side with more
jobs at one node count cannot pass for a shift; only strata with trusted jobs on both sides can
say anything, so a pool is enough when it holds min_jobs such jobs a side.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Levels:
    """The judged groups over the rows, and the strata they are made of."""
    gid: np.ndarray          # each row's group
    stratum: np.ndarray      # each row's stratum (the finest group: every configured key and fs)
    first: np.ndarray        # [G]: a row of each group
    level: np.ndarray        # [G]: the level the group is judged at (0: every configured key)
    stratum_group: np.ndarray  # [S]: each stratum's group
    stratum_first: np.ndarray  # [S]: a row of each stratum
    keys: list[tuple[int, ...]]  # per level: the indices of the key columns it groups by
    stratum_good: np.ndarray   # [S, 2]: trusted rows of each stratum per side
    comparable: np.ndarray     # [G, 2]: trusted rows per side in the group's strata with both sides

    @property
    def count(self) -> int:
        return len(self.first)

    @property
    def pooled(self) -> np.ndarray:
        """[G]: the group is a pool of several strata (judged above level 0)."""
        return self.level > 0


def level_keys(group_by: tuple[str, ...], coarsen: tuple[str, ...]) -> list[tuple[int, ...]]:
    """Per level, the indices into (*group_by, "fs") of the keys it groups by: level 0 all of
    them, each next level without the next key of coarsen (keys not in group_by are skipped;
    the filesystem is never pooled)."""
    kept = list(range(len(group_by) + 1))
    out = [tuple(kept)]
    for key in coarsen:
        if key in group_by and group_by.index(key) in kept:
            kept.remove(group_by.index(key))
            out.append(tuple(kept))
    return out


def comparable(good: np.ndarray) -> np.ndarray:
    """[S, 2] trusted jobs per stratum and side -> those that a stratified test can compare:
    a stratum's jobs count only when both sides have some there."""
    return np.where((good > 0).all(axis=1)[:, None], good, 0)


def build(parts: list[tuple[np.ndarray, int]], side: np.ndarray, trusted: np.ndarray, min_jobs: int,
          keys: list[tuple[int, ...]], combine) -> Levels:
    """The groups of the rows, level by level.

    parts: per key column ((*group_by, "fs") order) each row's code and how many codes there are;
    combine(parts, n) -> (group id per row, first row of each group) numbers the distinct
    combinations. A stratum whose group at a level holds min_jobs comparable trusted jobs a
    side is judged in that group; the others go on to the next level; at the last level every
    stratum left is in a group (not_enough_data when still too small)."""
    n = len(side)
    stratum, s_first = combine(parts, n)
    S = len(s_first)
    good = np.bincount(stratum[trusted] * 2 + side[trusted], minlength=2 * S).reshape(S, 2)
    usable = comparable(good)
    stratum_group = np.full(S, -1, dtype=np.int64)
    level_of: list[int] = []
    first_of: list[np.ndarray] = []
    left = np.arange(S)
    for lvl, cols in enumerate(keys):
        if len(left) == 0:
            break
        if lvl == 0:
            pool = np.arange(len(left))
        else:
            pool, _ = combine([(parts[k][0][s_first[left]], parts[k][1]) for k in cols], len(left))
        P = int(pool.max()) + 1 if len(pool) else 0
        n_pool = np.zeros((P, 2), dtype=np.int64)
        np.add.at(n_pool, pool, usable[left])      # level 0: a stratum of its own, the same test
        done = (n_pool >= min_jobs).all(axis=1) if lvl + 1 < len(keys) else np.ones(P, dtype=bool)
        taken = done[pool]
        if taken.any():
            ids, inverse = np.unique(pool[taken], return_inverse=True)
            base = len(level_of)
            stratum_group[left[taken]] = base + inverse
            level_of.extend([lvl] * len(ids))
            first_of.append(_first_of_each(inverse, s_first[left[taken]], len(ids)))
        left = left[~taken]
    gid = stratum_group[stratum]
    first = np.concatenate(first_of) if first_of else np.zeros(0, dtype=np.int64)
    per_group = np.zeros((len(level_of), 2), dtype=np.int64)
    np.add.at(per_group, stratum_group, usable)
    return Levels(gid, stratum, first, np.asarray(level_of, dtype=np.int64), stratum_group, s_first, keys,
                  good, per_group)


def _first_of_each(group: np.ndarray, row: np.ndarray, count: int) -> np.ndarray:
    """The smallest row of each group (group ids 0..count-1)."""
    out = np.full(count, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(out, group, row)
    return out
