"""Snapshot every host of a job: one fetch per host, in parallel, never fatal.

Hosts are given as `NAME=SPEC` or just `SPEC`, where SPEC is a PCP host spec (`node17`,
`node17:44321`, `localhost:4431`, `unix:/path/pmcd.socket`) and NAME is what the report calls
the host (the scheduler's node name).

One fan-out serves both ways of reading a host: PCP's bindings in-process ("pmapi"), or one
`pminfo -dfm` process per host ("pminfo", whose text is kept raw and parsed when the snapshot is
stacked or read back). Every host gets the same bound (connect + fetch timeout), the whole
snapshot an optional deadline, and a host that fails says why in the same words either way.
This module must stay light: the prolog imports it (no numpy, no bindings, no Jinja2
until a caller asks for the in-process backend or for stacked tables; no dataclasses, whose
module brings `inspect`).
"""

from __future__ import annotations

import itertools
import os
import subprocess
import time
import threading
from pathlib import Path
from typing import Any, Callable, NamedTuple, Protocol

from .. import catalog
from . import hostnames, hostsnap
from ..config import Config
from ..errors import JobReportError
from .hostsnap import HostSnapshot

BACKENDS = ("auto", "pmapi", "pminfo", "cli")   # cli: the old name of pminfo


class HostTarget(NamedTuple):
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
        nodes = hostnames.expand(nodelist)
    except hostnames.BadNodeList as exc:
        raise JobReportError(f"bad node list {nodelist!r}: {exc}") from None
    return _unique([HostTarget(n, cfg.host_spec(n)) for n in nodes])


def have_bindings() -> bool:
    try:
        import cpmapi  # noqa: F401  (what pcpfetch needs; cheap to try)
    except ImportError:
        return False
    return True


def choose_backend(requested: str) -> str:
    if requested == "cli":
        return "pminfo"
    if requested == "auto":
        return "pmapi" if have_bindings() else "pminfo"
    if requested == "pmapi" and not have_bindings():
        raise JobReportError("the PMAPI backend needs PCP's Python bindings (Debian: python3-pcp)")
    if requested not in BACKENDS:
        raise JobReportError(f"unknown snapshot backend {requested!r}")
    return requested


class Fetched:
    """What one snapshot fetched: every host, in the order given, read or with its reason; and,
    for a fetch of the job view asked to, the sums of the hosts' timelines (series_sum's)."""
    taken_at: float
    hosts: list[HostSnapshot]
    series: Any

    def __init__(self, taken_at: float, hosts: list[HostSnapshot], series: Any = None):
        self.taken_at, self.hosts, self.series = taken_at, hosts, series

    def __repr__(self) -> str:
        return f"Fetched(taken_at={self.taken_at!r}, hosts={self.hosts!r})"

    def failed(self) -> list[HostSnapshot]:
        return [h for h in self.hosts if not h.ok]

    def write(self, path: str | Path, *, consume: bool = False, job_id: str | None = None) -> None:
        """As a snapshot file, atomically: hosts read by pminfo as the raw form (no numpy, no
        parsing now: the prolog's way) when their texts are within the caps it is read with,
        otherwise stacked into tables (snapfile: a `snapshot --backend pminfo` of hundreds of
        hosts). consume: the hosts' values are let go as they are stacked (the prolog's: it
        needs them no more). job_id: the job the file names (snapformat.JOB_ID; None: none)."""
        from . import snapformat
        snapformat.writable_job_id(job_id)     # checked before stacking, which lets go of the hosts' values
        if all(h.pminfo is not None or not h.ok for h in self.hosts) and snapformat.fits_raw(self.hosts):
            snapformat.write_raw(self.taken_at, self.hosts, Path(path), job_id)
            return
        from . import snapfile
        stacked = snapfile.Snapshot.from_hosts(self.taken_at, self.hosts, consume=consume, job_id=job_id)
        snapfile.write(stacked, path)


def pminfo_command(spec: str, metrics: tuple[str, ...] = catalog.SNAPSHOT_METRICS) -> list[str]:
    return ["pminfo", "-h", spec, "-dfm", *metrics]


