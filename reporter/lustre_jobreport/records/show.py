"""show: a past job's report, from its JSON record, for the job's user (or root).

A record is the job's whole report document (store.py), kept in records_dir/YYYY/MM/DD/ until
compaction moves it to records_dir/.compacted/YYYY/MM/DD/ (under another free name if one was
taken: <cluster>-<job>.1.json ...): both trees are searched, so a report is found before and
after compaction. The Parquet dataset holds rows per filesystem, not reports: it is not read.

Records are root's (docs/admin.md §4 says how a site lets its users read them): a user who can
read them is shown only the jobs whose report names them as the job's user; root sees every
job. Directories are taken only as the writers make them (store.DirCheck: root's or the
caller's, not writable by others), so nobody can plant a report for another user to read.
"""

from __future__ import annotations

import os
import pwd
import re
from dataclasses import dataclass
from pathlib import Path

from . import store
from ..errors import JobReportError

@dataclass(frozen=True)
class Found:
    path: Path
    doc: dict

    @property
    def cluster(self) -> str:
        return str((self.doc.get("record") or {}).get("cluster") or "")

    @property
    def end(self) -> str:
        return str((self.doc.get("job") or {}).get("end") or "")


def find(records_dir: str | Path, job_id: str, cluster: str | None = None) -> list[Found]:
    """The records of job_id (of cluster, if given), live and compacted, oldest job end first."""
    if not store.JOB_ID_RE.fullmatch(job_id):
        raise JobReportError(f"job id {job_id!r}: not one a record is named by")
    name = re.compile(rf".+-{re.escape(job_id)}(\.\d+)?\.json")
    found = []
    for top in (Path(records_dir), Path(records_dir) / store.COMPACTED):
        check = store.DirCheck(top, owners=(0, os.geteuid()))   # as compare reads them
        for path in store.iter_records(top, check=check):
            if not name.fullmatch(path.name):
                continue
            try:
                doc = store.load(path)
            except store.RecordFileError:
                continue                 # compaction sets such a file aside and says why
            rec = doc.get("record") if isinstance(doc, dict) else None
            if not isinstance(rec, dict) or rec.get("job_id") != job_id:
                continue
            if cluster is None or rec.get("cluster") == cluster:
                found.append(Found(path, doc))
    return sorted(found, key=lambda f: (f.end, str(f.path)))


def caller() -> str | None:
    """The running user's name (None for root, who may see every job)."""
    uid = os.getuid()
    if uid == 0:
        return None
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def show(records_dir: str | Path, job_id: str, cluster: str | None = None) -> tuple[dict, str]:
    """The report of job_id the caller may see, and a line to say beside it ("" or, when the job
    id has several records the caller may see, which one this is). JobReportError otherwise."""
    if not os.access(records_dir, os.R_OK | os.X_OK):
        raise JobReportError(f"cannot read the job records in {records_dir}: they are root's "
                             "(docs/admin.md §4 says how a site lets its users read theirs)")
    user = caller()
    mine = [f for f in find(records_dir, job_id, cluster)
            if user is None or (f.doc.get("job") or {}).get("user") == user]
    where = f" of cluster {cluster}" if cluster else ""
    if not mine:
        whose = "the" if user is None else f"{user}'s"
        raise JobReportError(f"no record of job {job_id}{where} among {whose} job records in {records_dir}")
    clusters = sorted({f.cluster for f in mine})
    if len(clusters) > 1:
        raise JobReportError(f"job {job_id} has records in clusters {', '.join(clusters)}: give --cluster")
    last = mine[-1]
    note = "" if len(mine) == 1 else (f"job {job_id}: {len(mine)} records (the id was used again); "
                                      f"this is the one that ended last, {last.end}")
    return last.doc, note
