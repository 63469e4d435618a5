"""The hooks' two ways of taking a step: a step whose failure costs that step only (one log
line), and the judgement of a snapshot that read too few hosts to go on."""

from __future__ import annotations

from typing import Any, Callable

from .budget import Budget
from .hooklog import HookLog, say
from .hooksnap import Taken

def attempt(log: HookLog, budget: Budget, what: str, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
    """Run one step; a failure costs that step only and is one log line."""
    budget.step = what
    try:
        return fn(*args, **kw)
    except Exception as exc:
        log.error(f"{what}: {say(exc)}")
        return None



def read_enough(taken: Taken, at: str, log: HookLog, otherwise: str) -> bool:
    """Log the hosts not read at job `at` (start, end); False, and `otherwise`, if none was."""
    if taken.none_read:
        log.error(f"no host could be read at job {at}: {taken.why}; {otherwise}")
        return False
    if taken.failed:
        log.error(f"{taken.failed} of {taken.hosts} hosts not read at job {at}: {taken.why}")
    return True
