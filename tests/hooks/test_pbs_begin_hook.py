"""PBS jobs read through the agents' job view: the execjob_begin hook (hooks/pbs/lustre_jobreport.py)
keeps the job's start in every host's agent, marks the job in the primary's spool, and the
prologue and epilogue (primary only) follow the mark. Run as MoM runs them (tests/kit/pbskit: the
hook under a stand-in for PBS's hook module, the documented contract; the wrappers as root with
MoM's argv); the hosts are private pmcds with the real agent on sim clients, and the job runs a
schedule of known phases in real time, so its report says when it did its I/O.
"""

from __future__ import annotations

import subprocess
import time

import pytest

from kit.hookkit import dead_spec, log_lines
from kit.pbskit import JOB, NODES, PbsRig, job_view_config, run_begin_hook, run_job_and_check_its_timeline
from lustre_jobreport.records import store as records

BINS = 30


def job_view_rig(wdir, job_user, where, pmcds, least: int = 1) -> PbsRig:
    return PbsRig(wdir, job_user, **job_view_config(where, pmcds, least))


def test_every_host_keeps_the_start_and_the_report_says_when(wdir, job_user, two_hosts):
    where, clients, pmcds = two_hosts
    rig = job_view_rig(wdir, job_user, where, pmcds)
    sister = rig.begin_hook("nodeB")
    assert sister.accepted and sister.logged == [] and sister.returncode == 0, sister
    assert not rig.mark().exists()                     # a sister tells its own agent only
    primary = rig.begin_hook("nodeA")
    assert primary.accepted and primary.logged == [], primary
    assert rig.mark().exists() and rig.errors() == [], log_lines(rig.log)
    rc, took, out, err = rig.prologue()
    assert (rc, out, err) == (0, "", "") and not rig.begin_snapshot().exists(), log_lines(rig.log)

    run_job_and_check_its_timeline(rig, clients, BINS)


def test_without_the_hook_the_job_is_snapshotted_and_its_report_says_why_no_timeline(wdir, job_user, two_hosts):
    """A site with the prologue and epilogue only: no mark, so the prologue snapshots every
    host, and the report's note says why it has no "When" block."""
    where, clients, pmcds = two_hosts
    rig = job_view_rig(wdir, job_user, where, pmcds)
    assert rig.prologue()[0] == 0 and rig.begin_snapshot().exists(), log_lines(rig.log)
    clients["nodeA"].run("overflow", fs="scratch")
    assert rig.epilogue()[0] == 0 and rig.errors() == [], log_lines(rig.log)
    [rec] = sorted(rig.records.rglob("*.json"))
    doc = records.load(rec)
    assert doc["timeline"] is None
    [note] = [n for n in doc["notes"] if n["id"] == "TIMELINE_NONE"]
    assert "no PBS execjob_begin hook" in note["detail"]
    assert "Note: no timeline" in rig.out.read_text()


def test_a_hook_that_leaves_the_job_to_snapshots_clears_a_stale_mark(wdir, job_user, two_hosts):
    """The rule says snapshots (job_view_from_nodes above the job's 2 hosts): no host's agent
    is told, and a mark an earlier run of the same job id left (its epilogue never came) is
    cleared on the primary, so the prologue snapshots and the report is whole."""
    where, clients, pmcds = two_hosts
    rig = job_view_rig(wdir, job_user, where, pmcds, least=3)
    rig.spool.mkdir(mode=0o700)
    rig.mark().write_text("")
    for node in reversed(NODES):
        assert rig.begin_hook(node).accepted
    assert not rig.mark().exists(), log_lines(rig.log)
    assert rig.prologue()[0] == 0 and rig.begin_snapshot().exists()
    clients["nodeB"].run("overflow", fs="home")
    assert rig.epilogue()[0] == 0 and rig.errors() == [], log_lines(rig.log)
    [rec] = sorted(rig.records.rglob("*.json"))
    doc = records.load(rec)
    assert doc["job"]["hosts"] == list(NODES) and doc["filesystems"]["home"]["write_bytes"] > 0
    [note] = [n for n in doc["notes"] if n["id"] == "TIMELINE_NONE"]
    assert "fewer than 3 nodes" in note["detail"]


def test_a_host_whose_agent_could_not_keep_the_start_is_named(wdir, job_user, two_hosts):
    """nodeB's pmcd is down when its hook runs: one log line there, and the report leaves
    nodeB out of the totals, named, never counted as zero."""
    where, clients, pmcds = two_hosts
    rig = job_view_rig(wdir, job_user, where, pmcds)
    pmcds["nodeB"].stop()
    assert rig.begin_hook("nodeB").accepted
    [line] = rig.errors()
    assert f"pbs-hook prolog job {JOB}: keeping the job's start" in line, line
    assert "the local agent did not keep the job's start" in line, line
    assert rig.begin_hook("nodeA").accepted and rig.mark().exists()
    assert rig.prologue()[0] == 0 and not rig.begin_snapshot().exists()
    clients["nodeA"].run("overflow", fs="scratch")
    assert rig.epilogue()[0] == 0
    [rec] = sorted(rig.records.rglob("*.json"))
    doc = records.load(rec)
    assert doc["job"]["hosts"] == ["nodeA"] and "nodeB" in doc["job"]["hosts_missing"], doc["job"]
    assert doc["timeline"]["hosts"] == 1


