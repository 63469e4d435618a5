"""One host's fetch, whichever way it was made, and the words for why a host could not be read.

A HostSnapshot is either parsed (metrics as Columns, from PCP's bindings) or raw (the text of
one `pminfo -dfm` of the snapshot metrics, parsed only when the snapshot is stacked or read
back: a job's prolog must not wait for numpy). Both become the same tables (snapfile).

Standard library only, and no dataclasses (their module brings `inspect`): the prolog imports
this module.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator, Any

if TYPE_CHECKING:   # numpy-backed; only the stacked and parsed paths build them
    from .column import Column


class HostSnapshot:
    """One host's fetch: every metric's values per instance, or why the host could not be read."""
    host: str                       # the name the report uses (scheduler node name)
    spec: str                       # the PCP host spec that was contacted
    ok: bool
    error: str | None
    fetched_at: float | None        # epoch seconds, the reporter's clock
    sems: dict[str, str]            # metric -> counter|instant|discrete
    metrics: dict[str, "Column"]
    pmids: dict[str, str]           # metric -> "220.2.10"
    pminfo: bytes | None            # raw `pminfo -dfm` output, not parsed yet
    # a host read by its job slot's answer (jobanswer.Row): its values, not made into columns
    # (Snapshot.from_hosts stacks the hosts of one answer's shape all at once)
    answer: Any
    # a host read by its job slot's answer: the job's timeline from the same fetch
    # (jobseries.Series), or why it has none (one line); None: not read through the job view.
    # The fan-out hands it to the job's sums as it takes the host, and lets it go.
    series: Any

    def __init__(self, host: str, spec: str, ok: bool, error: str | None = None, fetched_at: float | None = None,
                 sems: dict[str, str] | None = None, metrics: dict[str, "Column"] | None = None,
                 pmids: dict[str, str] | None = None, pminfo: bytes | None = None, answer: Any = None):
        self.host, self.spec, self.ok, self.error, self.fetched_at = host, spec, ok, error, fetched_at
        self.sems = {} if sems is None else sems
        self.metrics = {} if metrics is None else metrics
        self.pmids = {} if pmids is None else pmids
        self.pminfo, self.answer = pminfo, answer
        self.series = None

    def __repr__(self) -> str:
        said = f"error={self.error!r}" if not self.ok else \
            f"{len(self.metrics)} metrics" + (", raw" if self.pminfo is not None else "")
        return f"HostSnapshot({self.host!r}, {self.spec!r}, ok={self.ok}, {said})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(self) == vars(other)

    __hash__ = None   # type: ignore[assignment]  # mutable

    def header(self) -> "HostSnapshot":
        """Who was asked, when, and how it went: the host without its values (and why it gave no
        timeline, if it gave none)."""
        head = HostSnapshot(self.host, self.spec, self.ok, self.error, self.fetched_at)
        if isinstance(self.series, str):
            head.series = self.series
        return head

    def as_dicts(self) -> dict[str, dict]:
        return {m: c.as_dict() for m, c in self.metrics.items()}


def failed(host: str, spec: str, error: str) -> HostSnapshot:
    return HostSnapshot(host, spec, ok=False, error=error)


# Why a host was not read: the same words whichever backend fetched it.
def cannot_connect(reason: str) -> str:
    return f"cannot connect to pmcd: {reason}"


def fetch_failed(reason: str) -> str:
    return f"fetch failed: {reason}"


def no_answer(seconds: float) -> str:
    """A host that did not answer within the bound it is given (connect + fetch timeout)."""
    return f"no answer within {seconds:.3g} s"


# libpcp's words (PM_ERR_TIMEOUT) for a pmcd that accepted the connection and never greeted. It
# says them after its own wait, which is not the host's bound: a fixed ~10 s, or, once the
# process has made a request, the request timeout. A host that fails so is said as no_answer.
PCP_TIMEOUT = "Timeout waiting for a response from PMCD"

# A pmcd that knows none of the names: pmdalustreclient is not installed there. The PMAPI path
# raises PM_ERR_NAME with these words (pcpfetch), after libpcp's own; pminfo only lists every
# name as unknown, and the fetch's words are the PMAPI path's.
NO_AGENT = "no lustreclient metric (is pmdalustreclient installed?)"


def no_agent() -> str:
    return fetch_failed(f"Unknown metric name: {NO_AGENT}")


NOT_REACHED = "not reached: "


def not_reached(seconds: float) -> str:
    """A host the fan-out never got to, or gave up on, to keep the snapshot's time bound."""
    return f"{NOT_REACHED}the snapshot stopped after {seconds:.3g} s to keep its time bound"


def no_job_values(job_id: str, reason: str, unknown: bool) -> str:
    """A host whose agent cannot give the job's deltas (the job view): unknown, it holds no
    begin values of the job (never had them, forgot them, or the slot the job was found in
    holds another job, or none, by the fetch)."""
    if unknown:
        return (f"its agent has no begin values of job {job_id} (the agent restarted during the job, "
                f"the node's prolog could not store the job's start, or newer jobs took its slot)")
    return f"its agent has no job view ({reason}: pmdalustreclient older than the reporter?)"


def job_values_unnamed(slot_metric: str, reason: str) -> str:
    """A host whose agent serves a slot's deltas without the id of the job they are of: they
    could be another job's (the slot can change hands between the lookup and the fetch)."""
    return (f"its agent does not say which job its deltas are of ({slot_metric}: {reason}: "
            f"pmdalustreclient older than the reporter?)")


PMINFO_MISSING = "pminfo not found (install pcp)"


def summarise(names: list[str], limit: int = 3) -> str:
    """'n01, n02, n03 and 1,708 more': a few names of many, sorted, for one line."""
    names = sorted(set(names))
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit:,} more" if len(names) > limit else "")


def unexpected(exc: BaseException) -> str:
    """A bug or an odd answer on one host: said, and it costs that host only."""
    return f"unexpected {type(exc).__name__}: {exc}"


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Python's cycle collector off while a snapshot's hosts are fetched or stacked: they are
    millions of objects without cycles (refcounts free them), and each collection walks them
    all again: stacking 4,000 hosts of 600 OSCs took 1.38 s with it, 0.94 s without; building
    the hosts 0.33 s against 0.13 s. Left as it was found (nested: only the
    outermost turns it back on)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
