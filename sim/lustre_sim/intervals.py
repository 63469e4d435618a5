"""Sorted sets of half-open integer intervals [start, end).

Used for the page cache (page numbers) and dirty data (byte offsets) of each OST object.
Extent-based, so a 50 GB file costs a handful of entries, not millions of pages.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right


class IntervalSet:
    __slots__ = ("_s", "_e")

    def __init__(self) -> None:
        self._s: list[int] = []   # starts, sorted
        self._e: list[int] = []   # ends, same index; intervals never touch or overlap

    def __bool__(self) -> bool:
        return bool(self._s)

    def __iter__(self):
        return iter(zip(self._s, self._e))

    def __repr__(self) -> str:
        return f"IntervalSet({list(self)})"

    def total(self) -> int:
        return sum(e - s for s, e in zip(self._s, self._e))

    def clear(self) -> None:
        self._s.clear()
        self._e.clear()

    def add(self, a: int, b: int) -> None:
        """Union with [a, b)."""
        if a >= b:
            return
        # first interval whose end >= a (touching counts, so merge adjacent)
        i = bisect_left(self._e, a)
        # last interval whose start <= b
        j = bisect_right(self._s, b)
        if i < j:
            a = min(a, self._s[i])
            b = max(b, self._e[j - 1])
        self._s[i:j] = [a]
        self._e[i:j] = [b]

    def update(self, pairs) -> None:
        """Union with many [a, b) at once (one merge, for bulk page-cache fills)."""
        items = sorted([*zip(self._s, self._e), *((a, b) for a, b in pairs if a < b)])
        s: list[int] = []
        e: list[int] = []
        for a, b in items:
            if e and a <= e[-1]:
                if b > e[-1]:
                    e[-1] = b
            else:
                s.append(a)
                e.append(b)
        self._s, self._e = s, e

    def remove(self, a: int, b: int) -> None:
        """Difference with [a, b)."""
        if a >= b or not self._s:
            return
        i = bisect_right(self._e, a)          # first interval ending after a
        j = bisect_left(self._s, b)           # first interval starting at/after b
        if i >= j:
            return
        new_s: list[int] = []
        new_e: list[int] = []
        if self._s[i] < a:
            new_s.append(self._s[i])
            new_e.append(a)
        if self._e[j - 1] > b:
            new_s.append(b)
            new_e.append(self._e[j - 1])
        self._s[i:j] = new_s
        self._e[i:j] = new_e

    def covered(self, a: int, b: int) -> list[tuple[int, int]]:
        """The pieces of [a, b) that are in the set."""
        out = []
        i = bisect_right(self._e, a)
        while i < len(self._s) and self._s[i] < b:
            s, e = max(self._s[i], a), min(self._e[i], b)
            if s < e:
                out.append((s, e))
            i += 1
        return out

    def missing(self, a: int, b: int) -> list[tuple[int, int]]:
        """The pieces of [a, b) that are not in the set."""
        out = []
        pos = a
        for s, e in self.covered(a, b):
            if s > pos:
                out.append((pos, s))
            pos = e
        if pos < b:
            out.append((pos, b))
        return out

    def contains(self, a: int, b: int) -> bool:
        return not self.missing(a, b)

    def containing(self, x: int) -> tuple[int, int] | None:
        """The interval that holds x, if any."""
        i = bisect_right(self._s, x) - 1
        if i >= 0 and self._e[i] > x:
            return self._s[i], self._e[i]
        return None