# ---- the hook itself: it never holds or fails a job ---------------------------------------------

def test_the_hook_accepts_when_its_wrapper_is_missing(wdir):
    run = run_begin_hook(wdir / "hook", "nodeA", primary=True, settings={"wrapper": str(wdir / "nowhere")})
    assert run.accepted and run.returncode == 0, run
    [said] = run.logged
    assert said.startswith("lustre-jobreport: job start not kept: FileNotFoundError"), said


def test_the_hook_accepts_with_unusable_settings(wdir):
    run = run_begin_hook(wdir / "hook", "nodeA", primary=True, settings=["not", "an", "object"])
    assert run.accepted and "not a JSON object" in run.logged[0], run
    run = run_begin_hook(wdir / "hook", "nodeA", primary=True, settings={"wait_s": -1})
    assert run.accepted and "wait_s must be above 0" in run.logged[0], run


def test_the_hook_kills_a_wrapper_that_overstays_with_its_children(wdir):
    """A wrapper (and what it started) still running after wait_s is killed as a process group;
    the hook accepts and says so in MoM's log."""
    pids = wdir / "pids"
    hang = wdir / "hang"
    hang.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {pids}\nwait\n")
    hang.chmod(0o755)
    started = time.monotonic()
    run = run_begin_hook(wdir / "hook", "nodeA", primary=True, settings={"wrapper": str(hang), "wait_s": 0.5})
    assert time.monotonic() - started < 30
    assert run.accepted and "still running after 0.5 s: killed" in run.logged[0], run
    child = pids.read_text().strip()
    stat = subprocess.run(["ps", "-o", "stat=", "-p", child], capture_output=True, text=True).stdout.strip()
    assert stat in ("", "Z"), stat            # gone (or a zombie the reaper here leaves)


def test_the_hook_does_nothing_for_another_event(wdir):
    ran = wdir / "ran"
    spy = wdir / "spy"
    spy.write_text(f"#!/bin/sh\ntouch {ran}\n")
    spy.chmod(0o755)
    run = run_begin_hook(wdir / "hook", "nodeA", primary=True, settings={"wrapper": str(spy)}, event=0x200)
    assert run.accepted and run.logged == [] and not ran.exists()
    run = run_begin_hook(wdir / "hook", "nodeA", primary=True, settings={"wrapper": str(spy)})
    assert run.accepted and ran.exists()


def test_the_hook_passes_the_documented_arguments(wdir):
    said = wdir / "argv"
    spy = wdir / "spy"
    spy.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {said}\n')
    spy.chmod(0o755)
    for node, primary in (("nodeB", False), ("nodeA", True)):
        run = run_begin_hook(wdir / "hook", node, primary=primary, settings={"wrapper": str(spy)})
        assert run.accepted
        assert said.read_text().splitlines() == [JOB, node, "primary" if primary else "sister",
                                                 "nodeA/0*4+nodeB/0*4"]
    run_begin_hook(wdir / "hook", "nodeA", primary=True, settings={"wrapper": str(spy)}, exec_host=None)
    assert said.read_text().splitlines()[-1] == ""


def test_a_dead_local_pmcd_costs_the_bound_not_more(wdir, job_user):
    """The wrapper under the hook holds [hooks] prolog_timeout_s, whatever the agent does."""
    rig = PbsRig(wdir, job_user, {"nodeA": dead_spec()}, hooks_extra="job_view_from_nodes = 1",
                 snapshot=f'local_spec = "{dead_spec()}"', prolog_timeout_s=2)
    started = time.monotonic()
    assert rig.begin_hook("nodeA").accepted
    assert time.monotonic() - started < 10
    assert any("keeping the job's start" in line for line in rig.errors()), log_lines(rig.log)


@pytest.mark.parametrize("least, bindings, scheduler, said", [
    (0, True, "slurm", "[hooks] job_view_from_nodes = 0"),
    (3, True, "slurm", "a job on fewer than 3 nodes ([hooks] job_view_from_nodes)"),
    (1, False, "pbs", "no PCP Python bindings for the reporter's Python"),
    (1, True, "pbs", "no PBS execjob_begin hook, nor Torque's prologue.parallel, kept its start on its hosts "
                     "(hooks/README.md)")])
def test_a_job_read_by_snapshots_is_told_why(tmp_path, monkeypatch, least, bindings, scheduler, said):
    from lustre_jobreport import config
    from lustre_jobreport.hooks import hooksnap, jobenv

    path = tmp_path / "c.toml"
    path.write_text(f"[hooks]\njob_view_from_nodes = {least}\n")
    monkeypatch.setattr(hooksnap, "_have_bindings", lambda: bindings)
    job = jobenv.Job(scheduler, "5", None, None, None, ["n1", "n2"], "n1", "c", every_node=scheduler == "slurm")
    assert hooksnap.why_snapshots(job, config.load(str(path))) == said
