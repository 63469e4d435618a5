"""The text report's "When" blocks, its notes and its last line (DESIGN §3.1, "The text report").

The documents are written out by hand (kit.reportdocs): the views render whatever timeline a
document has, and an older document without one as before.
"""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings, strategies as st

from kit.reportdocs import GIB, MIB, no_timeline, phase, report_doc, timeline, timeline_fs
from lustre_jobreport.present import timewords
from lustre_jobreport.present.text import displayable
from lustre_jobreport.report import view as render, whenview

# -- the sparkline against a plain reference ------------------------------------------------------


def reference_sparkline(values: list[int], per: int) -> str:
    """Groups of `per` points from the first; a group's amount is what its points had above 0;
    each glyph the eighth of the highest group's amount nearest its own (a tie: the higher), at
    least the lowest; a group with nothing is blank, one whose only counts were below 0 the
    lowest glyph."""
    glyphs = "▁▂▃▄▅▆▇█"
    amounts, negatives = [], []
    i = 0
    while i < len(values):
        amount, negative = 0, False
        for v in values[i:i + per]:
            if v > 0:
                amount += v
            elif v < 0:
                negative = True
        amounts.append(amount)
        negatives.append(negative)
        i += per
    peak = 0
    for a in amounts:
        if a > peak:
            peak = a
    out = ""
    for amount, negative in zip(amounts, negatives):
        if amount == 0:
            out += "▁" if negative else " "
            continue
        best = 1
        for k in range(1, 9):     # |8a/peak - k| smallest, in integers: |8a - k*peak|
            if abs(8 * amount - k * peak) <= abs(8 * amount - best * peak):
                best = k
        out += glyphs[best - 1]
    return out


COUNTS = st.one_of(st.integers(-10, 10), st.integers(-(1 << 40), 1 << 40), st.integers(0, 1 << 80))


@settings(max_examples=1500, deadline=None)
@given(st.lists(COUNTS, max_size=130), st.integers(1, 5))
def test_the_sparkline_is_scaled_to_its_own_peak_like_the_reference(values, per):
    line = timewords.sparkline(values, per)
    assert line == reference_sparkline(values, per)
    assert len(line) == -(-len(values) // per)
    if any(v > 0 for v in values):
        assert "█" in line                 # the peak is the full block, whatever its size


def test_a_negative_point_is_the_lowest_glyph_and_hides_no_other_amount():
    assert timewords.sparkline([0, -5, 8, 4]) == " ▁█▄"
    # paired with a positive point, the negative one takes nothing off it
    assert timewords.sparkline([8, -8, 8, 0], per=2) == "██"


# -- the block: its bounds on any timeline ---------------------------------------------------------

NAMES = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=60)
KINDS = st.sampled_from(["start-up burst", "steady", "burst", "final flush", "idle"])
CHANNELS = st.sampled_from(["read_bytes", "write_bytes", "metadata_ops", None])


