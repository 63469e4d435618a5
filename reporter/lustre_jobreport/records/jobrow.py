"""A job record as rows: one row per job and filesystem, the columns of the records dataset.

This is the one definition of the dataset's columns (docs/records.md describes them): `records
compact` writes these rows to Parquet, `compare` reads the same columns from the dataset and from
JSON records not compacted yet. Every column is a plain type (string, int64, int32, float64,
bool, timestamp) so DuckDB, Spark and Trino read the files unchanged; the RPC-size histogram is
one column per bucket.

A record of any schema this reader knows (lustre-jobreport/1 to /3) gives rows: what an older
record did not carry (clients, settings, latency, read-ahead, hybrid I/O, job name...) is null,
never 0, and so is a total the report says some host's values of were left out (its
filesystem's "left_out"): the report shows the sum of the rest, a row must not pass it for the
job's.

Every count, byte, call, op, RPC, page, microsecond and setting column holds a whole number in
[0, 2^63) (the int32 ones [0, 2^31)): none of them can be negative. A value outside that range
is no count: its column is null (and so is every sum it is part of), the row's data_quality says
VALUE_NEGATIVE or VALUE_TOO_LARGE and the row is not trusted: the record is kept, its wrong
number never trusted. A value of another type (a float, a string) is a malformed record
(RecordError). elapsed_s (seconds, float) cannot be negative either.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import Any

from .. import catalog
from .store import utc_time

# Record schemas this reader understands; a newer one is refused with one line (the reader is
# older than the writer), an older one is read with what it has.
KNOWN_SCHEMAS = ("lustre-jobreport/1", "lustre-jobreport/2", "lustre-jobreport/3")

# RPC-size buckets with a column each (the bucket's upper bound, DESIGN §2); larger RPCs (64 KiB
# pages can make 1 GiB ones) go to rpc_<dir>_over_64M.
BUCKETS = ("4K", "8K", "16K", "32K", "64K", "128K", "256K", "512K", "1M", "2M", "4M", "8M", "16M",
           "32M", "64M")

# The client settings a record keeps per filesystem (report JSON "clients" ... "settings").
SETTINGS = ("pagesize", "max_pages_per_rpc", "max_rpcs_in_flight", "max_dirty_mb", "checksums",
            "max_read_ahead_mb", "max_read_ahead_per_file_mb", "max_read_ahead_whole_mb",
            "hybrid_io", "hybrid_io_read_threshold_bytes", "hybrid_io_write_threshold_bytes")

# data_quality ids that make a filesystem's numbers unfit for comparing jobs: values left out,
# reset or not the job's own. SHORT_JOB only stops rates being judged; compare uses no rates.
# TIMELINE_PARTIAL is of the report's timeline only: the totals a row keeps stand.
UNTRUSTED = ("VALUES_MISSING", "COUNTER_RESET", "REMOUNT", "HOST_UNREACHABLE", "METRIC_TYPE",
             "SHARED_NODE", "VALUE_TOO_LARGE", "VALUE_NEGATIVE", "NO_LUSTRE")

# notes (report JSON "notes") a row's data_quality column names all the same
NOTES_KEPT = ("SHORT_JOB",)

INT64_MAX = (1 << 63) - 1
INT32_MAX = (1 << 31) - 1
# The data_quality ids of a value no count can be (the column is null, the row not trusted).
NEGATIVE = "VALUE_NEGATIVE"
TOO_LARGE = "VALUE_TOO_LARGE"

# (column, type); types are names, so the prolog-free modules need no pyarrow to list them.
_COLUMNS: list[tuple[str, str]] = [
    ("record_id", "string"), ("schema", "string"), ("stored_at", "float64"),
    ("cluster", "string"), ("job_id", "string"), ("user", "string"), ("job_name", "string"),
    ("command", "string"), ("partition", "string"), ("account", "string"),
    ("num_nodes", "int32"), ("num_tasks", "int32"), ("n_hosts", "int32"), ("hosts_missing", "int32"),
    ("hosts_incomplete", "int32"),
    ("begin", "timestamp"), ("end", "timestamp"), ("elapsed_s", "float64"),
    ("lustre", "string"), ("kernel", "string"), ("os", "string"),
    ("fs", "string"),
    *((s, "int64") for s in SETTINGS), ("settings_mixed", "string"),
    ("read_bytes", "int64"), ("write_bytes", "int64"), ("read_calls", "int64"), ("write_calls", "int64"),
    ("open", "int64"), ("close", "int64"), ("getattr", "int64"), ("setattr", "int64"),
    ("statfs", "int64"), ("fsync", "int64"), ("md_ops", "int64"),
    ("ost_read_bytes", "int64"), ("ost_write_bytes", "int64"), ("ost_read_rpcs", "int64"),
    ("ost_write_rpcs", "int64"), ("osts_used", "int32"),
    *((f"rpc_{d}_{b}", "int64") for d in ("read", "write") for b in (*BUCKETS, "over_64M")),
    ("latency_read_us", "int64"), ("latency_write_us", "int64"),
    ("ra_hits", "int64"), ("ra_misses", "int64"), ("ra_discarded", "int64"), ("ra_pages", "int64"),
    ("hybrid_read_bytes", "int64"), ("hybrid_write_bytes", "int64"), ("hybrid_read_switch", "int64"),
    ("hybrid_write_switch", "int64"), ("hybrid_noswitch", "int64"),
    ("flags", "string"), ("data_quality", "string"), ("trusted", "bool"),
]
COLUMNS = tuple(name for name, _ in _COLUMNS)
TYPES = dict(_COLUMNS)
# The operations a row counts one by one: those the report shows, in the columns' order (an op
# the report shows without a column is an error here, at import).
_OP_COLUMNS = tuple(sorted(catalog.SHOWN_OPS, key=COLUMNS.index))


class RecordError(ValueError):
    """A record that cannot be read as rows (one line, names the reason)."""


def arrow_schema():
    """The dataset's pyarrow schema (imported here: only compaction and compare need pyarrow)."""
    import pyarrow as pa
    kinds = {"string": pa.string(), "int64": pa.int64(), "int32": pa.int32(), "float64": pa.float64(),
             "bool": pa.bool_(), "timestamp": pa.timestamp("ms", tz="UTC")}
    return pa.schema([(name, kinds[kind]) for name, kind in _COLUMNS])


