#!/usr/bin/env python3
"""Job view fetch: the reporter's CPU to read one host at a job's end through the agents' job
view, against the C floor of the same protocol, for clients of 600 and 2,000 OSCs (issue 24).

K private pmcds (tests/kit/privpmcd.py), each the real agent on a simulated Lustre 2.15.4 client
of its own, stand for the nodes; N host names map onto them round robin. Each node's prolog is
done as on a real node (one local pmstore of lustreclient.control.job_begin) and the clients run
an IOR, so every answer has deltas. Then, interleaved, ROUNDS times each:

  floor:   bench/jobfloor.c from C, one host after another: pmNewContext, pmLookupInDom of the
           job's slot, one pmFetch of the slot's answer, pmFreeResult, pmDestroyContext, nothing
           decoded: what any reader of the job view pays;
  subject: snapshot.fetch_all(job_id=...) as the epilog calls it (the slot's answer decoded into
           each host's snapshot), on THREADS threads;
  peer:    the same with the answer refused, as from an agent older than it: the host read
           metric by metric (82 value sets and 4 instance listings a host).

CPU per host is the process's own (getrusage), the median of the rounds; the floor's is the C
program's own. The stand-ins' CPU is not counted (they are the nodes). Goals, for 600 OSCs: the
subject <= 2 ms a host on one core, and <= 2.5x the floor.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests"))
from kit.privpmcd import PrivatePmcd  # noqa: E402

from figures import against_floor, against_goal  # noqa: E402
from lustre_jobreport import catalog  # noqa: E402
from lustre_jobreport.acquire import pcpfetch, snapshot  # noqa: E402
from lustre_sim import SimClient  # noqa: E402

LAYOUTS = {600: [(f"fs{f}", 100, 1) for f in range(6)], 2000: [(f"fs{f}", 500, 1) for f in range(4)]}
PMCDS, HOSTS, THREADS, ROUNDS = 4, 400, 16, 3
GOAL_MS, GOAL_RATIO = 2.0, 2.5
JOB = "bench24"


def own_cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def build_floor(work: Path) -> Path:
    exe = work / "jobfloor"
    subprocess.run(["gcc", "-O2", "-o", str(exe), str(HERE / "jobfloor.c"), "-lpcp"], check=True)
    return exe


def floor(exe: Path, specs: list[str]) -> float:
    """The C floor's own CPU per host."""
    out = subprocess.run([str(exe), JOB, *specs], capture_output=True, text=True, check=True)
    read, cpu_us, _ = out.stdout.split()
    assert int(read) == len(specs), out.stderr
    return float(cpu_us) / 1e6 / len(specs)


def subject(targets: list[snapshot.HostTarget], by_answer: bool) -> float:
    """The reporter's CPU per host of fetch_all with the job id (by_answer False: the agent's
    answer refused, as an older agent refuses it)."""
    real = pcpfetch._ANSWER_PMIDS
    if not by_answer:      # a PMID no agent has
        pcpfetch._ANSWER_PMIDS = [(pcpfetch.ctypes.c_uint * 1)((catalog.DOMAIN << 22) | (511 << 10) | s)
                                  for s in range(catalog.JOB_SLOTS)]
    try:
        c0 = own_cpu()
        got = snapshot.fetch_all(targets, backend="pmapi", parallel=THREADS, job_id=JOB,
                                 connect_timeout_s=5, fetch_timeout_s=30)
        cpu = own_cpu() - c0
    finally:
        pcpfetch._ANSWER_PMIDS = real
    bad = got.failed()
    if bad:     # a stand-in pmcd's accept queue overflowing now and then: said, not counted
        print(f"    ({len(bad)} of {len(targets)} hosts not read: {bad[0].error})")
    if len(bad) > len(targets) // 10:
        raise SystemExit(f"bench_jobview: {len(bad)} of {len(targets)} hosts not read: {bad[0].error}")
    return cpu / (len(targets) - len(bad))


def work_dir() -> Path:
    shm = Path("/dev/shm")
    base = shm if shm.is_dir() and shutil.disk_usage(shm).free >= 2 << 30 else None
    return Path(tempfile.mkdtemp(prefix="ljr-jobview-", dir=base))


def one_layout(base: Path, exe: Path, oscs: int) -> dict:
    pmcds = []
    try:
        for i in range(PMCDS):
            tree = SimClient.create(base / f"t{oscs}-{i}", version="2.15.4", filesystems=LAYOUTS[oscs], seed=i)
            pmcds.append(PrivatePmcd(base / f"p{oscs}-{i}", tree.root).start())
            subprocess.run(["pmstore", "-h", pmcds[-1].local_spec, catalog.JOB_BEGIN_CONTROL, JOB], check=True,
                           stdout=subprocess.DEVNULL)
            tree.run("ior", LAYOUTS[oscs][i % len(LAYOUTS[oscs])][0])
        targets = [snapshot.HostTarget(f"node{h:05d}", pmcds[h % PMCDS].spec) for h in range(HOSTS)]
        specs = [t.spec for t in targets]
        subject(targets[:PMCDS], True)          # warm: the agents' first parse of the changed trees
        rounds: dict[str, list[float]] = {"floor": [], "answer": [], "metrics": []}
        for _ in range(ROUNDS):
            rounds["floor"].append(floor(exe, specs))
            rounds["answer"].append(subject(targets, True))
            rounds["metrics"].append(subject(targets, False))
        return {k: statistics.median(v) for k, v in rounds.items()}
    finally:
        for p in pmcds:
            p.stop()


def main() -> int:
    base = work_dir()
    try:
        exe = build_floor(base)
        load = os.getloadavg()[0]
        print(f"job view fetch: Lustre 2.15.4 clients, {HOSTS} hosts round robin on {PMCDS} private pmcds (the real "
              f"agent), {THREADS} threads; median of {ROUNDS} interleaved rounds; load {load:.2f} on "
              f"{os.cpu_count()} cores")
        for oscs in LAYOUTS:
            r = one_layout(base, exe, oscs)
            goal = GOAL_RATIO if oscs == 600 else None
            print(f"{oscs:,} OSCs a host ({len(LAYOUTS[oscs])} filesystems), CPU a host:")
            print("  " + against_floor("reporter, by the slot's answer", f"{1000 * r['answer']:.3f} ms",
                                       r["answer"] / r["floor"],
                                       f"the C floor (connect + slot + fetch + free, {1000 * r['floor']:.3f} ms)",
                                       goal))
            if oscs == 600:
                print("  " + against_goal("  the same against its own goal", f"{1000 * r['answer']:.3f} ms",
                                          1000 * r["answer"] / GOAL_MS, f"the {GOAL_MS:g} ms goal",
                                          f" (one core reads 12,000 hosts in {12000 * r['answer']:.1f} s)"))
            print("  " + against_floor("peer: metric by metric (an agent without the answer)",
                                       f"{1000 * r['metrics']:.3f} ms", r["metrics"] / r["floor"], "the C floor",
                                       extra=f", {r['metrics'] / r['answer']:.2f}x the answer's"))
        print(f"(load {os.getloadavg()[0]:.2f} at the end)")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