@st.composite
def timelines(draw):
    points = draw(st.integers(1, 120))
    series = st.lists(COUNTS, min_size=points, max_size=points)
    width = draw(st.sampled_from([0.2, 10.0, 20.0, 640.0, 86400.0, 1e300]))
    elapsed = points * width
    cuts = sorted(draw(st.sets(st.floats(0, elapsed), max_size=14)) | {0.0, elapsed})
    odd = st.sampled_from([float("inf"), float("nan"), -1.0, 10**400, "12", None, True])
    amounts = st.integers(-(1 << 40), 1 << 70)
    phases = [phase(draw(KINDS), a, b, draw(CHANNELS), read_bytes=draw(amounts), write_bytes=draw(amounts),
                    metadata_ops=draw(amounts), opens=draw(amounts), small_rpcs=draw(amounts))
              for a, b in zip(cuts, cuts[1:]) if b > a]
    if draw(st.booleans()):     # a document from elsewhere: odd values where numbers go
        for p in phases:
            p[draw(st.sampled_from(["start_s", "end_s", "opens", "read_bytes"]))] = draw(odd)
    periodic = [{"channel": draw(CHANNELS), "period_s": draw(st.floats(1, 1e6) | odd),
                 "count": draw(st.integers(3, 10**6)), "mean_amount": draw(st.floats(0, 1e24) | odd), "first_s": 0.0}
                for _ in range(draw(st.integers(0, 4)))]
    filesystems = {draw(NAMES): timeline_fs(draw(series), draw(series), draw(series), opens=draw(series),
                                            small=draw(series), phases=phases, periodic=periodic,
                                            sums_to_totals=draw(st.booleans()))
                   for _ in range(draw(st.integers(1, 3)))}
    means = st.one_of(st.none(), st.floats(0, 1e12), odd)
    for fs in filesystems.values():     # the calls' latency: the contract's, absent, or odd
        for d in ("read", "write"):
            fs[f"{d}_latency_us"] = draw(st.one_of(st.none(), st.lists(means, min_size=points, max_size=points),
                                                   st.lists(means, max_size=3), odd))
            fs[f"{d}_latency_us_mean"] = draw(means)
    tl = timeline(filesystems, width_s=width, start=draw(st.sampled_from(["2026-11-26T23:50:00Z", "garbage"])),
                  hosts=draw(st.integers(1, 12000)), hosts_without=draw(st.lists(NAMES, max_size=3)))
    return report_doc(tl, filesystems=list(filesystems), elapsed_s=elapsed)


def columns(line: str) -> int:
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


@settings(max_examples=300, deadline=None)
@given(timelines())
def test_any_timeline_gives_at_most_10_lines_a_filesystem_of_at_most_80_columns(doc):
    shown = displayable(doc)
    for name in shown["timeline"]["filesystems"]:
        lines = whenview.block(shown, name)
        assert 2 <= len(lines) <= whenview.MAX_LINES
        assert all(columns(line) <= render.WIDTH for line in lines), lines
    text = render.render_text(doc, html_path="/home/ann/slurm-77.out.lustre.html")
    lines = text.splitlines()
    assert len(lines) <= render.line_budget(shown) and all(columns(line) <= render.WIDTH for line in lines), text
    assert render.line_budget(shown) <= render.MAX_LINES + render.WHEN_EXTRA_FS * whenview.MAX_LINES
    assert lines[-1] == "HTML report: /home/ann/slurm-77.out.lustre.html"


@settings(max_examples=15, deadline=None)
@given(timelines())
def test_any_timeline_renders_an_html_page(doc):
    page = render.render_html(doc)
    # a chart of when for every filesystem the page shows (the ones the job touched)
    shown = sum(render._touched(fs) for fs in doc["filesystems"].values())
    assert page.count('<figure class="chart when">') == shown


# -- the block's words -----------------------------------------------------------------------------

def startup_then_steady(points: int = 120, width: float = 95.0) -> dict:
    """A start-up open storm, three hours of steady reads, a checkpoint every 13 points."""
    read = [0] + [2 * GIB * 95] * (points - 1)
    write = [52 * GIB if i % 13 == 12 else 0 for i in range(points)]
    meta = [84_000] + [100] * (points - 1)
    opens = [42_000] + [50] * (points - 1)          # 42,000 of 47,950 opens in the first point
    small = [9_000] + [48] * (points - 1)
    elapsed = points * width
    phases = [phase("start-up burst", 0, width, "metadata_ops", metadata_ops=84_000, opens=42_000, small_rpcs=9_000),
              phase("steady", width, elapsed, "read_bytes", read_bytes=2 * GIB * 95 * (points - 1),
                    opens=50 * (points - 1), small_rpcs=48 * (points - 1))]
    periodic = [{"channel": "write_bytes", "period_s": 13 * width, "count": 9, "mean_amount": 52 * GIB,
                 "first_s": 12 * width}]
    fs = timeline_fs(read, write, meta, opens=opens, small=small, phases=phases, periodic=periodic)
    return report_doc(timeline({"scratch": fs}, width_s=width), elapsed_s=elapsed)


