"""lprocfs counters and histograms as plain JSON-able lists.

A counter is [count, min, max, sum, sumsq] (min is None while count is 0), which is what
lprocfs_stats_collect() sums over CPUs. A histogram is a list of OBD_HIST_MAX bucket counts.
"""

from __future__ import annotations

OBD_HIST_MAX = 32


def new_counter() -> list:
    return [0, None, 0, 0, 0]


def cadd(stats: dict, name: str, value: int, n: int = 1) -> None:
    """lprocfs_counter_add(stats, name, value), n times."""
    if n <= 0:
        return
    c = stats.get(name)
    if c is None:
        c = stats[name] = new_counter()
    c[0] += n
    if c[1] is None or value < c[1]:
        c[1] = value
    if value > c[2]:
        c[2] = value
    c[3] += value * n
    c[4] += value * value * n


def cadd_groups(stats: dict, name: str, groups) -> None:
    """Add samples given as (value, how_many) pairs."""
    for value, n in groups:
        cadd(stats, name, value, n)


def count(stats: dict, name: str) -> int:
    c = stats.get(name)
    return c[0] if c else 0


def total(stats: dict, name: str) -> int:
    c = stats.get(name)
    return c[3] if c else 0


def new_hist() -> list[int]:
    return [0] * OBD_HIST_MAX


def tally(hist: list[int], value: int) -> None:
    """lprocfs_oh_tally(): clamp to the last bucket."""
    hist[min(value, OBD_HIST_MAX - 1)] += 1


def tally_log2(hist: list[int], value: int) -> None:
    """lprocfs_oh_tally_log2(): bucket fls(value - 1), i.e. ceil(log2(value)).

    So the row labelled 2^i counts values in (2^(i-1), 2^i]: label 4 = 3 or 4 pages.
    (Source-verified in lprocfs_status.c; older loop form gives the same result.)
    """
    b = (value - 1).bit_length() if value > 0 else 0
    tally(hist, b)


def split_even(total_value: int, n: int) -> list[tuple[int, int]]:
    """n integer samples summing to total_value, as (value, count) groups."""
    if n <= 0:
        return []
    q, r = divmod(total_value, n)
    groups = []
    if n - r:
        groups.append((q, n - r))
    if r:
        groups.append((q + 1, r))
    return groups
