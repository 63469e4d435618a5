"""A large PMAPI fan-out spread over worker processes.

Reading a 600-OSC client costs this process ~3 ms of CPU (libpcp decoding the answer, ctypes,
numpy), whatever its threads do: one process reads at most ~300 such hosts a second, and a
12,000-node job would need ~40 s of one core. Here each worker process fans out over its share
of the hosts with the function it is given (snapshot's one-process fan-out, with threads), and
sends its hosts back, with what it summed of them (the job's timeline); the caller gets the
hosts in the order given.

Workers are spawned, not forked: the hooks run threads (the watchdog, the epilog's preloading
of the report's modules), and a child forked while one of them holds the import lock or a lock
inside libpcp would hang. Spawning costs each worker ~0.3 s (importing numpy and PCP's
bindings), so only a fan-out of at least MIN_HOSTS_PER_PROCESS hosts a worker uses them.

Every bound still holds: the deadline goes to the workers as an instant of the monotonic clock
(one clock for every process on Linux); a worker that has not answered by then, plus a grace,
costs its own hosts only, named as not reached.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from typing import Any, Callable

from . import hostsnap
from .hostsnap import HostSnapshot

MAX_AUTO = 8                  # processes = 0: one per core, at most this many
MIN_HOSTS_PER_PROCESS = 200   # fewer hosts a worker: starting it costs more than it saves
GRACE_S = 1.0                 # a worker is waited for this long past the deadline, then given up


def cores() -> int:
    """The cores this process may run on (its CPU affinity: a cgroup or taskset may give it
    fewer than the machine has)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):     # not Linux
        return os.cpu_count() or 1


def count(requested: int, n_targets: int) -> int:
    """How many processes a fan-out of n_targets hosts uses (1: stay in this one)."""
    wanted = min(MAX_AUTO, cores()) if requested == 0 else requested
    return max(1, min(wanted, n_targets // MIN_HOSTS_PER_PROCESS))


# reads a share of the hosts in one process: fetch_share(targets, **kw) -> (their HostSnapshots,
# what it summed of them or None) (a module-level function: a spawned worker gets it by name)
ShareFetch = Callable[..., tuple[list[HostSnapshot], Any]]


def _worker(fetch_share: ShareFetch, targets: list, kw: dict[str, Any], end: float | None) -> tuple[list[HostSnapshot], Any]:
    if end is not None:
        left = end - time.monotonic()
        if left <= 0:
            return [hostsnap.failed(t.name, t.spec, hostsnap.not_reached(0.0)) for t in targets], None
        kw = dict(kw, deadline_s=left)
    return fetch_share(targets, **kw)


def fetch(targets: list, processes: int, deadline_s: float | None, after_each_s: float,
          fetch_share: ShareFetch, kw: dict[str, Any]) -> tuple[list[HostSnapshot], list[Any]]:
    """The targets' hosts, read by `processes` workers, each calling fetch_share(its share, **kw),
    and what each worker that answered summed of its hosts (a worker given up on: nothing of
    its hosts, which are then all said as not reached). Each worker stops earlier by
    after_each_s times every worker's reads (it sees its own: about 1/processes of them)."""
    start = time.monotonic()
    end = start + deadline_s if deadline_s is not None else None
    shares = [targets[i::processes] for i in range(processes)]
    kw = dict(kw, after_each_s=after_each_s * processes)
    ctx = multiprocessing.get_context("spawn")
    pool = ctx.Pool(processes)
    try:
        pending = [pool.apply_async(_worker, (fetch_share, share, kw, end)) for share in shares]
        got: list[list[HostSnapshot]] = []
        sums: list[Any] = []
        for share, result in zip(shares, pending):
            wait = None if end is None else max(0.0, end + GRACE_S - time.monotonic())
            try:
                hosts, summed = result.get(timeout=wait)
                got.append(hosts)
                sums.append(summed)
            except multiprocessing.TimeoutError:
                got.append([hostsnap.failed(t.name, t.spec, hostsnap.not_reached(time.monotonic() - start))
                            for t in share])
            except Exception as exc:   # a worker that died: its hosts, not the snapshot
                got.append([hostsnap.failed(t.name, t.spec, hostsnap.unexpected(exc)) for t in share])
    finally:
        pool.terminate()
    # back into the order given: share i holds targets i, i + processes, ...
    ordered: list[HostSnapshot | None] = [None] * len(targets)
    for i, hosts in enumerate(got):
        ordered[i::processes] = hosts
    return _one_stop(ordered, time.monotonic() - start), sums   # type: ignore[arg-type]


def _one_stop(hosts: list[HostSnapshot], seconds: float) -> list[HostSnapshot]:
    """Each worker stops at its own moment; the hosts they did not reach are said as the
    fan-out's, with one time (the report groups hosts by what is said of them: one line, not
    one a worker)."""
    said = hostsnap.not_reached(seconds)
    return [hostsnap.failed(h.host, h.spec, said) if not h.ok and (h.error or "").startswith(hostsnap.NOT_REACHED)
            else h for h in hosts]