def test_the_block_says_when_in_words_under_its_filesystem():
    lines = render.render_text(startup_then_steady()).splitlines()
    start = lines.index("  When (4.8 min a point, 12:00–15:10 UTC):")   # 3 points a glyph: 40 glyphs
    block = lines[start:start + 7]
    assert [line[:10] for line in block[1:4]] == ["    read  ", "    write ", "    meta  "]
    assert block[1].endswith("  peak 2.0 GiB/s") and block[3].endswith("  peak 884 op/s")
    assert block[4] == "    0–1.6 min start-up burst: 88 % of the opens, 61 % of the small RPCs"
    assert block[5] == "    1.6 min–3.2 h steady read, 2.0 GiB/s"
    assert block[6] == "    checkpoints: 52.0 GiB every 21 min, 9 times"
    assert lines[start - 1] == "  0 of 4 OSTs used"                      # under its filesystem


def test_steady_io_split_by_checkpoints_is_one_steady_phase_and_the_checkpoints():
    """The timeline's phases of steady reads between checkpoints, each a phase of its own: one
    line from the first to the last, its rate over all of them (the checkpoints' reads too),
    and the checkpoints' line."""
    width, points = 10.0, 60
    read = [MIB * 80] * points
    write = [GIB if i % 15 == 7 else 0 for i in range(points)]
    phases, at = [], 0
    for burst in range(7, points, 15):
        phases.append(phase("steady", at * width, burst * width, "read_bytes", read_bytes=MIB * 80 * (burst - at)))
        phases.append(phase("burst", burst * width, (burst + 1) * width, "write_bytes",
                            read_bytes=MIB * 80, write_bytes=GIB))
        at = burst + 1
    phases.append(phase("steady", at * width, points * width, "read_bytes", read_bytes=MIB * 80 * (points - at)))
    periodic = [{"channel": "write_bytes", "period_s": 15 * width, "count": 4, "mean_amount": GIB, "first_s": 70.0}]
    fs = timeline_fs(read, write, [3] * points, phases=phases, periodic=periodic)
    lines = whenview.block(displayable(report_doc(timeline({"scratch": fs}, width_s=width), elapsed_s=points * width)),
                           "scratch")
    assert lines[4:] == ["    0–10 min steady read, 8.0 MiB/s", "    checkpoints: 1.0 GiB every 2.5 min, 4 times"]


def test_idle_moments_shorter_than_a_point_are_not_said():
    """Between the prolog and the first sample, the last sample and the epilog: under a point,
    nothing to tell; an idle hour is said."""
    width, points = 10.0, 30
    phases = [phase("idle", 0, 4.0, None), phase("steady", 4.0, 150.0, "read_bytes", read_bytes=MIB * 150),
              phase("idle", 150.0, 250.0, None), phase("steady", 250.0, 296.0, "read_bytes", read_bytes=MIB * 46),
              phase("idle", 296.0, 300.0, None)]
    fs = timeline_fs([MIB * 10] * 15 + [0] * 10 + [MIB * 10] * 5, [0] * points, [1] * points, phases=phases)
    lines = whenview.block(displayable(report_doc(timeline({"scratch": fs}, width_s=width), elapsed_s=300.0)),
                           "scratch")
    assert [k for line in lines[3:] for k in ("steady", "idle") if f" {k}" in line] == ["steady", "idle", "steady"]


