"""The HTML report in a real browser: headless Chromium renders it and the charts are drawn.

A two-host Enzo-like job (two private pmcds) so all three charts appear: RPC sizes, bytes per
OST, bytes per host. The second host's name is hostile: math text for matplotlib's tick labels
and a terminal sequence that would write the clipboard. Drawn = the chart colours cover real
areas of the screenshot, in the chart figures (the small bars of the table use other colours).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from lustre_jobreport.present import chartkit
from lustre_jobreport.report import view as render, document as report
from lustre_jobreport import config
from lustre_jobreport.acquire import snapshot
from lustre_sim import SimClient
from kit.privpmcd import PrivatePmcd

CHROMIUM = shutil.which("chromium")
ODD_HOST = "node1 $\\frac{1}{0}$ $$ \x1b]52;c;cm0gLXJmIH4K\x07"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))


def _pixels_near(img: Image.Image, colour: tuple[int, int, int], tol: int = 12) -> int:
    return sum(n for n, (r, g, b) in img.getcolors(img.width * img.height)
               if abs(r - colour[0]) <= tol and abs(g - colour[1]) <= tol and abs(b - colour[2]) <= tol)


@pytest.fixture(scope="module")
def html(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("html")
    trees = [tmp / "t0", tmp / "t1"]
    clients = [SimClient.create(t, version="2.15.4", filesystems=[("scratch", 8, 1)], seed=i)
               for i, t in enumerate(trees)]
    with PrivatePmcd(tmp / "p0", trees[0]) as p0, PrivatePmcd(tmp / "p1", trees[1]) as p1:
        targets = [snapshot.HostTarget("node0", p0.spec), snapshot.HostTarget(ODD_HOST, p1.spec)]
        begin = snapshot.take(targets, connect_timeout_s=2, fetch_timeout_s=10)
        clients[0].run("enzo", fs="scratch")
        clients[1].run("overflow", fs="scratch")
        end = snapshot.take(targets, connect_timeout_s=2, fetch_timeout_s=10)
    doc = report.build(begin, end, config.Config(), job_id="314", user="ann")
    page = tmp / "report.html"
    page.write_text(render.render_html(doc))
    return page


def test_html_is_self_contained(html):
    text = html.read_text()
    assert text.count("<svg") == 3                      # RPC sizes, per OST, per host
    # nothing the browser would fetch: no scripts, stylesheets, images or fonts from elsewhere
    for fetch in ("<script", "<link", "@import", "src=", 'href="http', "url(http", "<img"):
        assert fetch not in text, fetch


def test_odd_host_name_is_shown_as_text(html):
    text = html.read_text()
    assert "\x1b" not in text and "\x07" not in text
    # its label in the per-host chart, shortened, ends in the visible escape of the BEL
    assert "IH4K\\x07" in text


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs it)")
def test_charts_are_drawn_in_chromium(html, tmp_path):
    shot = tmp_path / "shot.png"
    r = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1000,3200",
                        f"--screenshot={shot}", html.as_uri()], capture_output=True, text=True, timeout=120)
    assert shot.exists(), r.stderr[-2000:]
    img = Image.open(shot).convert("RGB")
    read, write = _pixels_near(img, _rgb(chartkit.READ)), _pixels_near(img, _rgb(chartkit.WRITE))
    # three charts of bars in each colour: thousands of pixels, not a legend swatch or two
    assert read > 5000 and write > 5000, (read, write)
    # and the page is not blank elsewhere: the findings' text was laid out above the charts
    top = img.crop((0, 0, img.width, 400))
    assert len(top.getcolors(top.width * top.height)) > 20
