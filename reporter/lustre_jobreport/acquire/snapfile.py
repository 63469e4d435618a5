"""Snapshots: what one `snapshot` call saw on every host, in memory and as a JSON file.

In memory a snapshot is one table per metric: a matrix of hosts x instances (uint64 for
counters, gauges and start times, str for strings) with a mask of the values that exist, so
that diffs and sums over 1,000 hosts x 2,048 OSCs are array operations. Each table keeps the
metric's PMID: the agent's cluster in it names the stats file the values came from.

The file (snapformat.py has the envelope and the bounds on reading) is JSON: host list, then per
metric its PMID, semantics, instance names and values; integer matrices are packed
(little-endian u64, zlib, base64) because a large job's snapshot holds tens of millions of
values. Readers accept any older "lustre-jobreport/<n>" schema and reject newer ones with a
clear error. The prolog writes snapshots, so this module imports numpy but no Jinja2.
"""

from __future__ import annotations

import base64
import functools
import json
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from .. import catalog
from . import hostsnap, jobanswer, snapformat
from ..safeio.atomicfile import replacing
from .column import SINGULAR, Value
from .hostsnap import HostSnapshot
from .snapformat import fail as _fail

SEMANTICS = ("counter", "instant", "discrete")
__all__ = ["MetricTable", "Snapshot", "read", "write"]


@dataclass
class MetricTable:
    """One metric on every host: values[h, i] of host row h and instance i where present[h, i]."""
    sem: str
    is_string: bool
    instances: list[str]
    values: np.ndarray   # (hosts, instances): uint64, or object (str) for strings
    present: np.ndarray  # (hosts, instances): bool
    pmid: str | None = None   # "220.2.10" as the agent gave it (None: a schema 1 file)

    def column(self, instance: str) -> int | None:
        try:
            return self.instances.index(instance)
        except ValueError:
            return None


