"""The compare HTML report in a real browser: headless Chromium loads it, runs no script, and
draws its charts and the regression's text.

The comparison is made from synthetic job rows (tests/kit/compare_rows.py) through
compare.compare and comparerender.render: two regressions (read RPCs turned small on 2.16.0; reads
slower in a group whose cells are as wide as compare writes them), one improvement and 44 groups
without change, so all three kinds of chart appear: the groups' RPC-size histograms (baseline
against candidate), the named effect-size bars and the histogram of every group's effect (more
groups than bars). The first regressed application's name and user are hostile: an inline
script, an element with an event handler, math text for matplotlib's labels and a terminal
sequence that would write the clipboard. The page is laid out in a window 1,200 px wide; no
table may pass its box there and no chart's text its image.

Chromium is driven over the DevTools protocol on a pipe (--remote-debugging-pipe: fds 3 and 4,
JSON messages ended by NUL), which needs nothing but the standard library. It says which scripts
the page parsed (the Debugger domain reports every one, inline handlers included), which
requests it made, the laid-out text (innerText: what CSS shows), where each chart, each of its
texts and each table is, and takes the screenshot in which the charts' colours are counted, chart by chart.
"""

from __future__ import annotations

import base64
import fcntl
import io
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from lustre_jobreport.compare import charts
from lustre_jobreport.present.chartkit import READ, WRITE
from lustre_jobreport.compare import model as compare, view as comparerender

from kit.compare_rows import jobs, table

CHROMIUM = shutil.which("chromium")
# would run if the name reached the page as markup; $x$ and $$ are math to matplotlib; OSC 52
# writes the terminal's clipboard
HOSTILE_NAME = "$x$ $$<script>document.title='ran'</script>\x1b]52;c;cm0K\x07"
HOSTILE_USER = "<img src=x onerror=alert(1)>"
OTHERS = 44
WIDTH = 1200                    # the window an admin reads the page in
# a group whose cells are as wide as compare writes them: the most jobs a side the page shows
# in full, counts per GiB in the millions, calls of seconds
WIDE_JOBS = 10_000


def _comparison() -> tuple[compare.Comparison, tuple]:
    """The comparison and the rows it was made of (the regressions' settings come from them)."""
    rng = np.random.default_rng(2026)
    base = [jobs(rng, 10, job_name=HOSTILE_NAME, user=HOSTILE_USER, record_prefix="b"),
            jobs(rng, 10, job_name="wrf", small_write=0.4, record_prefix="bw")]
    cand = [jobs(rng, 10, job_name=HOSTILE_NAME, user=HOSTILE_USER, lustre="2.16.0", small_read=0.8,
                 record_prefix="c"),
            jobs(rng, 10, job_name="wrf", lustre="2.16.0", small_write=0.01, record_prefix="cw")]
    for k in range(OTHERS):
        base.append(jobs(rng, 6, job_name=f"app{k}", record_prefix=f"b{k}"))
        cand.append(jobs(rng, 6, job_name=f"app{k}", lustre="2.16.0", record_prefix=f"c{k}"))
    wide = dict(job_name="w" * 200, user="u" * 200, opens_per_gib=5e6, getattr_per_open=3e4,
                read_latency_us=2e7, write_latency_us=3e6, sigma=0.1)
    base.append(jobs(rng, WIDE_JOBS, **wide, record_prefix="bx"))
    cand.append(jobs(rng, WIDE_JOBS, **dict(wide, read_latency_us=9e7), lustre="2.16.0", record_prefix="cx"))
    rows = table(*base), table(*cand)
    return compare.compare(*rows, baseline_selection="lustre=2.15.*", candidate_selection="lustre=2.16.*"), rows


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> tuple[Path, compare.Comparison]:
    result, rows = _comparison()
    path = tmp_path_factory.mktemp("compare-html") / "compare.html"
    path.write_text(comparerender.render(result, "html"))
    return path, result


def test_the_comparison_has_what_the_page_must_show(page):
    _, result = page
    s = result.doc["summary"]
    assert (s["regression"], s["improvement"]) == (2, 1) and s["no_change"] + s["not_enough_data"] == OTHERS
    g = next(g for g in result.doc["groups"] if g["key"]["job_name"] == HOSTILE_NAME)
    assert g["verdict"] == "regression" and g["cause"] == "lustre"
    wide = next(g for g in result.doc["groups"] if g["n_baseline"] == WIDE_JOBS)
    assert wide["verdict"] == "regression"
    text = page[0].read_text()
    assert text.count("<svg") == 4
    assert "<script" not in text and "<img" not in text and "\x1b" not in text and "\x07" not in text


