"""A host whose answer is not of the job: its slot changed hands between the epilog's lookup of
the slot and its fetch, or its agent does not say whose deltas it serves.

The epilog finds a host's slot of the job by its id (pcpfetch._job_slot: one pmLookupInDom),
then fetches that slot's deltas. If meanwhile a newer job's prolog on that node took the slot
(the job's slot was the oldest of 8 in use), or the slot was freed (job_end, an agent restart),
the fetch answers for the newer job, or for none. The answer names the job it is of, in the same
fetch (lustreclient.job.slot<S>.job_id), so the host is left out and said, as a host whose agent
does not know the job: never another job's deltas, nor none, under this job's name.

Each race is made deterministic through the real agent in a private pmcd: the test wraps
_job_slot so that, right after the real lookup, the slot changes hands (8 newer jobs begin on
the node, the 8th evicting the job, the oldest, and taking its slot, then doing I/O of its own;
or job_end; or an agent restart); then the fetch runs as it would.
"""

from __future__ import annotations

import subprocess

import pytest

pcpfetch = pytest.importorskip("lustre_jobreport.acquire.pcpfetch")
if not pcpfetch.HAVE_PMAPI:
    pytest.skip("PCP's Python bindings are not importable", allow_module_level=True)

from lustre_jobreport import catalog, config  # noqa: E402
from lustre_jobreport.report import jobview, document as report
from lustre_jobreport.acquire import snapshot
from lustre_jobreport.acquire.snapfile import Snapshot                            # noqa: E402
from lustre_sim import SimClient                                          # noqa: E402
from kit.privpmcd import PrivatePmcd                                          # noqa: E402

CFG = config.Config()
JOB = "4242"
NEWER = [f"5000{i}" for i in range(catalog.JOB_SLOTS)]


