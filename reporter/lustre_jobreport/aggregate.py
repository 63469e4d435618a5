"""Per-filesystem totals of a job: llite volume and ops, RPC-size histograms, per OST, per host.

Everything is summed from the reset-aware deltas with pandas group-bys; values leave this module
as exact Python ints (JSON must not round byte counts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .diff import P, JobDelta

LLITE = P + "llite."
CORE_OPS = ("open", "close", "getattr", "statfs", "setattr", "fsync")
VOLUME = ("read_bytes", "write_bytes", "read_calls", "write_calls")
OST_FIELDS = {"read_bytes": "read_bytes", "write_bytes": "write_bytes",
              "read_rpcs": "read_rpcs", "write_rpcs": "write_rpcs"}
_SIZE_RE = re.compile(r"^(\d+)([KMGT]?)$")
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def size_bytes(label: str) -> int:
    """'4K' -> 4096: an RPC-size bucket as the agent names it (pages-per-rpc label x page size).

    Lustre tallies an RPC of p pages in the row labelled 2^ceil(log2 p), so the bucket named
    16K holds the RPCs larger than 8 KiB and up to 16 KiB: the name is the bucket's upper bound.
    """
    m = _SIZE_RE.match(label)
    if not m:
        raise ValueError(f"not an RPC size label: {label!r}")
    return int(m.group(1)) * _UNITS[m.group(2)]


@dataclass
class FsTotals:
    name: str
    read_bytes: int = 0
    write_bytes: int = 0
    read_calls: int = 0
    write_calls: int = 0
    ops: dict[str, int] = field(default_factory=dict)
    rpc: dict[str, dict[str, int]] = field(default_factory=lambda: {"read": {}, "write": {}})
    osts: dict[str, dict[str, int | float | None]] = field(default_factory=dict)
    hosts: dict[str, dict[str, int]] = field(default_factory=dict)
    ost_count: int = 0

    @property
    def bytes_moved(self) -> int:
        return self.read_bytes + self.write_bytes

    def to_json(self) -> dict:
        return {"read_bytes": self.read_bytes, "write_bytes": self.write_bytes,
                "read_calls": self.read_calls, "write_calls": self.write_calls,
                "ops": self.ops, "rpc": self.rpc, "osts": self.osts, "hosts": self.hosts,
                "ost_count": self.ost_count}


def _ints(series: pd.Series) -> dict:
    return {k: int(v) for k, v in series.items()}


def _mounted_filesystems(delta: JobDelta) -> dict[str, int]:
    """fs name -> number of OSTs the clients see, for every fs mounted at the end."""
    fs_osts: dict[str, set[str]] = {}
    for h in delta.end_values.values():
        for fs in h.metrics.get(LLITE + "mount_id", {}):
            fs_osts.setdefault(fs, set())
        for osc in h.metrics.get(P + "osc.read_bytes", {}) | h.metrics.get(P + "osc.rpc.read", {}):
            osc = osc.split(":", 1)[0]
            fs = re.sub(r"-OST[0-9a-fA-F]{4,}$", "", osc)
            if fs in fs_osts:
                fs_osts[fs].add(osc)
    return {fs: len(osts) for fs, osts in sorted(fs_osts.items())}


def _bucket_labels(delta: JobDelta) -> dict[str, list[str]]:
    """fs -> every RPC-size bucket the agents export for it, smallest first (zeros are kept)."""
    labels: dict[str, set[str]] = {}
    for h in delta.end_values.values():
        for metric in (P + "osc.rpc.read", P + "osc.rpc.write"):
            for inst in h.metrics.get(metric, {}):
                osc, _, size = inst.rpartition(":")
                fs = re.sub(r"-OST[0-9a-fA-F]{4,}$", "", osc)
                labels.setdefault(fs, set()).add(size)
    return {fs: sorted(s, key=size_bytes) for fs, s in labels.items()}


def aggregate(delta: JobDelta) -> dict[str, FsTotals]:
    c = delta.counters
    filesystems = _mounted_filesystems(delta)
    buckets = _bucket_labels(delta)
    out = {fs: FsTotals(fs, ost_count=n) for fs, n in filesystems.items()}
    if c.empty:
        for t in out.values():
            t.ops = dict.fromkeys(CORE_OPS, 0)
            t.rpc = {d: dict.fromkeys(buckets.get(t.name, []), 0) for d in ("read", "write")}
        return out

    # Sum in uint64 (exact), convert to Python int only at the edge.
    llite = c[c["metric"].str.startswith(LLITE) & ~c["metric"].str.startswith(LLITE + "latency.")]
    llite = llite.assign(name=llite["metric"].str.slice(len(LLITE)))
    by_fs = llite.groupby(["fs", "name"])["delta"].sum()
    by_host = llite.groupby(["fs", "host", "name"])["delta"].sum()

    rpc = c[c["metric"].isin([P + "osc.rpc.read", P + "osc.rpc.write"])]
    rpc = rpc.assign(direction=rpc["metric"].str.rsplit(".", n=1).str[1],
                     size=rpc["inst"].str.rsplit(":", n=1).str[1])
    rpc_by_fs = rpc.groupby(["fs", "direction", "size"])["delta"].sum()
    rpc_by_ost = rpc.groupby(["fs", "device"])["delta"].sum()

    osc = c[c["source"] == "osc stats"]
    osc = osc.assign(name=osc["metric"].str.slice(len(P + "osc.")))
    osc_by_ost = osc.groupby(["fs", "device", "name"])["delta"].sum()

    for fs, t in out.items():
        vals = _ints(by_fs.xs(fs, level="fs")) if fs in by_fs.index.get_level_values(0) else {}
        for name in VOLUME:
            setattr(t, name, vals.get(name, 0))
        t.ops = {op: vals.get(op, 0) for op in CORE_OPS}
        t.ops.update({k: v for k, v in sorted(vals.items()) if k not in VOLUME and k not in t.ops})

        for direction in ("read", "write"):
            counts = dict.fromkeys(buckets.get(fs, []), 0)
            if (fs, direction) in rpc_by_fs.index.droplevel(2):
                counts.update(_ints(rpc_by_fs.xs((fs, direction), level=("fs", "direction"))))
            t.rpc[direction] = {k: counts[k] for k in sorted(counts, key=size_bytes)}

        if fs in by_host.index.get_level_values(0):
            per_host = by_host.xs(fs, level="fs")
            for host in sorted(per_host.index.get_level_values(0).unique()):
                t.hosts[host] = _ints(per_host.xs(host, level="host"))

        # An OST is used when the job moved data or sent I/O RPCs through it (pings and other
        # background requests also move req_count, so they do not count).
        ost_vals = osc_by_ost.xs(fs, level="fs") if fs in osc_by_ost.index.get_level_values(0) else None
        touched = set()
        if fs in rpc_by_ost.index.get_level_values(0):
            s = rpc_by_ost.xs(fs, level="fs")
            touched |= set(s[s > 0].index)
        if ost_vals is not None:
            io = ost_vals[ost_vals.index.get_level_values("name").isin(list(OST_FIELDS))]
            s = io.groupby(level="device").sum()
            touched |= set(s[s > 0].index)
        for device in sorted(touched):
            row = _ints(ost_vals.xs(device, level="device")) if ost_vals is not None and \
                device in ost_vals.index.get_level_values(0) else {}
            entry: dict[str, int | float | None] = {k: row.get(v, 0) for k, v in OST_FIELDS.items()}
            count, wait = row.get("req_count", 0), row.get("req_waittime", 0)
            entry["wait_us_mean"] = round(wait / count, 1) if count else None
            t.osts[device[len(fs) + 1:]] = entry
    return out