def fetch_pminfo(t: HostTarget, timeout_s: float, env: dict[str, str],
                 metrics: tuple[str, ...] = catalog.SNAPSHOT_METRICS) -> HostSnapshot:
    """One `pminfo -dfm` of the snapshot metrics, its output kept raw."""
    try:
        proc = subprocess.run(pminfo_command(t.spec, metrics), capture_output=True, timeout=max(0.1, timeout_s),
                              stdin=subprocess.DEVNULL, env=env)
    except FileNotFoundError:
        return hostsnap.failed(t.name, t.spec, hostsnap.PMINFO_MISSING)
    except subprocess.TimeoutExpired:
        return hostsnap.failed(t.name, t.spec, hostsnap.no_answer(timeout_s))
    if proc.returncode != 0 and not proc.stdout.strip():
        said = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        if said and all(line.endswith(": Unknown metric name") for line in said):
            return hostsnap.failed(t.name, t.spec, hostsnap.no_agent())
        reason = (said or ["pminfo failed"])[-1]
        if "Cannot connect to PMCD" in reason:
            return hostsnap.failed(t.name, t.spec, hostsnap.cannot_connect(reason.rsplit(": ", 1)[-1]))
        return hostsnap.failed(t.name, t.spec, hostsnap.fetch_failed(reason))
    return HostSnapshot(t.name, t.spec, ok=True, fetched_at=time.time(), pminfo=proc.stdout)


def fetch_all(targets: list[HostTarget], *, connect_timeout_s: float, fetch_timeout_s: float,
              parallel: int = 64, backend: str = "auto", deadline_s: float | None = None,
              metrics: tuple[str, ...] = catalog.SNAPSHOT_METRICS, after_each_s: float = 0,
              processes: int = 1, job_id: str | None = None,
              series_sum: Callable[[], SeriesSink] | None = None) -> Fetched:
    """Fetch all targets, at most `parallel` at a time; a host that fails is recorded with its
    error, never raised. metrics: what to fetch (catalog.BEGIN_METRICS for a job's start).

    after_each_s: with a deadline, the time the caller needs after the fan-out for each host
    read (writing the spool, building the report): the fan-out stops that much earlier per host
    read, so that a job too large for the bound still gets what was read written and reported,
    with the rest named as not reached (a prolog that read hosts until its bound would have
    no time left to spool any of them).

    Each host gets connect_timeout_s + fetch_timeout_s: libpcp itself waits a fixed ~10 s for a
    pmcd that accepts a connection but never greets, whatever PMCD_*_TIMEOUT say, so a host
    over its bound is recorded as failed and its thread (a daemon: it cannot hold up the
    process's exit) is left to finish on its own while the next host starts. deadline_s, if
    given, also bounds the whole call. One host read by pminfo is read by the calling thread:
    the timeout pminfo is run with is that host's bound.

    processes: a PMAPI fan-out of hundreds of hosts is spread over this many worker processes
    (0: one per core; see procfanout), each fanning out over its share as above.

    job_id: read each host's deltas of this job from its agent's job view (with the job end
    metrics; `metrics` is not used): PCP's bindings only.

    series_sum: with job_id, makes the sink the hosts' timelines (fetched with their deltas) are
    added into as the fan-out takes each host (SeriesSink; a module-level factory: a worker
    process makes its own, which the caller's then merges). A host's series is let go once
    added: a 12,000-node job's timelines are never all held at once.
    """
    backend = choose_backend(backend)
    if job_id is not None and backend != "pmapi":
        raise JobReportError("reading the agents' job view needs PCP's Python bindings (python3-pcp)")
    stopped = threading.Event()   # set when the fan-out gives up: hosts still answering skip decoding
    # A duplicated name would silently overwrite a host: refuse it instead.
    seen: set[str] = set()
    for t in targets:
        if t.name in seen:
            raise JobReportError(f"host {t.name} is given twice")
        seen.add(t.name)
    per_host = connect_timeout_s + fetch_timeout_s
    if deadline_s is not None:
        per_host = min(per_host, deadline_s)
    timeouts = {"PMCD_CONNECT_TIMEOUT": f"{connect_timeout_s:g}", "PMCD_REQUEST_TIMEOUT": f"{fetch_timeout_s:g}"}

    if backend == "pmapi":
        from . import pcpfetch, procfanout
        os.environ.update(timeouts)   # libpcp reads them at its first connection (workers inherit them)
        workers = procfanout.count(processes, len(targets))
        if workers > 1:
            taken_at = time.time()
            kw = {"connect_timeout_s": connect_timeout_s, "fetch_timeout_s": fetch_timeout_s,
                  "parallel": parallel, "backend": backend, "metrics": metrics, "job_id": job_id,
                  "series_sum": series_sum}
            hosts, shares = procfanout.fetch(targets, workers, deadline_s, after_each_s, fetch_share, kw)
            return Fetched(taken_at, hosts, _merged(series_sum, shares))
        cache = pcpfetch.Catalog(metrics)
        job = pcpfetch.JobCatalogs(job_id) if job_id is not None else None

        def fetch(t: HostTarget) -> HostSnapshot:
            return pcpfetch.fetch_pmapi(t.name, t.spec, cache, given_up=stopped.is_set, job=job)
    else:
        env = dict(os.environ, **timeouts)

        def fetch(t: HostTarget) -> HostSnapshot:
            return fetch_pminfo(t, per_host, env, metrics)

    def one(t: HostTarget) -> HostSnapshot:
        try:
            return _said_alike(fetch(t), per_host)
        except Exception as exc:  # a bug or odd answer on one host must not cost the others
            return hostsnap.failed(t.name, t.spec, hostsnap.unexpected(exc))

    sink = series_sum() if series_sum is not None and job_id is not None else None
    taken = _keeping_series(sink) if sink is not None else None
    taken_at = time.time()
    if backend == "pminfo" and len(targets) == 1:
        # a job on one node: pminfo's own timeout (per_host, within the deadline) bounds it, so
        # no thread to start and hand the host back, which a busy node makes the job wait for
        return Fetched(taken_at, [one(targets[0])])
    try:
        with hostsnap.cyclic_gc_paused():
            return Fetched(taken_at, _run_bounded(targets, one, max(1, parallel), per_host, deadline_s, after_each_s,
                                                  taken), sink)
    finally:
        stopped.set()



