"""Charts of a comparison's HTML page: RPC-size shares side by side, effect sizes.

Each function takes the comparison's numbers and returns one <svg> element
(present.chartkit: colours, plain-text labels, axes); long names are shortened.
"""

from __future__ import annotations

from matplotlib.ticker import FuncFormatter

from . import metrics as comparemetrics
from matplotlib.figure import Figure

from ..present.chartkit import READ, WRITE, count_label, figure, plain_text, svg
from ..present.text import shorten

BASELINE = "#9a9a9a"                    # the baseline's bars; the candidate's are READ / WRITE



VERDICT_COLOURS = {"regression": "#c0392b", "improvement": "#27ae60", "no_change": "#7f8c8d"}
EFFECT_AXIS = "Cliff's delta of the charted metric\npositive: worse on the candidate"



@plain_text
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
    return svg(fig)



@plain_text
def effect_sizes(bars: list[tuple[str, float, str, str]]) -> str:
    """Per group (name, effect, verdict, metric id): Cliff's delta of its worst metric (of an
    improvement: its most improved), signed so that positive is worse on the candidate, as
    horizontal bars coloured by the group's verdict."""
    n = len(bars)
    fig, ax = figure(8.0, max(2.0, 0.28 * n + 1.0))
    ys = list(range(n))[::-1]
    ax.barh(ys, [b[1] for b in bars], color=[VERDICT_COLOURS.get(b[2], BASELINE) for b in bars])
    ax.set_yticks(ys, [f"{shorten(b[0], 48)} ({b[3]})" for b in bars], fontsize=7)
    ax.set_xlim(-1.05, 1.05)
    ax.axvline(0.0, color="#333333", linewidth=0.8)
    # the axis is as wide as the names leave it, the names taking the left: its label short
    # (the page's caption says the rest) and the legend in one row above the bars, both from
    # the axis's right end, so that every text stays inside the figure
    ax.set_xlabel(EFFECT_AXIS, loc="right")
    from matplotlib.patches import Patch
    handles = [Patch(color=c, label=v.replace("_", " ")) for v, c in VERDICT_COLOURS.items()]
    ax.legend(handles=handles, frameon=False, loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=len(handles),
              fontsize=8)
    return svg(fig)



@plain_text
def effect_histogram(effects: list[tuple[float, str]]) -> str:
    """Every tested group's worst-metric Cliff's delta (of an improvement: its most improved),
    positive: worse on the candidate, as a histogram stacked by the group's verdict: the whole
    run at a glance when there are more groups than bars."""
    import numpy as np
    bins = np.linspace(-1.0, 1.0, 41)
    fig, ax = figure(8.0, 2.6)
    bottom = np.zeros(len(bins) - 1)
    for verdict, colour in VERDICT_COLOURS.items():
        counts, _ = np.histogram([e for e, v in effects if v == verdict], bins=bins)
        ax.bar(bins[:-1], counts, width=bins[1] - bins[0], bottom=bottom, align="edge", color=colour,
               label=f"{verdict.replace('_', ' ')} ({int(counts.sum()):,})")
        bottom += counts
    ax.set_xlim(-1.05, 1.05)
    ax.set_xlabel("Cliff's delta of the group's worst (improvements: best) metric, positive: worse on the candidate")
    ax.set_ylabel("groups")
    ax.yaxis.set_major_formatter(FuncFormatter(count_label))
    ax.legend(frameon=False, loc="upper left", fontsize=8)
    return svg(fig)
