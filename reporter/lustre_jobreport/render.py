"""Renderings of a report document: JSON as is, text and HTML through templates/*.j2.

This module turns numbers into display strings (the view); the template only lays them out.
The text report is for the end of a job's output: at most 40 lines of at most 80 columns.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import jinja2

from .aggregate import size_bytes

MAX_LINES, WIDTH = 40, 80
SEV_LABEL = {"high": "HIGH", "warn": "WARN", "info": "INFO"}


def templates_dir() -> Path:
    """LUSTRE_JOBREPORT_TEMPLATES, else the source tree's templates/, else the installed copy."""
    env = os.environ.get("LUSTRE_JOBREPORT_TEMPLATES")
    candidates = [Path(env)] if env else []
    candidates += [Path(__file__).resolve().parents[2] / "templates",
                   Path("/usr/share/lustre-jobreport/templates")]
    for c in candidates:
        if (c / "report.txt.j2").is_file():
            return c
    raise FileNotFoundError("lustre-jobreport templates not found (set LUSTRE_JOBREPORT_TEMPLATES)")


def human_bytes(n: int) -> str:
    value, unit = float(n), "B"
    for next_unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        if value < 1024:
            break
        value, unit = value / 1024, next_unit
    return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"


def compact(n: int, width: int = 5) -> str:
    """A count in at most `width` (4 or 5) characters: 12243 / 12k, 123k, 1.2M."""
    if n < 10 ** width:
        return str(n)
    for div, suffix in ((1e3, "k"), (1e6, "M"), (1e9, "G"), (1e12, "T")):
        v = n / div
        if v < 9.95:
            return f"{v:.1f}{suffix}"
        if round(v) < 1000 and len(f"{v:.0f}{suffix}") <= width:
            return f"{v:.0f}{suffix}"
    return f"{n:.0e}"


BARS = " ▁▂▃▄▅▆▇█"


def bar(n: int, peak: int) -> str:
    """One block glyph for n relative to the largest bucket; any non-zero count shows."""
    if n <= 0 or peak <= 0:
        return " "
    return BARS[max(1, round(8 * n / peak))]


def duration(seconds: float) -> str:
    s = int(round(seconds))
    if s < 60:
        return f"{seconds:.1f} s"
    h, rest = divmod(s, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}"


def _wrap(label: str, text: str, indent: int) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=" " * indent + label,
                         subsequent_indent=" " * (indent + len(label)))


def shown_buckets(rpc: dict[str, dict[str, int]]) -> list[str]:
    """The buckets worth a column: smallest first, up to the largest non-empty one (at least 1M)."""
    labels = sorted(set(rpc["read"]) | set(rpc["write"]), key=size_bytes)
    nonzero = [l for l in labels if rpc["read"].get(l, 0) or rpc["write"].get(l, 0)]
    top = max([size_bytes(l) for l in nonzero] + [1 << 20])
    return [l for l in labels if size_bytes(l) <= top]


def _histogram(rpc: dict[str, dict[str, int]]) -> dict:
    """A bar row per direction: each bucket's count and a glyph scaled to the direction's
    largest bucket."""
    shown = shown_buckets(rpc)
    width = 7 if 6 + 7 * len(shown) <= WIDTH else 6 if 6 + 6 * len(shown) <= WIDTH else 5

    def row(direction: str) -> str:
        counts = [rpc[direction].get(l, 0) for l in shown]
        peak = max(counts, default=0)
        return "".join(compact(n, width - 2).rjust(width - 1) + bar(n, peak) for n in counts)
    return {"header": "".join(l.rjust(width - 1) + " " for l in shown).rstrip(),
            "read": row("read").rstrip(), "write": row("write").rstrip()}


def _fs_view(name: str, fs: dict) -> dict:
    def volume(direction: str) -> str:
        nbytes, calls = fs[f"{direction}_bytes"], fs[f"{direction}_calls"]
        mean = f", {human_bytes(nbytes // calls)} avg" if calls else ""
        return f"{direction} {human_bytes(nbytes)} in {calls:,} calls{mean}"
    ops = "  ".join(f"{op} {fs['ops'].get(op, 0):,}" for op in ("open", "close", "getattr", "statfs",
                                                                   "setattr", "fsync"))
    osts = len(fs["osts"])
    spread = fs.get("spread")
    per_host = (f"min {human_bytes(spread['min'])}, median {human_bytes(spread['median'])}, "
                f"max {human_bytes(spread['max'])} ({spread['max_host']})") if spread else ""
    return {"name": name, "read": volume("read"), "write": volume("write"), "ops": ops,
            "osts": f"{osts} of {fs['ost_count']} OSTs used" if fs["ost_count"] else "",
            "per_host": per_host, "hist": _histogram(fs["rpc"])}


