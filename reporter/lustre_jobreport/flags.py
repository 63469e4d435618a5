"""Flag rules (DESIGN §4): each looks at one filesystem's job totals and, when it fires, says
what the job did (its own numbers), why that is slow (a measured fact, with its source) and
what to do. Thresholds come from the site config.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .aggregate import FsTotals, size_bytes
from .config import Config

GIB = 1 << 30
SEVERITY_ORDER = {"high": 0, "warn": 1, "info": 2}


@dataclass(frozen=True)
class JobContext:
    elapsed_s: float
    n_hosts: int


@dataclass
class Flag:
    id: str
    severity: str
    fs: str
    finding: str
    why: str
    advice: str
    evidence: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"id": self.id, "severity": self.severity, "fs": self.fs, "finding": self.finding,
                "why": self.why, "advice": self.advice, "evidence": self.evidence}


def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "0%"


def _small_rpc(direction: str, advice: str) -> Callable[[FsTotals, JobContext, Config], Flag | None]:
    flag_id = f"SMALL_RPC_{direction.upper()}"

    def rule(t: FsTotals, ctx: JobContext, cfg: Config) -> Flag | None:
        p = cfg.flag("SMALL_RPC")
        hist = t.rpc[direction]
        total = sum(hist.values())
        small = sum(n for label, n in hist.items() if size_bytes(label) <= p["max_rpc_bytes"])
        if total == 0 or small < p["min_rpcs"] or small / total < p["min_share"]:
            return None
        limit = f"{p['max_rpc_bytes'] // 1024} KiB"
        return Flag(
            flag_id, "high", t.name,
            finding=f"{small:,} of {total:,} {direction} RPCs ({_pct(small, total)}) were {limit} or smaller",
            why="each RPC costs a round trip whatever its size, so a 4 KiB RPC moves 256x less data "
                "per trip than a 1 MiB one; high small-bucket counts marked inefficient I/O in "
                "NASA's Pleiades study (Saini et al. 2012)",
            advice=advice,
            evidence={"small_rpcs": small, "rpcs": total, "share": round(small / total, 4),
                      "max_rpc_bytes": p["max_rpc_bytes"]})
    rule.__name__ = flag_id
    return rule


def open_close_storm(t: FsTotals, ctx: JobContext, cfg: Config) -> Flag | None:
    p = cfg.flag("OPEN_CLOSE_STORM")
    opens = t.ops.get("open", 0)
    per_gib = opens / (t.bytes_moved / GIB) if t.bytes_moved else float("inf")
    per_s = opens / ctx.elapsed_s if ctx.elapsed_s > 0 else float("inf")
    if opens < p["min_opens"] or (per_gib < p["opens_per_gib"] and per_s < p["opens_per_s"]):
        return None
    rate = f"{per_gib:,.1f} per GiB moved" if t.bytes_moved else "with no data moved"
    return Flag(
        "OPEN_CLOSE_STORM", "high", t.name,
        finding=f"{opens:,} opens and {t.ops.get('close', 0):,} closes, {rate}",
        why="every open and close is a synchronous MDS round trip; on Pleiades, Enzo's 5,303 opens "
            "and MITgcm's per-rank files stood out against < 60 for well-behaved codes (Saini et al. 2012)",
        advice="open each file once and keep it open across time steps; write fewer, larger files "
               "(one shared HDF5/NetCDF file per step rather than one file per rank)",
        evidence={"opens": opens, "closes": t.ops.get("close", 0), "bytes_moved": t.bytes_moved,
                  "opens_per_gib": None if per_gib == float("inf") else round(per_gib, 2),
                  "opens_per_s": None if per_s == float("inf") else round(per_s, 2)})


def stat_storm(t: FsTotals, ctx: JobContext, cfg: Config) -> Flag | None:
    p = cfg.flag("STAT_STORM")
    getattr_, opens = t.ops.get("getattr", 0), t.ops.get("open", 0)
    if getattr_ < p["min_getattr"] or (opens and getattr_ / opens < p["getattr_per_open"]):
        return None
    per_open = f"{getattr_ / opens:.2f} per open" if opens else "with no opens"
    return Flag(
        "STAT_STORM", "warn", t.name,
        finding=f"{getattr_:,} getattr (stat) calls, {per_open}",
        why="fstat on Lustre measured 40-83x slower than on NFS (Saini et al. 2012), and ls -lR of "
            "25,000 files took 58 s against 5.5 s on ext3 (Sebepou et al.)",
        advice="avoid ls -l, du, find or stat loops and file polling inside the job; "
               "check for a file once and remember its size",
        evidence={"getattr": getattr_, "opens": opens})


def statfs_storm(t: FsTotals, ctx: JobContext, cfg: Config) -> Flag | None:
    p = cfg.flag("STATFS_STORM")
    statfs = t.ops.get("statfs", 0)
    if statfs < p["min_statfs"]:
        return None
    return Flag(
        "STATFS_STORM", "warn", t.name,
        finding=f"{statfs:,} statfs calls (df / free-space checks)",
        why="statfs asks the MDS and every OST for their usage, so each call touches the whole filesystem",
        advice="check free space once at job start instead of before every write; avoid df in loops",
        evidence={"statfs": statfs})


RULES = [
    _small_rpc("read", "read in large contiguous blocks (>= 1 MiB); replace strided or random small "
                       "reads by collective MPI-IO or HDF5 chunks sized to 1 MiB or more"),
    _small_rpc("write", "aggregate writes into >= 1 MiB requests: buffer in the application or use "
                        "MPI-IO collective buffering (romio_cb_write=enable)"),
    open_close_storm,
    stat_storm,
    statfs_storm,
]


def evaluate(totals: dict[str, FsTotals], ctx: JobContext, cfg: Config) -> list[Flag]:
    flags = [f for t in totals.values() for rule in RULES if (f := rule(t, ctx, cfg))]
    return sorted(flags, key=lambda f: (SEVERITY_ORDER[f.severity], f.fs, f.id))
