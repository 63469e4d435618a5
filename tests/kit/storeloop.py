"""PMAPI clients for the job control tests (tests/agent/test_job_control.py, the hooks' job view
test), run as processes, as root or as an unprivileged user:

    storeloop.py store SPEC METRIC VALUE COUNT
        one context, COUNT stores of the string VALUE into METRIC; prints
        {"accepted": n, "refused": n, "other": {"error text": n}} (refused: PM_ERR_PERMISSION)
    storeloop.py churn SPEC [METRIC VALUE]
        until killed: connect (a new pmcd context), look up descriptors, fetch, store VALUE
        into METRIC if given (its outcome ignored), disconnect

One process does many stores over PMAPI (PCP's Python bindings): thousands a second, where a
pmstore process each would take milliseconds apiece. start(), outcomes() and connecting() run
them from a test.
"""

from __future__ import annotations

import ctypes
import json
import pwd
import subprocess
import sys
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import cpmapi as c_api
from pcp import pmapi

LIBPCP = pmapi.LIBPCP
LIBPCP.pmStore.argtypes = [ctypes.c_void_p]
LIBPCP.pmUseContext.argtypes = [ctypes.c_int]
FETCHED = ["lustreclient.job.slots", "lustreclient.version", "lustreclient.job.begin_time"]


class _ValueBlock(ctypes.Structure):     # pmValueBlock: vlen (24 bits) and vtype (8) in one word
    _fields_ = [("head", ctypes.c_uint32), ("vbuf", ctypes.c_char * 128)]


class _Value(ctypes.Structure):
    _fields_ = [("inst", ctypes.c_int), ("pval", ctypes.c_void_p)]


class _ValueSet(ctypes.Structure):
    _fields_ = [("pmid", ctypes.c_uint), ("numval", ctypes.c_int), ("valfmt", ctypes.c_int),
                ("vlist", _Value * 1)]


class _Timeval(ctypes.Structure):
    _fields_ = [("sec", ctypes.c_long), ("usec", ctypes.c_long)]


class _Result(ctypes.Structure):
    _fields_ = [("timestamp", _Timeval), ("numpmid", ctypes.c_int), ("vset", ctypes.c_void_p * 1)]


class StringStore:
    """A pmResult storing one string into one singular metric, built once, stored many times."""

    def __init__(self, ctx: pmapi.pmContext, metric: str, value: str):
        if c_api.HAVE_BITFIELDS_LTOR:
            raise RuntimeError("pmValueBlock laid out vtype first: not handled here")
        raw = value.encode() + b"\0"
        self.ctx = ctx
        self.block = _ValueBlock()
        self.block.head = (c_api.PM_TYPE_STRING << 24) | (c_api.PM_VAL_HDR_SIZE + len(raw))
        self.block.vbuf = raw
        self.vset = _ValueSet(ctx.pmLookupName([metric])[0], 1, c_api.PM_VAL_DPTR)
        self.vset.vlist[0].inst = c_api.PM_IN_NULL
        self.vset.vlist[0].pval = ctypes.addressof(self.block)
        self.result = _Result()
        self.result.numpmid = 1
        self.result.vset[0] = ctypes.addressof(self.vset)

    def store(self) -> int:
        """pmStore's status: >= 0 taken, else a PCP error code."""
        LIBPCP.pmUseContext(self.ctx.ctx)
        return LIBPCP.pmStore(ctypes.addressof(self.result))


def store(spec: str, metric: str, value: str, count: int) -> dict:
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, spec)
    request = StringStore(ctx, metric, value)
    outcomes = Counter(request.store() for _ in range(count))
    accepted = sum(n for sts, n in outcomes.items() if sts >= 0)
    refused = outcomes.pop(c_api.PM_ERR_PERMISSION, 0)
    other = {pmapi.pmErr(sts).message(): n for sts, n in outcomes.items() if sts < 0}
    return {"accepted": accepted, "refused": refused, "other": other}


def churn(spec: str, metric: str | None, value: str | None) -> None:
    while True:
        ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, spec)
        pmids = ctx.pmLookupName(FETCHED)
        ctx.pmLookupDescs(pmids)
        ctx.pmFreeResult(ctx.pmFetch(pmids))
        if metric is not None:
            StringStore(ctx, metric, value).store()
        del ctx


# ---- running them from a test -------------------------------------------------------------------

def start(args: list[str], user: pwd.struct_passwd | None = None) -> subprocess.Popen:
    """This script with args, as root or as user (its uid, gid, no other groups)."""
    who = dict(user=user.pw_uid, group=user.pw_gid, extra_groups=[]) if user else {}
    return subprocess.Popen([sys.executable, str(Path(__file__).resolve()), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **who)


def storing(spec: str, metric: str, value: str, count: int,
            user: pwd.struct_passwd | None = None) -> subprocess.Popen:
    return start(["store", spec, metric, value, str(count)], user)


def outcomes(procs: list[subprocess.Popen]) -> list[dict]:
    """Each storing process's {"accepted", "refused", "other"}, once all are done."""
    got = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        if p.returncode != 0:
            raise RuntimeError(f"storeloop failed: {err.strip()}")
        got.append(json.loads(out))
    return got


def total(got: list[dict], key: str) -> int:
    return sum(g[key] for g in got)


@contextmanager
def connecting(spec: str, user: pwd.struct_passwd | None = None, n: int = 2,
               store: tuple[str, str] | None = None):
    """n clients (as root, or as user), each connecting, fetching (and storing) over and over
    until the block ends; stopped by their PIDs."""
    procs = [start(["churn", spec, *(store or ())], user) for _ in range(n)]
    try:
        time.sleep(0.3)         # under way before the block's stores start
        if any(p.poll() is not None for p in procs):
            raise RuntimeError(f"storeloop churn failed: {[p.communicate()[1] for p in procs]}")
        yield
    finally:
        for p in procs:
            p.kill()
            p.communicate()


def main(argv: list[str]) -> int:
    if argv[:1] == ["store"] and len(argv) == 5:
        print(json.dumps(store(argv[1], argv[2], argv[3], int(argv[4]))), flush=True)
        return 0
    if argv[:1] == ["churn"] and len(argv) in (2, 4):
        churn(argv[1], *(argv[2:4] if len(argv) == 4 else (None, None)))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
