"""Whose values a job slot serves, after any sequence of job begins, job ends and agent restarts
between the epilog's lookup of a job's slot and its fetch.

The agent's own slot rules (pmda-lustre/src/jobdiff.c: lc_job_begin, lc_job_end, lc_job_slot_id,
through the test harness libjobdiff.so) run against a plain model written here with loops: a
begin of an id a slot holds takes that slot again; else the first free slot; else the slot whose
job began first, which is evicted; an end frees its slot; a restart forgets every slot. After
every step each slot must name the job (job_id) whose begin values it holds. At the fetch, the
reporter's rule (pcpfetch._not_the_jobs, on the id the slot names) must take the slot's values as
the job's exactly when they are the values of the job's last begin.

The same through pmcd and the real agent, for each way a slot changes hands, is
test_jobview_race.py.
"""

from __future__ import annotations

import ctypes

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from kit.agentdiff import HarnessError, lib
from lustre_jobreport import catalog
from kit.proptest import runs

pcpfetch = pytest.importorskip("lustre_jobreport.acquire.pcpfetch")
if not pcpfetch.HAVE_PMAPI:
    pytest.skip("PCP's Python bindings are not importable", allow_module_level=True)

JOB = "4242"
OTHERS = [f"{1000 + i}" for i in range(2 * catalog.JOB_SLOTS)]   # more jobs than slots: evictions
ID_NAME = catalog.job_slot_id_name(0)


@pytest.fixture(scope="module")
def c() -> ctypes.CDLL:
    try:
        c = lib()
    except HarnessError as exc:
        pytest.fail(str(exc))
    ptr, text = ctypes.c_void_p, ctypes.c_char_p
    for name, restype, argtypes in (("jd_slots_new", ptr, []), ("jd_slots_free", None, [ptr]),
                                    ("jd_slots_begin", ctypes.c_int, [ptr, text, ctypes.c_double, text]),
                                    ("jd_slots_end", ctypes.c_int, [ptr, text]),
                                    ("jd_slots_find", ctypes.c_int, [ptr, text]),
                                    ("jd_slot_id", text, [ptr, ctypes.c_int]),
                                    ("jd_slot_values_of", text, [ptr, ctypes.c_int])):
        getattr(c, name).restype, getattr(c, name).argtypes = restype, argtypes
    return c


class Model:
    """The slots as the documented rules give them: each None, or (job id, begin time, mark of
    the begin whose values it holds)."""

    def __init__(self) -> None:
        self.slots: list[tuple[str, float, str] | None] = [None] * catalog.JOB_SLOTS

    def begin(self, job: str, t: float, mark: str) -> None:
        taken = None
        for s in range(catalog.JOB_SLOTS):            # the job's own slot, taken again
            if self.slots[s] is not None and self.slots[s][0] == job:
                taken = s
        if taken is None:                             # else the first free one
            for s in range(catalog.JOB_SLOTS):
                if self.slots[s] is None:
                    taken = s
                    break
        if taken is None:                             # else the oldest job's
            taken = 0
            for s in range(1, catalog.JOB_SLOTS):
                if self.slots[s][1] < self.slots[taken][1]:
                    taken = s
        self.slots[taken] = (job, t, mark)

    def end(self, job: str) -> None:
        for s in range(catalog.JOB_SLOTS):
            if self.slots[s] is not None and self.slots[s][0] == job:
                self.slots[s] = None

    def named(self, s: int) -> tuple[str | None, str | None]:
        held = self.slots[s]
        return (held[0], held[2]) if held is not None else (None, None)


class Agent:
    """The agent's slot table (the harness), restarted as the agent restarts: empty."""

    def __init__(self, c: ctypes.CDLL) -> None:
        self.c, self.slots = c, c.jd_slots_new()

    def restart(self) -> None:
        self.c.jd_slots_free(self.slots)
        self.slots = self.c.jd_slots_new()

    def named(self, s: int) -> tuple[str | None, str | None]:
        def text(raw: bytes | None) -> str | None:
            return raw.decode() if raw is not None else None
        return text(self.c.jd_slot_id(self.slots, s)), text(self.c.jd_slot_values_of(self.slots, s))


# mostly begins, so that all slots fill and jobs are evicted; ends and restarts now and then
STEP = st.tuples(st.sampled_from(["begin"] * 6 + ["end"] * 2 + ["restart"]), st.sampled_from([JOB] + OTHERS))


@runs(2000)
@given(before=st.lists(STEP, max_size=40), between=st.lists(STEP, max_size=40))
def test_a_slot_names_the_job_whose_values_it_holds_and_is_taken_only_for_them(c, before, between):
    agent, model = Agent(c), Model()
    last_begin: dict[str, str] = {}                   # job -> mark of its last begin
    clock = iter(range(1, 10_000))

    def step(kind: str, job: str) -> None:
        if kind == "restart":
            agent.restart()
            model.__init__()
        elif kind == "begin":
            t = float(next(clock))
            mark = f"begin {int(t)} of {job}"
            assert agent.c.jd_slots_begin(agent.slots, job.encode(), t, mark.encode()) >= 0
            model.begin(job, t, mark)
            last_begin[job] = mark
        else:
            agent.c.jd_slots_end(agent.slots, job.encode())
            model.end(job)
        for s in range(catalog.JOB_SLOTS):
            assert agent.named(s) == model.named(s), (kind, job, s)

    try:
        for kind, job in before:
            step(kind, job)
        step("begin", JOB)                            # the job's prolog
        slot = agent.c.jd_slots_find(agent.slots, JOB.encode())   # the epilog's lookup
        assert slot >= 0
        for kind, job in between:
            step(kind, job)
        named, values = agent.named(slot)             # the epilog's fetch of that slot
        refused = pcpfetch._not_the_jobs(JOB, ID_NAME, 0 if named is None else 1, named)
        event("taken" if refused is None else f"refused: the slot holds {'another job' if named else 'none'}")
        assert (refused is None) == (values is not None and values == last_begin[JOB])
        if refused is not None:
            assert f"no begin values of job {JOB}" in refused
    finally:
        c.jd_slots_free(agent.slots)