@dataclass
class Snapshot:
    taken_at: float
    hosts: dict[str, HostSnapshot]           # in row order of every MetricTable (without values)
    metrics: dict[str, MetricTable]
    source: str = ""                         # the file it was read from, for messages
    job_id: str | None = None                # the job it was taken for (None: a file naming none)
    timeline: Any = None                     # the job's hosts' timelines summed (fetched with the
                                             # job view: snapshot.fetch_all series_sum); never in a file

    @property
    def host_names(self) -> list[str]:
        return list(self.hosts)

    @classmethod
    def from_hosts(cls, taken_at: float, fetched: Iterable[HostSnapshot], *, consume: bool = False,
                   job_id: str | None = None, timeline: Any = None) -> "Snapshot":
        """Stack per-host fetches into per-metric tables (raw pminfo answers are parsed here).
        consume: each host's values of a metric are let go once that metric is stacked, so that
        a 12,000-host snapshot is not held twice over (the hosts are left without metrics).
        job_id: the job the snapshot was taken for; timeline: the sums of its hosts' timelines.

        Hosts of one job nearly always list the same instances in the same order, so a host
        whose instance list equals the table's is copied in one row assignment; others are
        placed instance by instance. A host whose answer lists an instance twice is taken as
        unreadable (its numbers would be ambiguous); a host answering a metric with another
        type than the catalog declares has that metric left out (diff then says so).
        """
        with hostsnap.cyclic_gc_paused():
            snap = cls._stack(taken_at, list(fetched), consume, job_id)
        snap.timeline = timeline
        return snap

    @classmethod
    def _stack(cls, taken_at: float, fetched: list[HostSnapshot], consume: bool, job_id: str | None) -> "Snapshot":
        repeats: dict[int, tuple[list, bool]] = {}   # per distinct instance list: names one twice?
        fetched = [_parsed(h, repeats) for h in fetched]
        hosts = {h.host: h.header() for h in fetched}
        names: dict[str, None] = {}
        plans: set[int] = set()
        for h in fetched:
            if h.answer is None:
                names.update(dict.fromkeys(h.metrics))
            elif id(h.answer.plan) not in plans:
                plans.add(id(h.answer.plan))
                names.update(dict.fromkeys(c[0] for c in h.answer.plan.columns))
        blocks = _answer_blocks(fetched, consume)
        names.update(dict.fromkeys(blocks))     # the scattered members some host sent
        # the hosts' semantics and PMIDs, each dict once (hosts read by their answers share theirs)
        host_sems = list({id(h.sems): h.sems for h in fetched}.values())
        host_pmids = list({id(h.pmids): h.pmids for h in fetched}.values())
        metrics = {}
        for metric in names:
            # (row, column, whether its values are strings) of the hosts that have the metric
            columns = [(row, c, not isinstance(c.values, np.ndarray)) for row, h in enumerate(fetched)
                       if (c := h.metrics.get(metric)) is not None]
            # the hosts read by their answers (jobanswer.Block)
            stacked = blocks.pop(metric, [])
            declared = catalog.get(metric)
            if declared is not None:
                is_string = declared.kind == "string"
            else:   # not in the catalog: the type most hosts gave
                given = [(1, s) for _, _, s in columns] + [(len(np.unique(b.rows)), b.is_string) for b in stacked]
                is_string = 2 * sum(n for n, s in given if s) > sum(n for n, _ in given)
            # A counter only if every host's agent says so: were one host's value instant, summing
            # it as a counter would be wrong, so any other word wins and diff leaves the metric out.
            sems = {d.get(metric) for d in host_sems} - {None}
            sem = "counter" if sems == {"counter"} else min(sems - {"counter"}, default="instant")
            pmid = next((d[metric] for d in host_pmids if metric in d), None)
            # Hosts fetched together share their instance lists (pcpfetch.Catalog hands out one
            # list per distinct listing): each distinct list is looked at once, not per host.
            # (in the hosts' order, whichever way each was read: the tables' columns do not depend
            # on it)
            instances: dict[str, None] = {}
            lists = sorted([(row, c.instances) for row, c, s in columns if s == is_string]
                           + [(int(b.rows[0]), b.labels) for b in stacked if b.is_string == is_string and len(b.rows)],
                           key=lambda first: first[0])
            distinct = {id(names_of_host): names_of_host for _, names_of_host in lists}
            for names_of_host in distinct.values():
                instances.update(dict.fromkeys(names_of_host))
            order = list(instances)
            in_order = {key: names_of_host == order for key, names_of_host in distinct.items()}
            col = {name: i for i, name in enumerate(order)}
            shape = (len(fetched), len(order))
            values = np.full(shape, "", dtype=object) if is_string else np.zeros(shape, dtype=np.uint64)
            present = np.zeros(shape, dtype=bool)
            for row, c, s in columns:
                if s != is_string:
                    continue      # another type than the catalog's: left out (diff says so)
                if in_order[id(c.instances)]:
                    values[row] = c.values
                    present[row] = True
                elif len(c.instances) == 1:       # a sparse answer (a job view delta): one value
                    values[row, col[c.instances[0]]] = c.values[0]
                    present[row, col[c.instances[0]]] = True
                else:
                    idx = np.array([col[i] for i in c.instances], dtype=np.intp)
                    values[row, idx] = c.values
                    present[row, idx] = True
            for b in stacked:
                if b.is_string != is_string or not len(b.rows):
                    continue
                if b.cols is not None:       # one value a (row, instance): the scattered members'
                    cols = b.cols if in_order[id(b.labels)] else \
                        np.array([col[i] for i in b.labels], dtype=np.intp)[b.cols]
                    at = (b.rows, cols)
                else:
                    at = (b.rows, slice(None)) if in_order[id(b.labels)] else \
                        np.ix_(b.rows, np.array([col[i] for i in b.labels], dtype=np.intp))
                values[at] = b.values
                present[at] = True
            metrics[metric] = MetricTable(sem, is_string, order, values, present, pmid)
            if consume:
                del columns, stacked
                for h in fetched:
                    h.metrics.pop(metric, None)
        return cls(taken_at, hosts, metrics, job_id=job_id)

    def cluster(self, metric: str) -> int | None:
        """The agent cluster (stats file) a metric's values came from."""
        table = self.metrics.get(metric)
        return catalog.cluster_of_pmid(table.pmid if table else None, metric)

    @functools.cached_property
    def _row_index(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.hosts)}

    def row(self, host: str) -> int:
        """The tables' row of a host of this snapshot."""
        return self._row_index[host]

    def value(self, metric: str, host: str, instance: str = SINGULAR) -> Value | None:
        """One value, for the few places that need a single one (version, mount ids)."""
        table = self.metrics.get(metric)
        if table is None or host not in self.hosts:
            return None
        row, col = self.row(host), table.column(instance)
        if col is None or not table.present[row, col]:
            return None
        v = table.values[row, col]
        return v if table.is_string else int(v)

    def instance_values(self, metric: str, host: str) -> dict[str, Value]:
        table = self.metrics.get(metric)
        if table is None or host not in self.hosts:
            return {}
        row = self.row(host)
        return {inst: (table.values[row, i] if table.is_string else int(table.values[row, i]))
                for i, inst in enumerate(table.instances) if table.present[row, i]}


