"""Snapshot every host of a job: one fetch per host, in parallel, never fatal.

Hosts are given as `NAME=SPEC` or just `SPEC`, where SPEC is a PCP host spec (`node17`,
`node17:44321`, `localhost:4431`, `unix:/path/pmcd.socket`) and NAME is what the report calls
the host (the scheduler's node name). This module must stay light: the prolog imports it, so
no pandas and no Jinja2 here.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

import hostlist

from . import pcpfetch
from .config import Config
from .errors import JobReportError
from .snapfile import HostSnapshot, Snapshot


@dataclass(frozen=True)
class HostTarget:
    name: str
    spec: str

    @classmethod
    def parse(cls, text: str) -> "HostTarget":
        text = text.strip()
        name, sep, spec = text.partition("=")
        if not sep:
            name = spec = text
        if not name or not spec:
            raise JobReportError(f"bad host {text!r}: expected SPEC or NAME=SPEC")
        return cls(name, spec)


def _unique(targets: list[HostTarget]) -> list[HostTarget]:
    """First occurrence wins: PBS node files list a host once per core."""
    seen: dict[str, HostTarget] = {}
    for t in targets:
        seen.setdefault(t.name, t)
    return list(seen.values())


def read_hosts_file(path: str | Path, cfg: Config | None = None) -> list[HostTarget]:
    """One [NAME=]SPEC per line (# comments); a bare node name gets its spec from the config."""
    try:
        lines = Path(path).read_text().splitlines()
    except OSError as exc:
        raise JobReportError(f"cannot read hosts file {path}: {exc.strerror}") from None
    targets = []
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if cfg is not None and "=" not in line:
            targets.append(HostTarget(line, cfg.host_spec(line)))
        else:
            targets.append(HostTarget.parse(line))
    return _unique(targets)


def targets_for_nodes(nodelist: str, cfg: Config) -> list[HostTarget]:
    """A scheduler node list ("node[01-04,7],gpu1") -> hosts, each at its configured pmcd."""
    try:
        nodes = hostlist.expand_hostlist(nodelist)
    except hostlist.BadHostlist as exc:
        raise JobReportError(f"bad node list {nodelist!r}: {exc}") from None
    return _unique([HostTarget(n, cfg.host_spec(n)) for n in nodes])


def choose_backend(requested: str) -> str:
    if requested == "auto":
        return "pmapi" if pcpfetch.HAVE_PMAPI else "cli"
    if requested == "pmapi" and not pcpfetch.HAVE_PMAPI:
        raise JobReportError("the PMAPI backend needs PCP's Python bindings (Debian: python3-pcp)")
    return requested


def take(targets: list[HostTarget], *, connect_timeout_s: float, fetch_timeout_s: float,
         parallel: int = 64, backend: str = "auto", deadline_s: float | None = None) -> Snapshot:
    """Fetch all targets; a host that fails is recorded with its error, never raised.

    deadline_s bounds the whole call: hosts without an answer by then are recorded as failed
    and their threads are abandoned (libpcp waits a fixed 10 s for a pmcd that accepts but never
    greets, whatever PMCD_*_TIMEOUT say), so the caller should end with os._exit (the hooks do).
    """
    backend = choose_backend(backend)
    pcpfetch.set_timeouts(connect_timeout_s, fetch_timeout_s)
    # A duplicated name would silently overwrite a host: refuse it instead.
    seen: set[str] = set()
    for t in targets:
        if t.name in seen:
            raise JobReportError(f"host {t.name} is given twice")
        seen.add(t.name)

    def one(t: HostTarget) -> HostSnapshot:
        try:
            if backend == "pmapi":
                return pcpfetch.fetch_pmapi(t.name, t.spec)
            return pcpfetch.fetch_cli(t.name, t.spec, connect_timeout_s + fetch_timeout_s)
        except Exception as exc:  # a bug or odd answer on one host must not cost the others
            return HostSnapshot(t.name, t.spec, ok=False, error=f"{type(exc).__name__}: {exc}")

    taken_at = time.time()
    if deadline_s is None:
        with ThreadPoolExecutor(max_workers=max(1, min(parallel, len(targets) or 1))) as pool:
            results = list(pool.map(one, targets))
        return Snapshot.from_hosts(taken_at, results)
    pool = ThreadPoolExecutor(max_workers=max(1, min(parallel, len(targets) or 1)))
    futures = [pool.submit(one, t) for t in targets]
    wait(futures, timeout=max(0.0, deadline_s))
    results = [f.result() if f.done() else
               HostSnapshot(t.name, t.spec, ok=False, error=f"no answer within {deadline_s:.1f} s")
               for t, f in zip(targets, futures)]
    pool.shutdown(wait=False, cancel_futures=True)
    return Snapshot.from_hosts(taken_at, results)