class DevTools:
    """Chromium on the DevTools pipe: send() a command (of the page's session when given) and
    get its result; the events that came meanwhile are kept in `events`."""

    def __init__(self, profile: Path):
        to_r, self._to = os.pipe()          # Chromium reads commands from its fd 3
        self._from, from_w = os.pipe()      # and writes answers and events to its fd 4

        def fds():
            """In the child: the pipes on fds 3 and 4 (moved up first: either may be 3 or 4).
            Every other descriptor of this process is close-on-exec (os.pipe, PEP 446), so
            close_fds=False hands Chromium these two alone."""
            a = fcntl.fcntl(to_r, fcntl.F_DUPFD_CLOEXEC, 10)
            b = fcntl.fcntl(from_w, fcntl.F_DUPFD_CLOEXEC, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             f"--user-data-dir={profile}", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--disable-quic", "--hide-scrollbars",
             "about:blank"],
            close_fds=False, preexec_fn=fds, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(to_r)
        os.close(from_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict] = []

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to, json.dumps(msg).encode() + b"\0")
        while True:
            m = self._next()
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m["result"]
            self.events.append(m)

    def wait(self, method: str) -> dict:
        for i, m in enumerate(self.events):
            if m.get("method") == method:
                return self.events.pop(i)
        while True:
            m = self._next()
            if m.get("method") == method:
                return m
            self.events.append(m)

    def _next(self, timeout: float = 30.0) -> dict:
        end = time.monotonic() + timeout
        while b"\0" not in self._buf:
            left = end - time.monotonic()
            if left <= 0 or not select.select([self._from], [], [], left)[0]:
                raise TimeoutError("chromium did not answer")
            chunk = os.read(self._from, 1 << 20)
            if not chunk:
                raise EOFError("chromium closed its DevTools pipe")
            self._buf += chunk
        msg, _, self._buf = self._buf.partition(b"\0")
        return json.loads(msg)

    def close(self) -> None:
        try:
            self.send("Browser.close")
            self.proc.wait(10)
        except (OSError, RuntimeError, TimeoutError, EOFError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        finally:
            os.close(self._to)
            os.close(self._from)


CHARTS_JS = """JSON.stringify([...document.querySelectorAll('figure.chart')].map(f => {
  const r = f.querySelector('svg').getBoundingClientRect();
  return {cls: f.className, x: r.left + scrollX, y: r.top + scrollY, w: r.width, h: r.height};
}))"""
# every text matplotlib drew (a <g id="text_N">: labels, ticks, legends) against its chart's box
CHART_TEXTS_JS = """JSON.stringify([...document.querySelectorAll('figure.chart svg')].map(svg => {
  const box = svg.getBoundingClientRect();
  return [...svg.querySelectorAll('g[id^="text_"]')].map(t => {
    const r = t.getBoundingClientRect();
    return {chart: svg.parentElement.className, text: t.textContent.trim(), left: r.left - box.left,
            right: box.right - r.right, top: r.top - box.top, bottom: box.bottom - r.bottom};
  });
}).flat())"""
# every table and the content box of the block it is in (a group, or the page)
TABLES_JS = """JSON.stringify([...document.querySelectorAll('table')].map(t => {
  const c = t.closest('.group') || document.body, s = getComputedStyle(c), r = t.getBoundingClientRect();
  const box = c.getBoundingClientRect();
  return {table: t.className, in: c.className || 'body', right: r.right, width: r.width,
          content_right: box.right - parseFloat(s.borderRightWidth) - parseFloat(s.paddingRight),
          rows: t.rows.length};
}))"""
HANDLERS_JS = """[...document.querySelectorAll('*')].filter(e => [...e.attributes].some(
  a => a.name.startsWith('on'))).length"""


@pytest.fixture(scope="module")
def shown(page, tmp_path_factory) -> dict:
    """What Chromium did with the page: scripts parsed and requests made while loading it, its
    title, laid-out text, scripts and handlers in the DOM, chart boxes and a full screenshot."""
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (make test installs it)")
    path, _ = page
    chrome = DevTools(tmp_path_factory.mktemp("profile"))
    try:
        target = chrome.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        sid = chrome.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Debugger", "Network"):
            chrome.send(f"{domain}.enable", session=sid)
        chrome.send("Emulation.setDeviceMetricsOverride",
                    {"width": WIDTH, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session=sid)
        chrome.events.clear()
        chrome.send("Page.navigate", {"url": path.as_uri()}, session=sid)
        chrome.wait("Page.loadEventFired")
        time.sleep(0.3)                  # an image's error handler would run after the load
        chrome.send("Page.bringToFront", session=sid)    # a round trip: the events so far are in
        loading = [e for e in chrome.events if e.get("sessionId") == sid]

        def js(expression: str):
            return chrome.send("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                               session=sid)["result"]["value"]
        out = {"scripts": [e["params"].get("url") for e in loading if e["method"] == "Debugger.scriptParsed"],
               "requests": [e["params"]["request"]["url"] for e in loading
                            if e["method"] == "Network.requestWillBeSent"],
               "title": js("document.title"), "text": js("document.body.innerText"),
               "script_elements": js("document.scripts.length"), "handlers": js(HANDLERS_JS),
               "charts": json.loads(js(CHARTS_JS)), "chart_texts": json.loads(js(CHART_TEXTS_JS)),
               "tables": json.loads(js(TABLES_JS)),
               "regression_box": js("JSON.stringify(document.querySelector('.group.regression h3')"
                                    ".getBoundingClientRect())")}
        height = int(js("document.documentElement.scrollHeight"))
        chrome.send("Emulation.setDeviceMetricsOverride",
                    {"width": WIDTH, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=sid)
        png = chrome.send("Page.captureScreenshot", {"format": "png"}, session=sid)["data"]
        out["image"] = Image.open(io.BytesIO(base64.b64decode(png))).convert("RGB")
        return out
    finally:
        chrome.close()


def test_no_script_ran_and_nothing_was_fetched(page, shown):
    assert shown["scripts"] == [], shown["scripts"]             # not one, inline or handler
    assert shown["script_elements"] == 0 and shown["handlers"] == 0
    assert shown["title"].startswith("Lustre client comparison: 2 regressions, 1 improvement")
    assert shown["requests"] == [page[0].as_uri()]              # the page itself, nothing else


def test_the_regression_is_shown_as_text(page, shown):
    _, result = page
    text = shown["text"]
    assert "\x1b" not in text and "\x07" not in text
    # the hostile name and user as visible text: the heading as compare's view names the group
    # (through displayable, shortened around a "…")
    v = next(v for v in comparerender.view(result)["regressions"] if v["name"].startswith("$x$"))
    heading = f"Regression: {v['name']} ({v['counts']})"
    assert heading in text.splitlines()
    assert heading.startswith("Regression: $x$ $$<script>") and heading.count("\\x07") == 1
    assert ", user <img src=x onerror=alert(1)>, 8-15 nodes, on scratch (10 → 10 jobs)" in heading
    # the numbers that make it a regression, and its cause
    assert v["changed"][0].startswith("read RPCs ≤16 KiB: ") and v["changed"][0] in text
    assert "cause: Lustre 2.15.4 → 2.16.0 (same kernel, OS and settings)" in text
    # where to look next, with the group's settings
    assert ("look next: the group's settings, the same on both sides: max_read_ahead_mb 1024, "
            "max_read_ahead_per_file_mb 256, max_read_ahead_whole_mb 64, max_pages_per_rpc 256") in text
    assert "known client regressions of this shape: LU-18504 (fixed in 2.17)" in text
    assert "Improvement: wrf, user ann" in text
    box = json.loads(shown["regression_box"])
    assert box["width"] > 200 and box["height"] > 10


def test_every_text_of_every_chart_is_inside_the_chart(shown):
    """No label is cut at the edge of its image: each text matplotlib drew lies inside the
    chart's box as the browser lays it out (the widest names included)."""
    texts = shown["chart_texts"]
    assert {t["chart"].split()[-1] for t in texts} == {"effect", "effect-all", "rpc"} and len(texts) > 100
    cut = [t for t in texts if min(t["left"], t["right"], t["top"], t["bottom"]) < 0]
    assert cut == []


def test_every_table_fits_its_box_at_1200_px(shown):
    """Each metric table (and the fleet's) ends inside the content box of its group (of the
    page): the verdict column is never cut off, even with the longest labels and values."""
    tables = shown["tables"]
    metrics = [t for t in tables if t["table"] == "metrics"]
    assert len(metrics) == 3 and all(t["in"].startswith("group") for t in metrics)
    assert any(t["table"] == "fleet" for t in tables)
    spill = [t for t in tables if t["right"] > t["content_right"] + 0.5]
    assert spill == []


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))


def _pixels_near(img: Image.Image, colour: str, tol: int = 12) -> int:
    c = _rgb(colour)
    return sum(n for n, (r, g, b) in img.getcolors(img.width * img.height)
               if abs(r - c[0]) <= tol and abs(g - c[1]) <= tol and abs(b - c[2]) <= tol)


def test_the_charts_are_laid_out_and_painted(shown):
    kinds = [c["cls"].split()[-1] for c in shown["charts"]]
    assert sorted(set(kinds)) == ["effect", "effect-all", "rpc"] and kinds.count("rpc") == 2
    boxes = {}
    for kind, c in zip(kinds, shown["charts"]):
        boxes.setdefault(kind, c)           # the first of each: the hostile group's RPC sizes
    img = shown["image"]
    painted = {}
    for kind, b in boxes.items():
        assert b["w"] > 300 and b["h"] > 100, b
        crop = img.crop((int(b["x"]), int(b["y"]), int(b["x"] + b["w"]), int(b["y"] + b["h"])))
        painted[kind] = {name: _pixels_near(crop, colour) for name, colour in
                         (("baseline", charts.BASELINE), ("read", READ), ("write", WRITE),
                          *charts.VERDICT_COLOURS.items())}
    rpc, bars, hist = painted["rpc"], painted["effect"], painted["effect-all"]
    # the regression's histograms: the baseline's bars beside the candidate's read and write bars
    assert rpc["baseline"] > 2000 and rpc["read"] > 2000 and rpc["write"] > 2000, rpc
    # effect sizes, named and all groups: a bar of each verdict
    assert bars["regression"] > 300 and bars["improvement"] > 300 and bars["no_change"] > 300, bars
    assert hist["regression"] > 50 and hist["improvement"] > 50 and hist["no_change"] > 1000, hist
    # and the page around them is laid out text, not blank
    top = img.crop((0, 0, img.width, 300))
    assert len(top.getcolors(top.width * top.height)) > 20