def _answer_blocks(fetched: list[HostSnapshot], consume: bool) -> dict[str, list[jobanswer.Block]]:
    """The hosts read by their job slot's answer (jobanswer.Row), stacked a plan (an answer's
    shape) at a time: metric -> its Blocks, their rows the tables'. consume: each host's values
    are let go once its plan is stacked."""
    by_plan: dict[int, tuple[object, list[int]]] = {}
    for row, h in enumerate(fetched):
        if h.answer is not None:
            by_plan.setdefault(id(h.answer.plan), (h.answer.plan, []))[1].append(row)
    out: dict[str, list] = {}
    for plan, rows in by_plan.values():
        answers = [fetched[r].answer for r in rows]
        at = np.array(rows, dtype=np.intp)
        for b in jobanswer.blocks(plan, answers):
            b.rows = at[b.rows]
            out.setdefault(b.name, []).append(b)
        if consume:
            for r in rows:
                fetched[r].answer = None
    return out


def _parsed(h: HostSnapshot, repeats: dict[int, tuple[list, bool]]) -> HostSnapshot:
    """A host's fetch with its raw pminfo text parsed, and checked for repeated instances.
    repeats: the verdict per instance list already checked (hosts fetched together share their
    lists: 600 names a metric need not be hashed again for each of 12,000 hosts), keyed by id()
    and holding the list, so that no list seen is freed and its id given to another."""
    if h.ok and h.pminfo is not None:
        from .pminfoparse import parse_pminfo
        h = parse_pminfo(h.pminfo.decode("utf-8", "replace"), h.host, h.spec, h.fetched_at or 0.0)
    listed = ((name, c.instances) for name, c in h.metrics.items()) if h.answer is None else \
        ((column[0], column[4]) for column in h.answer.plan.columns)
    for name, instances in listed:
        if len(instances) < 2:
            continue                      # nothing to repeat
        seen = repeats.get(id(instances))
        if seen is None:
            seen = repeats[id(instances)] = (instances, len(set(instances)) != len(instances))
        if seen[1]:
            return hostsnap.failed(h.host, h.spec, hostsnap.fetch_failed(f"{name} lists an instance twice"))
    return h


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
    """The `count` values of a packed array; its inflated size may not pass what they need
    (inflated into one buffer of that size, which the array then uses as it is)."""
    if not isinstance(text, str) or text[:2] not in ("z:", "r:"):
        raise ValueError(f"{where}: packed data must be a 'z:' or 'r:' string")
    raw = snapformat.b64decode(text[2:], where)
    need = count * np.dtype(dtype).itemsize
    if text[0] == "z":
        raw = snapformat.inflate(raw, need, where, preallocate=True)
    if len(raw) != need:
        raise ValueError(f"{where}: {len(raw) // np.dtype(dtype).itemsize} packed values, expected {count}")
    return np.frombuffer(raw, dtype=dtype)


