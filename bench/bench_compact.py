#!/usr/bin/env python3
"""records compact at scale: 100,000 job records (BENCH_COMPACT_RECORDS) into the Parquet dataset.

The records are made synthetically into a temp dir: report documents of schema 3 (as
tests/kit/records.py builds them: job facts, clients and their settings, per
filesystem volumes, ops, RPC histogram, OSTs and the per-host table) of jobs on 1 to 32 nodes
using 1 or 2 filesystems, over three months, every job's figures varied. Then, in one run:

- `lustre-jobreport records compact` as a separate process: wall time per record, peak RSS, and
  the dataset's size against the JSON records' total size; then a second run (nothing new).
- Floors, per record, on every 10th record (the same files): reading and json.loads (what any
  compaction of JSON records pays), plus jobrow.rows (the conversion to the dataset's columns,
  which compaction cannot skip), and pyarrow writing the same rows from memory (zstd, the same
  schema and row groups).
- What compare gains: recordset.load of every job from the dataset against reading them from
  the JSON records (the floor above, per record).

All in a temp dir under $BENCH_TMP (default: the system's); about 2 minutes for 100,000 records
on 2 cores, most of it making the records and compacting them.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))                # the tests' kit
from kit.records import report_doc  # noqa: E402
from figures import against_floor  # noqa: E402

from lustre_jobreport.records import compact, jobrow, store as records, recordset  # noqa: E402
from lustre_jobreport.records import dataset

N = int(os.environ.get("BENCH_COMPACT_RECORDS", "100000"))
SAMPLE = 10                      # floors on every 10th record
TEMPLATES = 240
HOSTS = (1, 1, 1, 1, 2, 2, 4, 4, 8, 16, 32)
VERSIONS = ("2.15.4", "2.15.5", "2.16.0")


def templates() -> list[dict]:
    rng = random.Random(7)
    out = []
    for k in range(TEMPLATES):
        out.append(report_doc("0", seed=k, hosts=rng.choice(HOSTS), fs=("scratch", "home")[:rng.choice((1, 1, 2))],
                              osts=rng.choice((4, 8, 16, 32)), lustre=VERSIONS[k % 3]))
    return out


def vary(base: dict, i: int, rng: random.Random) -> dict:
    """A record of job i from a template: its own identity, times and figures."""
    elapsed = rng.randint(60, 86_400)
    end = 1_790_000_000 + rng.randint(0, 90 * 86_400)           # Sep-Nov 2026
    iso = lambda t: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))  # noqa: E731
    job = dict(base["job"], id=str(i), user=f"u{rng.randint(0, 400)}", name=f"app{rng.randint(0, 150)}",
               partition=rng.choice(("batch", "debug", "long")), account=f"proj{rng.randint(0, 60)}",
               begin=iso(end - elapsed), end=iso(end), elapsed_s=float(elapsed))
    fss = {}
    for fs, t in base["filesystems"].items():
        f = dict(t)
        for k in ("read_bytes", "write_bytes", "read_calls", "write_calls"):
            f[k] = rng.randint(0, t[k] * 2 + 1)
        f["ops"] = {op: (rng.randint(0, n * 2 + 1) if n else 0) for op, n in t["ops"].items()}
        f["rpc"] = {d: {b: rng.randint(0, n * 2 + 1) for b, n in h.items()} for d, h in t["rpc"].items()}
        f["latency_us"] = {"read": rng.randint(0, 10**9), "write": rng.randint(0, 10**9)}
        f["readahead"] = {k: rng.randint(0, 10**6) for k in t["readahead"]}
        fss[fs] = f
    doc = dict(base, job=job, filesystems=fss)
    return records.as_record(doc, "c1", str(i), {"scheduler": "slurm", "exit_code": "0:0"})


def make(args) -> int:
    """Write records first..first+n-1 (a worker process); their total size."""
    root, first, n = args
    bases = templates()
    rng = random.Random(first)
    size = 0
    for i in range(first, first + n):
        rec = vary(bases[i % TEMPLATES], i, rng)
        end = rec["job"]["end"]
        d = Path(root, end[:4], end[5:7], end[8:10])
        d.mkdir(parents=True, exist_ok=True)
        data = (json.dumps(rec, separators=(",", ":")) + "\n").encode()
        (d / f"c1-{i}.json").write_bytes(data)
        size += len(data)
    return size


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def timed(cmd: list[str]) -> tuple[float, int, str]:
    """Wall time, peak RSS (bytes) and standard output of one child process: its own peak
    (wait4), not RUSAGE_CHILDREN's, which is the largest of every child reaped so far (the
    record-making pool's workers too)."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err)
        out = proc.stdout.read().decode(errors="replace")
        proc.stdout.close()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        if status != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd[:4])} ... failed (status {status}): "
                             f"{err.read().decode(errors='replace').strip()}")
    return wall, usage.ru_maxrss * 1024, out


