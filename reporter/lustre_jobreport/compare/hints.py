"""Where to look next after a regression: the client settings and the known client regressions
that its regressed metrics point to (declared once, beside each metric: comparemetrics.Metric.look),
with the group's own values of those settings from its jobs' records.

A setting that differs between the sides is already the group's cause (the document's
`changes`): it is not repeated here as a guess. A known regression is named only when it can
explain a shift between the two sides: what brings it differs between them (the Lustre version,
or the kernel/OS), or is not recorded; some candidate version may have it (not before it came,
not after its fix); and not every baseline version is known to have had it too (a bug both
sides ran does not tell them apart).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import metrics as comparemetrics
from .metrics import KnownRegression, LookNext
from .model import Comparison

# the settings a hint may name: the only ones whose values are gathered
HINTED = tuple(dict.fromkeys(s for m in comparemetrics.METRICS if m.look for s in m.look.settings))


@dataclass(frozen=True)
class Hint:
    """A regression's hint as the text and the page show it: the settings to check with the
    group's values (and what else), and the known regressions that may explain it, each a label
    and what it did."""
    look: str
    known: tuple[tuple[str, str], ...]

    def lines(self) -> list[str]:
        out = [f"look next: {self.look}"] if self.look else []
        if self.known:
            out.append("known client regressions of this shape: " + ", ".join(label for label, _ in self.known))
        return out


# ---- versions ----------------------------------------------------------------------------------

def version(text: str) -> tuple[int, ...] | None:
    """A Lustre version's leading numbers ("2.15.4" -> (2, 15, 4), "2.18-dev" -> (2, 18)); None
    when it starts with none."""
    m = re.match(r"\d+(?:\.\d+)*", text.strip())
    return tuple(int(p) for p in m.group(0).split(".")) if m else None


def has_fix(v: tuple[int, ...], fixed: tuple[str, ...]) -> bool:
    """Version v carries a fix released in `fixed`: the main line's (the newest of them) from
    that version on, a maintenance branch's from its version on within that branch (2.12.5
    fixes 2.12.6, not 2.13.0; 2.13 fixes every later version)."""
    releases = sorted(f for f in (version(x) for x in fixed) if f is not None)
    if not releases:
        return False
    main = releases[-1]
    return v >= main or any(v[:2] == f[:2] and v >= f for f in releases[:-1])


def has_it(known: KnownRegression, text: str) -> bool | None:
    """Whether a client of this version has the regression: True, False, or None when it cannot
    be told (a version that is no number; not fixed there, but when it came is not known)."""
    v = version(text)
    if v is None:
        return None
    if has_fix(v, known.fixed):
        return False
    if known.introduced is None:
        return None
    return v >= version(known.introduced)


def _versions(side: list[str] | None) -> list[str]:
    """A side's Lustre versions, one each (a job on several has them joined by ';')."""
    return [v for joined in side or [] for v in joined.split(";") if v]


def may_explain(known: KnownRegression, lustre: list[list[str]] | None, changed: set[str],
                unrecorded: set[str]) -> bool:
    """Whether the regression can explain a shift between the sides of a group whose Lustre
    versions per side are `lustre`, in which `changed` ("lustre", "kernel/os") differ and
    `unrecorded` are not known on both sides."""
    if known.changed not in changed | unrecorded:
        return False
    if known.changed != "lustre":
        return True
    base, cand = (_versions(side) for side in (lustre or [[], []]))
    cand_may = not cand or any(has_it(known, v) is not False for v in cand)
    base_had = bool(base) and all(has_it(known, v) is True for v in base)
    return cand_may and not base_had


def known_label(known: KnownRegression) -> str:
    """'LU-19344 (from LU-16025; in 2.15.3, fixed in 2.18-dev)' as its versions are given."""
    when = []
    if known.introduced:
        when.append(f"in {known.introduced}")
    if known.fixed:
        when.append("fixed in " + " and ".join(known.fixed))
    if known.changed != "lustre":
        when.append("an OS image's change")
    said = ", ".join(when)
    if known.came_from:
        said = f"from {known.came_from}" + (f"; {said}" if said else "")
    return f"{known.id} ({said})" if said else known.id


# ---- the group's settings ----------------------------------------------------------------------

def settings_seen(result: Comparison, groups: list[int]) -> dict[int, dict[str, list[list[int]]]]:
    """For these groups of the result (indices into the document's groups): each setting a hint
    may name, its values over the group's trusted jobs per side ([baseline values, candidate
    values]; [] where no job of the side recorded it), as compare gathered them."""
    seen = result.settings_seen
    if not seen:
        return {}
    return {i: {s: seen[i].get(s, [[], []]) for s in HINTED} for i in groups}


def _values(vs: list[int]) -> str:
    return " or ".join(str(v) for v in vs)


def _setting(name: str, base: list[int], cand: list[int]) -> tuple[str, bool]:
    """A setting as the hint names it, and whether both sides had the same values."""
    if base and base == cand:
        return f"{name} {_values(base)}", True
    if base and cand:
        return f"{name} {_values(base)} → {_values(cand)}", False
    if base or cand:
        return f"{name} {_values(base or cand)} ({'baseline' if base else 'candidate'} only)", False
    return f"{name} (not recorded)", False


def _look(settings: list[str], seen: dict[str, list[list[int]]] | None, also: list[str]) -> str:
    """'the group's settings, the same on both sides: max_read_ahead_mb 1024, ...; <also>'."""
    parts = []
    if settings and seen is not None and any(any(seen[s]) for s in settings):
        named = [_setting(s, *seen[s]) for s in settings]
        same = all(ok for _, ok in named)
        parts.append(("the group's settings, the same on both sides: " if same else "the group's settings: ")
                     + ", ".join(n for n, _ in named))
    elif settings:
        unkept = " (not in these jobs' records)" if seen is not None else ""
        parts.append("settings " + ", ".join(settings) + unkept)
    return "; ".join(parts + also)


def _ordered(items) -> list:
    return list(dict.fromkeys(items))


def look_next(g: dict, seen: dict[str, list[list[int]]] | None = None, lustre: list[list[str]] | None = None,
              unknown: list[str] = ()) -> Hint | None:
    """The hint of a regressed group (its document entry): from the look-next of each deciding
    metric that regressed (not a context one, not an expected shift), the settings that do not
    differ between the sides with the group's values (`seen`: per setting, per side; None: not
    known), what else, and the known regressions that may explain it (`lustre`: the Lustre
    versions per side; `unknown`: "kernel", "os" not recorded on both sides). None when no
    regressed metric has a look-next."""
    looks: list[LookNext] = [comparemetrics.BY_ID[m["id"]].look for m in g["metrics"]
                             if m["verdict"] == "regression" and "expected" not in m
                             and comparemetrics.BY_ID[m["id"]].look is not None]
    if not looks:
        return None
    changed_what = {c["what"] for c in g["changes"]}
    settings = [s for s in _ordered(s for look in looks for s in look.settings) if s not in changed_what]
    also = _ordered(look.also for look in looks if look.also)
    changed = {k for k, whats in (("lustre", {"lustre"}), ("kernel/os", {"kernel", "os"})) if changed_what & whats}
    unrecorded = {"kernel/os"} if {"kernel", "os"} & set(unknown) else set()
    if not lustre or not all(_versions(side) for side in lustre):
        unrecorded.add("lustre")
    known = [k for k in _ordered(k for look in looks for k in look.known)
             if may_explain(k, lustre, changed, unrecorded)]
    return Hint(_look(settings, seen, also), tuple((known_label(k), k.what) for k in known))
