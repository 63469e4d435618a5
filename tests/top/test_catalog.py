"""The metric catalog: what each metric is is declared once and agrees with the agent; the report
reads roles and source files from it (and from the PMIDs snapshots carry), never from names."""

import re
import subprocess
from pathlib import Path

import pytest

from lustre_jobreport import agentcontract, catalog, config
from lustre_jobreport.report import document as report
from lustre_jobreport.report.aggregate import aggregate
from lustre_jobreport.report.diff import diff

from kit.snapshots import host, node, snap

PMNS = Path(__file__).resolve().parents[2] / "pmda-lustre" / "pmns"
# the package's subsystem folders, each of which a scan of the package must read
SUBSYSTEMS = {"acquire", "report", "hooks", "records", "compare", "present", "safeio"}


def agent_pmids() -> dict[str, tuple[int, int]]:
    """metric name -> (cluster, item), from the agent's own pmns."""
    out, path = {}, []
    for line in PMNS.read_text().splitlines():
        line = line.strip()
        if m := re.match(r"^([\w.]+) \{$", line):
            path = [m.group(1)]
        elif m := re.match(r"^(\w+)\s+LUSTRECLIENT:(\d+):(\d+)$", line):
            out[f"{path[0]}.{m.group(1)}"] = (int(m.group(2)), int(m.group(3)))
    return out


def test_every_catalogued_metric_is_the_agents_with_the_cluster_the_catalog_says():
    pmns = agent_pmids()
    for m in catalog.METRICS:
        assert m.name in pmns, f"{m.name} is not in the agent's pmns"
        assert pmns[m.name][0] == m.cluster, f"{m.name}: pmns cluster {pmns[m.name][0]}, catalog {m.cluster}"
    # every cluster the agent has is one stats file the catalog can name, or the job view's
    job_view = {catalog.JOB_CLUSTER, *range(catalog.JOB_SLOT_CLUSTER0, catalog.JOB_SLOT_CLUSTER0 + catalog.JOB_SLOTS),
                agentcontract.JOB_ANSWER_CLUSTER, agentcontract.JOB_SERIES_CLUSTER}
    assert {c for c, _ in pmns.values()} - job_view <= {c for s in catalog.SOURCES for c in s.clusters}


def test_the_job_view_is_the_agents_item_for_item():
    """catalog.JOB_METRICS and JOB_SOURCES are the agent's slot tables (pmda-lustre/src/jobdiff.c)
    in its item order: a row added or moved there without here would put deltas under wrong names."""
    pmns = agent_pmids()
    P = catalog.P
    assert pmns[catalog.JOB_BEGIN_CONTROL] == (catalog.JOB_CLUSTER, 0)
    assert pmns[catalog.JOB_BEGIN_TIME] == (catalog.JOB_CLUSTER, 2)
    slot_items, answers, series = {}, {}, {}
    for name, (cluster, item) in pmns.items():
        if cluster == agentcontract.JOB_ANSWER_CLUSTER:
            answers[item] = name
        elif cluster == agentcontract.JOB_SERIES_CLUSTER:
            series[item] = name
        elif re.match(re.escape(P) + r"job\.slot\d+\.", name):
            slot_items.setdefault(cluster, {})[item] = name
    assert answers == {s: f"{P}job.slot{s}.answer" for s in range(catalog.JOB_SLOTS)}
    assert series == {s: f"{P}job.slot{s}.series" for s in range(catalog.JOB_SLOTS)}
    # a timeline keeps job metrics of the slot's, each once
    assert len(set(agentcontract.JOB_SERIES)) == len(agentcontract.JOB_SERIES)
    assert {P + m for m in agentcontract.JOB_SERIES} <= set(catalog.JOB_METRICS)
    assert sorted(slot_items) == list(range(catalog.JOB_SLOT_CLUSTER0, catalog.JOB_SLOT_CLUSTER0 + catalog.JOB_SLOTS))
    for s in range(catalog.JOB_SLOTS):
        names = catalog.job_slot_names(s)
        want = {k: f"{P}job.slot{s}.{m[len(P):]}" for k, m in enumerate(catalog.JOB_METRICS)}
        want.update({catalog.JOB_LEFT_OUT_ITEM0 + j: f"{P}job.slot{s}.left_out.{js.key}"
                     for j, js in enumerate(catalog.JOB_SOURCES)})
        want[catalog.JOB_ID_ITEM] = f"{P}job.slot{s}.job_id"
        assert slot_items[catalog.JOB_SLOT_CLUSTER0 + s] == want
        assert set(names) | {catalog.job_slot_id_name(s)} == set(want.values())
        # one fetch of a host reads all of them, the slot's job id first
        fetched = catalog.job_view_metrics(s)
        assert fetched[0] == catalog.job_slot_id_name(s) and set(want.values()) <= set(fetched)
    # the deltas are of the counters the report sums, each of them
    assert set(catalog.JOB_METRICS) == set(catalog.names(*catalog.SUMMED))
    # a left_out source leaves out the values of one stats file and instance domain: those of
    # each of its metrics (the job view finds a metric's source by them)
    by_key = {js.key: js for js in catalog.JOB_SOURCES}
    for name, key in agentcontract.JOB_METRICS:
        metric = catalog.BY_NAME[P + name]
        assert (metric.source, metric.indom) == (by_key[key].source, by_key[key].indom), name


