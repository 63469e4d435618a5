"""The reporter's own stop: at the budget's deadline, or on the wrapper's SIGTERM, log the step
the hook was in and end the process at once, with status 0. A fetch thread stuck on a hung host
(or any other thread) must not hold the hook past its bound.

A timer thread cannot run while another thread holds the GIL in one long C call (parsing a large
begin snapshot, a C library that hangs), so the hooks run supervised: the process forks before
any thread starts; the parent only waits, told each step through a pipe, and stops a worker
that missed its deadline by SUPERVISOR_GRACE_S (SIGKILL; one log line naming the step), or that
died (one line with the signal). The wrapper's SIGKILL at the bound comes after both."""

from __future__ import annotations

import os
import select
import signal
import sys
import threading
import time
from typing import TextIO

from .budget import SUPERVISOR_GRACE_S, Budget
from .hooklog import HookLog


def exit_now(code: int = 0) -> None:
    """End the process at once: a fetch thread stuck on a hung host must not hold the hook."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(code)


POLL_S = 0.1


class Watchdog:
    """`with Watchdog(kind, budget, log, out):` the hook's work, stopped at budget.deadline."""

    def __init__(self, kind: str, budget: Budget, log: HookLog, out: TextIO, *, supervise: bool = False):
        self.kind, self.budget, self.log, self.out = kind, budget, log, out
        self.supervise = supervise   # fork a supervisor (the CLI: its process ends with the hook)
        self.timer: threading.Timer | None = None
        self.old_term = None

    def give_up(self, why: str) -> None:
        try:
            self.log.error(f"{why} while {self.budget.step}; gave up")
            self.out.flush()
        finally:
            os._exit(0)

    def __enter__(self) -> "Watchdog":
        if self.supervise:
            self._fork()   # returns in the worker only
        self.timer = threading.Timer(max(0, self.budget.left()), self.give_up,
                                     (f"{self.kind}_timeout_s = {self.budget.bound_s:g} s reached",))
        self.timer.daemon = True
        self.timer.start()
        if threading.current_thread() is threading.main_thread():
            self.old_term = signal.signal(signal.SIGTERM,
                                          lambda signo, frame: self.give_up(f"terminated by signal {signo}"))
        return self

    def __exit__(self, *exc) -> None:
        if self.timer is not None:
            self.timer.cancel()
        if self.old_term is not None:
            signal.signal(signal.SIGTERM, self.old_term)

    def _fork(self) -> None:
        r, w = os.pipe()
        os.set_blocking(w, False)
        self.out.flush()
        pid = os.fork()
        if pid == 0:   # the worker: the hook's work, telling each step
            os.close(r)
            self.budget.tell(w)
            return
        os.close(w)
        self._supervise(pid, r)   # never returns

    def _supervise(self, pid: int, r: int) -> None:
        """The parent: wait for the worker, read its steps; stop it if it overstays."""
        terminated: list[int] = []
        signal.signal(signal.SIGTERM, lambda signo, frame: terminated.append(signo))
        step, pending, why = self.budget.step, b"", None
        limit = self.budget.deadline + SUPERVISOR_GRACE_S
        while True:
            if terminated and why is None:   # the worker got the wrapper's SIGTERM too: its grace
                why = f"terminated by signal {terminated[0]}"
                limit = min(limit, time.monotonic() + SUPERVISOR_GRACE_S)
            left = limit - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                self.log.error(f"{why or f'{self.kind}_timeout_s = {self.budget.bound_s:g} s reached'} "
                               f"while {step}; the reporter did not stop by itself (busy in one long "
                               f"call), stopped it")
                break
            # short waits: a signal handler's note is seen within POLL_S (select resumes itself)
            ready = select.select([r], [], [], min(left, POLL_S))[0]
            data = os.read(r, 65536) if ready else b""
            *lines, pending = (pending + data).split(b"\n")
            if lines:
                step = lines[-1].decode("utf-8", "replace")
            # the worker is done (or died): the pipe's end, or its exit (a child of its own, e.g.
            # the as-user writer, may hold the pipe open a little longer)
            done, status = os.waitpid(pid, os.WNOHANG)
            if done or (ready and not data):
                if not done:
                    _, status = os.waitpid(pid, 0)
                if os.WIFSIGNALED(status) and os.WTERMSIG(status) != signal.SIGKILL:
                    self.log.error(f"the reporter died of signal {os.WTERMSIG(status)} while {step}")
                os._exit(0)
        try:
            os.waitpid(pid, 0)
        finally:
            os._exit(0)
