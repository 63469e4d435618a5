"""A simulated cluster's job history across a client change, through the real path.

Two compute nodes, each a simulated Lustre client tree served by the real pmdalustreclient in a
private pmcd. An "upgrade" reconfigures the clients (version, quirks, settings) and restarts the
agents, as a reboot into a new image would. Each job: begin snapshot over PCP, the application's
workload on each of its nodes, end snapshot, report.build with the scheduler's facts, the job
record stored with records.store. compare then reads those records like an admin's would.

Jobs are dated by a simulated calendar (baseline in October, candidate in November), so the two
sides are selected the way an admin selects them: by date (or by Lustre version).

The fleet: applications from the reference workloads (notes/io-findings.md) with job-to-job
variation drawn from a seeded RNG — sizes, file counts, the simulator's own seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from lustre_jobreport import config
from lustre_jobreport.records import store as records
from lustre_jobreport.report import document as report
from lustre_jobreport.acquire import snapshot
from lustre_sim import SimClient
from kit.privpmcd import PrivatePmcd

MiB, GiB = 1 << 20, 1 << 30
CFG = config.Config()
BASELINE_MONTH = datetime(2026, 10, 1, tzinfo=timezone.utc).timestamp()
CANDIDATE_MONTH = datetime(2026, 11, 1, tzinfo=timezone.utc).timestamp()
SPLIT = "2026-11-01"
# Every node runs this kernel and OS image on both sides of a change, unless a side sets its own:
# the simulator's per-version default images would otherwise make every change a kernel/OS one.
IMAGE = {"kernel": "4.18.0-477.27.1.el8_8.x86_64", "os_image": "rocky-8.8"}


@dataclass(frozen=True)
class App:
    name: str
    user: str
    nodes: int
    kind: str                                  # what the validation expects of it, e.g. "seq-reader"
    runs: Callable[[random.Random], list[tuple[str, dict]]]   # per node: (workload, params)


def _between(rng: random.Random, lo: int, hi: int, step: int = MiB) -> int:
    return rng.randrange(lo // step, hi // step + 1) * step


APPS = (
    App("seqread-64k", "ann", 1, "seq-reader",
        lambda r: [("seqread", dict(files=r.randint(1, 3), size=_between(r, 96 * MiB, 256 * MiB),
                                    call=64 * 1024, jitter=0.2, elapsed=r.randint(300, 900)))]),
    App("seqread-1m", "bob", 2, "seq-reader",
        lambda r: [("seqread", dict(files=r.randint(1, 2), size=_between(r, 128 * MiB, 384 * MiB),
                                    call=MiB, jitter=0.2, elapsed=r.randint(300, 900)))] * 2),
    App("checkpoint", "cat", 2, "writer",
        lambda r: [("checkpoint", dict(ranks=r.randint(2, 4), size=_between(r, 64 * MiB, 160 * MiB),
                                       call=5 * MiB // 2, elapsed=r.randint(300, 900)))] * 2),
    App("smallfiles", "dan", 1, "small-file-reader",
        lambda r: [("smallfile-read", dict(files=r.randint(6, 10), size=_between(r, 12 * MiB, 32 * MiB),
                                           call=4096, elapsed=r.randint(300, 900)))]),
    App("randread", "eve", 1, "small-reader",
        lambda r: [("random-read", dict(size=_between(r, 512 * MiB, 2048 * MiB), reads=r.randint(20_000, 30_000),
                                        call=4096, elapsed=r.randint(300, 900)))]),
    App("smallwrite", "fay", 1, "small-writer",
        lambda r: [("small-writes", dict(ranks=r.randint(8, 16), records=r.randint(768, 1024),
                                         record=16 * 1024, elapsed=r.randint(300, 900)))]),
)


@dataclass(frozen=True)
class Client:
    """What every node of the cluster runs on one side of a change."""
    version: str
    quirks: tuple[str, ...] = ()
    settings: dict = field(default_factory=dict)


@dataclass
class Fleet:
    workdir: Path
    records_dir: Path
    nodes: int = 2
    seq: int = 0

    def side(self, client: Client, month: float, apps, jobs_per_app: int, rng: random.Random) -> int:
        """Run jobs_per_app jobs of each app on clients configured as `client`, dated in `month`;
        returns the number of records stored. Jobs are interleaved, as on a real cluster."""
        trees = [self.workdir / f"n{i}" for i in range(self.nodes)]
        sims = [SimClient.create(t, version=client.version, filesystems=[("scratch", 16, 1)],
                                 seed=rng.randrange(1 << 30), force=True, quirks=client.quirks,
                                 settings=client.settings) for t in trees]
        pmcds = [PrivatePmcd(self.workdir / f"pmcd{i}", t) for i, t in enumerate(trees)]
        order = [a for a in apps for _ in range(jobs_per_app)]
        rng.shuffle(order)
        stored = 0
        for p in pmcds:
            p.start()
        try:
            for k, app in enumerate(order):
                ends_at = month + 3600 * (6 + k * (20 * 24 / max(1, len(order))))   # spread over the month
                self._job(app, sims[:app.nodes], pmcds[:app.nodes], ends_at, rng)
                stored += 1
        finally:
            for p in pmcds:
                p.stop()
        return stored

    def _job(self, app: App, sims, pmcds, ends_at: float, rng: random.Random) -> None:
        self.seq += 1
        targets = [snapshot.HostTarget(f"n{i}", p.spec) for i, p in enumerate(pmcds)]
        begin = snapshot.take(targets, connect_timeout_s=5, fetch_timeout_s=20)
        elapsed = 0.0
        for sim, (workload, params) in zip(sims, app.runs(rng)):
            ran = sim.run(workload, fs="scratch", seed=rng.randrange(1 << 30), **params)
            elapsed = max(elapsed, ran["elapsed_s"])
        end = snapshot.take(targets, connect_timeout_s=5, fetch_timeout_s=20)
        end.taken_at, begin.taken_at = ends_at, ends_at - elapsed
        doc = report.build(begin, end, CFG, job_id=str(self.seq), user=app.user,
                           facts={"name": app.name, "partition": "batch", "account": "proj",
                                  "num_nodes": app.nodes, "num_tasks": 16 * app.nodes})
        records.store(doc, self.records_dir, "sim", str(self.seq), {"scheduler": "slurm"})
