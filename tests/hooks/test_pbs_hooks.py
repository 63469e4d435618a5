"""The PBS/Torque wrappers (hooks/pbs/prologue, epilogue), run as MoM runs them: as root on the
primary host, with the documented argv (prologue: job id, user, group; epilogue: those plus job
name, session, resources asked and used, queue, account, exit status), stdin /dev/null, a
PBS_NODEFILE listing each host once per slot, and, for the epilogue, standard output opened on
the job's output file (MoM appends it there). PBS itself does not exist on Debian 12, so this is
its contract, not a live pbs_mom; the nodes are two private pmcds with the real agent.
"""

from __future__ import annotations

import os
import stat

import pytest

from kit.hookkit import dead_spec, fake_reporter, log_lines, write_defaults
from kit.pbskit import JOB, PbsRig
from lustre_jobreport.records import store as records
from lustre_jobreport.report import view as render
from kit.nsshang import HANG_S, UNKNOWN_GROUP, hung_group_lookups
from lustre_sim import SimClient
from kit.privpmcd import PrivatePmcd


@pytest.fixture
def two_nodes(tmp_path):
    clients, pmcds = [], []
    for name in ("A", "B"):
        clients.append(SimClient.create(tmp_path / f"tree{name}", version="2.12.9",
                                        filesystems=[("scratch", 4, 1)], seed=len(name) + len(clients)))
        pmcds.append(PrivatePmcd(tmp_path / f"pmcd{name}", tmp_path / f"tree{name}").start())
    try:
        yield clients, pmcds
    finally:
        for p in pmcds:
            p.stop()


def test_prologue_and_epilogue_put_the_report_in_the_job_output(wdir, job_user, two_nodes):
    (a, b), (pa, pb) = two_nodes
    rig = PbsRig(wdir, job_user, {"nodeA": pa.spec, "nodeB": pb.spec})
    rc, took, out, err = rig.prologue()
    assert (rc, out, err) == (0, "", "") and took < 5           # nothing for the job's output
    assert (rig.spool / f"{JOB}.begin.json").exists(), log_lines(rig.log)
    ran_a = a.run("overflow", fs="scratch")
    ran_b = b.run("ior", fs="scratch", tasks=2, block_size=1 << 22, transfer_size=1 << 20)
    rc, took, out, err = rig.epilogue()
    assert (rc, err) == (0, "") and took < 30
    recs = sorted(rig.records.rglob("*.json"))
    assert len(recs) == 1, log_lines(rig.log)
    rec = recs[0]
    assert rec.name == f"pbs01-{JOB}.json"
    doc = records.load(rec)
    fs = doc["filesystems"]["scratch"]
    assert doc["job"]["hosts"] == ["nodeA", "nodeB"] and doc["job"]["user"] == job_user.pw_name
    assert fs["hosts"]["nodeA"]["read_bytes"] == ran_a["read_bytes"]
    assert fs["hosts"]["nodeB"]["write_bytes"] == ran_b["write_bytes"]
    assert fs["write_bytes"] == ran_a["write_bytes"] + ran_b["write_bytes"]
    assert doc["record"]["exit_code"] == "0" and doc["record"]["job_name"] == "myjob"
    html = rig.workdir / f"{JOB}.lustre.html"
    assert rig.out.read_text() == "job output\n" + "\n" + render.render_text(doc, html_path=str(html)), \
        log_lines(rig.log)
    assert "2 hosts" in rig.out.read_text()
    st = os.stat(html)
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (job_user.pw_uid, 0o600)
    assert rig.errors() == [] and os.listdir(rig.spool) == []


def test_a_node_dead_at_the_end_is_reported_not_fatal(wdir, job_user, two_nodes):
    (a, b), (pa, pb) = two_nodes
    rig = PbsRig(wdir, job_user, {"nodeA": pa.spec, "nodeB": pb.spec})
    assert rig.prologue()[0] == 0
    a.run("overflow", fs="scratch")
    pb.stop()                                                        # nodeB's pmcd dies
    rc, took, out, err = rig.epilogue()
    assert (rc, err) == (0, "")
    text = rig.out.read_text()
    assert "1 host | 1 unreachable" in text and "nodeB could not be read" in text, (text, rig.errors())
    [line] = rig.errors()
    assert "1 of 2 hosts not read at job end: nodeB: cannot connect to pmcd" in line


