"""Renderings of hostile, huge and odd-but-valid report documents (issue 9).

The documents are written out by hand (no snapshots, no aggregation): the renderer must take any
document of DESIGN §3's shape, whatever the agents, hosts or schedulers put in its strings and
however large its exact integer counts are.
"""

from __future__ import annotations

import copy
import html
import json
import re
import unicodedata
import xml.etree.ElementTree as ET

import matplotlib
import pytest

from lustre_jobreport.report import charts, view as render

# An OSC 52 sequence asks the terminal to put its payload on the clipboard.
OSC52 = "\x1b]52;c;cm0gLXJmIH4K\x07"
HOSTILE = {
    "osc52": OSC52,
    "csi": "\x1b[2J\x1b[31m",
    "csi8": "\x9b2J",                     # the 8-bit CSI (C1)
    "nel": "\x85",                        # C1 next line
    "del": "\x7f",
    "cr": "\rOK",
    "bs": "\x08\x08",
    "tab": "\t",
    "newline": "\nFAKE LINE",
    "rlo": "\u202egnp.exe",               # right-to-left override
    "isolate": "\u2066x\u2069",           # left-to-right isolate ... pop
    "zwsp": "\u200b",
    "bom": "\ufeff",
    "linesep": "\u2028",
    "surrogate": "\udcff",                # what surrogateescape leaves from a bad byte
}
EVIL = "".join(HOSTILE.values())


def unsafe(ch: str) -> bool:
    """Characters a rendering must never carry from the data (the renderings' own newlines aside)."""
    return ch != "\n" and unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp")


