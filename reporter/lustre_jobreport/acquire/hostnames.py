"""Scheduler node lists ("node[01-04,7],gpu1") expanded to host names.

python-hostlist does it where the distribution ships it (Debian 12 and later: python3-hostlist);
where it does not (Debian 11), `expand_own` expands the same grammar the same way:
- top-level commas separate parts; brackets do not nest and must balance;
- a part is text with any number of bracket groups, e.g. `r[1-2]n[01-03]-ib`, and expands to
  every combination, the leftmost group varying slowest;
- a group is a comma list of numbers (`7`, taken as written) and ranges (`01-10`: as wide as its
  start, zero-padded; `1-010` gives 1..10 unpadded);
- a host met twice is kept once, first place wins;
- no range spans more than MAX_SIZE numbers and no part expands to more than MAX_SIZE hosts.
The tests hold `expand_own` to python-hostlist on random lists, valid and not.

A host name has no whitespace or control character in it: `expand` refuses a list with one,
whichever expansion it uses (python-hostlist would keep them in the names). Light on purpose:
the prolog imports it.
"""

from __future__ import annotations

import re

try:
    import hostlist as _library
except ImportError:
    _library = None

MAX_SIZE = 100_000               # python-hostlist's bound, on a range and on a part
_NUMBER = re.compile(r"[0-9]+")
_RANGE = re.compile(r"([0-9]+)-([0-9]+)")
_NOT_IN_A_NAME = re.compile(r"[\x00-\x20\x7f-\x9f\s]")


class BadNodeList(ValueError):
    """The node list does not follow the grammar (the message says what is wrong with it)."""


def expand(nodelist: str) -> list[str]:
    """The hosts of a scheduler node list, in order, each once; BadNodeList if it is not one."""
    bad = _NOT_IN_A_NAME.search(nodelist)
    if bad:
        raise BadNodeList(f"a host name cannot hold {bad.group()!r}")
    return _library_expand(nodelist) if _library is not None else expand_own(nodelist)


def using_library() -> bool:
    """Whether python-hostlist does the expansion (else expand_own)."""
    return _library is not None


def _library_expand(nodelist: str) -> list[str]:
    try:
        return _library.expand_hostlist(nodelist)
    except (_library.BadHostlist, ValueError) as exc:   # ValueError: a number too long for int()
        raise BadNodeList(str(exc)) from None


def expand_own(nodelist: str) -> list[str]:
    """python-hostlist's expand_hostlist(nodelist) without the library."""
    hosts: list[str] = []
    for part in _top_level_parts(nodelist):
        hosts.extend(_expand_part(part))
    return list(dict.fromkeys(hosts))


def _top_level_parts(nodelist: str) -> list[str]:
    """Split at commas outside brackets; non-empty parts only. Checks the brackets."""
    parts, current, depth = [], [], 0
    for c in nodelist:
        if c == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(c)
        if c == "[":
            depth += 1
            if depth > 1:
                raise BadNodeList("nested brackets")
        elif c == "]":
            depth -= 1
            if depth < 0:
                raise BadNodeList("unbalanced brackets")
    if depth:
        raise BadNodeList("unbalanced brackets")
    parts.append("".join(current))
    return [p for p in parts if p]


def _expand_part(part: str) -> list[str]:
    """One part: text and bracket groups, every combination, the leftmost group slowest."""
    hosts = [""]
    for text, group in reversed(_segments(part)):
        heads = [text + n for n in _expand_group(group)] if group is not None else [text]
        if len(heads) * len(hosts) > MAX_SIZE:
            raise BadNodeList("results too large")
        hosts = [head + tail for head in heads for tail in hosts]
    return hosts


def _segments(part: str) -> list[tuple[str, str | None]]:
    """(text, group) pairs in order: the text before each bracket group and the group's inside
    (None after the last group). Brackets are balanced and flat here."""
    segments = []
    while part:
        start = part.find("[")
        if start < 0:
            segments.append((part, None))
            break
        end = part.index("]", start)
        segments.append((part[:start], part[start + 1:end]))
        part = part[end + 1:]
    return segments


def _expand_group(group: str) -> list[str]:
    numbers: list[str] = []
    for item in group.split(","):
        numbers.extend(_expand_range(item))
    return numbers


def _expand_range(item: str) -> list[str]:
    if _NUMBER.fullmatch(item):
        return [item]
    m = _RANGE.fullmatch(item)
    if not m:
        raise BadNodeList("bad range")
    try:
        low, high = int(m.group(1)), int(m.group(2))
    except ValueError:           # more digits than this Python converts (3.11+: 4300)
        raise BadNodeList("bad range") from None
    if high < low:
        raise BadNodeList("start > stop")
    if high - low > MAX_SIZE:
        raise BadNodeList("range too large")
    width = len(m.group(1))
    return [str(i).zfill(width) for i in range(low, high + 1)]