def _whole(v: Any, name: str) -> bool:
    """Whether v is a count: None (not recorded: null) is not; a value of another type is a
    malformed record, never a silent null."""
    if v is None:
        return False
    if isinstance(v, bool) or not isinstance(v, int):
        raise RecordError(f"{name} is {type(v).__name__} {v!r}, not a whole number")
    return True


def _out_of_range(v: int | float, top: int) -> str | None:
    """The data_quality id of a number no count can be (below 0, above top), else None."""
    if v < 0:
        return NEGATIVE
    if v > top:
        return TOO_LARGE
    return None


def _int(v: Any, unfit: set[str], name: str, top: int = INT64_MAX) -> int | None:
    """v as a count of a column that holds [0, top]: None when not recorded; None with its
    data_quality id added to `unfit` when it is no count (negative, or past the column)."""
    if not _whole(v, name):
        return None
    why = _out_of_range(v, top)
    if why:
        unfit.add(why)
        return None
    return v


def _total(values, unfit: set[str], name: str) -> int | None:
    """The sum of counts, or null when one of them is not recorded or is no count: a sum over
    some of them would pass for the whole, and a -5 would hide in it. Each is checked."""
    counts = [_int(v, unfit, name) for v in values]
    return sum(counts) if all(c is not None for c in counts) else None


