"""What each host of a job ran: Lustre version, kernel, OS image and the client settings that
shape RPCs, per filesystem (report JSON "clients", DESIGN §3).

Read from the end snapshot: the settings a job's I/O was shaped by are those it ended with (a
change during the job is rare and shows as the next job's). compare uses these to tell a
client-version change from a tunable, kernel or OS image change (Azure/azhpc-images#293: reads
~100x slower after an image set read_ahead_kb, with no Lustre change at all).

OSC settings are per OSC; a host's value for a filesystem is the one its OSCs share, or, when
they disagree, the most common one with the setting named in "mixed".
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from .. import catalog
from ..catalog import P
from .diff import fs_of, rows_of
from ..acquire.column import SINGULAR
from ..acquire.snapfile import Snapshot


def _identity(end: Snapshot, hosts: list[str], name: str) -> list[str | None]:
    t = end.metrics.get(P + name)
    if t is None or not t.is_string or t.column(SINGULAR) is None:
        return [None] * len(hosts)
    rows, col = rows_of(end, hosts), t.column(SINGULAR)
    return [str(v) if ok else None for v, ok in zip(t.values[rows, col], t.present[rows, col])]


def _per_fs(values: np.ndarray, present: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For (hosts x instances of one fs): each host's value, whether it has one, whether its
    instances disagree. Vectorised for the common case (all agree); the rest counted one by one."""
    have = present.any(axis=1)
    first = np.argmax(present, axis=1)
    value = values[np.arange(len(values)), first]
    disagree = (present & (values != value[:, None])).any(axis=1)
    for r in np.nonzero(disagree)[0]:
        counts = Counter(int(v) for v, ok in zip(values[r], present[r]) if ok)
        value[r] = max(counts, key=lambda v: (counts[v], -v))
    return value, have, disagree


def clients(end: Snapshot, hosts: list[str], filesystems: list[str], versions: dict[str, str]) -> dict[str, dict]:
    """host -> {"lustre", "kernel", "os", "pagesize", "settings": {fs: {setting: value, ...,
    "mixed": [...] (only when some OSCs disagree)}}}; unknown values are null. versions: each
    host's Lustre version as the diff read it (JobDelta.versions)."""
    rows = rows_of(end, hosts)
    out: dict[str, dict] = {}
    kernel, os_image = (_identity(end, hosts, n) for n in ("kernel", "os"))
    pagesize = end.metrics.get(P + "pagesize")
    keys = [m.key for m in catalog.with_role(catalog.SETTING)]
    for r, host in enumerate(hosts):
        ps = None
        if pagesize is not None and not pagesize.is_string and pagesize.present[rows[r], 0]:
            ps = int(pagesize.values[rows[r], 0])
        out[host] = {"lustre": versions.get(host), "kernel": kernel[r], "os": os_image[r], "pagesize": ps,
                     "settings": {fs: dict.fromkeys(keys) for fs in filesystems}}
    for m in catalog.with_role(catalog.SETTING):
        t = end.metrics.get(m.name)
        if t is None or t.is_string:
            continue                                   # not in the snapshot: null everywhere
        inst_fs = np.array([fs_of(i) if m.indom == catalog.OSC else i for i in t.instances], dtype=object)
        for fs in filesystems:
            cols = np.nonzero(inst_fs == fs)[0]
            if not len(cols):
                continue
            value, have, disagree = _per_fs(t.values[np.ix_(rows, cols)], t.present[np.ix_(rows, cols)])
            for r, host in enumerate(hosts):
                entry = out[host]["settings"][fs]
                entry[m.key] = int(value[r]) if have[r] else None
                if disagree[r]:
                    entry.setdefault("mixed", []).append(m.key)
    return out
