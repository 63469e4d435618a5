"""Charts of the HTML report as inline SVG (matplotlib, no pyplot, no network, text as paths).

Each function takes the report document's numbers and returns one <svg> element. Colours are
fixed so a test can find the bars in a screenshot.
"""

from __future__ import annotations

import io

from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

READ, WRITE = "#3b6fd4", "#e08a1e"     # read / write bars everywhere
GIB = 1 << 30


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


def _count(x: float, _pos: object = None) -> str:
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= div:
            return f"{x / div:g}{suffix}"
    return f"{x:g}"


def rpc_histogram(rpc: dict[str, dict[str, int]], labels: list[str]) -> str:
    """Read and write RPCs per size bucket, side by side, log scale (4K and 1M counts differ 1000x)."""
    fig, ax = _figure(max(5.0, 0.55 * len(labels) + 1.5))
    xs = range(len(labels))
    ax.bar([x - 0.2 for x in xs], [rpc["read"].get(l, 0) for l in labels], 0.4, color=READ, label="read")
    ax.bar([x + 0.2 for x in xs], [rpc["write"].get(l, 0) for l in labels], 0.4, color=WRITE, label="write")
    ax.set_xticks(list(xs), labels)
    if any(rpc[d].get(l, 0) for d in ("read", "write") for l in labels):
        ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(_count))
    ax.set_xlabel("RPC size (up to)")
    ax.set_ylabel("RPCs")
    ax.legend(frameon=False)
    return _svg(fig)


def ost_bytes(osts: dict[str, dict]) -> str:
    """Bytes read and written through each OST the job used (stacked)."""
    names = list(osts)
    fig, ax = _figure(max(5.0, 0.35 * len(names) + 1.5))
    reads = [(osts[o]["read_bytes"] or 0) / GIB for o in names]
    writes = [(osts[o]["write_bytes"] or 0) / GIB for o in names]
    ax.bar(names, reads, color=READ, label="read")
    ax.bar(names, writes, bottom=reads, color=WRITE, label="write")
    ax.set_ylabel("GiB")
    _tidy(ax, len(names))
    return _svg(fig)


def _tidy(ax, n: int) -> None:
    """Readable x labels for n bars, and the legend outside the bars."""
    ax.tick_params(axis="x", labelrotation=90 if n > 12 else 45 if n > 4 else 0, labelsize=8)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right" if 4 < n <= 12 else "center")
    ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))


def host_spread(hosts: dict[str, dict]) -> str:
    """Bytes per host, largest first (the first 64 hosts; the spread line gives the rest)."""
    moved = sorted(((h, (v.get("read_bytes", 0) or 0), (v.get("write_bytes", 0) or 0)) for h, v in hosts.items()),
                   key=lambda t: -(t[1] + t[2]))[:64]
    fig, ax = _figure(max(5.0, 0.3 * len(moved) + 1.5))
    names = [h for h, _, _ in moved]
    reads = [r / GIB for _, r, _ in moved]
    ax.bar(names, reads, color=READ, label="read")
    ax.bar(names, [w / GIB for _, _, w in moved], bottom=reads, color=WRITE, label="write")
    ax.set_ylabel("GiB")
    _tidy(ax, len(names))
    return _svg(fig)
