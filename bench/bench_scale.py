#!/usr/bin/env python3
"""Scale: the prolog's and the epilog's work for jobs of 1,000, 4,000 and 12,000 nodes (issue 11).

Pleiades-like clients: Lustre 2.15.4 layout, 6 filesystems x 100 OSTs (600 OSCs a client). K
private pmcds (tests/kit/privpmcd.py), each running the real agent on a simulated client tree of
its own, stand for the nodes; the job's host names map onto them round robin (config [hosts]
style). Each job size runs in fresh processes, one for the prolog's work and one for the
epilog's, so that each one's peak RSS is that size's:

  prolog: the begin snapshot as a large job's prolog takes it (snapshot.fetch_all of
          catalog.BEGIN_METRICS through the PCP bindings, the config's parallelism, 5 s connect
          and 30 s fetch timeouts, no deadline), then written to the spool (spool.put, what
          hooksnap.put_begin does);
  epilog: the begin snapshot taken out of the spool (spool.take), the end snapshot of the same
          hosts (fetch_all of catalog.SNAPSHOT_METRICS, stacked as hooksnap.end stacks it),
          document.build, view.render_text and store.store, as the epilog (hooks/epilog.py) calls them
          (no scheduler facts; delivery, appending <= 40 lines of text, is not measured);
  job view: the same job read the agents' way (a Slurm job on [hooks] job_view_from_nodes nodes
          or more): before the prolog, each stand-in agent is told the job's start as each node's
          prolog tells its own (one local pmstore of lustreclient.control.job_begin: its wall
          time and the agent's CPU are printed, with the reporter's start-up: a node's prolog);
          after the I/O (each stand-in its node's share of a file-per-process job, on its own
          OSCs: bench/jobio.py), the first node's epilog in a fresh process: fetch_all with job_id
          (the deltas and the end metrics), stacked, jobview.delta + report.from_delta,
          render_text, records.store. Nothing is spooled.

Floors, measured in the same processes just before the subject: (a) per host one pmNewContext +
pmLookupName of the same metrics + one pmFetch + pmFreeResult, nothing decoded, on the same
number of threads and (the first --floor-hosts of) the same hosts: what any PMAPI fan-out pays;
(b) snapfile.read of the spool file: the way back of what the prolog writes. The job view's
floor (a) is the same bare fetch of its metrics (the job's slot, the end metrics).

The stand-in pmcds and agents share this machine's cores with the reporter, so the wall times
here are the stand-ins' more than the reporter's. Printed beside them: the reporter's own CPU
(getrusage of the measuring process and its children), the stand-ins' CPU (/proc/<pid>/stat of
the pmcds and agents), and from the reporter's CPU per host alone, how many hosts the prolog's
5 s and the epilog's 30 s would cover on one core. Goals (issue 11), for 12,000 nodes: prolog
<= 5 s, epilog <= 30 s, peak RSS <= 4 GiB, begin spool file <= 256 MiB.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from kit.privpmcd import children_of, cpu_seconds  # noqa: E402  (standard library only)

from jobio import node_io  # noqa: E402  (standard library only)

SIZES = (1000, 4000, 12000)
PMCDS, FILESYSTEMS, OSTS = 8, 6, 100
FLOOR_HOSTS = 1000            # floors run on at most this many of a job's hosts (per host figures)
CONNECT_S, FETCH_S = 5.0, 30.0
PROLOG_GOAL_S, EPILOG_GOAL_S = 5.0, 30.0
RSS_GOAL, SPOOL_GOAL = 4 << 30, 256 << 20
SHM_NEEDED = 4 << 30          # /dev/shm must have this much free to be used
MiB = 1 << 20


# ---- measuring ------------------------------------------------------------------------------

def own_cpu() -> float:
    """User + system CPU of this process and its children (a fan-out may use worker processes)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def standin_cpu(pids: list[int]) -> float:
    """CPU seconds the stand-in pmcds and agents have used."""
    return sum(cpu_seconds(pid) for pid in pids)


def listen_overflows() -> int:
    """Connections the kernel dropped at a full accept queue (TcpExt ListenOverflows): pmcd
    listens with a backlog of 5, and a dropped SYN costs the client a 1 s retransmit. The
    counter is the whole network namespace's: other pmcds on the machine count too."""
    lines = Path("/proc/net/netstat").read_text().splitlines()
    for names, values in zip(lines[::2], lines[1::2]):
        if names.startswith("TcpExt:"):
            return int(dict(zip(names.split()[1:], values.split()[1:])).get("ListenOverflows", 0))
    return 0


