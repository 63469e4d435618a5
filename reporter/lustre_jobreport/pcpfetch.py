"""One fetch of every lustreclient metric from one pmcd, through PMAPI or pminfo.

Two backends give the same HostSnapshot:
- "pmapi": PCP's Python bindings (Debian python3-pcp), in-process, one pmFetch for all metrics;
- "cli": one `pminfo -df lustreclient` process per host, for Pythons without the bindings.
Connect and request timeouts bound each host; a host that cannot be read comes back with
ok=False and the reason, never an exception.
"""

from __future__ import annotations

import ctypes
import os
import re
import struct
import subprocess
import threading
import time

import numpy as np

from .metricset import METRIC_ROOT, SNAPSHOT_METRICS, wanted
from .snapfile import SINGULAR, Column, HostSnapshot

try:  # PCP's bindings exist only for the Debian Python; everything else uses pminfo.
    from pcp import pmapi  # type: ignore[import-not-found]
    import cpmapi as c_api  # type: ignore[import-not-found]
    HAVE_PMAPI = True
except ImportError:  # pragma: no cover - depends on the interpreter
    HAVE_PMAPI = False

_SEMS = {1: "counter", 3: "instant", 4: "discrete"}
# pmnsTraverse hands names to one process-wide callback: serialise traversals across threads.
_TRAVERSE_LOCK = threading.Lock()


def set_timeouts(connect_s: float, fetch_s: float) -> dict[str, str]:
    """libpcp reads these once, at its first connection; pminfo gets them per call."""
    env = {"PMCD_CONNECT_TIMEOUT": f"{connect_s:g}", "PMCD_REQUEST_TIMEOUT": f"{fetch_s:g}"}
    os.environ.update(env)
    return env