def test_a_long_phase_line_says_its_shares_shorter_never_cut_in_the_middle():
    """A steady storm of metadata at a short job's start: its kind, rate and shares are more than
    the block's width. The shares are said shorter ("of opens"), and when even that does not fit
    the last ones are left out: never a share cut in its middle, as a line shortened around "…"
    would be ("2265 op/s… % of the opens")."""
    width, points = 0.4, 30
    meta = [906] * 3 + [2] * (points - 3)
    opens = [300] * 3 + [1] * (points - 3)
    small = [100] * 3 + [30] * (points - 3)
    phases = [phase("steady", 0.3, 1.5, "metadata_ops", metadata_ops=2718, opens=900, small_rpcs=300),
              phase("steady", 1.5, 12.0, "read_bytes", read_bytes=MIB * 20, opens=27, small_rpcs=810)]
    fs = timeline_fs([MIB] * points, [0] * points, meta, opens=opens, small=small, phases=phases)
    lines = whenview.block(displayable(report_doc(timeline({"scratch": fs}, width_s=width), elapsed_s=12.0)),
                           "scratch")
    said = [line for line in lines if "steady metadata" in line]
    assert said == ["    0.3–1.5 s steady metadata, 2265 op/s: 97 % of opens, 27 % of small RPCs"], lines
    long_name = [dict(p, kind="start-up burst" if i == 0 else p["kind"]) for i, p in enumerate(phases)]
    fs["phases"] = [dict(long_name[0], start_s=1000.25, end_s=98765.5)] + long_name[1:]
    for line in whenview.block(displayable(report_doc(timeline({"scratch": fs}, width_s=width),
                                                      elapsed_s=100_000.0)), "scratch"):
        assert "…" not in line and columns(line) <= render.WIDTH, line


def test_a_share_that_tells_nothing_is_not_said():
    doc = startup_then_steady()
    steady = doc["timeline"]["filesystems"]["scratch"]["phases"][1]
    # the steady phase is 99 % of the job and holds 12 % of its opens: no share is said of it
    assert "    1.6 min–3.2 h steady read, 2.0 GiB/s" in render.render_text(doc).splitlines()
    assert steady["opens"] * 100 // 47_950 == 12


def with_latency(doc: dict, read: list | None, write: list | None) -> dict:
    """The document with the calls' mean latency per point (µs) and over the job (here the mean
    of the points')."""
    fs = doc["timeline"]["filesystems"]["scratch"]
    for d, means in (("read", read), ("write", write)):
        fs[f"{d}_latency_us"] = means
        given = [m for m in means or [] if m is not None]
        fs[f"{d}_latency_us_mean"] = sum(given) / len(given) if given else None
    return doc


def test_the_calls_latency_is_a_line_under_the_sparklines_where_the_block_has_room():
    points = 120
    read = [None] + [812.0] * (points - 2) + [3100.0]
    write = [2000.0 if i % 13 == 12 else None for i in range(points)]
    write[12] = 41_000.0
    without = whenview.block(startup_then_steady(), "scratch")
    lines = whenview.block(with_latency(startup_then_steady(), read, write), "scratch")
    mean_write = round(sum(w for w in write if w is not None) / 9 / 1000, 1)
    assert lines == without[:4] + [f"    latency: read 831 µs a call (slowest point 3.1 ms), "
                                   f"write {mean_write:g} ms (41 ms)"] + without[4:]
    only_read = whenview.block(with_latency(startup_then_steady(), read, None), "scratch")
    assert only_read[4] == "    latency: read 831 µs a call (slowest point 3.1 ms)"
    # the same in the HTML's words under its chart
    assert whenview.words(with_latency(startup_then_steady(), read, None), "scratch")[0] == \
        "latency: read 831 µs a call (slowest point 3.1 ms)"


def many_phases(points: int = 120, width: float = 10.0) -> dict:
    """A report whose scratch timeline has 20 phases of 6 points, steady and burst in turn."""
    cuts = list(range(0, points + 1, 6))
    phases = [phase("burst" if i % 2 else "steady", a * width, b * width, "read_bytes", read_bytes=(i + 1) * MIB)
              for i, (a, b) in enumerate(zip(cuts, cuts[1:]))]
    fs = timeline_fs([MIB] * points, [0] * points, [0] * points, phases=phases)
    return report_doc(timeline({"scratch": fs}, width_s=width), elapsed_s=points * width)