def test_a_slots_answer_holds_the_job_end_metrics_the_catalog_reads():
    """The agent packs into a slot's answer the end metrics its table names
    (lc_job_end_metrics); the reporter's rule for what a job's end reads beside the deltas
    (catalog.JOB_END_METRICS) must name the same, in the same order, with the same PMIDs: a
    metric the rule adds without the agent would be missing from every answer."""
    pmns = agent_pmids()
    assert tuple(catalog.P + name for name, _, _ in agentcontract.JOB_END_METRICS) == catalog.JOB_END_METRICS
    for name, cluster, item in agentcontract.JOB_END_METRICS:
        assert pmns[catalog.P + name] == (cluster, item), name


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    """A private pmcd running the real agent on a simulated client tree."""
    pytest.importorskip("pcp.pmapi")
    from lustre_sim import SimClient
    from kit.privpmcd import PrivatePmcd
    tmp = tmp_path_factory.mktemp("catalog")
    SimClient.create(tmp / "tree", version="2.15.4", filesystems=[("scratch", 4, 1), ("home", 2, 1)], seed=5)
    with PrivatePmcd(tmp / "pmcd", tmp / "tree") as p:
        yield p


def served_with_values(pminfo_dfm: str) -> set[str]:
    """The metrics a `pminfo -dfm` answer gives a value of (not "No value(s) available!")."""
    served, name = set(), None
    for line in pminfo_dfm.splitlines():
        if line and not line[0].isspace():
            name = line.split()[0]
        elif name and re.match(r"^\s+(inst \[.*?\] )?value ", line):
            served.add(name)
    return served


def test_a_snapshot_takes_exactly_the_catalogued_metrics(agent):
    """Against the real agent's whole tree (real pminfo): a snapshot, by either backend, holds
    every catalogued metric the agent gives a value of and nothing else, and reading pminfo's
    answer for the whole tree keeps the same metrics (catalog.wanted)."""
    from lustre_jobreport.acquire import pminfoparse, snapshot
    whole = subprocess.run(["pminfo", "-h", agent.spec, "-dfm", "lustreclient"], capture_output=True, text=True,
                           timeout=60).stdout
    served = served_with_values(whole)
    assert served - set(catalog.BY_NAME) and served & set(catalog.BY_NAME)   # the agent gives more than the catalog names
    for backend in ("pmapi", "pminfo"):
        taken = snapshot.take([snapshot.HostTarget("n1", agent.spec)], backend=backend,
                              connect_timeout_s=10, fetch_timeout_s=30)
        assert taken.hosts["n1"].ok, taken.hosts["n1"].error
        assert set(taken.metrics) == served & set(catalog.BY_NAME), backend
    assert set(pminfoparse.parse_pminfo(whole, "n1", agent.spec, 0.0).metrics) == served & set(catalog.BY_NAME)
    assert not catalog.wanted("lustreclient.osc.rpc.read")   # per-OSC histograms stay live-only


def test_a_cleared_read_ahead_stats_keeps_the_jobs_opens():
    """read_ahead_stats is its own file (cluster 12): its clear is said, and resets nothing of llite stats."""
    ra = {"llite.readahead.hits": "220.12.0"}
    b = snap(0.0, host("n1", {"llite.mount_id": {"scratch": "f"}, "llite.open": {"scratch": 100},
                              "llite.readahead.hits": {"scratch": 9000}}, pmids=ra))
    e = snap(60.0, host("n1", {"llite.mount_id": {"scratch": "f"}, "llite.open": {"scratch": 5100},
                               "llite.readahead.hits": {"scratch": 3}}, pmids=ra))
    d = diff(b, e)
    assert [(i.id, i.detail.split(" of ")[0]) for i in d.issues] == [("COUNTER_RESET", "llite read_ahead_stats")]
    assert aggregate(d)["scratch"].ops["open"] == 5000


def test_a_cleared_md_stats_keeps_the_mdc_reconnects():
    """mdc.reconnects come from the import file (cluster 11), not md_stats (cluster 8)."""
    def mdc_host(close, reconnects, start):
        return host("n1", {"llite.mount_id": {"scratch": "f"}, "mdc.close": {"scratch-MDT0000": close},
                           "mdc.reconnects": {"scratch-MDT0000": reconnects},
                           "mdc.md_stats_start": {"scratch-MDT0000": start},
                           "mdc.state": {"scratch-MDT0000": "FULL"}},
                    pmids={"mdc.close": "220.8.0"}, sems={"mdc.state": "instant", "mdc.md_stats_start": "discrete"})
    b = snap(0.0, mdc_host(500, 1, 1_700_000_000_000_000))
    e = snap(60.0, mdc_host(2, 4, 1_700_000_030_000_000))          # md_stats cleared, 3 reconnects
    fs = aggregate(diff(b, e))["scratch"]
    assert fs.trouble == [{"host": "n1", "target": "scratch-MDT0000", "reconnects": 3, "state": "FULL"}]