class Catalog:
    """The metric names, PMIDs and descriptors of a snapshot, looked up on the first host that
    answers and reused for the others: PMIDs and descriptors are fixed by the agent's contract,
    and every lookup saved is two round trips on each of 1,000 hosts. Thread-safe; a host never
    waits for another to fill it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entry: tuple[list[str], object, list[tuple[int, int, int]]] | None = None

    def lookup(self, ctx) -> tuple[list[str], object, list[tuple[int, int, int]]]:
        with self._lock:
            if self._entry is not None:
                return self._entry
        names: list[str] = []
        with _TRAVERSE_LOCK:
            ctx.pmTraversePMNS(METRIC_ROOT, names.append)
        names = [n for n in names if wanted(n)]
        pmids = ctx.pmLookupName(names)
        descs = [(d.contents.indom, d.contents.type, d.contents.sem) for d in ctx.pmLookupDescs(pmids)]
        with self._lock:
            if self._entry is None:
                self._entry = (names, pmids, descs)
            return self._entry


def fetch_pmapi(host: str, spec: str, catalog: Catalog | None = None) -> HostSnapshot:
    try:
        ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, spec)
    except pmapi.pmErr as exc:
        return HostSnapshot(host, spec, ok=False, error=f"cannot connect to pmcd: {exc.message()}")
    try:
        names, pmids, descs = (catalog or Catalog()).lookup(ctx)
        result = ctx.pmFetch(pmids)
        snap = HostSnapshot(host, spec, ok=True, fetched_at=time.time())
        inst_names: dict[int, dict[int, str]] = {}
        try:
            res = result.contents
            for i, (name, (indom, mtype, sem)) in enumerate(zip(names, descs)):
                numval = res.get_numval(i)
                if numval <= 0:
                    continue  # no values now (e.g. no OSTs), or a metric this agent lacks: absent
                insts, values = _values(ctx, res, i, numval, mtype)
                if indom == c_api.PM_INDOM_NULL:
                    labels = [SINGULAR] * len(insts)
                else:
                    if indom not in inst_names:
                        ids, labels = ctx.pmGetInDom(indom=indom)
                        inst_names[indom] = dict(zip(ids or [], labels or []))
                    labels = [inst_names[indom].get(int(inst)) for inst in insts]
                    if None in labels:  # an instance the indom did not list: drop it, keep the rest
                        keep = [j for j, label in enumerate(labels) if label is not None]
                        labels = [labels[j] for j in keep]
                        values = values[keep] if isinstance(values, np.ndarray) else [values[j] for j in keep]
                snap.metrics[name] = Column(labels, values)
                snap.sems[name] = _SEMS.get(sem, "instant")
        finally:
            ctx.pmFreeResult(result)
        return snap
    except pmapi.pmErr as exc:
        return HostSnapshot(host, spec, ok=False, error=f"fetch failed: {exc.message()}")
    finally:
        del ctx


_VLIST_OFFSET = pmapi.pmValueSet.vlist.offset if HAVE_PMAPI else 0
_VALUE = np.dtype([("inst", "<i4"), ("pad", "<i4"), ("ptr", "<u8")])   # struct pmValue, 16 bytes
_BLOCK_U64 = np.dtype([("header", "<u4"), ("value", "<u8")])           # packed pmValueBlock of a u64
_U64_HEADER = (3 << 24) | 12   # vtype PM_TYPE_U64, vlen 12 (gcc bit-fields: vlen low 24 bits)
_PM_VALUE = struct.Struct("<i4xQ")          # struct pmValue: inst, pad, pval/lval
_BLOCK_HEADER_U64 = struct.Struct("<IQ")    # pmValueBlock header + u64


def _values(ctx, res, i: int, numval: int, mtype: int) -> tuple[np.ndarray, np.ndarray | list[str]]:
    """Instance ids and values of one metric in a fetch result.

    pmExtractValue through the bindings costs ~7 us a value: 0.2 s for the 25,000 values of a
    2,048-OSC client, 200 s of one core for a 1,000-host job. For u64 values the pmValue array
    and the value blocks are read as arrays instead: libpcp decodes a fetch PDU into packed
    12-byte blocks, so when the block pointers advance by exactly 12 the blocks are one
    contiguous run and are read in one go; anything else takes the general path.
    """
    valfmt = res.get_valfmt(i)
    vset = ctypes.addressof(res.get_vset(i).contents)
    if numval <= 8 and mtype in (c_api.PM_TYPE_U64, c_api.PM_TYPE_U32):   # numpy costs more than it saves
        out = []
        for j in range(numval):
            inst, word = _PM_VALUE.unpack_from(ctypes.string_at(vset + _VLIST_OFFSET + 16 * j, 16))
            if valfmt == c_api.PM_VAL_INSITU:
                out.append((inst, word & 0xFFFFFFFF))
            else:
                header, value = _BLOCK_HEADER_U64.unpack_from(ctypes.string_at(word, 12))
                if header != _U64_HEADER:
                    break
                out.append((inst, value))
        else:
            return np.array([i for i, _ in out], dtype=np.int32), np.array([v for _, v in out], dtype=np.uint64)
    vlist = np.frombuffer(ctypes.string_at(vset + _VLIST_OFFSET, numval * _VALUE.itemsize), _VALUE)
    if mtype == c_api.PM_TYPE_U32 and valfmt == c_api.PM_VAL_INSITU:   # the value is in the pmValue
        return vlist["inst"], (vlist["ptr"] & 0xFFFFFFFF).astype(np.uint64)
    if mtype == c_api.PM_TYPE_STRING and valfmt != c_api.PM_VAL_INSITU:
        headers = [ctypes.c_uint32.from_address(int(p)).value for p in vlist["ptr"]]
        if all(h >> 24 == c_api.PM_TYPE_STRING for h in headers):   # NUL-terminated vbuf
            return vlist["inst"], [ctypes.string_at(int(p) + 4).decode("utf-8", "replace") for p in vlist["ptr"]]
    if mtype == c_api.PM_TYPE_U64 and valfmt != c_api.PM_VAL_INSITU:
        ptrs = vlist["ptr"].astype(np.int64)
        if numval == 1 or bool(np.all(np.diff(ptrs) == _BLOCK_U64.itemsize)):
            blocks = np.frombuffer(ctypes.string_at(int(ptrs[0]), numval * _BLOCK_U64.itemsize), _BLOCK_U64)
            if bool(np.all(blocks["header"] == _U64_HEADER)):
                return vlist["inst"], blocks["value"].astype(np.uint64)
    values = []
    for j in range(numval):
        atom = ctx.pmExtractValue(valfmt, res.get_vlist(i, j), mtype, mtype)
        value = atom.cp if mtype == c_api.PM_TYPE_STRING else int(atom.dref(mtype))
        values.append(value.decode("utf-8", "replace") if isinstance(value, bytes) else value)
    if mtype == c_api.PM_TYPE_STRING:
        return vlist["inst"], values
    return vlist["inst"], np.array(values, dtype=np.uint64)


# pminfo -df output, one block per metric:
#   lustreclient.llite.open
#       Data Type: 64-bit unsigned int  InDom: 220.0 0x37000000
#       Semantics: counter  Units: count
#       inst [0 or "scratch"] value 5303
_RE_TYPE = re.compile(r"^\s+Data Type: (.+?)\s+InDom:")
_RE_SEM = re.compile(r"^\s+Semantics: (\S+)")
_RE_INST = re.compile(r'^\s+inst \[(-?\d+) or "(.*)"\] value (.*)$')
_RE_VALUE = re.compile(r"^\s+value (.*)$")


def _pminfo_value(text: str, is_string: bool) -> int | str | None:
    if is_string:
        if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
            return text[1:-1]
        return None
    try:
        return int(text)
    except ValueError:
        return None


def parse_pminfo(text: str, host: str, spec: str, fetched_at: float) -> HostSnapshot:
    snap = HostSnapshot(host, spec, ok=True, fetched_at=fetched_at)
    values: dict[str, dict[str, int | str]] = {}
    metric, is_string = None, False
    for line in text.splitlines():
        if line and not line[0].isspace():
            metric, is_string = line.strip(), False
            if not wanted(metric):
                metric = None
            continue
        if metric is None:
            continue
        if m := _RE_TYPE.match(line):
            is_string = m.group(1) == "string"
        elif m := _RE_SEM.match(line):
            snap.sems[metric] = m.group(1)
        elif m := _RE_INST.match(line):
            value = _pminfo_value(m.group(3), is_string)
            if value is not None:
                values.setdefault(metric, {})[m.group(2)] = value
        elif m := _RE_VALUE.match(line):
            value = _pminfo_value(m.group(1), is_string)
            if value is not None:
                values.setdefault(metric, {})[SINGULAR] = value
    # Like the PMAPI backend: a metric without values now is absent, semantics included.
    snap.sems = {m: sem for m, sem in snap.sems.items() if m in values}
    snap.metrics = {m: Column.from_dict(v) for m, v in values.items()}
    return snap


def fetch_cli(host: str, spec: str, timeout_s: float) -> HostSnapshot:
    try:
        proc = subprocess.run(["pminfo", "-h", spec, "-df", *SNAPSHOT_METRICS], capture_output=True,
                              text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        return HostSnapshot(host, spec, ok=False, error="pminfo not found (install pcp)")
    except subprocess.TimeoutExpired:
        return HostSnapshot(host, spec, ok=False, error=f"no answer within {timeout_s:g} s")
    fetched_at = time.time()
    if proc.returncode != 0 and not proc.stdout.strip():
        reason = (proc.stderr.strip().splitlines() or ["pminfo failed"])[-1]
        return HostSnapshot(host, spec, ok=False, error=f"cannot fetch: {reason}")
    return parse_pminfo(proc.stdout, host, spec, fetched_at)
