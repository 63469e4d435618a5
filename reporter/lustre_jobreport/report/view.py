"""Renderings of a report document: JSON as is, text and HTML through templates/*.j2.

This module turns the document's numbers into display strings (the view); the template only
lays them out. The text report is for the end of a job's output: at most 40 lines (and a
"When" block's 10 for each of up to two filesystems: line_budget) of at most 80 columns. The text and HTML views are built only from displayable(doc) (present.text), so no
string of the document reaches a terminal or a page with hidden characters; the JSON rendering
keeps the data as it is (json.dumps writes every control character as a \\u escape).
"""

from __future__ import annotations

import json

from . import whenview
from .. import catalog
from ..catalog import size_bytes
from ..present.text import (MAX_LINES, WIDTH, bar, columns, compact, displayable, duration, environment, fold,
                            human_bytes, render_as, shorten, wrap_words)
from ..present.timewords import utc

SEV_LABEL = {"high": "HIGH", "warn": "WARN", "info": "INFO"}


# -- the views ----------------------------------------------------------------------------------

def _size(label: str) -> int | None:
    try:
        return size_bytes(label)
    except ValueError:
        return None


def shown_buckets(rpc: dict[str, dict[str, int] | None]) -> list[str]:
    """The buckets worth a column: smallest first, up to the largest non-empty one (at least 1M).
    A label that is not a size (no agent sends one) has no place on the axis and is left out."""
    reads, writes = rpc.get("read") or {}, rpc.get("write") or {}
    labels = sorted((l for l in set(reads) | set(writes) if _size(l) is not None), key=size_bytes)
    return catalog.shown_buckets(labels, {l for l in labels if reads.get(l, 0) or writes.get(l, 0)})


NOT_READ = "not read"


def _histogram(rpc: dict[str, dict[str, int] | None]) -> dict | None:
    """A bar row per direction: each bucket's count and a glyph scaled to the direction's
    largest bucket, or "not read" for a direction left out (None without buckets)."""
    shown = shown_buckets(rpc)
    if not shown:
        return None
    width = 7 if 6 + 7 * len(shown) <= WIDTH else 6 if 6 + 6 * len(shown) <= WIDTH else 5

    def row(direction: str) -> str:
        if rpc.get(direction) is None:
            return f"  {NOT_READ}"
        counts = [rpc[direction].get(l, 0) for l in shown]
        peak = max(counts, default=0)
        return "".join(compact(n, width - 2).rjust(width - 1) + bar(n, peak) for n in counts)
    return {"header": "".join(l.rjust(width - 1) + " " for l in shown).rstrip(),
            "read": row("read").rstrip(), "write": row("write").rstrip()}


# How the text names a total some of whose values were left out (aggregate.total_name), in the
# order the report's lines show them.
PARTLY_WORDS = (("read_bytes", "read bytes"), ("read_calls", "read calls"), ("write_bytes", "write bytes"),
                ("write_calls", "write calls"), ("rpc.read", "read RPC sizes"), ("rpc.write", "write RPC sizes"),
                ("ops.", "ops"), ("osts.", "OSTs"), ("trouble", "reconnects"))


def partly_read(fs: dict) -> str:
    """The totals of a filesystem counted on some hosts only, in words ("" when none)."""
    partial = [name for name in (fs.get("left_out") or {}) if name not in set(fs.get("not_read") or ())]
    words = [w for prefix, w in PARTLY_WORDS if any(n == prefix or (prefix.endswith(".") and n.startswith(prefix))
                                                    for n in partial)]
    return ", ".join(words)


def _count(n: int | None) -> str:
    return NOT_READ if n is None else f"{n:,}"


def _volume(fs: dict, direction: str) -> str:
    """read 1.0 GiB in 12 calls, 85.3 MiB avg; a value left out on every host is "not read"."""
    nbytes, calls = fs.get(f"{direction}_bytes"), fs.get(f"{direction}_calls")
    if nbytes is None and calls is None:
        return f"{direction}: {NOT_READ}"
    if nbytes is None:
        return f"{direction}: bytes {NOT_READ}, {calls:,} calls"
    if calls is None:
        return f"{direction} {human_bytes(nbytes)}, calls {NOT_READ}"
    left = fs.get("left_out") or {}
    whole = f"{direction}_bytes" not in left and f"{direction}_calls" not in left
    mean = f", {human_bytes(nbytes // calls)} avg" if calls and whole else ""
    return f"{direction} {human_bytes(nbytes)} in {calls:,} calls{mean}"


