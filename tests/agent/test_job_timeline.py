"""A job's timeline in the agent (lustreclient.job.slot<S>.series, docs/design.md §2.5), through
a real pmcd running the real agent on a sim client, sampling every 0.2 s (-T 0.2):

- a job does I/O on two filesystems in steps with waits; its series, fetched in the same
  pmFetch as the slot's deltas, sums per filesystem and value to exactly those deltas (the
  byte and call counters, the metadata operations, every RPC size bucket), its bins lie
  between the job's begin and the fetch, and more than one bin had a timed sample in it;
- a 2.15 client reading and writing in steps: the series' latency columns sum to the slot's
  latency deltas, which are what the sim's stats gained, and the epilog's report gives the
  mean latency of a call, per point and over the job; a 2.12 client (no latencies): no latency
  delta, no latency column sent, the report's means null, not 0 µs;
- an OSC's rpc_stats cleared mid-job: the filesystem's histogram is left out of the slot's
  deltas (CLEARED), and its series takes back what it had counted as negative values, so that
  it still sums to the deltas (0);
- with an interval longer than the test (1 h), the series still sums to the deltas of its
  fetch, I/O done just before it included: the fetch takes a sample of its own;
- fetched again and again while it grows to its 512 points and merges (-T 0.01), the series
  costs the agent its own size a few times over, not a block per size it had;
- a slot that holds no job has no series, before the job and after its job_end;
- -T outside 0.01 .. 86400 s: the agent says so in one line and does not start.
"""

from __future__ import annotations

import subprocess
import time

import pytest

from lustre_jobreport import agentcontract

pytest.importorskip("pcp.pmapi")

from kit.privpmcd import AGENT, children_of  # noqa: E402
from kit import seriesread  # noqa: E402
from kit.seriesread import bucket_label, decode, fetch_together, start_node, store  # noqa: E402

JOB = "7001"
SLOT = "lustreclient.job.slot0"
PAGE = 4096
INTERVAL = 0.2


def series_names() -> list[str]:
    return [f"{SLOT}.{m}" for m in agentcontract.JOB_SERIES]


def read_slot(pmcd):
    """The slot's job_id, series, deltas of the series metrics and left_out of the histogram,
    in one fetch; and the wall clock (ms) just before and after it."""
    names = [f"{SLOT}.job_id", f"{SLOT}.series", "lustreclient.job.begin_time",
             f"{SLOT}.left_out.osc_rpc_stats", *series_names()]
    before = time.time() * 1000
    values, _ = fetch_together(pmcd.spec, names)
    after = time.time() * 1000
    return values, before, after


def base_pmids(pmcd) -> list[int]:
    from pcp import pmapi
    import cpmapi as c_api

    ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, pmcd.spec)
    return list(ctx.pmLookupName([f"lustreclient.{m}" for m in agentcontract.JOB_SERIES]))


def served(values: dict, metric: str, instance: str) -> int:
    """A slot's delta as served: 0 when the instance has none (not counted)."""
    return int(values.get(f"{SLOT}.{metric}", {}).get(instance, 0))


def check_sums(values: dict, series) -> dict[str, list[int]]:
    """Per filesystem, each series value summed over the points equals the slot's delta of the
    same fetch; returns the totals."""
    totals = {}
    for fs in series.points:
        got = series.totals(fs)
        want = []
        for metric, (_, n) in zip(agentcontract.JOB_SERIES, series.metrics):
            if n == 1:
                want.append(served(values, metric, fs))
            else:
                want += [served(values, metric, f"{fs}:{bucket_label(PAGE << b)}") for b in range(n)]
        assert got == want, fs
        totals[fs] = got
    return totals


