"""Counts are counts: every count, byte, op, RPC, page, microsecond and setting column of a row
holds a whole number in [0, 2^63) (int32 columns [0, 2^31)). A value outside that range is null
in the row, and so is every sum it is part of; the row says VALUE_NEGATIVE or VALUE_TOO_LARGE and
is not trusted; the record is kept (compaction adds it, compare leaves it out as untrusted).

The rule is checked by property against a plain reference written here with loops, over random
records whose every count may be missing, whole, negative or past int64."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lustre_jobreport import catalog
from lustre_jobreport.records import compact, jobrow, store as records, recordset
from lustre_jobreport.records import dataset
from kit.proptest import runs
from kit.records import put, record_doc, report_doc

INT64_MAX = (1 << 63) - 1
INT32_MAX = (1 << 31) - 1
BUCKETS = jobrow.BUCKETS
OVER = ("128M", "256M", "1G")              # labels past 64M: one over_64M column
FS_COUNTS = ("read_bytes", "write_bytes", "read_calls", "write_calls")
OST_COUNTS = ("read_bytes", "write_bytes", "read_rpcs", "write_rpcs")
LATENCY = (("latency_read_us", "read"), ("latency_write_us", "write"))
READAHEAD = (("ra_hits", "hits"), ("ra_misses", "misses"), ("ra_discarded", "read_but_discarded"),
             ("ra_pages", "readahead_pages"))
HYBRID = (("hybrid_read_bytes", "read_bytes"), ("hybrid_write_bytes", "write_bytes"),
          ("hybrid_read_switch", "readsize_switch"), ("hybrid_write_switch", "writesize_switch"),
          ("hybrid_noswitch", "noswitch"))
OSC_SETTINGS = tuple(s for s in jobrow.SETTINGS if s != "pagesize")

# A count as a record may carry it: not recorded, whole (small, or near the top of int64 so
# that sums overflow), negative, or past int64.
counts = st.one_of(
    st.none(),
    st.integers(0, 1 << 40),
    st.integers(INT64_MAX - (1 << 20), INT64_MAX),
    st.integers(-(1 << 70), -1),
    st.integers(INT64_MAX + 1, 1 << 70),
)
small_counts = st.one_of(st.none(), st.integers(0, 1 << 20), st.integers(-(1 << 40), -1),
                         st.integers(INT32_MAX - 2, INT32_MAX + 2), st.integers(INT64_MAX, 1 << 66))


def keyed(keys, values=counts):
    """Some of keys, each with a value (a key left out is a count not recorded)."""
    return st.dictionaries(st.sampled_from(keys), values, max_size=len(keys))


@st.composite
def filesystems(draw):
    fs = {k: draw(counts) for k in FS_COUNTS}
    fs["ops"] = draw(keyed(catalog.METADATA_OPS))
    fs["osts"] = {f"OST{i:04x}": {k: draw(counts) for k in OST_COUNTS} for i in range(draw(st.integers(0, 3)))}
    fs["rpc"] = {d: draw(keyed((*BUCKETS, *OVER))) for d in draw(st.sets(st.sampled_from(("read", "write"))))}
    fs["latency_us"] = draw(keyed(("read", "write")))
    fs["readahead"] = draw(keyed([k for _, k in READAHEAD]))
    fs["hybrid"] = draw(keyed([k for _, k in HYBRID]))
    return fs


@st.composite
def documents(draw):
    doc = report_doc("1", hosts=draw(st.integers(1, 3)), fs=("scratch",))
    doc["filesystems"]["scratch"] = draw(filesystems())
    for client in doc["clients"].values():
        client["pagesize"] = draw(small_counts)
        client["settings"]["scratch"] = draw(keyed(OSC_SETTINGS, small_counts))
    doc["job"]["num_nodes"] = draw(small_counts)
    doc["job"]["num_tasks"] = draw(small_counts)
    doc["job"]["elapsed_s"] = draw(st.one_of(st.none(), st.floats(-1e9, 1e9), st.just(float("inf")),
                                             st.integers(-(1 << 70), 1 << 70)))
    return doc


# -- the reference: the rule, spelled out with loops --------------------------------------------

class Reference:
    def __init__(self):
        self.ids = set()

    def count(self, v, top=INT64_MAX):
        if v is None:
            return None
        if v < 0:
            self.ids.add("VALUE_NEGATIVE")
            return None
        if v > top:
            self.ids.add("VALUE_TOO_LARGE")
            return None
        return v

    def total(self, values):
        total, whole = 0, True
        for v in values:
            c = self.count(v)
            if c is None:
                whole = False
            else:
                total += c
        return total if whole else None

    def row(self, doc):
        job, fs = doc["job"], doc["filesystems"]["scratch"]
        want = {}
        for k in FS_COUNTS:
            want[k] = self.count(fs[k])
        ops = fs["ops"]
        for op in catalog.SHOWN_OPS:
            want[op] = self.count(ops.get(op))
        want["md_ops"] = self.count(self.total(ops[op] for op in ops)) if ops else None
        for k in OST_COUNTS:
            want[f"ost_{k}"] = self.count(self.total(o[k] for o in fs["osts"].values()))
        for d in ("read", "write"):
            hist = fs["rpc"].get(d) or {}
            cols = {b: None for b in (*BUCKETS, "over_64M")}
            if hist and self.total(hist.values()) is not None:
                cols = {b: 0 for b in cols}
                for label, n in hist.items():
                    cols[label if label in BUCKETS else "over_64M"] += n
                cols = {b: self.count(n) for b, n in cols.items()}
            for b, n in cols.items():
                want[f"rpc_{d}_{b}"] = n
        for col, key in LATENCY:
            want[col] = self.count(fs["latency_us"].get(key))
        for col, key in READAHEAD:
            want[col] = self.count(fs["readahead"].get(key))
        for col, key in HYBRID:
            want[col] = self.count(fs["hybrid"].get(key))
        for s in jobrow.SETTINGS:
            seen = {}
            for host in job["hosts"]:
                c = doc["clients"][host]
                v = c["pagesize"] if s == "pagesize" else c["settings"]["scratch"].get(s)
                v = self.count(v)
                if v is not None:
                    seen[v] = seen.get(v, 0) + 1
            best = None
            for v, n in seen.items():
                if best is None or n > seen[best] or (n == seen[best] and v < best):
                    best = v
            want[s] = best
        want["num_nodes"] = self.count(job["num_nodes"], INT32_MAX) if job["num_nodes"] is not None \
            else len(job["hosts"])
        want["num_tasks"] = self.count(job["num_tasks"], INT32_MAX)
        e = job["elapsed_s"]
        if e is not None and e < 0:
            self.ids.add("VALUE_NEGATIVE")
            e = None
        elif e is not None and e > INT64_MAX:                    # inf too
            self.ids.add("VALUE_TOO_LARGE")
            e = None
        want["elapsed_s"] = None if e is None else float(e)
        want["data_quality"] = ",".join(sorted(self.ids))
        want["trusted"] = not self.ids
        return want


@runs(1000)
@given(documents())
def test_every_count_column_follows_the_rule(doc):
    [row] = jobrow.rows(doc)
    want = Reference().row(doc)
    assert {k: row[k] for k in want} == want
    dataset.to_table([row])                    # and every value fits its column's type


# -- the rule, by example, through compaction and compare ---------------------------------------

def test_a_negative_count_is_null_untrusted_and_said():
    doc = record_doc("1")
    doc["filesystems"]["scratch"]["read_bytes"] = -5
    [row] = jobrow.rows(doc)
    assert (row["read_bytes"], row["trusted"], row["data_quality"]) == (None, False, "VALUE_NEGATIVE")
    assert row["write_bytes"] == doc["filesystems"]["scratch"]["write_bytes"]


def test_a_negative_hides_in_no_sum():
    """-5 on one OST and +5 on another: the OST sum would look whole and right."""
    doc = record_doc("1", osts=2)
    o1, o2 = doc["filesystems"]["scratch"]["osts"].values()
    o1["read_rpcs"], o2["read_rpcs"] = -5, 1005
    doc["filesystems"]["scratch"]["ops"]["mkdir"] = -3
    doc["filesystems"]["scratch"]["rpc"]["read"]["4K"] = -1
    [row] = jobrow.rows(doc)
    assert (row["ost_read_rpcs"], row["md_ops"], row["rpc_read_4K"], row["rpc_read_1M"]) == (None, None, None, None)
    assert row["ost_write_rpcs"] is not None and row["rpc_write_1M"] is not None and not row["trusted"]


def test_negative_node_and_task_counts_are_negative_not_too_large():
    doc = record_doc("1")
    doc["job"]["num_tasks"] = -1
    [row] = jobrow.rows(doc)
    assert (row["num_tasks"], row["data_quality"], row["trusted"]) == (None, "VALUE_NEGATIVE", False)


def test_an_elapsed_time_past_any_float_is_too_large_not_a_malformed_record():
    doc = record_doc("1")
    doc["job"]["elapsed_s"] = 10 ** 400
    [row] = jobrow.rows(doc)
    assert (row["elapsed_s"], row["data_quality"], row["trusted"]) == (None, "VALUE_TOO_LARGE", False)


def test_a_record_with_a_negative_count_is_compacted_untrusted_and_compare_leaves_it_out(tmp_path):
    rec, ds = tmp_path / "records", tmp_path / "dataset"
    doc = report_doc("1")
    doc["filesystems"]["scratch"]["read_bytes"] = -5
    records.store(doc, rec, "c1", "1")
    put(rec, "2")
    res = compact.compact(rec, ds)
    assert (res.records_added, res.set_aside) == (2, [])            # kept, not refused
    got = recordset.load("", rec, ds)
    rows = {r["job_id"]: r for r in got.table.to_pylist()}
    assert (rows["1"]["read_bytes"], rows["1"]["trusted"], rows["1"]["data_quality"]) == (None, False, "VALUE_NEGATIVE")
    assert rows["2"]["trusted"]


def test_a_negative_count_in_a_dataset_file_written_before_the_check_is_not_trusted(tmp_path):
    """An older compaction wrote read_bytes = -5 in a row marked trusted: compare reads the row
    as not trusted."""
    import pyarrow.parquet as pq
    rec, ds = tmp_path / "records", tmp_path / "dataset"
    rows = jobrow.rows(record_doc("1")) + jobrow.rows(record_doc("2"))
    rows[0]["read_bytes"] = -5                                   # as jobrow made it then: trusted
    month = ds / "year=2026" / "month=10"
    month.mkdir(parents=True)
    pq.write_table(dataset.to_table(rows), month / "part-20261016T000000Z-00000000.parquet")
    got = {r["job_id"]: r["trusted"] for r in recordset.load("", rec, ds).table.to_pylist()}
    assert got == {"1": False, "2": True}
