"""Synthetic job records for the records/compact/recordset tests and bench/bench_compact.py:
report documents of schema lustre-jobreport/3 as `report --format json` writes them (job facts,
clients with their settings, per filesystem volumes, ops, RPC histogram, OSTs, per-host table,
latency, read-ahead, hybrid I/O), with values varied by a seed. tests/records/test_records_kit.py checks
that what it builds is what jobrow reads."""

from __future__ import annotations

import random
import zlib
from datetime import datetime, timedelta, timezone

from lustre_jobreport import catalog
from lustre_jobreport.records import jobrow, store as records
from lustre_jobreport.records import dataset

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


# -- dataset files of every kind -----------------------------------------------------------------

def rows_table(*job_ids: str, **kw):
    """The dataset table of these jobs' records (report_doc(job_id, **kw))."""
    return dataset.to_table([r for j in job_ids for r in jobrow.rows(record_doc(j, **kw))])


def write_part(path, table, states: int | bytes | None = None):
    """A Parquet file at path as a writer would leave it: states=None says no schema version
    (every file written before versions were stated), an int states that version of
    lustre-jobreport's dataset schema, bytes state anything else."""
    import pyarrow.parquet as pq
    from lustre_jobreport.records import partschema
    meta = {} if states is None else {
        partschema.KEY: states if isinstance(states, bytes) else partschema.stated(states).encode()}
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table.replace_schema_metadata(meta or None), path, compression="zstd")
    return path


def as_version_2(monkeypatch, added=("new_metric",)):
    """This lustre-jobreport as a later one whose dataset schema 2 added the int64 columns
    `added`: what it writes states version 2, and today's files (stated or not) are of the older
    version 1, which lacks them. How a later reader reads older files, tried today. (jobrow's
    rows do not make the new columns: use it to read and merge files, not to compact records.)"""
    from lustre_jobreport.records import dataset, partschema
    columns = jobrow._COLUMNS + [(c, "int64") for c in added]
    monkeypatch.setattr(jobrow, "_COLUMNS", columns)
    monkeypatch.setattr(jobrow, "COLUMNS", tuple(c for c, _ in columns))
    monkeypatch.setattr(jobrow, "TYPES", dict(columns))
    monkeypatch.setattr(dataset, "_SCHEMA", None)
    monkeypatch.setattr(partschema, "VERSION", 2)
    monkeypatch.setattr(partschema, "ADDED_IN", dict.fromkeys(added, 2))


def with_new_metric(table, value: int = 7):
    """A table of today's columns as version 2 of as_version_2 writes it."""
    import pyarrow as pa
    return table.append_column("new_metric", pa.array([value] * table.num_rows, pa.int64()))


def foreign_files(month_dir, shadowed_job: str = "1") -> dict[str, str]:
    """Valid Parquet files of other schemas in month_dir, each named part-....parquet as the
    dataset's are: {file name: what check() says differs}. One holds record_id and fs of the
    job `shadowed_job` and nothing else (as if understood, it would hide that job's real rows)."""
    import pyarrow as pa
    ours = rows_table(shadowed_job)
    made = {
        "part-00000000T000000Z-other.parquet": (pa.table({"job": ["x"], "bytes": [1]}), None,
                                                "columns missing: record_id, schema, stored_at"),
        "part-00000000T000000Z-subset.parquet": (ours.select(["record_id", "fs", "end"]), None,
                                                 "columns missing: schema, stored_at"),
        "part-00000000T000000Z-retyped.parquet": (
            ours.set_column(ours.schema.get_field_index("read_bytes"), "read_bytes",
                            pa.array([1.5] * ours.num_rows)), 1, "read_bytes is double, not int64"),
        "part-00000000T000000Z-extra.parquet": (ours.append_column("from_elsewhere", pa.array([1] * ours.num_rows)),
                                                1, "column unknown: from_elsewhere"),
        "part-00000000T000000Z-tagged.parquet": (ours, b"spark-job/7", "states schema 'spark-job/7'"),
    }
    for name, (table, states, _) in made.items():
        write_part(month_dir / name, table, states)
    return {name: why for name, (_, _, why) in made.items()}


def many_part_files(month_dir, n: int, first: int = 0) -> list:
    """n small dataset files in month_dir, one job each (jobs first .. first+n-1), fast: one
    file of a placeholder job is written, and each copy gets its own job id spelled in the
    placeholder's place (record_id and job_id are written uncompressed and without a dictionary,
    so the id's bytes stand in the file as they are, the same length, in its values, page
    statistics and footer alike). A file per 0.1 ms instead of 5."""
    import io
    import pyarrow.parquet as pq
    from lustre_jobreport.records import partschema
    holder = "Z" * 8
    table = rows_table(holder).replace_schema_metadata({partschema.KEY: partschema.stated().encode()})
    plain = ("record_id", "job_id")
    buf = io.BytesIO()
    pq.write_table(table, buf, compression={c: "none" if c in plain else "zstd" for c in table.column_names},
                   use_dictionary=[c for c in table.column_names if c not in plain])
    pieces = buf.getvalue().split(holder.encode())
    month_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(first, first + n):
        path = month_dir / f"part-20261016T000000Z-{i:08x}.parquet"
        path.write_bytes(f"{i:08d}".encode().join(pieces))
        paths.append(path)
    return paths


def damage(path, how: str):
    """A dataset file made unreadable as Parquet, as a disk, a copy or a crash of another tool
    leaves one: "truncated" (its second half gone, footer and all), "random bytes" (none of
    its bytes Parquet's, the size kept), or "column NAME" (that column's chunk in the first row
    group overwritten: the footer is whole, so the schema check passes, and pyarrow and DuckDB
    fail only when they read that column)."""
    import os
    import pyarrow.parquet as pq
    data = bytearray(path.read_bytes())
    if how == "truncated":
        data = data[:len(data) // 2]
    elif how == "random bytes":
        data = bytearray(random.Random(len(data)).randbytes(len(data)))
    elif how.startswith("column "):
        with pq.ParquetFile(path) as pf:
            chunk = pf.metadata.row_group(0).column(pf.schema_arrow.get_field_index(how.split()[1]))
        start = chunk.dictionary_page_offset or chunk.data_page_offset
        data[start:start + chunk.total_compressed_size] = b"\xff" * chunk.total_compressed_size
    else:
        raise ValueError(how)
    os.truncate(path, 0)
    path.write_bytes(bytes(data))
    return path
