"""Flag rules (DESIGN §4): each looks at one filesystem's job totals and, when it fires, says
what the job did (its own numbers), why that costs time (a measured fact and its source, from
notes/io-findings.md) and what to do. Thresholds come from the site config.

A finding names the totals it rests on (Flag.rests_on). One resting on a total no host's value
of which was counted is not made; one resting on totals some hosts' values of which were left
out is judged over a consistent basis — the hosts whose every input was counted (FsTotals.
same_hosts), or, where a total is counted or left out whole per host, the hosts read — and says
so in its finding and its evidence (left_out). Each rule's choice is in DESIGN §4.

Sources cited in the "why" lines:
  Saini et al. 2012, "I/O Performance Characterization of Lustre and NASA Applications on Pleiades"
  Boito et al. 2011, "The impact of applications' I/O strategies on the performance of Lustre"
  Borrill et al. 2007, "Investigation of leading HPC I/O performance ..." (MADbench2)
  Yu et al. 2007, "Exploiting Lustre File Joining for Effective Collective IO"
  Sebepou et al. 2008, "A Comparative Experimental Study of Parallel File Systems ..."
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Callable

from .. import catalog
from .aggregate import WAIT, Basis, FsTotals, past_int64
from .diff import Issue
from ..catalog import size_bytes
from ..config import Config

GIB = 1 << 30
SEVERITY_ORDER = {"high": 0, "warn": 1, "info": 2}


@dataclass(frozen=True)
class JobContext:
    elapsed_s: float
    n_hosts: int
    rates_judged: bool = True   # False for jobs too short for per-second rates (SHORT_JOB)


@dataclass
class Flag:
    id: str
    severity: str
    fs: str
    finding: str
    why: str
    advice: str
    evidence: dict = field(default_factory=dict)
    rests_on: tuple[str, ...] = ()     # the totals (aggregate.total_name) the finding is made from
    basis: Basis | None = None         # the same-hosts basis it was judged over, if one
    when: dict | None = None           # the phase of the job's timeline most of it came in, if one

    def to_json(self) -> dict:
        return {"id": self.id, "severity": self.severity, "fs": self.fs, "finding": self.finding,
                "why": self.why, "advice": self.advice, "evidence": self.evidence,
                "rests_on": list(self.rests_on), "when": self.when}


Rule = Callable[[FsTotals, JobContext, Config], "Flag | None"]


def _pct(part: float, whole: float) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "0%"


def _gib(n: int) -> str:
    return f"{n / GIB:,.1f} GiB"


def _rate(count: int, ctx: JobContext) -> float | None:
    return count / ctx.elapsed_s if ctx.rates_judged and ctx.elapsed_s > 0 else None


def is_small_rpc(nbytes: int, cfg: Config) -> bool:
    """An RPC of this many bytes is one the SMALL_RPC findings count as small."""
    return nbytes <= cfg.flag("SMALL_RPC")["max_rpc_bytes"]


def _small_rpc(direction: str, advice: str) -> Rule:
    flag_id = f"SMALL_RPC_{direction.upper()}"

    def rule(t: FsTotals, ctx: JobContext, cfg: Config) -> Flag | None:
        p = cfg.flag("SMALL_RPC")
        hist = t.rpc.get(direction)
        if hist is None:
            return None
        total = sum(hist.values())
        small = sum(n for label, n in hist.items() if is_small_rpc(size_bytes(label), cfg))
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
                      "max_rpc_bytes": p["max_rpc_bytes"]},
            rests_on=(f"rpc.{direction}",))
    rule.__name__ = flag_id
    return rule


def open_close_storm(t: FsTotals, ctx: JobContext, cfg: Config) -> Flag | None:
    p = cfg.flag("OPEN_CLOSE_STORM")
    inputs = ("ops.open", "ops.close", "read_bytes", "write_bytes")
    b = t.same_hosts(*inputs)
    if b is None:
        return None
    opens, closes = b.sums["ops.open"], b.sums["ops.close"]
    moved = b.sums["read_bytes"] + b.sums["write_bytes"]
    per_gib = opens / (moved / GIB) if moved else None
    per_s = _rate(opens, ctx)
    dense = per_gib is None or per_gib >= p["opens_per_gib"]
    fast = per_s is not None and per_s >= p["opens_per_s"]
    if opens < p["min_opens"] or not (dense or fast):
        return None
    how = [f"{per_gib:,.1f} per GiB moved" if per_gib is not None else "with no data moved"]
    if per_s is not None:
        how.append(f"{per_s:,.1f}/s")
    return Flag(
        "OPEN_CLOSE_STORM", "high", t.name,
        finding=f"{opens:,} opens and {closes:,} closes, {', '.join(how)}",
        why="every open and close is a synchronous MDS round trip; on Pleiades, Enzo's 5,303 opens "
            "and MITgcm's per-rank files stood out against < 60 for well-behaved codes (Saini et al. 2012)",
        advice="open each file once and keep it open across time steps; write fewer, larger files "
               "(one shared HDF5/NetCDF file per step rather than one file per rank)",
        evidence={"opens": opens, "closes": closes, "bytes_moved": moved,
                  "opens_per_gib": None if per_gib is None else round(per_gib, 2),
                  "opens_per_s": None if per_s is None else round(per_s, 2)},
        rests_on=inputs, basis=b)


def stat_storm(t: FsTotals, ctx: JobContext, cfg: Config) -> Flag | None:
    p = cfg.flag("STAT_STORM")
    b = t.same_hosts("ops.getattr", "ops.open")
    if b is None:
        return None
    getattr_, opens = b.sums["ops.getattr"], b.sums["ops.open"]
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
        evidence={"getattr": getattr_, "opens": opens},
        rests_on=("ops.getattr", "ops.open"), basis=b)


def statfs_storm(t: FsTotals, ctx: JobContext, cfg: Config) -> Flag | None:
    statfs = t.ops.get("statfs")
    if statfs is None or statfs < cfg.flag("STATFS_STORM")["min_statfs"]:
        return None
    return Flag(
        "STATFS_STORM", "warn", t.name,
        finding=f"{statfs:,} statfs calls (df / free-space checks)",
        why="statfs asks the MDS and every OST for their usage, so each call touches the whole filesystem",
        advice="check free space once at job start instead of before every write; avoid df in loops",
        evidence={"statfs": statfs},
        rests_on=("ops.statfs",))


METADATA_OPS = frozenset(catalog.METADATA_OPS)


def _metadata_ops(counts: dict[str, int | None]) -> int:
    """The metadata operations among a filesystem's (or a host's) counts, as the catalog names them."""
    return sum(n or 0 for op, n in counts.items() if op in METADATA_OPS)


def metadata_rate(t: FsTotals, ctx: JobContext, cfg: Config) -> Flag | None:
    p = cfg.flag("METADATA_RATE")
    inputs = tuple(f"ops.{op}" for op in t.ops if op in METADATA_OPS)
    if any(t.absent(name) for name in inputs):
        return None
    job_ops = _metadata_ops(t.ops)
    job_rate = _rate(job_ops, ctx)
    if job_rate is None:
        return None
    per_host = {h: _metadata_ops(v) / ctx.elapsed_s for h, v in t.hosts.items()}
    busiest = max(per_host, key=lambda h: (per_host[h], h), default=None)
    host_rate = per_host.get(busiest, 0.0) if busiest else 0.0
    if job_rate < p["job_per_s"] and host_rate < p["per_host_per_s"]:
        return None
    return Flag(
        "METADATA_RATE", "warn", t.name,
        finding=f"{job_ops:,} metadata operations, {job_rate:,.0f}/s job-wide"
                + (f", {host_rate:,.0f}/s on {busiest}" if busiest else ""),
        why="the MDS handles metadata essentially one request at a time, so every client adds load "
            "and waits (Yu et al. 2007); Lustre stat and close measured 22-83x NFS (Saini et al. 2012)",
        advice="cut per-file metadata: fewer files, no open/stat/close per time step, directory "
               "listings once rather than in loops",
        evidence={"metadata_ops": job_ops, "per_s": round(job_rate, 1), "busiest_host": busiest,
                  "busiest_host_per_s": round(host_rate, 1)},
        rests_on=inputs)


def tiny_calls(t: FsTotals, ctx: JobContext, cfg: Config) -> Flag | None:
    p = cfg.flag("TINY_CALLS")
    worst = None
    for direction in ("read", "write"):
        # bytes and calls over the same hosts: a host whose bytes were left out must not count its calls
        b = t.same_hosts(f"{direction}_bytes", f"{direction}_calls")
        if b is None:
            continue
        calls, nbytes = b.sums[f"{direction}_calls"], b.sums[f"{direction}_bytes"]
        if calls >= p["min_calls"] and nbytes / calls < p["max_mean_bytes"]:
            mean = nbytes / calls
            if worst is None or mean < worst[2]:
                worst = (direction, calls, mean, b)
    if worst is None:
        return None
    direction, calls, mean, b = worst
    return Flag(
        "TINY_CALLS", "warn", t.name,
        finding=f"{calls:,} {direction} calls of {mean:,.0f} bytes on average",
        why="every call pays the client's locking and system-call overhead; shared-file writes lost "
            "78% of their bandwidth at 2 KB requests (Boito et al. 2011)",
        advice="buffer in the application and read or write >= 1 MiB per call (stdio/Fortran buffers, "
               "HDF5 chunk cache, MPI-IO collective buffering)",
        evidence={"direction": direction, "calls": calls, "mean_bytes": round(mean, 1)},
        rests_on=(f"{direction}_bytes", f"{direction}_calls"), basis=b)


OST_BYTES = ("osts.read_bytes", "osts.write_bytes")
OST_FIGURES = OST_BYTES + ("osts.read_rpcs", "osts.write_rpcs")


def _ost_basis(t: FsTotals, inputs: tuple[str, ...]) -> tuple[dict[str, dict], Basis | None]:
    """The per-OST figures to compare OSTs by: the totals when whole, else those over the hosts
    whose every OSC value of the filesystem was counted (and that basis)."""
    if not any(name in t.left_out for name in inputs) or t.osts_basis is None:
        return t.osts, None
    return t.osts_basis, Basis({}, t.osts_basis_hosts, t.osts_basis_hosts_left_out)


def under_striped(t: FsTotals, ctx: JobContext, cfg: Config) -> Flag | None:
    p = cfg.flag("UNDER_STRIPED")
    osts, b = _ost_basis(t, OST_BYTES)
    moved = {ost: int(o["read_bytes"] or 0) + int(o["write_bytes"] or 0) for ost, o in osts.items()}
    total = sum(moved.values())
    if total < p["min_bytes"] or t.ost_count < p["min_osts"] or not moved:
        return None
    top = max(moved, key=lambda o: (moved[o], o))
    if moved[top] / total < p["one_ost_share"]:
        return None
    return Flag(
        "UNDER_STRIPED", "warn", t.name,
        finding=f"{_pct(moved[top], total)} of {_gib(total)} went through one OST ({top}) "
                f"of the {t.ost_count} available",
        why="one OST bounds the bandwidth; 16 OSTs gave 3.2x the write and 2.4x the read bandwidth of "
            "one (Saini et al. 2012), and restriping a shared file over all OSTs gave dramatic gains "
            "on Jaguar (Borrill et al. 2007)",
        advice=f"stripe large files over more OSTs before writing them, e.g. "
               f"`lfs setstripe -c {min(t.ost_count, 8)} <dir>` (or -c -1 for all OSTs)",
        evidence={"bytes": total, "top_ost": top, "top_ost_bytes": moved[top], "ost_count": t.ost_count},
        rests_on=OST_BYTES, basis=b)


def over_striped_small_io(t: FsTotals, ctx: JobContext, cfg: Config) -> Flag | None:
    p = cfg.flag("OVER_STRIPED_SMALL_IO")
    osts, b = _ost_basis(t, OST_FIGURES)
    touched = len(osts)
    rpcs = sum(int(o.get(k) or 0) for o in osts.values() for k in ("read_rpcs", "write_rpcs"))
    nbytes = sum(int(o.get(k) or 0) for o in osts.values() for k in ("read_bytes", "write_bytes"))
    if touched < p["min_osts"] or rpcs == 0 or nbytes / rpcs >= p["max_mean_rpc_bytes"]:
        return None
    mean = nbytes / rpcs
    return Flag(
        "OVER_STRIPED_SMALL_IO", "info", t.name,
        finding=f"{touched} OSTs used with a mean RPC of {mean / 1024:,.1f} KiB",
        why="with small requests, striping wider only adds per-OST protocol work: 64 KB records "
            "gained up to 4 OSTs (reads) or 8 (writes) and lost beyond (Yu et al. 2007)",
        advice="keep small files and small-request files at stripe count 1-4, e.g. "
               "`lfs setstripe -c 1 <dir>` for per-process files",
        evidence={"osts": touched, "mean_rpc_bytes": round(mean, 1), "rpcs": rpcs},
        rests_on=OST_FIGURES, basis=b)


def rank0_io(t: FsTotals, ctx: JobContext, cfg: Config) -> Flag | None:
    p = cfg.flag("RANK0_IO")
    per_host = t.host_bytes()     # the hosts whose read and write bytes were both counted
    total = sum(per_host.values())
    left = max(t.left_out.get("read_bytes", 0), t.left_out.get("write_bytes", 0))
    b = Basis({}, len(per_host), left) if left else None
    if ctx.n_hosts < p["min_hosts"] or (b and b.hosts < p["min_hosts"]) or total < p["min_bytes"] or not per_host:
        return None
    top = max(per_host, key=lambda h: (per_host[h], h))
    if per_host[top] / total < p["one_host_share"]:
        return None
    return Flag(
        "RANK0_IO", "warn", t.name,
        finding=f"{top} moved {_pct(per_host[top], total)} of {_gib(total)} on a {ctx.n_hosts}-host job",
        why="funnelling I/O through one rank is simple but does not scale: one client's link and "
            "memory bound it, and sequential I/O was the bottleneck for big grids (Saini et al. 2012)",
        advice="write in parallel (MPI-IO or parallel HDF5/NetCDF) or, for a single writer, stripe "
               "its files wide: `lfs setstripe -c 8 <dir>`",
        evidence={"host": top, "host_bytes": per_host[top], "bytes": total, "hosts": ctx.n_hosts},
        rests_on=("read_bytes", "write_bytes"), basis=b)


def readahead_waste(t: FsTotals, ctx: JobContext, cfg: Config) -> Flag | None:
    p = cfg.flag("READAHEAD_WASTE")
    # both sides over the same hosts: a host with its llite stats unreadable but its osc stats
    # read would otherwise make the OSTs look as if they sent more than the job read
    b = t.same_hosts("osts.read_bytes", "read_bytes")
    if b is None:
        return None
    fetched, read = b.sums["osts.read_bytes"], b.sums["read_bytes"]
    if fetched < p["min_bytes"] or fetched < p["ratio"] * max(read, 1):
        return None
    return Flag(
        "READAHEAD_WASTE", "warn", t.name,
        finding=f"read {_gib(fetched)} from the OSTs for {_gib(read)} the job read "
                f"({fetched / max(read, 1):.1f}x)",
        why="strided and random reads make read-ahead fetch data that is never used; strided reads "
            "lost up to 57% against contiguous ones (Boito et al. 2011)",
        advice="read contiguous extents (reorganise the data or use collective MPI-IO reads); for "
               "truly random access, say so: posix_fadvise(POSIX_FADV_RANDOM)",
        evidence={"osc_read_bytes": fetched, "llite_read_bytes": read,
                  "hosts_left_out": b.hosts_left_out},
        rests_on=("osts.read_bytes", "read_bytes"), basis=b)


def fsync_storm(t: FsTotals, ctx: JobContext, cfg: Config) -> Flag | None:
    p = cfg.flag("FSYNC_STORM")
    b = t.same_hosts("ops.fsync", "write_bytes")
    if b is None:
        return None
    fsync, written = b.sums["ops.fsync"], b.sums["write_bytes"]
    per_gib = fsync / (written / GIB) if written else None
    if fsync < p["min_fsync"] or (per_gib is not None and per_gib < p["per_gib_written"]):
        return None
    rate = f"{per_gib:,.1f} per GiB written" if per_gib is not None else "with nothing written"
    return Flag(
        "FSYNC_STORM", "warn", t.name,
        finding=f"{fsync:,} fsync calls, {rate}",
        why="each fsync waits for dirty pages to reach the OSTs and breaks the client's aggregation "
            "of writes into 1 MiB RPCs, 8 in flight per OST (Saini et al. 2012)",
        advice="fsync once at the end of a checkpoint or output step, not after every write",
        evidence={"fsync": fsync, "write_bytes": written,
                  "per_gib": None if per_gib is None else round(per_gib, 2)},
        rests_on=("ops.fsync", "write_bytes"), basis=b)


def slow_ost(t: FsTotals, ctx: JobContext, cfg: Config) -> Flag | None:
    p = cfg.flag("SLOW_OST")
    waits = {ost: o["wait_us_mean"] for ost, o in t.osts.items() if o.get("wait_us_mean") is not None}
    if len(waits) < 2:
        return None
    median = statistics.median(waits.values())
    slow = {o: w for o, w in waits.items() if w >= p["min_wait_us"] and w >= p["times_median"] * median}
    if not slow:
        return None
    worst = max(slow, key=lambda o: (slow[o], o))
    against = (f"{slow[worst] / median:.1f}x the median" if median   # most OSTs' requests waited 0 us
               else "against a median of 0 ms")
    return Flag(
        "SLOW_OST", "info", t.name,
        finding=f"requests to {worst} waited {slow[worst] / 1000:,.1f} ms on average, "
                f"{against} of the {len(waits)} OSTs used"
                + (f" ({len(slow)} OSTs slow)" if len(slow) > 1 else ""),
        why="not your code: the same client requests were slow on this OST only, which points to a "
            "busy, degraded or recovering OST",
        advice=f"tell your admins (filesystem {t.name}, {worst}, the job's time); if it persists, "
               f"place new files elsewhere with `lfs setstripe` or an OST pool",
        evidence={"slow": {o: round(w, 1) for o, w in sorted(slow.items())}, "median_us": round(median, 1)},
        rests_on=(WAIT,))


def fs_trouble(t: FsTotals, ctx: JobContext, cfg: Config) -> Flag | None:
    if not t.trouble:
        return None
    parts = []
    for e in t.trouble[:3]:
        what = []
        if e["reconnects"] is None:
            what.append("reconnects not read")
        elif e["reconnects"]:
            what.append(f"reconnected {e['reconnects']}x")
        if e["state"] and e["state"] != "FULL":
            what.append(f"was {e['state']} at the end")
        parts.append(f"{e['target']} on {e['host']} " + " and ".join(what))
    total = max(t.trouble_total, len(t.trouble))
    more = f" (+{total - 3} more)" if total > 3 else ""
    return Flag(
        "FS_TROUBLE", "info", t.name,
        finding="; ".join(parts) + more,
        why="not your code: the client lost its connection to a server (or was evicted) during the "
            "job, and I/O waited for recovery or was lost",
        advice="tell your admins the job id, the hosts and the times; check the job's output files "
               "for completeness",
        evidence={"targets": t.trouble, "total": total},
        rests_on=("trouble",))


RULES: list[Rule] = [
    _small_rpc("read", "read in large contiguous blocks (>= 1 MiB); replace strided or random small "
                       "reads by collective MPI-IO or HDF5 chunks sized to 1 MiB or more"),
    _small_rpc("write", "aggregate writes into >= 1 MiB requests: buffer in the application or use "
                        "MPI-IO collective buffering (romio_cb_write=enable)"),
    open_close_storm, stat_storm, statfs_storm, metadata_rate, tiny_calls, under_striped,
    over_striped_small_io, rank0_io, readahead_waste, fsync_storm, slow_ost, fs_trouble,
]


def _said(flag: Flag, t: FsTotals) -> Flag | None:
    """The finding as it may be made: not at all if a total it rests on was not read on any
    host; with what was left out said if some hosts' values of its totals were."""
    if any(t.absent(name) for name in flag.rests_on):
        return None
    partial = {name: t.left_out[name] for name in flag.rests_on if name in t.left_out}
    if not partial:
        return flag
    b = flag.basis
    if b is not None:
        hosts = "hosts" if b.hosts is None else f"{b.hosts:,} host{'s' if b.hosts != 1 else ''}"
        flag.finding += f" (over the {hosts} whose counters were all read; {b.hosts_left_out:,} left out)"
    else:
        n = max(partial.values())
        flag.finding += f" (from what could be read: values of {n:,} host{'s' if n != 1 else ''} left out)"
    flag.evidence["left_out"] = partial
    return flag


def evaluate(totals: dict[str, FsTotals], ctx: JobContext, cfg: Config,
             issues: list[Issue] | None = None) -> list[Flag]:
    """The findings of each filesystem's totals. A finding whose own figures (sums it makes,
    e.g. an OST's read and write bytes) reach 2^63 is not made: a job record could not keep it,
    and no job moves that much; it is said in ISSUES (VALUE_TOO_LARGE) instead."""
    flags = []
    for t in totals.values():
        for rule in RULES:
            made = rule(t, ctx, cfg)
            if made is None:
                continue
            too_large = sorted(set(past_int64(made.evidence)))
            if too_large:
                if issues is not None:
                    issues.append(Issue("VALUE_TOO_LARGE", None, t.name,
                                        f"{t.name}: {made.id} not judged: its {', '.join(too_large)} add up to "
                                        "2^63 or more, past what a job record keeps"))
                continue
            if (said := _said(made, t)) is not None:
                flags.append(said)
    return sorted(flags, key=lambda f: (SEVERITY_ORDER[f.severity], f.fs, f.id))
