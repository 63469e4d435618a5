"""records add: a report made by hand stored as a job record, once it is known to compact."""

from __future__ import annotations

import os
from pathlib import Path

from . import dataset, jobrow
from .store import (CLUSTER_RE, JOB_ID_RE, RecordFileError, as_record, load, parse, read_bytes, record_path,
                    write)
from ..errors import JobReportError


def add(report_path: str | Path, records_dir: str | Path | None, cluster: str | None = None) -> Path:
    """Store a report made by hand (`lustre-jobreport report --format json`) as a job record,
    after checking it would compact (the reasons a compaction would set it aside are refused
    here). cluster: the record's cluster name; default the one of a record being re-added, else
    "manual". Returns the record's path; JobReportError (one line) for anything wrong."""
    if not records_dir:
        raise JobReportError("no records directory: give --records DIR or set [hooks] records_dir")
    data, _ = read_bytes(report_path, follow=True)
    doc = parse(data, report_path)
    try:
        jobrow.check_schema(doc)
    except jobrow.RecordError as exc:
        raise JobReportError(f"{report_path}: {exc}") from None
    if cluster is None:
        prev = doc.get("record") if doc.get("kind") == "record" else None
        prev = prev.get("cluster") if isinstance(prev, dict) else None
        cluster = prev if isinstance(prev, str) and CLUSTER_RE.fullmatch(prev) else "manual"
    if not CLUSTER_RE.fullmatch(cluster):
        raise JobReportError(f"cluster {cluster!r}: must be letters, digits, '.', '_', '-' "
                             "(it starts the record's file name)")
    job_id = doc["job"].get("id")
    if job_id is None or job_id == "":
        raise JobReportError(f"{report_path}: the report has no job id (make it with `report --job-id ID`)")
    if not isinstance(job_id, str) or not JOB_ID_RE.fullmatch(job_id):
        raise JobReportError(f"{report_path}: job id {job_id!r} cannot name a record file "
                             "(letters, digits and . _ - + @ : [ ])")
    record = as_record(doc, cluster, job_id, {"source": "records add", "added_from": os.path.abspath(report_path)})
    check_compacts(record, report_path)
    base = Path(os.path.abspath(records_dir))
    path = record_path(base, record, cluster, job_id)
    _refuse_other_job(path, jobrow.record_id(record))
    try:
        return write(record, base)
    except OSError as exc:
        raise JobReportError(f"cannot store the record under {base}: {exc.strerror}") from None



def check_compacts(record: dict, path: str | Path) -> None:
    """JobReportError unless the record converts to the dataset's rows and column types."""
    try:
        dataset.to_table(jobrow.rows(record))
    except dataset.ROW_ERRORS as exc:
        raise JobReportError(f"{path}: would not compact: {dataset.one_line(exc)}") from None



def _refuse_other_job(path: Path, rid: str) -> None:
    """A record of another job with the same name (a job id reused the same day) is not
    replaced by hand; the same job's is (adding a report again is idempotent)."""
    try:
        old = load(path)
    except RecordFileError:
        return
    if isinstance(old, dict) and jobrow.record_id(old) != rid:
        raise JobReportError(f"{path} already holds another job's record ({jobrow.record_id(old)}); "
                             "not replaced")
