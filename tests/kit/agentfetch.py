"""Fetch every lustreclient metric from a private pmcd through PCP's Python PMAPI, plainly
(pmExtractValue per value): {metric: {instance name or "": value}}, metrics without values
left out. Kept separate from the reporter's fetcher so the agent tests do not depend on it."""

from __future__ import annotations

from pcp import pmapi  # Debian python3-pcp (the venv has the system site packages)
import cpmapi as c_api

SINGULAR = ""


def fetch_all(spec: str, root: str = "lustreclient", names: list[str] | None = None):
    """Returns (values, descs): values {metric: {inst: value}}, descs {metric: (type, sem, indom)}."""
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, spec)
    try:
        if names is None:
            names = []
            ctx.pmTraversePMNS(root, names.append)
        pmids = ctx.pmLookupName(names)
        descs = ctx.pmLookupDescs(pmids)
        result = ctx.pmFetch(pmids)
        out, dout = {}, {}
        indoms: dict[int, dict[int, str]] = {}
        try:
            res = result.contents
            for i, (name, d) in enumerate(zip(names, descs)):
                dd = d.contents
                dout[name] = (dd.type, dd.sem, dd.indom)
                n = res.get_numval(i)
                if n <= 0:
                    continue
                if dd.indom != c_api.PM_INDOM_NULL and dd.indom not in indoms:
                    ids, labels = ctx.pmGetInDom(d)
                    indoms[dd.indom] = dict(zip(ids or [], labels or []))
                vals = {}
                valfmt = res.get_valfmt(i)
                for j in range(n):
                    atom = ctx.pmExtractValue(valfmt, res.get_vlist(i, j), dd.type, dd.type)
                    v = atom.dref(dd.type)
                    inst = res.get_inst(i, j)
                    key = SINGULAR if dd.indom == c_api.PM_INDOM_NULL else indoms[dd.indom].get(inst, f"?{inst}")
                    vals[key] = v.decode() if isinstance(v, bytes) else v
                out[name] = vals
        finally:
            ctx.pmFreeResult(result)
        return out, dout
    finally:
        del ctx