def _seconds(v: Any, unfit: set[str]) -> float | None:
    """A duration in seconds (elapsed_s): None when not recorded, or (with its data_quality
    id) negative or not finite."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    why = _out_of_range(v, INT64_MAX) if isinstance(v, int) or math.isfinite(v) else TOO_LARGE
    if why:
        unfit.add(why)
        return None
    return float(v)


def _left_out(t: dict, fs: str) -> set[str]:
    """The totals of a filesystem not counted on every host (report "left_out"; older reports
    do not say: none)."""
    left = t.get("left_out") or {}
    if not isinstance(left, dict) or not all(isinstance(k, str) for k in left):
        raise RecordError(f"filesystem {fs!r}: left_out is not an object of total names")
    return set(left)


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def _joined(values) -> str | None:
    """Distinct values, sorted, ';'-joined ('2.15.4' or '2.15.4;2.16.0' on a mixed job)."""
    got = sorted({v for v in values if isinstance(v, str) and v})
    return ";".join(got) or None


def record_id(doc: dict) -> str:
    """The job's identity across copies of its record: cluster, job id and end time (job ids are
    reused when a scheduler is reinstalled or wraps)."""
    rec = doc.get("record") or {}
    job = doc.get("job") or {}
    end = utc_time(job.get("end"))   # one spelling of the instant: '...Z' and '...+00:00' are one job
    when = (end.isoformat(timespec="microseconds" if end.microsecond else "seconds").replace("+00:00", "Z")
            if end else (job.get("end") or "-"))
    return f"{rec.get('cluster') or job.get('cluster') or '-'}/{job.get('id') or '-'}/{when}"


def check_schema(doc: Any) -> None:
    if not isinstance(doc, dict):
        raise RecordError("not a JSON object")
    schema = doc.get("schema")
    if schema not in KNOWN_SCHEMAS:
        if isinstance(schema, str) and schema.startswith("lustre-jobreport/"):
            raise RecordError(f"record schema {schema} is newer than this lustre-jobreport reads "
                              f"({KNOWN_SCHEMAS[-1]}): upgrade lustre-jobreport")
        raise RecordError(f"not a lustre-jobreport record (schema {schema!r})")
    if not isinstance(doc.get("filesystems"), dict) or not isinstance(doc.get("job"), dict):
        raise RecordError("record without 'job' and 'filesystems'")


def _settings(doc: dict, fs: str, hosts: list[str], unfit: set[str]) -> tuple[dict[str, int | None], str]:
    """Per setting, the value most of the job's hosts had for this filesystem, and the names of
    the settings whose hosts disagree (or that vary over a host's OSCs). A host's value that no
    setting can be (negative, past int64) is not counted and its data_quality id added."""
    clients = doc.get("clients") or {}
    mixed: set[str] = set()
    seen: dict[str, dict[int, int]] = {s: {} for s in SETTINGS}
    for host in hosts:
        c = clients.get(host) or {}
        per_fs = (c.get("settings") or {}).get(fs) or {}
        for s in SETTINGS:
            v = c.get("pagesize") if s == "pagesize" else per_fs.get(s)
            if isinstance(v, int) and not isinstance(v, bool) and not _unfit_setting(v, unfit):
                seen[s][v] = seen[s].get(v, 0) + 1
        mixed.update(x for x in per_fs.get("mixed", ()) if x in SETTINGS)
    out = {}
    for s, counts in seen.items():
        out[s] = max(counts, key=lambda v: (counts[v], -v)) if counts else None
        if len(counts) > 1:
            mixed.add(s)
    return out, ",".join(sorted(mixed))


def _unfit_setting(v: int, unfit: set[str]) -> bool:
    why = _out_of_range(v, INT64_MAX)
    if why:
        unfit.add(why)
    return why is not None


def rows(doc: dict) -> list[dict[str, Any]]:
    """The record's rows (one per filesystem), every column of COLUMNS present. A record that
    is not what its schema says raises RecordError (one line), never another exception."""
    check_schema(doc)
    try:
        return _rows(doc)
    except RecordError:
        raise
    except (TypeError, AttributeError, ValueError, OverflowError, KeyError) as exc:
        raise RecordError(f"malformed record: {type(exc).__name__}: {exc}") from None


def _rows(doc: dict) -> list[dict[str, Any]]:
    job = doc["job"]
    hosts = [h for h in job.get("hosts") or [] if isinstance(h, str)]
    end = utc_time(job.get("end"))
    if end is None:
        raise RecordError("record without a valid job end time")
    dq = [i for i in doc.get("data_quality") or [] if isinstance(i, dict)]
    # a row's data_quality column keeps the report's notes kept there (SHORT_JOB), where rows of
    # reports that had them among data_quality have them too
    dq += [n for n in doc.get("notes") or [] if isinstance(n, dict) and n.get("id") in NOTES_KEPT]
    flags = [f for f in doc.get("flags") or [] if isinstance(f, dict)]
    incomplete = job.get("hosts_incomplete") or {}
    job_unfit: set[str] = set()          # data_quality ids of the job's values no count can be
    common = _job_columns(doc, hosts, end, job_unfit)
    out = []
    for fs, t in sorted(doc["filesystems"].items()):
        if not isinstance(t, dict):
            raise RecordError(f"filesystem {fs!r} is not an object")
        unfit = set(job_unfit)           # ... and of this filesystem's
        row = dict(common)
        row["fs"] = fs
        row["hosts_incomplete"] = sum(1 for h, lst in incomplete.items() if isinstance(lst, list) and fs in lst)
        settings, row["settings_mixed"] = _settings(doc, fs, hosts, unfit)
        row.update(settings)
        left = _left_out(t, fs)
        row.update(_llite_columns(t, left, unfit))
        row.update(_ost_columns(t, fs, left, unfit))
        for d in ("read", "write"):
            row.update(_rpc_columns(t, fs, d, left, unfit))
        row.update(_job_wide_columns(t, unfit))
        row.update(_trust_columns(fs, flags, dq, unfit))
        out.append(row)
    return out


def _job_columns(doc: dict, hosts: list[str], end: datetime, unfit: set[str]) -> dict[str, Any]:
    """The columns every row of the record has alike: the job, its times and its clients."""
    job = doc["job"]
    rec = doc.get("record") or {}
    clients = doc.get("clients") or {}
    versions = doc.get("lustre_versions") or {}
    return {
        "record_id": record_id(doc), "schema": doc["schema"],
        "stored_at": float(rec["stored_at"]) if isinstance(rec.get("stored_at"), (int, float)) else None,
        "cluster": _str(rec.get("cluster") or job.get("cluster")), "job_id": _str(job.get("id")),
        "user": _str(job.get("user")), "job_name": _str(job.get("name")), "command": _str(job.get("command")),
        "partition": _str(job.get("partition")), "account": _str(job.get("account")),
        "num_nodes": (_int(job.get("num_nodes"), unfit, "num_nodes", INT32_MAX) if job.get("num_nodes") is not None
                      else len(hosts) or None),
        "num_tasks": _int(job.get("num_tasks"), unfit, "num_tasks", INT32_MAX),
        "n_hosts": len(hosts), "hosts_missing": len(job.get("hosts_missing") or []),
        "begin": utc_time(job.get("begin")), "end": end,
        "elapsed_s": _seconds(job.get("elapsed_s"), unfit),
        "lustre": _joined((clients.get(h) or {}).get("lustre") or versions.get(h) for h in hosts),
        "kernel": _joined((clients.get(h) or {}).get("kernel") for h in hosts),
        "os": _joined((clients.get(h) or {}).get("os") for h in hosts),
    }


def _llite_columns(t: dict, left: set[str], unfit: set[str]) -> dict[str, int | None]:
    """The filesystem's volumes, the operations the report shows and all metadata operations
    (md_ops). A count the record does not carry is null, and so is any sum it would be part of
    (a report always carries the shown ops, every OST's counts and every bucket: one without
    them is an older or hand-made record, not a job that did nothing)."""
    row: dict[str, int | None] = {}
    for k in ("read_bytes", "write_bytes", "read_calls", "write_calls"):
        row[k] = _int(None if k in left else t.get(k), unfit, k)
    ops = t.get("ops") or {}
    for op in _OP_COLUMNS:
        row[op] = _int(None if f"ops.{op}" in left else ops.get(op), unfit, op)
    md = _total((None if f"ops.{op}" in left else v for op, v in ops.items() if op in catalog.METADATA_OPS),
                unfit, "md_ops") if ops else None
    row["md_ops"] = _int(md, unfit, "md_ops")
    return row


def _ost_columns(t: dict, fs: str, left: set[str], unfit: set[str]) -> dict[str, int | None]:
    """Bytes and RPCs summed over the filesystem's OSTs, and how many OSTs it used."""
    osts = list((t.get("osts") or {}).values())
    if not all(isinstance(o, dict) for o in osts):
        raise RecordError(f"filesystem {fs!r}: an OST entry is not an object")
    row: dict[str, int | None] = {}
    for k in ("read_bytes", "write_bytes", "read_rpcs", "write_rpcs"):
        whole = f"osts.{k}" not in left
        row[f"ost_{k}"] = _int(_total((o.get(k) for o in osts), unfit, f"OST {k}"), unfit, k) if whole else None
    # an OST some host's figures of which were left out may have been used unseen
    row["osts_used"] = None if any(k.startswith("osts.") for k in left) else len(osts)
    return row


def _rpc_columns(t: dict, fs: str, d: str, left: set[str], unfit: set[str]) -> dict[str, int | None]:
    """One direction's RPC-size histogram as one column per bucket (sizes past 64M in
    over_64M); every bucket null when the histogram is left out, missing or has a bucket not
    recorded."""
    hist = {} if f"rpc.{d}" in left else (t.get("rpc") or {}).get(d) or {}
    cols: dict[str, int | None] = {b: 0 for b in (*BUCKETS, "over_64M")}
    if not hist or _total(hist.values(), unfit, f"rpc {d}") is None:
        cols = dict.fromkeys(cols)       # no histogram, or a bucket not recorded
        hist = {}
    for label, n in hist.items():
        if label in cols:
            b = label
        elif catalog.is_size_label(label) and catalog.size_bytes(label) > catalog.size_bytes("64M"):
            b = "over_64M"
        else:
            raise RecordError(f"filesystem {fs!r}: RPC size {label!r} is not a bucket")
        cols[b] += n
    return {f"rpc_{d}_{b}": _int(n, unfit, f"rpc_{d}_{b}") for b, n in cols.items()}


def _job_wide_columns(t: dict, unfit: set[str]) -> dict[str, int | None]:
    """Latency sums, read-ahead and hybrid I/O counters, as the record carries them."""
    lat = t.get("latency_us") or {}
    ra = t.get("readahead") or {}
    hy = t.get("hybrid") or {}
    row: dict[str, int | None] = {}
    row["latency_read_us"] = _int(lat.get("read"), unfit, "latency_read_us")
    row["latency_write_us"] = _int(lat.get("write"), unfit, "latency_write_us")
    for col, key in (("ra_hits", "hits"), ("ra_misses", "misses"), ("ra_discarded", "read_but_discarded"),
                     ("ra_pages", "readahead_pages")):
        row[col] = _int(ra.get(key), unfit, col)
    for col, key in (("hybrid_read_bytes", "read_bytes"), ("hybrid_write_bytes", "write_bytes"),
                     ("hybrid_read_switch", "readsize_switch"), ("hybrid_write_switch", "writesize_switch"),
                     ("hybrid_noswitch", "noswitch")):
        row[col] = _int(hy.get(key), unfit, col)
    return row


def _trust_columns(fs: str, flags: list[dict], dq: list[dict], unfit: set[str]) -> dict[str, Any]:
    """The filesystem's flags and data_quality ids (the record's, and those of its values no
    count can be), and whether its numbers are fit for comparing jobs."""
    row: dict[str, Any] = {
        "flags": ",".join(sorted({f["id"] for f in flags if f.get("fs") == fs and isinstance(f.get("id"), str)}))}
    ids = {i["id"] for i in dq if isinstance(i.get("id"), str) and i.get("fs") in (fs, None)}
    ids |= unfit
    row["data_quality"] = ",".join(sorted(ids))
    row["trusted"] = not (ids & set(UNTRUSTED))
    return row
