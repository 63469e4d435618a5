"""A restart of the agent keeps its running jobs (docs/design.md §2.4, "A restart keeps the
jobs"), through real pmcds running the real agent on one sim client: one agent keeps its slots in
a directory (-S) and is stopped and started again during the job; a second agent on the same
tree, begun on the same job at the same moment and never restarted, is the reference.

- stopped with its pmcd (by PID) and started again, with I/O before and while it was down: the
  slot's job_id, every delta and every left_out value equal the reference's; the timeline keeps
  the points from before the stop and sums to the deltas of its fetch; job.restarts says 1 for
  the job (0 on the reference), and the reporter's job view names the host in data_quality
  (AGENT_RESTARTED, "agent restarted during the job: ...") and no other;
- with no checkpoint due (-K 3600), stopped with its pmcd or by SIGTERM (by PID, pmcd starting it
  again): the agent writes its slots as it leaves, so the timeline's points from before the stop
  hold the I/O done then, not the first point after the restart;
- killed (SIGKILL, no last checkpoint) and started again by pmcd: the deltas still equal the
  reference's and the timeline still sums to them (the I/O since the checkpoint lands in a
  later point);
- osc stats cleared while the agent was down: those OSCs left out as CLEARED, as the reference
  (up all along) leaves them out; every OSC of a filesystem given another device directory while
  it was down: REPLACED, as the reference says;
- on a Lustre whose stats have no start time (2.12), llite stats cleared while the agent was down
  and grown past their begin values again: the begin values cannot show it, the timeline's last
  sample does: left out as CLEARED (the reference, up all along but with no fetch between the
  clear and the growth, counts it: this is what only the timeline sees);
- the slot's file of an agent whose series table was older (before the calls' latencies were
  appended) while the agent was upgraded: the job taken up whole, its deltas the reference's,
  its timeline keeping its points and the older table to the job's end, summing to the deltas;
- the slot's file corrupted while the agent was down: the slot is not taken up, one log line says
  why, the file is removed and the agent serves;
- a state directory open to others: one log line, nothing kept, the agent serves its jobs;
- the files: mode 0600 in a 0700 directory while the job runs, gone after its job_end;
- all 8 slots in use and a ninth job begun: the oldest job's file is the new job's; after a
  restart the agent holds the 8 newest jobs, the evicted one not;
- -K outside 0.01 .. 86400 s: the agent says so in one line and does not start.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest

from lustre_jobreport import agentcontract

pytest.importorskip("pcp.pmapi")

from kit.privpmcd import AGENT, PrivatePmcd, alive, children_of  # noqa: E402
from kit import slotfile  # noqa: E402
from kit.seriesread import bucket_label, decode, fetch_together  # noqa: E402

JOB = "8123"
SLOT = "lustreclient.job.slot0"
PAGE = 4096
INTERVAL = 0.2


def store(pmcd, control: str, job: str) -> None:
    done = subprocess.run(["pmstore", "-h", pmcd.local_spec, f"lustreclient.control.{control}", job],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr


def slot_names() -> list[str]:
    return ([f"{SLOT}.job_id", f"{SLOT}.series"] + [f"{SLOT}.{m}" for m, _ in agentcontract.JOB_METRICS]
            + [f"{SLOT}.left_out.{s}" for s in agentcontract.JOB_SOURCES])


def read_slot(pmcd) -> dict:
    return fetch_together(pmcd.spec, slot_names())[0]


def without_series(values: dict) -> dict:
    return {k: v for k, v in values.items() if not k.endswith(".series")}


def check_series_sums(values: dict) -> dict:
    """Per filesystem, each series value summed over the points equals the slot's delta of the
    same fetch (0 where it has none); returns the series."""
    series = decode(values[f"{SLOT}.series"][""])
    for fs in series.points:
        want = []
        for metric, (_, n) in zip(agentcontract.JOB_SERIES, series.metrics):
            got = values.get(f"{SLOT}.{metric}", {})
            if n == 1:
                want.append(int(got.get(fs, 0)))
            else:
                want += [int(got.get(f"{fs}:{bucket_label(PAGE << b)}", 0)) for b in range(n)]
        assert series.totals(fs) == want, fs
    return series


class Node:
    """One sim client, the agent that keeps its slots (restarted) and the reference agent."""

    def __init__(self, tmp_path: Path, state: Path, version: str = "2.15.4", checkpoint: float = 0.2):
        from lustre_sim import SimClient

        self.client = SimClient.create(tmp_path / "tree", version=version,
                                       filesystems=[("scratch", 4, 1), ("home", 2, 1)], seed=23)
        self.state = state
        self.kept = PrivatePmcd(tmp_path / "kept", tmp_path / "tree", interval=INTERVAL,
                                extra_agent_args=("-S", str(state), "-K", f"{checkpoint:g}"))
        self.reference = PrivatePmcd(tmp_path / "reference", tmp_path / "tree", interval=INTERVAL)

    @property
    def log(self) -> str:
        return (self.kept.workdir / "lustreclient.log").read_text()

    def begin(self) -> None:
        store(self.kept, "job_begin", JOB)
        store(self.reference, "job_begin", JOB)

    def stop_kept(self) -> None:
        """pmcd stopped by its PID: it closes the agent's pipe, the agent writes its slots and exits."""
        [agent] = children_of(self.kept.proc.pid)
        self.kept.stop()
        deadline = time.monotonic() + 10
        while alive(agent) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(agent)