def test_a_block_the_phases_fill_has_no_latency_line():
    points = 120
    doc = many_phases(points)
    without = whenview.block(doc, "scratch")
    assert len(without) == whenview.MAX_LINES
    assert whenview.block(with_latency(doc, [500.0] * points, None), "scratch") == without


def test_no_latency_is_no_line_and_no_panel():
    """The clients count no latency (null), or a document from elsewhere holds something else
    where the means go: no line, no latency panel, no word of it in the chart's caption."""
    for read in (None, [None] * 120, [-1.0] * 120, ["812"] * 120, [812.0] * 119, 812.0):
        doc = with_latency(startup_then_steady(), None, None)
        doc["timeline"]["filesystems"]["scratch"]["read_latency_us"] = read
        doc["timeline"]["filesystems"]["scratch"]["read_latency_us_mean"] = 812.0
        assert not any("latency" in line for line in whenview.block(doc, "scratch")), read
        data = whenview.chart_data(doc, "scratch")
        assert data["read_latency_us"] is None and data["write_latency_us"] is None
        assert "mean latency" not in render.render_html(doc)
    doc = with_latency(startup_then_steady(), [812.0] * 120, None)
    assert "the mean latency of a read and a write call, metadata operations" in render.render_html(doc)


def test_too_many_phases_give_way_to_a_line_saying_so():
    lines = whenview.block(many_phases(), "scratch")
    cuts = list(range(0, 121, 6))
    assert len(lines) == whenview.MAX_LINES
    assert lines[-1] == "    and 13 more phases: see the HTML report"
    # the phases kept are those with the most of the job's reads, in time order
    assert lines[2:-1] == [f"    {a * 10 // 60}–{b * 10 // 60} min {'burst' if i % 2 else 'steady'}"
                           + (f", read {i + 1}.0 MiB" if i % 2 else f" read, {(i + 1) * MIB // 60 / 1024:.1f} KiB/s")
                           for i, (a, b) in list(enumerate(zip(cuts, cuts[1:])))[-7:]]


def test_a_partial_timeline_says_so_in_its_heading():
    doc = startup_then_steady()
    doc["timeline"]["filesystems"]["scratch"]["sums_to_totals"] = False
    doc["timeline"]["hosts_without"] = ["n07"]
    doc["timeline"]["gaps"] = 3
    heading = whenview.block(doc, "scratch")[0]
    assert heading == "  When (4.8 min a point, 12:00–15:10 UTC, 2 of 3 hosts, 3 gaps, partial):"


def test_a_timeline_with_a_note_is_one_line_and_its_note_is_not_said_twice():
    note = "the job ran 35 s: fewer than 6 points of 10 s, too short to say when"
    doc = report_doc(no_timeline(note), elapsed_s=35.0,
                     notes=[{"id": "TIMELINE_SHORT", "fs": None, "detail": note},
                            {"id": "SHORT_JOB", "fs": None, "detail": "the job ran 35.0 s, under 60 s: "
                                                                      "per-second rates are not judged"}])
    lines = render.render_text(doc).splitlines()
    assert [line for line in lines if "too short" in line] == [f"When: {note}"]
    assert "Note: the job ran 35.0 s, under 60 s: per-second rates are not judged" in lines
    assert "Not trusted:" not in lines and not any(line.startswith("  When") for line in lines)


def test_short_job_of_an_older_document_is_a_note_not_untrusted():
    short = {"id": "SHORT_JOB", "host": None, "fs": None, "detail": "the job ran 5.0 s, under 60 s: rates not judged"}
    reset = {"id": "COUNTER_RESET", "host": "n1", "fs": "scratch", "detail": "n1's stats were cleared"}
    lines = render.render_text(report_doc(None, data_quality=[short, reset])).splitlines()
    assert "Note: the job ran 5.0 s, under 60 s: rates not judged" in lines
    assert lines[lines.index("Not trusted:") + 1:-1] == [" ! n1's stats were cleared"]
    html = render.render_html(report_doc(None, data_quality=[short]))
    assert "Not trusted" not in html and 'class="note"' in html and "rates not judged" in html


