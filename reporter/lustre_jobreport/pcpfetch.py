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
import subprocess
import threading
import time

from .snapfile import SINGULAR, HostSnapshot

METRIC_ROOT = "lustreclient"
# Per-OSC RPC-size histograms are 2 x 15 values per OST: 61,440 per client on a 2,048-OSC
# machine. The report takes histograms per filesystem (lustreclient.fs.rpc.*), so snapshots
# leave them out; they stay available live through PCP.
EXCLUDED = ("lustreclient.osc.rpc.",)

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


def fetch_pmapi(host: str, spec: str) -> HostSnapshot:
    try:
        ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, spec)
    except pmapi.pmErr as exc:
        return HostSnapshot(host, spec, ok=False, error=f"cannot connect to pmcd: {exc.message()}")
    try:
        names: list[str] = []
        with _TRAVERSE_LOCK:
            ctx.pmTraversePMNS(METRIC_ROOT, names.append)
        names = [n for n in names if not n.startswith(EXCLUDED)]
        pmids = ctx.pmLookupName(names)
        descs = ctx.pmLookupDescs(pmids)
        result = ctx.pmFetch(pmids)
        fetched_at = time.time()
        snap = HostSnapshot(host, spec, ok=True, fetched_at=fetched_at)
        inst_names: dict[int, dict[int, str]] = {}
        try:
            res = result.contents
            for i, (name, desc) in enumerate(zip(names, descs)):
                numval = res.get_numval(i)
                if numval <= 0:
                    continue  # no values now (e.g. no OSTs): the metric is simply absent
                indom, mtype = desc.contents.indom, desc.contents.type
                if indom != c_api.PM_INDOM_NULL and indom not in inst_names:
                    ids, labels = ctx.pmGetInDom(desc)
                    inst_names[indom] = dict(zip(ids or [], labels or []))
                names_of = inst_names.get(indom, {})
                values = {}
                for inst, value in _values(ctx, res, i, numval, mtype):
                    key = SINGULAR if indom == c_api.PM_INDOM_NULL else names_of.get(inst)
                    if key is not None:
                        values[key] = value
                snap.metrics[name] = values
                snap.sems[name] = _SEMS.get(desc.contents.sem, "instant")
        finally:
            ctx.pmFreeResult(result)
        return snap
    except pmapi.pmErr as exc:
        return HostSnapshot(host, spec, ok=False, error=f"fetch failed: {exc.message()}")
    finally:
        del ctx


_U64_AT = ctypes.c_uint64 * 1


def _values(ctx, res, i: int, numval: int, mtype: int):
    """(instance id, value) pairs of one metric in a fetch result.

    64-bit integers are read straight from their value blocks (vbuf follows a 4-byte header):
    pmExtractValue through the bindings costs ~7 us a value, too slow for 25,000 values a host
    on a 1,000-host job. Other types take the general path.
    """
    valfmt = res.get_valfmt(i)
    direct = mtype == c_api.PM_TYPE_U64 and valfmt != c_api.PM_VAL_INSITU
    for j in range(numval):
        vl = res.get_vlist(i, j)
        if direct:
            block = ctypes.addressof(vl.value.pval.contents)
            value = _U64_AT.from_address(block + 4)[0]
        else:
            atom = ctx.pmExtractValue(valfmt, vl, mtype, mtype)
            value = atom.cp if mtype == c_api.PM_TYPE_STRING else int(atom.dref(mtype))
            if isinstance(value, bytes):
                value = value.decode("utf-8", "replace")
        yield vl.inst, value


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
    metric, is_string = None, False
    for line in text.splitlines():
        if line and not line[0].isspace():
            metric, is_string = line.strip(), False
            if metric.startswith(EXCLUDED):
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
                snap.metrics.setdefault(metric, {})[m.group(2)] = value
        elif m := _RE_VALUE.match(line):
            value = _pminfo_value(m.group(1), is_string)
            if value is not None:
                snap.metrics.setdefault(metric, {})[SINGULAR] = value
    # Like the PMAPI backend: a metric without values now is absent, semantics included.
    snap.sems = {m: sem for m, sem in snap.sems.items() if m in snap.metrics}
    return snap


def fetch_cli(host: str, spec: str, timeout_s: float) -> HostSnapshot:
    try:
        proc = subprocess.run(["pminfo", "-h", spec, "-df", METRIC_ROOT], capture_output=True,
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