@pytest.fixture
def node(tmp_path):
    n = Node(tmp_path, tmp_path / "state")
    with n.reference, n.kept:
        yield n
        if n.kept.proc is None:
            n.kept.start()      # for the with block's stop


def test_a_restart_keeps_the_job_and_its_timeline(node):
    node.begin()
    node.client.run("overflow", fs="scratch")
    node.client.run("background", fs="home")
    time.sleep(5 * INTERVAL)                    # timed samples and a checkpoint of them
    node.stop_kept()
    node.client.run("overflow", fs="scratch")   # while the agent is down
    node.kept.start()
    node.client.run("background", fs="home")
    time.sleep(3 * INTERVAL)
    kept, ref = read_slot(node.kept), read_slot(node.reference)
    assert kept[f"{SLOT}.job_id"][""] == JOB
    assert without_series(kept) == without_series(ref)
    assert int(kept[f"{SLOT}.llite.write_bytes"]["scratch"]) > 0
    series = check_series_sums(kept)
    # the points from before the stop are still there: more than one point holds writes
    at = agentcontract.JOB_SERIES.index("llite.write_bytes")
    assert sum(1 for p in series.points["scratch"] if p[at] > 0) >= 2
    assert f"job {JOB}: taken up again in slot 0" in node.log
    restarts = {name: fetch_together(pmcd.spec, ["lustreclient.job.restarts"])[0]["lustreclient.job.restarts"]
                for name, pmcd in (("kept", node.kept), ("reference", node.reference))}
    assert restarts == {"kept": {JOB: 1}, "reference": {JOB: 0}}
    said = reported_quality(node)
    assert [(q["id"], q["host"]) for q in said if q["id"] != "SHORT_JOB"] == [("AGENT_RESTARTED", "kept")]
    assert [q for q in said if q["id"] == "AGENT_RESTARTED"][0]["detail"].startswith("agent restarted during the job: ")


def older_table_values() -> int:
    """A point's values in the series table of an agent from before the calls' latencies were
    appended to it: this table's but the last two."""
    assert agentcontract.JOB_SERIES[-2:] == ("llite.latency.read", "llite.latency.write")
    return sum(64 if name.startswith("fs.rpc.") else 1 for name in agentcontract.JOB_SERIES[:-2])


def test_a_slot_an_agent_of_the_older_series_table_kept_is_taken_up(node):
    """An agent upgraded during a job: the slot's file has the older table's timeline (no
    latencies). The job's deltas are whole (the reference's), its timeline keeps its points and
    that table to the job's end (the latencies absent, not invented as 0), and sums to the
    deltas of its metrics."""
    node.begin()
    node.client.run("overflow", fs="scratch")
    time.sleep(5 * INTERVAL)
    before = decode(read_slot(node.kept)[f"{SLOT}.series"][""])
    node.stop_kept()
    path = node.state / "slot0"
    path.write_bytes(slotfile.with_older_series_table(path.read_bytes(), older_table_values()))
    node.client.run("overflow", fs="scratch")   # while the agent is down
    node.kept.start()
    node.client.run("background", fs="scratch")
    time.sleep(3 * INTERVAL)
    kept, ref = read_slot(node.kept), read_slot(node.reference)
    assert kept[f"{SLOT}.job_id"][""] == JOB
    assert without_series(kept) == without_series(ref)
    assert int(kept[f"{SLOT}.llite.latency.read"]["scratch"]) > 0      # the deltas have the latency
    series = check_series_sums(kept)
    assert [pmid for pmid, _ in series.metrics] == [pmid for pmid, _ in before.metrics[:-2]]
    n = older_table_values()
    old_points = [p[:n] for p in before.points["scratch"]]
    assert series.points["scratch"][:len(old_points) - 1] == old_points[:-1]   # the last one grew since
    assert f"job {JOB}: its timeline keeps the {len(agentcontract.JOB_SERIES) - 2} series metrics" in node.log


