"""compare's charts keep every text they draw inside their figure, whatever the groups' names.

Each chart is drawn as compare draws it (charts.svg is watched, not replaced: the figure it
is given is kept), then drawn again by Agg with every Text.draw recorded: only the texts
matplotlib really draws count (tick labels outside the axis limits exist but are not drawn),
and each one's extent must lie inside the figure's canvas.
"""

from __future__ import annotations

import matplotlib.text
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from lustre_jobreport.compare import charts, metrics as comparemetrics

LONGEST_ID = max((m.id for m in comparemetrics.METRICS), key=len)
# names as records may hold them: far past the chart's 48 columns, of the widest Latin glyph,
# of wide characters, and math text to matplotlib (drawn as it is written)
NAMES = {"long": "y" * 200 + ", user " + "u" * 60 + ", 8-15 nodes, on scratch", "wide": "W" * 300,
         "cjk": "漢" * 100, "math": "$x^2$ $$ " * 30}


@pytest.fixture
def drawn(monkeypatch):
    """Call a chart; get the figure it drew."""
    figures = []
    real = charts.svg
    monkeypatch.setattr(charts, "svg", lambda fig: (figures.append(fig), real(fig))[1])

    def draw(chart, *args) -> object:
        chart(*args)
        assert len(figures) == 1
        return figures.pop()
    return draw


def texts_outside(fig) -> tuple[int, list]:
    """(the texts drawn, those whose extent leaves the canvas: text, extent, canvas)."""
    canvas = FigureCanvasAgg(fig)
    renderer = canvas.get_renderer()
    texts = []
    draw = matplotlib.text.Text.draw

    def recorded(self, r):
        if self.get_visible() and self.get_text():
            texts.append(self)
        return draw(self, r)
    matplotlib.text.Text.draw = recorded
    try:
        fig.draw(renderer)
    finally:
        matplotlib.text.Text.draw = draw
    box = fig.bbox
    out = []
    for t in texts:
        e = t.get_window_extent(renderer)
        if e.x0 < box.x0 or e.y0 < box.y0 or e.x1 > box.x1 or e.y1 > box.y1:
            out.append((t.get_text(), e.extents.round().tolist(), box.extents.tolist()))
    return len(texts), out


def _bars(name: str, n: int) -> list[tuple[str, float, str, str]]:
    verdicts = ("regression", "improvement", "no_change")
    return [(f"{name} {i}", 1.0 - 2 * i / max(n, 1), verdicts[i % 3], LONGEST_ID) for i in range(n)]


@pytest.mark.filterwarnings("ignore:Glyph")          # DejaVu has no CJK: a box, still measured
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n", [1, 3, 40])
def test_effect_bars_keep_every_text_inside_the_figure(drawn, name, n):
    fig = drawn(charts.effect_sizes, _bars(NAMES[name], n))
    count, outside = texts_outside(fig)
    assert count >= n + 5 and outside == []              # names, ticks, the axis label, the legend


def test_the_effect_histogram_keeps_every_text_inside_the_figure(drawn):
    effects = [(-1.0 + 2 * i / 99_999, ("regression", "improvement", "no_change")[i % 3]) for i in range(100_000)]
    count, outside = texts_outside(drawn(charts.effect_histogram, effects))
    assert count >= 8 and outside == []


def test_the_rpc_size_charts_keep_every_text_inside_the_figure(drawn):
    every = {b: 1 / len(comparemetrics.ALL_BUCKETS) for b in comparemetrics.ALL_BUCKETS}
    shares = {d: {"baseline": every, "candidate": every} for d in ("read", "write")}
    count, outside = texts_outside(drawn(charts.compare_rpc_shares, shares))
    assert count >= 2 * len(comparemetrics.ALL_BUCKETS) and outside == []