def store_begin(pmcd: PrivatePmcd, job: str) -> None:
    done = subprocess.run(["pmstore", "-h", pmcd.local_spec, catalog.JOB_BEGIN_CONTROL, job],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr


def slots_held(pmcd: PrivatePmcd) -> dict[int, str]:
    """The agent's slots in use now: slot -> job id (the JOB instance domain)."""
    from pcp import pmapi
    ctx = pmapi.pmContext(pmapi.c_api.PM_CONTEXT_HOST, pmcd.spec)
    ids, names = ctx.pmGetInDom(indom=pcpfetch.JOB_INDOM)
    return dict(zip(ids or (), names or ()))


def end_report(pmcd: PrivatePmcd) -> tuple[list, dict]:
    fetched = snapshot.fetch_all([snapshot.HostTarget("node0", pmcd.spec)], connect_timeout_s=5,
                                 fetch_timeout_s=20, job_id=JOB)
    viewed = Snapshot.from_hosts(fetched.taken_at, fetched.hosts)
    return fetched.hosts, report.from_delta(jobview.delta(viewed, JOB), CFG, job_id=JOB, user="u")


def test_a_slot_taken_by_a_newer_job_after_the_lookup_is_a_host_left_out_and_said(tmp_path, monkeypatch):
    client = SimClient.create(tmp_path / "tree", version="2.15.4", filesystems=[("scratch", 4, 1)], seed=11)
    with PrivatePmcd(tmp_path / "pmcd", tmp_path / "tree") as pmcd:
        store_begin(pmcd, JOB)
        client.run("enzo", fs="scratch")                 # the job's I/O
        looked_up: list[int] = []
        real_lookup = pcpfetch._job_slot

        def lookup_then_newer_jobs_take_the_slot(ctx, job_id: str) -> int:
            slot = real_lookup(ctx, job_id)
            looked_up.append(slot)
            for job in NEWER:                            # 7 free slots, then the oldest: the job's
                store_begin(pmcd, job)
            client.run("overflow", fs="scratch")         # the newer job's I/O
            return slot

        monkeypatch.setattr(pcpfetch, "_job_slot", lookup_then_newer_jobs_take_the_slot)
        hosts, doc = end_report(pmcd)
        held = slots_held(pmcd)
    # the race happened: the slot the epilog looked up holds the 8th newer job at the fetch
    assert looked_up and held.get(looked_up[0]) == NEWER[-1] and JOB not in held.values()
    [host] = hosts
    assert not host.ok and f"no begin values of job {JOB}" in host.error and "newer jobs took its slot" in host.error
    assert doc["job"]["hosts"] == [] and doc["job"]["hosts_missing"] == ["node0"]
    assert doc["filesystems"] == {}                     # no number of the other job under this job's name
    [q] = doc["data_quality"]
    assert q["id"] == "HOST_UNREACHABLE" and q["host"] == "node0" and "newer jobs took its slot" in q["detail"]


def end_job_by_hand(pmcd: PrivatePmcd) -> None:
    done = subprocess.run(["pmstore", "-h", pmcd.local_spec, "lustreclient.control.job_end", JOB],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("free_the_slot", [end_job_by_hand, PrivatePmcd.restart_agent],
                         ids=["job_end by hand", "agent restarted"])
def test_a_slot_freed_after_the_lookup_is_a_host_left_out_and_said(tmp_path, monkeypatch, free_the_slot):
    """job_end by hand, or an agent restart (it forgets its jobs), between the lookup and the
    fetch: the slot answers no values at all, which the reporter took as a job that moved
    nothing on its OSTs."""
    client = SimClient.create(tmp_path / "tree", version="2.15.4", filesystems=[("scratch", 4, 1)], seed=12)
    with PrivatePmcd(tmp_path / "pmcd", tmp_path / "tree") as pmcd:
        store_begin(pmcd, JOB)
        client.run("enzo", fs="scratch")
        real_lookup = pcpfetch._job_slot

        def lookup_then_the_slot_is_freed(ctx, job_id: str) -> int:
            slot = real_lookup(ctx, job_id)
            free_the_slot(pmcd)
            return slot

        monkeypatch.setattr(pcpfetch, "_job_slot", lookup_then_the_slot_is_freed)
        hosts, doc = end_report(pmcd)
        assert slots_held(pmcd) == {}
    [host] = hosts
    assert not host.ok and f"no begin values of job {JOB}" in host.error
    assert doc["job"]["hosts"] == [] and doc["job"]["hosts_missing"] == ["node0"] and doc["filesystems"] == {}


class OlderNamespacePmcd(PrivatePmcd):
    """A node whose pmcd has the namespace of an agent older than the job ids of its slots."""

    def prepare(self) -> tuple[str, str]:
        conf, pmns = super().prepare()
        return conf, "\n".join(line for line in pmns.splitlines() if not line.strip().startswith("job_id"))


def test_an_agent_that_does_not_name_the_job_is_a_host_left_out_and_the_others_are_read(tmp_path):
    """Its deltas could be another job's: left out and said. It is read first, and what its
    namespace lacks is not taken for the other hosts, which are read whole."""
    old = SimClient.create(tmp_path / "old-tree", version="2.15.4", filesystems=[("scratch", 4, 1)], seed=14)
    new = SimClient.create(tmp_path / "new-tree", version="2.15.4", filesystems=[("scratch", 4, 1)], seed=15)
    with OlderNamespacePmcd(tmp_path / "old", tmp_path / "old-tree") as old_pmcd, \
            PrivatePmcd(tmp_path / "new", tmp_path / "new-tree") as new_pmcd:
        store_begin(old_pmcd, JOB)
        store_begin(new_pmcd, JOB)
        old.run("overflow", fs="scratch")
        ran = new.run("overflow", fs="scratch")
        fetched = snapshot.fetch_all([snapshot.HostTarget("old", old_pmcd.spec), snapshot.HostTarget("new", new_pmcd.spec)],
                                     connect_timeout_s=5, fetch_timeout_s=20, parallel=1, job_id=JOB)
    by_name = {h.host: h for h in fetched.hosts}
    assert not by_name["old"].ok and "does not say which job its deltas are of" in by_name["old"].error
    assert "lustreclient.job.slot0.job_id" in by_name["old"].error
    assert by_name["new"].ok, by_name["new"].error
    doc = report.from_delta(jobview.delta(Snapshot.from_hosts(fetched.taken_at, fetched.hosts), JOB), CFG,
                            job_id=JOB, user="u")
    assert doc["job"]["hosts"] == ["new"] and doc["job"]["hosts_missing"] == ["old"]
    scratch = doc["filesystems"]["scratch"]
    assert (scratch["read_bytes"], scratch["write_bytes"]) == (ran["read_bytes"], ran["write_bytes"])
    assert [q["id"] for q in doc["data_quality"] if q["id"] != "SHORT_JOB"] == ["HOST_UNREACHABLE"]
