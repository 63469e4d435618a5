"""docs/records.md stays true: every dataset column is described, and its DuckDB example runs on
a dataset the compaction wrote — reading only the months it asks for."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

from lustre_jobreport.records import compact, jobrow
from lustre_jobreport.records import dataset

from kit.records import put

DOC = Path(__file__).resolve().parents[2] / "docs" / "records.md"


def test_every_column_is_described():
    text = DOC.read_text()
    described = set(re.findall(r"`([a-z_0-9A-Z]+)`", text))
    missing = [c for c in jobrow.COLUMNS if c not in described and not re.fullmatch(r"rpc_(read|write)_\d+[KM]", c)]
    assert missing == []
    for d in ("read", "write"):                     # the histogram's rows name their first and last
        assert f"`rpc_{d}_4K` … `rpc_{d}_" in text and f"rpc_{d}_over_64M" in text


def test_the_duckdb_example_runs_and_reads_only_the_months_it_asks_for(tmp_path):
    rec, ds = tmp_path / "records", tmp_path / "dataset"
    for i in range(6):
        put(rec, str(i), end=f"2026-{8 + i % 3:02d}-15T00:00:00Z", lustre=["2.15.4", "2.16.0"][i % 2])
    compact.compact(rec, ds)
    [august] = dataset.part_files(ds, (2026, 8))
    august.write_bytes(b"not parquet at all")          # outside the example's months: never opened
    code = re.search(r"<<'EOF'[^\n]*\n(.*?)\nEOF\n", DOC.read_text(), re.S).group(1)
    code = code.replace("/var/lib/lustre-jobreport/dataset", str(ds))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(DOC), "exec"), {})
    lines = out.getvalue()
    assert re.search(r"│ 2\.15\.4\s+│\s+2 │", lines) and re.search(r"│ 2\.16\.0\s+│\s+2 │", lines), lines