def fetch_share(targets: list[HostTarget], **kw) -> tuple[list[HostSnapshot], Any]:
    """One worker process's share of a fan-out spread over processes (procfanout): its hosts and
    the sums of their timelines (None: none asked for)."""
    fetched = fetch_all(targets, processes=1, **kw)
    return fetched.hosts, fetched.series


class SeriesSink(Protocol):
    """What the hosts' timelines are added into as they are taken (report.timeline's sums)."""

    def add(self, host: str, series: Any) -> None: ...

    def leave_out(self, host: str, why: str) -> None: ...

    def merge(self, other: "SeriesSink") -> None: ...


def _keeping_series(sink: SeriesSink) -> Callable[[HostSnapshot], None]:
    """What the fan-out does with each host it takes: its timeline added to the sink and let go,
    or why it has none told to the sink."""
    from .jobseries import Series

    def take(h: HostSnapshot) -> None:
        if isinstance(h.series, Series):
            sink.add(h.host, h.series)
            h.series = None
        elif isinstance(h.series, str):
            sink.leave_out(h.host, h.series)
    return take


def _merged(series_sum: Callable[[], SeriesSink] | None, shares: list[Any]) -> SeriesSink | None:
    """The worker processes' sums of their hosts' timelines, as one."""
    if series_sum is None or all(s is None for s in shares):
        return None
    sink = series_sum()
    for share in shares:
        if share is not None:
            sink.merge(share)
    return sink


def _said_alike(h: HostSnapshot, per_host_s: float) -> HostSnapshot:
    """A silent pmcd is said as the fan-out says it, whoever gave up first: libpcp (its own
    wait, which the PMAPI path in a process that has made a request reaches before the host's
    bound, and pminfo only past a ~10 s bound) or the fan-out at the bound. The words would
    otherwise depend on the backend and on what the process fetched before."""
    if not h.ok and h.error == hostsnap.cannot_connect(hostsnap.PCP_TIMEOUT):
        return hostsnap.failed(h.host, h.spec, hostsnap.no_answer(per_host_s))
    return h


def take(targets: list[HostTarget], **kw) -> "Snapshot":
    """fetch_all, stacked into per-metric tables (snapfile.Snapshot)."""
    from .snapfile import Snapshot

    fetched = fetch_all(targets, **kw)
    return Snapshot.from_hosts(fetched.taken_at, fetched.hosts)


