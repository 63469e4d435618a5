"""The hook's time: the [hooks] <kind>_timeout_s bound, and how its steps share it.

Three parties keep the bound, each a little before the next, so that whoever stops the hook can
still say why: the reporter gives up by itself (REPORTER_MARGIN_S before the bound, logging the
step it was in); the wrapper's `timeout` then sends SIGTERM (WRAPPER_TERM_MARGIN_S before; the
reporter's handler logs and exits) and SIGKILL at the bound. The wrapper learns its two times
from wrapper_times(), said by the reporter itself (entry.run's first line on standard error, or
`lustre-jobreport prolog|epilog --limits`), so both sides read the one config the same way.
Light: the prolog imports it.
"""

from __future__ import annotations

import os
import time

# The reporter stops this long before the bound: time to log what it was doing and exit before
# the wrapper's SIGTERM.
REPORTER_MARGIN_S = 1.0
# The wrapper's SIGTERM comes this long before the bound (SIGKILL at it): the SIGTERM handler
# logs one line and exits in far less.
WRAPPER_TERM_MARGIN_S = 0.5
# ...but neither stops the hook before this share of the bound: a short bound still leaves the
# work at least half of it.
MIN_SHARE = 0.5

# Of a snapshot's time, at most this share goes to connecting: the fetch needs the rest.
CONNECT_SHARE = 0.4
# The epilog's end snapshot gets this share of the time left: the rest builds, renders and
# delivers the report (a hung host must not eat the report's time).
END_SNAPSHOT_SHARE = 0.6
# Kept back after a snapshot for writing the spool file and logging.
AFTER_SNAPSHOT_S = 0.3
# ... and, for each host read, what the work after the fan-out costs that host: the
# prolog's stacking, packing and writing of its begin values into the spool (bench_scale, this
# project's 2-core test machine, 600-OSC clients, 2,000 hosts: 0.69 ms), the epilog's stacking,
# diff, sums and report (1.8 ms) and its text, HTML and record. The fan-out stops earlier by
# this much per host read, so a job too large for the bound gets what was read spooled and
# reported, and the rest named, instead of nothing; the figures keep a 2x margin for a slower
# node or a larger client.
SPOOL_S_PER_HOST = 0.0015
REPORT_S_PER_HOST = 0.004
# The supervisor (watchdog) stops a worker that missed its own deadline by this much: time for
# the worker's own stop, which says more, to come first.
SUPERVISOR_GRACE_S = 0.25
# No network step gets less (a shorter timeout could not even connect on a busy node).
MIN_STEP_S = 0.2
# scontrol/squeue leave this much of the budget to the delivery after them; never less than
# MIN_SCHEDULER_S for them (a fast answer still takes a fork and exec).
AFTER_SCHEDULER_S = 0.5
MIN_SCHEDULER_S = 0.1
# The as-user write: at least this long (a fork, an open, a write) and at most WRITE_MAX_S, so a
# hung NFS server holding the job's output costs no more.
WRITE_MIN_S = 0.5
WRITE_MAX_S = 10.0


def wrapper_times(bound_s: float) -> tuple[float, float]:
    """(term, kill_after): the wrapper's `timeout -k kill_after term`, SIGKILL at the bound."""
    term = max(MIN_SHARE * bound_s, bound_s - WRAPPER_TERM_MARGIN_S)
    return term, bound_s - term


class Budget:
    """The hook's time: ends REPORTER_MARGIN_S before the configured bound (the wrapper's)."""

    def __init__(self, bound_s: float, started: float | None = None):
        self.bound_s = bound_s
        self.started = time.monotonic() if started is None else started
        self.deadline = self.started + max(MIN_SHARE * bound_s, bound_s - REPORTER_MARGIN_S)
        self._step = "starting"
        self._tell: int | None = None    # a pipe to the supervisor (watchdog), told every step

    @property
    def step(self) -> str:
        """What the hook is doing now: said in the log line if it has to give up."""
        return self._step

    @step.setter
    def step(self, what: str) -> None:
        self._step = what
        if self._tell is not None:
            try:
                os.write(self._tell, (" ".join(what.split())[:500] + "\n").encode("utf-8", "replace"))
            except OSError:
                pass   # a full pipe or a supervisor gone: the step is only for its log line

    def tell(self, fd: int | None) -> None:
        """Tell every step to this (non-blocking) pipe from now on."""
        self._tell = fd

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def for_writer(self) -> float:
        """The time an as-user write may take."""
        return max(WRITE_MIN_S, min(WRITE_MAX_S, self.left()))

    def for_scheduler(self, configured_s: float) -> float:
        """The time scontrol/squeue may take: as configured, within what is left."""
        return max(MIN_SCHEDULER_S, min(configured_s, self.left() - AFTER_SCHEDULER_S))