def test_an_older_document_renders_as_before():
    """No "timeline" key, or a null one: no When block, the same text."""
    old = report_doc(None)
    new = report_doc(None) | {"timeline": None, "notes": []}
    assert render.render_text(old) == render.render_text(new)
    assert "When" not in render.render_text(old)


def test_a_control_sequence_in_a_filesystem_name_is_shown_escaped():
    doc = startup_then_steady()
    evil = "scr\x1b]52;c;cm0gLXJmIH4K\x07atch\u202e"
    doc["filesystems"] = {evil: doc["filesystems"].pop("scratch")}
    doc["timeline"]["filesystems"] = {evil: doc["timeline"]["filesystems"].pop("scratch")}
    doc["timeline"]["filesystems"][evil]["phases"][0]["kind"] = "burst\x1b[2J"
    text = render.render_text(doc)
    assert not any(unicodedata.category(c) in ("Cc", "Cf") for c in text.replace("\n", ""))
    assert "  When (4.8 min a point, 12:00–15:10 UTC):" in text and "start-up" not in text
    assert "0–1.6 min burst\\x1b[2J: 88 % of the opens" in text


def test_the_html_line_is_last_and_stays_when_the_report_is_cut():
    doc = startup_then_steady()
    for i in range(12):                            # 12 busy filesystems: the text must be cut
        doc["filesystems"][f"fs{i}"] = doc["filesystems"]["scratch"]
        doc["timeline"]["filesystems"][f"fs{i}"] = doc["timeline"]["filesystems"]["scratch"]
    lines = render.render_text(doc, html_path="/h/o\x1b[2J.html").splitlines()
    assert len(lines) == render.line_budget(displayable(doc)) == render.MAX_LINES + 2 * whenview.MAX_LINES
    assert "truncated" in lines[-2]
    assert lines[-1] == "HTML report: /h/o\\x1b[2J.html"


def test_the_when_blocks_give_way_before_the_findings_why(monkeypatch):
    """Past its lines (MAX_LINES, and a When block's for up to WHEN_EXTRA_FS filesystems: here
    none), the report's When blocks give their phases way first."""
    monkeypatch.setattr(render, "WHEN_EXTRA_FS", 0)
    doc = startup_then_steady()
    busy = ("scratch", "fs0")
    doc["filesystems"]["fs0"] = doc["filesystems"]["scratch"]
    doc["timeline"]["filesystems"]["fs0"] = doc["timeline"]["filesystems"]["scratch"]
    doc["flags"] = [{"id": "OPEN_STORM", "severity": "warn", "fs": fs, "finding": "many opens",
                     "why": "each open is a trip to the MDS", "advice": "open once"} for fs in busy]
    lines = render.render_text(doc).splitlines()
    assert len(lines) <= render.line_budget(displayable(doc)) == render.MAX_LINES
    assert sum("why: each open is a trip to the MDS" in line for line in lines) == len(busy)
    assert sum(line.startswith("  When (") for line in lines) == len(busy)          # every heading and sparkline kept
    assert sum(line.startswith("    meta  ") for line in lines) == len(busy)
    assert not any("steady read" in line for line in lines)                 # the phases gave way
    monkeypatch.setattr(render, "WHEN_EXTRA_FS", 2)                          # the shipped room: all of it
    assert any("steady read" in line for line in render.render_text(doc).splitlines())


