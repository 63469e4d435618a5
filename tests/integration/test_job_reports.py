"""End to end on real parts: sim tree -> pmdalustreclient in a private pmcd -> snapshots -> report.

Each private pmcd stands for one compute node. Nothing here is mocked: the agent parses the
sim's byte-faithful files, pmcd serves them, the reporter fetches them over PCP's protocol.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lustre_jobreport import catalog, config
from lustre_jobreport.records import jobrow
from lustre_jobreport.report import view as render, document as report
from lustre_jobreport.acquire import snapfile, snapshot
from lustre_sim import SimClient
from lustre_sim.workloads import TABLE_I_BUCKETS, TABLE_I_READ, TABLE_I_WRITE   # the Enzo job (notes/io-findings.md)
from kit.privpmcd import PrivatePmcd, free_port

BIN = Path(sys.executable).parent
CFG = config.Config()


def take(*pmcds: PrivatePmcd, backend: str = "auto", extra: tuple[str, ...] = ()):
    targets = [snapshot.HostTarget(f"node{i}", p.spec) for i, p in enumerate(pmcds)]
    targets += [snapshot.HostTarget.parse(h) for h in extra]
    return snapshot.take(targets, connect_timeout_s=2, fetch_timeout_s=10, backend=backend)


def simulated_duration(begin, end, seconds: float) -> None:
    """The sim runs a job of hours in a second: date the begin snapshot back by the simulated
    time, so per-second rates are those of the job the workload stands for."""
    begin.taken_at = end.taken_at - seconds


def run_job(tmp: Path, version: str, workload: str, **params) -> dict:
    tree = tmp / "tree"
    client = SimClient.create(tree, version=version, filesystems=[("scratch", 8, 1), ("home", 4, 1)], seed=7)
    with PrivatePmcd(tmp / "pmcd", tree) as pmcd:
        begin = take(pmcd)
        ran = client.run(workload, fs="scratch", **params)
        end = take(pmcd)
    simulated_duration(begin, end, ran["elapsed_s"])
    return report.build(begin, end, CFG, job_id="1", user="u")


@pytest.fixture(scope="module", params=["2.10.8", "2.12.9", "2.15.4"])
def enzo(request, tmp_path_factory):
    return run_job(tmp_path_factory.mktemp(f"enzo-{request.param}"), request.param, "enzo")


def test_enzo_rpc_histogram_is_table_I(enzo):
    rpc = enzo["filesystems"]["scratch"]["rpc"]
    assert [rpc["read"][b] for b in TABLE_I_BUCKETS] == list(TABLE_I_READ)
    assert [rpc["write"][b] for b in TABLE_I_BUCKETS] == list(TABLE_I_WRITE)
    # all buckets the agent exports are there, zeros kept, none above 1M used
    assert tuple(rpc["read"])[:9] == TABLE_I_BUCKETS and len(rpc["read"]) > 9
    assert all(n == 0 for b, n in rpc["read"].items() if b not in TABLE_I_BUCKETS)


def test_enzo_metadata_and_volume_are_table_II(enzo):
    fs = enzo["filesystems"]["scratch"]
    assert {k: fs["ops"][k] for k in ("open", "close", "getattr", "statfs")} == \
        {"open": 5303, "close": 5769, "getattr": 12460, "statfs": 0}
    assert (fs["read_bytes"], fs["write_bytes"]) == (54_000_000_000, 56_000_000_000)
    # reads spread over several OSTs, per-OST bytes add up to the osc totals
    assert len(fs["osts"]) > 1
    assert fs["hosts"]["node0"]["open"] == 5303


def test_enzo_flags(enzo):
    fired = {f["id"] for f in enzo["flags"] if f["fs"] == "scratch"}
    assert {"SMALL_RPC_READ", "OPEN_CLOSE_STORM"} <= fired
    assert "SMALL_RPC_WRITE" not in fired
    assert not [f for f in enzo["flags"] if f["fs"] == "home"]
    assert enzo["data_quality"] == []


def test_enzo_json_keys_follow_the_contract(enzo):
    assert set(enzo) == {"schema", "job", "lustre_versions", "clients", "filesystems", "flags", "data_quality",
                         "notes", "timeline"}
    assert enzo["timeline"] is None         # two snapshots: no agent kept the job's timeline
    assert set(enzo["job"]) == {"id", "user", "name", "partition", "account", "command", "num_nodes",
                                "num_tasks", "hosts", "hosts_missing", "hosts_incomplete", "begin", "end",
                                "elapsed_s"}
    node = enzo["clients"]["node0"]
    assert set(node) == {"lustre", "kernel", "os", "pagesize", "settings"}
    assert node["lustre"] == enzo["lustre_versions"]["node0"] and node["pagesize"] == 4096
    assert node["kernel"] and node["settings"]["scratch"]["max_pages_per_rpc"] == 256
    assert enzo["job"]["hosts_incomplete"] == {}
    assert set(enzo["filesystems"]) == {"scratch", "home"}
    for f in enzo["flags"]:
        assert set(f) == {"id", "severity", "fs", "finding", "why", "advice", "evidence", "rests_on", "when"}
        assert f["when"] is None          # no timeline: no time said
        assert f["rests_on"] and "left_out" not in f["evidence"]       # every total whole
    assert all(fs["left_out"] == {} and fs["not_read"] == [] for fs in enzo["filesystems"].values())
    home = enzo["filesystems"]["home"]
    assert home["read_bytes"] == home["write_bytes"] == 0 and sum(home["rpc"]["read"].values()) == 0


def test_overflow_like_job_fires_nothing(tmp_path):
    doc = run_job(tmp_path, "2.15.4", "overflow")
    fs = doc["filesystems"]["scratch"]
    assert fs["ops"]["open"] < 60 and fs["rpc"]["read"]["1M"] > 1000
    assert doc["flags"] == [] and doc["data_quality"] == []


def test_cli_backend_sees_what_pmapi_sees(tmp_path):
    tree = tmp_path / "tree"
    SimClient.create(tree, version="2.12.9", filesystems=[("scratch", 4, 1)], seed=3)
    with PrivatePmcd(tmp_path / "pmcd", tree) as pmcd:
        target = [snapshot.HostTarget("n", pmcd.spec)]
        a = snapshot.take(target, connect_timeout_s=2, fetch_timeout_s=10, backend="pmapi")
        fetched = snapshot.fetch_all(target, connect_timeout_s=2, fetch_timeout_s=10, backend="pminfo")
    assert fetched.hosts[0].ok and fetched.hosts[0].pminfo is not None   # kept raw, parsed when stacked
    fetched.write(tmp_path / "raw.json")
    c = snapfile.read(tmp_path / "raw.json")
    assert a.hosts["n"].ok and c.hosts["n"].ok and set(a.metrics) == set(c.metrics)
    for name, t in a.metrics.items():
        if catalog.get(name).role == catalog.AGENT:
            continue   # the agent's account of each fetch: two fetches, two accounts
        u = c.metrics[name]
        assert (t.pmid, t.sem, t.instances) == (u.pmid, u.sem, u.instances), name
        assert (t.values == u.values).all() and (t.present == u.present).all(), name
    assert a.value("lustreclient.version", "n") == "2.12.9"
    assert a.value("lustreclient.fs.rpc.read", "n", "scratch:1M") > 0
    assert a.metrics["lustreclient.llite.open"].pmid == "220.2.10"
    assert not [m for m in a.metrics if m.startswith("lustreclient.osc.rpc.")]   # left out by design


def test_two_hosts_one_dead_and_a_stats_clear(tmp_path):
    """Two simulated nodes (two private pmcds) plus a host nobody answers for."""
    trees = [tmp_path / "t0", tmp_path / "t1"]
    clients = [SimClient.create(t, version="2.15.4", filesystems=[("scratch", 8, 1)], seed=i)
               for i, t in enumerate(trees)]
    clients[1].run("enzo", fs="scratch")   # big counters before the job, so the clear shows as a drop
    dead = f"deadnode=localhost:{free_port()}"
    with PrivatePmcd(tmp_path / "p0", trees[0]) as p0, PrivatePmcd(tmp_path / "p1", trees[1]) as p1:
        begin = take(p0, p1, extra=(dead,))
        ran = clients[0].run("overflow", fs="scratch")
        clients[1].run("overflow", fs="scratch")
        clients[1].fault("clear", fs="scratch")
        clients[1].run("overflow", fs="scratch")
        end = take(p0, p1, extra=(dead,))
    simulated_duration(begin, end, 2 * ran["elapsed_s"])
    doc = report.build(begin, end, CFG)
    assert doc["job"]["hosts"] == ["node0", "node1"] and doc["job"]["hosts_missing"] == ["deadnode"]
    ids = sorted((q["id"], q["host"]) for q in doc["data_quality"])
    assert ("HOST_UNREACHABLE", "deadnode") in ids and ("COUNTER_RESET", "node1") in ids
    fs = doc["filesystems"]["scratch"]
    # node1's llite counters were cleared, so only node0's opens are summed
    assert fs["ops"]["open"] == fs["hosts"]["node0"]["open"] > 0
    assert "node1" not in fs["hosts"] or fs["hosts"]["node1"].get("open", 0) == 0


def test_cli_end_to_end_text_report(tmp_path):
    tree = tmp_path / "tree"
    SimClient.create(tree, version="2.15.4", filesystems=[("scratch", 8, 1), ("home", 4, 1)], seed=1)
    with PrivatePmcd(tmp_path / "pmcd", tree) as pmcd:
        host = f"n01={pmcd.spec}"
        subprocess.run([BIN / "lustre-jobreport", "snapshot", "--host", host, "-o", tmp_path / "b.json"], check=True)
        subprocess.run([BIN / "lustre-sim", "run", tree, "enzo", "--fs", "scratch"], check=True)
        subprocess.run([BIN / "lustre-jobreport", "snapshot", "--host", host, "-o", tmp_path / "e.json"], check=True)
    r = subprocess.run([BIN / "lustre-jobreport", "report", tmp_path / "b.json", tmp_path / "e.json",
                        "--job-id", "42", "--user", "ann"], capture_output=True, text=True, check=True)
    lines = r.stdout.splitlines()
    assert len(lines) <= 40 and max(map(len, lines)) <= 80, r.stdout
    text = r.stdout
    assert "job 42 (ann)" in text and "SMALL_RPC_READ" in text and "OPEN_CLOSE_STORM" in text
    assert "12243" in text and "52606" in text and "open 5,303" in text and "statfs 0" in text
    html = subprocess.run([BIN / "lustre-jobreport", "report", tmp_path / "b.json", tmp_path / "e.json",
                           "--format", "html"], capture_output=True, text=True, check=True).stdout
    assert html.startswith("<!DOCTYPE html>") and "12,243" in html and "<script" not in html
    doc = json.loads(subprocess.run([BIN / "lustre-jobreport", "report", tmp_path / "b.json",
                                     tmp_path / "e.json", "--format", "json"],
                                    capture_output=True, text=True, check=True).stdout)
    assert doc["filesystems"]["scratch"]["ops"]["open"] == 5303
    assert snapfile.read(tmp_path / "e.json").hosts["n01"].ok


def test_cli_snapshots_name_their_job_and_a_report_of_two_jobs_is_refused(tmp_path):
    """`snapshot --job-id` in both forms (tables by PCP's bindings, raw by pminfo): the report of
    the job's own pair is of that job with no --job-id; its begin with another job's end is refused."""
    tree = tmp_path / "tree"
    SimClient.create(tree, version="2.15.4", filesystems=[("scratch", 8, 1)], seed=3)

    def snap_cli(name: str, job: str, backend: str) -> Path:
        subprocess.run([BIN / "lustre-jobreport", "snapshot", "--host", f"n01={pmcd.spec}", "--backend", backend,
                        "--job-id", job, "-o", tmp_path / name], check=True)
        return tmp_path / name

    with PrivatePmcd(tmp_path / "pmcd", tree) as pmcd:
        begin = snap_cli("b.json", "42", "pmapi")
        subprocess.run([BIN / "lustre-sim", "run", tree, "enzo", "--fs", "scratch"], check=True)
        end = snap_cli("e.json", "42", "pminfo")
        other = snap_cli("o.json", "43", "pminfo")
    assert json.loads(begin.read_text())["metrics"] and not json.loads(end.read_text())["metrics"]   # both forms
    r = subprocess.run([BIN / "lustre-jobreport", "report", begin, end, "--format", "json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["job"]["id"] == "42" and doc["filesystems"]["scratch"]["ops"]["open"] == 5303
    r = subprocess.run([BIN / "lustre-jobreport", "report", begin, other], capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1, r.stderr
    assert f"the begin snapshot {begin} is of job 42, the end snapshot {other} of job 43" in r.stderr


def test_an_unreadable_llite_stats_file_at_the_end_is_not_trusted_and_said(tmp_path):
    """A 2-host job once reported half its bytes, said "2 hosts" and listed nothing as not trusted."""
    trees = [tmp_path / "t0", tmp_path / "t1"]
    clients = [SimClient.create(t, version="2.15.4", filesystems=[("scratch", 4, 1)], seed=i)
               for i, t in enumerate(trees)]
    with PrivatePmcd(tmp_path / "p0", trees[0]) as p0, PrivatePmcd(tmp_path / "p1", trees[1]) as p1:
        begin = take(p0, p1)
        for c in clients:
            ran = c.run("overflow", fs="scratch")
        [stats] = trees[1].glob("**/llite/scratch-*/stats")
        stats.unlink()          # the agent cannot read it now; its fs is still mounted
        end = take(p0, p1)
    simulated_duration(begin, end, ran["elapsed_s"])
    doc = report.build(begin, end, CFG)
    assert [(q["id"], q["host"], q["fs"]) for q in doc["data_quality"]] == [("VALUES_MISSING", "node1", "scratch")]
    assert "llite stats of scratch could not be read at job end on node1" in doc["data_quality"][0]["detail"]
    fs = doc["filesystems"]["scratch"]
    assert fs["write_bytes"] == fs["hosts"]["node0"]["write_bytes"] > 0 and "node1" not in fs["hosts"]
    assert doc["job"]["hosts_incomplete"] == {"node1": ["scratch"]}
    assert "READAHEAD_WASTE" not in {f["id"] for f in doc["flags"]}   # node1's OSTs are not set against node0's reads
    # the sum of the rest is shown as such, and never passes for the job's in its record
    assert fs["left_out"]["write_bytes"] == fs["left_out"]["ops.open"] == 1 and fs["not_read"] == []
    text = " ".join(line.strip() for line in render.render_text(doc).splitlines())      # lines fold at 80
    assert "partly read (see Not trusted): read bytes, read calls, write bytes, write calls, ops" in text
    [row] = jobrow.rows(dict(doc, job=dict(doc["job"], id="1")))
    assert row["write_bytes"] is None and row["open"] is None and row["md_ops"] is None and not row["trusted"]
    assert row["ost_write_bytes"] == sum(o["write_bytes"] for o in fs["osts"].values())   # both hosts' OSCs read


def test_oscs_the_agent_skips_under_its_time_budget_are_said_not_counted_from_zero(tmp_path):
    """On a client with very many OSCs the agent's per-fetch budget (-b) runs out: a snapshot then
    captures a fraction of the OSCs. What was not read at both ends is left out and said."""
    tree = tmp_path / "tree"
    client = SimClient.create(tree, version="2.15.4", filesystems=[("scratch", 1500, 1)], seed=5)
    # counters on every OST before the job: one file striped over all 1,500, a stripe each
    client.run("ior", fs="scratch", tasks=1, stripe_count=-1, block_size=1500 * 2**20, transfer_size=2**20)
    # 25 ms: past the agent's first reads (version, devices, llite), short of 1,500 OSCs' files
    with PrivatePmcd(tmp_path / "p", tree, extra_agent_args=("-b", "25")) as pmcd:
        begin = take(pmcd)
        ran = client.run("ior", fs="scratch")
        end = take(pmcd)
    simulated_duration(begin, end, ran["elapsed_s"])
    doc = report.build(begin, end, CFG)
    def n_read(snap):   # a fetch whose budget ran out before any osc stats has no such table
        t = snap.metrics.get("lustreclient.osc.read_bytes")
        return int(t.present.sum()) if t is not None else 0
    assert n_read(begin) < 1500 and n_read(end) < 1500          # the budget did cut both fetches short
    assert end.metrics["lustreclient.osc.device"].present.sum() == 1500
    missing = [q for q in doc["data_quality"] if q["id"] == "VALUES_MISSING"]
    assert missing and all(q["fs"] == "scratch" for q in missing)
    details = " ".join(q["detail"] for q in missing)
    assert "fetch time budget ran out" in details and "OSCs of scratch" in details
    # only OSCs read at both ends count, each with its true delta
    def read_at(snap):
        t = snap.metrics.get("lustreclient.osc.read_bytes")
        return {i: int(v) for i, v, p in zip(t.instances, t.values[0], t.present[0]) if p} if t else {}
    b, e = read_at(begin), read_at(end)
    osts = doc["filesystems"]["scratch"]["osts"]
    assert {f"scratch-{o}" for o in osts} == {i for i in set(b) & set(e) if e[i] != b[i]}
    assert all(o["read_bytes"] == e[f"scratch-{n}"] - b[f"scratch-{n}"] for n, o in osts.items())
    # every other OSC is said, by number, at the end it was not read at: none is counted from
    # zero. Holds whatever the budget let each fetch read, none at the start included.
    said = osc_stats_said_missing(missing)
    assert said.get("start", 0) == len(set(e) - set(b)) and said.get("end", 0) == len(set(b) - set(e))
    assert len(set(b) & set(e)) + sum(said.values()) == 1500
    only_end = set(e) - set(b)      # ior ran before the job: from zero, these would count
    assert all(e[i] for i in only_end)
    assert doc["job"]["hosts_incomplete"] == {"node0": ["scratch"]}


def osc_stats_said_missing(issues) -> dict[str, int]:
    """VALUES_MISSING of osc stats -> OSCs said per end they were not read at ("start", "end",
    "start nor at its end"): 'osc stats of 1,285 OSCs of scratch (...) could not be read at job
    start ...' or, for one, 'osc stats of scratch-OST0007 could not be read ...'."""
    out: dict[str, int] = {}
    for q in issues:
        m = re.match(r"osc stats of (?:([\d,]+) OSCs of scratch \([^)]*\)|scratch-OST[0-9a-f]+) "
                     r"could not be read at job (start nor at its end|start|end) ", q["detail"])
        if m:
            out[m.group(2)] = out.get(m.group(2), 0) + int((m.group(1) or "1").replace(",", ""))
    return out
