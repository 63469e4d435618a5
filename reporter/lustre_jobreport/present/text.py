"""Text for people: strings safe to show, fitted to terminal columns, and numbers in words.

Every string a report or a comparison shows came from somewhere else (host and filesystem
names, versions, error texts, scheduler fields) and may hold terminal control sequences or
Unicode characters that reorder or hide text: displayable() shows each such character as a
visible escape (\\x1b, \\u202e), keys included. columns() counts what a terminal shows (wide
characters take two), and the fitting functions (shorten, fill_lines, wrap_words, fold) work in
those columns. The numbers: bytes in binary units, counts in a few characters, durations.
The Jinja2 environments of the templates (templates/*.j2) are made here for every view.
"""

from __future__ import annotations

import functools
import math
import os
import unicodedata
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    import jinja2

from .textsafe import escaped, hidden

MAX_LINES, WIDTH = 40, 80



NAME_COLS, WORD_COLS = 32, 40      # longest name / word of prose the text report shows whole



BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB")



SI_SUFFIXES = ("k", "M", "G", "T", "P", "E", "Z", "Y")



def templates_dir() -> Path:
    """LUSTRE_JOBREPORT_TEMPLATES, else the package's own templates/ (in the source tree, the
    .deb, the RPM and the wheel alike)."""
    env = os.environ.get("LUSTRE_JOBREPORT_TEMPLATES")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parents[1] / "templates")
    for c in candidates:
        if (c / "report.txt.j2").is_file():
            return c
    raise FileNotFoundError("lustre-jobreport templates not found (set LUSTRE_JOBREPORT_TEMPLATES)")



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



def fill_lines(words: list[str], first: str, rest: str, width: int = WIDTH) -> list[str]:
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



def wrap_words(label: str, text: str, indent: int) -> list[str]:
    first = " " * indent + label
    return fill_lines(_short_words(text).split(), first, " " * columns(first))



def fold(line: str) -> list[str]:
    """A rendered line as it fits in WIDTH columns: wrapped at spaces under its own indent."""
    if columns(line) <= WIDTH:
        return [line]
    body = line.lstrip(" ")
    indent = " " * (len(line) - len(body))
    return fill_lines(body.split(), indent, indent + "  ")



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



def environment(autoescape: bool = False) -> jinja2.Environment:
    return _environment_of(str(templates_dir()), autoescape)



@functools.lru_cache(maxsize=8)
def _environment_of(directory: str, autoescape: bool) -> jinja2.Environment:
    """One environment per templates directory: it compiles each template once (and again
    when its file changes), not on every rendering. Jinja2 is imported here, by the pages that
    use templates: compare's text and JSON need none."""
    import jinja2
    return jinja2.Environment(loader=jinja2.FileSystemLoader(directory),
                              undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                              trim_blocks=True, lstrip_blocks=True, autoescape=autoescape)


def render_as(fmt: str, thing: Any, **renderers: Callable[[Any], str]) -> str:
    """thing rendered by the renderer named fmt (the command line's --format: text, json, html)."""
    try:
        renderer = renderers[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt}") from None
    return renderer(thing)