def main() -> int:
    import pyarrow.parquet as pq

    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as tmp_name:
        tmp = Path(tmp_name)
        rec, ds = tmp / "records", tmp / "dataset"
        t0 = time.perf_counter()
        workers = max(1, min(4, os.cpu_count() or 1))
        chunks = [(rec, k * (N // workers), N // workers + (N % workers if k == workers - 1 else 0))
                  for k in range(workers)]
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            json_size = sum(pool.map(make, chunks))
        files = list(records.iter_records(rec))
        print(f"records: {len(files):,} JSON records, {json_size / 2**20:,.0f} MiB "
              f"({json_size / len(files) / 1024:.1f} KiB each), made in {time.perf_counter() - t0:.0f} s")
        sample = files[::SAMPLE]
        os.sync()                # the records just written are not flushed under the measurements

        # floors on the sample, before the compaction moves the files
        t0 = time.perf_counter()
        docs = [json.loads(p.read_bytes()) for p in sample]
        floor_json = (time.perf_counter() - t0) / len(sample)
        t0 = time.perf_counter()
        rows = [r for d in docs for r in jobrow.rows(d)]
        floor_rows = (time.perf_counter() - t0) / len(sample) + floor_json
        del docs
        t0 = time.perf_counter()
        table = dataset.to_table(rows)
        pq.write_table(table, tmp / "floor.parquet", compression=dataset.COMPRESSION,
                       row_group_size=dataset.ROW_GROUP_ROWS)
        floor_write = (time.perf_counter() - t0) / len(sample)
        del rows, table

        # the compaction itself, as the timer runs it
        cfg = tmp / "config.toml"
        cfg.write_text("")
        cmd = [sys.executable, "-m", "lustre_jobreport", "--config", str(cfg), "records", "compact",
               "--records", str(rec), "--dataset", str(ds)]
        wall, rss, out = timed(cmd)
        print(out.splitlines()[0])
        again, _, out2 = timed(cmd)
        ds_size = du(ds)
        t0 = time.perf_counter()
        loaded = recordset.load("", rec, ds)
        load_s = time.perf_counter() - t0
        assert loaded.table.num_rows > len(files) * 0.99, loaded.table.num_rows

    per = wall / len(files)
    floors = floor_rows + floor_write
    print(f"compaction: {wall:.1f} s for {len(files):,} records, peak RSS {rss / 2**20:.0f} MiB")
    print("  " + against_floor("per record", f"{per * 1e6:.0f} us", per / floor_json,
                               f"the floor of reading + json.loads ({floor_json * 1e6:.0f} us)"))
    print("  " + against_floor("per record", f"{per * 1e6:.0f} us", per / floors,
                               f"reading + json.loads + jobrow.rows + pyarrow writing the same rows from "
                               f"memory ({floors * 1e6:.0f} us: {floor_json * 1e6:.0f} + "
                               f"{(floor_rows - floor_json) * 1e6:.0f} + {floor_write * 1e6:.0f})"))
    print(against_floor("dataset", f"{ds_size / 2**20:.1f} MiB", ds_size / json_size,
                        f"the JSON records' {json_size / 2**20:,.0f} MiB",
                        extra=f" ({ds_size / loaded.table.num_rows:.0f} bytes per row)"))
    print(against_floor("second run (nothing new)", f"{again:.2f} s", again / wall, f"the first run ({wall:.1f} s)"))
    print(against_floor(f"compare's read of all {loaded.table.num_rows:,} rows from the dataset", f"{load_s:.2f} s",
                        load_s / (floor_rows * len(files)),
                        f"reading and converting the JSON records ({floor_rows * len(files):.1f} s)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