def _fs_view(name: str, fs: dict, when: list[str]) -> dict:
    ops = fs.get("ops") or {}
    ops_line = "  ".join(f"{op} {_count(ops.get(op, 0))}" for op in catalog.SHOWN_OPS)
    not_read = set(fs.get("not_read") or ())
    osts, ost_count = len(fs.get("osts") or {}), fs.get("ost_count")
    osts_line = (f"OSTs: {NOT_READ}" if {f"osts.{k}" for k in ("read_bytes", "write_bytes")} <= not_read
                 else f"{osts} of {ost_count} OSTs used" if ost_count else "")
    spread = fs.get("spread")
    per_host = (f"min {human_bytes(spread['min'])}, median {human_bytes(spread['median'])}, "
                f"max {human_bytes(spread['max'])} ({shorten(str(spread['max_host']))})") if spread else ""
    label = shorten(name)
    rpc = fs.get("rpc") or {}
    partly = partly_read(fs)
    return {"name": name, "label": label, "indent": " " * (columns(label) + 2),
            "read": _volume(fs, "read"), "write": _volume(fs, "write"), "ops": ops_line,
            "osts": osts_line, "per_host": per_host, "hist": _histogram(rpc),
            "no_hist": (f"{NOT_READ} (see Not trusted)" if rpc.get("read") is None and rpc.get("write") is None
                        else "none reported"),
            "partly": f"partly read (see Not trusted): {partly}" if partly else "", "when": when}


def _finding(f: dict, detail: bool) -> list[str]:
    sev = f.get("severity")
    head = f" {SEV_LABEL.get(sev, str(sev).upper())}  {shorten(str(f.get('id')))}"
    if f.get("fs") is not None:
        head += f" on {shorten(str(f['fs']))}"
    lines = [head] + wrap_words("", f.get("finding") or "", 7)
    if detail:
        lines += wrap_words("why: ", f.get("why") or "", 7) + wrap_words("do:  ", f.get("advice") or "", 7)
    return lines


# data_quality ids that do not make a number untrusted: shown as notes (an older document has
# SHORT_JOB among its data_quality; a newer one has it in "notes").
NOTE_IDS = frozenset({"SHORT_JOB"})


def notes(doc: dict) -> list[dict]:
    """The document's notes, with those of its data_quality entries that are notes (NOTE_IDS),
    and without one that says again what the timeline's own note says."""
    timeline = doc.get("timeline")
    said = timeline.get("note") if isinstance(timeline, dict) else None
    items = [n for n in doc.get("notes") or [] if isinstance(n, dict)]
    items += [q for q in doc.get("data_quality") or [] if q.get("id") in NOTE_IDS]
    return [n for n in items if not (said and n.get("detail") == said)]


def untrusted(doc: dict) -> list[dict]:
    """The data_quality entries that make numbers untrusted (not the notes)."""
    return [q for q in doc.get("data_quality") or [] if q.get("id") not in NOTE_IDS]


def job_times(job: dict) -> str:
    """ "2026-11-26 12:00:05 – 15:10:09 UTC (3:10:04)": the job's begin and end, the end's date
    written when it is another day; "" when either is unknown."""
    begin, end = utc(job.get("begin")), utc(job.get("end"))
    if begin is None or end is None:
        return ""
    end_words = end.strftime("%H:%M:%S" if end.date() == begin.date() else "%Y-%m-%d %H:%M:%S")
    took = duration(job.get("elapsed_s") if job.get("elapsed_s") is not None else (end - begin).total_seconds())
    return f"{begin.strftime('%Y-%m-%d %H:%M:%S')} – {end_words} UTC" + (f" ({took})" if took else "")


# How much of the "When" blocks the text shows: all, the heading and sparklines, nothing.
WHEN_FULL, WHEN_SPARKS, WHEN_NONE = "full", "sparks", "none"