def text_view(doc: dict, detail: bool = True) -> dict:
    job = doc["job"]
    versions = sorted(set(doc["lustre_versions"].values()))
    title = "Lustre I/O report"
    if job.get("id"):
        title += f" for job {job['id']}" + (f" ({job['user']})" if job.get("user") else "")
    n = len(job["hosts"])
    facts = [f"{n} host{'s' if n != 1 else ''}"]
    if job["hosts_missing"]:
        facts.append(f"{len(job['hosts_missing'])} unreachable")
    facts.append(f"{duration(job['elapsed_s'])}")
    if versions:
        facts.append("Lustre " + ", ".join(versions))
    findings = []
    for f in doc["flags"]:
        lines = [f" {SEV_LABEL[f['severity']]}  {f['id']} on {f['fs']}"] + _wrap("", f["finding"], 7)
        if detail:
            lines += _wrap("why: ", f["why"], 7) + _wrap("do:  ", f["advice"], 7)
        findings.append(lines)
    quality = [line for q in doc["data_quality"] for line in _wrap("! ", q["detail"], 1)]
    # Busiest filesystem first; the ones this job did not touch get one line at the end.
    by_volume = sorted(doc["filesystems"].items(),
                       key=lambda kv: (-(kv[1]["read_bytes"] + kv[1]["write_bytes"]), kv[0]))
    active = [_fs_view(k, v) for k, v in by_volume if _touched(v)]
    idle = [k for k, v in by_volume if not _touched(v)]
    return {"title": title, "facts": " | ".join(facts), "rule": "-" * WIDTH,
            "findings": findings, "filesystems": active,
            "idle": _wrap("Not used by this job: ", ", ".join(idle), 0) if idle else [],
            "quality": quality, "detail": detail}


def _touched(fs: dict) -> bool:
    return bool(fs["read_bytes"] or fs["write_bytes"] or any(fs["ops"].values())
                or any(n for d in fs["rpc"].values() for n in d.values()))


def _html_rows(rpc: dict[str, dict[str, int]]) -> list[dict]:
    """One row per shown bucket; bars scaled to the largest count."""
    shown = shown_buckets(rpc)
    peak = max([1] + [rpc[d].get(l, 0) for d in ("read", "write") for l in shown])
    return [{"label": l, "read": f"{rpc['read'].get(l, 0):,}", "write": f"{rpc['write'].get(l, 0):,}",
             "read_px": round(200 * rpc["read"].get(l, 0) / peak),
             "write_px": round(200 * rpc["write"].get(l, 0) / peak)}
            for l in shown]


def html_view(doc: dict) -> dict:
    from . import charts   # matplotlib: only the HTML rendering needs it

    view = text_view(doc)
    view["flags"] = doc["flags"]
    view["quality_items"] = doc["data_quality"]
    html_fs = []
    for fs in view["filesystems"]:
        data = doc["filesystems"][fs["name"]]
        rows = _html_rows(data["rpc"])
        html_fs.append(dict(fs, rows=rows,
                            rpc_chart=charts.rpc_histogram(data["rpc"], [r["label"] for r in rows]),
                            ost_chart=charts.ost_bytes(data["osts"]) if data["osts"] else "",
                            host_chart=charts.host_spread(data["hosts"]) if len(data["hosts"]) > 1 else ""))
    view["html_filesystems"] = html_fs
    return view


def _environment(autoescape: bool = False) -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates_dir())),
                              undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                              trim_blocks=True, lstrip_blocks=True, autoescape=autoescape)


def render_html(doc: dict) -> str:
    """One self-contained page (no scripts, no network fetches)."""
    return _environment(autoescape=True).get_template("report.html.j2").render(**html_view(doc))


def render_text(doc: dict) -> str:
    template = _environment().get_template("report.txt.j2")
    text = template.render(**text_view(doc, detail=True))
    if len(text.splitlines()) > MAX_LINES:  # too many findings for the job log: drop why/advice
        text = template.render(**text_view(doc, detail=False))
    lines = text.splitlines()
    if len(lines) > MAX_LINES:
        lines = lines[:MAX_LINES - 1] + ["... (truncated: the JSON/HTML report has everything)"]
    return "\n".join(lines) + "\n"


def render_json(doc: dict) -> str:
    return json.dumps(doc, indent=2) + "\n"


def render(doc: dict, fmt: str) -> str:
    if fmt == "json":
        return render_json(doc)
    if fmt == "text":
        return render_text(doc)
    if fmt == "html":
        return render_html(doc)
    raise ValueError(f"unknown format {fmt}")
