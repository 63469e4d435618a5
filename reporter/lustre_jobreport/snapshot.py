"""Snapshot every host of a job: one fetch per host, in parallel, never fatal.

Hosts are given as `NAME=SPEC` or just `SPEC`, where SPEC is a PCP host spec (`node17`,
`node17:44321`, `localhost:4431`, `unix:/path/pmcd.socket`) and NAME is what the report calls
the host (the scheduler's node name). This module must stay light: the prolog imports it, so
no pandas and no Jinja2 here.
"""

from __future__ import annotations

import time
import threading
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
    """Fetch all targets, at most `parallel` at a time; a host that fails is recorded with its
    error, never raised.

    Each host gets connect_timeout_s + fetch_timeout_s: libpcp itself waits a fixed ~10 s for a
    pmcd that accepts a connection but never greets, whatever PMCD_*_TIMEOUT say, so a host
    over its bound is recorded as failed and its thread (a daemon: it cannot hold up the
    process's exit) is left to finish on its own while the next host starts. deadline_s, if
    given, also bounds the whole call.
    """
    backend = choose_backend(backend)
    pcpfetch.set_timeouts(connect_timeout_s, fetch_timeout_s)
    # A duplicated name would silently overwrite a host: refuse it instead.
    seen: set[str] = set()
    for t in targets:
        if t.name in seen:
            raise JobReportError(f"host {t.name} is given twice")
        seen.add(t.name)

    catalog = pcpfetch.Catalog() if backend == "pmapi" else None

    def one(t: HostTarget) -> HostSnapshot:
        try:
            if backend == "pmapi":
                return pcpfetch.fetch_pmapi(t.name, t.spec, catalog)
            return pcpfetch.fetch_cli(t.name, t.spec, connect_timeout_s + fetch_timeout_s)
        except Exception as exc:  # a bug or odd answer on one host must not cost the others
            return HostSnapshot(t.name, t.spec, ok=False, error=f"{type(exc).__name__}: {exc}")

    taken_at = time.time()
    results = _run_bounded(targets, one, max(1, parallel), connect_timeout_s + fetch_timeout_s, deadline_s)
    return Snapshot.from_hosts(taken_at, results)


def _run_bounded(targets: list[HostTarget], fetch, parallel: int, per_host_s: float,
                 deadline_s: float | None) -> list[HostSnapshot]:
    done: dict[int, HostSnapshot] = {}
    changed = threading.Condition()

    def worker(i: int, t: HostTarget) -> None:
        result = fetch(t)
        with changed:
            done.setdefault(i, result)   # too late if the host was already given up on
            changed.notify()

    start = time.monotonic()
    end = start + deadline_s if deadline_s is not None else None
    pending = list(enumerate(targets))[::-1]
    running: dict[int, float] = {}                 # index -> when it must have answered
    with changed:
        while pending or running:
            now = time.monotonic()
            for i in [i for i in running if i in done]:
                del running[i]
            for i, due in list(running.items()):
                if now >= due or (end is not None and now >= end):
                    t = targets[i]
                    bound = per_host_s if now >= due else deadline_s
                    done.setdefault(i, HostSnapshot(t.name, t.spec, ok=False,
                                                    error=f"no answer within {bound:g} s"))
                    del running[i]
            if end is not None and now >= end:
                for i, t in pending:
                    done[i] = HostSnapshot(t.name, t.spec, ok=False, error=f"not reached within {deadline_s:g} s")
                break
            while pending and len(running) < parallel:
                i, t = pending.pop()
                running[i] = now + per_host_s
                threading.Thread(target=worker, args=(i, t), daemon=True, name=f"fetch {t.name}").start()
            if running:
                wake = min(running.values())
                changed.wait(timeout=max(0.0, min(wake, end or wake) - time.monotonic()))
    return [done[i] for i in range(len(targets))]
