"""Charts of a job's HTML report: its RPC sizes, bytes per OST and per host, and when it did
its I/O (a filesystem's timeline: rates, the calls' mean latency, metadata operations and RPC
sizes over time, phases shaded).

Each function takes the report document's numbers and returns one <svg> element
(present.chartkit: colours, plain-text labels, axes); long names are shortened.
"""

from __future__ import annotations

import matplotlib
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogFormatter

from ..present.chartkit import (LABEL_COLS, READ, WRITE, byte_unit, count_label, figure, floats, plain_label,
                                 plain_text, set_xlabels, svg)
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


# -- when: a filesystem's timeline ------------------------------------------------------------------

PHASE_SHADE = {"start-up burst": "#d9e4f5", "burst": "#f6e2c6", "final flush": "#f6e2c6", "steady": "#eeeeee",
               "idle": "#ffffff"}


def _size_label(pages: int, pagesize: int | None) -> str:
    """An RPC size class: 4K, 1M ... with the clients' page size, else pages."""
    if not pagesize:
        return f"{pages} page{'s' * (pages != 1)}"
    n = pages * pagesize
    for unit, size in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size}{unit}"
    return f"{n}"


METADATA = "#5c8a2e"      # the metadata operations' steps (read and write keep theirs)


def _steps(ax, edges: list[float], values: list[float], colour: str, label: str) -> None:
    """One value a point, drawn as a step over its span, lightly filled beneath (matplotlib 3.3
    has no stairs): a series drawn over another leaves it visible."""
    ys = values + values[-1:]
    ax.fill_between(edges, ys, step="post", color=colour, alpha=0.25, lw=0)
    ax.step(edges, ys, where="post", color=colour, lw=1.4, label=label)


LABEL_GAP = 0.1          # phase labels closer than this share of the time axis: the less telling one left out
# which phase's label is kept where two would run into each other: a burst's over a steady
# phase's over an idle one's (an idle start must not hide the start-up burst after it)
LABEL_RANK = {"idle": 2, "steady": 1}


def _phases(axes, phases: list[dict], x_scale: float, x_range: float) -> None:
    """Each phase (kind, start_s, end_s: whenview.chart_data's) a shaded span on every axis, its
    kind written above the top one where it does not run into a more telling phase's label (the
    list under the chart names every phase)."""
    for p in phases:
        for ax in axes:
            ax.axvspan(p["start_s"] / x_scale, p["end_s"] / x_scale, color=PHASE_SHADE.get(p["kind"], "#eeeeee"),
                       zorder=0, lw=0)
            ax.axvline(p["start_s"] / x_scale, color="#999999", lw=0.6, zorder=0)
    for middle, kind in _labels(phases, x_range):
        axes[0].text(middle / x_scale, 1.02, plain_label(shorten(str(kind), 16)),
                     transform=axes[0].get_xaxis_transform(), ha="center", va="bottom", fontsize=7,
                     color="#444444", clip_on=False)


def _labels(phases: list[dict], x_range: float) -> list[tuple[float, str]]:
    """The phases' labels to write, (middle in seconds, kind): the most telling first (LABEL_RANK,
    then the earlier), each where no label already kept is within LABEL_GAP of the time axis."""
    kept: list[tuple[float, str]] = []
    for p in sorted(phases, key=lambda p: (LABEL_RANK.get(p["kind"], 0), p["start_s"])):
        middle = (p["start_s"] + p["end_s"]) / 2
        if all(abs(middle - m) >= LABEL_GAP * x_range for m, _ in kept):
            kept.append((middle, p["kind"]))
    return sorted(kept)


def _time_axis(elapsed: float) -> tuple[float, str]:
    for size, unit in ((86400.0, "days"), (3600.0, "hours"), (60.0, "minutes")):
        if elapsed >= 3 * size:
            return size, unit
    return 1.0, "seconds"


LOG_SPREAD = 10.0     # latencies whose highest is this many times their lowest: a log scale


