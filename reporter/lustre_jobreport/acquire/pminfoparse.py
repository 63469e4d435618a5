"""Parse the text of `pminfo -dfm` (the snapshot metrics of one host) into a HostSnapshot,
the same one pcpfetch.fetch_pmapi makes of a pmFetch of the same metrics."""

from __future__ import annotations

import math
import re

import numpy as np

from .. import catalog
from .hostsnap import HostSnapshot
from .column import SINGULAR, Column


# start times this side of 2^40 s are times; anything else (NaN, negative, absurd) is not
_MAX_START_S = 2.0 ** 40


def start_us(values: np.ndarray) -> np.ndarray:
    """Start times (double seconds) as whole microseconds; 0 (not compared) where a value is
    not a time at all."""
    seconds = np.asarray(values, dtype=np.float64)
    ok = np.isfinite(seconds) & (seconds >= 0) & (seconds < _MAX_START_S)
    return np.where(ok, np.rint(np.where(ok, seconds, 0) * catalog.START_UNIT_US), 0).astype(np.uint64)


def _start_us(seconds: float) -> int:
    """start_us of one value (round() and np.rint both round half to even)."""
    ok = math.isfinite(seconds) and 0 <= seconds < _MAX_START_S
    return round(seconds * catalog.START_UNIT_US) if ok else 0


# pminfo -dfm output, one block per metric:
#   lustreclient.llite.open PMID: 220.2.10
#       Data Type: 64-bit unsigned int  InDom: 220.0 0x37000000
#       Semantics: counter  Units: count
#       inst [0 or "scratch"] value 5303
_RE_NAME = re.compile(r"^(\S+)(?: PMID: (\d+\.\d+\.\d+))?\s*$")
_RE_TYPE = re.compile(r"^\s+Data Type: (.+?)\s+InDom:")
_RE_SEM = re.compile(r"^\s+Semantics: (\S+)")
_RE_INST = re.compile(r'^\s+inst \[(-?\d+) or "(.*)"\] value (.*)$')
_RE_VALUE = re.compile(r"^\s+value (.*)$")


def _pminfo_value(text: str, dtype: str) -> int | str | None:
    if dtype == "string":
        if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
            return text[1:-1]
        return None
    try:
        if dtype == "double":
            return _start_us(float(text))
        value = int(text)
    except ValueError:
        return None
    return value if 0 <= value < 1 << 64 else None


def parse_pminfo(text: str, host: str, spec: str, fetched_at: float) -> HostSnapshot:
    """The HostSnapshot of one `pminfo -dfm` answer: what fetch_pmapi gives for the same fetch
    (instances as listed, a repeated one too: stacking refuses those, whichever way they came)."""
    snap = HostSnapshot(host, spec, ok=True, fetched_at=fetched_at)
    values: dict[str, tuple[list[str], list[int | str]]] = {}
    metric, dtype = None, ""
    for line in text.splitlines():
        if line and not line[0].isspace():
            m = _RE_NAME.match(line)
            metric, dtype = (m.group(1), "") if m else (None, "")
            if metric is not None and not catalog.wanted(metric):
                metric = None
            if metric is not None and m.group(2):
                snap.pmids[metric] = m.group(2)
            continue
        if metric is None:
            continue
        if m := _RE_TYPE.match(line):
            dtype = {"string": "string", "double": "double"}.get(m.group(1), "int")
        elif m := _RE_SEM.match(line):
            snap.sems[metric] = m.group(1)
        elif (m := _RE_INST.match(line)) or (m := _RE_VALUE.match(line)):
            instance, value = (m.group(2), m.group(3)) if m.re is _RE_INST else (SINGULAR, m.group(1))
            parsed = _pminfo_value(value, dtype)
            if parsed is None:
                continue
            instances, listed = values.setdefault(metric, ([], []))
            instances.append(instance)
            listed.append(parsed)
    # Like the PMAPI backend: a metric without values now is absent, semantics included.
    snap.sems = {m: sem for m, sem in snap.sems.items() if m in values}
    snap.pmids = {m: pmid for m, pmid in snap.pmids.items() if m in values}
    snap.metrics = {m: Column.of(instances, listed) for m, (instances, listed) in values.items()}
    return snap
