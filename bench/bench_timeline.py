#!/usr/bin/env python3
"""What a job's timeline costs the node (docs/design.md §2.5; issue 25's bounds): the agent's CPU
while one slot holds a job and the agent samples its timeline, and the timeline's memory at its
largest, on a simulated 2.15 client of 600 OSCs (4 filesystems x 150 OSTs) and of 2,048 (4 x 512).

1. CPU: the agent in a private pmcd at the shipped -T 10 with one slot in use and nobody
   fetching, over BENCH_TIMELINE_SAMPLES samples (default 10), less the same agent's CPU with no
   slot in use (it then never wakes); its threads' CPU to the nanosecond (schedstat). The CPU of
   one sample and its share of a core, against the goal <= 0.5 %. Once with the tree still (an
   idle client: the OSCs' rpc_stats read as before and are not parsed again) and against its
   floor in the same minutes: rawread opening, reading and closing the files a sample reads,
   once every 10 s, half-way between the agent's samples. Once with the agent parsing every file
   as changed (-D appl2), the worst case. The trees are on tmpfs (/dev/shm) where there is one:
   a real client's files are seq_files made at each read and never paged out, and on a disk's
   page cache this VM pages idle files out between samples (bench/README.md).
2. Memory: an agent at -T 0.01 until its timeline has filled 512 points and merged once (its
   largest: 512 points of 159 values per filesystem), fetched every second meanwhile: the
   store's arrays at 512 points, the served value's size, and the agent's resident memory
   growth since the job began (the store, the block it is served from, libpcp's copy on its
   way to pmcd), against the goal <= 8 MiB a job. The job does no I/O here, so its served
   value (only the values not zero at some point, LCS2) is tiny: a job whose every value moved
   on every filesystem serves as much as the store, as every job did before LCS2 (5.96 and
   7.69 MiB grown, bench/README.md), the bound.
3. Wire size, at 600 OSCs: a job that runs the Enzo workload on one of the 4 filesystems in
   steps at -T 0.2, its series fetched: the values it sent a point per filesystem (only those
   not zero at some point), the bytes a point a filesystem against the 8 x 159 = 1,272 of
   sending every value, and the served value against what every value would have made; the
   same for a 1 h job at the shipped 10 s (360 points), the epilog's fetch per node.
4. The epilog's side, at 600 OSCs: that job's series stretched to a 1 h job at 10 s (its points
   repeated to 360: the values it sends, as many points), HOSTS hosts' worth decoded
   (jobseries.decode) and summed (report.timeline.Accumulator.add) as the fan-out does, one
   host after another: the CPU this adds to a 12,000-node epilog, as a share of its 30 s bound
   (the epilog's other work, with the series' fetch: bench_scale).
Runs in about 8 minutes; the system pmcd is not touched.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:0] = [str(REPO / "tests"), str(REPO / "sim")]

from lustre_sim import SimClient  # noqa: E402
from kit.privpmcd import PrivatePmcd, children_of, cpu_seconds_exact  # noqa: E402
from kit.seriesread import decode, fetch_together, pack  # noqa: E402
from figures import against_floor, against_goal  # noqa: E402
from bench_agent import build_rawread, floor_cpu  # noqa: E402

SAMPLES = int(os.environ.get("BENCH_TIMELINE_SAMPLES", "10"))
SAMPLES_CHANGED = max(SAMPLES // 2, 1)
IDLE_S = 20
NFS = 4
SHIPPED_S = 10
CPU_GOAL_PCT, MEM_GOAL = 0.5, 8 << 20
JOB = "bench-1"
POINTS = 512
SERIES = "lustreclient.job.slot0.series"


def say(*a):
    print(*a, flush=True)


def rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def begin(pmcd: PrivatePmcd, control: str = "job_begin") -> None:
    done = subprocess.run(["pmstore", "-h", pmcd.local_spec, f"lustreclient.control.{control}", JOB],
                          capture_output=True, text=True, timeout=60)
    if done.returncode:
        raise RuntimeError(done.stderr)


def cpu_over(pid: int, seconds: float) -> float:
    c0 = cpu_seconds_exact(pid)
    time.sleep(seconds)
    return cpu_seconds_exact(pid) - c0


def trees_home() -> tuple[str | None, str]:
    """Where the simulated trees go (None: the temporary directory's default), and what holds
    them. A client's stats files are procfs and debugfs seq_files, made from kernel memory at
    each read, never paged out; the nearest a sim can come is a tmpfs on a machine without swap
    (/dev/shm). On a disk's page cache the files would be paged out between samples on a VM that
    reclaims idle memory (this one, bench/README.md), and each sample would read them back: a
    cost no real client has."""
    swap = len(Path("/proc/swaps").read_text().splitlines()) > 1
    for line in Path("/proc/mounts").read_text().splitlines():
        _, mnt, fstype, *_ = line.split()
        if mnt == "/dev/shm" and fstype == "tmpfs" and os.access(mnt, os.W_OK):
            return mnt, f"tmpfs{', swap on: it may be paged out' if swap else ', no swap: never paged out'}"
    return None, "no tmpfs at /dev/shm: a disk's page cache, which this machine may page out (bench/README.md)"


def samples_taken(pmcd: PrivatePmcd) -> int:
    """The samples slot 0's timeline holds, the one this fetch takes of its own included."""
    return sum(decode(fetch_together(pmcd.spec, [SERIES])[0][SERIES][""]).samples)


def sample_files(tree: Path, work: Path) -> tuple[Path, int]:
    """The list of the files a sample reads (each filesystem's llite stats, each OSC's
    rpc_stats), for rawread; and how many."""
    files = sorted(tree.glob("**/llite/*/stats")) + sorted(tree.glob("**/osc/*/rpc_stats"))
    work.mkdir(parents=True, exist_ok=True)
    listfile = work / "sample.list"
    listfile.write_text("".join(f"{f}\n" for f in files))
    return listfile, len(files)


def cpu_share(tree: Path, work: Path, extra: tuple[str, ...], samples: int,
              floor_exe: Path | None = None) -> tuple[float, int, float | None, int]:
    """At the shipped interval with one slot in use, for `samples` intervals: the CPU seconds of
    one sample less the agent's idle CPU over as long, and the samples taken. With floor_exe, the
    floor in the same minutes: rawread opening, reading and closing the files a sample reads, once
    an interval, half an interval after the agent's samples (which fall on the interval's
    multiples), so both read the files as equally long after they were last read and neither
    runs beside the other. Returns (CPU a sample, samples, floor's CPU a pass or None, files)."""
    iv = SHIPPED_S
    listfile, nfiles = sample_files(tree, work)
    with PrivatePmcd(work, tree, interval=iv, extra_agent_args=extra) as pmcd:
        [pid] = children_of(pmcd.proc.pid)
        idle = cpu_over(pid, IDLE_S) * samples * iv / IDLE_S
        begin(pmcd)
        time.sleep(iv - time.time() % iv + iv / 2)          # half-way between two samples
        before = samples_taken(pmcd)
        floor = None
        if floor_exe is not None:
            rawread_run = subprocess.Popen([str(floor_exe), str(listfile), str(samples), str(iv * 1000)],
                                           stdout=subprocess.PIPE, text=True)
        busy = cpu_over(pid, samples * iv)
        taken = samples_taken(pmcd) - before - 1          # less the second fetch's own sample
        if floor_exe is not None:
            out, _ = rawread_run.communicate(timeout=2 * iv)
            floor = floor_cpu(out) / samples
    return max(busy - idle, 0.0) / max(taken, 1), taken, floor, nfiles


def largest(tree: Path, work: Path) -> tuple[int, int, int, int, int]:
    """The timeline store's bytes at its most points, the served value's, the agent's RSS growth
    since the job began once 512 points have merged and filled again (fetched every second
    meanwhile); and the points and filesystems then."""
    with PrivatePmcd(work, tree, interval=0.01) as pmcd:
        [pid] = children_of(pmcd.proc.pid)
        begin(pmcd)
        begin(pmcd, "job_end")       # the job view's records and fetch path warmed up, no job kept
        before = rss(pid)
        begin(pmcd)
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            raw = fetch_together(pmcd.spec, [SERIES])[0][SERIES][""]
            s = decode(raw)
            if s.level >= 1 and len(s.samples) >= 256:
                break
            time.sleep(1)
        # fill it up to its most points again before measuring
        while len(s.samples) < 500 and time.monotonic() < deadline:
            time.sleep(1)
            raw = fetch_together(pmcd.spec, [SERIES])[0][SERIES][""]
            s = decode(raw)
        nvalues = sum(n for _, n in s.metrics)
        store = len(s.points) * POINTS * nvalues * 8 + POINTS * 4
        return store, len(raw), rss(pid) - before, len(s.samples), len(s.points)


def dense_size(s, npoints: int) -> int:
    """The bytes of series s with npoints points if every value were sent (before LCS2)."""
    nvalues = sum(n for _, n in s.metrics)
    head = 40 + 8 * len(s.metrics) + (4 * npoints + 7) // 8 * 8
    return head + sum((4 + len(fs.encode()) + 7) // 8 * 8 + 8 * npoints * nvalues for fs in s.points)


def sparse_size(s, npoints: int) -> int:
    """The bytes of series s with npoints points, sending the values it sends now."""
    words = (sum(n for _, n in s.metrics) + 63) // 64
    head = 40 + 8 * len(s.metrics) + (4 * npoints + 7) // 8 * 8
    return head + sum((4 + len(fs.encode()) + 7) // 8 * 8 + 8 * words + 8 * npoints * len(s.sent[fs])
                      for fs in s.points)


def wire_size(tree: Path, work: Path, client: SimClient) :
    """A job's served timeline against every value sent (see the module's docstring, 3)."""
    client.run("hold-open", fs="fs1", count=10000)     # the files each Enzo step closes, held open
    with PrivatePmcd(work, tree, interval=0.2) as pmcd:
        begin(pmcd)
        for step in range(10):
            client.run("enzo", fs="fs1")
            time.sleep(0.5)
        raw = fetch_together(pmcd.spec, [SERIES])[0][SERIES][""]
    s = decode(raw)
    nvalues, npoints = sum(n for _, n in s.metrics), len(s.samples)
    assert sparse_size(s, npoints) == len(raw), (sparse_size(s, npoints), len(raw))
    for fs in s.points:
        say(f"    {fs}: {len(s.sent[fs])} of {nvalues} values sent, {8 * len(s.sent[fs])} bytes a point "
            f"against {8 * nvalues}")
    say(f"    {npoints} points x {len(s.points)} filesystems: served {len(raw):,} bytes, "
        f"every value would be {dense_size(s, npoints):,} ({dense_size(s, npoints) / len(raw):.0f}x)")
    say(f"    a 1 h job at {SHIPPED_S} s (360 points) touching the same: {sparse_size(s, 360):,} bytes "
        f"a node, every value {dense_size(s, 360):,}; at 12,000 nodes {12000 * sparse_size(s, 360) / 1e9:.2f} GB "
        f"against {12000 * dense_size(s, 360) / 1e9:.2f} GB")
    return s


HOSTS = 2000
EPILOG_HOSTS, EPILOG_BOUND_S = 12000, 30.0


def epilog_side(s) -> None:
    """Decoding and summing HOSTS hosts' 360-point series (see the module's docstring, 4)."""
    from lustre_jobreport.acquire import jobseries
    from lustre_jobreport.report.timeline import Accumulator

    n = 360
    stretched = {fs: [points[i % len(points)] for i in range(n)] for fs, points in s.points.items()}
    raw = pack(s.metrics, [1] * n, stretched, level=0, interval_ms=SHIPPED_S * 1000,
               first_bin=int(time.time()) // SHIPPED_S - n)
    acc = Accumulator()
    t0 = time.process_time()
    for h in range(HOSTS):
        acc.add(f"n{h}", jobseries.decode(raw))
    per_host = (time.process_time() - t0) / HOSTS
    say(f"    {len(raw):,} bytes a host: decoded and summed in {1e6 * per_host:.0f} us of CPU a host, "
        f"{HOSTS:,} hosts; the sums {sum(a.nbytes for a in acc.sums.values()) / 2**20:.2f} MiB")
    say("  " + against_goal(f"the epilog's decode and sum of {EPILOG_HOSTS:,} hosts' timelines, one core", f"{EPILOG_HOSTS * per_host:.2f} s",
                            EPILOG_HOSTS * per_host / EPILOG_BOUND_S, f"the epilog's {EPILOG_BOUND_S:g} s bound",
                            " (the share it takes of it; bench_scale the rest)"))


def run(work: Path, trees: Path, held: str) -> int:
    exe = build_rawread(work)
    say(f"the simulated clients' trees in {trees}: {held}")
    for nost in (150, 512):
        nosc = NFS * nost
        say(f"building a simulated Lustre 2.15.4 client: {NFS} filesystems x {nost} OSTs ({nosc} OSCs) ...")
        tree = trees / f"tree{nosc}"
        client = SimClient.create(tree, version="2.15.4",
                                  filesystems=[(f"fs{i}", nost, 1) for i in range(NFS)], seed=1)
        client.run("ior", fs="fs0", tasks=8, block_size=64 << 20, transfer_size=1 << 20, stripe_count=-1)
        for label, extra, samples in (("tree still", (), SAMPLES),
                                      ("every file changed (-D appl2)", ("-D", "appl2"), SAMPLES_CHANGED)):
            say(f"[1] {nosc} OSCs, {label}: CPU at -T {SHIPPED_S} for {samples} samples, one slot in use ...")
            per_sample, n, floor, nfiles = cpu_share(tree, work / f"cpu{nosc}{len(extra)}", extra, samples,
                                                     None if extra else exe)
            pct = 100 * per_sample / SHIPPED_S
            say(f"    {n} samples, {1000 * per_sample:.2f} ms of CPU each")
            say("  " + against_goal(f"timeline at {SHIPPED_S} s, {nosc} OSCs, {label}",
                                    f"{pct:.3f} % of a core", pct / CPU_GOAL_PCT,
                                    f"the {CPU_GOAL_PCT} % goal"))
            if floor is not None:
                say("  " + against_floor(f"a sample, {nosc} OSCs, {label}", f"{1000 * per_sample:.2f} ms of CPU",
                                         per_sample / max(floor, 1e-9),
                                         f"its floor (rawread: the {nfiles:,} files it reads, opened, read and "
                                         f"closed once every {SHIPPED_S} s: {1000 * floor:.2f} ms a pass)"))
        say(f"[2] {nosc} OSCs: the timeline at its largest (-T 0.01 until 512 points merged) ...")
        store, size, grown, npoints, nfs = largest(tree, work / f"mem{nosc}")
        say(f"    {npoints} points x {nfs} filesystems: the store at {POINTS} points "
            f"{store / 2**20:.2f} MiB, the served value {size / 2**20:.2f} MiB")
        say("  " + against_goal(f"timeline memory, {nosc} OSCs, {nfs} filesystems (agent RSS grown "
                                "since the job began)", f"{grown / 2**20:.2f} MiB", grown / MEM_GOAL,
                                "the 8 MiB goal"))
        if nosc == 600:
            say(f"[3] {nosc} OSCs: the served timeline of a job running Enzo on fs1 (-T 0.2) ...")
            served = wire_size(tree, work / f"wire{nosc}", client)
            say(f"[4] {nosc} OSCs: the epilog decoding and summing {HOSTS:,} hosts' timelines of that job at 1 h ...")
            epilog_side(served)
    return 0


def main() -> int:
    home, held = trees_home()
    with tempfile.TemporaryDirectory(prefix="bench-timeline-") as d, \
            tempfile.TemporaryDirectory(prefix="bench-timeline-trees-", dir=home) as t:
        return run(Path(d), Path(t), held)


if __name__ == "__main__":
    sys.exit(main())
