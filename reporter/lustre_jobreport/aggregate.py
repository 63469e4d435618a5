"""Per-filesystem totals of a job: llite volume and ops, RPC-size histograms, per OST, per host.

Sums over the reset-aware delta matrices (hosts x instances). Sums are exact: a uint64 sum over
hosts could wrap past 2^64 (two counters near 2^63 summed to 10), so columns are summed as two
32-bit halves (exact for up to 2^32 hosts) and joined as Python ints; values leave this module as
Python ints (JSON must not round them). Each host's delta is below 2^63 (diff.DELTA_LIMIT); a
sum over hosts that reaches it is kept exact and said (VALUE_TOO_LARGE): a job record, whose
columns are int64, keeps it as null. Which metric is a volume, an operation, a histogram or a
per-OST figure is the catalog's to say.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from . import catalog
from .catalog import P, size_bytes
from .diff import DELTA_LIMIT, DeltaTable, Issue, JobDelta, fs_of, rows_of
from .hostsnap import summarise

VOLUME = tuple(m.key for m in catalog.with_role(catalog.VOLUME))          # read_bytes, write_bytes, ...
OST_FIELDS = tuple(m.key for m in catalog.with_role(catalog.OST_VOLUME))  # read_bytes, ..., write_rpcs
@dataclass
class FsTotals:
    name: str
    read_bytes: int = 0
    write_bytes: int = 0
    read_calls: int = 0
    write_calls: int = 0
    ops: dict[str, int] = field(default_factory=dict)
    rpc: dict[str, dict[str, int]] = field(default_factory=lambda: {"read": {}, "write": {}})
    osts: dict[str, dict[str, int | float | None]] = field(default_factory=dict)
    hosts: dict[str, dict[str, int]] = field(default_factory=dict)
    ost_count: int = 0
    trouble: list[dict] = field(default_factory=list)   # targets that reconnected or were not FULL
    trouble_total: int = 0                              # ... all of them, when the list is cut
    # When some host's counters of this filesystem were not all counted: read bytes over the
    # hosts whose were, what flags comparing two stats files (llite against osc) may compare
    # (see _same_hosts_basis). None: every host counted, the totals are the basis.
    basis_read_bytes: int | None = None
    basis_osc_read_bytes: int | None = None
    basis_hosts_left_out: int = 0
    # What compare needs beyond the report's own lines (DESIGN §3, report JSON): per-call latency
    # sums (2.14+), read-ahead counters, hybrid I/O counters. A value is None unless every host
    # of the filesystem gave it at both ends: a sum over some hosts would pass for the job's.
    latency_us: dict[str, int | None] = field(default_factory=dict)
    readahead: dict[str, int | None] = field(default_factory=dict)
    hybrid: dict[str, int | None] = field(default_factory=dict)

    def read_basis(self) -> tuple[int, int]:
        """(OST read bytes, llite read bytes) over the same hosts."""
        if self.basis_read_bytes is None or self.basis_osc_read_bytes is None:
            return self.ost_sum("read_bytes"), self.read_bytes
        return self.basis_osc_read_bytes, self.basis_read_bytes

    @property
    def bytes_moved(self) -> int:
        return self.read_bytes + self.write_bytes

    def ost_sum(self, key: str) -> int:
        return sum(int(o[key] or 0) for o in self.osts.values())

    def host_bytes(self) -> dict[str, int]:
        return {h: v.get("read_bytes", 0) + v.get("write_bytes", 0) for h, v in self.hosts.items()}

    def spread(self) -> dict | None:
        """Bytes moved per host: min, median, max and the host that moved most (2+ hosts)."""
        per_host = self.host_bytes()
        if len(per_host) < 2:
            return None
        ordered = sorted(per_host.values())
        mid = len(ordered) // 2
        median = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) // 2
        top = max(per_host, key=lambda h: (per_host[h], h))
        return {"hosts": len(ordered), "min": ordered[0], "median": median, "max": ordered[-1], "max_host": top}

    def to_json(self) -> dict:
        return {"read_bytes": self.read_bytes, "write_bytes": self.write_bytes,
                "read_calls": self.read_calls, "write_calls": self.write_calls,
                "ops": self.ops, "rpc": self.rpc, "osts": self.osts, "hosts": self.hosts,
                "ost_count": self.ost_count, "spread": self.spread(), "trouble": self.trouble,
                "latency_us": self.latency_us, "readahead": self.readahead, "hybrid": self.hybrid}


def _present_instances(delta: JobDelta, metric: str) -> list[str]:
    """Instances of a metric that exist at the end on any host of the job."""
    t = delta.end_snapshot.metrics.get(metric)
    if t is None:
        return []
    have = t.present[rows_of(delta.end_snapshot, delta.hosts)].any(axis=0)
    return [name for name, ok in zip(t.instances, have) if ok]


def exact_sum(values: np.ndarray, axis: int) -> np.ndarray:
    """Sum of uint64 values as Python ints (object array), exact however large."""
    values = np.asarray(values, dtype=np.uint64)
    low = (values & np.uint64(0xFFFFFFFF)).sum(axis=axis, dtype=np.uint64)
    high = (values >> np.uint64(32)).sum(axis=axis, dtype=np.uint64)
    return np.array([(int(h) << 32) + int(l) for h, l in zip(np.ravel(high), np.ravel(low))],
                    dtype=object).reshape(np.shape(low))


def _totals(t: DeltaTable) -> dict[str, int]:
    """Instance -> delta summed over hosts."""
    return dict(zip(t.instances, exact_sum(t.delta, axis=0).tolist()))


def aggregate(delta: JobDelta) -> dict[str, FsTotals]:
    filesystems = sorted(_present_instances(delta, catalog.DEVICE_METRIC[catalog.FS]))
    out = {fs: FsTotals(fs) for fs in filesystems}
    osc_devices = {d for m in catalog.with_role(catalog.OST_VOLUME, catalog.OST_WAIT, catalog.STATE, catalog.DEVICE)
                   if m.indom == catalog.OSC for d in _present_instances(delta, m.name)}
    buckets: dict[str, list[str]] = {}
    for metric in catalog.names(catalog.RPC_HISTOGRAM):
        # the buckets the agents export at the end; read through the job view (no end values
        # of the histogram), those its deltas have: the agent sends every bucket counted, zeros too
        table = delta.tables.get(metric)
        exported = (_present_instances(delta, metric) if metric in delta.end_snapshot.metrics
                    else table.instances if table is not None else [])
        for inst in exported:
            fs, _, size = inst.rpartition(":")
            if not catalog.is_size_label(size):
                delta.issues.append(Issue("METRIC_TYPE", None, fs or None,
                                          f"{metric} has an instance {inst!r} that is not an RPC size: left out"))
                continue
            if size not in buckets.setdefault(fs, []):
                buckets[fs].append(size)
    tables = delta.tables

    # llite: one column per filesystem; volumes and the catalogued operations only
    llite = {m.key: tables[m.name] for m in catalog.with_role(catalog.VOLUME, catalog.OP) if m.name in tables}
    op_keys = [m.key for m in catalog.with_role(catalog.OP)]
    for fs, t in out.items():
        t.ost_count = sum(1 for d in osc_devices if fs_of(d) == fs)
        vals = {name: _totals(tab).get(fs, 0) for name, tab in llite.items()}
        for name in VOLUME:
            setattr(t, name, vals.get(name, 0))
        t.ops = {op: vals.get(op, 0) for op in catalog.SHOWN_OPS}
        t.ops.update({op: vals[op] for op in sorted(op_keys) if op in vals and op not in t.ops})
        for r, host in enumerate(delta.hosts):
            per_host = {name: int(tab.delta[r, tab.instances.index(fs)]) for name, tab in llite.items()
                        if fs in tab.instances and tab.counted[r, tab.instances.index(fs)]}
            if per_host:
                t.hosts[host] = per_host

    # RPC-size histograms per filesystem, every bucket the agents export, zeros kept
    for m in catalog.with_role(catalog.RPC_HISTOGRAM):
        tab = tables.get(m.name)
        sums = _totals(tab) if tab is not None else {}
        for fs, t in out.items():
            labels = sorted(buckets.get(fs, []), key=size_bytes)
            t.rpc[m.key] = {label: sums.get(f"{fs}:{label}", 0) for label in labels}

    # per OST: bytes and RPCs through it, and the mean wait of its requests
    osc = {m.key: _totals(tables[m.name]) for m in catalog.with_role(catalog.OST_VOLUME, catalog.OST_WAIT)
           if m.name in tables}
    for fs, t in out.items():
        devices = sorted(d for d in osc_devices if fs_of(d) == fs)
        for device in devices:
            entry: dict[str, int | float | None] = {k: osc.get(k, {}).get(device, 0) for k in OST_FIELDS}
            if not any(entry.values()):
                continue   # pings and other background requests do not make an OST "used"
            count, wait = osc.get("req_count", {}).get(device, 0), osc.get("req_waittime", {}).get(device, 0)
            entry["wait_us_mean"] = round(wait / count, 1) if count else None
            t.osts[device[len(fs) + 1:]] = entry
    _job_wide_counters(delta, out)
    _target_trouble(delta, out)
    _same_hosts_basis(delta, out)
    _say_sums_past_int64(delta, out)
    return out


def _past_int64(doc: Any, path: tuple[str, ...] = ()) -> Iterator[str]:
    """The names ('rpc read 4K', 'osts OST0003 read_bytes') of the counts in doc of 2^63 or more."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from _past_int64(value, path + (str(key),))
    elif isinstance(doc, list):
        for value in doc:
            yield from _past_int64(value, path)
    elif isinstance(doc, int) and not isinstance(doc, bool) and doc >= int(DELTA_LIMIT):
        yield " ".join(path)