def _factorize(values: np.ndarray) -> tuple[list[str], np.ndarray]:
    """The distinct strings, in order of first appearance, and each value's index among them:
    one pass through a dict, ~20x faster than np.unique's sort of Python strings, which was
    44 % of a 12,000-host spool write (600 OSC device names a host)."""
    index: dict[str, int] = {}
    codes = np.fromiter((index.setdefault(str(v), len(index)) for v in values), dtype="<u4", count=len(values))
    return list(index), codes


def _table_to_json(t: MetricTable) -> dict[str, Any]:
    doc: dict[str, Any] = {"pmid": t.pmid, "sem": t.sem, "type": "string" if t.is_string else "u64",
                           "instances": t.instances}
    if t.is_string:
        # few distinct strings (import states, versions): levels + packed codes, 0 = absent
        levels, codes = _factorize(t.values[t.present])
        packed = np.zeros(t.values.shape, dtype="<u4")
        packed[t.present] = codes + 1
        doc["levels"] = levels
        doc["values"] = _pack(packed)
    else:
        doc["values"] = _pack(t.values.astype("<u8"))
        doc["present"] = _pack(np.packbits(t.present, axis=None))
    return doc


def _header(s: Snapshot) -> dict[str, Any]:
    return {**snapformat.envelope(s.taken_at, s.job_id),
            "hosts": [snapformat.host_to_json(h) for h in s.hosts.values()],
            "encoding": "u64 values: little-endian u64; present: packbits; strings: levels + little-endian "
                        "u32 codes (0 absent, i+1 levels[i]); each base64, zlib-compressed when prefixed z:; "
                        "start times in microseconds"}


def to_json(s: Snapshot) -> dict[str, Any]:
    return {**_header(s), "metrics": {name: _table_to_json(t) for name, t in s.metrics.items()}}


def write(snapshot: Snapshot, path: str | Path) -> None:
    """Write atomically (temp file + rename) so a reader never sees half a snapshot. (What
    snapshot.fetch_all returns writes itself: snapshot.Fetched.write.) The same JSON as
    to_json, written one metric at a time: a 12,000-host snapshot's packed tables are hundreds
    of MB, and the whole document is never in memory at once."""
    def dump(doc: Any) -> str:
        return json.dumps(doc, separators=(",", ":"), allow_nan=False)

    header = dump(_header(snapshot))
    with replacing(Path(path)) as out:
        out.write(header[:-1] + ',"metrics":{')
        for i, (name, table) in enumerate(snapshot.metrics.items()):
            out.write(("," if i else "") + dump(name) + ":" + dump(_table_to_json(table)))
        out.write("}}")
        out.write("\n")


def _host_from_json(raw: Any, i: int, legacy_raw: bool) -> tuple[HostSnapshot, str | None]:
    """A host entry (name, spec, ok, error, fetched_at) and, in the raw form, its pminfo text as
    packed in the file (unpacked host by host when it is parsed: _read_raw)."""
    if not isinstance(raw, dict):
        raise ValueError(f"host #{i} is not an object")
    name, spec = raw.get("name"), raw.get("spec", raw.get("name"))
    error = raw.get("error")
    ok = error is None if legacy_raw else raw.get("ok")
    if not isinstance(name, str) or not isinstance(spec, str) or not isinstance(ok, bool):
        raise ValueError(f"host #{i}: needs a string 'name' and 'spec' and a true/false 'ok'")
    fetched_at = raw.get("fetched_at")
    if fetched_at is not None:
        fetched_at = snapformat.epoch(fetched_at, f"fetched_at of host {name}")
    h = HostSnapshot(name, spec, ok, None if error is None else str(error), fetched_at)
    packed = raw.get("pminfo_z") if ok else None
    if packed is not None and not isinstance(packed, str):
        raise ValueError(f"pminfo text of {name}: packed data must be a string")
    return h, packed