def _text_view(doc: dict, detail: bool, when: str = WHEN_FULL, html_path: str | None = None) -> dict:
    job = doc.get("job") or {}
    hosts, missing = job.get("hosts") or [], job.get("hosts_missing") or []
    versions = sorted({shorten(str(v), 20) for v in (doc.get("lustre_versions") or {}).values() if v is not None})
    title = "Lustre I/O report"
    if job.get("id") is not None:
        title += f" for job {shorten(str(job['id']))}"
        if job.get("name"):
            title += f" '{shorten(str(job['name']))}'"
        title += f" ({shorten(str(job['user']))})" if job.get("user") else ""
    n = len(hosts)
    facts = [f"{n} host{'s' if n != 1 else ''}"]
    if missing:
        facts.append(f"{len(missing)} unreachable")
    if job.get("hosts_incomplete"):
        facts.append(f"{len(job['hosts_incomplete'])} partly read")
    if duration(job.get("elapsed_s")):
        facts.append(duration(job.get("elapsed_s")))
    if versions:
        facts.append("Lustre " + ", ".join(versions))
    findings = [_finding(f, detail) for f in doc.get("flags") or []]
    quality = [line for q in untrusted(doc)
               for line in wrap_words("! ", q.get("detail") or str(q.get("id")), 1)]
    note_lines = [line for n in notes(doc)
                  for line in wrap_words("Note: ", str(n.get("detail") or n.get("id")), 0)]
    # Busiest filesystem first; the ones this job did not touch get one line at the end.
    filesystems = doc.get("filesystems") or {}
    by_volume = sorted(filesystems.items(),
                       key=lambda kv: (-((kv[1].get("read_bytes") or 0) + (kv[1].get("write_bytes") or 0)), kv[0]))
    active = [_fs_view(k, v, [] if when == WHEN_NONE else whenview.block(doc, k, full=when == WHEN_FULL))
              for k, v in by_volume if _touched(v)]
    idle = [shorten(k) for k, v in by_volume if not _touched(v)]
    empty = ("" if filesystems else "No Lustre filesystem was mounted on the job's hosts." if hosts
             else "No host of the job could be read.")
    # with nothing read, nothing was judged; with values left out, only what was read was
    left_out = missing or job.get("hosts_incomplete") or any(v.get("left_out") for v in filesystems.values()) or any(
        q.get("id") == "METRIC_TYPE" for q in untrusted(doc))
    verdict = ("" if not hosts else "No I/O problems found." if not left_out
               else "No I/O problems found in what could be read (see Not trusted).")
    return {"title": title, "facts": " | ".join(facts), "rule": "-" * WIDTH,
            "findings": findings, "verdict": verdict, "filesystems": active,
            "idle": wrap_words("Not used by this job: ", ", ".join(idle), 0) if idle else [],
            "empty": empty, "quality": quality, "detail": detail, "notes": note_lines,
            "when_note": whenview.note_line(doc), "times": job_times(job),
            "html_line": html_line(html_path) if html_path else ""}


HTML_NOT_WRITTEN = "(The HTML report could not be written there: the node's hook log says why.)"


def html_line(path: str) -> str:
    """The text report's last line: where its HTML report is (the path shown safe)."""
    return "HTML report: " + displayable({"p": path})["p"]


def text_view(doc: dict, detail: bool = True) -> dict:
    """What templates/report.txt.j2 lays out for the document: its lines as strings, before
    the template and the fit to line_budget (render_text). The view is the place a line's words are
    decided, so it is where they are checked (tests/report/test_left_out_property.py)."""
    return _text_view(displayable(doc), detail)


def _touched(fs: dict) -> bool:
    """The job did something on the filesystem, or values of it were left out (then whether it
    did is not known, and its lines say what was not read)."""
    return bool(fs.get("read_bytes") or fs.get("write_bytes") or fs.get("read_calls") or fs.get("write_calls")
                or any((fs.get("ops") or {}).values())
                or any(n for d in (fs.get("rpc") or {}).values() if d for n in d.values())
                or fs.get("left_out"))


def _html_rows(rpc: dict[str, dict[str, int] | None]) -> list[dict]:
    """One row per shown bucket; bars scaled to the largest count; a direction left out is
    "not read" in every row."""
    shown = shown_buckets(rpc)
    reads, writes = rpc.get("read"), rpc.get("write")
    peak = max([1] + [d.get(l, 0) for d in (reads, writes) if d is not None for l in shown])

    def cell(d: dict | None, label: str) -> tuple[str, int]:
        return (NOT_READ, 0) if d is None else (f"{d.get(label, 0):,}", round(200 * d.get(label, 0) / peak))
    rows = []
    for l in shown:
        (r, r_px), (w, w_px) = cell(reads, l), cell(writes, l)
        rows.append({"label": l, "read": r, "write": w, "read_px": r_px, "write_px": w_px})
    return rows