def _say_sums_past_int64(delta: JobDelta, out: dict[str, FsTotals]) -> None:
    """A filesystem's figures that add up to 2^63 or more over the job's hosts (each host's is
    below it): exact on the report, said, as the job record cannot keep them."""
    for fs, t in out.items():
        names = sorted(set(_past_int64(t.to_json())))
        if names:
            delta.issues.append(Issue("VALUE_TOO_LARGE", None, fs,
                                      f"{fs}: {summarise(names)} add up to 2^63 or more over the job's hosts: "
                                      "exact here, but past what a job record keeps (int64), where they are null"))


def _job_wide_counters(delta: JobDelta, out: dict[str, FsTotals]) -> None:
    """Latency, read-ahead and hybrid I/O sums per filesystem, each only where every host that
    has the filesystem mounted at the end gave the counter at both ends (else None)."""
    mounts = delta.end_snapshot.metrics.get(catalog.DEVICE_METRIC[catalog.FS])
    rows = rows_of(delta.end_snapshot, delta.hosts)
    for role, attr in ((catalog.LATENCY, "latency_us"), (catalog.READAHEAD, "readahead"),
                       (catalog.HYBRID, "hybrid")):
        for m in catalog.with_role(role):
            tab = delta.tables.get(m.name)
            for fs, t in out.items():
                value = None
                col = tab.instances.index(fs) if tab is not None and fs in tab.instances else None
                mcol = mounts.column(fs) if mounts is not None else None
                if col is not None and mcol is not None:
                    mounted = mounts.present[rows, mcol]
                    if mounted.any() and tab.counted[mounted, col].all():
                        value = int(exact_sum(tab.delta[mounted, col], axis=0))
                getattr(t, attr)[m.key] = value


