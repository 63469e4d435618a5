"""A site's job history for judging `compare`, built through the real path once and drawn from
many times.

`compare` is judged on fleets shaped like a site's: applications at 1 to 64 nodes, 5 to 40 jobs
a side, job-to-job noise of the compared metrics from CV 0.2 to 0.6. Every number comes out of
the real agent: each job runs on as many simulated compute nodes as the scheduler gave it
(`num_nodes`), each node a Lustre client tree (lustre_sim) served by pmdalustreclient in a
private pmcd; the job is snapshotted over PCP at its start and end, reported (report.build) and
stored as a job record (records.store); `records compact` makes the dataset and the rows are
read back from it (recordset.load), as `compare` reads them.

Efficient by construction: per application a POOL of jobs is run once per client (the site's
baseline client, and a regressed client for a shifted scenario), and fleets are drawn from the
pools. A job is a *spec* (application, index): its sizes, file counts, node count and the
simulator's seeds come from the spec alone, so spec i of an application is the same job on
every client. A fleet draws, per application, 2n distinct specs: the first n from the baseline
pool, the other n from the candidate pool, so no job (or its twin on the other client) is on
both sides. A no-change fleet draws both sides from the same pool: the null is true by
construction, whatever the draw.

Hosts: one pool of private pmcds is started per client, as many as the largest job needs; a job
of n nodes runs on hosts 0..n-1 (one job at a time: a node is never shared). A job-node costs
20 to 40 ms here (two snapshots over PCP and the simulator's run; `SiteHistory.cost`).
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from statistics import NormalDist
from typing import Callable, Iterable

import numpy as np

from lustre_jobreport import cli, config
from lustre_jobreport.acquire import snapshot
from lustre_jobreport.records import recordset, store as records
from lustre_jobreport.report import document as report
from lustre_sim import SimClient

from kit.fleet import IMAGE, Client
from kit.privpmcd import PrivatePmcd

KiB, MiB = 1 << 10, 1 << 20
CFG = config.Config()
FS = "scratch"
OSTS = 8                             # OSTs of the filesystem
CLUSTER = "sim"
MONTH_DAYS = 28                      # a pool's jobs end over the first 28 days of its month
SAMPLE_BYTES = 96 * MiB              # what a sample reader's job reads: above compare's 64 MiB gate
ALARMS = ("regression", "improvement")
GOLDEN = (math.sqrt(5) - 1) / 2

PerNode = list[tuple[str, dict]]     # per node of a job: (workload, params)


# ---- applications ---------------------------------------------------------------------------

@dataclass(frozen=True)
class SiteApp:
    """An application of the site: what its jobs do, on how many nodes, how often."""
    name: str
    user: str
    kind: str                                    # sample-reader, seq-reader, random-reader, writer, small-writer
    nodes: tuple[int, ...]                       # spec i runs on nodes[i % len(nodes)] nodes
    jobs: tuple[int, int]                        # jobs a side in a site fleet: (fewest, most)
    make: Callable[[random.Random, int, int], PerNode]   # (the spec's RNG, nodes, spec) -> what each node runs
    cv: float | None = None                      # a sample reader's job-to-job CV of its file size

    def nodes_of(self, spec: int) -> int:
        return self.nodes[spec % len(self.nodes)]

    def job(self, spec: int) -> tuple[int, PerNode]:
        """Spec `spec` of this application: its node count and each node's workload; the same
        on every client."""
        rng = random.Random(f"{self.name}/{spec}")
        nodes = self.nodes_of(spec)
        return nodes, self.make(rng, nodes, spec)


def _between(rng: random.Random, lo: int, hi: int, step: int = MiB) -> int:
    return rng.randrange(lo // step, hi // step + 1) * step


def _each_node(rng: random.Random, nodes: int, workload: str, params: dict) -> PerNode:
    """The same job parameters on every node, each node with its own simulator seed."""
    return [(workload, dict(params, seed=rng.randrange(1 << 30))) for _ in range(nodes)]


def spread(name: str, spec: int) -> float:
    """A standard normal quantile for spec `spec` of application `name`: the golden-ratio
    sequence from an offset of the name's, so any run of specs 0..P-1 covers the distribution
    evenly (a pool's spread is the one asked for, not a sample's luck) in no orderly way."""
    u0 = random.Random(f"{name}/spread").random()
    u = (u0 + (spec + 1) * GOLDEN) % 1.0
    return NormalDist().inv_cdf(min(max(u, 1e-9), 1 - 1e-9))


def sample_reader(name: str, user: str, cv: float, nodes: tuple[int, ...], jobs: tuple[int, int],
                  median: int | None = None) -> SiteApp:
    """Jobs that read their samples whole in 4 KiB calls (dd bs=4K), files smaller than an RPC
    chunk: from its second call a file is read sequentially, so read-ahead fetches it whole in one
    RPC, and a job's mean read RPC is about its mean file size. That size varies from job to job
    (the inputs differ) as a log-normal around `median` with coefficient of variation `cv`
    (spread() picks each spec's quantile), so the job-to-job CV of mean_read_rpc_bytes is about
    `cv` (measured: Jobs.realised_cv). The median is 256 KiB, 128 KiB from CV 0.5: the largest
    files must stay within one 1 MiB RPC, or the spread of the RPC size is less than the files'.
    Within a job files vary by +-50 %; a job reads about SAMPLE_BYTES over its nodes."""
    sigma = math.sqrt(math.log(1 + cv * cv))
    median = median or (128 * KiB if cv >= 0.5 else 256 * KiB)

    def make(rng: random.Random, n: int, spec: int) -> PerNode:
        size = max(16 * KiB, int(median * math.exp(sigma * spread(name, spec))) // 4096 * 4096)
        files = max(1, math.ceil(SAMPLE_BYTES / size / n))
        return _each_node(rng, n, "smallfile-read", dict(files=files, size=size, call=4 * KiB,
                                                         jitter=0.5, elapsed=rng.randint(300, 900)))
    return SiteApp(name, user, "sample-reader", nodes, jobs, make, cv)


def seq_reader(name: str, user: str, call: int, nodes: tuple[int, ...], jobs: tuple[int, int],
               size: tuple[int, int] = (96 * MiB, 256 * MiB)) -> SiteApp:
    """Large input files read sequentially in `call`-byte calls: read-ahead makes 1 MiB RPCs."""
    def make(rng: random.Random, n: int, spec: int) -> PerNode:
        return _each_node(rng, n, "seqread", dict(files=rng.randint(1, 3), size=_between(rng, *size),
                                                  call=call, jitter=0.2, elapsed=rng.randint(300, 900)))
    return SiteApp(name, user, "seq-reader", nodes, jobs, make)


def random_reader(name: str, user: str, nodes: tuple[int, ...], jobs: tuple[int, int]) -> SiteApp:
    """4 KiB reads at random offsets of a large table: one small RPC each, no read-ahead."""
    def make(rng: random.Random, n: int, spec: int) -> PerNode:
        return _each_node(rng, n, "random-read", dict(size=_between(rng, 512 * MiB, 2048 * MiB),
                                                      reads=rng.randint(20_000, 30_000), call=4096,
                                                      elapsed=rng.randint(300, 900)))
    return SiteApp(name, user, "random-reader", nodes, jobs, make)


def checkpoint_writer(name: str, user: str, nodes: tuple[int, ...], jobs: tuple[int, int]) -> SiteApp:
    def make(rng: random.Random, n: int, spec: int) -> PerNode:
        return _each_node(rng, n, "checkpoint", dict(ranks=rng.randint(2, 4), size=_between(rng, 64 * MiB, 160 * MiB),
                                                     call=5 * MiB // 2, elapsed=rng.randint(300, 900)))
    return SiteApp(name, user, "writer", nodes, jobs, make)


def small_writer(name: str, user: str, nodes: tuple[int, ...], jobs: tuple[int, int]) -> SiteApp:
    def make(rng: random.Random, n: int, spec: int) -> PerNode:
        return _each_node(rng, n, "small-writes", dict(ranks=rng.randint(8, 16), records=rng.randint(768, 1024),
                                                       record=16 * KiB, elapsed=rng.randint(300, 900)))
    return SiteApp(name, user, "small-writer", nodes, jobs, make)


# The site: eight applications from 1 to 64 nodes, 5 to 40 jobs a side, the small ones run most.
SITE_APPS = (
    sample_reader("inputs", "ann", 0.2, (1,), (20, 40)),
    seq_reader("seqread-64k", "bob", 64 * KiB, (1, 2), (10, 30)),
    sample_reader("genomics", "cat", 0.6, (1, 2, 3), (8, 20)),
    random_reader("randread", "dan", (1,), (5, 12)),
    checkpoint_writer("checkpoint", "eve", (4, 6, 8), (6, 15)),
    small_writer("smallwrite", "fay", (2,), (5, 10)),
    sample_reader("climate", "gus", 0.4, (8, 12, 16), (5, 10)),
    seq_reader("cfd", "hal", MiB, (32, 48, 64), (5, 8), size=(128 * MiB, 384 * MiB)),
)
# The site's applications that no read-ahead quirk touches (random reads, writes): on a
# read-ahead-regressed client they are the unchanged part of the fleet.
INERT_APPS = tuple(a for a in SITE_APPS if a.kind in ("random-reader", "writer", "small-writer"))

# The fleet: 4 applications, each job on 1 or 2 nodes, one of them a sequential reader
# that the Pleiades read-ahead regression (1 MiB read RPCs -> 8 KiB) hits.
RA_APPS = (
    seq_reader("postproc", "ivy", 64 * KiB, (1, 2), (6, 6)),
    random_reader("dbscan", "jay", (1, 2), (6, 6)),
    checkpoint_writer("restart", "kim", (1, 2), (6, 6)),
    small_writer("logger", "lou", (1, 2), (6, 6)),
)


def shift_apps(cv: float, count: int, prefix: str = "reader",
               nodes: tuple[tuple[int, ...], ...] = ((1,), (1,), (2,), (1,), (4,))) -> tuple[SiteApp, ...]:
    """`count` sample readers at job-to-job CV `cv`, each at one node class (the shape a power
    table needs: each application one group at the default keys)."""
    return tuple(sample_reader(f"{prefix}-{cv:.1f}-{i:02d}", f"u{i:02d}", cv, nodes[i % len(nodes)], (5, 40))
                 for i in range(count))


# ---- clients --------------------------------------------------------------------------------

BASELINE = Client("2.15.4", (), dict(IMAGE))


def regressed(quirk: str) -> Client:
    """The upgrade: Lustre 2.15.5 with a client quirk (sim/README "Client quirks")."""
    return Client("2.15.5", (quirk,), dict(IMAGE))


CLIENTS = {"base": BASELINE, "ra8k": regressed("ra-8k-rpcs"),
           **{f"split{f}": regressed(f"ra-split-rpcs={f}") for f in ("1.25", "1.5", "2", "4")}}
# shift name (a candidate client) -> what the power table calls it
SHIFTS = {"split1.25": "1.25x smaller mean read RPC", "split1.5": "1.5x smaller mean read RPC",
          "split2": "2x smaller mean read RPC", "split4": "4x smaller mean read RPC",
          "ra8k": "read-ahead 1 MiB -> 8 KiB RPCs"}


@dataclass(frozen=True)
class Pool:
    """`specs` jobs of an application on the client CLIENTS[tag], ending in `month` (UTC): spec
    i ends (i + 0.5) / specs of the way through the month's first MONTH_DAYS days."""
    app: SiteApp
    tag: str
    specs: int
    month: datetime

    def ends_at(self, spec: int) -> float:
        return (self.month + timedelta(days=MONTH_DAYS * (spec + 0.5) / self.specs)).timestamp()


def month(year: int, m: int) -> datetime:
    return datetime(year, m, 1, tzinfo=timezone.utc)


# ---- running jobs ---------------------------------------------------------------------------

class HostPool:
    """Simulated compute nodes on one client: a tree each, served by the real agent in a private
    pmcd. Booting again with another client re-creates the trees (same seeds) and restarts the
    agents, as a reboot into a new image would."""

    def __init__(self, workdir: Path):
        self.workdir = Path(workdir)
        self.sims: list[SimClient] = []
        self.pmcds: list[PrivatePmcd] = []
        self.job_nodes = 0
        self.busy_s = 0.0

    def boot(self, client: Client, hosts: int) -> None:
        self.stop()
        trees = [self.workdir / f"n{i}" for i in range(hosts)]
        self.sims = [SimClient.create(t, version=client.version, filesystems=[(FS, OSTS, 1)], seed=1000 + i,
                                      force=True, quirks=client.quirks, settings=client.settings)
                     for i, t in enumerate(trees)]
        self.pmcds = [PrivatePmcd(self.workdir / f"pmcd{i}", t) for i, t in enumerate(trees)]
        for p in self.pmcds:
            p.start()

    def stop(self) -> None:
        for p in self.pmcds:
            p.stop()
        self.pmcds = []

    def run(self, app: SiteApp, spec: int, ends_at: float, job_id: str, records_dir: Path) -> None:
        """One job of `app` (spec `spec`) on hosts 0..nodes-1: begin snapshot over PCP, each node's
        workload, end snapshot, report.build with the scheduler's facts, records.store."""
        started = time.monotonic()
        nodes, per_node = app.job(spec)
        if nodes > len(self.pmcds):
            raise ValueError(f"{app.name} spec {spec}: a job of {nodes} nodes, {len(self.pmcds)} hosts booted")
        targets = [snapshot.HostTarget(f"n{i}", p.spec) for i, p in enumerate(self.pmcds[:nodes])]
        begin = snapshot.take(targets, connect_timeout_s=5, fetch_timeout_s=20)
        elapsed = 0.0
        for sim, (workload, params) in zip(self.sims, per_node):
            ran = sim.run(workload, fs=FS, **params)
            elapsed = max(elapsed, ran["elapsed_s"])
        end = snapshot.take(targets, connect_timeout_s=5, fetch_timeout_s=20)
        end.taken_at, begin.taken_at = ends_at, ends_at - elapsed
        doc = report.build(begin, end, CFG, job_id=job_id, user=app.user,
                           facts={"name": app.name, "partition": "batch", "account": "proj",
                                  "num_nodes": nodes, "num_tasks": 16 * nodes})
        records.store(doc, records_dir, CLUSTER, job_id, {"scheduler": "slurm"})
        self.job_nodes += nodes
        self.busy_s += time.monotonic() - started


# ---- the history: pools built once, read back from the dataset ------------------------------

@dataclass
class Manifest:
    """What a history holds: job id -> (application, client tag, spec), and the pools built."""
    jobs: dict[str, list] = field(default_factory=dict)
    pools: dict[str, int] = field(default_factory=dict)     # "app/tag" -> specs built
    next_id: int = 1000

    @classmethod
    def read(cls, path: Path) -> "Manifest":
        if not path.exists():
            return cls()
        d = json.loads(path.read_text())
        return cls(d["jobs"], d["pools"], d["next_id"])

    def write(self, path: Path) -> None:
        path.write_text(json.dumps({"jobs": self.jobs, "pools": self.pools, "next_id": self.next_id}))


def scratch_dir(prefix: str) -> Path:
    """A new directory for the simulated nodes' trees: on tmpfs where there is room (the
    simulator renames every stats file at each run: 10x faster there)."""
    shm = Path("/dev/shm")
    roomy = os.access(shm, os.W_OK) and shutil.disk_usage(shm).free > 512 << 20   # containers: 64 MiB
    return Path(tempfile.mkdtemp(prefix=prefix, dir=shm if roomy else None))


class SiteHistory:
    """Job records of pools in `workdir` (records/, dataset/, manifest.json): built once, kept
    (a cache: `build` runs only the pools, or the specs of a pool, not there yet). The nodes'
    trees live in a scratch directory while the pools are built, and go with them."""

    def __init__(self, workdir: Path):
        self.workdir = Path(workdir)
        self.records = self.workdir / "records"
        self.dataset = self.workdir / "dataset"
        self.manifest_path = self.workdir / "manifest.json"
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.records.mkdir(mode=0o755, exist_ok=True)
        self.manifest = Manifest.read(self.manifest_path)
        self.hosts: HostPool | None = None
        self.built_jobs = 0
        self.job_nodes = 0
        self.busy_s = 0.0

    @property
    def cost(self) -> float:
        """Seconds a job-node of the pools built here cost (snapshots, simulator, report, record)."""
        return self.busy_s / max(1, self.job_nodes)

    def build(self, pools: Iterable[Pool], log: Callable[[str], None] = lambda s: None) -> int:
        """Run the jobs of `pools` not run yet, client by client (one boot of the hosts each);
        returns how many ran. The manifest is written after each pool."""
        todo: dict[str, list[tuple[Pool, int]]] = {}
        for pool in pools:
            have = self.manifest.pools.get(f"{pool.app.name}/{pool.tag}", 0)
            if have < pool.specs:
                todo.setdefault(pool.tag, []).append((pool, have))
        if not todo:
            return 0
        ran = 0
        scratch = scratch_dir("ljr-sitehosts-")
        hosts = HostPool(scratch)
        try:
            for tag, items in todo.items():
                n = max(max(p.app.nodes) for p, _ in items)
                log(f"client {tag}: booting {n} hosts")
                hosts.boot(CLIENTS[tag], n)
                for pool, have in items:
                    for spec in range(have, pool.specs):
                        job_id = str(self.manifest.next_id)
                        self.manifest.next_id += 1
                        hosts.run(pool.app, spec, pool.ends_at(spec), job_id, self.records)
                        self.manifest.jobs[job_id] = [pool.app.name, tag, spec]
                        ran += 1
                    self.manifest.pools[f"{pool.app.name}/{pool.tag}"] = pool.specs
                    self.manifest.write(self.manifest_path)
                    log(f"  {pool.app.name} on {tag}: {pool.specs - have} jobs")
        finally:
            hosts.stop()
            shutil.rmtree(scratch, ignore_errors=True)
            self.built_jobs += ran
            self.job_nodes += hosts.job_nodes
            self.busy_s += hosts.busy_s
        return ran

    def compact(self) -> None:
        """`lustre-jobreport records compact`, as the admin's timer runs it."""
        conf = self.workdir / "config.toml"
        conf.write_text("")
        rc = cli.main(["--config", str(conf), "records", "compact", "--records", str(self.records),
                       "--dataset", str(self.dataset)])
        if rc != 0:
            raise RuntimeError(f"records compact exited {rc}")

    def load(self) -> "Jobs":
        """Every job's rows, read back from the dataset and the records as `compare` reads them."""
        got = recordset.load("", self.records, self.dataset)
        if got.warnings:
            raise RuntimeError("reading the history: " + "; ".join(got.warnings))
        return Jobs(got.table, self.manifest)


class Jobs:
    """The history's rows, by (application, client tag, spec)."""

    def __init__(self, table, manifest: Manifest):
        self.table = table
        ids = table.column("job_id").to_pylist()
        fs = table.column("fs").to_pylist()
        self.index: dict[tuple[str, str], dict[int, int]] = {}
        for row, (job_id, f) in enumerate(zip(ids, fs)):
            if f != FS or job_id not in manifest.jobs:
                continue
            app, tag, spec = manifest.jobs[job_id]
            self.index.setdefault((app, tag), {})[spec] = row

    def specs(self, app: str, tag: str) -> int:
        return len(self.index.get((app, tag), {}))

    def rows(self, app: str, tag: str, specs: Iterable[int]):
        got = self.index[(app, tag)]
        return self.table.take([got[s] for s in specs])

    def column(self, app: str, tag: str, name: str) -> np.ndarray:
        """A column of a pool's rows, in spec order (floats; null as nan)."""
        got = self.index[(app, tag)]
        rows = self.table.take([got[s] for s in sorted(got)])
        return np.array([np.nan if v is None else v for v in rows.column(name).to_pylist()], dtype=float)

    def mean_read_rpc_bytes(self, app: str, tag: str) -> np.ndarray:
        """Per job of a pool, in spec order: OST bytes read per read RPC (compare's metric)."""
        return self.column(app, tag, "ost_read_bytes") / self.column(app, tag, "ost_read_rpcs")

    def realised_cv(self, app: str, tag: str = "base") -> float:
        """The job-to-job coefficient of variation of mean_read_rpc_bytes over a pool."""
        v = self.mean_read_rpc_bytes(app, tag)
        return float(np.std(v, ddof=1) / np.mean(v))


# ---- fleets ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Draw:
    """One application in a fleet: n jobs a side, the baseline's from pool (app, baseline), the
    candidate's from pool (app, candidate); the same tag twice is a no-change draw."""
    app: str
    baseline: str
    candidate: str
    n: int


def draw(jobs: Jobs, plan: Iterable[Draw], rng: random.Random):
    """A fleet: per Draw 2n distinct specs, the first n the baseline's, the rest the
    candidate's. Returns (baseline rows, candidate rows) as pyarrow Tables."""
    import pyarrow as pa

    base, cand = [], []
    for d in plan:
        pool = min(jobs.specs(d.app, d.baseline), jobs.specs(d.app, d.candidate))
        if 2 * d.n > pool:
            raise ValueError(f"{d.app}: {d.n} jobs a side need {2 * d.n} specs, the pools have {pool}")
        specs = rng.sample(range(pool), 2 * d.n)
        base.append(jobs.rows(d.app, d.baseline, specs[:d.n]))
        cand.append(jobs.rows(d.app, d.candidate, specs[d.n:]))
    return pa.concat_tables(base), pa.concat_tables(cand)


def site_plan(rng: random.Random, apps: Iterable[SiteApp] = SITE_APPS, baseline: str = "base",
              candidate: str = "base") -> list[Draw]:
    """Each application with a number of jobs a side drawn from its range."""
    return [Draw(a.name, baseline, candidate, rng.randint(*a.jobs)) for a in apps]


def verdicts_of(doc: dict, app: str) -> list[str]:
    """The verdicts of an application's groups (at whatever level compare judged them)."""
    return [g["verdict"] for g in doc["groups"] if (g.get("key") or {}).get("job_name") == app]


def detected(doc: dict, app: str) -> bool:
    return "regression" in verdicts_of(doc, app)


def alarms(doc: dict) -> int:
    """Groups called a regression or an improvement."""
    return sum(g["verdict"] in ALARMS for g in doc["groups"])


def metric_calls(doc: dict) -> tuple[int, int]:
    """(metrics called a regression or an improvement, metrics tested) over every group."""
    tested = called = 0
    for g in doc["groups"]:
        for m in g.get("metrics") or ():
            if m.get("p_value") is not None:
                tested += 1
                called += m["verdict"] in ALARMS
    return called, tested