def _table_from_json(name: str, raw: Any, n_hosts: int, version: int) -> MetricTable:
    if not isinstance(raw, dict):
        raise ValueError(f"metric {name} is not an object")
    sem, kind, instances, pmid = raw.get("sem"), raw.get("type"), raw.get("instances"), raw.get("pmid")
    if sem not in SEMANTICS or kind not in ("u64", "string"):
        raise ValueError(f"metric {name}: bad sem {sem!r} or type {kind!r}")
    if not isinstance(instances, list) or not all(isinstance(i, str) for i in instances):
        raise ValueError(f"metric {name}: 'instances' must be a list of names")
    if len(set(instances)) != len(instances):
        raise ValueError(f"metric {name}: an instance is listed twice")
    if pmid is not None and not isinstance(pmid, str):
        raise ValueError(f"metric {name}: bad pmid {pmid!r}")
    shape = (n_hosts, len(instances))
    if kind == "u64":
        # no copies: the values stay in the buffer they were inflated into, present in unpackbits' 0/1
        values = _unpack(raw.get("values"), "<u8", shape[0] * shape[1], name).reshape(shape)
        bits = _unpack(raw.get("present"), "u1", (shape[0] * shape[1] + 7) // 8, name + " present")
        present = np.unpackbits(bits, count=shape[0] * shape[1]).view(bool).reshape(shape)
        values = values.astype(np.uint64, copy=False)
        declared = catalog.get(name)
        if version < 2 and declared is not None and declared.role == catalog.START:
            values = values * np.uint64(catalog.START_UNIT_US)   # schema 1: whole seconds
        return MetricTable(sem, False, instances, values, present, pmid)
    levels = raw.get("levels")
    if not isinstance(levels, list) or not all(isinstance(v, str) for v in levels):
        raise ValueError(f"metric {name}: 'levels' must be a list of strings")
    codes = _unpack(raw.get("values"), "<u4", shape[0] * shape[1], name).reshape(shape)
    if codes.size and int(codes.max()) > len(levels):
        raise ValueError(f"metric {name}: a value refers to a missing level")
    lookup = np.array([""] + levels, dtype=object)
    return MetricTable(sem, True, instances, lookup[codes], codes > 0, pmid)


def _declared_values(metrics: dict, n_hosts: int) -> int:
    """The values the tables declare (what is no list of instances is refused later, by name)."""
    return sum(n_hosts * len(m["instances"]) for m in metrics.values()
               if isinstance(m, dict) and isinstance(m.get("instances"), list))


def read(path: str | Path, opened=None) -> Snapshot:
    """A snapshot file of any schema this reader knows, in either form (see snapformat).
    opened: the file already open (binary), e.g. one the spool unlinked before reading it.
    A file within the caps that this process has not the memory for (ulimit -v) raises
    snapformat.TooLargeForMemory, naming the file."""
    path = Path(path)
    try:
        return _read(path, opened)
    except MemoryError:
        pass   # raised below, once the frames holding what was read are gone
    raise snapformat.TooLargeForMemory(f"{path}: needs more memory to read than this process may use")


def _read(path: Path, opened) -> Snapshot:
    doc = snapformat.load_json(path, opened)
    version = snapformat.check_header(path, doc)
    legacy_raw = doc.get("kind") == snapformat.LEGACY_RAW_KIND
    hosts, metrics = doc.get("hosts"), doc.get("metrics", {})
    if not isinstance(hosts, list) or not isinstance(metrics, dict):
        raise _fail(path, "'hosts' must be a list and 'metrics' an object")
    try:
        taken_at = snapformat.epoch(doc.get("taken_at"), "taken_at")
        job_id = snapformat.job_id_of(doc)
        entries = [_host_from_json(raw, i, legacy_raw) for i, raw in enumerate(hosts)]
        del hosts, doc   # the packed texts are held by entries alone: each is let go once parsed
        if len({h.host for h, _ in entries}) != len(entries):
            raise ValueError("a host is listed twice")
        if _declared_values(metrics, len(entries)) > snapformat.MAX_TABLE_VALUES:
            raise ValueError(f"its tables declare more than the {snapformat.MAX_TABLE_VALUES:,} values "
                             "a snapshot may hold")
        raw_form = any(packed is not None for _, packed in entries)
        if raw_form and metrics:
            raise ValueError("hosts with pminfo text and metric tables in one file")
        if raw_form or legacy_raw:
            snap = Snapshot.from_hosts(taken_at, _parsed_hosts(entries), job_id=job_id)
            snap.source = str(path)
            return snap
        tables = {name: _table_from_json(name, raw, len(entries), version) for name, raw in metrics.items()}
    except ValueError as exc:
        raise _fail(path, str(exc)) from None
    return Snapshot(taken_at, {h.host: h for h, _ in entries}, tables, source=str(path), job_id=job_id)


def _parsed_hosts(entries: list[tuple[HostSnapshot, str | None]]) -> list[HostSnapshot]:
    """The raw form's hosts, each pminfo text unpacked, inflated (bounded), parsed and let go
    before the next: memory holds one text at a time besides the values parsed. Hosts that list
    the same instances share one list, as hosts fetched together do (a job's hosts have the
    same OSCs: their values are then all each one keeps). The tables they stack into (hosts x
    every instance any host lists) are bounded like the tables form's: hosts that each list
    other instances would make them hosts^2 large."""
    from .pminfoparse import parse_pminfo

    lists: dict[tuple[str, ...], list[str]] = {}
    columns: set[tuple[str, int]] = set()    # (metric, id of a distinct instance list) seen
    width, left = 0, snapformat.MAX_RAW_BYTES
    for i, (h, packed) in enumerate(entries):
        if h.ok and packed is None:
            raise ValueError(f"host {h.host} was read but carries no pminfo text")
        if packed is None:
            continue
        entries[i] = (h, None)
        text, nbytes = _inflated_text(packed, h.host, left)
        left -= nbytes
        del packed
        parsed = parse_pminfo(text, h.host, h.spec, h.fetched_at or 0.0)
        del text
        for name, column in parsed.metrics.items():
            column.instances = lists.setdefault(tuple(column.instances), column.instances)
            if (name, id(column.instances)) not in columns:
                columns.add((name, id(column.instances)))
                width += len(column.instances)    # the tables' columns, at most
        if len(entries) * width > snapformat.MAX_RAW_VALUES:
            raise ValueError(f"its pminfo texts make tables of more than the {snapformat.MAX_RAW_VALUES:,} "
                             "values (hosts x instances) the raw form may hold")
        entries[i] = (parsed, None)
    return [h for h, _ in entries]


def _inflated_text(packed: str, host: str, left: int) -> tuple[str, int]:
    """One host's pminfo text and its size in bytes (what the caps count), within the cap a
    host and the `left` of the file's cap."""
    where = f"pminfo text of {host}"
    cap = min(snapformat.MAX_RAW_BYTES_PER_HOST, left)
    try:
        text = snapformat.inflate(snapformat.b64decode(packed, where), cap, where)
    except snapformat.InflatesPast:
        if cap < snapformat.MAX_RAW_BYTES_PER_HOST:
            raise ValueError(f"its pminfo texts inflate past {snapformat.MAX_RAW_BYTES:,} bytes") from None
        raise
    return text.decode("utf-8", "replace"), len(text)
