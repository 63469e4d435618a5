"""Synthetic job records for the records/compact/recordset tests and bench/bench_compact.py:
report documents of schema lustre-jobreport/3 as `report --format json` writes them (job facts,
clients with their settings, per filesystem volumes, ops, RPC histogram, OSTs, per-host table,
latency, read-ahead, hybrid I/O), with values varied by a seed. The tests below check that
what it builds is what jobrow reads."""

from __future__ import annotations

import random
import zlib
from datetime import datetime, timedelta, timezone

from lustre_jobreport import catalog, jobrow, records

OPS = catalog.METADATA_OPS
BUCKETS = jobrow.BUCKETS


def _iso(t: datetime) -> str:
    return t.astimezone(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def report_doc(job_id: str = "1", *, end: str | datetime = "2026-10-15T12:00:00Z", seed: int | None = None,
               fs: tuple[str, ...] = ("scratch",), hosts: int = 2, lustre: str | list[str] = "2.15.4",
               kernel: str = "4.18.0-477.27.1.el8_8.x86_64", os_name: str = "Rocky Linux 8.8 (Green Obsidian)",
               user: str = "ann", name: str | None = "wrf", partition: str | None = "batch",
               account: str | None = "climate", elapsed_s: float | None = None, osts: int = 4,
               schema: str = "lustre-jobreport/3", flags: tuple[tuple[str, str], ...] = (),
               data_quality: tuple[tuple[str, str | None], ...] = ()) -> dict:
    """One report document. lustre: one version for every host, or one per host."""
    rng = random.Random(seed if seed is not None else zlib.crc32(f"{job_id}@{end}".encode()))
    end_t = datetime.fromisoformat(end.replace("Z", "+00:00")) if isinstance(end, str) else end
    elapsed = elapsed_s if elapsed_s is not None else float(rng.randint(60, 86_400))
    names = [f"n{i:04d}" for i in range(hosts)]
    versions = lustre if isinstance(lustre, list) else [lustre] * hosts
    clients = {h: {"lustre": v, "kernel": kernel, "os": os_name, "pagesize": 4096,
                   "settings": {f: {"max_pages_per_rpc": 256, "max_rpcs_in_flight": 8, "max_dirty_mb": 2000,
                                    "checksums": 1, "max_read_ahead_mb": 1024,
                                    "max_read_ahead_per_file_mb": 256, "max_read_ahead_whole_mb": 64,
                                    "hybrid_io": None, "hybrid_io_read_threshold_bytes": None,
                                    "hybrid_io_write_threshold_bytes": None} for f in fs}}
               for h, v in zip(names, versions)}
    filesystems = {}
    for f in fs:
        per_host = {}
        tot = {"read_bytes": 0, "write_bytes": 0, "read_calls": 0, "write_calls": 0}
        ops_tot = {op: 0 for op in OPS}
        for h in names:
            rb, wb = rng.randint(0, 1 << 36), rng.randint(0, 1 << 35)
            row = {"read_bytes": rb, "write_bytes": wb, "read_calls": rb // rng.choice((4096, 65536, 1 << 20)) + 1,
                   "write_calls": wb // rng.choice((4096, 1 << 20)) + 1}
            for op in OPS:
                row[op] = rng.randint(0, 5000) if op in ("open", "close", "getattr") else rng.randint(0, 20)
            per_host[h] = row
            for k in tot:
                tot[k] += row[k]
            for op in OPS:
                ops_tot[op] += row[op]
        rpc = {d: {b: rng.randint(0, 2000) if b in ("4K", "1M") else rng.randint(0, 100) for b in BUCKETS}
               for d in ("read", "write")}
        ost = {f"OST{i:04x}": {"read_bytes": rng.randint(0, 1 << 34), "write_bytes": rng.randint(0, 1 << 34),
                               "read_rpcs": rng.randint(0, 40_000), "write_rpcs": rng.randint(0, 40_000),
                               "wait_us_mean": round(rng.uniform(200, 5000), 1)} for i in range(osts)}
        filesystems[f] = {**tot, "ops": ops_tot, "rpc": rpc, "osts": ost, "hosts": per_host,
                          "ost_count": osts, "spread": None, "trouble": [],
                          "latency_us": {"read": rng.randint(0, 10**9), "write": rng.randint(0, 10**9)},
                          "readahead": {"hits": rng.randint(0, 10**6), "misses": rng.randint(0, 10**5),
                                        "read_but_discarded": rng.randint(0, 10**4),
                                        "readahead_pages": rng.randint(0, 10**6)},
                          "hybrid": {"read_bytes": None, "write_bytes": None, "readsize_switch": None,
                                     "writesize_switch": None, "noswitch": None}}
    return {
        "schema": schema,
        "job": {"id": job_id, "user": user, "name": name, "partition": partition, "account": account,
                "command": "/home/ann/wrf.exe", "num_nodes": hosts, "num_tasks": hosts * 32,
                "hosts": names, "hosts_missing": [], "hosts_incomplete": {},
                "begin": _iso(end_t - timedelta(seconds=elapsed)), "end": _iso(end_t), "elapsed_s": elapsed},
        "lustre_versions": dict(zip(names, versions)),
        "clients": clients,
        "filesystems": filesystems,
        "flags": [{"id": i, "severity": "warn", "fs": f, "finding": "x", "why": "y", "advice": "z", "evidence": {}}
                  for i, f in flags],
        "data_quality": [{"id": i, "host": None, "fs": f, "detail": "x"} for i, f in data_quality],
    }


def record_doc(job_id: str = "1", cluster: str = "c1", **kw) -> dict:
    """The record the epilog would store for report_doc(job_id, **kw)."""
    return records.as_record(report_doc(job_id, **kw), cluster, job_id, {"scheduler": "slurm"})


def put(records_dir, job_id: str = "1", cluster: str = "c1", **kw):
    """Store a record as the epilog does; its path."""
    return records.store(report_doc(job_id, **kw), records_dir, cluster, job_id, {"scheduler": "slurm"})


# -- the kit itself ------------------------------------------------------------------------------

def test_a_built_report_reads_as_one_row_per_filesystem():
    doc = record_doc("7", fs=("scratch", "home"), hosts=3, lustre=["2.15.4", "2.16.0", "2.15.4"],
                     flags=(("SMALL_RPC_READ", "scratch"),), data_quality=(("COUNTER_RESET", "home"),))
    rows = jobrow.rows(doc)
    assert [r["fs"] for r in rows] == ["home", "scratch"]
    home, scratch = rows
    assert scratch["record_id"] == "c1/7/2026-10-15T12:00:00Z" and scratch["cluster"] == "c1"
    assert scratch["lustre"] == "2.15.4;2.16.0" and scratch["num_nodes"] == 3 and scratch["n_hosts"] == 3
    assert scratch["flags"] == "SMALL_RPC_READ" and scratch["trusted"] and not home["trusted"]
    assert scratch["read_bytes"] == doc["filesystems"]["scratch"]["read_bytes"] > 0
    assert scratch["max_pages_per_rpc"] == 256 and scratch["latency_read_us"] is not None
    assert all(set(r) == set(jobrow.COLUMNS) for r in rows)


def test_the_same_seed_builds_the_same_document():
    assert report_doc("1", seed=3) == report_doc("1", seed=3) != report_doc("1", seed=4)
