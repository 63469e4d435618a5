"""A count a record does not carry is null in its row, and so is every sum it is part of: never 0,
never a sum over the counts that are there (docs/records.md, Columns)."""

from __future__ import annotations

from lustre_jobreport import jobrow
from test_records_kit import report_doc


def row(doc):
    [r] = jobrow.rows(doc)
    return r


def test_a_whole_record_has_every_count():
    r = row(report_doc())
    assert all(r[k] is not None for k in ("open", "md_ops", "ost_read_bytes", "rpc_read_4K", "rpc_write_1M"))


def test_missing_ops_are_null_not_zero():
    doc = report_doc()
    del doc["filesystems"]["scratch"]["ops"]
    r = row(doc)
    assert (r["open"], r["fsync"], r["md_ops"]) == (None, None, None)
    doc = report_doc()
    del doc["filesystems"]["scratch"]["ops"]["getattr"]
    r = row(doc)
    assert r["getattr"] is None and r["open"] is not None


def test_an_ost_count_not_recorded_makes_the_ost_sum_null():
    doc = report_doc(osts=4)
    first = next(iter(doc["filesystems"]["scratch"]["osts"].values()))
    first["read_bytes"] = None
    r = row(doc)
    assert r["ost_read_bytes"] is None and r["ost_write_bytes"] is not None


def test_a_missing_histogram_or_bucket_makes_that_direction_null():
    doc = report_doc()
    del doc["filesystems"]["scratch"]["rpc"]["read"]
    r = row(doc)
    assert all(r[f"rpc_read_{b}"] is None for b in (*jobrow.BUCKETS, "over_64M"))
    assert r["rpc_write_1M"] is not None
    doc = report_doc()
    doc["filesystems"]["scratch"]["rpc"]["write"]["4K"] = None
    r = row(doc)
    assert r["rpc_write_4K"] is None and r["rpc_write_1M"] is None and r["rpc_read_4K"] is not None
