"""Torque jobs read through the agents' job view. Torque has no hooks, but its MoM runs
mom_priv/prologue.parallel on every sister host as the host joins the job, and the primary runs
the job only once every sister has answered (src/resmom/mom_comm.c im_join_job_as_sister,
handle_im_join_job_response), then its prologue (start_exec.c handle_prologs): so every host's
agent keeps the job's start before the job does anything. The wrappers run here as Torque's MoMs
run them (tests/kit/pbskit.TorqueRig: copies in each host's mom_priv, MoM's working directory,
Torque's arguments and environment, a sister under its own host name); the hosts are private
pmcds with the real agent on sim clients, and the job runs a schedule of known phases in real
time, so its report says when it did its I/O.
"""

from __future__ import annotations

from kit.hookkit import log_lines
from kit.pbskit import JOB, NODES, TorqueRig, job_view_config, run_job_and_check_its_timeline
from lustre_jobreport.records import store as records

BINS = 30


def torque_rig(wdir, job_user, where, pmcds, least: int = 1, parallel: bool = True) -> TorqueRig:
    return TorqueRig(wdir, job_user, parallel=parallel, **job_view_config(where, pmcds, least))


def the_record(rig) -> dict:
    [rec] = sorted(rig.records.rglob("*.json"))
    return records.load(rec)


def timeline_note(doc) -> str | None:
    notes = [n["detail"] for n in doc["notes"] if n["id"] == "TIMELINE_NONE"]
    return notes[0] if notes else None


def test_every_torque_host_keeps_the_start_and_the_report_says_when(wdir, job_user, two_hosts):
    where, clients, pmcds = two_hosts
    rig = torque_rig(wdir, job_user, where, pmcds)
    rc, took, out, err = rig.sister("nodeB")
    assert (rc, out, err) == (0, "", "") and rig.errors() == [], log_lines(rig.log)
    assert not rig.spool.exists() or not rig.mark().exists()     # a sister tells its own agent only
    rc, took, out, err = rig.prologue()
    assert (rc, out, err) == (0, "", "") and rig.errors() == [], log_lines(rig.log)
    assert rig.mark().exists() and not rig.begin_snapshot().exists()
    kept = [line for line in log_lines(rig.log) if "job start kept by the local agent" in line]
    assert [line.split(": ")[2] for line in kept] == [f"torque-sister prolog job {JOB}", f"pbs prolog job {JOB}"]

    run_job_and_check_its_timeline(rig, clients, BINS)


def test_without_prologue_parallel_the_job_is_snapshotted_and_its_report_says_why(wdir, job_user, two_hosts):
    """Torque's prologue and epilogue alone (no prologue.parallel in mom_priv): no host's agent
    is told, the prologue snapshots every host, and the report's note says why there is no
    "When" block."""
    where, clients, pmcds = two_hosts
    rig = torque_rig(wdir, job_user, where, pmcds, parallel=False)
    assert rig.prologue()[0] == 0 and rig.begin_snapshot().exists() and not rig.mark().exists()
    assert log_lines(rig.log) == []
    clients["nodeB"].run("overflow", fs="scratch")
    assert rig.epilogue()[0] == 0 and rig.errors() == [], log_lines(rig.log)
    doc = the_record(rig)
    assert doc["timeline"] is None and doc["job"]["hosts"] == list(NODES)
    assert doc["filesystems"]["scratch"]["read_bytes"] > 0
    assert "nor Torque's prologue.parallel, kept its start" in timeline_note(doc)
    assert "Note: no timeline" in rig.out.read_text()


def test_a_sister_whose_agent_could_not_keep_the_start_is_named(wdir, job_user, two_hosts):
    """nodeB's pmcd is down when its prologue.parallel runs: one log line there, the job is not
    held (exit 0), and the report leaves nodeB out of the totals, named, never counted as zero."""
    where, clients, pmcds = two_hosts
    rig = torque_rig(wdir, job_user, where, pmcds)
    pmcds["nodeB"].stop()
    assert rig.sister("nodeB")[:1] == (0,)
    [line] = rig.errors()
    assert f"torque-sister prolog job {JOB}: keeping the job's start" in line, line
    assert "the local agent did not keep the job's start" in line, line
    assert rig.prologue()[0] == 0 and rig.mark().exists() and not rig.begin_snapshot().exists()
    clients["nodeA"].run("overflow", fs="scratch")
    assert rig.epilogue()[0] == 0
    doc = the_record(rig)
    assert doc["job"]["hosts"] == ["nodeA"] and "nodeB" in doc["job"]["hosts_missing"], doc["job"]
    assert doc["timeline"]["hosts"] == 1 and doc["filesystems"]["scratch"]["read_bytes"] > 0


def test_a_pbs_pro_prologue_of_three_arguments_is_unchanged(wdir, job_user, two_hosts):
    """PBS Professional's MoM gives its prologue 3 arguments: whatever lies in mom_priv, it
    follows the begin hook's mark (none here: snapshots), stores nothing and marks nothing."""
    where, clients, pmcds = two_hosts
    rig = torque_rig(wdir, job_user, where, pmcds)
    rc, took, out, err = rig.pbs_pro_prologue()
    assert (rc, out, err) == (0, "", "") and log_lines(rig.log) == []
    assert rig.begin_snapshot().exists() and not rig.mark().exists()
    clients["nodeA"].run("overflow", fs="home")
    assert rig.epilogue()[0] == 0 and rig.errors() == [], log_lines(rig.log)
    doc = the_record(rig)
    assert doc["timeline"] is None and doc["filesystems"]["home"]["write_bytes"] > 0
    assert "no PBS execjob_begin hook" in timeline_note(doc)


def test_a_torque_prologue_that_leaves_the_job_to_snapshots_clears_a_stale_mark(wdir, job_user, two_hosts):
    """The rule says snapshots (job_view_from_nodes above the job's 2 hosts): the prologue
    clears a mark an earlier run of the same job id left and snapshots, so the report is whole
    and says why it has no timeline. (The sister, which cannot count the hosts, kept the start.)"""
    where, clients, pmcds = two_hosts
    rig = torque_rig(wdir, job_user, where, pmcds, least=3)
    assert rig.sister("nodeB")[0] == 0 and rig.errors() == []
    rig.spool.mkdir(mode=0o700, exist_ok=True)
    rig.mark().write_text("")
    assert rig.prologue()[0] == 0 and not rig.mark().exists() and rig.begin_snapshot().exists()
    clients["nodeB"].run("overflow", fs="home")
    assert rig.epilogue()[0] == 0 and rig.errors() == [], log_lines(rig.log)
    doc = the_record(rig)
    assert doc["job"]["hosts"] == list(NODES) and doc["filesystems"]["home"]["write_bytes"] > 0
    assert "fewer than 3 nodes" in timeline_note(doc)


def test_a_sister_that_torque_does_not_describe_is_one_log_line(wdir, job_user):
    """prologue.parallel where MoM names no sister (PBS_NODENUM 0 is the primary's place): one
    line, exit 0 (a non-zero exit would fail the job), nothing stored."""
    rig = TorqueRig(wdir, job_user, {})
    rc, took, out, err = rig.sister("nodeB", nodenum=0)
    assert (rc, out, err) == (0, "", "") and took < 5
    [line] = rig.errors()
    assert line.endswith(f"error: torque-sister prolog: job {JOB}: prologue.parallel is for a sister host, and "
                         "MoM gave it PBS_MSHOST 'nodeA' and PBS_NODENUM '0' on nodeB: the job's start not kept here")
