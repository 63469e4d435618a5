"""The reporter's own stop: at the budget's deadline, or on the wrapper's SIGTERM, log the step
the hook was in and end the process at once, with status 0. A fetch thread stuck on a hung host
(or any other thread) must not hold the hook past its bound; the wrapper's SIGKILL comes after,
should even this not run (a thread holding the GIL in C code)."""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import TextIO

from .budget import Budget
from .hooklog import HookLog


def exit_now(code: int = 0) -> None:
    """End the process at once: a fetch thread stuck on a hung host must not hold the hook."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(code)


class Watchdog:
    """`with Watchdog(kind, budget, log, out):` the hook's work, stopped at budget.deadline."""

    def __init__(self, kind: str, budget: Budget, log: HookLog, out: TextIO):
        self.kind, self.budget, self.log, self.out = kind, budget, log, out
        self.timer: threading.Timer | None = None
        self.old_term = None

    def give_up(self, why: str) -> None:
        try:
            self.log.error(f"{why} while {self.budget.step}; gave up")
            self.out.flush()
        finally:
            os._exit(0)

    def __enter__(self) -> "Watchdog":
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
