"""Charts of a job's HTML report: its RPC sizes, bytes per OST and per host.

Each function takes the report document's numbers and returns one <svg> element
(present.chartkit: colours, plain-text labels, axes); long names are shortened.
"""

from __future__ import annotations

from matplotlib.ticker import FuncFormatter, LogFormatter

from ..present.chartkit import (LABEL_COLS, READ, WRITE, byte_unit, count_label, figure, floats, plain_text,
                                 set_xlabels, svg)
from ..present.text import shorten


@plain_text
def rpc_histogram(rpc: dict[str, dict[str, int]], labels: list[str]) -> str:
    """Read and write RPCs per size bucket, side by side, log scale (4K and 1M counts differ 1000x)."""
    fig, ax = figure(max(5.0, 0.55 * len(labels) + 1.5))
    xs = range(len(labels))
    reads = floats((rpc.get("read") or {}).get(l) for l in labels)
    writes = floats((rpc.get("write") or {}).get(l) for l in labels)
    ax.bar([x - 0.2 for x in xs], reads, 0.4, color=READ, label="read")
    ax.bar([x + 0.2 for x in xs], writes, 0.4, color=WRITE, label="write")
    set_xlabels(ax, labels)
    if any(reads) or any(writes):
        ax.set_yscale("log")
        # a range within a decade has its labels on minor ticks: plain numbers there too
        ax.yaxis.set_minor_formatter(LogFormatter(labelOnlyBase=False))
    ax.yaxis.set_major_formatter(FuncFormatter(count_label))
    ax.set_xlabel("RPC size (up to)")
    ax.set_ylabel("RPCs")
    ax.legend(frameon=False)
    return svg(fig)


def _stacked(ax, names: list[str], reads: list[float], writes: list[float]) -> None:
    """Read and write bars stacked per name, in the binary unit of the tallest, readable x labels,
    the legend outside the bars."""
    scale, unit = byte_unit(max((r + w for r, w in zip(reads, writes)), default=0.0))
    reads, writes = [r / scale for r in reads], [w / scale for w in writes]
    xs = list(range(len(names)))
    ax.bar(xs, reads, color=READ, label="read")
    ax.bar(xs, writes, bottom=reads, color=WRITE, label="write")
    ax.set_ylabel(unit)
    n = len(names)
    set_xlabels(ax, [shorten(name, LABEL_COLS) for name in names])
    ax.tick_params(axis="x", labelrotation=90 if n > 12 else 45 if n > 4 else 0, labelsize=8)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right" if 4 < n <= 12 else "center")
    ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))


@plain_text
def ost_bytes(osts: dict[str, dict]) -> str:
    """Bytes read and written through each OST the job used (stacked)."""
    names = list(osts)
    fig, ax = figure(max(5.0, 0.35 * len(names) + 1.5))
    _stacked(ax, names, floats(osts[o].get("read_bytes") for o in names),
             floats(osts[o].get("write_bytes") for o in names))
    return svg(fig)


@plain_text
def host_spread(hosts: dict[str, dict]) -> str:
    """Bytes per host, largest first (the first 64 hosts; the spread line gives the rest)."""
    moved = sorted(((h, v.get("read_bytes") or 0, v.get("write_bytes") or 0) for h, v in hosts.items()),
                   key=lambda t: -(t[1] + t[2]))[:64]
    fig, ax = figure(max(5.0, 0.3 * len(moved) + 1.5))
    _stacked(ax, [h for h, _, _ in moved], floats(r for _, r, _ in moved), floats(w for _, _, w in moved))
    return svg(fig)
