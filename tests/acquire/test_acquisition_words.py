"""One acquisition path, one set of words: a host that fails says why in the same words whether
the snapshot read it with PCP's bindings ("pmapi") or with one pminfo per host ("pminfo"), so a
job's report, the hooks' log and a spooled begin snapshot do not depend on the backend.

Each failure is fetched by each backend in a fresh process: libpcp reads its timeouts once per
process and changes how long it waits for a silent pmcd once the process has made a request,
so what one test fetched must not decide what the next one sees."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kit.hookkit import BarePmcd, BlackHole, dead_spec
from lustre_jobreport.acquire import snapshot

TESTS = Path(__file__).resolve().parents[1]
BACKENDS = ("pminfo", "pmapi")

# fetch_all in a process of its own. warm_spec: a pmcd asked first (a request made), as in a
# fan-out over hundreds of hosts, where most have answered before a silent one is given up on.
FETCH = """
import json, sys
from lustre_jobreport.acquire import snapshot
backend, spec, warm_spec, connect_s, fetch_s = sys.argv[1:6]
kw = dict(backend=backend, connect_timeout_s=float(connect_s), fetch_timeout_s=float(fetch_s))
if warm_spec:
    snapshot.fetch_all([snapshot.HostTarget("warm", warm_spec)], **kw)
[h] = snapshot.fetch_all([snapshot.HostTarget("h", spec)], **kw).hosts
print(json.dumps([h.ok, h.error]))
"""


def words(backend: str, spec: str, *, warm_spec: str = "", connect_s: float = 1, fetch_s: float = 1) -> str:
    r = subprocess.run([sys.executable, "-c", FETCH, backend, spec, warm_spec, str(connect_s), str(fetch_s)],
                       capture_output=True, text=True, timeout=30, cwd=TESTS)
    assert r.returncode == 0, r.stderr
    ok, error = json.loads(r.stdout)
    assert not ok
    return error


@pytest.fixture(scope="module", autouse=True)
def bindings():
    if not snapshot.have_bindings():
        pytest.skip("PCP's Python bindings (python3-pcp) are needed for the pmapi backend")


@pytest.fixture(scope="module")
def bare(tmp_path_factory):
    """A pmcd without pmdalustreclient: a node where the agent is not installed."""
    with BarePmcd(tmp_path_factory.mktemp("bare")) as p:
        yield p


def test_a_host_that_refuses_is_said_alike():
    spec = dead_spec()
    assert [words(b, spec) for b in BACKENDS] == ["cannot connect to pmcd: Connection refused"] * 2


def test_a_host_that_accepts_and_never_answers_is_said_alike(bare):
    """Whether libpcp gives up on the silent pmcd first (after its request timeout, once the
    process has made a request) or the fan-out's bound does: the host had connect + fetch
    timeout, 1.5 s, and did not answer."""
    hole = BlackHole()
    try:
        got = {(b, warm): words(b, hole.spec, warm_spec=bare.spec if warm else "", connect_s=1, fetch_s=0.5)
               for b in BACKENDS for warm in (False, True)}
    finally:
        hole.close()
    assert set(got.values()) == {"no answer within 1.5 s"}, got


def test_a_pmcd_without_the_agent_is_said_alike(bare):
    """Not one lustreclient name is known there: both say so, not pminfo's last unknown name."""
    got = [words(b, bare.spec) for b in BACKENDS]
    assert got[0] == got[1], got
    assert got[0] == "fetch failed: Unknown metric name: no lustreclient metric (is pmdalustreclient installed?)"


def test_a_pmcd_without_the_agent_after_one_with_it_is_said_too(bare, tmp_path):
    """A fan-out looks the metrics up once, at the first host that answers: a later host without
    the agent then answered every PMID with an error, and PMAPI took it for a host read, with no
    values (its I/O counted as none)."""
    from lustre_sim import SimClient
    from kit.privpmcd import PrivatePmcd
    SimClient.create(tmp_path / "tree", version="2.15.4", filesystems=[("scratch", 2, 1)], seed=1)
    with PrivatePmcd(tmp_path / "pmcd", tmp_path / "tree") as agent:
        for backend in BACKENDS:
            hosts = snapshot.fetch_all([snapshot.HostTarget("with", agent.spec), snapshot.HostTarget("bare", bare.spec)],
                                       backend=backend, parallel=1, connect_timeout_s=5, fetch_timeout_s=10).hosts
            got = {h.host: (h.ok, h.error) for h in hosts}
            assert got["with"] == (True, None), (backend, got)
            assert got["bare"] == (False, "fetch failed: Unknown metric name: no lustreclient metric "
                                          "(is pmdalustreclient installed?)"), (backend, got)
