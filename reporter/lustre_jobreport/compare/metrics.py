"""The per-job metrics `compare` judges: each declared once, computed over all rows at once.

A row is one job on one filesystem (jobrow.COLUMNS). Each metric is a numpy expression over
the columns, NaN where it is undefined for that job (a zero denominator, a null column, a
setting the record did not carry) or where the job moved too little in the metric's direction
to say anything (its gate: a writer's few incidental reads never decide a read metric).

What each field of a Metric means:
  id        the JSON id (stable)
  label     a few words for the text and HTML ("read RPCs ≤16 KiB")
  unit      how its values are shown: share, bytes, per_gib, pages_per_gib, per_open, us, times
  worse     "higher" or "lower": which way a change hurts the job
  gate      which volume must reach [compare] min_bytes for the value to count: "read"
            (read_bytes), "write" (write_bytes), "moved" (read + write); "opens" (at least one open)
  direction "read" / "write": the I/O direction the metric belongs to
  hybrid    a shift that hybrid I/O switching its direction to direct I/O explains (grouptests.hybrid_excused):
            RPC shapes, read-ahead, OST/llite bytes, write latency; not read latency
  context   shown, never a group's verdict by itself (the application's own choice)
  of        for a share: what it is a share of ("of read RPCs")
  formula   the expression, in words of the dataset's columns
  means     one line: what the number says about the job
  look      where to look next when it regresses (LookNext): the client settings the records
            keep that shape it, the known client regressions of that shape, what else
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import catalog
from ..records.jobrow import BUCKETS

GIB = float(1 << 30)
SMALL_BUCKETS = ("4K", "8K", "16K")          # RPCs of at most 16 KiB (DESIGN §4 SMALL_RPC)
ALL_BUCKETS = (*BUCKETS, "over_64M")


class Columns:
    """Float64 arrays of a pyarrow.Table's numeric columns (null -> NaN), converted once, on demand.

    The RPC-size buckets (32 columns) are not kept: rpc_pass() reads them once into what the
    metrics need (per row: each direction's total, small and full-size RPCs)."""

    def __init__(self, table):
        self._table = table
        self._cache: dict[str, np.ndarray] = {}

    def raw(self, name: str) -> np.ndarray:
        # a pyarrow (Chunked)Array: null -> NaN
        return np.asarray(self._table[name].to_numpy(zero_copy_only=False), dtype=np.float64)

    def whole(self, name: str) -> np.ndarray:
        """An integer column as it is (int64, null -> 0): float64 holds whole numbers exactly
        only below 2^53."""
        import pyarrow.compute as pc
        return np.asarray(pc.fill_null(self._table[name], 0).to_numpy(), dtype=np.int64)

    def __call__(self, name: str) -> np.ndarray:
        got = self._cache.get(name)
        if got is None:
            if name in DERIVED:
                rpc_pass(self)
                return self._cache[name]
            got = self._cache[name] = self.raw(name)
        return got

    def put(self, name: str, values: np.ndarray) -> None:
        self._cache[name] = values

    def drop(self) -> None:
        self._cache.clear()


def per(a: np.ndarray, b: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """a / (b / scale), NaN where b is not > 0 or either is null."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = a * scale / b
    out[~(b > 0)] = np.nan
    return out


DERIVED = tuple(f"{kind}_rpcs_{d}" for d in ("read", "write") for kind in ("all", "small", "full"))


def shown_buckets(shares) -> tuple[str, ...]:
    """The RPC-size buckets worth a column or bar: ALL_BUCKETS up to the largest with a non-zero
    share in any of `shares` (bucket -> share or None), at least up to 1M."""
    return tuple(catalog.shown_buckets(ALL_BUCKETS, {b for s in shares for b in ALL_BUCKETS if s.get(b)}))


def full_bucket(c: Columns) -> np.ndarray:
    """Per row, the index in ALL_BUCKETS of the largest RPC the client may send
    (max_pages_per_rpc x pagesize): buckets are named by their upper bound, so the smallest
    bucket at least that large (past 64 MiB: over_64M); -1 when the settings are unknown."""
    full_bytes = c("max_pages_per_rpc") * c("pagesize")
    known = full_bytes > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        idx = np.ceil(np.log2(np.where(known, full_bytes, 4096.0))) - 12
    idx = np.clip(idx, 0, len(ALL_BUCKETS) - 1).astype(np.int64)
    idx[~known] = -1
    return idx


FLOAT_EXACT = 1 << 53      # float64 counts by ones up to here: past it, a sum of counts is rounded
EXACT_CHUNK = 1 << 21      # values a float64 bincount sums at a time when they must be summed in halves


@dataclass
class KeySums:
    """Exact sums per (direction, bucket, key) of whole numbers: uint64 arrays with
    sum = high * 2^32 + low (numpy has no integer type past 64 bits; neither array wraps for
    fewer than 2^32 rows summed); high is None while every sum is below 2^53 (low alone)."""
    low: np.ndarray
    high: np.ndarray | None = None

    def add_high(self, index, high: np.ndarray) -> None:
        if self.high is None:
            self.high = np.zeros_like(self.low)
        self.high[index] = high

    def ints(self, keys) -> list[list[int]]:
        """Per direction, per bucket: the sum over `keys` (an index or a slice of the last
        axis), as Python ints, exact however large."""
        low = self.low[..., keys]
        high = self.high[..., keys] if self.high is not None else np.zeros_like(low)
        if low.ndim == 3:
            high, low = high.sum(axis=-1, dtype=np.uint64), low.sum(axis=-1, dtype=np.uint64)
        return [[(h << 32) + lo for h, lo in zip(hs, ls)] for hs, ls in zip(high.tolist(), low.tolist())]


def key_sums(key: np.ndarray, values: np.ndarray, n_keys: int, whole, chunk: int = EXACT_CHUNK
             ) -> tuple[np.ndarray | None, np.ndarray]:
    """Sums per key (0 .. n_keys - 1) of non-negative whole numbers, exact: (high, low) with
    sum = high * 2^32 + low, high None when every sum is below 2^53 (low then float64, holding
    whole numbers exactly), else both uint64.

    values: the numbers as float64 (null as 0), one per entry of key; whole(): the same as int64,
    asked for only when floats could not sum them. A float64 bincount counts exactly while every
    partial sum stays below 2^53, which the largest value times the number of values bounds: one
    bincount then (a year of a site's RPC counts comes to about 10^13). Else each value's low
    and high 32 bits are summed apart, `chunk` values at a time (with chunk <= 2^21 a chunk's
    sums stay below 2^53), the chunks' sums added as uint64."""
    top = float(values.max()) if len(values) else 0.0
    if top * len(values) < FLOAT_EXACT:          # top < 2^53 is a whole number read exactly
        return None, np.bincount(key, weights=values, minlength=n_keys)
    exact = np.asarray(whole(), dtype=np.int64).view(np.uint64)
    high = np.zeros(n_keys, dtype=np.uint64)
    low = np.zeros(n_keys, dtype=np.uint64)
    for i in range(0, len(exact), chunk):
        part, k = exact[i:i + chunk], key[i:i + chunk]
        low += np.bincount(k, weights=part & np.uint64(0xFFFFFFFF), minlength=n_keys).astype(np.uint64)
        high += np.bincount(k, weights=part >> np.uint64(32), minlength=n_keys).astype(np.uint64)
    return high, low


def rpc_pass(c: Columns, key: np.ndarray | None = None, n_keys: int = 0) -> KeySums | None:
    """Read the RPC-size bucket columns once: keep per row and direction all_rpcs_<d>,
    small_rpcs_<d> (<= 16 KiB) and full_rpcs_<d> (in the full-size bucket; NaN when the
    settings are unknown), null buckets making them NaN; with key (int per row, -1: not
    counted), also return the bucket sums per key, exact (KeySums of shape (2 directions,
    buckets, n_keys)). The rows' counts are not negative (jobrow makes a negative count null,
    recordset distrusts a dataset row holding one)."""
    full_idx = full_bucket(c)
    full_in = np.bincount(full_idx[full_idx >= 0], minlength=len(ALL_BUCKETS)) > 0     # some row's full size
    sums = None
    if key is not None:
        sums = KeySums(np.zeros((2, len(ALL_BUCKETS), n_keys), dtype=np.uint64))
        counted = key >= 0
        key = key[counted]
    for i, d in enumerate(("read", "write")):
        total = small = None
        full = np.where(full_idx >= 0, 0.0, np.nan)
        for k, b in enumerate(ALL_BUCKETS):
            name = f"rpc_{d}_{b}"
            col = c.raw(name)
            total = col.copy() if total is None else total + col
            if b in SMALL_BUCKETS:
                small = col.copy() if small is None else small + col
            if full_in[k]:
                m = full_idx == k
                full[m] = col[m]
            if sums is not None:
                counts = col[counted]
                counts[np.isnan(counts)] = 0.0                   # a null bucket adds nothing
                high, sums.low[i, k] = key_sums(key, counts, n_keys,
                                                lambda: c.whole(name)[counted])
                if high is not None:
                    sums.add_high((i, k), high)
        c.put(f"all_rpcs_{d}", total)
        c.put(f"small_rpcs_{d}", small)
        c.put(f"full_rpcs_{d}", full)
    return sums


def _rpc_share(kind: str, d: str):
    """Share of a direction's RPCs that are `kind` ("small": <= 16 KiB; "full": in the bucket
    of the largest RPC the client may send)."""
    return lambda c: per(c(f"{kind}_rpcs_{d}"), c(f"all_rpcs_{d}"))


def _moved(c: Columns) -> np.ndarray:
    return c("read_bytes") + c("write_bytes")


@dataclass(frozen=True)
class KnownRegression:
    """A client regression known to make a metric regress (the lustre-release tickets, and an
    OS image's tunable; the site's notes, client-regressions.md). `introduced` and `fixed` are
    versions as the ticket gives them ("2.18-dev": on master, in no release yet); `fixed` holds
    the main line's release and those of maintenance branches it was backported to."""
    id: str                             # "LU-18504"
    what: str                           # what it did to a client's I/O, one line
    introduced: str | None = None       # the first version with it; None: not known
    fixed: tuple[str, ...] = ()         # versions with the fix
    came_from: str = ""                 # the ticket whose change brought it
    changed: str = "lustre"             # what must differ between the sides for it to explain a shift:
                                        # "lustre" (a client version) or "kernel/os" (an OS image)


@dataclass(frozen=True)
class LookNext:
    """Where to look when a metric regresses: the client settings (records' names, jobrow.SETTINGS)
    that shape it, the known regressions of that shape, and what else when no recorded setting
    governs it."""
    settings: tuple[str, ...] = ()
    known: tuple[KnownRegression, ...] = ()
    also: str = ""


LU_12533 = KnownRegression("LU-12533", "read-ahead ranges split per stripe: an IOR read gave 56 % one-page RPCs "
                                       "on an OSC", fixed=("2.12.5", "2.13"))
LU_13412 = KnownRegression("LU-13412", "read-ahead window smaller than the RPC size: many 4 KiB reads",
                           fixed=("2.14",))
LU_15274 = KnownRegression("LU-15274", "files at most max_read_ahead_whole_mb lost fast reads: dd bs=4K of a "
                                       "64 MiB file at 9.1 MB/s against 630 MB/s for 65 MiB; RPCs look normal",
                           fixed=("2.16.0",), came_from="LU-12043")
LU_19344 = KnownRegression("LU-19344", "20-30 % slower 8 KiB reads from cache (no RPCs at all)",
                           introduced="2.15.3", fixed=("2.18-dev",), came_from="LU-16025")
LU_18489 = KnownRegression("LU-18489", "4-byte reads with large seeks grew a huge stride window: read-ahead "
                                       "waste, many 4 KiB reads", fixed=("2.18-dev",))
LU_18504 = KnownRegression("LU-18504", "whole-file read-ahead used the 64 MiB connect size, not the OST's",
                           fixed=("2.17",))
READ_AHEAD_KB = KnownRegression("Azure/azhpc-images#293", "an OS image's udev rule set read_ahead_kb on every "
                                "block device, Lustre included: reads ~100x slower, no Lustre change",
                                changed="kernel/os")

READ_AHEAD = ("max_read_ahead_mb", "max_read_ahead_per_file_mb", "max_read_ahead_whole_mb")
# each regression is declared where its notes say it shows: in the RPC-size histograms, the
# read-ahead counters, or only in the per-call latency
LOOK_READ_RPCS = LookNext((*READ_AHEAD, "max_pages_per_rpc"), (LU_12533, LU_13412, LU_18504))
LOOK_READ_AHEAD = LookNext(READ_AHEAD, (LU_18489,))
LOOK_READ_LATENCY = LookNext(("max_read_ahead_whole_mb", "max_read_ahead_mb", "max_read_ahead_per_file_mb"),
                             (LU_15274, LU_19344, READ_AHEAD_KB))
LOOK_WRITE_RPCS = LookNext(("max_dirty_mb", "max_rpcs_in_flight", "max_pages_per_rpc", "checksums"))
LOOK_WRITE_LATENCY = LookNext(("checksums", "max_dirty_mb", "max_rpcs_in_flight"))
LOOK_METADATA = LookNext(also="no metadata setting is recorded: the MDS (its load, its version), and whether the "
                              "application now opens or stats more files")


@dataclass(frozen=True)
class Metric:
    id: str
    label: str
    unit: str
    worse: str
    gate: str
    direction: str | None
    context: bool
    formula: str
    means: str
    compute: Callable[[Columns], np.ndarray]
    of: str = ""            # what a share is a share of ("of read RPCs"), for the text
    hybrid: bool = False    # a shift that hybrid I/O of its direction explains (grouptests.hybrid_excused)
    look: LookNext | None = None    # where to look next when it regresses (None: a context metric)


def _m(id, label, unit, worse, gate, direction, formula, means, compute, context=False, of="",
       hybrid=None, look=None) -> Metric:
    return Metric(id, label, unit, worse, gate, direction, context, formula, means, compute, of,
                  direction is not None if hybrid is None else hybrid, look)


def _look_rpcs(d: str) -> LookNext:
    return LOOK_READ_RPCS if d == "read" else LOOK_WRITE_RPCS


METRICS: tuple[Metric, ...] = (
    *(m for d in ("read", "write") for m in (
        _m(f"small_{d}_rpc_share", f"{d} RPCs ≤16 KiB", "share", "higher", d, d,
           f"(rpc_{d}_4K + rpc_{d}_8K + rpc_{d}_16K) / all rpc_{d}_*",
           f"share of the job's {d} RPCs that carried 16 KiB or less: each costs a round trip "
           f"for little data", _rpc_share("small", d), of=f"of {d} RPCs", look=_look_rpcs(d)),
        _m(f"mean_{d}_rpc_bytes", f"mean {d} RPC", "bytes", "lower", d, d,
           f"ost_{d}_bytes / ost_{d}_rpcs",
           f"bytes an average {d} RPC carried to or from the OSTs", lambda c, d=d: per(c(f"ost_{d}_bytes"), c(f"ost_{d}_rpcs")),
           look=_look_rpcs(d)),
        _m(f"{d}_rpcs_per_gib", f"{d} RPCs per GiB", "per_gib", "higher", d, d,
           f"ost_{d}_rpcs / ({d}_bytes / GiB)",
           f"OST {d} RPCs the client sent per GiB the application {'read' if d == 'read' else 'wrote'}",
           lambda c, d=d: per(c(f"ost_{d}_rpcs"), c(f"{d}_bytes"), GIB), look=_look_rpcs(d)),
        _m(f"full_{d}_rpc_share", f"full-size {d} RPCs", "share", "lower", d, d,
           f"rpc_{d}_<max_pages_per_rpc x pagesize> / all rpc_{d}_*",
           f"share of {d} RPCs as large as the client allows (max_pages_per_rpc pages); "
           f"unknown without the settings", _rpc_share("full", d), of=f"of {d} RPCs", look=_look_rpcs(d)),
        # The application's own call size: a change here is the workload's (a new input deck,
        # a rebuilt I/O library), not the client's, so it is shown beside the client's metrics
        # to explain them and never makes a group a regression (or improvement) by itself.
        _m(f"mean_{d}_call_bytes", f"mean {d} call", "bytes", "lower", d, d,
           f"{d}_bytes / {d}_calls",
           f"the application's own mean {d}() size (its choice: context, not a verdict)",
           lambda c, d=d: per(c(f"{d}_bytes"), c(f"{d}_calls")), context=True),
    )),
    _m("opens_per_gib", "opens per GiB", "per_gib", "higher", "moved", None,
       "open / ((read_bytes + write_bytes) / GiB)",
       "files opened per GiB moved: each open is a metadata round trip",
       lambda c: per(c("open"), _moved(c), GIB), look=LOOK_METADATA),
    _m("getattr_per_open", "getattr per open", "per_open", "higher", "opens", None,
       "getattr / open", "stat-type calls per opened file",
       lambda c: per(c("getattr"), c("open")), look=LOOK_METADATA),
    _m("md_ops_per_gib", "metadata ops per GiB", "per_gib", "higher", "moved", None,
       "md_ops / ((read_bytes + write_bytes) / GiB)",
       "metadata operations of every kind per GiB moved",
       lambda c: per(c("md_ops"), _moved(c), GIB), look=LOOK_METADATA),
    # Hybrid I/O makes a large buffered write synchronous (it waits for the OSTs instead of
    # the page cache): a longer write() is its design. A read switched to direct I/O is meant
    # to be no slower, so a longer read() stays a regression whatever the switch (the very
    # thing compare is for: applications that now read slower).
    *(_m(f"{d}_latency_us", f"{d} call latency", "us", "higher", d, d,
         f"latency_{d}_us / {d}_calls",
         f"mean time of one {d}() call in the client (Lustre 2.14+; null before)",
         lambda c, d=d: per(c(f"latency_{d}_us"), c(f"{d}_calls")), hybrid=d == "write",
         look=LOOK_READ_LATENCY if d == "read" else LOOK_WRITE_LATENCY) for d in ("read", "write")),
    _m("ra_hit_share", "read-ahead hits", "share", "lower", "read", "read",
       "ra_hits / (ra_hits + ra_misses)",
       "share of page reads that read-ahead had already brought in",
       lambda c: per(c("ra_hits"), c("ra_hits") + c("ra_misses")), of="of page reads", look=LOOK_READ_AHEAD),
    _m("ra_discard_per_gib", "read-ahead pages discarded per GiB", "pages_per_gib", "higher", "read", "read",
       "ra_discarded / (read_bytes / GiB)",
       "pages read ahead and thrown away unused, per GiB the application read",
       lambda c: per(c("ra_discarded"), c("read_bytes"), GIB), look=LOOK_READ_AHEAD),
    _m("ost_read_per_llite_read", "OST bytes read per byte read", "times", "higher", "read", "read",
       "ost_read_bytes / read_bytes",
       "bytes fetched from OSTs per byte the application read (read-ahead waste above 1)",
       lambda c: per(c("ost_read_bytes"), c("read_bytes")), look=LOOK_READ_AHEAD),
)
BY_ID = {m.id: m for m in METRICS}

# The columns the metrics and their gates read.
GATE_COLUMNS = ("read_bytes", "write_bytes", "open")
PLAIN_COLUMNS = (*GATE_COLUMNS, "read_calls", "write_calls", "getattr", "md_ops", "ost_read_bytes",
                 "ost_write_bytes", "ost_read_rpcs", "ost_write_rpcs", "latency_read_us", "latency_write_us",
                 "ra_hits", "ra_misses", "ra_discarded", "pagesize", "max_pages_per_rpc")
COLUMNS = (*PLAIN_COLUMNS, *(f"rpc_{d}_{b}" for d in ("read", "write") for b in ALL_BUCKETS))


def gate(metric: Metric, c: Columns, min_bytes: float) -> np.ndarray:
    """Rows whose volume lets the metric count (bool)."""
    if metric.gate == "read":
        return c("read_bytes") >= min_bytes
    if metric.gate == "write":
        return c("write_bytes") >= min_bytes
    if metric.gate == "moved":
        return _moved(c) >= min_bytes
    if metric.gate == "opens":
        return c("open") >= 1
    raise ValueError(f"unknown gate {metric.gate}")


def values(metric: Metric, c: Columns, min_bytes: float) -> np.ndarray:
    """The metric for every row: NaN where undefined or gated out."""
    v = np.asarray(metric.compute(c), dtype=np.float64)
    v[~gate(metric, c, min_bytes)] = np.nan     # NaN >= x is False: a null volume gates out too
    v[~np.isfinite(v)] = np.nan
    return v


def worse_is_higher() -> np.ndarray:
    """[m, 1]: a higher value of metric m is the worse one."""
    return np.array([m.worse == "higher" for m in METRICS])[:, None]


def can_decide() -> np.ndarray:
    """[m, 1]: metric m may decide its group's verdict (a context metric never does)."""
    return np.array([not m.context for m in METRICS], dtype=bool)[:, None]