def _same_hosts_basis(delta: JobDelta, out: dict[str, FsTotals]) -> None:
    """llite and osc read bytes summed over the same hosts: those whose every counter of the
    filesystem was counted. A host with its llite stats unreadable but its osc stats read would
    otherwise make the OSTs look as if they sent more than the job read."""
    llite = delta.tables.get(P + "llite.read_bytes")
    osc = delta.tables.get(P + "osc.read_bytes")
    for fs, t in out.items():
        complete = np.array([fs not in delta.incomplete.get(h, ()) for h in delta.hosts], dtype=bool)
        t.basis_hosts_left_out = int((~complete).sum())
        if not t.basis_hosts_left_out:
            continue
        for table, attr in ((llite, "basis_read_bytes"), (osc, "basis_osc_read_bytes")):
            cols = table.fs == fs if table is not None else np.zeros(0, dtype=bool)
            rows = table.delta[complete][:, cols] if cols.any() else np.zeros((0, 0), dtype=np.uint64)
            setattr(t, attr, int(exact_sum(rows, axis=1).sum()))


def _target_trouble(delta: JobDelta, out: dict[str, FsTotals], limit: int = 50) -> None:
    """OSCs/MDCs that reconnected during the job or were not FULL at its end, per host
    (at most `limit` listed per filesystem, the most reconnected first)."""
    end = delta.end_snapshot
    rows = rows_of(end, delta.hosts)
    found: dict[str, list[dict]] = {}
    for kind in (catalog.OSC, catalog.MDC):
        reconnects = next((delta.tables[m.name] for m in catalog.with_role(catalog.RECONNECTS)
                           if m.indom == kind and m.name in delta.tables), None)
        states = next((end.metrics[m.name] for m in catalog.with_role(catalog.STATE)
                       if m.indom == kind and m.name in end.metrics), None)
        entries: dict[tuple[int, str], dict] = {}
        if reconnects is not None:
            for r, c in zip(*np.nonzero(reconnects.delta)):
                entries[(int(r), reconnects.instances[c])] = {"reconnects": int(reconnects.delta[r, c])}
        state_at: dict[tuple[int, str], str] = {}
        if states is not None and len(rows):
            values, present = states.values[rows], states.present[rows]
            not_full = present & (values != "FULL")
            for r, c in zip(*np.nonzero(not_full)):
                entries.setdefault((int(r), states.instances[c]), {"reconnects": 0})
            col = {name: i for i, name in enumerate(states.instances)}
            for (r, target) in entries:
                c = col.get(target)
                if c is not None and present[r, c]:
                    state_at[(r, target)] = values[r, c]
        for (r, target), e in entries.items():
            found.setdefault(fs_of(target), []).append(
                {"host": delta.hosts[r], "target": target, "reconnects": e["reconnects"],
                 "state": state_at.get((r, target))})
    for fs, entries in found.items():
        if fs in out:
            entries.sort(key=lambda e: (-e["reconnects"], e["state"] == "FULL", e["host"], e["target"]))
            out[fs].trouble = entries[:limit]
            out[fs].trouble_total = len(entries)