def reported_quality(node) -> list[dict]:
    """The data_quality of the job's report read through the job view of both agents (two hosts)."""
    from lustre_jobreport import config
    from lustre_jobreport.acquire import snapshot
    from lustre_jobreport.acquire.snapfile import Snapshot
    from lustre_jobreport.report import document, jobview

    fetched = snapshot.fetch_all([snapshot.HostTarget("kept", node.kept.spec),
                                  snapshot.HostTarget("reference", node.reference.spec)],
                                 connect_timeout_s=5, fetch_timeout_s=20, job_id=JOB)
    assert all(h.ok for h in fetched.hosts), [h.error for h in fetched.hosts]
    viewed = Snapshot.from_hosts(fetched.taken_at, fetched.hosts)
    return document.from_delta(jobview.delta(viewed, JOB), config.Config(), job_id=JOB, user="u")["data_quality"]


def terminate_agent(pmcd) -> None:
    """SIGTERM to the agent by its PID; pmcd starts it again (SIGHUP, as for an agent that exited)."""
    [agent] = children_of(pmcd.proc.pid)
    os.kill(agent, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while alive(agent) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(agent)
    os.kill(pmcd.proc.pid, signal.SIGHUP)
    while time.monotonic() < deadline:
        if children_of(pmcd.proc.pid) not in ([], [agent]) and "value" in subprocess.run(
                ["pminfo", "-h", pmcd.spec, "-f", "lustreclient.version"], capture_output=True, text=True).stdout:
            return
        time.sleep(0.1)
    raise RuntimeError("the agent did not come back")


@pytest.mark.parametrize("how", ["pmcd stopped", "SIGTERM"])
def test_the_agent_writes_its_slots_as_it_leaves(tmp_path, how):
    n = Node(tmp_path, tmp_path / "state", checkpoint=3600)
    with n.reference, n.kept:
        n.begin()
        n.client.run("overflow", fs="scratch")
        time.sleep(4 * INTERVAL)                # timed samples of the writes, no checkpoint
        stopped_ms = time.time() * 1000
        if how == "SIGTERM":
            terminate_agent(n.kept)
        else:
            n.stop_kept()
            n.kept.start()
        time.sleep(3 * INTERVAL)
        n.client.run("overflow", fs="scratch")
        kept, ref = read_slot(n.kept), read_slot(n.reference)
    assert kept[f"{SLOT}.job_id"][""] == JOB
    assert without_series(kept) == without_series(ref)
    series = check_series_sums(kept)
    at = agentcontract.JOB_SERIES.index("llite.write_bytes")
    # the writes before the stop are in the points of bins that ended before it
    before = [p[at] for p, b in zip(series.points["scratch"], series.bins) if (b + 1) * series.width_ms <= stopped_ms]
    assert sum(before) > 0


def test_a_crash_loses_no_io(node):
    node.begin()
    node.client.run("overflow", fs="scratch")
    time.sleep(5 * INTERVAL)
    node.client.run("overflow", fs="home")      # after the last checkpoint, likely
    node.kept.restart_agent()                   # SIGKILL: no last checkpoint
    node.client.run("background", fs="scratch")
    kept, ref = read_slot(node.kept), read_slot(node.reference)
    assert kept[f"{SLOT}.job_id"][""] == JOB
    assert without_series(kept) == without_series(ref)
    check_series_sums(kept)


def test_counters_cleared_while_down_are_left_out_as_cleared(node):
    node.begin()
    node.client.run("overflow", fs="scratch")
    time.sleep(2 * INTERVAL)
    node.stop_kept()
    node.client.fault("clear", fs="scratch", what="osc")
    node.client.run("overflow", fs="scratch")
    node.kept.start()
    kept, ref = read_slot(node.kept), read_slot(node.reference)
    left = kept[f"{SLOT}.left_out.osc_stats"]
    assert left and set(left.values()) == {1} and all(k.startswith("scratch-OST") for k in left)  # CLEARED
    assert without_series(kept) == without_series(ref)
    check_series_sums(kept)
    assert "left out: CLEARED" in node.log


def test_a_reset_only_the_timeline_shows_is_left_out_as_cleared(tmp_path):
    n = Node(tmp_path, tmp_path / "state", version="2.12.9")
    with n.reference, n.kept:
        n.begin()
        n.client.run("overflow", fs="scratch")
        time.sleep(3 * INTERVAL)                # the timeline's last sample has the writes
        n.stop_kept()
        n.client.fault("clear", fs="scratch", what="llite")
        n.client.run("background", fs="scratch")
        n.client.run("background", fs="scratch")   # past the begin values, below the last sample
        n.kept.start()
        kept, ref = read_slot(n.kept), read_slot(n.reference)
        log = n.log
    assert kept[f"{SLOT}.left_out.llite_stats"] == {"scratch": 1}        # CLEARED
    assert f"{SLOT}.llite.write_bytes" not in kept or "scratch" not in kept[f"{SLOT}.llite.write_bytes"]
    assert f"{SLOT}.left_out.llite_stats" not in ref and int(ref[f"{SLOT}.llite.write_bytes"]["scratch"]) > 0
    check_series_sums(kept)
    assert "llite_stats of scratch is below its timeline's last sample" in log


def rename_oscs(root: Path, fs: str) -> None:
    """Every OSC of fs gets another device directory (another <sbi>), in every tree the agent
    lists: the same OSTs, new devices."""
    for base in ("proc/fs/lustre/osc", "sys/fs/lustre/osc", "sys/kernel/debug/lustre/osc"):
        for d in sorted((root / base).glob(f"{fs}-OST*-osc-*")):
            d.rename(d.with_name(d.name[:-4] + "beef"))


def test_oscs_replaced_while_down_are_left_out_as_replaced(node):
    node.begin()
    node.client.run("overflow", fs="home")
    time.sleep(2 * INTERVAL)
    node.stop_kept()
    rename_oscs(node.client.root, "home")
    node.kept.start()
    kept, ref = read_slot(node.kept), read_slot(node.reference)
    left = kept[f"{SLOT}.left_out.osc_stats"]
    assert left and set(left.values()) == {2} and all(k.startswith("home-OST") for k in left)  # REPLACED
    assert kept[f"{SLOT}.left_out.osc_rpc_stats"] == {"home": 2}
    assert without_series(kept) == without_series(ref)
    assert "left out: REPLACED" in node.log


def test_a_corrupt_file_is_not_taken_up(node):
    node.begin()
    node.client.run("overflow", fs="scratch")
    node.stop_kept()
    path = node.state / "slot0"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x10
    path.write_bytes(bytes(data))
    node.kept.start()
    values = read_slot(node.kept)
    assert f"{SLOT}.job_id" not in values
    said = [line for line in node.log.splitlines() if "slot0" in line]
    assert len(said) == 1 and "CRC" in said[0] and "not taken up" in said[0], said
    assert not path.exists()
    # and it serves: a new job begins and is counted
    store(node.kept, "job_begin", "8124")
    node.client.run("overflow", fs="scratch")
    values = read_slot(node.kept)
    assert values[f"{SLOT}.job_id"][""] == "8124" and int(values[f"{SLOT}.llite.write_bytes"]["scratch"]) > 0


def test_the_files_are_private_and_go_with_the_job(node):
    node.begin()
    path = node.state / "slot0"
    assert stat.S_IMODE(node.state.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    store(node.kept, "job_end", JOB)
    assert not path.exists() and list(node.state.iterdir()) == []


def test_a_state_directory_open_to_others_is_not_used(tmp_path):
    state = tmp_path / "state"
    state.mkdir(mode=0o755)
    os.chmod(state, 0o755)
    n = Node(tmp_path, state)
    with n.kept:
        store(n.kept, "job_begin", JOB)
        n.client.run("overflow", fs="scratch")
        values = read_slot(n.kept)
        said = [line for line in n.log.splitlines() if "job state directory" in line]
    assert values[f"{SLOT}.job_id"][""] == JOB
    assert len(said) == 1 and "mode 0700" in said[0] and "0755" in said[0], said
    assert list(state.iterdir()) == []


def test_a_state_directory_that_is_a_link_is_not_used(tmp_path):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "state").symlink_to(real)
    n = Node(tmp_path, tmp_path / "state")
    with n.kept:
        store(n.kept, "job_begin", JOB)
        said = [line for line in n.log.splitlines() if "job state directory" in line]
    assert len(said) == 1 and "symbolic link" in said[0], said
    assert list(real.iterdir()) == []
    shutil.rmtree(real)


def test_an_evicted_jobs_file_is_the_new_jobs(node):
    jobs = [f"90{i}" for i in range(agentcontract.JOB_SLOTS + 1)]
    for job in jobs:
        store(node.kept, "job_begin", job)
        time.sleep(0.01)        # begin times in order: the first is the oldest
    assert sorted(p.name for p in node.state.iterdir()) == [f"slot{s}" for s in range(agentcontract.JOB_SLOTS)]
    node.stop_kept()
    node.kept.start()
    held = fetch_together(node.kept.spec, ["lustreclient.job.begin_time"])[0]["lustreclient.job.begin_time"]
    assert sorted(held) == sorted(jobs[1:])


@pytest.mark.parametrize("bad", ["0", "0.001", "86401", "ten", "", "nan"])
def test_a_checkpoint_period_out_of_range_is_refused_in_one_line(bad):
    done = subprocess.run([str(AGENT), "-K", bad], capture_output=True, text=True, timeout=30)
    assert done.returncode == 1
    said = [line for line in done.stderr.splitlines() if "-K wants" in line]
    assert len(said) == 1 and repr(bad)[1:-1] in said[0], done.stderr
