"""The validation corpus (issue 5, item 5): reference workloads of notes/io-findings.md §3 as
simulated jobs, each with the flags it must fire and must not fire.

A *cluster* is a set of simulated compute nodes: one lustre-sim tree and one private pmcd
running the real pmdalustreclient per node. Its *cases* run one after the other on the same
nodes, each between two snapshots (the end snapshot of one case is the begin snapshot of the
next), so a pmcd serves every case of its cluster. Each case is reported by the real path:
snapshot.take (PMAPI, one fetch per host) -> lustre_sim workloads and faults -> snapshot.take
-> report.build with the shipped defaults.

`PYTHONPATH=tests .venv/bin/python -m kit.corpuskit` runs the whole corpus and prints the table of
tests/corpus/README.md from the measured reports.
"""

from __future__ import annotations

import dataclasses
import statistics
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from lustre_jobreport import config
from lustre_jobreport.report import document as report
from lustre_jobreport.acquire import snapshot
from lustre_sim import SimClient
from kit.privpmcd import PrivatePmcd

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
CFG = config.Config()                          # the shipped defaults (config.DEFAULTS)
FS = "scratch"

FLAGS = ("SMALL_RPC_READ", "SMALL_RPC_WRITE", "OPEN_CLOSE_STORM", "STAT_STORM", "STATFS_STORM",
         "METADATA_RATE", "TINY_CALLS", "UNDER_STRIPED", "OVER_STRIPED_SMALL_IO", "RANK0_IO",
         "READAHEAD_WASTE", "FSYNC_STORM", "SLOW_OST", "FS_TROUBLE")


# ----------------------------------------------------------------------------------------------
# what a case does on a node

@dataclass(frozen=True)
class Run:
    workload: str
    params: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Fault:
    kind: str
    params: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Case:
    id: str
    workload: str                               # for the table: what ran, with which parameters
    steps: Callable[[int, int], list]           # (node index, node count) -> [Run | Fault]
    fires: tuple[str, ...]                      # exactly these flags fire (on FS)
    must_not: tuple[str, ...]                   # named explicitly: these must not fire
    source: str                                 # where in notes/io-findings.md
    check: Callable[[dict], None] | None = None  # key numbers of the report
    data_quality: tuple[str, ...] = ()          # exactly these data_quality ids
    walltime: float | None = None               # None: the sim's elapsed time of the case
    note: str = ""                              # for the table

    def __post_init__(self):
        unknown = set(self.fires + self.must_not) - set(FLAGS)
        assert not unknown, f"{self.id}: unknown flags {unknown}"
        assert not set(self.fires) & set(self.must_not), f"{self.id}: a flag both fires and must not"


@dataclass(frozen=True)
class Cluster:
    id: str
    nodes: int
    filesystems: tuple                          # ((name, OSTs, MDTs), ...)
    version: str
    cases: tuple[Case, ...]

    @property
    def layout(self) -> str:
        fs = ", ".join(f"{n} {o} OSTs" for n, o, _ in self.filesystems)
        return f"{self.nodes} node{'s' if self.nodes > 1 else ''}, {fs}, Lustre {self.version}"


def on_all(*steps):
    """The same steps on every node."""
    return lambda i, n: list(steps)


def on_node0(*steps):
    """Steps on the first node only (the others idle)."""
    return lambda i, n: list(steps) if i == 0 else []


# ----------------------------------------------------------------------------------------------
# accessors for the checks

def fsd(doc: dict, fs: str = FS) -> dict:
    return doc["filesystems"][fs]


def rpcs(doc: dict, direction: str) -> dict[str, int]:
    return {k: v for k, v in fsd(doc)["rpc"][direction].items() if v}


def flag(doc: dict, flag_id: str) -> dict:
    (f,) = [f for f in doc["flags"] if f["id"] == flag_id]
    return f


def ost_bytes(doc: dict) -> dict[str, int]:
    return {o: v["read_bytes"] + v["write_bytes"] for o, v in fsd(doc)["osts"].items()}


# ----------------------------------------------------------------------------------------------
# running a cluster

def _take(pmcds: list[PrivatePmcd]):
    return snapshot.take([snapshot.HostTarget(f"node{i}", p.spec) for i, p in enumerate(pmcds)],
                         connect_timeout_s=5, fetch_timeout_s=20)


