"""Renderings of a report document: JSON as is, text and HTML through templates/*.j2.

This module turns numbers into display strings (the view); the template only lays them out.
The text report is for the end of a job's output: at most 40 lines of at most 80 columns.

Every string of the document came from somewhere else (host and filesystem names, versions,
error texts, scheduler fields) and may hold terminal control sequences or Unicode characters that
reorder or hide text. The text and HTML views are built only from displayable(doc), which shows
each such character as a visible escape (\\x1b, \\u202e), keys included; the JSON rendering
keeps the data as it is (json.dumps writes every control character as a \\u escape).
"""

from __future__ import annotations

import functools
import json
import math
import os
import unicodedata
from decimal import Decimal
from pathlib import Path

import jinja2

from .. import catalog
from ..catalog import size_bytes
from ..present.textsafe import escaped, hidden

MAX_LINES, WIDTH = 40, 80
NAME_COLS, WORD_COLS = 32, 40      # longest name / word of prose the text report shows whole
SEV_LABEL = {"high": "HIGH", "warn": "WARN", "info": "INFO"}
BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB")
SI_SUFFIXES = ("k", "M", "G", "T", "P", "E", "Z", "Y")


def templates_dir() -> Path:
    """LUSTRE_JOBREPORT_TEMPLATES, else the source tree's templates/, else the installed copy."""
    env = os.environ.get("LUSTRE_JOBREPORT_TEMPLATES")
    candidates = [Path(env)] if env else []
    candidates += [Path(__file__).resolve().parents[3] / "templates",
                   Path("/usr/share/lustre-jobreport/templates")]
    for c in candidates:
        if (c / "report.txt.j2").is_file():
            return c
    raise FileNotFoundError("lustre-jobreport templates not found (set LUSTRE_JOBREPORT_TEMPLATES)")


# -- displayable strings ------------------------------------------------------------------------

def _strings(obj: object, into: set[str]) -> None:
    if isinstance(obj, str):
        into.add(obj)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _strings(k, into)
            _strings(v, into)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _strings(v, into)


def _replaced(obj: object, shown: dict[str, str]) -> object:
    if isinstance(obj, str):
        return shown.get(obj, obj)
    if isinstance(obj, dict):
        return {_replaced(k, shown): _replaced(v, shown) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_replaced(v, shown) for v in obj]
    return obj


def displayable(doc: dict) -> dict:
    """The document with every string (values and keys) safe to show on a terminal or a page.

    A hidden character becomes a visible escape; a string that then reads like another one of
    the document gets a ~2, ~3 ... suffix, so names that differ only in hidden characters stay
    apart (and keys stay keys). Strings without hidden characters are kept as they are. The
    caller's document is not changed.
    """
    strings: set[str] = set()
    _strings(doc, strings)
    odd = sorted(s for s in strings if hidden(s))
    if not odd:
        return doc
    taken = strings.difference(odd)
    shown = {}
    for s in odd:
        plain = candidate = escaped(s)
        n = 1
        while candidate in taken:
            n += 1
            candidate = f"{plain}~{n}"
        taken.add(candidate)
        shown[s] = candidate
    return _replaced(doc, shown)


def columns(s: str) -> int:
    """Terminal columns of a displayable string: wide East Asian characters take two, combining
    marks none."""
    if s.isascii():
        return len(s)
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
               for c in s)


def _head(s: str, cols: int) -> str:
    """The longest start of s that fits in cols columns."""
    used = 0
    for i, c in enumerate(s):
        used += columns(c)
        if used > cols:
            return s[:i]
    return s


