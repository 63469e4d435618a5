"""The HTML report's "when" chart in a real browser: headless Chromium renders a report with a
timeline, and the chart's series are drawn (their colours cover real areas of the screenshot,
the metadata colour nowhere else on the page), its phases shaded; the page of the same report
without a timeline has none of it. The calls' mean latency, where the timeline has it, is one
more panel (the read and write colours over more of the page), none where it is null.

The report is written out by hand (kit.reportdocs): a start-up open storm, steady reads,
checkpoints, a final flush; the filesystem's name and a phase's kind are hostile.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from kit.reportdocs import GIB, phase, report_doc, timeline, timeline_fs
from lustre_jobreport.present import chartkit
from lustre_jobreport.report import charts, view as render

CHROMIUM = shutil.which("chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]
FS = "scratch \x1b]52;c;cm0gLXJmIH4K\x07 $x^2$"


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))


def _pixels_near(img: Image.Image, colour: tuple[int, int, int], tol: int = 12) -> int:
    return sum(n for n, (r, g, b) in img.getcolors(img.width * img.height)
               if abs(r - colour[0]) <= tol and abs(g - colour[1]) <= tol and abs(b - colour[2]) <= tol)


def job(with_timeline: bool, latency: bool = False) -> dict:
    points, width = 120, 60.0
    read = [0, 0] + [GIB * 60] * 110 + [0] * 8
    write = [40 * GIB if i % 15 == 14 else 0 for i in range(points - 3)] + [80 * GIB] * 3
    meta = [60_000, 30_000] + [40] * (points - 2)
    elapsed = points * width
    phases = [phase("start-up burst", 0, 120, "metadata_ops", metadata_ops=90_000, opens=45_000),
              phase("steady", 120, 6720, "read_bytes", read_bytes=GIB * 60 * 110),
              phase("<b>idle</b>\x1b[2J", 6720, 7020, None),
              phase("final flush", 7020, 7200, "write_bytes", write_bytes=240 * GIB)]
    periodic = [{"channel": "write_bytes", "period_s": 900.0, "count": 7, "mean_amount": 40 * GIB, "first_s": 840.0}]
    fs = timeline_fs(read, write, meta, phases=phases, periodic=periodic)
    reads = [None, None] + [800.0 + 30 * (i % 7) for i in range(110)] + [None] * 8
    writes = [2_100.0 + 15_000 * (i % 15 == 14) if i < points - 3 else 41_000.0 for i in range(points)]
    for d, means in (("read", reads), ("write", writes)):
        fs[f"{d}_latency_us"] = means if latency else None
        fs[f"{d}_latency_us_mean"] = sum(m for m in means if m is not None) / points if latency else None
    doc = report_doc(timeline({FS: fs}, width_s=width) if with_timeline else None, filesystems=[FS], elapsed_s=elapsed)
    doc["clients"] = {h: {"pagesize": 4096} for h in ("n1", "n2")}
    return doc


def screenshot(page: Path, tmp: Path) -> Image.Image:
    shot = tmp / f"{page.stem}.png"
    r = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp / 'profile'}", "--window-size=1000,2000",
                        f"--screenshot={shot}", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert shot.exists(), r.stderr[-2000:]
    return Image.open(shot).convert("RGB")


@pytest.mark.parametrize("latency", [False, True])
def test_the_page_is_self_contained_and_escaped(latency):
    page = render.render_html(job(True, latency))
    assert page.count("<svg") == 2 and "\x1b" not in page and "\x07" not in page
    for fetch in ("<script", "<link", "@import", "src=", 'href="http', "url(http", "<img", "<b>idle"):
        assert fetch not in page, fetch
    assert ("ms a call" in page) is latency          # the latency panel's axis


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs it)")
def test_the_when_chart_is_drawn_in_chromium(tmp_path):
    pages = {}
    for name, with_timeline, latency in (("when", True, False), ("older", False, False), ("latency", True, True)):
        pages[name] = tmp_path / f"{name}.html"
        pages[name].write_text(render.render_html(job(with_timeline, latency)))
    when, older, timed = (screenshot(pages[n], tmp_path) for n in ("when", "older", "latency"))
    meta = _rgb(charts.METADATA)
    # the metadata steps: a line the whole job long and the start-up storm's fill above it
    assert _pixels_near(when, meta) > 400 and _pixels_near(older, meta) == 0
    # reads and writes: the steps (lines of 1.4 px the job long) add to the RPC chart's bars
    for colour in (chartkit.READ, chartkit.WRITE):
        assert _pixels_near(when, _rgb(colour)) > _pixels_near(older, _rgb(colour)) + 400, colour
    # the start-up burst's and the final flush's shades
    for kind in ("start-up burst", "final flush"):
        assert _pixels_near(when, _rgb(charts.PHASE_SHADE[kind]), tol=3) > 2000, kind
    # the latency panel: the read and write steps over another panel's width, its phases shaded
    for colour in (chartkit.READ, chartkit.WRITE):
        assert _pixels_near(timed, _rgb(colour)) > _pixels_near(when, _rgb(colour)) + 400, colour
    shade = _rgb(charts.PHASE_SHADE["start-up burst"])
    assert _pixels_near(timed, shade, tol=3) > _pixels_near(when, shade, tol=3)
