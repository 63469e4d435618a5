"""Synthetic job rows for compare's tests and bench (jobrow.COLUMNS, realistic distributions).

jobs(rng, n, **profile) makes n rows of one kind of job; every profile value may be a scalar or
an array of n (bench/bench_compare.py draws a million rows of 2,000 applications in one call).
Per job: volumes are log-normal around the profile's median (jobs of one application read 1 to
100 GiB), RPC-size histograms are the profile's shares with per-job Beta noise, counts follow
from the bytes (so mean RPC size, RPCs per GiB and shares agree with each other), latency,
read-ahead and metadata counts are log-normal or Beta around the profile's means.
"""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pyarrow as pa

from lustre_jobreport.records import jobrow

GIB = 1 << 30
BUCKETS = (*jobrow.BUCKETS, "over_64M")
UPPER = np.array([4096 << i for i in range(len(BUCKETS))], dtype=np.float64)
DEFAULT_SETTINGS = {"pagesize": 4096, "max_pages_per_rpc": 256, "max_rpcs_in_flight": 8, "max_dirty_mb": 2000,
                    "checksums": 1, "max_read_ahead_mb": 1024, "max_read_ahead_per_file_mb": 256,
                    "max_read_ahead_whole_mb": 64, "hybrid_io": None, "hybrid_io_read_threshold_bytes": None,
                    "hybrid_io_write_threshold_bytes": None}
T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)


def _beta(rng, mean, n, conc=60.0):
    mean = np.clip(np.broadcast_to(np.asarray(mean, dtype=np.float64), (n,)), 1e-6, 1 - 1e-6)
    return rng.beta(mean * conc, (1 - mean) * conc)


def _lognormal(rng, median, sigma, n):
    return np.broadcast_to(np.asarray(median, dtype=np.float64), (n,)) * np.exp(rng.normal(0.0, sigma, n))


def _histogram(rng, nbytes, small, mid, full_bytes, n):
    """RPC counts per bucket for nbytes moved: `small` share in 4K-16K, `mid` share in the
    buckets between 32K and below the full size, the rest full-size RPCs."""
    s = _beta(rng, small, n)
    m = _beta(rng, mid, n) * (1 - s)
    f = np.clip(1 - s - m, 0, 1)
    full_idx = np.clip(np.ceil(np.log2(full_bytes)) - 12, 3, len(BUCKETS) - 1).astype(int)
    shares = np.zeros((n, len(BUCKETS)))
    shares[:, 0], shares[:, 1], shares[:, 2] = 0.7 * s, 0.2 * s, 0.1 * s
    for k in range(3, len(BUCKETS)):
        below = full_idx > k
        width = np.maximum(full_idx - 3, 1)
        shares[:, k] += np.where(below, m / width, 0.0)
        shares[:, k] += np.where(full_idx == k, f, 0.0)
    shares[full_idx == 3, 3] += m[full_idx == 3]
    mean_bytes = (shares * UPPER * 0.75).sum(axis=1) + f * full_bytes * 0.25
    total = np.maximum(nbytes / np.maximum(mean_bytes, 1.0), 1.0)
    return np.rint(shares * total[:, None]).astype(np.int64)