def test_the_source_file_is_the_pmid_the_snapshot_carries_not_the_name():
    """The catalog puts osc.reconnects in the import file (cluster 10): a cleared osc stats drops
    the OST's bytes, not its reconnects. But the file is the one the agent's PMID says: given
    osc stats' cluster (220.7.x) the reconnects go with that clear; given the import file's
    cluster, the OST's volumes are reset as the import file's."""
    def cleared(pmids):
        def osc_host(read_rpcs, reconnects):
            return host("n1", {"llite.mount_id": {"scratch": "f"},
                               "osc.read_rpcs": {"scratch-OST0000": read_rpcs},
                               "osc.read_bytes": {"scratch-OST0000": read_rpcs * 4096},
                               "osc.reconnects": {"scratch-OST0000": reconnects}}, pmids=pmids)
        d = diff(snap(0.0, osc_host(50, 0)), snap(60.0, osc_host(1, 2)))
        resets = [i.detail.split(" of ")[0] for i in d.issues if i.id == "COUNTER_RESET"]
        return resets, aggregate(d)["scratch"]

    resets, t = cleared({})                                     # the catalog's clusters
    assert resets == ["osc stats"]
    assert t.osts == {} and [x["reconnects"] for x in t.trouble] == [2]

    resets, t = cleared({"osc.reconnects": "220.7.99"})          # the agent: reconnects are osc stats'
    assert resets == ["osc stats"]
    assert t.osts == {} and t.trouble == []                      # cleared with the OST's bytes

    resets, t = cleared({"osc.read_rpcs": "220.10.98", "osc.read_bytes": "220.10.99"})
    assert resets == ["osc import"]                              # one file: volumes and reconnects
    assert t.osts == {} and t.trouble == []


def test_an_op_the_agent_adds_later_is_not_counted_until_the_catalog_names_it():
    def h(n):
        return host("n1", {"llite.mount_id": {"scratch": "f"}, "llite.open": {"scratch": n},
                           "llite.some_new_op": {"scratch": n * 1000}})
    doc = report.build(snap(0.0, h(0)), snap(100.0, h(50_000)), config.Config())
    fs = doc["filesystems"]["scratch"]
    assert "some_new_op" not in fs["ops"] and fs["ops"]["open"] == 50_000
    assert "METADATA_RATE" not in {f["id"] for f in doc["flags"]}   # 500/s: below both thresholds


def test_ops_and_metadata_rate_use_the_catalogued_operations_only():
    def h(n):
        return node("n1", llite={"open": n, "opencount": n, "inode_permission": 50 * n, "read_bytes": n})
    doc = report.build(snap(0.0, h(0)), snap(1.0, h(900)), config.Config())
    fs = doc["filesystems"]["scratch"]
    assert set(fs["ops"]) <= set(catalog.METADATA_OPS)
    assert "opencount" not in fs["ops"] and "inode_permission" not in fs["ops"]
    assert fs["hosts"]["n1"]["open"] == 900


# A metric's name tested by its prefix: P + "osc.", "lustreclient.llite.", catalog.P, f"{P}mdc." ...
_NAME_BY_PREFIX = re.compile(r"""startswith\(\s*(?:(?:catalog\.)?P\b|f?["'](?:\{P\}|lustreclient\.|(?:osc|mdc|llite|fs)\.))""")


def test_no_module_but_the_catalog_picks_metrics_by_name_prefix():
    """What a metric is (its instance domain, role, file) is the catalog's to say: a module that
    picks "the OSC metrics" by name would miss or mislabel one the agent names otherwise."""
    package = Path(catalog.__file__).parent
    paths = sorted(package.rglob("*.py"))
    assert {p.parent.name for p in paths} >= SUBSYSTEMS                     # it read every folder
    found = [f"{path.relative_to(package)}:{n}: {line.strip()}"
             for path in paths if path.name != "catalog.py"
             for n, line in enumerate(path.read_text().splitlines(), 1) if _NAME_BY_PREFIX.search(line)]
    assert found == []


def test_the_name_prefix_check_sees_the_forms_it_is_for():
    for line in ('if m.startswith(P + "osc.")', "m.startswith(catalog.P + 'mdc.')", 'n.startswith("lustreclient.llite.")',
                 'n.startswith(f"{P}osc.")', 'short.startswith("osc.")'):
        assert _NAME_BY_PREFIX.search(line), line
    assert not _NAME_BY_PREFIX.search('line.startswith("#")')
