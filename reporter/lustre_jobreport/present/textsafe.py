"""Text from elsewhere (host and filesystem names, paths, error texts, scheduler fields), made
safe to show on a terminal or a page: a character that a terminal would obey (ESC, CSI) or that
reorders or hides text (bidi overrides, zero-width characters) becomes a visible escape
(\\x1b, \\u202e). Light (unicodedata only): the prolog's log imports it.
"""

from __future__ import annotations

import re
import unicodedata

# Never shown as they are: controls (C0, DEL, C1), format characters (bidi overrides and
# isolates, zero-width characters, BOM, tags), line/paragraph separators and lone surrogates.
HIDDEN_CATEGORIES = frozenset(("Cc", "Cf", "Zl", "Zp", "Cs"))

# A message's own layout (line breaks, tabs): one space on one line, not escapes to read through.
_LAYOUT = re.compile(r"[ \t\n\r\v\f]+")


def hidden(s: str) -> bool:
    """s holds a character that escaped() shows as an escape."""
    return not s.isprintable() and any(unicodedata.category(c) in HIDDEN_CATEGORIES for c in s)


def _shown(c: str) -> str:
    if unicodedata.category(c) not in HIDDEN_CATEGORIES:
        return c
    o = ord(c)
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}"


def escaped(s: str) -> str:
    """s with every hidden character as a visible escape; other characters as they are."""
    return s if s.isprintable() else "".join(map(_shown, s))


def one_line(s: str) -> str:
    """s as one line of a log: its layout whitespace collapsed to single spaces, the rest of its
    hidden characters escaped (separators that are not layout included: \\x1c, \\x85, \\u2028)."""
    return escaped(_LAYOUT.sub(" ", s).strip(" "))
