"""Job records: each job's JSON report document, kept for `compare` and later compaction.

Layout: <records_dir>/YYYY/MM/DD/<cluster>-<jobid>.json, the date being the job's end (UTC).
A record is the report document (DESIGN §3, "schema" inside) plus "kind": "record" and a
"record" object saying where it came from. Written atomically (temp file + rename) by root into
a root-owned tree, every directory of it checked and walked without following links (securedir);
directories 0755 and files 0644, so that admins' tools can read them.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from . import securedir


def _day(doc: dict) -> datetime:
    end = (doc.get("job") or {}).get("end")
    if isinstance(end, str):
        try:
            return datetime.fromisoformat(end.replace("Z", "+00:00")).astimezone(timezone.utc)
        except ValueError:
            pass
    return datetime.now(timezone.utc)


def _where(doc: dict, cluster: str, job_id: str) -> tuple[tuple[str, str, str], str]:
    """(YYYY, MM, DD) of the job's end, and the record's file name."""
    day = _day(doc)
    return (f"{day:%Y}", f"{day:%m}", f"{day:%d}"), f"{cluster}-{job_id}.json"


def record_path(records_dir: str | Path, doc: dict, cluster: str, job_id: str) -> Path:
    days, name = _where(doc, cluster, job_id)
    return Path(records_dir, *days, name)


def store(doc: dict, records_dir: str | Path, cluster: str, job_id: str,
          meta: dict[str, Any] | None = None) -> Path:
    """Write the record at record_path(...); the directories are checked (securedir): a refused
    one raises securedir.UnsafeDirError and nothing is written."""
    days, name = _where(doc, cluster, job_id)
    record = dict(doc)
    record["kind"] = "record"
    record["record"] = {"cluster": cluster, "job_id": job_id, "stored_at": round(time.time(), 3),
                        **(meta or {})}
    data = (json.dumps(record, separators=(",", ":")) + "\n").encode()
    return securedir.write(records_dir, days, name, data)


def load(path: str | Path) -> dict:
    return json.loads(Path(path).read_text())