def test_failures_never_reach_the_job_output(wdir, job_user):
    rig = PbsRig(wdir, job_user, {"nodeA": dead_spec(), "nodeB": dead_spec()})
    rc, took, out, err = rig.prologue()
    assert (rc, out, err) == (0, "", "") and took < 5
    rc, took, out, err = rig.epilogue()
    assert (rc, err) == (0, "") and rig.out.read_text() == "job output\n"
    assert "no host could be read at job start" in rig.errors()[0]
    assert "no begin snapshot in the spool" in rig.errors()[-1]


def test_epilogue_with_a_broken_reporter_says_nothing_to_the_job(wdir, job_user):
    rig = PbsRig(wdir, job_user, {"nodeA": dead_spec()})
    crash = fake_reporter(wdir / "crash", "echo partial-stderr >&2\nexit 3\n")
    write_defaults(rig.defaults, config=rig.config, reporter=crash)
    rc, took, out, err = rig.epilogue()
    assert (rc, err) == (0, "") and rig.out.read_text() == "job output\n"
    [line] = rig.errors()
    assert line.endswith(f"error: pbs epilog job {JOB}: exit 3: partial-stderr")


def test_what_a_broken_reporter_said_reaches_the_log_without_terminal_controls(wdir, job_user):
    """A crash's last stderr line is not the reporter's own words (those are escaped already):
    an interpreter's or a library's, it may hold an escape sequence that an admin's `tail -f`
    would obey. The wrapper shows each control character as '?'."""
    rig = PbsRig(wdir, job_user, {"nodeA": dead_spec()})
    crash = fake_reporter(wdir / "crash", "printf 'bad \\033]52;c;ZXZpbAo=\\007 \\302\\233 \\033[2J end\\n' >&2\nexit 3\n")
    write_defaults(rig.defaults, config=rig.config, reporter=crash)
    rc, took, out, err = rig.epilogue()
    assert (rc, err) == (0, "")
    [line] = rig.errors()
    assert line.endswith(f"error: pbs epilog job {JOB}: exit 3: bad ?]52;c;ZXZpbAo=? ? ?[2J end"), line


def test_a_hung_group_lookup_does_not_hold_the_prologue(wdir, job_user, two_nodes, tmp_path):
    """The job's user and group are not needed to snapshot its nodes: the prologue does not ask
    NSS for them (it used to, as root, before its own bound began: a hung LDAP/NIS/hesiod server
    held it until the wrapper killed it, nothing spooled, no step named)."""
    (a, b), (pa, pb) = two_nodes
    rig = PbsRig(wdir, job_user, {"nodeA": pa.spec, "nodeB": pb.spec}, group=UNKNOWN_GROUP, prolog_timeout_s=3)
    with hung_group_lookups(tmp_path) as rig.nss:
        rc, took, out, err = rig.prologue()
    assert (rc, out, err) == (0, "", "")
    assert (rig.spool / f"{JOB}.begin.json").exists(), log_lines(rig.log)
    assert rig.errors() == [] and took < 2


def test_a_hung_group_lookup_costs_the_epilogue_its_html_only(wdir, job_user, two_nodes, tmp_path):
    """The HTML beside the output is written as the job user, so the epilogue needs the user's
    and group's ids for it, and for nothing else: it asks NSS for them there, bounded by
    scheduler_timeout_s, as a named step. A lookup that hangs costs one log line naming it and
    the HTML (never written as root instead); the text report and the record still arrive."""
    (a, b), (pa, pb) = two_nodes
    rig = PbsRig(wdir, job_user, {"nodeA": pa.spec, "nodeB": pb.spec}, group=UNKNOWN_GROUP,
                 epilog_timeout_s=HANG_S, hooks_extra="scheduler_timeout_s = 1")
    assert rig.prologue()[0] == 0 and rig.errors() == []        # NSS fine at the job's start
    a.run("overflow", fs="scratch")
    with hung_group_lookups(tmp_path) as rig.nss:
        rc, took, out, err = rig.epilogue()
    assert (rc, err) == (0, "")
    [line] = rig.errors()
    assert f"getent group {UNKNOWN_GROUP}: no answer within 1.0 s" in line, line
    assert line.endswith("; no HTML report beside the output"), line
    assert took < HANG_S - 1, took
    [rec] = sorted(rig.records.rglob("*.json"))
    # the text said where the HTML report would be, and then that it is not there
    html = rig.workdir / f"{JOB}.lustre.html"
    assert rig.out.read_text() == ("job output\n" + "\n" + render.render_text(records.load(rec), html_path=str(html))
                                   + render.HTML_NOT_WRITTEN + "\n")
    assert not html.exists()
