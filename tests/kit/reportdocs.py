"""Report documents written out by hand, with the "timeline" and "notes" of DESIGN §3.1, for the
views' tests: the renderers take any document of that shape, whoever built it.

`timeline_fs` makes one filesystem's timeline entry from its arrays (the RPC and small-RPC arrays
default to ones consistent with the bytes); `report_doc` a one-or-more-filesystem report around
it, its totals the arrays' sums (so "sums_to_totals" holds unless a test says otherwise).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta, timezone

MIB, GIB = 1 << 20, 1 << 30


def phase(kind: str, start_s: float, end_s: float, channel: str | None, **amounts: int) -> dict:
    base = {"read_bytes": 0, "write_bytes": 0, "metadata_ops": 0, "opens": 0, "small_rpcs": 0, "rpcs": 0}
    return {"kind": kind, "start_s": start_s, "end_s": end_s, "channel": channel, **base, **amounts}


def timeline_fs(read: Sequence[int], write: Sequence[int], meta: Sequence[int], opens: Sequence[int] | None = None,
                small: Sequence[int] | None = None, phases: list[dict] | None = None,
                periodic: list[dict] | None = None, sums_to_totals: bool = True) -> dict:
    n = len(read)
    assert len(write) == n and len(meta) == n
    big_r = [v // MIB for v in read]              # 1 MiB RPCs (256 pages)
    big_w = [v // MIB for v in write]
    small = list(small) if small is not None else [m // 10 for m in meta]
    return {"read_bytes": list(read), "write_bytes": list(write), "read_calls": big_r, "write_calls": big_w,
            "metadata_ops": list(meta), "opens": list(opens) if opens is not None else [m // 2 for m in meta],
            "rpc_read": {"1": small, "256": big_r}, "rpc_write": {"256": big_w}, "small_rpcs": small,
            "sums_to_totals": sums_to_totals, "phases": phases or [], "periodic": periodic or []}


def timeline(filesystems: dict[str, dict], width_s: float = 20.0, start: str = "2026-11-26T12:00:00Z",
             begin_offset_s: float = 0.0, hosts: int = 2, hosts_without: Sequence[str] = (), gaps: int = 0) -> dict:
    points = {len(fs["read_bytes"]) for fs in filesystems.values()}
    assert len(points) <= 1
    return {"width_s": width_s, "start": start, "begin_offset_s": begin_offset_s,
            "points": points.pop() if points else 0, "hosts": hosts, "hosts_without": list(hosts_without),
            "gaps": gaps, "note": None, "filesystems": filesystems}


def no_timeline(note: str) -> dict:
    return {"width_s": 10.0, "start": "2026-11-26T12:00:00Z", "begin_offset_s": 0.0, "points": 0, "hosts": 0,
            "hosts_without": [], "gaps": 0, "note": note, "filesystems": {}}


def fs_totals(tl_fs: dict | None, read: int = GIB, write: int = 0) -> dict:
    """A filesystem's report entry (DESIGN §3.1), its totals its timeline's sums when it has one."""
    if tl_fs is not None:
        read, write = sum(tl_fs["read_bytes"]), sum(tl_fs["write_bytes"])
    opens = sum(tl_fs["opens"]) if tl_fs else 3
    return {"read_bytes": read, "write_bytes": write, "read_calls": max(1, read // MIB),
            "write_calls": write // MIB, "ops": {"open": opens, "close": opens, "getattr": 0, "statfs": 0,
                                                "setattr": 0, "fsync": 0},
            "rpc": {"read": {"4K": 1, "1M": read // MIB}, "write": {"4K": 0, "1M": write // MIB}}, "osts": {},
            "hosts": {}, "ost_count": 4, "spread": None, "trouble": [], "left_out": {}, "not_read": []}


def report_doc(tl: dict | None, filesystems: Sequence[str] = ("scratch",), elapsed_s: float = 11_400.0,
               notes: list[dict] | None = None, data_quality: list[dict] | None = None) -> dict:
    """A report of the job n1, n2 from 2026-11-26 12:00:00 UTC for elapsed_s, with the timeline tl
    (None: an older document, no key at all)."""
    tl_fss = (tl or {}).get("filesystems") or {}
    begin = datetime(2026, 11, 26, 12, 0, 0, tzinfo=timezone.utc)
    try:
        end = (begin + timedelta(seconds=elapsed_s)).isoformat(timespec="seconds").replace("+00:00", "Z")
    except OverflowError:           # an elapsed time past the year 9999
        end = "9999-12-31T23:59:59Z"
    doc = {"schema": "lustre-jobreport/3",
           "job": {"id": "77", "user": "ann", "name": "sim", "hosts": ["n1", "n2"], "hosts_missing": [],
                   "hosts_incomplete": {}, "begin": "2026-11-26T12:00:00Z", "end": end, "elapsed_s": elapsed_s},
           "lustre_versions": {"n1": "2.15.4", "n2": "2.15.4"},
           "filesystems": {name: fs_totals(tl_fss.get(name)) for name in filesystems},
           "flags": [], "data_quality": data_quality or []}
    if tl is not None:
        doc["timeline"] = tl
        doc["notes"] = notes or []
    elif notes is not None:
        doc["notes"] = notes
    return doc