def jobs(rng: np.random.Generator, n: int, *, job_name="enzo", user="ann", nodes=8, fs="scratch",
         cluster="c1", lustre="2.15.4", kernel="5.14.0-427", os="rhel9.4", read_gib=8.0, write_gib=2.0,
         sigma=1.0, read_call=1 << 20, write_call=1 << 20, small_read=0.02, small_write=0.01, mid=0.05,
         ost_read_ratio=1.02, opens_per_gib=2.0, getattr_per_open=2.0, read_latency_us=300.0,
         write_latency_us=150.0, ra_hit=0.95, ra_discard=0.01, hybrid_read=False, hybrid_write=False,
         trusted=True, settings=None, start=T0, offset_s=None, record_prefix="r") -> dict[str, object]:
    """n rows (a dict of column -> array); columns not made are left out (null). A job starts
    offset_s seconds after `start` (default: anywhere in 4 weeks)."""
    st = dict(DEFAULT_SETTINGS, **(settings or {}))
    cols: dict[str, object] = {}

    def each(v, dtype=object):
        return np.broadcast_to(np.asarray(v, dtype=dtype), (n,)).copy()

    ids = np.char.add(f"{record_prefix}-", np.arange(n).astype(str))
    cols["record_id"] = ids.astype(object)
    cols["schema"] = each("lustre-jobreport/3")
    for k, v in (("cluster", cluster), ("job_name", job_name), ("user", user), ("fs", fs),
                 ("lustre", lustre), ("kernel", kernel), ("os", os)):
        cols[k] = each(v)
    cols["job_id"] = np.arange(n).astype(str).astype(object)
    cols["num_nodes"] = each(nodes, np.int64)
    cols["n_hosts"] = cols["num_nodes"]
    elapsed = _lognormal(rng, 3600.0, 0.5, n)
    offset = rng.uniform(0, 28 * 86400, n) if offset_s is None else np.asarray(offset_s, dtype=np.float64)
    cols["begin"] = np.datetime64(start.replace(tzinfo=None), "ms") + (offset * 1000).astype("timedelta64[ms]")
    cols["end"] = cols["begin"] + (elapsed * 1000).astype("timedelta64[ms]")
    cols["elapsed_s"] = elapsed
    for s in jobrow.SETTINGS:
        v = st[s]
        cols[s] = each(v, np.float64 if v is None else np.int64) if v is not None else None
    page = np.broadcast_to(np.asarray(st["pagesize"], dtype=np.float64), (n,))
    full_bytes = np.broadcast_to(np.asarray(st["max_pages_per_rpc"], dtype=np.float64), (n,)) * page

    read_b = _lognormal(rng, np.asarray(read_gib) * GIB, sigma, n)
    write_b = _lognormal(rng, np.asarray(write_gib) * GIB, sigma, n)
    cols["read_bytes"], cols["write_bytes"] = read_b.astype(np.int64), write_b.astype(np.int64)
    read_calls = np.maximum(read_b / _lognormal(rng, read_call, 0.2, n), 1)
    write_calls = np.maximum(write_b / _lognormal(rng, write_call, 0.2, n), 1)
    cols["read_calls"], cols["write_calls"] = read_calls.astype(np.int64), write_calls.astype(np.int64)
    moved_gib = (read_b + write_b) / GIB
    opens = np.maximum(np.rint(_lognormal(rng, opens_per_gib, 0.4, n) * moved_gib), 1)
    cols["open"] = opens.astype(np.int64)
    cols["close"] = opens.astype(np.int64)
    cols["getattr"] = np.rint(opens * _lognormal(rng, getattr_per_open, 0.3, n)).astype(np.int64)
    cols["setattr"] = np.zeros(n, dtype=np.int64)
    cols["statfs"] = np.zeros(n, dtype=np.int64)
    cols["fsync"] = np.rint(opens * 0.1).astype(np.int64)
    cols["md_ops"] = cols["open"] + cols["close"] + cols["getattr"] + cols["fsync"]
    ost_read = read_b * _lognormal(rng, ost_read_ratio, 0.05, n)
    cols["ost_read_bytes"] = ost_read.astype(np.int64)
    cols["ost_write_bytes"] = write_b.astype(np.int64)
    for d, nbytes, small in (("read", ost_read, small_read), ("write", write_b, small_write)):
        hist = _histogram(rng, nbytes, small, mid, full_bytes, n)
        for k, b in enumerate(BUCKETS):
            cols[f"rpc_{d}_{b}"] = hist[:, k]
        cols[f"ost_{d}_rpcs"] = hist.sum(axis=1)
    cols["osts_used"] = each(8, np.int64)
    cols["latency_read_us"] = np.rint(read_calls * _lognormal(rng, read_latency_us, 0.3, n)).astype(np.int64)
    cols["latency_write_us"] = np.rint(write_calls * _lognormal(rng, write_latency_us, 0.3, n)).astype(np.int64)
    pages = read_b / 4096
    hit = _beta(rng, ra_hit, n)
    cols["ra_hits"] = np.rint(pages * hit).astype(np.int64)
    cols["ra_misses"] = np.rint(pages * (1 - hit)).astype(np.int64)
    cols["ra_discarded"] = np.rint(pages * _beta(rng, ra_discard, n)).astype(np.int64)
    cols["ra_pages"] = np.rint(pages).astype(np.int64)
    for d, on, nbytes, calls in (("read", hybrid_read, read_b, read_calls), ("write", hybrid_write, write_b, write_calls)):
        on = each(on, bool)
        cols[f"hybrid_{d}_switch"] = np.where(on, np.rint(calls * 0.5), 0).astype(np.int64)
        cols[f"hybrid_{d}_bytes"] = np.where(on, nbytes * 0.5, 0).astype(np.int64)
    cols["hybrid_noswitch"] = np.zeros(n, dtype=np.int64)
    cols["flags"] = each("")
    cols["data_quality"] = np.where(each(trusted, bool), "", "COUNTER_RESET").astype(object)
    cols["trusted"] = each(trusted, bool)
    return {k: v for k, v in cols.items() if v is not None}


def table(*parts: dict) -> pa.Table:
    """Rows made by jobs() (several calls concatenated) as a table with the dataset's schema."""
    schema = jobrow.arrow_schema()
    n = sum(len(p["record_id"]) for p in parts)
    arrays = []
    for f in schema:
        chunks = []
        for p in parts:
            m = len(p["record_id"])
            v = p.get(f.name)
            chunks.append(pa.nulls(m, f.type) if v is None else pa.array(v, type=f.type))
        arrays.append(pa.chunked_array(chunks, type=f.type) if chunks else pa.nulls(0, f.type))
    t = pa.table(arrays, schema=schema)
    assert t.num_rows == n
    return t