def html_view(doc: dict) -> dict:
    from . import charts   # matplotlib: only the HTML rendering needs it

    doc = displayable(doc)
    view = _text_view(doc, detail=True)
    view["flags"] = [{"severity": f.get("severity") or "", "id": f.get("id"), "fs": f.get("fs"),
                      "finding": f.get("finding"), "why": f.get("why"), "advice": f.get("advice")}
                     for f in doc.get("flags") or []]
    view["quality_items"] = [{"id": q.get("id"), "detail": q.get("detail")} for q in untrusted(doc)]
    view["note_items"] = [{"id": n.get("id"), "fs": n.get("fs"), "detail": n.get("detail")} for n in notes(doc)]
    html_fs = []
    for fs in view["filesystems"]:
        data = doc["filesystems"][fs["name"]]
        rpc = data.get("rpc") or {}
        rows = _html_rows(rpc)
        not_read = set(data.get("not_read") or ())
        # charts draw counts only: none of a total no host's value of which was counted
        osts = {} if not_read & {"osts.read_bytes", "osts.write_bytes"} else data.get("osts") or {}
        hosts = {h: v for h, v in (data.get("hosts") or {}).items() if "read_bytes" in v and "write_bytes" in v}
        whole_rpc = rpc.get("read") is not None and rpc.get("write") is not None
        when = whenview.chart_data(doc, fs["name"])
        html_fs.append(dict(fs, rows=rows, when_chart=charts.timeline(when, _pagesize(doc)) if when else "",
                            when_latency=bool(when) and charts.has_latency(when),
                            when_lines=whenview.words(doc, fs["name"]),
                            when_facts=whenview.heading_facts(doc, fs["name"]),
                            rpc_chart=charts.rpc_histogram(rpc, [r["label"] for r in rows]) if rows and whole_rpc else "",
                            ost_chart=charts.ost_bytes(osts) if osts else "",
                            host_chart=charts.host_spread(hosts) if len(hosts) > 1 else ""))
    view["html_filesystems"] = html_fs
    return view


def _pagesize(doc: dict) -> int | None:
    """The clients' page size when they all gave the same one (RPC sizes in bytes), else None."""
    sizes = {c.get("pagesize") for c in (doc.get("clients") or {}).values() if isinstance(c, dict)}
    size = sizes.pop() if len(sizes) == 1 else None
    return size if isinstance(size, int) and not isinstance(size, bool) and size > 0 else None


def render_html(doc: dict) -> str:
    """One self-contained page (no scripts, no network fetches)."""
    return environment(autoescape=True).get_template("report.html.j2").render(**html_view(doc))


# What render_text gives up, in turn, to fit its lines: the "When" blocks' phases, the findings'
# why and what to do, the "When" blocks. (detail, when)
FITS = ((True, WHEN_FULL), (True, WHEN_SPARKS), (False, WHEN_SPARKS), (False, WHEN_NONE))
WHEN_EXTRA_FS = 2     # the "When" blocks of at most this many filesystems add their lines to MAX_LINES


def line_budget(doc: dict) -> int:
    """The text report's most lines: MAX_LINES, and a "When" block's (whenview.MAX_LINES) for
    each filesystem that has one, up to WHEN_EXTRA_FS (a job's busy filesystems are one or two:
    the report of one on more gives its blocks' phases way first)."""
    with_when = sum(1 for name in (doc.get("filesystems") or {}) if whenview.block(doc, name))
    return MAX_LINES + whenview.MAX_LINES * min(with_when, WHEN_EXTRA_FS)


def render_text(doc: dict, html_path: str | None = None) -> str:
    """The text report in at most line_budget(doc) lines of WIDTH columns; html_path: where the
    HTML report of the same document is, said in its last line."""
    template = environment().get_template("report.txt.j2")
    doc = displayable(doc)
    most = line_budget(doc)

    def lines(detail: bool, when: str) -> list[str]:
        text = template.render(**_text_view(doc, detail=detail, when=when, html_path=html_path))
        return [folded for line in text.splitlines() for folded in fold(line)]
    for detail, when in FITS:
        out = lines(detail, when)
        if len(out) <= most:
            break
    else:
        tail = out[-1:] if html_path else []
        out = out[:most - 1 - len(tail)] + ["... (truncated: the JSON/HTML report has everything)"] + tail
    return "\n".join(out) + "\n"


def render_json(doc: dict) -> str:
    """The document as it is: json.dumps (ensure_ascii) writes every control and non-ASCII
    character as a \\u escape, so the JSON text itself holds none."""
    return json.dumps(doc, indent=2, ensure_ascii=True) + "\n"


def render(doc: dict, fmt: str) -> str:
    return render_as(fmt, doc, text=render_text, json=render_json, html=render_html)