def _latency(ax, edges: list[float], fs: dict) -> None:
    """The mean latency of a read and of a write call per point (whenview.chart_data's arrays,
    None where a point has none: a gap in the steps), in µs, or ms when a point took a ms; on a
    log scale when they spread over a decade (reads of 0.5 ms beside writes of 40 ms), so that
    neither is flattened."""
    arrays = {d: fs.get(f"{d}_latency_us") for d in ("read", "write")}
    means = [v for a in arrays.values() if a for v in a if v is not None]
    size, unit = (1000.0, "ms") if max(means) >= 1000 else (1.0, "µs")
    for d, colour in (("read", READ), ("write", WRITE)):
        if arrays[d] is not None:
            _steps(ax, edges, [float("nan") if v is None else v / size for v in arrays[d]], colour, d)
    positive = [v for v in means if v > 0]
    if positive and max(positive) >= LOG_SPREAD * min(positive):
        ax.set_yscale("log")
        ax.yaxis.set_minor_formatter(LogFormatter(labelOnlyBase=False))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    else:
        ax.set_ylim(bottom=0)
    ax.set_ylabel(f"{unit} a call")
    ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0), title="latency", title_fontsize=8)


def has_latency(fs: dict) -> bool:
    """Whether the chart of whenview.chart_data's `fs` has a latency panel: some mean to draw."""
    return any(fs.get(f"{d}_latency_us") is not None for d in ("read", "write"))


@plain_text
def timeline(fs: dict, pagesize: int | None) -> str:
    """Read and write rates, the mean latency of a read and a write call where the clients count
    it, metadata operations a second, and the RPCs a second stacked by size (both directions),
    over the job's time; its phases shaded. fs: whenview.chart_data's (arrays of one length,
    the point's width, the first point's start since the job's)."""
    width_s, offset_s, elapsed_s = fs["width_s"], fs["offset_s"], fs["elapsed_s"]
    n = len(fs["read_bytes"])
    scale, unit = _time_axis(max(elapsed_s, n * width_s))
    edges = [(offset_s + i * width_s) / scale for i in range(n + 1)]
    timed = has_latency(fs)
    fig = Figure(figsize=(9.0, 8.6 if timed else 6.6), dpi=96)
    if hasattr(fig, "set_layout_engine"):
        fig.set_layout_engine("tight")
    else:
        fig.set_tight_layout(True)
    axes = list(fig.subplots(4 if timed else 3, 1, sharex=True))
    rates, meta, mix = axes[0], axes[-2], axes[-1]
    for ax in axes:
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    peak = max([float(v) / width_s for k in ("read_bytes", "write_bytes") for v in fs[k]] + [0.0])
    size, byte_units = byte_unit(peak)
    for key, colour, label in (("read_bytes", READ, "read"), ("write_bytes", WRITE, "write")):
        _steps(rates, edges, [v / width_s / size for v in floats(fs[key])], colour, label)
    rates.set_ylabel(f"{byte_units}/s")
    rates.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    if timed:
        _latency(axes[1], edges, fs)
    _steps(meta, edges, [v / width_s for v in floats(fs["metadata_ops"])], METADATA, "metadata")
    meta.set_ylabel("metadata op/s")
    meta.yaxis.set_major_formatter(FuncFormatter(count_label))
    sizes = sorted({int(p) for d in ("rpc_read", "rpc_write") for p in (fs.get(d) or {})})
    per_size = [[a + b for a, b in zip(floats((fs.get("rpc_read") or {}).get(str(p)) or [0] * n),
                                       floats((fs.get("rpc_write") or {}).get(str(p)) or [0] * n))] for p in sizes]
    bottom = [0.0] * n
    for i, (pages, counts) in enumerate(zip(sizes, per_size)):
        top = [b + c / width_s for b, c in zip(bottom, counts)]
        colour = matplotlib.colormaps["viridis"](i / max(1, len(sizes) - 1)) if hasattr(matplotlib, "colormaps") \
            else matplotlib.cm.get_cmap("viridis")(i / max(1, len(sizes) - 1))
        mix.fill_between(edges, bottom + bottom[-1:], top + top[-1:], step="post", color=colour, lw=0,
                         label=_size_label(pages, pagesize))
        bottom = top
    mix.set_ylabel("RPCs/s")
    mix.yaxis.set_major_formatter(FuncFormatter(count_label))
    if sizes:
        mix.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, title="RPC size",
                   title_fontsize=7)
    mix.set_xlabel(f"{unit} since the job's start")
    _phases(axes, fs["phases"], scale, max(elapsed_s, n * width_s))
    return svg(fig)
