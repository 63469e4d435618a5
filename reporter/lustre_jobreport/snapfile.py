"""Snapshots: what one `snapshot` call saw on every host, in memory and as a JSON file.

In memory a snapshot is one table per metric: a matrix of hosts x instances (uint64 for
counters and gauges, str for strings) with a mask of the values that exist, so that diffs and
sums over 1,000 hosts x 2,048 OSCs are array operations. The file is JSON: host list, then per
metric its semantics, instance names and values; integer matrices are packed (little-endian
u64, zlib, base64) because a large job's snapshot holds tens of millions of values.
Readers accept any older "lustre-jobreport/<n>" schema and reject newer ones with a clear error.
The prolog writes snapshots, so this module imports numpy but neither pandas nor Jinja2.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from . import SCHEMA
from .atomicfile import replacing
from .errors import SnapshotFileError

SCHEMA_PREFIX = "lustre-jobreport/"
SCHEMA_VERSION = int(SCHEMA.rsplit("/", 1)[1])
SINGULAR = ""          # the instance name of a metric without an instance domain (PM_IN_NULL)
SEMANTICS = ("counter", "instant", "discrete")

Value = int | str


@dataclass
class Column:
    """One metric on one host: instance names and their values (uint64 array, or str list)."""
    instances: list[str]
    values: np.ndarray | list[str]

    @property
    def is_string(self) -> bool:
        return not isinstance(self.values, np.ndarray)

    @classmethod
    def from_dict(cls, values: dict[str, Value]) -> "Column":
        if any(isinstance(v, str) for v in values.values()):
            return cls(list(values), [str(v) for v in values.values()])
        return cls(list(values), np.array(list(values.values()), dtype=np.uint64))

    def as_dict(self) -> dict[str, Value]:
        values = self.values if self.is_string else [int(v) for v in self.values]
        return dict(zip(self.instances, values))


@dataclass
class HostSnapshot:
    """One host's fetch: every metric's value per instance, or why the host could not be read."""
    host: str                       # the name the report uses (scheduler node name)
    spec: str                       # the PCP host spec that was contacted
    ok: bool
    error: str | None = None
    fetched_at: float | None = None  # epoch seconds, the reporter's clock
    sems: dict[str, str] = field(default_factory=dict)       # metric -> counter|instant|discrete
    metrics: dict[str, Column] = field(default_factory=dict)

    def as_dicts(self) -> dict[str, dict[str, Value]]:
        return {m: c.as_dict() for m, c in self.metrics.items()}


@dataclass(frozen=True)
class HostInfo:
    name: str
    spec: str
    ok: bool
    error: str | None = None
    fetched_at: float | None = None


@dataclass
class MetricTable:
    """One metric on every host: values[h, i] of host row h and instance i where present[h, i]."""
    sem: str
    is_string: bool
    instances: list[str]
    values: np.ndarray   # (hosts, instances): uint64, or object (str) for strings
    present: np.ndarray  # (hosts, instances): bool

    def column(self, instance: str) -> int | None:
        try:
            return self.instances.index(instance)
        except ValueError:
            return None


@dataclass
class Snapshot:
    taken_at: float
    hosts: dict[str, HostInfo]               # in row order of every MetricTable
    metrics: dict[str, MetricTable]
    source: str = ""                         # the file it was read from, for messages

    @property
    def host_names(self) -> list[str]:
        return list(self.hosts)

    @classmethod
    def from_hosts(cls, taken_at: float, fetched: Iterable[HostSnapshot]) -> "Snapshot":
        """Stack per-host fetches into per-metric tables.

        Hosts of one job nearly always list the same instances in the same order, so a host
        whose instance list equals the table's is copied in one row assignment; others are
        placed instance by instance.
        """
        fetched = list(fetched)
        hosts = {h.host: HostInfo(h.host, h.spec, h.ok, h.error, h.fetched_at) for h in fetched}
        names: dict[str, None] = {}
        for h in fetched:
            names.update(dict.fromkeys(h.metrics))
        metrics = {}
        for metric in names:
            columns = [(row, h.metrics[metric]) for row, h in enumerate(fetched) if metric in h.metrics]
            sem = next((h.sems[metric] for h in fetched if metric in h.sems), "instant")
            is_string = any(c.is_string for _, c in columns)
            instances: dict[str, None] = {}
            for _, c in columns:
                if c.instances != list(instances):
                    instances.update(dict.fromkeys(c.instances))
            order = list(instances)
            col = {name: i for i, name in enumerate(order)}
            shape = (len(fetched), len(order))
            values = np.full(shape, "", dtype=object) if is_string else np.zeros(shape, dtype=np.uint64)
            present = np.zeros(shape, dtype=bool)
            for row, c in columns:
                if c.is_string != is_string:
                    continue   # a host answering with another type: not comparable, leave it out
                if c.instances == order:
                    values[row] = c.values
                    present[row] = True
                else:
                    idx = np.array([col[i] for i in c.instances], dtype=np.intp)
                    values[row, idx] = c.values
                    present[row, idx] = True
            metrics[metric] = MetricTable(sem, is_string, order, values, present)
        return cls(taken_at, hosts, metrics)

    def value(self, metric: str, host: str, instance: str = SINGULAR) -> Value | None:
        """One value, for the few places that need a single one (version, mount ids)."""
        table = self.metrics.get(metric)
        if table is None or host not in self.hosts:
            return None
        row, col = list(self.hosts).index(host), table.column(instance)
        if col is None or not table.present[row, col]:
            return None
        v = table.values[row, col]
        return v if table.is_string else int(v)

    def instance_values(self, metric: str, host: str) -> dict[str, Value]:
        table = self.metrics.get(metric)
        if table is None or host not in self.hosts:
            return {}
        row = list(self.hosts).index(host)
        return {inst: (table.values[row, i] if table.is_string else int(table.values[row, i]))
                for i, inst in enumerate(table.instances) if table.present[row, i]}


# ---- file format --------------------------------------------------------------------------

def _pack(array: np.ndarray) -> str:
    """base64 of the raw bytes, zlib-compressed ("z:") when that saves a quarter or more, else
    as they are ("r:"): busy counters hardly compress, and inflating them costs more than
    reading them plain."""
    raw = np.ascontiguousarray(array).tobytes()
    packed = zlib.compress(raw, 1)
    if len(packed) <= 0.75 * len(raw):
        return "z:" + base64.b64encode(packed).decode("ascii")
    return "r:" + base64.b64encode(raw).decode("ascii")


def _unpack(text: Any, dtype: str, count: int, where: str) -> np.ndarray:
    if not isinstance(text, str) or text[:2] not in ("z:", "r:"):
        raise ValueError(f"{where}: packed data must be a 'z:' or 'r:' string")
    try:
        raw = base64.b64decode(text[2:], validate=True)
        if text[0] == "z":
            raw = zlib.decompress(raw)
    except (binascii.Error, zlib.error) as exc:
        raise ValueError(f"{where}: packed data is damaged ({exc})") from None
    array = np.frombuffer(raw, dtype=dtype)
    if array.size != count:
        raise ValueError(f"{where}: {array.size} packed values, expected {count}")
    return array


def _table_to_json(t: MetricTable) -> dict[str, Any]:
    doc: dict[str, Any] = {"sem": t.sem, "type": "string" if t.is_string else "u64", "instances": t.instances}
    if t.is_string:
        # few distinct strings (import states, versions): levels + packed codes, 0 = absent
        levels, codes = np.unique(t.values[t.present].astype(str), return_inverse=True) \
            if t.present.any() else (np.array([], dtype=str), np.array([], dtype=np.intp))
        packed = np.zeros(t.values.shape, dtype="<u4")
        packed[t.present] = codes.astype("<u4") + 1
        doc["levels"] = levels.tolist()
        doc["values"] = _pack(packed)
    else:
        doc["values"] = _pack(t.values.astype("<u8"))
        doc["present"] = _pack(np.packbits(t.present, axis=None))
    return doc


def to_json(s: Snapshot) -> dict[str, Any]:
    return {"schema": SCHEMA, "kind": "snapshot", "taken_at": s.taken_at,
            "hosts": [{"name": h.name, "spec": h.spec, "ok": h.ok, "error": h.error,
                       "fetched_at": h.fetched_at} for h in s.hosts.values()],
            "encoding": "u64 values: little-endian u64; present: packbits; strings: levels + little-endian "
                        "u32 codes (0 absent, i+1 levels[i]); each base64, zlib-compressed when prefixed z:",
            "metrics": {name: _table_to_json(t) for name, t in s.metrics.items()}}


def write(snapshot: Snapshot, path: str | Path) -> None:
    """Write atomically (temp file + rename) so a reader never sees half a snapshot."""
    with replacing(Path(path)) as out:
        json.dump(to_json(snapshot), out, separators=(",", ":"))
        out.write("\n")


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


def _host_from_json(raw: Any, i: int) -> HostInfo:
    if not isinstance(raw, dict):
        raise ValueError(f"host #{i} is not an object")
    name, spec, ok = raw.get("name"), raw.get("spec", raw.get("name")), raw.get("ok")
    if not isinstance(name, str) or not isinstance(spec, str) or not isinstance(ok, bool):
        raise ValueError(f"host #{i}: needs a string 'name' and 'spec' and a true/false 'ok'")
    fetched_at = raw.get("fetched_at")
    if fetched_at is not None and (isinstance(fetched_at, bool) or not isinstance(fetched_at, (int, float))):
        raise ValueError(f"host {name}: bad fetched_at {fetched_at!r}")
    error = raw.get("error")
    return HostInfo(name, spec, ok, None if error is None else str(error), fetched_at)


def _table_from_json(name: str, raw: Any, n_hosts: int) -> MetricTable:
    if not isinstance(raw, dict):
        raise ValueError(f"metric {name} is not an object")
    sem, kind, instances = raw.get("sem"), raw.get("type"), raw.get("instances")
    if sem not in SEMANTICS or kind not in ("u64", "string"):
        raise ValueError(f"metric {name}: bad sem {sem!r} or type {kind!r}")
    if not isinstance(instances, list) or not all(isinstance(i, str) for i in instances):
        raise ValueError(f"metric {name}: 'instances' must be a list of names")
    shape = (n_hosts, len(instances))
    if kind == "u64":
        values = _unpack(raw.get("values"), "<u8", shape[0] * shape[1], name).reshape(shape)
        bits = _unpack(raw.get("present"), "u1", (shape[0] * shape[1] + 7) // 8, name + " present")
        present = np.unpackbits(bits, count=shape[0] * shape[1]).astype(bool).reshape(shape)
        return MetricTable(sem, False, instances, values.astype(np.uint64), present)
    levels = raw.get("levels")
    if not isinstance(levels, list) or not all(isinstance(v, str) for v in levels):
        raise ValueError(f"metric {name}: 'levels' must be a list of strings")
    codes = _unpack(raw.get("values"), "<u4", shape[0] * shape[1], name).reshape(shape)
    if codes.size and int(codes.max()) > len(levels):
        raise ValueError(f"metric {name}: a value refers to a missing level")
    lookup = np.array([""] + levels, dtype=object)
    return MetricTable(sem, True, instances, lookup[codes], codes > 0)


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
    taken_at, hosts, metrics = doc.get("taken_at"), doc.get("hosts"), doc.get("metrics", {})
    if isinstance(taken_at, bool) or not isinstance(taken_at, (int, float)):
        raise _fail(path, "missing or bad 'taken_at'")
    if not isinstance(hosts, list) or not isinstance(metrics, dict):
        raise _fail(path, "'hosts' must be a list and 'metrics' an object")
    try:
        infos = [_host_from_json(raw, i) for i, raw in enumerate(hosts)]
        if len({h.name for h in infos}) != len(infos):
            raise ValueError("a host is listed twice")
        tables = {name: _table_from_json(name, raw, len(infos)) for name, raw in metrics.items()}
    except ValueError as exc:
        raise _fail(path, str(exc)) from None
    return Snapshot(float(taken_at), {h.name: h for h in infos}, tables, source=str(path))
