"""The synthetic job records of kit.records are what jobrow reads: one row per filesystem with
the document's values, the same seed the same document, part files one job each, and damaged
files that pyarrow and DuckDB refuse."""

from __future__ import annotations

import pyarrow as pa
import pytest

from lustre_jobreport.records import jobrow
from kit.records import damage, many_part_files, record_doc, report_doc, rows_table, write_part


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


def test_many_part_files_are_each_a_job_of_its_own(tmp_path):
    import pyarrow.parquet as pq
    from lustre_jobreport.records import partschema
    paths = many_part_files(tmp_path, 3, first=41)
    for i, path in zip(range(41, 44), paths):
        got = pq.read_table(path)
        assert got.column("record_id").to_pylist() == [f"c1/{i:08d}/2026-10-15T12:00:00Z"]
        assert got.column("job_id").to_pylist() == [f"{i:08d}"]
        assert partschema.check(path).version == partschema.VERSION
        md = pq.ParquetFile(path).metadata.row_group(0)
        stats = md.column(got.schema.get_field_index("record_id")).statistics
        assert stats.min == stats.max == f"c1/{i:08d}/2026-10-15T12:00:00Z"


@pytest.mark.parametrize("how", ["truncated", "random bytes", "column record_id", "column read_bytes"])
def test_damage_makes_a_file_pyarrow_and_duckdb_cannot_read(tmp_path, how):
    import duckdb
    import pyarrow.parquet as pq
    f = damage(write_part(tmp_path / "part-1.parquet", rows_table("1", "2"), states=1), how)
    with pytest.raises(OSError if how.startswith("column") else pa.ArrowInvalid) as err:
        pq.read_table(f)
    assert getattr(err.value, "errno", None) is None               # its bytes, not the system
    with pytest.raises(duckdb.Error):
        duckdb.sql(f"SELECT * FROM read_parquet('{f}')").fetchall()
    if how == "column read_bytes":
        assert pq.read_table(f, columns=["record_id"]).num_rows == 2       # the other columns read
