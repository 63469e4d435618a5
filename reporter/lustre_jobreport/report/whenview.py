"""When a job did its I/O, as the reports say it: the text's "When" block under each filesystem
of the report's "timeline" (DESIGN §3.1), the timeline's own note when it has none, and what
the HTML's chart of it draws (chart_data) and says beside it (heading_facts, words).

A block is at most MAX_LINES lines of at most WIDTH columns:

      When (20 s a point, 12:00–15:10 UTC):
        read  ▁▁▂█▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▁▁▁▁▁▁▁  peak 2.1 GiB/s
        meta  █▂▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁  peak 880 op/s
        latency: read 812 µs a call (slowest point 3.1 ms)
        0–2 min start-up burst: 84 % of the opens, 61 % of the small RPCs
        2 min–3 h steady read, 1.8 GiB/s
        checkpoints: 52 GiB every 20 min, 9 times

a sparkline for each channel that moved (glyphs scaled to the line's own peak, points paired
when there are more than fit), the calls' mean latency where the clients count it and the
block has room, then the phases in words (times since the job's start) and the periodic bursts. The block takes the document as it is (the caller made it displayable); a
timeline of another shape than the contract's is not shown rather than shown wrong.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from ..present.text import WIDTH, columns, human_bytes, shorten
from ..present.timewords import (byte_rate, call_time, clock_range, op_rate, points_per_glyph, span_words,
                                 sparkline, time_words, utc)

MAX_LINES = 10            # lines of a filesystem's block, its heading included
MAX_SPARK = 60            # glyphs of a sparkline at most
INDENT = "    "           # a block's lines under its "  When" heading
# The sparklines: (label, the timeline's array, bytes or operations)
CHANNELS = (("read", "read_bytes", True), ("write", "write_bytes", True), ("meta", "metadata_ops", False))
CHANNEL_WORDS = {"read_bytes": "read", "write_bytes": "write", "metadata_ops": "metadata"}
PERIODIC_WORDS = {"write_bytes": "checkpoints", "read_bytes": "periodic reads",
                  "metadata_ops": "periodic metadata bursts"}
# A phase's share of the job's opens (small RPCs) is said when it is at least SHARE_SAID of them
# and at least SHARE_OVER_TIME times the phase's share of the job's time: where it tells
# something (most of the opens in the first 2 minutes), not where the phase is most of the job.
SHARE_SAID = 0.25
SHARE_OVER_TIME = 2.0
SHARED_COUNTS = (("opens", "opens"), ("small_rpcs", "small RPCs"))
LATENCY_DIRECTIONS = ("read", "write")      # the timeline's <d>_latency_us and <d>_latency_us_mean


@dataclass(frozen=True)
class Shape:
    """What a block needs of the timeline as a whole."""
    width_s: float
    points: int
    elapsed_s: float


def _ints(values: object, points: int) -> list[int] | None:
    """values when they are a list of `points` integers (the contract's arrays), else None."""
    if (isinstance(values, list) and len(values) == points
            and all(isinstance(v, int) and not isinstance(v, bool) for v in values)):
        return values
    return None


def _means(values: object, points: int) -> list[float | None] | None:
    """A latency array of the contract (`points` means in µs, each a number not below 0 or null)
    as floats and Nones; None when it is not one, or has no mean at all."""
    if not isinstance(values, list) or len(values) != points:
        return None
    out = [None if v is None else _number(v) for v in values]
    if any(v is not None and (m is None or m < 0) for v, m in zip(values, out)) or all(m is None for m in out):
        return None
    return out


def _number(x: object) -> float | None:
    """A finite number of the document as a float, else None (JSON may hold Infinity, NaN)."""
    if not isinstance(x, (int, float)) or isinstance(x, bool):
        return None
    try:
        value = float(x)
    except OverflowError:
        return None
    return value if math.isfinite(value) else None


def note_line(doc: dict) -> str:
    """ "When: <the timeline's note>" in one line, or "" when it has none."""
    timeline = doc.get("timeline")
    note = timeline.get("note") if isinstance(timeline, dict) else None
    if not isinstance(note, str) or not note:
        return ""
    return "When: " + shorten(" ".join(note.split()), WIDTH - len("When: "))


def _shape(timeline: object, elapsed: object) -> Shape | None:
    if not isinstance(timeline, dict) or timeline.get("note"):
        return None
    width, points = _number(timeline.get("width_s")), timeline.get("points")
    if width is None or width <= 0 or not isinstance(points, int) or points <= 0:
        return None
    elapsed_s = _number(elapsed)
    elapsed_s = elapsed_s if elapsed_s is not None and elapsed_s > 0 else points * width
    return Shape(width, points, elapsed_s)


def _of(doc: dict, name: str) -> tuple[Shape, dict, dict] | None:
    """The document's timeline, its shape and filesystem `name`'s entry; None when it has no
    timeline of the contract's shape, or none of that filesystem."""
    timeline = doc.get("timeline")
    shape = _shape(timeline, (doc.get("job") or {}).get("elapsed_s"))
    filesystems = timeline.get("filesystems") if shape else None
    fs = filesystems.get(name) if isinstance(filesystems, dict) else None
    return (shape, timeline, fs) if isinstance(fs, dict) else None


def _facts(shape: Shape, timeline: dict, fs: dict, per: int) -> list[str]:
    """What a heading says of the timeline: a glyph's (a point's) width, its span in UTC, the
    hosts it is of, its gaps, whether its arrays are whole."""
    facts = [f"{time_words(shape.width_s * per)} a point"]
    start = utc(timeline.get("start"))
    span = clock_range(start, shape.width_s * shape.points) if start is not None else ""
    if span:
        facts.append(span)
    without, hosts = timeline.get("hosts_without"), timeline.get("hosts")
    if isinstance(without, list) and without and isinstance(hosts, int):
        facts.append(f"{hosts} of {hosts + len(without)} hosts")
    gaps = timeline.get("gaps")
    if isinstance(gaps, int) and not isinstance(gaps, bool) and gaps > 0:
        # a point some host had no sample in: its I/O is in a later point, whose rate it raises
        facts.append(f"{gaps:,} gap{'s' * (gaps != 1)}")
    if fs.get("sums_to_totals") is False:
        facts.append("partial")        # TIMELINE_PARTIAL under Not trusted says which values and why
    return facts


def _heading(shape: Shape, timeline: dict, fs: dict, per: int) -> str:
    return f"  When ({', '.join(_facts(shape, timeline, fs, per))}):"


def _peak_words(values: list[int], width_s: float, is_bytes: bool) -> str:
    peak = max(values)
    return "peak " + (byte_rate(peak, width_s) if is_bytes else op_rate(peak, width_s)) if peak > 0 else ""


def _spark_lines(shape: Shape, fs: dict) -> tuple[list[str], int]:
    """The channels that moved, one line each, and the points a glyph they were drawn at."""
    rows = []
    for label, key, is_bytes in CHANNELS:
        values = _ints(fs.get(key), shape.points)
        if values is not None and any(values):
            rows.append((label, values, _peak_words(values, shape.width_s, is_bytes)))
    if not rows:
        return [], 1
    room = WIDTH - len(INDENT) - len("write ") - max(len("  " + peak) for _, _, peak in rows)
    per = points_per_glyph(shape.points, min(MAX_SPARK, room))
    return [f"{INDENT}{label:<6}{sparkline(values, per)}  {peak}".rstrip() for label, values, peak in rows], per


def _amount(channel: str, n: int) -> str:
    return human_bytes(n) if channel != "metadata_ops" else f"{n:,} ops"


def _percent(part: int, whole: int) -> int:
    return (200 * part + whole) // (2 * whole)


def _shares(phase: dict, totals: dict[str, int], time_share: float) -> list[str]:
    """ "84 % of the opens" for each count the phase holds a telling share of."""
    out = []
    for key, words in SHARED_COUNTS:
        n, whole = phase.get(key), totals.get(key, 0)
        if not isinstance(n, int) or whole <= 0 or n <= 0:
            continue
        share = Fraction(n, whole)
        if share >= Fraction(SHARE_SAID) and share >= Fraction(SHARE_OVER_TIME * time_share):
            out.append(f"{_percent(n, whole)} % of the {words}")
    return out


def _phase_line(phase: dict, totals: dict[str, int], elapsed_s: float) -> str | None:
    start, end, kind = _number(phase.get("start_s")), _number(phase.get("end_s")), phase.get("kind")
    if start is None or end is None or end <= start or not isinstance(kind, str):
        return None
    channel = phase.get("channel")
    amount = phase.get(channel) if isinstance(channel, str) else None
    what = CHANNEL_WORDS.get(channel, "") if isinstance(channel, str) else ""
    line = f"{span_words(start, end)} {shorten(kind, 20)}"
    shares = _shares(phase, totals, (end - start) / elapsed_s)
    if kind == "steady" and what and isinstance(amount, int):
        rate = byte_rate(amount, end - start) if channel != "metadata_ops" else op_rate(amount, end - start)
        line += f" {what}, {rate}"
    elif kind != "idle" and what and isinstance(amount, int) and not shares:
        line += f", {what} {_amount(channel, amount)}"
    return _with_shares(line, shares)


def _with_shares(line: str, shares: list[str]) -> str:
    """The phase's line and its shares within the block's width: the shares said shorter ("of
    opens"), then the last ones left out, never a share cut in its middle."""
    room = WIDTH - columns(INDENT)
    for said in (shares, [s.replace(" of the ", " of ", 1) for s in shares]):
        if columns(full := line + (": " + ", ".join(said) if said else "")) <= room:
            return full
    while said and columns(line + ": " + ", ".join(said)) > room:
        said = said[:-1]
    return line + (": " + ", ".join(said) if said else "")


def _periodic_line(p: dict) -> str | None:
    channel, period, count, mean = p.get("channel"), _number(p.get("period_s")), p.get("count"), _number(
        p.get("mean_amount"))
    if channel not in PERIODIC_WORDS or period is None or not isinstance(count, int) or mean is None:
        return None
    return f"{PERIODIC_WORDS[channel]}: {_amount(channel, round(mean))} every {time_words(period)}, {count} times"


def _weight(phase: dict, totals: dict[str, int]) -> Fraction:
    """How much of the job's I/O a phase holds: its shares of the three channels, summed
    (exact: a document's counts may be beyond floats)."""
    return sum((Fraction(phase[k], totals[k]) for k in CHANNEL_WORDS
                if isinstance(phase.get(k), int) and not isinstance(phase.get(k), bool) and totals.get(k, 0) > 0),
               Fraction(0))


_COUNTS = (*CHANNEL_WORDS, "opens", "small_rpcs", "rpcs")


def _bridged(phases: list[dict], periodic: set) -> list[dict]:
    """The phases without the bursts a periodic line tells of; the phases of one kind and
    channel such a burst split are one again, holding the burst's counts too (its span is
    theirs: "steady read" from the first to the last, its rate over all of it)."""
    out: list[dict] = []
    bridge: dict | None = None          # the periodic bursts since the last phase kept
    for p in phases:
        if p.get("kind") == "burst" and p.get("channel") in periodic:
            bridge = _added(bridge or {}, p)
            continue
        last = out[-1] if out else None
        if bridge is not None and last is not None and \
                (last.get("kind"), last.get("channel")) == (p.get("kind"), p.get("channel")):
            out[-1] = dict(_added(_added(last, bridge), p), start_s=last.get("start_s"), end_s=p.get("end_s"))
        else:
            out.append(p)
        bridge = None
    return out


def _brief_idle(phase: dict, width_s: float) -> bool:
    """An idle phase shorter than a point: the moments between the prolog and the first sample,
    or the last sample and the epilog, which tell the user nothing."""
    start, end = _number(phase.get("start_s")), _number(phase.get("end_s"))
    return phase.get("kind") == "idle" and start is not None and end is not None and end - start < width_s


def _added(a: dict, b: dict) -> dict:
    """a with b's counts added (a count that is not an integer in either is left as a's)."""
    out = dict(a)
    for k in _COUNTS:
        x, y = a.get(k, 0), b.get(k)
        if isinstance(x, int) and isinstance(y, int) and not isinstance(x, bool) and not isinstance(y, bool):
            out[k] = x + y
    return out


def _phase_lines(fs: dict, shape: Shape, room: int) -> list[str]:
    """The phases in time order, at most `room` lines: bursts a periodic line tells of left out
    (the phases they split, one again), idle moments shorter than a point too; when more remain, those holding the least of the job's
    I/O give way to a line saying so."""
    periodic = {p.get("channel") for p in fs.get("periodic") or [] if isinstance(p, dict)}
    totals = {k: sum(v for v in (_ints(fs.get(k), shape.points) or []) if v > 0)
              for k in (*CHANNEL_WORDS, "opens", "small_rpcs")}
    phases = [p for p in _bridged([p for p in fs.get("phases") or [] if isinstance(p, dict)], periodic)
              if not _brief_idle(p, shape.width_s)]
    lines = [(i, line, _weight(p, totals)) for i, p in enumerate(phases)
             if (line := _phase_line(p, totals, shape.elapsed_s)) is not None]
    if len(lines) <= room:
        return [INDENT + line for _, line, _ in lines]
    kept = sorted(sorted(lines, key=lambda t: -t[2])[:max(0, room - 1)])
    more = len(lines) - len(kept)
    return [INDENT + line for _, line, _ in kept] + [f"{INDENT}and {more} more phase{'s' * (more > 1)}: "
                                                     "see the HTML report"]


def _latency_line(fs: dict, points: int) -> str | None:
    """ "latency: read 812 µs a call (slowest point 3.1 ms), write 2.1 ms (41 ms)": each
    direction whose calls' mean latency the timeline has, with its highest point's; None when
    it has none."""
    said = []
    for d in LATENCY_DIRECTIONS:
        mean, means = _number(fs.get(f"{d}_latency_us_mean")), _means(fs.get(f"{d}_latency_us"), points)
        if mean is None or mean < 0 or means is None:
            continue
        slowest = call_time(max(m for m in means if m is not None))
        said.append(f"{d} {call_time(mean)} ({slowest})" if said else
                    f"{d} {call_time(mean)} a call (slowest point {slowest})")
    return INDENT + "latency: " + ", ".join(said) if said else None


def block(doc: dict, name: str, full: bool = True) -> list[str]:
    """The "When" lines of filesystem `name` ([] when the report has no timeline of it); only
    the heading and the sparklines unless `full`. The calls' latency, where the timeline has it,
    is a line under the sparklines only when the phases and periodic bursts leave room for it:
    it never takes a phase's line."""
    found = _of(doc, name)
    if found is None:
        return []
    shape, timeline, fs = found
    sparks, per = _spark_lines(shape, fs)
    if not sparks:
        return _fitted([_heading(shape, timeline, fs, 1), INDENT + "no I/O in any point"])
    lines = [_heading(shape, timeline, fs, per), *sparks]
    if not full:
        return _fitted(lines)
    periodic = [line for p in fs.get("periodic") or [] if isinstance(p, dict)
                and (line := _periodic_line(p)) is not None]
    periodic = [INDENT + line for line in periodic[:max(0, MAX_LINES - len(lines) - 1)]]
    phases = _phase_lines(fs, shape, MAX_LINES - len(lines) - len(periodic))
    latency = _latency_line(fs, shape.points)
    if latency is not None and len(lines) + len(phases) + len(periodic) < MAX_LINES:
        lines.append(latency)
    return _fitted([*lines, *phases, *periodic])


def _fitted(lines: list[str]) -> list[str]:
    """Each line in WIDTH columns: one too long (a long kind or heading) loses its middle."""
    return [line if columns(line) <= WIDTH else shorten(line, WIDTH) for line in lines]


def chart_data(doc: dict, name: str) -> dict | None:
    """Filesystem `name`'s timeline as the HTML chart draws it: the read, write and metadata
    arrays, the RPC sizes' (pages -> array) whose keys are page counts and arrays of the
    timeline's length, the mean latency of a read and a write call per point (µs, None where a
    point has none; the array None where the timeline has none), its phases of finite times
    (kind, start_s, end_s); None when the report has no timeline of it of that shape."""
    found = _of(doc, name)
    if found is None:
        return None
    shape, timeline, fs = found
    arrays = {k: _ints(fs.get(k), shape.points) for k in ("read_bytes", "write_bytes", "metadata_ops")}
    if any(v is None for v in arrays.values()):
        return None
    for direction in ("rpc_read", "rpc_write"):
        sizes = fs.get(direction) if isinstance(fs.get(direction), dict) else {}
        arrays[direction] = {k: v for k, v in sizes.items()
                             if k.isdigit() and int(k) > 0 and _ints(v, shape.points) is not None}
    offset = _number(timeline.get("begin_offset_s"))
    phases = [{"kind": p.get("kind") if isinstance(p.get("kind"), str) else "", "start_s": a, "end_s": b}
              for p in fs.get("phases") or [] if isinstance(p, dict)
              and (a := _number(p.get("start_s"))) is not None and (b := _number(p.get("end_s"))) is not None and b > a]
    latency = {f"{d}_latency_us": _means(fs.get(f"{d}_latency_us"), shape.points) for d in LATENCY_DIRECTIONS}
    return {**arrays, **latency, "phases": phases,
            "width_s": shape.width_s, "offset_s": offset or 0.0, "elapsed_s": shape.elapsed_s}


def words(doc: dict, name: str) -> list[str]:
    """The block's phases and periodic bursts without the heading and sparklines (the HTML draws
    those as a chart), unindented."""
    return [line.strip() for line in block(doc, name)[len(block(doc, name, full=False)):]]


def heading_facts(doc: dict, name: str) -> str:
    """The heading's facts for the HTML's chart, which draws every point ("" without a timeline
    of the filesystem)."""
    found = _of(doc, name)
    return ", ".join(_facts(*found, 1)) if found else ""
