"""What every chart of the reports shares: inline SVG from matplotlib (no pyplot, no network,
text as paths), fixed read/write colours (a test finds the bars in a screenshot), plain-text
labels (names come from hosts and agents: math text ($...$) is off for every text a chart
draws), and counts and byte units on the axes. Counts are exact Python ints of any size; they
are drawn as floats, capped at FLOAT_CAP.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable, Iterable

import matplotlib
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure

from .text import BYTE_UNITS, SI_SUFFIXES

READ, WRITE = "#3b6fd4", "#e08a1e"     # read / write bars everywhere



LABEL_COLS = 24                        # a longer x label is shortened around a "…"



FLOAT_CAP = 1e300                      # beyond floats (and stacked twice): drawn at this height



# Local to each chart (matplotlib.rc_context), never set globally: names are not math, and no
# site matplotlibrc turns labels over to LaTeX. matplotlib before 3.5 has no text.parse_math:
# there, plain_label escapes the "$" of each name instead.
MATH_SWITCH = "text.parse_math" in matplotlib.rcParams
PLAIN_TEXT = {"text.parse_math": False, "text.usetex": False} if MATH_SWITCH else {"text.usetex": False}



def plain_text(chart: Callable[..., str]) -> Callable[..., str]:
    """Draws the chart, tick labels made at drawing time included, with PLAIN_TEXT in force."""
    @functools.wraps(chart)
    def drawn(*args, **kwargs) -> str:
        with matplotlib.rc_context(PLAIN_TEXT):
            return chart(*args, **kwargs)
    return drawn



def plain_label(name: str) -> str:
    """A name as a chart label drawn as it is written: where matplotlib cannot switch math text
    off, each "$" escaped (matplotlib draws "\\$" as a plain "$")."""
    return name if MATH_SWITCH else name.replace("$", r"\$")



def set_xlabels(ax, labels: list[str], **text) -> None:
    """One x tick per label, at 0, 1, 2, ... (set_xticks takes the labels itself only from
    matplotlib 3.5 on)."""
    ax.set_xticks(list(range(len(labels))))
    ax.set_xticklabels([plain_label(label) for label in labels], **text)



def svg(fig: Figure) -> str:
    buf = io.StringIO()
    # no metadata block: no date (reproducible output) and no RDF/creator links in the page
    FigureCanvasSVG(fig).print_svg(buf, metadata={"Creator": None, "Date": None, "Format": None, "Type": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]   # drop the XML prolog and DOCTYPE: this goes inline



def figure(width: float, height: float = 2.6) -> tuple[Figure, object]:
    fig = Figure(figsize=(width, height), dpi=96)
    if hasattr(fig, "set_layout_engine"):     # matplotlib 3.6+
        fig.set_layout_engine("tight")
    else:
        fig.set_tight_layout(True)
    ax = fig.add_subplot()
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return fig, ax



def floats(values: Iterable[int | float | None]) -> list[float]:
    """Counts as floats for drawing: None is 0, an int beyond the float range is capped."""
    return [float(min(v or 0, FLOAT_CAP)) for v in values]



def count_label(x: float, _pos: object = None) -> str:
    for power in range(len(SI_SUFFIXES), 0, -1):
        if x >= 10.0 ** (3 * power):
            return f"{x / 10.0 ** (3 * power):g}{SI_SUFFIXES[power - 1]}"
    return f"{x:g}"



def byte_unit(peak: float) -> tuple[float, str]:
    """The binary unit the largest bar reads best in: bytes up to YiB."""
    for power in range(len(BYTE_UNITS) - 1, 0, -1):
        if peak >= 1024.0 ** power:
            return 1024.0 ** power, BYTE_UNITS[power]
    return 1.0, BYTE_UNITS[0]
