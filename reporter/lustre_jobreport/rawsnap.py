"""Begin snapshots of small jobs, taken the fast way: one `pminfo -df` of the snapshot metrics per host,
its output kept as it is (zlib) in the spool, parsed only at the job's end.

Why: the in-process snapshot path (PCP's Python bindings, numpy tables) costs ~0.2 s of imports
before the first byte is fetched; a job waits for its prolog. For a job on a few nodes, one
pminfo per host (the project's command-line backend, pcpfetch.fetch_cli) is much quicker to
start, and parsing the text later (pcpfetch.parse_pminfo, the same parser that backend uses)
gives the same HostSnapshot. Large jobs keep the in-process path, whose start-up cost is then
small beside the fan-out. This module imports neither numpy nor the PCP bindings.

A host that does not answer in time is recorded with the reason, like snapshot.take does.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import threading
import time
import zlib
from dataclasses import dataclass
from typing import Any

from . import SCHEMA
from .catalog import SNAPSHOT_METRICS

KIND = "begin-pminfo"


@dataclass(frozen=True)
class Target:
    name: str
    spec: str


def _fetch(t: Target, timeout_s: float, env: dict[str, str]) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": t.name, "spec": t.spec, "fetched_at": None, "error": None, "pminfo_z": None}
    try:
        proc = subprocess.run(["pminfo", "-h", t.spec, "-df", *SNAPSHOT_METRICS], capture_output=True,
                              timeout=max(0.1, timeout_s), stdin=subprocess.DEVNULL, env=env)
    except FileNotFoundError:
        entry["error"] = "pminfo not found (install pcp)"
        return entry
    except subprocess.TimeoutExpired:
        entry["error"] = f"no answer within {timeout_s:.1f} s"
        return entry
    if proc.returncode != 0 and not proc.stdout.strip():
        reason = (proc.stderr.decode("utf-8", "replace").strip().splitlines() or ["pminfo failed"])[-1]
        if "Cannot connect to PMCD" in reason:
            entry["error"] = "cannot connect to pmcd: " + reason.rsplit(": ", 1)[-1]
        else:
            entry["error"] = f"cannot fetch: {reason}"
        return entry
    entry["fetched_at"] = time.time()
    entry["pminfo_z"] = base64.b64encode(zlib.compress(proc.stdout, 1)).decode("ascii")
    return entry


def take(targets: list[Target], *, connect_timeout_s: float, fetch_timeout_s: float,
         parallel: int = 16, deadline_s: float | None = None) -> dict[str, Any]:
    """Fetch every target (a thread and a pminfo each, at most `parallel` at once)."""
    env = dict(os.environ, PMCD_CONNECT_TIMEOUT=f"{connect_timeout_s:g}",
               PMCD_REQUEST_TIMEOUT=f"{fetch_timeout_s:g}")
    per_host = connect_timeout_s + fetch_timeout_s
    if deadline_s is not None:
        per_host = min(per_host, deadline_s)
    taken_at = time.time()
    results: list[dict[str, Any] | None] = [None] * len(targets)
    slots = threading.BoundedSemaphore(max(1, parallel))

    def one(i: int, t: Target) -> None:
        with slots:
            results[i] = _fetch(t, per_host, env)

    threads = [threading.Thread(target=one, args=(i, t), daemon=True) for i, t in enumerate(targets)]
    for th in threads:
        th.start()
    end = time.monotonic() + (deadline_s if deadline_s is not None else per_host * len(targets) + 1)
    for th in threads:
        th.join(max(0.0, end - time.monotonic()))
    hosts = [r if r is not None else {"name": t.name, "spec": t.spec, "fetched_at": None,
                                      "error": f"no answer within {per_host:.1f} s", "pminfo_z": None}
             for t, r in zip(targets, results)]
    return {"schema": SCHEMA, "kind": KIND, "taken_at": taken_at, "hosts": hosts}


def ok_hosts(doc: dict[str, Any]) -> list[str]:
    return [h["name"] for h in doc["hosts"] if h["error"] is None]


def failed_hosts(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return [(h["name"], h["error"]) for h in doc["hosts"] if h["error"] is not None]


def to_json_text(doc: dict[str, Any]) -> str:
    return json.dumps(doc, separators=(",", ":")) + "\n"


def to_snapshot(doc: dict[str, Any], source: str = ""):
    """The snapshot the in-process path would have made (parsed with pcpfetch.parse_pminfo)."""
    from .pminfoparse import parse_pminfo
    from .snapfile import HostSnapshot, Snapshot

    if doc.get("kind") != KIND or not isinstance(doc.get("hosts"), list):
        raise ValueError(f"not a {KIND} document")
    fetched = []
    for h in doc["hosts"]:
        name, spec = str(h["name"]), str(h["spec"])
        if h.get("error") is not None:
            fetched.append(HostSnapshot(name, spec, ok=False, error=str(h["error"])))
            continue
        text = zlib.decompress(base64.b64decode(h["pminfo_z"], validate=True)).decode("utf-8", "replace")
        fetched.append(parse_pminfo(text, name, spec, float(h["fetched_at"])))
    snap = Snapshot.from_hosts(float(doc["taken_at"]), fetched)
    snap.source = source
    return snap