class _Bounded:
    """A fan-out over the targets with at most `parallel` hosts being read at once, each within
    per_host_s, all within deadline_s (earlier by after_each_s for each host read in time).

    Each thread reads one host after another (a thread a host would cost each host a thread's
    start). A host over its bound is said as not answering and its thread, stuck in libpcp, is
    left to finish on its own (a daemon: it cannot hold up the process's exit); another thread
    takes its place. Hosts start in the order given, so the oldest running host is always the
    next one due: the watcher wakes only for it or the deadline, never once per host."""

    def __init__(self, targets: list[HostTarget], fetch, parallel: int, per_host_s: float,
                 deadline_s: float | None, after_each_s: float,
                 taken: Callable[[HostSnapshot], None] | None = None) -> None:
        self.targets, self.fetch, self.parallel, self.taken = targets, fetch, parallel, taken
        self.per_host_s, self.deadline_s, self.after_each_s = per_host_s, deadline_s, after_each_s
        self.done: list[HostSnapshot | None] = [None] * len(targets)
        self.left = len(targets)         # hosts with no outcome yet
        self.read = 0                    # hosts read in time: each costs after_each_s
        self.next = 0                    # the next target to start
        self.running: dict[int, float] = {}   # index -> when it must have answered, in start order
        self.changed = threading.Condition()
        self.start = time.monotonic()

    def end(self) -> float | None:
        if self.deadline_s is None:
            return None
        return self.start + self.deadline_s - self.after_each_s * self.read

    def _take(self) -> int | None:
        """The next target to read, marked running (under the lock); None: none left, or past the end."""
        now = time.monotonic()
        end = self.end()
        if self.next >= len(self.targets) or (end is not None and now >= end):
            return None
        i = self.next
        self.next += 1
        self.running[i] = now + self.per_host_s
        return i

    def _thread(self, i: int | None) -> None:
        if i is not None:
            threading.Thread(target=self._work, args=(i,), daemon=True,
                             name=f"fetch {self.targets[i].name}").start()

    def _work(self, first: int) -> None:
        i: int | None = first
        while i is not None:
            result = self.fetch(self.targets[i])
            with self.changed:
                if self.done[i] is not None:   # given up on while it was read: this thread was replaced
                    return
                if self.taken is not None and result.ok:
                    self.taken(result)         # under the lock: one host's timeline added at a time
                self.done[i] = result
                self.read += result.ok
                self.left -= 1
                del self.running[i]
                i = self._take()
                if self.left == 0 or (i is None and not self.running):
                    self.changed.notify()

    def _give_up(self, i: int, error: str) -> None:
        t = self.targets[i]
        self.done[i] = hostsnap.failed(t.name, t.spec, error)
        self.left -= 1
        del self.running[i]

    def run(self) -> list[HostSnapshot]:
        with self.changed:
            for _ in range(min(self.parallel, len(self.targets))):
                self._thread(self._take())
            while self.left:
                now = time.monotonic()
                for i, due in list(self.running.items()):
                    if due > now:
                        break               # started later than the others: due later
                    self._give_up(i, hostsnap.no_answer(self.per_host_s))
                    self._thread(self._take())
                if not self.left:
                    break
                end = self.end()
                if end is not None and now >= end:
                    for i in list(self.running):
                        self._give_up(i, hostsnap.not_reached(now - self.start))
                    pending, self.next = range(self.next, len(self.targets)), len(self.targets)
                    for i in pending:
                        t = self.targets[i]
                        self.done[i] = hostsnap.failed(t.name, t.spec, hostsnap.not_reached(now - self.start))
                    self.left = 0
                    break
                wake = list(itertools.islice(self.running.values(), 1))     # the oldest running host's due
                if end is not None:
                    wake.append(min(end, now + 0.05))   # the end moves earlier as hosts are read
                self.changed.wait(timeout=max(0.0, min(wake) - now) if wake else None)
        return self.done   # type: ignore[return-value]


def _run_bounded(targets: list[HostTarget], fetch, parallel: int, per_host_s: float,
                 deadline_s: float | None, after_each_s: float = 0,
                 taken: Callable[[HostSnapshot], None] | None = None) -> list[HostSnapshot]:
    return _Bounded(targets, fetch, parallel, per_host_s, deadline_s, after_each_s, taken).run()
