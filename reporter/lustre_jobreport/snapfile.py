"""Snapshot files: what one `snapshot` call saw on every host, as JSON.

A snapshot is the raw material of a report: per host, every lustreclient metric's value per
instance and its semantics (counter/instant/discrete), or the reason the host could not be read.
Readers accept any older "lustre-jobreport/<n>" schema and reject newer ones with a clear error.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import SCHEMA
from .errors import SnapshotFileError

SCHEMA_PREFIX = "lustre-jobreport/"
SCHEMA_VERSION = int(SCHEMA.rsplit("/", 1)[1])

Value = int | str
# The instance key of a metric without an instance domain (PM_IN_NULL).
SINGULAR = ""


@dataclass
class HostSnapshot:
    host: str                       # the name the report uses (scheduler node name)
    spec: str                       # the PCP host spec that was contacted
    ok: bool
    error: str | None = None
    fetched_at: float | None = None  # epoch seconds, the reporter's clock
    sems: dict[str, str] = field(default_factory=dict)               # metric -> counter|instant|discrete
    metrics: dict[str, dict[str, Value]] = field(default_factory=dict)  # metric -> instance -> value

    def to_json(self) -> dict[str, Any]:
        return {"spec": self.spec, "ok": self.ok, "error": self.error,
                "fetched_at": self.fetched_at, "sems": self.sems, "metrics": self.metrics}


@dataclass
class Snapshot:
    taken_at: float
    hosts: dict[str, HostSnapshot]
    source: str = ""                # file it was read from, for messages

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "kind": "snapshot", "taken_at": self.taken_at,
                "hosts": {name: h.to_json() for name, h in self.hosts.items()}}


def write(snapshot: Snapshot, path: str | Path) -> None:
    """Write atomically (temp file + rename) so a reader never sees half a snapshot."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "w") as out:
            json.dump(snapshot.to_json(), out, separators=(",", ":"))
            out.write("\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _fail(path: Path, why: str) -> SnapshotFileError:
    return SnapshotFileError(f"{path}: not a usable snapshot file: {why}")


def _check_schema(path: Path, doc: Any) -> None:
    if not isinstance(doc, dict):
        raise _fail(path, "top level is not a JSON object")
    schema = doc.get("schema")
    if not isinstance(schema, str) or not schema.startswith(SCHEMA_PREFIX):
        raise _fail(path, f"missing or foreign schema {schema!r}")
    try:
        version = int(schema[len(SCHEMA_PREFIX):])
    except ValueError:
        raise _fail(path, f"bad schema {schema!r}") from None
    if version > SCHEMA_VERSION:
        raise _fail(path, f"schema {schema} is newer than this reader ({SCHEMA}); upgrade lustre-jobreport")
    if doc.get("kind") != "snapshot":
        raise _fail(path, f"kind is {doc.get('kind')!r}, expected 'snapshot'")


def _host_from_json(path: Path, name: Any, raw: Any) -> HostSnapshot:
    if not isinstance(name, str) or not isinstance(raw, dict):
        raise _fail(path, f"host entry {name!r} is not an object")
    ok, spec = raw.get("ok"), raw.get("spec", name)
    if not isinstance(ok, bool) or not isinstance(spec, str):
        raise _fail(path, f"host {name}: 'ok' must be true/false and 'spec' a string")
    metrics, sems = raw.get("metrics", {}), raw.get("sems", {})
    if not isinstance(metrics, dict) or not isinstance(sems, dict):
        raise _fail(path, f"host {name}: 'metrics' and 'sems' must be objects")
    for metric, insts in metrics.items():
        if not isinstance(insts, dict):
            raise _fail(path, f"host {name}: metric {metric} is not an instance map")
        for inst, value in insts.items():
            if isinstance(value, bool) or not isinstance(value, (int, str)):
                raise _fail(path, f"host {name}: {metric}[{inst}] has a non-integer value {value!r}")
            if isinstance(value, int) and not 0 <= value < 2**64:
                raise _fail(path, f"host {name}: {metric}[{inst}] = {value} is outside u64")
    fetched_at = raw.get("fetched_at")
    if fetched_at is not None and not isinstance(fetched_at, (int, float)):
        raise _fail(path, f"host {name}: bad fetched_at {fetched_at!r}")
    error = raw.get("error")
    return HostSnapshot(host=name, spec=spec, ok=ok, error=None if error is None else str(error),
                        fetched_at=fetched_at, sems={str(k): str(v) for k, v in sems.items()},
                        metrics=metrics)


def read(path: str | Path) -> Snapshot:
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise SnapshotFileError(f"{path}: no such snapshot file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SnapshotFileError(f"{path}: cannot read snapshot file: {exc}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _fail(path, f"invalid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    _check_schema(path, doc)
    taken_at, hosts = doc.get("taken_at"), doc.get("hosts")
    if isinstance(taken_at, bool) or not isinstance(taken_at, (int, float)):
        raise _fail(path, "missing or bad 'taken_at'")
    if not isinstance(hosts, dict):
        raise _fail(path, "missing 'hosts' object")
    return Snapshot(taken_at=float(taken_at),
                    hosts={name: _host_from_json(path, name, raw) for name, raw in hosts.items()},
                    source=str(path))
