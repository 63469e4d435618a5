"""A count a record does not carry is null in its row, and so is every sum it is part of: never 0,
never a sum over the counts that are there (docs/records.md, Columns)."""

from __future__ import annotations

import pytest

from lustre_jobreport.records import jobrow
from kit.records import report_doc


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


def test_a_total_some_host_of_which_was_left_out_is_null_not_the_sum_of_the_rest():
    """The report shows the sum over the hosts counted (said under Not trusted); a row must not
    pass it for the job's (docs/records.md, Columns)."""
    doc = report_doc(osts=4)
    fs = doc["filesystems"]["scratch"]
    fs["left_out"] = {"read_bytes": 1, "ops.getattr": 1, "osts.write_rpcs": 1, "rpc.write": 1}
    r = row(doc)
    assert r["read_bytes"] is None and r["write_bytes"] == fs["write_bytes"]
    assert r["getattr"] is None and r["md_ops"] is None and r["open"] == fs["ops"]["open"]
    assert r["ost_write_rpcs"] is None and r["osts_used"] is None and r["ost_read_bytes"] is not None
    assert all(r[f"rpc_write_{b}"] is None for b in (*jobrow.BUCKETS, "over_64M"))
    assert r["rpc_read_4K"] == fs["rpc"]["read"]["4K"]


def test_a_total_no_host_gave_is_null_in_the_report_and_in_the_row():
    doc = report_doc()
    fs = doc["filesystems"]["scratch"]
    fs.update(read_calls=None, left_out={"read_calls": 2}, not_read=["read_calls"])
    fs["rpc"]["read"] = None
    r = row(doc)
    assert r["read_calls"] is None and r["rpc_read_1M"] is None and r["read_bytes"] == fs["read_bytes"]


def test_a_left_out_that_is_not_an_object_of_names_is_a_malformed_record():
    doc = report_doc()
    doc["filesystems"]["scratch"]["left_out"] = ["read_bytes"]
    with pytest.raises(jobrow.RecordError, match="left_out"):
        jobrow.rows(doc)
