"""Charts of the HTML report as inline SVG (matplotlib, no pyplot, no network, text as paths).

Each function takes the report document's numbers and returns one <svg> element. Colours are
fixed so a test can find the bars in a screenshot. Labels are plain text: names come from hosts
and agents, so math text ($...$) is off for every text a chart draws, and long names are
shortened. Counts are exact Python ints of any size; they are drawn as floats.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable, Iterable

import matplotlib
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogFormatter

from ..compare import metrics as comparemetrics
from .view import BYTE_UNITS, SI_SUFFIXES, shorten

READ, WRITE = "#3b6fd4", "#e08a1e"     # read / write bars everywhere
LABEL_COLS = 24                        # a longer x label is shortened around a "…"
FLOAT_CAP = 1e300                      # beyond floats (and stacked twice): drawn at this height
# Local to each chart (matplotlib.rc_context), never set globally: names are not math, and no
# site matplotlibrc turns labels over to LaTeX.
PLAIN_TEXT = {"text.parse_math": False, "text.usetex": False}


def _plain_text(chart: Callable[..., str]) -> Callable[..., str]:
    """Draws the chart, tick labels made at drawing time included, with PLAIN_TEXT in force."""
    @functools.wraps(chart)
    def drawn(*args, **kwargs) -> str:
        with matplotlib.rc_context(PLAIN_TEXT):
            return chart(*args, **kwargs)
    return drawn


def _svg(fig: Figure) -> str:
    buf = io.StringIO()
    # no metadata block: no date (reproducible output) and no RDF/creator links in the page
    FigureCanvasSVG(fig).print_svg(buf, metadata={"Creator": None, "Date": None, "Format": None, "Type": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]   # drop the XML prolog and DOCTYPE: this goes inline


def _figure(width: float, height: float = 2.6) -> tuple[Figure, object]:
    fig = Figure(figsize=(width, height), dpi=96)
    fig.set_layout_engine("tight")
    ax = fig.add_subplot()
    ax.spines[["top", "right"]].set_visible(False)
    return fig, ax


def _floats(values: Iterable[int | float | None]) -> list[float]:
    """Counts as floats for drawing: None is 0, an int beyond the float range is capped."""
    return [float(min(v or 0, FLOAT_CAP)) for v in values]


def _count(x: float, _pos: object = None) -> str:
    for power in range(len(SI_SUFFIXES), 0, -1):
        if x >= 10.0 ** (3 * power):
            return f"{x / 10.0 ** (3 * power):g}{SI_SUFFIXES[power - 1]}"
    return f"{x:g}"


def _byte_unit(peak: float) -> tuple[float, str]:
    """The binary unit the largest bar reads best in: bytes up to YiB."""
    for power in range(len(BYTE_UNITS) - 1, 0, -1):
        if peak >= 1024.0 ** power:
            return 1024.0 ** power, BYTE_UNITS[power]
    return 1.0, BYTE_UNITS[0]


@_plain_text
def rpc_histogram(rpc: dict[str, dict[str, int]], labels: list[str]) -> str:
    """Read and write RPCs per size bucket, side by side, log scale (4K and 1M counts differ 1000x)."""
    fig, ax = _figure(max(5.0, 0.55 * len(labels) + 1.5))
    xs = range(len(labels))
    reads = _floats((rpc.get("read") or {}).get(l) for l in labels)
    writes = _floats((rpc.get("write") or {}).get(l) for l in labels)
    ax.bar([x - 0.2 for x in xs], reads, 0.4, color=READ, label="read")
    ax.bar([x + 0.2 for x in xs], writes, 0.4, color=WRITE, label="write")
    ax.set_xticks(list(xs), labels)
    if any(reads) or any(writes):
        ax.set_yscale("log")
        # a range within a decade has its labels on minor ticks: plain numbers there too
        ax.yaxis.set_minor_formatter(LogFormatter(labelOnlyBase=False))
    ax.yaxis.set_major_formatter(FuncFormatter(_count))
    ax.set_xlabel("RPC size (up to)")
    ax.set_ylabel("RPCs")
    ax.legend(frameon=False)
    return _svg(fig)


def _stacked(ax, names: list[str], reads: list[float], writes: list[float]) -> None:
    """Read and write bars stacked per name, in the binary unit of the tallest, readable x labels,
    the legend outside the bars."""
    scale, unit = _byte_unit(max((r + w for r, w in zip(reads, writes)), default=0.0))
    reads, writes = [r / scale for r in reads], [w / scale for w in writes]
    xs = list(range(len(names)))
    ax.bar(xs, reads, color=READ, label="read")
    ax.bar(xs, writes, bottom=reads, color=WRITE, label="write")
    ax.set_ylabel(unit)
    n = len(names)
    ax.set_xticks(xs, [shorten(name, LABEL_COLS) for name in names])
    ax.tick_params(axis="x", labelrotation=90 if n > 12 else 45 if n > 4 else 0, labelsize=8)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right" if 4 < n <= 12 else "center")
    ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))


@_plain_text
def ost_bytes(osts: dict[str, dict]) -> str:
    """Bytes read and written through each OST the job used (stacked)."""
    names = list(osts)
    fig, ax = _figure(max(5.0, 0.35 * len(names) + 1.5))
    _stacked(ax, names, _floats(osts[o].get("read_bytes") for o in names),
             _floats(osts[o].get("write_bytes") for o in names))
    return _svg(fig)


@_plain_text
def host_spread(hosts: dict[str, dict]) -> str:
    """Bytes per host, largest first (the first 64 hosts; the spread line gives the rest)."""
    moved = sorted(((h, v.get("read_bytes") or 0, v.get("write_bytes") or 0) for h, v in hosts.items()),
                   key=lambda t: -(t[1] + t[2]))[:64]
    fig, ax = _figure(max(5.0, 0.3 * len(moved) + 1.5))
    _stacked(ax, [h for h, _, _ in moved], _floats(r for _, r, _ in moved), _floats(w for _, _, w in moved))
    return _svg(fig)


# -- compare (lustre-jobreport compare, comparerender) ------------------------------------------

BASELINE = "#9a9a9a"                    # the baseline's bars; the candidate's are READ / WRITE
VERDICT_COLOURS = {"regression": "#c0392b", "improvement": "#27ae60", "no_change": "#7f8c8d"}


@_plain_text
def compare_rpc_shares(shares: dict[str, dict[str, dict[str, float | None]]]) -> str:
    """A group's RPC-size histograms, read and write side by side, baseline beside candidate,
    as shares of the side's RPCs per bucket (up to the largest non-empty bucket, at least 1M).
    shares: direction -> side -> bucket -> share. Fixed margins, no layout engine: a page
    draws up to a dozen of these."""
    fig = Figure(figsize=(10.0, 2.8), dpi=96)
    fig.subplots_adjust(left=0.07, right=0.99, bottom=0.2, top=0.95, wspace=0.18)
    for n, direction in enumerate(("read", "write")):
        ax = fig.add_subplot(1, 2, n + 1)
        ax.spines[["top", "right"]].set_visible(False)
        base = shares.get(direction, {}).get("baseline") or {}
        cand = shares.get(direction, {}).get("candidate") or {}
        labels = comparemetrics.shown_buckets((base, cand))
        xs = range(len(labels))
        ax.bar([x - 0.2 for x in xs], [100.0 * (base.get(l) or 0) for l in labels], 0.4, color=BASELINE,
               label="baseline")
        ax.bar([x + 0.2 for x in xs], [100.0 * (cand.get(l) or 0) for l in labels], 0.4,
               color=READ if direction == "read" else WRITE, label="candidate")
        ax.set_xticks(list(xs), [l.replace("over_64M", ">64M") for l in labels], fontsize=8)
        ax.set_ylim(0, 100)
        ax.set_xlabel(f"{direction} RPC size (up to)")
        ax.set_ylabel(f"% of {direction} RPCs")
        ax.legend(frameon=False, fontsize=8)
    return _svg(fig)


@_plain_text
def effect_sizes(bars: list[tuple[str, float, str, str]]) -> str:
    """Per group (name, effect, verdict, metric id): Cliff's delta of its worst metric (of an
    improvement: its most improved), signed so that positive is worse on the candidate, as
    horizontal bars coloured by the group's verdict."""
    n = len(bars)
    fig, ax = _figure(8.0, max(2.0, 0.28 * n + 1.0))
    ys = list(range(n))[::-1]
    ax.barh(ys, [b[1] for b in bars], color=[VERDICT_COLOURS.get(b[2], BASELINE) for b in bars])
    ax.set_yticks(ys, [f"{shorten(b[0], 48)} ({b[3]})" for b in bars], fontsize=7)
    ax.set_xlim(-1.05, 1.05)
    ax.axvline(0.0, color="#333333", linewidth=0.8)
    ax.set_xlabel("Cliff's delta of the group's worst (improvements: best) metric, positive: worse on the candidate")
    from matplotlib.patches import Patch
    handles = [Patch(color=c, label=v.replace("_", " ")) for v, c in VERDICT_COLOURS.items()]
    ax.legend(handles=handles, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    return _svg(fig)


@_plain_text
def effect_histogram(effects: list[tuple[float, str]]) -> str:
    """Every tested group's worst-metric Cliff's delta (of an improvement: its most improved),
    positive: worse on the candidate, as a histogram stacked by the group's verdict: the whole
    run at a glance when there are more groups than bars."""
    import numpy as np
    bins = np.linspace(-1.0, 1.0, 41)
    fig, ax = _figure(8.0, 2.6)
    bottom = np.zeros(len(bins) - 1)
    for verdict, colour in VERDICT_COLOURS.items():
        counts, _ = np.histogram([e for e, v in effects if v == verdict], bins=bins)
        ax.bar(bins[:-1], counts, width=bins[1] - bins[0], bottom=bottom, align="edge", color=colour,
               label=f"{verdict.replace('_', ' ')} ({int(counts.sum()):,})")
        bottom += counts
    ax.set_xlim(-1.05, 1.05)
    ax.set_xlabel("Cliff's delta of the group's worst (improvements: best) metric, positive: worse on the candidate")
    ax.set_ylabel("groups")
    ax.yaxis.set_major_formatter(FuncFormatter(_count))
    ax.legend(frameon=False, loc="upper left", fontsize=8)
    return _svg(fig)
