"""Jobs with faults, for the tests that read a job's end through the agents' job view
(tests/report/test_jobview.py, test_jobanswer.py): each scenario is what happens on one sim
client between the job's start and its end, SimClient.run workloads and SimClient.fault faults,
plus stats files that cannot be read at the end."""

from __future__ import annotations

from lustre_sim import SimClient


def _lose_osc_stats(client: SimClient, fs: str, ost: str) -> None:
    """One OSC's stats file unreadable at the job's end (its device still listed)."""
    [path] = [p for p in client.root.rglob("stats") if p.parent.name.startswith(f"{fs}-{ost}-osc")]
    path.unlink()


def _lose_osc_import(client: SimClient, fs: str, ost: str) -> None:
    """One OSC's import and state files unreadable at the job's end (the agent gives it no
    state; its device still listed, its stats read)."""
    for name in ("import", "state"):
        for path in client.root.rglob(name):
            if path.parent.name.startswith(f"{fs}-{ost}-osc"):
                path.unlink()


SCENARIOS = {
    "plain": lambda c: c.run("enzo", fs="scratch"),
    "osc stats cleared": lambda c: (c.run("overflow", fs="scratch"), c.fault("clear", fs="scratch", what="osc"),
                                    c.run("overflow", fs="scratch")),
    "llite stats cleared": lambda c: (c.run("overflow", fs="scratch"), c.fault("clear", fs="scratch", what="llite")),
    "rpc_stats cleared": lambda c: (c.run("enzo", fs="scratch"), c.fault("clear", fs="scratch", what="rpc_stats"),
                                    c.run("overflow", fs="scratch")),
    "remounted": lambda c: (c.run("overflow", fs="scratch"), c.fault("remount", fs="home"),
                            c.run("overflow", fs="home")),
    "OST added": lambda c: (c.fault("add-ost", fs="scratch", count=2), c.run("overflow", fs="scratch")),
    "osc stats unreadable at the end": lambda c: (c.run("overflow", fs="scratch"),
                                                  _lose_osc_stats(c, "scratch", "OST0002")),
    "osc import unreadable at the end": lambda c: (c.run("overflow", fs="scratch"),
                                                   _lose_osc_import(c, "scratch", "OST0003")),
    "evicted": lambda c: (c.run("overflow", fs="scratch"), c.fault("evict", fs="scratch", target="OST0001"),
                          c.fault("reconnect", fs="scratch", target="OST0001"), c.run("overflow", fs="scratch")),
}
