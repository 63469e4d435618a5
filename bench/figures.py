"""How a benchmark states a figure: its value, then the ratio to what it is measured against (a
floor or peer measured in the same run, or the goal itself), and the goal beside it with `met`
or `MISSED`, so that every line reads the same on any machine:

    fan-out, 1,000 hosts: 3.10 s = 0.62x the 5 s goal, met
    full fetch: 12.3 ms = 1.42x its floor (raw read of the same files, 8.7 ms); goal <= 1.5x, met

A figure without a goal says so ("no goal set"): its ratio is still the thing to watch.
"""

from __future__ import annotations


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def times(ratio: float) -> str:
    """A ratio with two decimals, or two significant digits below 0.1 (0.0043x, not 0.00x)."""
    return f"{ratio:.2f}x" if ratio >= 0.1 else f"{ratio:.2g}x"


def against_goal(what: str, value: str, ratio: float, goal: str, extra: str = "") -> str:
    """A figure whose goal is an absolute value: ratio = value / goal (at most 1 meets it)."""
    return f"{what}: {value} = {times(ratio)} {goal}{extra}, {verdict(ratio <= 1)}"


def against_floor(what: str, value: str, ratio: float, floor: str, goal: float | None = None,
                  extra: str = "") -> str:
    """A figure measured against a floor or peer: ratio = value / floor, the goal a ratio too."""
    said = f"goal <= {goal:g}x, {verdict(ratio <= goal)}" if goal is not None else "no goal set"
    return f"{what}: {value} = {times(ratio)} {floor}{extra}; {said}"