def columns(line: str) -> int:
    """Terminal columns: East Asian wide/full-width characters take two, combining marks none."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
               for c in line)


def text_lines(doc: dict) -> list[str]:
    text = render.render_text(doc)
    assert text.endswith("\n")
    lines = text[:-1].split("\n")
    assert len(lines) <= render.MAX_LINES, text
    assert max(map(columns, lines)) <= render.WIDTH, "\n".join(l for l in lines if columns(l) > render.WIDTH)
    return lines


def fs_entry(hosts=("n1", "n2"), osts=("OST0000", "OST0001"), scale=1) -> dict:
    per_host = {h: {"read_bytes": (i + 1) * (1 << 30) * scale, "write_bytes": (1 << 20) * scale,
                    "open": 10 * scale} for i, h in enumerate(hosts)}
    moved = sorted(v["read_bytes"] + v["write_bytes"] for v in per_host.values())
    spread = ({"hosts": len(moved), "min": moved[0], "median": moved[len(moved) // 2], "max": moved[-1],
               "max_host": max(per_host, key=lambda h: per_host[h]["read_bytes"])} if len(moved) > 1 else None)
    return {
        "read_bytes": sum(v["read_bytes"] for v in per_host.values()),
        "write_bytes": sum(v["write_bytes"] for v in per_host.values()),
        "read_calls": 1000 * scale, "write_calls": 10 * scale,
        "ops": {"open": 10 * scale, "close": 10 * scale, "getattr": 5 * scale, "statfs": 0,
                "setattr": 0, "fsync": scale},
        "rpc": {"read": {"4K": 3000 * scale, "8K": 0, "1M": 1000 * scale, "4M": 0},
                "write": {"4K": 0, "8K": 7 * scale, "1M": scale, "4M": 0}},
        "osts": {o: {"read_bytes": (1 << 29) * scale, "write_bytes": (1 << 19) * scale,
                     "read_rpcs": 500 * scale, "write_rpcs": scale, "wait_us_mean": 120.5} for o in osts},
        "hosts": per_host, "ost_count": len(osts) + 2, "spread": spread,
        "trouble": [{"host": hosts[0], "target": f"scratch-{osts[0]}", "reconnects": 2, "state": "FULL"}],
    }


def document(hosts=("n1", "n2"), filesystems=None, *, job_id="4242", user="ann", version="2.15.4",
             flags=None, quality=None, elapsed_s=3600.0) -> dict:
    filesystems = {"scratch": fs_entry(hosts)} if filesystems is None else filesystems
    return {
        "schema": "lustre-jobreport/1",
        "job": {"id": job_id, "user": user, "name": "sim", "partition": "batch", "account": None,
                "hosts": list(hosts), "hosts_missing": [], "begin": "2024-01-01T00:00:00Z",
                "end": "2024-01-01T01:00:00Z", "elapsed_s": elapsed_s},
        "lustre_versions": {h: version for h in hosts},
        "clients": {h: {"lustre": version, "kernel": "6.1", "os": "debian 12", "settings": {}} for h in hosts},
        "filesystems": filesystems,
        "flags": [{"id": "SMALL_RPC_READ", "severity": "high", "fs": next(iter(filesystems), "scratch"),
                   "finding": "75% of read RPCs were 4K", "why": "small RPCs waste round trips",
                   "advice": "read in larger blocks", "evidence": {"small": 3000}}] if flags is None else flags,
        "data_quality": [] if quality is None else quality,
    }


def hostile_document(tag: str = EVIL) -> dict:
    """Every string a site, an agent or a scheduler feeds into the report carries `tag`."""
    hosts = ("n1" + tag, "n2" + OSC52, "n3")
    fs_name = "scratch" + tag
    fs = fs_entry(hosts, osts=("OST0000" + tag, "OST0001"))
    fs["rpc"]["read"]["2M" + tag] = 5                     # a bucket label no agent should send
    fs["ops"]["ioctl" + tag] = 3
    fs["trouble"][0]["state"] = "EVICTED" + tag
    idle = fs_entry(hosts)
    for k in ("read_bytes", "write_bytes", "read_calls", "write_calls"):
        idle[k] = 0
    idle["ops"] = {k: 0 for k in idle["ops"]}
    idle["rpc"] = {"read": {"4K": 0}, "write": {"4K": 0}}
    doc = document(hosts, {fs_name: fs, "home" + tag: idle}, job_id="77" + tag, user="eve" + tag,
                   version="2.15.4" + tag,
                   flags=[{"id": "FS_TROUBLE" + tag, "severity": "info", "fs": fs_name,
                           "finding": f"{hosts[0]} lost {fs_name}-OST0000" + tag, "why": "why" + tag,
                           "advice": "ask" + tag, "evidence": {"state" + tag: "EVICTED" + tag}}],
                   quality=[{"id": "HOST_UNREACHABLE", "host": "n9" + tag, "fs": None,
                             "detail": "n9" + tag + " could not be read: " + OSC52 + "timed out"},
                            {"id": "REMOUNT", "host": hosts[0], "fs": fs_name,
                             "detail": f"{fs_name} remounted on {hosts[0]} (mount id ffff{tag} -> eeee)"}])
    doc["job"]["hosts_missing"] = ["n9" + tag]
    doc["job"]["name"] = "job" + tag
    return doc


# -- 1. terminal control sequences ------------------------------------------------------------

def test_no_control_character_of_the_data_reaches_the_text_report():
    text = "\n".join(text_lines(hostile_document()))
    assert [c for c in text if unsafe(c)] == []
    # ... and an admin sees that a name was odd: the escape is visible, in place
    assert "\\x1b]52;c;cm0gLXJmIH4K\\x07" in text
    assert "(eve\\x1b]52;" in text and "FAKE" in text


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_each_kind_of_control_is_escaped_in_text_and_html(name):
    doc = hostile_document(HOSTILE[name])
    text = render.render_text(doc)
    page = render.render_html(doc)
    assert [c for c in text if unsafe(c)] == []
    assert [c for c in page if unsafe(c)] == []
    assert "\\x" in text or "\\u" in text
    assert "\\x" in page or "\\u" in page


def test_the_html_page_escapes_controls_in_every_string_and_key():
    page = render.render_html(hostile_document())
    assert [hex(ord(c)) for c in page if unsafe(c)] == []
    assert "\\x1b]52;c;cm0gLXJmIH4K\\x07" in page
    assert "FS_TROUBLE\\x1b" in page


def test_json_stays_the_raw_data_with_every_control_escaped():
    doc = hostile_document()
    out = render.render_json(doc)
    assert out.isascii() and [c for c in out if unsafe(c)] == []
    assert json.loads(out) == doc          # the data itself is not altered
    assert doc == hostile_document()       # nor is the caller's document, by any rendering
    render.render_text(doc), render.render_html(doc)
    assert doc == hostile_document()


def test_names_that_differ_only_in_controls_stay_apart():
    idle = fs_entry()
    for k in ("read_bytes", "write_bytes", "read_calls", "write_calls"):
        idle[k] = 0
    idle["ops"], idle["rpc"] = {}, {"read": {}, "write": {}}
    names = ["fs\x1b", "fs\x07", "fs\\x1b", "fs"]      # the third is a literal backslash, x, 1, b
    doc = document(filesystems={n: copy.deepcopy(idle) for n in names}, flags=[])
    line = next(l for l in text_lines(doc) if l.startswith("Not used by this job"))
    shown = line.split(": ", 1)[1].split(", ")
    assert len(set(shown)) == 4 and "fs" in shown and "fs\\x1b" in shown and "fs\\x07" in shown


def test_long_hostile_strings_keep_the_text_report_in_80_columns_and_40_lines():
    long = ("x" * 3000) + OSC52 + ("y" * 3000)
    wide = "計算ノード" * 200                    # two columns each
    combining = "e" + "\u0301" * 500
    for tag in (long, wide, combining, (OSC52 * 300)):
        lines = text_lines(hostile_document(tag))
        assert lines[0] == "-" * render.WIDTH and lines[-1].startswith(("-", "..."))


def test_many_long_versions_and_a_long_job_id_wrap_the_heading():
    hosts = [f"n{i}" for i in range(6)]
    doc = document(hosts, job_id="1234567890" * 5, user="a-rather-long-user-name")
    doc["lustre_versions"] = {h: f"2.15.{i}-llnl.ddn.{i}" for i, h in enumerate(hosts)}
    lines = text_lines(doc)
    assert "2.15.5-llnl.ddn.5" in "\n".join(lines)


# -- 2. math text in chart labels ---------------------------------------------------------------

MATH = ["$\\frac{1}{0}$", "$", "\\", "$$", "$\\nosuch$", "a_b%c", "100% $x^$", "ü日本", ""]


def svg_texts(svg: str) -> list[str]:
    ET.fromstring(svg)   # well-formed, whatever the labels held
    return [html.unescape(re.sub(r"<[^>]+>", "", t)) for t in re.findall(r"<text\b[^>]*>(.*?)</text>", svg, re.S)]


def test_chart_labels_are_plain_text_not_math():
    hosts = tuple(MATH)
    doc = document(hosts, {"$x$": fs_entry(hosts, osts=tuple(f"OST{m}" for m in MATH))})
    page = render.render_html(doc)                     # text as paths: must not raise
    assert page.count("<svg") == 3
    with matplotlib.rc_context({"svg.fonttype": "none"}):   # text as <text>: read the labels back
        view = render.html_view(doc)
    fs = view["html_filesystems"][0]
    host_labels, ost_labels = svg_texts(fs["host_chart"]), svg_texts(fs["ost_chart"])
    for m in MATH:
        if m:
            assert m in host_labels, (m, host_labels)
            assert f"OST{m}" in ost_labels, (m, ost_labels)
    if "text.parse_math" in matplotlib.rcParams:              # (matplotlib 3.5+)
        assert matplotlib.rcParams["text.parse_math"] is True  # the charts changed nothing globally


def test_chart_labels_of_very_long_names_are_shortened_and_draw():
    hosts = ("h" * 500 + "-a", "h" * 500 + "-b")
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        labels = svg_texts(charts.host_spread({h: {"read_bytes": 1, "write_bytes": 1} for h in hosts}))
    long = [l for l in labels if l.startswith("hhh")]
    assert len(long) == 2 and len(set(long)) == 2 and max(map(len, long)) <= 40


def test_chart_markup_in_names_stays_text():
    hosts = ("<script>alert(1)</script>", "--><b>x</b><!--")
    page = render.render_html(document(hosts))
    assert "<script" not in page and "<b>x</b>" not in page


# -- 3. huge counts ---------------------------------------------------------------------------------

HUGE = [2 ** 63 + 1, 2 ** 64 - 1, 2 ** 64 + 5, 2 ** 70]


def test_human_bytes_and_compact_cover_exabytes_and_beyond():
    assert render.human_bytes(2 ** 60) == "1.0 EiB"
    assert render.human_bytes(2 ** 64) == "16.0 EiB"
    assert render.human_bytes(2 ** 70) == "1.0 ZiB"
    assert render.human_bytes(2 ** 80) == "1.0 YiB"
    assert render.human_bytes(1024 * 1024 - 1) == "1.0 MiB"       # not "1024.0 KiB"
    assert render.human_bytes(0) == "0 B" and render.human_bytes(1023) == "1023 B"
    render.human_bytes(10 ** 400)                                  # beyond floats: no crash
    assert render.compact(2 ** 64) == "18E" and render.compact(2 ** 70) == "1.2Z"
    for w in (4, 5):
        for n in HUGE + [10 ** 26, 10 ** 27 - 1, 10 ** 30]:
            assert len(render.compact(n, w)) <= w, (n, w, render.compact(n, w))
    assert render.compact(10 ** 30) == "1e30" and render.compact(10 ** 400) == "1e400"
    assert render.bar(2 ** 70, 2 ** 70) == "█" and render.bar(1, 2 ** 70) == "▁"


@pytest.mark.parametrize("n", HUGE)
def test_huge_counts_render_in_text_and_html(n):
    fs = fs_entry(scale=1)
    fs["read_bytes"] = fs["read_calls"] = n
    fs["rpc"]["read"]["4K"] = n
    fs["rpc"]["write"]["1M"] = n * 3              # a sum over hosts beyond 2^64
    fs["ops"]["open"] = n
    fs["osts"]["OST0000"]["read_bytes"] = n
    fs["hosts"]["n1"]["read_bytes"] = n
    fs["spread"]["max"] = n
    doc = document(filesystems={"scratch": fs})
    text = "\n".join(text_lines(doc))
    assert "EiB" in text or "ZiB" in text
    page = render.render_html(doc)
    assert page.count("<svg") == 3 and f"{n:,}" in page


def test_charts_take_any_non_negative_int_zero_and_all_zero_data():
    rpc_all_zero = {"read": {"4K": 0, "1M": 0}, "write": {"4K": 0, "1M": 0}}
    rpc_mixed = {"read": {"4K": 0, "1M": 2 ** 70}, "write": {"4K": 1, "1M": 0}}
    for rpc in (rpc_all_zero, rpc_mixed):
        assert charts.rpc_histogram(rpc, ["4K", "1M"]).startswith("<svg")
    for v in (0, 1, 2 ** 64 + 1, 2 ** 70, 10 ** 400):
        assert charts.ost_bytes({"OST0000": {"read_bytes": v, "write_bytes": None}}).startswith("<svg")
        assert charts.host_spread({"a": {"read_bytes": v}, "b": {}}).startswith("<svg")


# -- 4. odd but valid documents ------------------------------------------------------------------------------

def test_a_job_whose_hosts_could_not_be_read():
    doc = document(hosts=(), filesystems={}, flags=[],
                   quality=[{"id": "HOST_UNREACHABLE", "host": "n1", "fs": None, "detail": "n1 timed out"}])
    doc["job"]["hosts_missing"] = ["n1"]
    text = "\n".join(text_lines(doc))
    assert "No Lustre filesystem was mounted" not in text      # nobody could tell
    assert "No host of the job could be read." in text
    assert "No host of the job could be read." in render.render_html(doc)


def test_a_filesystem_without_rpc_buckets():
    fs = fs_entry()
    fs["rpc"] = {"read": {}, "write": {}}
    doc = document(filesystems={"scratch": fs})
    text = "\n".join(text_lines(doc))
    assert "RPC sizes: none reported" in text
    page = render.render_html(doc)
    assert page.count("<svg") == 2     # no empty RPC chart; OSTs and hosts remain


@pytest.mark.parametrize("elapsed", [0, 0.0, None, float("nan"), float("inf")])
def test_any_elapsed_time(elapsed):
    doc = document(elapsed_s=elapsed)
    text = "\n".join(text_lines(doc))
    assert "2 hosts" in text
    render.render_html(doc)


def test_optional_and_unknown_values():
    fs = fs_entry(hosts=("n1",))
    for k in ("spread", "ost_count", "trouble"):
        del fs[k]
    fs["rpc"]["read"]["huge-bucket"] = 9           # not a size: not a histogram column, no crash
    doc = document(hosts=("n1",), filesystems={"scratch": fs}, job_id=None, user=None,
                   flags=[{"id": "JOB_WIDE", "severity": "notice", "fs": None, "finding": "odd",
                           "why": None, "advice": None, "evidence": {}}],
                   quality=[{"id": "SHORT_JOB", "host": None, "fs": None, "detail": None}])
    doc["lustre_versions"]["n2"] = None             # a host whose version was not read
    del doc["clients"]
    text = "\n".join(text_lines(doc))
    assert "JOB_WIDE" in text and "SHORT_JOB" in text and " on None" not in text
    page = render.render_html(doc)
    assert "JOB_WIDE" in page and "None" not in page
