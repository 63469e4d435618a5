"""Job records: each job's JSON report document, kept for `compare` and later compaction.

Layout: <records_dir>/YYYY/MM/DD/<cluster>-<jobid>.json, the date being the job's end (UTC).
A record is the report document (DESIGN §3, "schema" inside) plus "kind": "record" and a
"record" object saying where it came from. Written atomically (temp file + rename) by root into
a root-owned tree; directories 0755 and files 0644, so that admins' tools can read them.
"""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .atomicfile import replacing


def _day(doc: dict) -> datetime:
    end = (doc.get("job") or {}).get("end")
    if isinstance(end, str):
        try:
            return datetime.fromisoformat(end.replace("Z", "+00:00")).astimezone(timezone.utc)
        except ValueError:
            pass
    return datetime.now(timezone.utc)


def record_path(records_dir: str | Path, doc: dict, cluster: str, job_id: str) -> Path:
    day = _day(doc)
    return Path(records_dir) / f"{day:%Y}" / f"{day:%m}" / f"{day:%d}" / f"{cluster}-{job_id}.json"


def store(doc: dict, records_dir: str | Path, cluster: str, job_id: str,
          meta: dict[str, Any] | None = None) -> Path:
    path = record_path(records_dir, doc, cluster, job_id)
    record = dict(doc)
    record["kind"] = "record"
    record["record"] = {"cluster": cluster, "job_id": job_id, "stored_at": round(time.time(), 3),
                        **(meta or {})}
    old_umask = os.umask(0o022)
    try:
        path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        with replacing(path, perm=0o644) as out:
            json.dump(record, out, separators=(",", ":"))
            out.write("\n")
    finally:
        os.umask(old_umask)
    return path


def load(path: str | Path) -> dict:
    return json.loads(Path(path).read_text())
