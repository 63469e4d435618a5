"""The fan-out's bounds (snapshot._run_bounded), with a fetch the test controls: each host gets
its own outcome, in the order given; at most `parallel` hosts are read at once, not counting
hosts given up on; a host over its bound is said as not answering while the others go on; past
the deadline, what was not read is said as not reached. Real hosts (pmcds that never answer,
hung workers) are in test_acquisition_words.py and test_procfanout.py."""

from __future__ import annotations

import threading

from hypothesis import given, settings, strategies as st

from lustre_jobreport.acquire import hostsnap, snapshot


class Fake:
    """fetch(target): a host read at once, failed at once, or hung until release(); counts the
    hosts being read at once (hung ones as well, until they are given up on)."""

    def __init__(self, kinds: dict[str, str]) -> None:
        self.kinds = kinds
        self.lock = threading.Lock()
        self.now = self.peak = 0
        self.released = threading.Event()

    def fetch(self, t: snapshot.HostTarget) -> hostsnap.HostSnapshot:
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        try:
            kind = self.kinds[t.name]
            if kind == "hang":
                self.released.wait(30)
                return hostsnap.HostSnapshot(t.name, t.spec, ok=True)   # too late: not taken
            return hostsnap.HostSnapshot(t.name, t.spec, ok=kind == "ok", error=None if kind == "ok" else "refused")
        finally:
            with self.lock:
                self.now -= 1


def targets(n: int) -> list[snapshot.HostTarget]:
    return [snapshot.HostTarget(f"h{i:03d}", f"spec{i}") for i in range(n)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["ok", "fail"]), min_size=1, max_size=60), st.integers(1, 9))
def test_each_host_has_its_own_outcome_in_order_and_at_most_parallel_are_read_at_once(kinds, parallel):
    ts = targets(len(kinds))
    fake = Fake({t.name: k for t, k in zip(ts, kinds)})
    got = snapshot._run_bounded(ts, fake.fetch, parallel, per_host_s=30, deadline_s=None)
    assert [(h.host, h.ok) for h in got] == [(t.name, k == "ok") for t, k in zip(ts, kinds)]
    assert fake.peak <= parallel


def test_a_host_over_its_bound_is_said_and_the_others_are_read():
    ts = targets(12)
    fake = Fake({t.name: "hang" if i in (1, 5) else "ok" for i, t in enumerate(ts)})
    try:
        got = snapshot._run_bounded(ts, fake.fetch, 2, per_host_s=0.5, deadline_s=None)
    finally:
        fake.released.set()
    assert [h.ok for h in got] == [i not in (1, 5) for i in range(12)]
    assert {got[1].error, got[5].error} == {hostsnap.no_answer(0.5)}
    # the hung hosts' threads were replaced: the others were still read two at a time at most,
    # plus the hung ones, which were never given back
    assert fake.peak <= 2 + 2


def test_past_the_deadline_the_hosts_not_read_are_said_not_reached():
    ts = targets(6)
    fake = Fake({t.name: "hang" if i == 2 else "ok" for i, t in enumerate(ts)})
    try:
        got = snapshot._run_bounded(ts, fake.fetch, 1, per_host_s=30, deadline_s=0.5)
    finally:
        fake.released.set()
    assert [h.ok for h in got] == [True, True, False, False, False, False]
    assert all(h.error.startswith("not reached") for h in got[2:]), [h.error for h in got]


def test_one_host_read_by_pminfo_is_read_by_the_calling_thread(monkeypatch):
    """A job on one node (most jobs): its one `pminfo` is bound by its own timeout, so the
    fan-out starts no thread for it (a thread's start and hand-back are what a busy node makes a
    job's start wait for); the host is said as a fan-out of several says it."""
    from kit.hookkit import dead_spec

    started = []
    real_start = threading.Thread.start
    monkeypatch.setattr(threading.Thread, "start", lambda self: (started.append(self.name), real_start(self))[1])
    spec = dead_spec()
    [alone] = snapshot.fetch_all([snapshot.HostTarget("n1", spec)], backend="pminfo",
                                 connect_timeout_s=1, fetch_timeout_s=1).hosts
    assert started == []
    [*_, among] = snapshot.fetch_all([snapshot.HostTarget("n0", spec), snapshot.HostTarget("n1", spec)],
                                     backend="pminfo", connect_timeout_s=1, fetch_timeout_s=1).hosts
    assert started != []                                   # the detector sees a fan-out's threads
    assert (alone.host, alone.ok, alone.error) == (among.host, among.ok, among.error) \
        == ("n1", False, "cannot connect to pmcd: Connection refused")