def check_bins(values: dict, series, before: float, after: float) -> None:
    """The bins lie between the job's begin and the fetch, the last is the fetch's own."""
    begin_ms = values["lustreclient.job.begin_time"][JOB] * 1000
    width = series.width_ms
    assert series.interval_ms == INTERVAL * 1000 and series.level == 0
    assert series.first_bin >= int(begin_ms // width)
    assert int(before // width) <= series.bins[-1] <= int(after // width)
    assert series.samples[-1] >= 1                      # the fetch's own sample
    assert sum(1 for n in series.samples if n) >= 2     # and the agent's timed ones


@pytest.fixture
def node(tmp_path):
    client, pmcd = start_node(tmp_path, INTERVAL)
    with pmcd:
        yield client, pmcd


def test_the_series_sums_to_the_slots_deltas_of_the_same_fetch(node):
    client, pmcd = node
    store(pmcd, "job_begin", JOB)
    for step in range(3):
        client.run("overflow", fs="scratch")
        client.run("background", fs="home")
        time.sleep(2.5 * INTERVAL)
    values, before, after = read_slot(pmcd)
    assert values[f"{SLOT}.job_id"][""] == JOB
    series = decode(values[f"{SLOT}.series"][""])
    assert sorted(series.points) == ["home", "scratch"]
    assert [p for p, _ in series.metrics] == base_pmids(pmcd)
    assert [n for _, n in series.metrics] == [64 if m.startswith("fs.rpc.") else 1 for m in agentcontract.JOB_SERIES]
    totals = check_sums(values, series)
    check_bins(values, series, before, after)
    # the job did read, write and open on scratch, and sent RPCs: the sums are not of nothing
    at = {m: i for i, m in enumerate(agentcontract.JOB_SERIES)}
    assert totals["scratch"][at["llite.write_bytes"]] > 0 and totals["scratch"][at["llite.open"]] > 0
    rpc = series.offset(series.metrics[at["fs.rpc.write"]][0])
    assert sum(totals["scratch"][rpc:rpc + 64]) > 0
    # the I/O came in steps: more than one point holds some of it
    assert sum(1 for p in series.points["scratch"] if p[at["llite.write_bytes"]] > 0) >= 2


def test_a_clients_call_latencies_are_in_its_timeline_and_report(node):
    """A 2.15 client reading and writing in steps: the series' latency columns sum to the
    slot's latency deltas of the same fetch, which are the latency the sim's llite stats
    gained; the epilog's report gives each direction's mean latency of a call, that latency
    over the slot's calls, and per point where the point had calls."""
    client, pmcd = node
    store(pmcd, "job_begin", JOB)
    known = {"read": 0, "write": 0}
    for step in range(3):
        for done in (client.run("seqread", fs="scratch", files=1, size="4M", seed=step),
                     client.run("overflow", fs="scratch")):
            for d in known:
                known[d] += done[f"{d}_latency_us"]
        time.sleep(2.5 * INTERVAL)
    values, _, _ = read_slot(pmcd)
    series = decode(values[f"{SLOT}.series"][""])
    totals = check_sums(values, series)
    doc = seriesread.epilog_report(pmcd.spec, JOB)
    fs = doc["timeline"]["filesystems"]["scratch"]
    assert fs["sums_to_totals"] is True
    for d in known:
        at = series.offset(base_pmids(pmcd)[agentcontract.JOB_SERIES.index(f"llite.latency.{d}")])
        assert known[d] > 0 and totals["scratch"][at] == served(values, f"llite.latency.{d}", "scratch") == known[d]
        assert sum(1 for p in series.points["scratch"] if p[at] > 0) >= 2      # in steps
        calls = served(values, f"llite.{d}_calls", "scratch")
        assert fs[f"{d}_latency_us_mean"] == round(known[d] / calls, 1)
        means = fs[f"{d}_latency_us"]
        assert len(means) == doc["timeline"]["points"]
        assert [m is None for m in means] == [c <= 0 for c in fs[f"{d}_calls"]]
        assert all(m > 0 for m in means if m is not None)


def test_a_client_without_latencies_has_none_in_its_timeline(tmp_path):
    """A 2.12 client: its llite stats have no latency, the slot no latency delta, its series
    no latency column (nothing sent), and the report's means are null, not 0 µs."""
    client, pmcd = start_node(tmp_path, INTERVAL, version="2.12.9")
    with pmcd:
        store(pmcd, "job_begin", JOB)
        for step in range(2):
            done = client.run("seqread", fs="scratch", files=1, size="4M", seed=step)
            client.run("overflow", fs="scratch")
            time.sleep(2.5 * INTERVAL)
        values, _, _ = read_slot(pmcd)
        doc = seriesread.epilog_report(pmcd.spec, JOB)
        pmids = base_pmids(pmcd)
    assert done["read_latency_us"] is None
    series = decode(values[f"{SLOT}.series"][""])
    check_sums(values, series)
    for d in ("read", "write"):
        assert f"{SLOT}.llite.latency.{d}" not in values
        at = series.offset(pmids[agentcontract.JOB_SERIES.index(f"llite.latency.{d}")])
        assert at not in series.sent["scratch"] and series.sent["scratch"]
    fs = doc["timeline"]["filesystems"]["scratch"]
    assert sum(fs["read_calls"]) > 0 and sum(fs["write_calls"]) > 0 and fs["sums_to_totals"] is True
    assert [fs[k] for k in ("read_latency_us", "write_latency_us", "read_latency_us_mean",
                            "write_latency_us_mean")] == [None] * 4
    assert doc["filesystems"]["scratch"]["latency_us"] == {"read": None, "write": None}


def test_a_histogram_left_out_mid_job_takes_its_counts_back(node):
    client, pmcd = node
    store(pmcd, "job_begin", JOB)
    client.run("overflow", fs="scratch")
    time.sleep(2.5 * INTERVAL)
    client.fault("clear", fs="scratch", what="rpc_stats")
    time.sleep(2.5 * INTERVAL)
    client.run("overflow", fs="scratch")
    time.sleep(2.5 * INTERVAL)
    values, before, after = read_slot(pmcd)
    assert values[f"{SLOT}.left_out.osc_rpc_stats"] == {"scratch": 1}     # CLEARED
    series = decode(values[f"{SLOT}.series"][""])
    totals = check_sums(values, series)
    check_bins(values, series, before, after)
    read = series.offset(base_pmids(pmcd)[agentcontract.JOB_SERIES.index("fs.rpc.read")])
    hist = slice(read, read + 128)                      # fs.rpc.read, then fs.rpc.write
    assert totals["scratch"][hist] == [0] * 128
    assert any(x > 0 for p in series.points["scratch"] for x in p[hist])
    assert any(x < 0 for p in series.points["scratch"] for x in p[hist])
    # the llite counters were not cleared: they keep what the job did
    assert totals["scratch"][agentcontract.JOB_SERIES.index("llite.write_bytes")] > 0


def test_a_fetch_takes_a_sample_of_its_own(tmp_path):
    client, pmcd = start_node(tmp_path, 3600)
    with pmcd:
        store(pmcd, "job_begin", JOB)
        client.run("overflow", fs="scratch")
        values, _, _ = read_slot(pmcd)
        series = decode(values[f"{SLOT}.series"][""])
        totals = check_sums(values, series)
        assert totals["scratch"][agentcontract.JOB_SERIES.index("llite.write_bytes")] > 0
        client.run("overflow", fs="scratch")
        values, _, _ = read_slot(pmcd)
        second = decode(values[f"{SLOT}.series"][""])
        check_sums(values, second)
    # both fetches' samples are in it (in one bin of the hour, but at an hour's turn)
    assert sum(second.samples) >= 2


def rss(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def test_a_series_fetched_as_it_grows_costs_its_size_not_its_history(tmp_path):
    client, pmcd = start_node(tmp_path, 0.01)
    with pmcd:
        [agent] = children_of(pmcd.proc.pid)
        store(pmcd, "job_begin", JOB)
        store(pmcd, "job_end", JOB)        # the agent's fetch path warmed up, nothing kept
        before = rss(agent)
        store(pmcd, "job_begin", JOB)
        fetches, series = 0, None
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not (series and series.level >= 1 and len(series.samples) > 400):
            if fetches % 4 == 0:                    # I/O all along: its values are sent, the value grows
                client.run("overflow", fs="scratch")
            raw = fetch_together(pmcd.spec, [f"{SLOT}.series"])[0][f"{SLOT}.series"][""]
            series, fetches = decode(raw), fetches + 1
        grown = rss(agent) - before
    assert series.level >= 1 and fetches > 100
    assert len(series.sent["scratch"]) >= 10
    # the store (every value of every point it has room for), the block it is served in,
    # libpcp's copy on its way to pmcd, and room for the allocator: the store, 4x the value
    # and 4 MiB; the series' history of sizes would be ~100x the value
    store_bytes = len(series.points) * agentcontract.JOB_SERIES_POINTS * sum(n for _, n in series.metrics) * 8
    assert grown <= store_bytes + 4 * len(raw) + (4 << 20), (grown, store_bytes, len(raw), fetches)


def test_a_slot_without_a_job_has_no_series(node):
    _, pmcd = node
    values, _, _ = read_slot(pmcd)
    assert f"{SLOT}.series" not in values
    store(pmcd, "job_begin", JOB)
    values, _, _ = read_slot(pmcd)
    assert decode(values[f"{SLOT}.series"][""]).samples[-1] >= 1
    store(pmcd, "job_end", JOB)
    values, _, _ = read_slot(pmcd)
    assert f"{SLOT}.series" not in values


@pytest.mark.parametrize("bad", ["0", "0.001", "86401", "ten", "", "nan"])
def test_an_interval_out_of_range_is_refused_in_one_line(bad):
    done = subprocess.run([str(AGENT), "-T", bad], capture_output=True, text=True, timeout=30)
    assert done.returncode == 1
    said = [line for line in done.stderr.splitlines() if "-T wants" in line]
    assert len(said) == 1 and repr(bad)[1:-1] in said[0], done.stderr
