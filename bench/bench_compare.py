#!/usr/bin/env python3
"""`lustre-jobreport compare` at a 10,000-node site's year: 1,000,000 job rows.

A Parquet dataset like `records compact` writes (plain jobrow columns, Hive month partitions
of the job's end, year=2026/month=M/part-0.parquet) is made from synthetic jobs
(tests/kit/compare_rows.py) of 2,000 applications: job counts per application heavy-tailed (Zipf-like), 1 or 2 users each,
node counts spread over 2-3 node classes around the application's size, two filesystems, Lustre
2.15.4 for the first half of the year and 2.16.0 for the second; 5 % of the applications get a
small-read regression, 2 % a read-ahead setting change, 10 % hybrid I/O reads, 2 % of rows are
untrusted. Then `lustre-jobreport compare --baseline lustre=2.15.* --candidate lustre=2.16.*`
runs on it as a separate process (JSON and text), timed, with its peak RSS. Floor, measured in
the same run: a process that has DuckDB scan the columns compare reads from the same dataset
into an Arrow table. Goals: compare <= 1.5x that scan and <= 2 GB peak RSS, in both formats.
Beside the floor, the least an exact rank-based compare can cost here, measured: a process that
does that scan, computes the 19 metrics from it and sorts each by value (plus one sort for the
combined statistic), in compare's threads; that is all compare's statistics cannot do without
(each rank test needs its metric in value order) and none of its grouping, tests or output.
Where the time goes (recordset.load of both sides, compare(), JSON) is measured in one process
as well.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))                # the tests' kit
from kit.compare_rows import jobs, table  # noqa: E402

from lustre_jobreport.compare import command as compare_command, model as compare  # noqa: E402
from lustre_jobreport.records import dataset as dataset_layer  # noqa: E402

ROWS, APPS, GOAL_SCANS, GOAL_RSS = 1_000_000, 2_000, 1.5, 2 << 30
HALF_YEAR_S = 181 * 86400.0
YEAR = datetime(2026, 1, 1, tzinfo=timezone.utc)


def dataset(root: Path, rows: int = ROWS, apps: int = APPS, seed: int = 1) -> dict:
    """Write the dataset under root; returns what was made (for the printout)."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, apps + 1) ** 0.9
    app = rng.choice(apps, size=rows, p=weights / weights.sum())
    users = rng.integers(0, 600, size=(apps, 2))
    two_users = rng.random(apps) < 0.3
    user = users[app, np.where(two_users[app], rng.integers(0, 2, rows), 0)]
    typical = 2 ** rng.integers(0, 10, apps)
    nodes = np.maximum(1, np.rint(typical[app] * 2.0 ** np.rint(rng.normal(0, 0.6, rows)))).astype(np.int64)
    fs = np.where(rng.random(apps) < 0.8, "scratch", "project")[app]
    offset = rng.uniform(0, 365 * 86400.0, rows)
    cand = offset >= HALF_YEAR_S
    regress = (rng.random(apps) < 0.05)[app] & cand
    ra_off = (rng.random(apps) < 0.02)[app] & cand
    hybrid = (rng.random(apps) < 0.10)[app] & cand
    small_read = rng.beta(1, 40, apps)[app]
    made = jobs(rng, rows, job_name=np.char.add("app", app.astype(str)).astype(object),
                user=np.char.add("u", user.astype(str)).astype(object), nodes=nodes, fs=fs.astype(object),
                lustre=np.where(cand, "2.16.0", "2.15.4").astype(object),
                read_gib=np.exp(rng.normal(1.5, 1.5, apps))[app], write_gib=np.exp(rng.normal(0.5, 1.5, apps))[app],
                read_call=(1 << rng.integers(12, 22, apps))[app].astype(np.float64),
                small_read=np.where(regress, 0.6, small_read), hybrid_read=hybrid,
                read_latency_us=np.where(ra_off, 3000.0, 300.0),
                settings={"max_read_ahead_mb": np.where(ra_off, 0, 1024)},
                trusted=rng.random(rows) >= 0.02, start=YEAR, offset_s=offset, record_prefix="c1")
    t = table(made)
    # month partitions by the job's end, named as `records compact` names them
    end = t["end"]
    part = (pc.year(end).to_numpy() * 100 + pc.month(end).to_numpy())
    for key in np.unique(part):
        d = root.joinpath(*dataset_layer.part_dirs((int(key) // 100, int(key) % 100)))
        d.mkdir(parents=True)
        pq.write_table(t.filter(pa.array(part == key)), d / "part-0.parquet")
    return {"rows": rows, "apps": apps, "parts": len(np.unique(part))}


def timed(cmd: list[str]) -> tuple[float, int, float]:
    """Wall time, peak RSS (bytes) and CPU time (user + system: what other load on the machine
    changes least) of one child process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if status != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} ... failed (status {status}): {err.strip()}")
    return wall, usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime


def phases(records: str, data: str, out: str) -> int:
    """Time compare's steps in this process into `out`."""
    from lustre_jobreport.compare import view as comparerender
    settings = compare.Settings()
    t1 = time.perf_counter()
    (base, _), (cand, _) = compare_command.load_sides({"baseline": "lustre=2.15.*", "candidate": "lustre=2.16.*"},
                                                      settings, records, data)
    t2 = time.perf_counter()
    result = compare.compare(base, cand, settings)
    t3 = time.perf_counter()
    comparerender.render(result, "json")
    t4 = time.perf_counter()
    Path(out).write_text(json.dumps({"recordset.load": t2 - t1, "compare": t3 - t2, "json": t4 - t3}))
    return 0


def rank_bound(columns_sql: str, data: str) -> int:
    """The rank bound's process (see the module docstring): scan, metrics, one value sort each."""
    import duckdb
    from lustre_jobreport.compare import grouptests, metrics as comparemetrics, stats as comparestats
    table = duckdb.connect().sql(f"SELECT {columns_sql} FROM read_parquet('{data}/**/*.parquet', "
                                 "hive_partitioning=true)").to_arrow_table()
    columns = comparemetrics.Columns(table)
    values = [comparemetrics.values(m, columns, compare.Settings().min_bytes) for m in compare.METRICS]
    with grouptests.executor(None, table.num_rows) as pool:
        list(pool.map(comparestats.value_order, values + values[:1]))      # + the combined statistic's
    return 0


def _met(ok: bool) -> str:
    return "met" if ok else "MISSED"


def main(argv: list[str]) -> int:
    if argv[1:2] == ["--make"]:            # the dataset is made in a child: this process stays
        dataset(Path(argv[2]))             # small (a child's peak RSS counts its parent's at fork)
        return 0
    if argv[1:2] == ["--phases"]:
        return phases(*argv[2:5])
    if argv[1:2] == ["--rank-bound"]:
        return rank_bound(*argv[2:4])
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        data, records = tmp / "dataset", tmp / "records"
        records.mkdir()
        made = timed([py, __file__, "--make", str(data)])[0]
        files = sorted(data.rglob("*.parquet"))
        print(f"dataset: {ROWS:,} job rows of {APPS:,} applications, "
              f"{sum(f.stat().st_size for f in files) / 2**20:.0f} MiB of Parquet in {len(files)} month "
              f"partitions (made in {made:.0f} s)")
        cols = ", ".join(f'"{c}"' for c in compare.needed_columns(compare.Settings().group_by))
        # into an Arrow table: DuckDB 2's .arrow() is a RecordBatchReader that reads nothing
        # until consumed (the floor measured start-up alone: 0.27 s, not the 1.0-1.4 s it takes)
        scan = ("import sys, duckdb; duckdb.connect().sql(f\"SELECT {sys.argv[1]} FROM read_parquet("
                "'{sys.argv[2]}/**/*.parquet', hive_partitioning=true)\").to_arrow_table()")
        floor, floor_rss, floor_cpu = min(timed([py, "-c", scan, cols, str(data)]) for _ in range(3))
        bound, _, bound_cpu = min(timed([py, __file__, "--rank-bound", cols, str(data)]) for _ in range(3))
        sides = ("--baseline", "lustre=2.15.*", "--candidate", "lustre=2.16.*")
        # where the time goes, in one process like the CLI's: recordset.load of both sides,
        # compare(), the JSON rendering
        runs_p = []
        for _ in range(2):
            timed([py, __file__, "--phases", str(records), str(data), str(tmp / "phases.json")])
            runs_p.append(json.loads((tmp / "phases.json").read_text()))
        phase = min(runs_p, key=lambda p: sum(p.values()))
        args = ["--records", str(records), "--dataset", str(data), *sides]
        runs = {}
        for fmt in ("json", "text"):
            runs[fmt] = min(timed([py, "-m", "lustre_jobreport", "compare", *args, "--format", fmt,
                                   "-o", str(tmp / f"compare.{fmt}")]) for _ in range(2))
        size = (tmp / "compare.json").stat().st_size
        summary = json.loads((tmp / "compare.json").read_text())["summary"]
    (wall, rss, _), (wall_t, rss_t, _) = runs["json"], runs["text"]
    print(f"groups: {summary}; JSON {size / 2**20:.0f} MiB")
    print(f"DuckDB's scan of compare's columns (the floor): {floor:.2f} s (CPU {floor_cpu:.2f} s), "
          f"peak RSS {floor_rss / 2**30:.2f} GiB")
    print(f"the least an exact rank-based compare costs here (that scan, the 19 metrics, one sort by value "
          f"each and one more): {bound:.2f} s (CPU {bound_cpu:.2f} s) = {bound / floor:.2f}x DuckDB's scan"
          + ("; the goal is below it" if bound / floor > GOAL_SCANS else ""))
    for fmt, (w, r, cpu) in runs.items():
        print(f"compare ({fmt}): {w:.2f} s (CPU {cpu:.2f} s) = {w / floor:.2f}x DuckDB's scan (goal <= {GOAL_SCANS}x) "
              f"{_met(w / floor <= GOAL_SCANS)}, {w / bound:.2f}x the rank bound; peak RSS {r / 2**30:.2f} GiB = {r / GOAL_RSS:.2f}x the 2 GB goal "
              f"{_met(r <= GOAL_RSS)}")
    print("  in one process: " + ", ".join(f"{k} {v:.2f} s ({v / floor:.2f}x the scan)" for k, v in phase.items()))
    print(f"goals: compare <= {GOAL_SCANS}x DuckDB's scan {_met(max(wall, wall_t) / floor <= GOAL_SCANS)}; "
          f"peak RSS <= 2 GB {_met(max(rss, rss_t) <= GOAL_RSS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