def test_the_html_escapes_the_timeline_and_notes_and_draws_when():
    doc = startup_then_steady()
    evil = "<img src=x onerror=alert(1)>"
    doc["filesystems"] = {evil: doc["filesystems"].pop("scratch")}
    doc["timeline"]["filesystems"] = {evil: doc["timeline"]["filesystems"].pop("scratch")}
    doc["timeline"]["filesystems"][evil]["phases"][0]["kind"] = "<script>alert(2)</script>"
    doc["notes"] = [{"id": "SHORT_JOB", "fs": None, "detail": "<b>short</b>"}]
    page = render.render_html(doc)
    assert "<img" not in page and "<script" not in page and "<b>short" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page and "&lt;b&gt;short&lt;/b&gt;" in page
    assert page.count("<svg") == 2                                     # RPC sizes, and when
    assert "<li>0–1.6 min &lt;script&gt;al…&lt;/script&gt;: 88 % of the opens" in page     # a long kind shortened
    assert "Ran 2026-11-26 12:00:00 – 15:10:00 UTC (3:10:00)" in page
    assert "its phases shaded (1.6 min a point, 12:00–15:10 UTC)" in page   # the chart draws every point


def test_an_older_html_page_has_no_when_chart():
    page = render.render_html(report_doc(None))
    assert page.count("<svg") == 1 and "When:" not in page
    assert "Ran 2026-11-26 12:00:00 – 15:10:00 UTC (3:10:00)" in page


def test_times_and_spans_read_in_their_unit():
    words = timewords.span_words
    assert [words(0, 120), words(120, 11_400), words(600, 720), words(6_720, 7_020), words(30, 50)] == \
        ["0–2 min", "2 min–3.2 h", "10–12 min", "112–117 min", "30–50 s"]
    assert [timewords.time_words(s) for s in (0.2, 40, 1_260, 12_600, 200_000)] == \
        ["0.2 s", "40 s", "21 min", "3.5 h", "2.3 d"]
    assert [timewords.op_rate(n, 10.0) for n in (3, 8_800, 10**30, -5_000)] == \
        ["0.3 op/s", "880 op/s", "1e29 op/s", "-500 op/s"]
    assert [timewords.call_time(us) for us in (0.0, 0.42, 8.5, 812.4, 949.0, 960.0, 3_140.0, 41_000.0,
                                                1.2e6, 9.5e7)] == \
        ["0 µs", "0.4 µs", "8.5 µs", "812 µs", "949 µs", "1 ms", "3.1 ms", "41 ms", "1.2 s", "95 s"]


def test_the_job_s_begin_and_end_in_utc_and_its_elapsed_time():
    job = {"begin": "2026-11-26T23:10:00Z", "end": "2026-11-27T01:20:05Z", "elapsed_s": 7805.0}
    assert render.job_times(job) == "2026-11-26 23:10:00 – 2026-11-27 01:20:05 UTC (2:10:05)"
    assert render.job_times(job | {"end": None}) == "" and render.job_times(job | {"begin": "yesterday"}) == ""


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["idle", "steady", "burst", "start-up burst", "final flush"]),
                          st.floats(0.01, 100.0)), min_size=1, max_size=30))
def test_the_chart_labels_the_most_telling_phases_without_overlap(spans):
    """Phase labels above the chart: none within LABEL_GAP of another, and a phase left
    unlabelled only for a label at least as telling near it (an idle start never hides the
    start-up burst after it)."""
    from lustre_jobreport.report import charts

    phases, t = [], 0.0
    for kind, length in spans:
        phases.append({"kind": kind, "start_s": t, "end_s": t + length})
        t += length
    kept = charts._labels(phases, t)
    gap = charts.LABEL_GAP * t
    middles = [m for m, _ in kept]
    assert all(b - a >= gap for a, b in zip(middles, middles[1:]))
    rank = lambda kind: charts.LABEL_RANK.get(kind, 0)     # noqa: E731
    for p in phases:
        middle = (p["start_s"] + p["end_s"]) / 2
        if (middle, p["kind"]) not in kept:
            assert any(abs(middle - m) < gap and rank(k) <= rank(p["kind"]) for m, k in kept), (p, kept)
