"""Every Slurm job's report says when it did its I/O, through the real hooks/slurm wrappers and
the shipped default (the job view for every job): two private pmcds with the real agent, each on
its own sim client and sampling every WIDTH s, stand for nodes n1 and n2; both nodes run the
same schedule of known phases in real time (tests/kit/phaseload: an open storm at start-up then
small random reads on scratch, steady reads with a checkpoint every 6 bins on home). The first
node's epilog appends the text report with a "When" block under each filesystem (within 80
columns, the phases in words, the checkpoints), writes the HTML with the timeline's chart, and
keeps the record, whose timeline covers both nodes and sums to the totals."""

from __future__ import annotations

import time

import pytest

from kit import phaseload
from kit.hookkit import Rig
from lustre_jobreport.records import store as records

pytest.importorskip("pcp.pmapi")

WIDTH = 0.4
BINS = 30
JOB = dict(nodelist="n[1-2]")


@pytest.fixture
def two_nodes(wdir):
    """Under wdir: the job's user can reach the pmcds' unix sockets, as on a real node."""
    from lustre_sim import SimClient
    from kit.privpmcd import DEFAULT_ACCESS, PrivatePmcd

    clients, pmcds = {}, {}
    tmp_path = wdir / "nodes"
    try:
        for i, n in enumerate(("n1", "n2")):
            clients[n] = SimClient.create(tmp_path / f"tree-{n}", version="2.15.4",
                                          filesystems=[("scratch", 4, 1), ("home", 4, 1)], seed=40 + i)
            pmcds[n] = PrivatePmcd(tmp_path / n, tmp_path / f"tree-{n}", access=DEFAULT_ACCESS,
                                   interval=WIDTH).start()
        yield tmp_path, clients, pmcds
    finally:
        for p in pmcds.values():
            p.stop()


def schedules() -> list[phaseload.Schedule]:
    return [phaseload.startup_storm(BINS, fs="scratch", storm=3),
            phaseload.checkpoints(BINS, fs="home", period=6, first=3)]


def test_the_report_says_when_the_job_did_its_io(wdir, job_user, two_nodes):
    tmp_path, clients, pmcds = two_nodes
    rig = Rig(wdir, job_user, {n: p.spec for n, p in pmcds.items()}, hooks_extra="job_view_from_nodes = 1",
              snapshot=f'local_spec = "unix:{tmp_path}/{{host}}/pmcd.socket"')
    for n in ("n1", "n2"):
        rc, _, out, err = rig.prolog(node=n, **JOB)
        assert (rc, out, err) == (0, "", ""), rig.log_lines()
    plan = schedules()
    phaseload.drive(list(clients.values()), plan, WIDTH)
    time.sleep(WIDTH)
    rc, _, out, err = rig.epilog(node="n1", **JOB)
    assert (rc, out, err) == (0, "", "") and rig.errors() == [], rig.log_lines()

    [rec_path] = rig.record_files()
    doc = records.load(rec_path)
    tl = doc["timeline"]
    assert tl["hosts"] == 2 and tl["hosts_without"] == [] and tl["note"] is None
    for fs in ("scratch", "home"):
        assert tl["filesystems"][fs]["sums_to_totals"] is True
        assert sum(tl["filesystems"][fs]["write_bytes"]) == doc["filesystems"][fs]["write_bytes"]
    scratch, home = tl["filesystems"]["scratch"], tl["filesystems"]["home"]
    # the prologs to the schedule's first bin and the last bin's sample to the epilog: idle
    first = next(p for p in scratch["phases"] if p["kind"] != "idle")
    assert first["kind"] == "start-up burst" and first["channel"] == "metadata_ops" and first["end_s"] < 3 * WIDTH + 1
    assert first["opens"] > 0.8 * sum(p["opens"] for p in scratch["phases"])
    (periodic,) = home["periodic"]
    assert periodic["channel"] == "write_bytes" and periodic["count"] == len(plan[1].boundaries) // 2
    assert abs(periodic["period_s"] - 6 * WIDTH) <= WIDTH

    text = rig.out.read_text()
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    assert sum(line.strip().startswith("When (") for line in lines) == 2, text
    assert "start-up burst" in text and "checkpoints:" in text, text
    html_line = lines[-1]
    assert html_line.startswith("HTML report: ")
    html = open(html_line.split(": ", 1)[1].strip()).read()
    assert html.count("<svg") >= 3 and "start-up burst" in html