def reset_peak_rss() -> None:
    """Start this process's high-water mark (VmHWM) again from its current RSS, so each stage's
    peak is its own (on a kernel without it, the peak so far: an over-estimate)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def peak_rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def children_cpu() -> float:
    """User + system CPU of this process's children that have ended (the fan-out's workers)."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def measured(fn, standins: list[int]):
    """fn()'s result and its figures: wall, own CPU (with its ended children's: the fan-out's
    worker processes, also apart), stand-ins' CPU, peak RSS, listen drops."""
    reset_peak_rss()
    t0, c0, s0, d0, k0 = time.perf_counter(), own_cpu(), standin_cpu(standins), listen_overflows(), children_cpu()
    result = fn()
    stage = {"wall": time.perf_counter() - t0, "cpu": own_cpu() - c0, "workers": children_cpu() - k0,
             "standin": standin_cpu(standins) - s0, "rss": peak_rss(), "drops": listen_overflows() - d0}
    return result, stage


# ---- floor (a): the bare protocol ---------------------------------------------------------------

def bare_fetch(spec: str, names: list[str]) -> float:
    """One host as the protocol has it, nothing decoded; returns how long the connect took."""
    import ctypes

    import cpmapi as c_api
    from pcp import pmapi

    t0 = time.perf_counter()
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, spec)
    connect = time.perf_counter() - t0
    found = ctx.pmLookupName(names, relaxed=1)
    pmids = [p for p in found if p != c_api.PM_ID_NULL]
    result = ctx.pmFetch((ctypes.c_uint * len(pmids))(*pmids))
    ctx.pmFreeResult(result)
    del ctx                                   # pmDestroyContext: the connection closes
    return connect


def floor_fan_out(specs: list[str], metrics: tuple[str, ...], parallel: int) -> dict:
    """bare_fetch of every spec, `parallel` threads at a time; connects of 0.9 s or more are
    the 1 s SYN retransmits of a full pmcd accept queue."""
    from concurrent.futures import ThreadPoolExecutor

    from pcp import pmapi

    def one(spec: str) -> float | None:
        try:
            return bare_fetch(spec, list(metrics))
        except pmapi.pmErr:
            return None

    with ThreadPoolExecutor(parallel) as pool:
        connects = list(pool.map(one, specs))
    ok = [c for c in connects if c is not None]
    return {"hosts": len(specs), "failed": len(specs) - len(ok), "slow_connects": sum(c >= 0.9 for c in ok),
            "max_connect": max(ok, default=0.0)}


# ---- the children: one job size's prolog, then its epilog ---------------------------------------

def values_per_host(fetched) -> dict:
    """How many values a host answered (all, u64, those of per-OSC metrics), from the first
    host read."""
    from lustre_jobreport import catalog

    host = next((h for h in fetched.hosts if h.ok), None)
    if host is None:
        return {"all": 0, "u64": 0, "osc": 0}
    if host.answer is not None:      # read by its job slot's answer: its columns not made yet
        from lustre_jobreport.acquire import pcpfetch
        host = pcpfetch.materialized(host)
    sizes = {name: len(c.instances) for name, c in host.metrics.items()}
    # a job view delta (lustreclient.job.<metric>) is counted as its metric's kind
    declared = {name: catalog.get(name) or catalog.get(name.replace(catalog.P + "job.", catalog.P, 1))
                for name in sizes}
    return {"all": sum(sizes.values()),
            "u64": sum(n for name, n in sizes.items() if not host.metrics[name].is_string),
            "osc": sum(n for name, n in sizes.items() if declared[name] is not None
                       and declared[name].indom == catalog.OSC)}


