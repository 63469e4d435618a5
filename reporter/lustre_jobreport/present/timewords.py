"""Times and rates in words, and sparklines: what the reports say about *when* a job did its I/O.

Times are relative to the job's start and rounded to the unit a person reads them in ("40 s",
"12 min", "3.5 h"); a span shares its unit when both ends have it ("0–2 min", "2 min–3 h").
A sparkline is one glyph a point, ▁ to █ scaled to the line's own peak (sparkline()).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from fractions import Fraction

from .text import compact, human_bytes

SPARKS = "▁▂▃▄▅▆▇█"
EMPTY = " "            # a point with nothing: apart from ▁, which is "a little"
NEGATIVE = SPARKS[0]   # a point below 0 (a device left out mid-job took its counts back)

# (unit, seconds in it, the largest value shown in it): a time goes in the first unit it fits
_UNITS = (("s", 1.0, 90.0), ("min", 60.0, 90.0), ("h", 3600.0, 48.0), ("d", 86400.0, float("inf")))


def _unit_of(seconds: float) -> tuple[str, float]:
    for unit, size, limit in _UNITS:
        if abs(seconds) < limit * size:
            return unit, size
    return _UNITS[-1][0], _UNITS[-1][1]


def _number(value: float) -> str:
    """Whole numbers as such, others with one decimal, under 10 only (2.5 h; 12 h; 40 s)."""
    if abs(value) >= 9.95 or abs(value - round(value)) < 0.05:
        return f"{round(value):d}"
    return f"{value:.1f}"


def time_words(seconds: float) -> str:
    """40 s, 12 min, 3.5 h, 2.1 d."""
    unit, size = _unit_of(seconds)
    return f"{_number(seconds / size)} {unit}"


def span_words(start_s: float, end_s: float) -> str:
    """A span since the job's start: 0–2 min, 2 min–3 h, 10–12 min; in a smaller unit when its
    ends would read the same (112–117 min, not 1.9–1.9 h)."""
    unit, size = _unit_of(end_s)
    start_unit, _ = _unit_of(start_s)
    if start_s == 0 or start_unit == unit:
        i = [u for u, _, _ in _UNITS].index(unit)
        while i > 0 and _number(start_s / _UNITS[i][1]) == _number(end_s / _UNITS[i][1]):
            i -= 1
        unit, size = _UNITS[i][0], _UNITS[i][1]
        return f"{_number(start_s / size)}–{_number(end_s / size)} {unit}"
    return f"{time_words(start_s)}–{time_words(end_s)}"


def _per_second(amount: int | float, seconds: float) -> Fraction:
    """amount / seconds, exact for counts of any size (a float would overflow past 1e308)."""
    return Fraction(amount) / Fraction(seconds)


def byte_rate(amount: int | float, seconds: float) -> str:
    """2.1 GiB/s (bytes in seconds)."""
    return human_bytes(round(_per_second(amount, seconds))) + "/s" if seconds > 0 else ""


def op_rate(amount: int | float, seconds: float) -> str:
    """880 op/s, 0.3 op/s, 12k op/s."""
    if seconds <= 0:
        return ""
    rate = _per_second(amount, seconds)
    if abs(rate) < Fraction(995, 100):
        return f"{float(rate):.1f} op/s"
    return ("-" if rate < 0 else "") + compact(abs(round(rate))) + " op/s"


def call_time(us: float) -> str:
    """A call's latency from µs, to two figures where it reads so: 0.4 µs, 8.5 µs, 812 µs,
    3.1 ms, 41 ms, 1.2 s, 95 s."""
    for unit, size in (("s", 1e6), ("ms", 1e3)):
        if us >= 0.95 * size:
            return f"{_number(us / size)} {unit}"
    return f"{_number(us)} µs"


def spark(value: int, peak: int) -> str:
    """One point's glyph: its share of the peak to the nearest eighth (half up), at least ▁ for
    any amount; EMPTY for nothing, NEGATIVE below 0. Integers: exact at any size."""
    if value < 0:
        return NEGATIVE
    if value == 0 or peak <= 0:
        return EMPTY
    level = (16 * value + peak) // (2 * peak)
    return SPARKS[min(8, max(1, level)) - 1]


def grouped(values: Sequence[int], per: int) -> list[tuple[int, bool]]:
    """Points summed `per` at a time, from the first: (the sum of their amounts above 0, whether
    one was below 0). A negative point never cancels another's amount."""
    out = []
    for i in range(0, len(values), per):
        group = values[i:i + per]
        out.append((sum(v for v in group if v > 0), any(v < 0 for v in group)))
    return out


def points_per_glyph(points: int, cols: int) -> int:
    """The fewest points a glyph so that `points` fit in `cols` glyphs."""
    return max(1, -(-points // max(1, cols)))


def sparkline(values: Sequence[int], per: int = 1) -> str:
    """The values, `per` points a glyph, each glyph scaled to the line's highest glyph. A glyph
    whose points had nothing but one below 0 is NEGATIVE; one with nothing, EMPTY."""
    groups = grouped(values, per)
    peak = max((amount for amount, _ in groups), default=0)
    return "".join(spark(amount, peak) if amount or not negative else NEGATIVE for amount, negative in groups)


def utc(iso: object) -> datetime | None:
    """A report's UTC time ("2026-11-26T10:00:00Z"), or None if it is not one."""
    if not isinstance(iso, str):
        return None
    try:
        t = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t.astimezone(timezone.utc) if t.tzinfo else t.replace(tzinfo=timezone.utc)


def clock_range(start: datetime, seconds: float) -> str:
    """12:00–15:10 UTC; with seconds for a range under 10 min; with the dates when it spans
    midnight."""
    try:
        end = start + timedelta(seconds=seconds)
    except OverflowError:
        return ""         # past the year 9999: no clock says it
    fmt = "%H:%M:%S" if seconds < 600 else "%H:%M"
    if start.date() != end.date():
        fmt = "%Y-%m-%d " + fmt
    return f"{start.strftime(fmt)}–{end.strftime(fmt)} UTC"
