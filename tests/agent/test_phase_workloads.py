"""The timeline's phases on workloads of known phases, through the real agent: one sim client
with four filesystems, each running its own schedule bin by bin in real time (tests/kit/phaseload:
a start-up open storm then small random reads; steady reads with a checkpoint every 10 bins; a
read phase then a write phase; steady small reads), a private pmcd running the agent sampling
every WIDTH seconds, one job over all of it. The series the agent serves, read plainly
(tests/kit/seriesread), goes to the phase finder (report/phases.py): every phase of every
schedule is found within one bin, with its kind, the checkpoints as periodic at their period,
and the steady schedule as one steady phase. The same job read as the epilog reads it (the
fan-out with the timeline's sums, the job view's deltas, the report document): its timeline
sums to its totals on every filesystem, and its phases are the schedule's, in seconds since
the job began, within one bin."""

from __future__ import annotations

import subprocess
import time
from datetime import datetime

import numpy as np
import pytest

from lustre_jobreport import agentcontract
from lustre_jobreport.report import phases

pytest.importorskip("pcp.pmapi")

from kit import phaseload, seriesread  # noqa: E402
from kit.privpmcd import PrivatePmcd  # noqa: E402
from kit.seriesread import decode, fetch_together  # noqa: E402

WIDTH = 0.3
BINS = 40
JOB = "8101"
SLOT = "lustreclient.job.slot0"
METADATA = [i for i, m in enumerate(agentcontract.JOB_SERIES) if m.startswith("llite.")][4:]


def schedules() -> list[phaseload.Schedule]:
    return [phaseload.startup_storm(BINS), phaseload.checkpoints(BINS, period=10, first=5),
            phaseload.read_then_write(BINS), phaseload.steady(BINS)]


@pytest.fixture(scope="module")
def driven(tmp_path_factory):
    """The four schedules driven through one job; the agent's series of it, and the epoch bin
    of schedule bin 0."""
    from lustre_sim import SimClient

    tmp = tmp_path_factory.mktemp("phases")
    plan = schedules()
    client = SimClient.create(tmp / "tree", version="2.15.4", filesystems=[(s.fs, 4, 1) for s in plan], seed=5)
    with PrivatePmcd(tmp / "pmcd", tmp / "tree", interval=WIDTH) as pmcd:
        done = subprocess.run(["pmstore", "-h", pmcd.local_spec, "lustreclient.control.job_begin", JOB],
                              capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        first = phaseload.drive(client, plan, WIDTH)
        time.sleep(WIDTH)        # the last bin's timed sample
        values, _ = fetch_together(pmcd.spec, [f"{SLOT}.series", "lustreclient.job.begin_time"])
        doc = epilog_report(pmcd.spec)
    doc["begin_time"] = values["lustreclient.job.begin_time"][JOB]     # the report's is cut to whole seconds
    return plan, decode(values[f"{SLOT}.series"][""]), first, doc


def epilog_report(spec: str) -> dict:
    """The job's report document as the epilog makes it from the job view, the host named n1."""
    return seriesread.epilog_report(spec, JOB)


def channels(series, fs: str, first: int) -> dict[str, np.ndarray]:
    """The schedule's bins of the filesystem's series: read and write bytes, metadata operations."""
    p = np.array(series.points[fs], dtype=np.int64)
    at = first - series.first_bin
    assert 0 <= at and at + BINS <= len(p), (series.first_bin, first, len(p))
    p = p[at:at + BINS]
    return {"read_bytes": p[:, 0], "write_bytes": p[:, 1], "metadata_ops": p[:, METADATA].sum(axis=1)}


@pytest.mark.parametrize("which", range(4))
def test_every_phase_of_the_schedule_is_found_within_one_bin(driven, which):
    plan, series, first, _ = driven
    s = plan[which]
    found = phases.find(channels(series, s.fs, first), WIDTH)
    cuts = {p.first for p in found.phases[1:]}
    assert all(any(abs(b - c) <= 1 for c in cuts) for b in s.boundaries), (s.fs, sorted(s.boundaries), sorted(cuts))
    assert all(any(abs(b - c) <= 1 for b in s.boundaries) for c in cuts), (s.fs, sorted(s.boundaries), sorted(cuts))
    for b, kind in s.kinds:
        (p,) = [p for p in found.phases if p.first <= b < p.end]
        assert p.kind == kind, (s.fs, b, [(q.kind, q.first, q.end) for q in found.phases])
    if s.periodic is None:
        assert found.periodic == ()
    else:
        channel, period, count = s.periodic
        (p,) = found.periodic
        assert (p.channel, p.count) == (channel, count) and abs(p.period_bins - period) <= 1


def test_steady_small_reads_are_one_steady_phase(driven):
    plan, series, first, _ = driven
    found = phases.find(channels(series, "steady", first), WIDTH)
    assert [(p.kind, p.first, p.end, p.channel) for p in found.phases] == [("steady", 0, BINS, "read_bytes")]


def test_the_reports_timeline_sums_to_its_totals_and_has_the_schedules_phases_in_seconds(driven):
    plan, _, first, doc = driven
    tl = doc["timeline"]
    assert tl["hosts"] == 1 and tl["hosts_without"] == [] and tl["note"] is None
    assert not [q for q in doc["data_quality"] if q["id"] == "TIMELINE_PARTIAL"], doc["data_quality"]
    begin = doc["begin_time"]
    assert abs(datetime.fromisoformat(doc["job"]["begin"].replace("Z", "+00:00")).timestamp() - begin) < 1.0
    for s in plan:
        fs = tl["filesystems"][s.fs]
        assert fs["sums_to_totals"] is True
        assert sum(fs["read_bytes"]) == doc["filesystems"][s.fs]["read_bytes"]
        assert sum(fs["write_bytes"]) == doc["filesystems"][s.fs]["write_bytes"]
        slack = WIDTH * 1.01     # within one bin (and the JSON's rounding to milliseconds)
        starts = [p["start_s"] for p in fs["phases"][1:]]
        due = [(first + b) * WIDTH - begin for b in s.boundaries]
        assert all(any(abs(t - d) <= slack for t in starts) for d in due), (s.fs, due, starts)
        for b, kind in s.kinds:
            at = (first + b + 0.5) * WIDTH - begin
            assert [p["kind"] for p in fs["phases"] if p["start_s"] <= at < p["end_s"]] == [kind], (s.fs, fs["phases"])
        if s.periodic is not None:
            channel, period, count = s.periodic
            (p,) = fs["periodic"]
            assert p["channel"] == channel and p["count"] == count and abs(p["period_s"] - period * WIDTH) <= WIDTH