def incompressible_size(path: Path) -> int:
    """The spool file's size had every u64 table been stored raw ('r:', base64) instead of what
    zlib made of it: the stand-ins serve near-identical values, which compress far better than
    a real job's counters would. An upper bound (real counters compress somewhat)."""
    doc = json.loads(path.read_bytes())
    size = path.stat().st_size
    for table in doc["metrics"].values():
        if table["type"] == "u64":
            n = len(doc["hosts"]) * len(table["instances"])
            size += 2 + 4 * ((8 * n + 2) // 3) - len(table["values"])
    return size


def fan_out(targets, metrics, parallel: int):
    from lustre_jobreport.acquire import snapshot

    return snapshot.fetch_all(targets, metrics=metrics, backend="pmapi", parallel=parallel,
                              connect_timeout_s=CONNECT_S, fetch_timeout_s=FETCH_S)


def failures(fetched) -> dict:
    failed = fetched.failed()
    return {"failed": len(failed), "why": failed[0].error if failed else ""}


def stack_and_drop(snapfile, fetched) -> None:
    """The part of the spool write that stacks the hosts into per-metric tables, measured on its
    own (before the write, which then stacks them again, letting each host's values go)."""
    snapfile.Snapshot.from_hosts(fetched.taken_at, fetched.hosts)


def prolog_child(a: dict) -> dict:
    # what a large job's prolog imports (the in-process path: PCP bindings, numpy)
    from lustre_jobreport import catalog  # noqa: F401
    from lustre_jobreport.hooks import entry as hooks, spool  # noqa: F401
    from lustre_jobreport.acquire import pcpfetch, snapfile, snapshot  # noqa: F401

    startup = own_cpu()
    standins, parallel, n = a["standins"], a["parallel"], a["hosts"]
    targets = [snapshot.HostTarget(f"node{h:05d}", a["specs"][h % len(a["specs"])]) for h in range(n)]
    os.environ.update(PMCD_CONNECT_TIMEOUT=f"{CONNECT_S:g}", PMCD_REQUEST_TIMEOUT=f"{FETCH_S:g}")
    floor, floor_stage = measured(lambda: floor_fan_out([t.spec for t in targets[:a["floor_hosts"]]],
                                                        catalog.BEGIN_METRICS, parallel), standins)
    fetched, fetch = measured(lambda: fan_out(targets, catalog.BEGIN_METRICS, parallel), standins)
    values, fetch = values_per_host(fetched), {**fetch, **failures(fetched)}
    # stacking apart first: the spool write lets each host's values go as it stacks them
    _, stack = measured(lambda: stack_and_drop(snapfile, fetched), standins)
    spool_dir = spool.open_spool(a["spool"])
    path, write = measured(lambda: spool.put(spool_dir, a["job"], fetched), standins)
    return {"startup": startup, "floor": {**floor, **floor_stage}, "fetch": fetch,
            "write": write, "stack": stack, "values": values, "spool_bytes": path.stat().st_size,
            "incompressible": incompressible_size(path)}


def read_and_drop(snapfile, path: Path) -> None:
    """Floor (b): what it reads is let go at once, so the epilog's stages start without it."""
    snapfile.read(path)


def epilog_child(a: dict) -> dict:
    # what the epilog imports (hooks/epilog.py's modules)
    from lustre_jobreport import catalog, config  # noqa: F401
    from lustre_jobreport.hooks import entry as hooks, spool  # noqa: F401
    from lustre_jobreport.acquire import pcpfetch, snapfile, snapshot  # noqa: F401
    from lustre_jobreport.records import store as records  # noqa: F401
    from lustre_jobreport.report import view as render, document as report  # noqa: F401

    startup = own_cpu()
    standins, parallel = a["standins"], a["parallel"]
    os.environ.update(PMCD_CONNECT_TIMEOUT=f"{CONNECT_S:g}", PMCD_REQUEST_TIMEOUT=f"{FETCH_S:g}")
    spool_dir = spool.open_spool(a["spool"])
    out: dict = {"startup": startup}
    # floor (b) first: the file is still in the spool (spool.take removes it)
    _, out["read_floor"] = measured(lambda: read_and_drop(snapfile, spool.begin_path(spool_dir, a["job"])), standins)
    begin, out["take"] = measured(lambda: spool.take(spool_dir, a["job"]), standins)
    targets = [snapshot.HostTarget(name, h.spec) for name, h in begin.hosts.items()]
    floor, floor_stage = measured(lambda: floor_fan_out([t.spec for t in targets[:a["floor_hosts"]]],
                                                        catalog.SNAPSHOT_METRICS, parallel), standins)
    out["floor"] = {**floor, **floor_stage}
    fetched, fetch = measured(lambda: fan_out(targets, catalog.SNAPSHOT_METRICS, parallel), standins)
    out["fetch"], out["values"] = {**fetch, **failures(fetched)}, values_per_host(fetched)
    end, out["stack"] = measured(lambda: snapfile.Snapshot.from_hosts(fetched.taken_at, fetched.hosts, consume=True),
                                 standins)
    del fetched                   # as hooksnap.end keeps only the stacked snapshot
    doc, out["build"] = measured(lambda: report.build(begin, end, config.Config(), job_id=a["job"]), standins)
    text, out["render"] = measured(lambda: render.render_text(doc), standins)
    _, out["record"] = measured(lambda: records.store(doc, a["records"], "bench", a["job"], {"scheduler": "slurm"}),
                                standins)
    out["report_lines"] = len(text.splitlines())
    out["hosts_in_report"] = len(doc["job"]["hosts"])
    return out


def job_view_child(a: dict) -> dict:
    """The epilog of a job read through the agents' job view (the epilog with no begin
    snapshot): every host's deltas and end metrics (fetch_all job_id=), stacked, jobview.delta,
    report.from_delta, render, record. Floor (a): the same metrics of the job's slot, bare."""
    from lustre_jobreport import catalog, config  # noqa: F401
    from lustre_jobreport.hooks import entry as hooks  # noqa: F401
    from lustre_jobreport.report import jobview, view as render, document as report  # noqa: F401
    from lustre_jobreport.acquire import pcpfetch, procfanout, snapfile, snapshot  # noqa: F401
    from lustre_jobreport.records import store as records  # noqa: F401

    startup = own_cpu()
    standins, parallel, n = a["standins"], a["parallel"], a["hosts"]
    targets = [snapshot.HostTarget(f"node{h:05d}", a["specs"][h % len(a["specs"])]) for h in range(n)]
    os.environ.update(PMCD_CONNECT_TIMEOUT=f"{CONNECT_S:g}", PMCD_REQUEST_TIMEOUT=f"{FETCH_S:g}")
    out: dict = {"startup": startup}
    floor, floor_stage = measured(lambda: floor_fan_out([t.spec for t in targets[:a["floor_hosts"]]],
                                                        catalog.job_view_metrics(a["slot"]), parallel), standins)
    out["floor"] = {**floor, **floor_stage}
    processes = int(config.DEFAULTS["snapshot"]["job_view_processes"])     # the shipped default
    out["processes"] = workers = procfanout.count(processes, n)
    # 64 connections at once in all, as with one process: the stand-ins are 8 pmcds, whose accept
    # queues hold 5 connects each; more at once and SYNs are dropped, libpcp's connects stall
    # and hosts go unanswered (a real node's pmcd sees one connection from the epilog)
    parallel = max(8, parallel // workers)
    fetched, fetch = measured(lambda: snapshot.fetch_all(targets, backend="pmapi", parallel=parallel, job_id=a["job"],
                                                         processes=processes, connect_timeout_s=CONNECT_S,
                                                         fetch_timeout_s=FETCH_S),
                              standins)
    out["fetch"], out["values"] = {**fetch, **failures(fetched)}, values_per_host(fetched)
    end, out["stack"] = measured(lambda: snapfile.Snapshot.from_hosts(fetched.taken_at, fetched.hosts, consume=True),
                                 standins)
    del fetched
    doc, out["build"] = measured(lambda: report.from_delta(jobview.delta(end, a["job"]), config.Config(),
                                                           job_id=a["job"]), standins)
    text, out["render"] = measured(lambda: render.render_text(doc), standins)
    _, out["record"] = measured(lambda: records.store(doc, a["records"], "bench", a["job"], {"scheduler": "slurm"}),
                                standins)
    out["report_lines"] = len(text.splitlines())
    out["hosts_in_report"] = len(doc["job"]["hosts"])
    out["read_bytes"] = sum(fs["read_bytes"] + fs["write_bytes"] for fs in doc["filesystems"].values())
    return out


def store_job_begin(pmcds, job: str) -> dict:
    """What each node's prolog does for a job read through the job view: one local pmstore of
    lustreclient.control.job_begin (over the pmcd's unix socket); wall time of each, and the
    agents' CPU for keeping the job's begin values (their reading of every stats file)."""
    from lustre_jobreport import catalog

    walls, agent_cpu = [], 0.0
    for p in pmcds:
        agents = children_of(p.proc.pid)
        c0 = standin_cpu(agents)
        t0 = time.perf_counter()
        subprocess.run(["pmstore", "-h", p.local_spec, catalog.JOB_BEGIN_CONTROL, job], check=True,
                       stdout=subprocess.DEVNULL)
        walls.append(time.perf_counter() - t0)
        agent_cpu += standin_cpu(agents) - c0
    return {"wall_max": max(walls), "wall_median": sorted(walls)[len(walls) // 2], "agent_cpu": agent_cpu / len(pmcds)}


def job_slot(spec: str, job: str) -> int:
    from lustre_jobreport import catalog

    got = subprocess.run(["pminfo", "-h", spec, "-f", catalog.JOB_BEGIN_TIME], check=True, capture_output=True,
                         text=True).stdout
    for line in got.splitlines():
        if f'"{job}"' in line:
            return int(line.split("inst [", 1)[1].split(" ", 1)[0])
    raise RuntimeError(f"no slot for job {job} on {spec}: {got}")


def reporter_startup() -> float:
    """Wall time of starting the reporter as a node's prolog does (interpreter, the hook modules)."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import lustre_jobreport.hooks.entry, lustre_jobreport.hooks.hooksnap"], check=True)
    return time.perf_counter() - t0


def run_child(kind: str, args: dict) -> dict:
    """One child process; its figures come back as JSON in a file."""
    with tempfile.NamedTemporaryFile(suffix=".json") as result:
        subprocess.run([sys.executable, __file__, "--child", kind, json.dumps(args), result.name], check=True)
        return json.loads(Path(result.name).read_text())


# ---- the stand-ins ----------------------------------------------------------------------------

def work_dir() -> Path:
    """/dev/shm when it has room (no disk in the way of the trees or the spool), else a temp dir."""
    shm = Path("/dev/shm")
    base = shm if shm.is_dir() and shutil.disk_usage(shm).free >= SHM_NEEDED else None
    return Path(tempfile.mkdtemp(prefix="ljr-scale-", dir=base))


def warm(specs: list[str]) -> None:
    """One full fetch per pmcd, so neither the floor nor the subject pays an agent's first
    parse of a tree that changed."""
    for spec in specs:
        subprocess.run(["pminfo", "-h", spec, "-f", "lustreclient"], check=True, stdout=subprocess.DEVNULL)


# ---- printing -----------------------------------------------------------------------------------

def ms(seconds: float, hosts: int) -> str:
    return f"{seconds / hosts * 1000:.2f} ms/host"


def stage_line(label: str, s: dict, hosts: int, extra: str = "") -> str:
    return (f"  {label:<22} wall {s['wall']:6.2f} s  cpu {s['cpu']:6.2f} s = {ms(s['cpu'], hosts)}  "
            f"peak RSS {s['rss'] / MiB:6.0f} MiB{extra}")


def fan_out_lines(label: str, s: dict, floor: dict, hosts: int, values: dict) -> list[str]:
    """A snapshot's figures against floor (a), per host (the floor may run on fewer hosts)."""
    fh = floor["hosts"]
    share = s["standin"] / (s["standin"] + s["cpu"]) if s["standin"] + s["cpu"] else 0.0
    lines = [stage_line(label, s, hosts, f"  ({hosts - s['failed']} read"
                        + (f", {s['failed']} failed: {s['why']}" if s["failed"] else "") + ")"),
             f"    {s['cpu'] / hosts / values['all'] * 1e6:.2f} us of CPU a value ({values['all']:,} values a host, "
             f"{values['osc']:,} of them per OSC); stand-ins {ms(s['standin'], hosts)} "
             f"({share:.0%} of the CPU used); {s['drops']} SYNs dropped at a full pmcd accept queue",
             f"    floor (a) on {fh:,} hosts: wall {ms(floor['wall'], fh)}, cpu {ms(floor['cpu'], fh)}, "
             f"stand-ins {ms(floor['standin'], fh)}; slowest connect {floor['max_connect']:.2f} s, "
             f"{floor['slow_connects']} of >= 0.9 s, {floor['drops']} SYNs dropped"
             + (f", {floor['failed']} failed" if floor["failed"] else ""),
             f"    = {(s['wall'] / hosts) / (floor['wall'] / fh):.2f}x floor (a)'s wall a host, "
             f"{(s['cpu'] / hosts) / (floor['cpu'] / fh):.2f}x its CPU a host"]
    return lines


def covered(bound: float, startup: float, cpu_per_host: float) -> int:
    return int(max(0.0, bound - startup) / cpu_per_host) if cpu_per_host else 0


def print_size(n: int, pro: dict, epi: dict) -> dict:
    """One size's figures; returns what the summary needs."""
    print(f"\n== {n:,} hosts")
    print(f"prolog (start-up, interpreter + imports: {pro['startup']:.2f} s CPU)")
    for line in fan_out_lines("begin snapshot", pro["fetch"], pro["floor"], n, pro["values"]):
        print(line)
    w, r = pro["write"], epi["read_floor"]
    print(stage_line("spool write", w, n))
    print(f"    of which stacking the hosts into tables (Snapshot.from_hosts, measured apart): "
          f"{pro['stack']['cpu']:.2f} s CPU; the rest, packing and writing the JSON")
    print(f"    = {w['wall'] / r['wall']:.2f}x floor (b), snapfile.read of the file ({r['wall']:.2f} s, "
          f"{r['cpu']:.2f} s CPU, peak RSS {r['rss'] / MiB:.0f} MiB); file {pro['spool_bytes'] / MiB:.1f} MiB, "
          f"incompressible {pro['incompressible'] / MiB:.1f} MiB")
    print(f"epilog (start-up {epi['startup']:.2f} s CPU)")
    print(stage_line("spool take", epi["take"], n))
    for line in fan_out_lines("end snapshot", epi["fetch"], epi["floor"], n, epi["values"]):
        print(line)
    for key, label in (("stack", "stacking"), ("build", "report.build"), ("render", "render_text"),
                       ("record", "records.store")):
        print(stage_line(label, epi[key], n))
    prolog_stages = [pro["fetch"], pro["write"]]
    epilog_stages = [epi[k] for k in ("take", "fetch", "stack", "build", "render", "record")]
    row = {"hosts": n,
           "prolog_wall": sum(s["wall"] for s in prolog_stages),
           "prolog_cpu": pro["startup"] + sum(s["cpu"] for s in prolog_stages),
           "prolog_per_host": sum(s["cpu"] for s in prolog_stages) / n,
           "prolog_rss": max(s["rss"] for s in prolog_stages),
           "epilog_wall": sum(s["wall"] for s in epilog_stages),
           "epilog_cpu": epi["startup"] + sum(s["cpu"] for s in epilog_stages),
           "epilog_per_host": sum(s["cpu"] for s in epilog_stages) / n,
           "epilog_rss": max(s["rss"] for s in epilog_stages),
           "standin_share": _share(prolog_stages + epilog_stages),
           "spool": pro["spool_bytes"], "incompressible": pro["incompressible"]}
    row["prolog_covers"] = covered(PROLOG_GOAL_S, pro["startup"], row["prolog_per_host"])
    row["epilog_covers"] = covered(EPILOG_GOAL_S, epi["startup"], row["epilog_per_host"])
    print(f"  on one core, from the reporter's CPU alone: the {PROLOG_GOAL_S:g} s prolog covers "
          f"{row['prolog_covers']:,} hosts ({ms(row['prolog_cpu'] - pro['startup'], n)}), the "
          f"{EPILOG_GOAL_S:g} s epilog {row['epilog_covers']:,} ({ms(row['epilog_cpu'] - epi['startup'], n)}); "
          f"the stand-ins took {row['standin_share']:.0%} of the CPU of both")
    return row


def print_job_view(n: int, stored: dict, startup_wall: float, v: dict) -> dict:
    """One size's figures of the job view: each node's prolog, then the first node's epilog."""
    print(f"job view, {n:,} hosts (every node's prolog stores the job's start into its own agent; nothing spooled)")
    prolog_wall = startup_wall + stored["wall_max"]
    print(f"  each node's prolog: reporter start {startup_wall:.2f} s + local pmstore {stored['wall_median'] * 1000:.0f} ms "
          f"(slowest {stored['wall_max'] * 1000:.0f} ms; the agent's CPU to keep the begin values "
          f"{stored['agent_cpu'] * 1000:.0f} ms) = {prolog_wall:.2f} s, whatever the job's size")
    print(f"  epilog (start-up {v['startup']:.2f} s CPU)")
    for line in fan_out_lines("job view fetch", v["fetch"], v["floor"], n, v["values"]):
        print(line)
    for key, label in (("stack", "stacking"), ("build", "delta + report"), ("render", "render_text"),
                       ("record", "records.store")):
        print(stage_line(label, v[key], n))
    stages = [v[k] for k in ("fetch", "stack", "build", "render", "record")]
    row = {"hosts": n, "prolog_wall": prolog_wall, "epilog_wall": sum(s["wall"] for s in stages),
           "epilog_cpu": v["startup"] + sum(s["cpu"] for s in stages),
           "epilog_per_host": sum(s["cpu"] for s in stages) / n, "epilog_rss": max(s["rss"] for s in stages),
           "read": v["hosts_in_report"]}
    row["epilog_covers"] = covered(EPILOG_GOAL_S, v["startup"], row["epilog_per_host"])
    # what the workers did spreads over the cores; the rest (start-up, the workers' start, the
    # fetch's share in this process, stacking, the report) is this process's alone
    workers, f = v.get("processes", 1), v["fetch"]
    spread = f["workers"] / n if workers > 1 else f["cpu"] / n
    serial = row["epilog_per_host"] - spread
    print(f"  fan-out over {workers} worker process(es) (the shipped [snapshot] job_view_processes, this machine's "
          f"{os.cpu_count()} cores): the workers {ms(f['workers'], n)} of CPU, this process {ms(f['cpu'] - f['workers'], n)}"
          f"; stacking and the report {ms(row['epilog_cpu'] - v['startup'] - f['cpu'], n)}, in this process")
    row["cores_covers"] = {}
    for cores in (1, 4, 8):
        per_host = serial + spread / cores
        row["cores_covers"][cores] = covered(EPILOG_GOAL_S, v["startup"], per_host)
    print(f"  from the reporter's CPU alone, the {EPILOG_GOAL_S:g} s epilog covers "
          + ", ".join(f"{c:,} hosts on {k} core{'s' if k > 1 else ''}" for k, c in row["cores_covers"].items())
          + f" ({ms(serial * n, n)} in this process + {ms(spread * n, n)} spread over the cores); "
          f"{v['hosts_in_report']:,} hosts in the report")
    return row


def print_job_view_summary(rows: list[dict]) -> None:
    print("\njob view against the goals (prolog: each node's own; epilog: the first node's; no spool)")
    print(f"  {'hosts':>6}  {'prolog wall':>11}  {'epilog wall':>11} {'cpu':>7}  {'peak RSS':>9}")
    for r in rows:
        print(f"  {r['hosts']:>6,}  {r['prolog_wall']:>9.2f} s  {r['epilog_wall']:>9.1f} s {r['epilog_cpu']:>5.1f} s  "
              f"{r['epilog_rss'] / MiB:>5.0f} MiB")
    big = rows[-1]
    four = big["cores_covers"][4]
    print(f"  largest job, {big['hosts']:,} hosts: prolog {met(big['prolog_wall'] <= PROLOG_GOAL_S)}; epilog wall "
          f"{met(big['epilog_wall'] <= EPILOG_GOAL_S)} here, reporter CPU on a node of 4 cores with the shipped config "
          f"{met(four >= big['hosts'])} (covers {four:,}; one core {big['epilog_covers']:,}); peak RSS "
          f"{met(big['epilog_rss'] <= RSS_GOAL)}; spool met (none)")


def _share(stages: list[dict]) -> float:
    standin, own = sum(s["standin"] for s in stages), sum(s["cpu"] for s in stages)
    return standin / (standin + own) if standin + own else 0.0


def met(ok: bool) -> str:
    return "met" if ok else "MISSED"


def print_summary(rows: list[dict]) -> None:
    print(f"\nagainst the goals (issue 11: 12,000 nodes; prolog <= {PROLOG_GOAL_S:g} s, epilog <= "
          f"{EPILOG_GOAL_S:g} s, peak RSS <= {RSS_GOAL >> 30} GiB, begin spool <= {SPOOL_GOAL // MiB} MiB)")
    print(f"  {'hosts':>6}  {'prolog wall':>11} {'cpu':>7}  {'epilog wall':>11} {'cpu':>7}  "
          f"{'peak RSS pro/epi':>17}  {'spool (incompressible)':>22}")
    for r in rows:
        print(f"  {r['hosts']:>6,}  {r['prolog_wall']:>9.1f} s {r['prolog_cpu']:>5.1f} s  "
              f"{r['epilog_wall']:>9.1f} s {r['epilog_cpu']:>5.1f} s  "
              f"{r['prolog_rss'] / MiB:>7.0f}/{r['epilog_rss'] / MiB:<5.0f} MiB  "
              f"{r['spool'] / MiB:>8.1f} ({r['incompressible'] / MiB:.0f}) MiB")
    print("  (wall: the stages above, start-up not included; cpu: the reporter's own, start-up included)")
    big = rows[-1]
    print(f"  largest job, {big['hosts']:,} hosts: prolog wall {met(big['prolog_wall'] <= PROLOG_GOAL_S)}, "
          f"reporter CPU {met(big['prolog_cpu'] <= PROLOG_GOAL_S)} (one core covers {big['prolog_covers']:,} hosts); "
          f"epilog wall {met(big['epilog_wall'] <= EPILOG_GOAL_S)}, reporter CPU "
          f"{met(big['epilog_cpu'] <= EPILOG_GOAL_S)} (covers {big['epilog_covers']:,}); peak RSS "
          f"{met(max(big['prolog_rss'], big['epilog_rss']) <= RSS_GOAL)}; spool {met(big['spool'] <= SPOOL_GOAL)}, "
          f"incompressible {met(big['incompressible'] <= SPOOL_GOAL)}")
    if big["hosts"] < 12000:
        print(f"  (the goal is for 12,000 hosts; this run's largest job has {big['hosts']:,})")


# ---- main -------------------------------------------------------------------------------------

def run_sizes(sizes: list[int], n_pmcds: int, parallel: int, floor_hosts: int, job_view_only: bool = False) -> None:
    from kit.privpmcd import PrivatePmcd

    from lustre_sim import SimClient

    base = work_dir()
    pmcds, trees = [], []
    try:
        for i in range(n_pmcds):
            trees.append(SimClient.create(base / f"tree{i}", version="2.15.4",
                                          filesystems=[(f"fs{f}", OSTS, 1) for f in range(FILESYSTEMS)], seed=i))
            pmcds.append(PrivatePmcd(base / f"pmcd{i}", base / f"tree{i}").start())
        specs = [p.spec for p in pmcds]
        standins = [pid for p in pmcds for pid in [p.proc.pid, *children_of(p.proc.pid)]]
        for d in ("spool", "records"):
            (base / d).mkdir(mode=0o700)
        print(f"scale: Lustre 2.15.4 clients, {FILESYSTEMS} filesystems x {OSTS} OSTs ({FILESYSTEMS * OSTS} OSCs "
              f"a client); hosts round robin on {n_pmcds} private pmcds (the real agent) under {base}; "
              f"fan-out {parallel} threads, {CONNECT_S:g} s connect, {FETCH_S:g} s fetch, no deadline; "
              f"floors on at most {floor_hosts:,} of the hosts; {os.cpu_count()} cores shared by reporter "
              f"and stand-ins")
        rows, view_rows = [], []
        startup_wall = reporter_startup()
        for n in sizes:
            job = f"scale{n}"
            common = {"hosts": n, "specs": specs, "standins": standins, "parallel": parallel,
                      "floor_hosts": min(n, floor_hosts), "spool": str(base / "spool"),
                      "records": str(base / "records"), "job": job}
            warm(specs)
            # the same job read the job view's way too: every node's prolog stores its start
            view_job = f"view{n}"
            stored = store_job_begin(pmcds, view_job)
            if not job_view_only:
                pro = run_child("prolog", common)
            for i, tree in enumerate(trees):      # the job's I/O: each node's own OSCs (jobio)
                node_io(tree, i, [f"fs{f}" for f in range(FILESYSTEMS)], seed=n)
            if not job_view_only:
                warm(specs)
                epi = run_child("epilog", common)
                rows.append(print_size(n, pro, epi))
            warm(specs)
            view = run_child("jobview", {**common, "job": view_job, "slot": job_slot(specs[0], view_job)})
            view_rows.append(print_job_view(n, stored, startup_wall, view))
            sys.stdout.flush()
        if rows:
            print_summary(rows)
        print_job_view_summary(view_rows)
    finally:
        for p in pmcds:
            p.stop()
        shutil.rmtree(base, ignore_errors=True)


def main(argv: list[str]) -> int:
    if len(argv) == 5 and argv[1] == "--child":   # one size's prolog or epilog (run_child)
        figures = {"prolog": prolog_child, "epilog": epilog_child, "jobview": job_view_child}[argv[2]](json.loads(argv[3]))
        Path(argv[4]).write_text(json.dumps(figures))
        return 0
    from lustre_jobreport import config

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)), help="job sizes, hosts (default %(default)s)")
    ap.add_argument("--pmcds", type=int, default=PMCDS, help="private pmcds the hosts map onto (default %(default)s)")
    ap.add_argument("--floor-hosts", type=int, default=FLOOR_HOSTS,
                    help="floor (a) on at most this many of a job's hosts (default %(default)s)")
    ap.add_argument("--job-view-only", action="store_true", help="only the job view's prolog and epilog")
    args = ap.parse_args(argv[1:])
    sizes = sorted(int(s) for s in args.sizes.split(","))
    run_sizes(sizes, args.pmcds, int(config.DEFAULTS["snapshot"]["parallel"]), args.floor_hosts, args.job_view_only)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
