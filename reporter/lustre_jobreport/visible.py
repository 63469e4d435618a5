"""Strings as a terminal should show them: every hidden character as a visible escape.

Names, versions and error texts come from files, agents and schedulers, and may hold terminal
control sequences (an OSC 52 that writes the clipboard, a newline that forges a second line) or
Unicode characters that reorder or hide text. Standard library only: the CLI's error lines use
it without importing the report's renderer (Jinja2); render.displayable shows the report's
strings the same way.
"""

from __future__ import annotations

import unicodedata

# Never shown as they are: controls (C0, DEL, C1), format characters (bidi overrides and
# isolates, zero-width characters, BOM, tags), line/paragraph separators and lone surrogates.
HIDDEN_CATEGORIES = frozenset(("Cc", "Cf", "Zl", "Zp", "Cs"))


def hidden(s: str) -> bool:
    """Whether s holds a character that escaped() would show as an escape."""
    return not s.isprintable() and any(unicodedata.category(c) in HIDDEN_CATEGORIES for c in s)


def escaped(s: str) -> str:
    """s with each hidden character as \\xNN, \\uNNNN or \\UNNNNNNNN (so one line stays one)."""
    def shown(c: str) -> str:
        if unicodedata.category(c) not in HIDDEN_CATEGORIES:
            return c
        o = ord(c)
        return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}"
    return "".join(map(shown, s)) if hidden(s) else s