def shorten(s: str, cols: int = NAME_COLS) -> str:
    """s in at most cols columns: its start and end kept around a "…" (names differ at both ends)."""
    if columns(s) <= cols:
        return s
    room = cols - 1
    head = _head(s, room - room // 2)
    return head + "…" + _head(s[::-1], room - columns(head))[::-1]


def _short_words(text: str) -> str:
    return " ".join(shorten(w, WORD_COLS) for w in text.split(" "))


def _lines(words: list[str], first: str, rest: str, width: int = WIDTH) -> list[str]:
    """Words filled into lines of `width` columns, the first line after `first`, the others
    after `rest`; a word longer than a line is cut across lines."""
    if not words:
        return []
    lines, line, fresh = [], first, True
    for word in words:
        if not fresh and columns(line) + 1 + columns(word) <= width:
            line += " " + word
            continue
        if not fresh:
            lines.append(line)
            line = rest
        while columns(line) + columns(word) > width:
            piece = _head(word, width - columns(line)) or word[0]
            lines.append(line + piece)
            word, line = word[len(piece):], rest
        line, fresh = line + word, False
    return lines + [line]


def _wrap(label: str, text: str, indent: int) -> list[str]:
    first = " " * indent + label
    return _lines(_short_words(text).split(), first, " " * columns(first))


def _fold(line: str) -> list[str]:
    """A rendered line as it fits in WIDTH columns: wrapped at spaces under its own indent."""
    if columns(line) <= WIDTH:
        return [line]
    body = line.lstrip(" ")
    indent = " " * (len(line) - len(body))
    return _lines(body.split(), indent, indent + "  ")


# -- numbers ------------------------------------------------------------------------------------

def human_bytes(n: int) -> str:
    """Bytes in binary units: 1023 B, 1.0 KiB ... 16.0 EiB, 1.0 ZiB (exact ints of any size)."""
    n = int(n)
    i = min(max(0, (abs(n).bit_length() - 1) // 10), len(BYTE_UNITS) - 1)
    if i == 0:
        return f"{n} B"
    value = Decimal(n) / (1 << 10 * i)
    if abs(value) >= Decimal("1023.95") and i + 1 < len(BYTE_UNITS):
        i, value = i + 1, value / 1024
    return f"{value:.1f} {BYTE_UNITS[i]}" if abs(value) < 10 ** 6 else f"{value:.3g} {BYTE_UNITS[i]}"


def compact(n: int, width: int = 5) -> str:
    """A count in at most `width` (4 or 5) characters: 12243 / 12k, 123k, 1.2M, 18E, 1e30."""
    if n < 10 ** width:
        return str(n)
    if n < 10 ** (3 * len(SI_SUFFIXES) + 3):
        for power, suffix in enumerate(SI_SUFFIXES, 1):
            v = n / 10 ** (3 * power)
            if v < 9.95:
                return f"{v:.1f}{suffix}"
            if round(v) < 1000 and len(f"{v:.0f}{suffix}") <= width:
                return f"{v:.0f}{suffix}"
    exp = len(str(n)) - 1
    mantissa = (2 * n + 10 ** exp) // (2 * 10 ** exp)     # rounded, in integers (no float range)
    if mantissa == 10:
        mantissa, exp = 1, exp + 1
    return f"{mantissa}e{exp}"


BARS = " ▁▂▃▄▅▆▇█"


def bar(n: int, peak: int) -> str:
    """One block glyph for n relative to the largest bucket; any non-zero count shows."""
    if n <= 0 or peak <= 0:
        return " "
    return BARS[max(1, min(8, round(8 * n / peak)))]


def duration(seconds: float | None) -> str:
    """1.5 s, 2:03:04; "" when the time is unknown."""
    if seconds is None or not math.isfinite(seconds):
        return ""
    s = int(round(seconds))
    if s < 60:
        return f"{seconds:.1f} s"
    h, rest = divmod(s, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}"


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
    nonzero = [l for l in labels if reads.get(l, 0) or writes.get(l, 0)]
    top = max([size_bytes(l) for l in nonzero] + [1 << 20])
    return [l for l in labels if size_bytes(l) <= top]


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


def _fs_view(name: str, fs: dict) -> dict:
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
            "partly": f"partly read (see Not trusted): {partly}" if partly else ""}


def _finding(f: dict, detail: bool) -> list[str]:
    sev = f.get("severity")
    head = f" {SEV_LABEL.get(sev, str(sev).upper())}  {shorten(str(f.get('id')))}"
    if f.get("fs") is not None:
        head += f" on {shorten(str(f['fs']))}"
    lines = [head] + _wrap("", f.get("finding") or "", 7)
    if detail:
        lines += _wrap("why: ", f.get("why") or "", 7) + _wrap("do:  ", f.get("advice") or "", 7)
    return lines


def _text_view(doc: dict, detail: bool) -> dict:
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
    quality = [line for q in doc.get("data_quality") or []
               for line in _wrap("! ", q.get("detail") or str(q.get("id")), 1)]
    # Busiest filesystem first; the ones this job did not touch get one line at the end.
    filesystems = doc.get("filesystems") or {}
    by_volume = sorted(filesystems.items(),
                       key=lambda kv: (-((kv[1].get("read_bytes") or 0) + (kv[1].get("write_bytes") or 0)), kv[0]))
    active = [_fs_view(k, v) for k, v in by_volume if _touched(v)]
    idle = [shorten(k) for k, v in by_volume if not _touched(v)]
    empty = ("" if filesystems else "No Lustre filesystem was mounted on the job's hosts." if hosts
             else "No host of the job could be read.")
    # with nothing read, nothing was judged; with values left out, only what was read was
    left_out = missing or job.get("hosts_incomplete") or any(v.get("left_out") for v in filesystems.values()) or any(
        q.get("id") == "METRIC_TYPE" for q in doc.get("data_quality") or [])
    verdict = ("" if not hosts else "No I/O problems found." if not left_out
               else "No I/O problems found in what could be read (see Not trusted).")
    return {"title": title, "facts": " | ".join(facts), "rule": "-" * WIDTH,
            "findings": findings, "verdict": verdict, "filesystems": active,
            "idle": _wrap("Not used by this job: ", ", ".join(idle), 0) if idle else [],
            "empty": empty, "quality": quality, "detail": detail}


def text_view(doc: dict, detail: bool = True) -> dict:
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
    view["quality_items"] = [{"id": q.get("id"), "detail": q.get("detail")} for q in doc.get("data_quality") or []]
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
        html_fs.append(dict(fs, rows=rows,
                            rpc_chart=charts.rpc_histogram(rpc, [r["label"] for r in rows]) if rows and whole_rpc else "",
                            ost_chart=charts.ost_bytes(osts) if osts else "",
                            host_chart=charts.host_spread(hosts) if len(hosts) > 1 else ""))
    view["html_filesystems"] = html_fs
    return view


def _environment(autoescape: bool = False) -> jinja2.Environment:
    return _environment_of(str(templates_dir()), autoescape)


@functools.lru_cache(maxsize=8)
def _environment_of(directory: str, autoescape: bool) -> jinja2.Environment:
    """One environment per templates directory: it compiles each template once (and again
    when its file changes), not on every rendering."""
    return jinja2.Environment(loader=jinja2.FileSystemLoader(directory),
                              undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                              trim_blocks=True, lstrip_blocks=True, autoescape=autoescape)


def render_html(doc: dict) -> str:
    """One self-contained page (no scripts, no network fetches)."""
    return _environment(autoescape=True).get_template("report.html.j2").render(**html_view(doc))


def render_text(doc: dict) -> str:
    template = _environment().get_template("report.txt.j2")
    doc = displayable(doc)

    def lines(detail: bool) -> list[str]:
        text = template.render(**_text_view(doc, detail=detail))
        return [folded for line in text.splitlines() for folded in _fold(line)]
    out = lines(detail=True)
    if len(out) > MAX_LINES:  # too many findings for the job log: drop why/advice
        out = lines(detail=False)
    if len(out) > MAX_LINES:
        out = out[:MAX_LINES - 1] + ["... (truncated: the JSON/HTML report has everything)"]
    return "\n".join(out) + "\n"


def render_json(doc: dict) -> str:
    """The document as it is: json.dumps (ensure_ascii) writes every control and non-ASCII
    character as a \\u escape, so the JSON text itself holds none."""
    return json.dumps(doc, indent=2, ensure_ascii=True) + "\n"


def render(doc: dict, fmt: str) -> str:
    if fmt == "json":
        return render_json(doc)
    if fmt == "text":
        return render_text(doc)
    if fmt == "html":
        return render_html(doc)
    raise ValueError(f"unknown format {fmt}")