def run_cluster(cluster: Cluster, workdir: Path, only: set[str] | None = None) -> dict[str, dict]:
    """Run the cluster's cases in order; case id -> report document (cases not in `only` are
    still run, since later cases start from their counters, but not reported)."""
    workdir = Path(workdir)
    clients = [SimClient.create(workdir / f"node{i}", version=cluster.version,
                                filesystems=list(cluster.filesystems), seed=i + 1)
               for i in range(cluster.nodes)]
    pmcds = [PrivatePmcd(workdir / f"pmcd{i}", workdir / f"node{i}") for i in range(cluster.nodes)]
    docs: dict[str, dict] = {}
    try:
        for p in pmcds:
            p.start()
        begin = _take(pmcds)
        for case in cluster.cases:
            elapsed = []
            for i, c in enumerate(clients):
                t = 0.0
                for step in case.steps(i, cluster.nodes):
                    if isinstance(step, Run):
                        t += c.run(step.workload, fs=FS, **step.params)["elapsed_s"]
                    else:
                        c.fault(step.kind, fs=FS, **step.params)
                elapsed.append(t)
            end = _take(pmcds)
            # the sim runs hours of job in seconds: date the begin back by the simulated time
            # (the nodes run concurrently), so per-second rates are the workload's
            seconds = case.walltime or max(elapsed)
            dated = dataclasses.replace(begin, taken_at=end.taken_at - seconds)
            if only is None or case.id in only:
                docs[case.id] = report.build(dated, end, CFG, job_id=case.id, user="corpus")
            begin = end
    finally:
        for p in pmcds:
            p.stop()
    return docs


def fired(doc: dict, fs: str = FS) -> set[str]:
    return {f["id"] for f in doc["flags"] if f["fs"] == fs}


def verify(case: Case, doc: dict) -> None:
    """The assertions every case gets: the exact flag set, the named must-nots, nothing on the
    other filesystems, the exact data_quality ids, then the case's own key numbers."""
    got = fired(doc)
    assert got == set(case.fires), \
        f"{case.id}: fired {sorted(got)}, expected {sorted(case.fires)}\n" + \
        "\n".join(f"  {f['id']}: {f['finding']}" for f in doc["flags"])
    assert not got & set(case.must_not)
    assert all(f["fs"] == FS for f in doc["flags"]), [f["fs"] for f in doc["flags"]]
    dq = sorted(q["id"] for q in doc["data_quality"])
    assert dq == sorted(case.data_quality), f"{case.id}: data_quality {doc['data_quality']}"
    for f in doc["flags"]:                        # every flag says what, why and what to do
        assert f["finding"] and f["why"] and f["advice"] and f["evidence"], f
    if case.check:
        case.check(doc)


# ----------------------------------------------------------------------------------------------
# the table of tests/corpus/README.md

def _cell(ids) -> str:
    return ", ".join(ids) if ids else "—"


def table(clusters) -> str:
    rows = ["| case | workload | nodes, filesystem | fires | must not fire | data quality | io-findings | note |",
            "|---|---|---|---|---|---|---|---|"]
    for cl in clusters:
        for c in cl.cases:
            rows.append(f"| `{c.id}` | {c.workload} | {cl.layout} | {_cell(c.fires) if c.fires else 'nothing'} "
                        f"| {_cell(c.must_not)} | {_cell(c.data_quality)} | {c.source} | {c.note} |")
    return "\n".join(rows) + "\n"


def measured_table(clusters, workdir: Path) -> str:
    """Run everything and tabulate what fired (with the key evidence), for review."""
    rows = ["| case | fired (measured) | data quality | evidence |", "|---|---|---|---|"]
    for cl in clusters:
        docs = run_cluster(cl, workdir / cl.id)
        for c in cl.cases:
            d = docs[c.id]
            ev = "; ".join(f"{f['id']}: {f['finding']}" for f in d["flags"]) or _summary(d)
            rows.append(f"| `{c.id}` | {_cell(sorted(fired(d)))} | "
                        f"{_cell([q['id'] for q in d['data_quality']])} | {ev} |")
    return "\n".join(rows) + "\n"


def _summary(doc: dict) -> str:
    f = fsd(doc)
    r = f["rpc"]["read"]
    w = f["rpc"]["write"]
    waits = [o["wait_us_mean"] for o in f["osts"].values() if o.get("wait_us_mean") is not None]
    return (f"{f['read_bytes'] / GiB:.2f} GiB read, {f['write_bytes'] / GiB:.2f} GiB written, "
            f"opens {f['ops'].get('open', 0)}, 4K/1M RPCs read {r.get('4K', 0)}/{r.get('1M', 0)} "
            f"write {w.get('4K', 0)}/{w.get('1M', 0)}, {len(f['osts'])} OSTs used"
            + (f", median wait {statistics.median(waits) / 1000:.1f} ms" if waits else ""))


if __name__ == "__main__":
    from kit import corpuskit            # the module corpus_cases uses, not this __main__ copy
    from kit.corpus_cases import CLUSTERS
    print(corpuskit.table(CLUSTERS))
    with tempfile.TemporaryDirectory(prefix="corpus-") as tmp:
        print(corpuskit.measured_table(CLUSTERS, Path(tmp)))
