#!/usr/bin/env python3
"""A month of 20,000 small Parquet files (BENCH_MANY_FILES): compare's read and the compaction
that merges them, each bounded in open files and memory whatever the count.

Such a month is what a dataset holds when its merges have not run (or could not: the merge
once opened every file of a month at once and failed on "Too many open files"). The files are
made as tests/kit/records.many_part_files makes them: one job each, a file of a
placeholder job copied with each copy's job id in its place (a file per 0.1 ms).

Subjects, each a separate process (wall time; peak RSS from wait4; peak open files, polled from
/proc/<pid>/fd every few ms):
- compare's read: recordset.load of the columns compare reads, every file of the month (each
  file's schema checked, then read FILE_PER_QUERY files a DuckDB query);
- `lustre-jobreport records compact` with one new record of that month: every file's schema
  checked, the duplicate check reading every file's record_id, and the merge of the month's
  files (plus the run's own) into one, a file at a time.
Floors, measured in the same run on the same files (each a separate process too):
- footers: pyarrow reading every file's footer (pq.read_metadata), what any reader that checks
  each file's schema pays;
- DuckDB: one read_parquet of every file, compare's columns (what compare's read cannot beat;
  its peak RSS is printed beside: it is what reading them all in one query costs);
- pyarrow: every file read whole, one at a time, and the rows written once (zstd), what any merge
  of the files pays.
Printed as ratios to the floors. No pass/fail line: the figures are the bound (open files flat
in the file count, memory far below the files' size) and the ratios.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))                # the tests' kit
from kit.records import many_part_files, put  # noqa: E402
from figures import against_floor  # noqa: E402

from lustre_jobreport.compare import model as compare  # noqa: E402
from lustre_jobreport.records import recordset

N = int(os.environ.get("BENCH_MANY_FILES", "20000"))
POLL_S = 0.005

LOAD = """
import sys
from lustre_jobreport.compare import model as compare
from lustre_jobreport.records import recordset
got = recordset.load("", None, sys.argv[1], columns=compare.needed_columns(compare.Settings().group_by))
assert got.table.num_rows == int(sys.argv[2]), got.table.num_rows
"""

FOOTERS = """
import sys, glob
import pyarrow.parquet as pq
for f in sorted(glob.glob(sys.argv[1] + "/year=2026/month=10/*.parquet")):
    pq.read_metadata(f)
"""

DUCKDB = """
import sys, glob
import duckdb
from lustre_jobreport.compare import model as compare
files = sorted(glob.glob(sys.argv[1] + "/year=2026/month=10/*.parquet"))
cols = ", ".join(f'"{c}"' for c in compare.needed_columns(compare.Settings().group_by))
t = duckdb.sql(f"SELECT {cols} FROM read_parquet({files!r})").to_arrow_table()
assert t.num_rows == len(files)
"""

PYARROW = """
import sys, glob
import pyarrow as pa, pyarrow.parquet as pq
tables = []
for f in sorted(glob.glob(sys.argv[1] + "/year=2026/month=10/*.parquet")):
    with pq.ParquetFile(f) as pf:
        tables.append(pf.read())
    if len(tables) >= 256:
        tables = [pa.concat_tables(tables).combine_chunks()]
pq.write_table(pa.concat_tables(tables), sys.argv[2], compression="zstd")
"""


def child(argv: list[str]) -> tuple[float, int, int, str]:
    """Wall time, peak RSS (bytes: wait4, this process alone), peak open files and standard
    output of one child process."""
    peak = [0]
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    done = threading.Event()

    def poll():
        fd_dir = f"/proc/{proc.pid}/fd"
        while not done.is_set():
            try:
                peak[0] = max(peak[0], len(os.listdir(fd_dir)))
            except OSError:
                pass
            done.wait(POLL_S)

    def drain(stream, into):
        into.append(stream.read())

    out, err = [], []
    threads = [threading.Thread(target=poll, daemon=True),
               threading.Thread(target=drain, args=(proc.stdout, out), daemon=True),
               threading.Thread(target=drain, args=(proc.stderr, err), daemon=True)]
    for t in threads:
        t.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    done.set()
    for t in threads:
        t.join()
    if status != 0:
        raise SystemExit(f"{' '.join(argv[:4])} ... failed (status {status}): "
                         f"{err[0].decode(errors='replace').strip()[-2000:]}")
    return wall, usage.ru_maxrss * 1024, peak[0], out[0].decode(errors="replace")


def line(what: str, wall: float, rss: int, fds: int) -> str:
    return f"  {what:<40} {wall:7.1f} s  peak RSS {rss / 2**20:6.0f} MiB  peak open files {fds:5d}"


def main() -> int:
    py = sys.executable
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as tmp_name:
        tmp = Path(tmp_name)
        ds, rec = tmp / "dataset", tmp / "records"
        t0 = time.perf_counter()
        many_part_files(ds / "year=2026" / "month=10", N)
        size = sum(f.stat().st_size for f in (ds / "year=2026" / "month=10").iterdir())
        put(rec, "new-job")
        os.sync()
        print(f"month: {N:,} Parquet files of one job each, {size / 2**20:,.0f} MiB, made in "
              f"{time.perf_counter() - t0:.1f} s")

        footers = child([py, "-c", FOOTERS, str(ds)])
        duck = child([py, "-c", DUCKDB, str(ds)])
        load = child([py, "-c", LOAD, str(ds), str(N)])
        pyar = child([py, "-c", PYARROW, str(ds), str(tmp / "floor.parquet")])
        cfg = tmp / "config.toml"
        cfg.write_text("")
        comp = child([py, "-m", "lustre_jobreport", "--config", str(cfg), "records", "compact",
                      "--records", str(rec), "--dataset", str(ds)])
        merged = [ln for ln in comp[3].splitlines() if " merged " in ln]
        left = list((ds / "year=2026" / "month=10").glob("*.parquet"))
        after = recordset.load("", rec, ds, columns=compare.needed_columns(compare.Settings().group_by))

    print("floors (the same files, each a separate process)")
    print(line("pyarrow: every footer", *footers[:3]))
    print(line("DuckDB: compare's columns, 1 query", *duck[:3]))
    print(line("pyarrow: every file, written once", *pyar[:3]))
    print("subjects")
    print(line("compare's read (recordset.load)", *load[:3]))
    print("    " + against_floor("wall", f"{load[0]:.1f} s", load[0] / duck[0], "its floor, DuckDB's one query"))
    print("    " + against_floor("peak RSS", f"{load[1] / 2**20:.0f} MiB", load[1] / duck[1],
                                 "its floor's, DuckDB's one query"))
    print("    " + against_floor("wall", f"{load[0]:.1f} s", load[0] / footers[0], "reading every footer"))
    print(line("records compact (check, dedupe, merge)", *comp[:3]))
    print("    " + against_floor("wall", f"{comp[0]:.1f} s", comp[0] / (pyar[0] + footers[0]),
                                 "its floor, reading every footer + every file and writing the rows once"))
    print(f"    {(merged or ['no merge line!'])[0].removeprefix('records compact: ')}")
    print(f"    after it: {len(left)} file(s) in the month, {after.table.num_rows:,} rows read back")
    return 0


if __name__ == "__main__":
    sys.exit(main())
