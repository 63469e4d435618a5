#!/usr/bin/env python3
"""pmdalustreclient against its floor and its peer, measured in one run (DESIGN §8, ISSUE 4).

The client: a simulated Lustre 2.15 client with 4 filesystems x 512 OSTs (2,048 OSCs), whose
tree holds ~20,500 files; a full fetch of every lustreclient metric (188) reads ~16,400 of them.

1. Full fetch of all lustreclient metrics, timed from a PMAPI client (pmFetch, values
   discarded), vs the floor: bench/rawread.c opening and reading the same files once (the
   list comes from the agent's own -D appl0 trace of one full fetch). Goal <= 1.5x.
2. CPU of the agent while all metrics are sampled at 1 Hz for 60 s, vs rawread's CPU reading
   the same files once a second (both from the kernel's accounting). Goal <= 1.2x; the
   absolute share of a core is printed beside TACC Stats' published 3 % at 1 Hz. The tree is
   still between fetches, so the agent parses no OSC file twice (an idle client's OSCs mostly
   read the same from one second to the next); the worst case, every file changed at every
   fetch, is measured too (agent -D appl2, which parses as if all had changed). Then the
   pmrep/pmie view (per-fs RPC histograms and llite ops) at 1 Hz for 30 s, checked to read no
   per-OSC stats file.
3. llite metrics vs PCP's shipped Perl pmdalustre (domain 134) on the same llite stats files,
   both in private pmcds: fetch time ratio and a value-by-value table against what the
   simulator wrote, on the 2.15 tree (where PCP 6.0.3's pmdalustre misreads the 2.14+ lines)
   and on a 2.12 tree (where it reads them).
Runs in about 3 minutes; the system pmcd is not touched.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:0] = [str(REPO / "tests"), str(REPO / "sim")]

from lustre_sim import SimClient  # noqa: E402
from kit.privpmcd import Pmcd, PrivatePmcd, children_of, cpu_seconds  # noqa: E402
from figures import against_floor  # noqa: E402

from pcp import pmapi  # noqa: E402  (Debian python3-pcp; the venv sees system packages)
import cpmapi as c_api  # noqa: E402

NFS, NOST = 4, 512
SAMPLE_S = int(os.environ.get("BENCH_SAMPLE_S", "60"))
VIEW_S = int(os.environ.get("BENCH_VIEW_S", "30"))
PERL_PMDA = Path("/var/lib/pcp/pmdas/lustre/pmdalustre.pl")
TACC_PCT = 3.0
FETCH_GOAL, CPU_GOAL = 1.5, 1.2    # a full fetch's wall, and the CPU at 1 Hz, against the raw read's


def say(*a):
    print(*a, flush=True)


def agent_pid(pmcd: PrivatePmcd) -> int:
    return children_of(pmcd.proc.pid)[0]


class Client:
    """One PMAPI context, names looked up once."""

    def __init__(self, spec: str, names: list[str] | None = None, root: str = "lustreclient"):
        self.ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, spec)
        if names is None:
            names = []
            self.ctx.pmTraversePMNS(root, names.append)
        self.names = names
        self.pmids = self.ctx.pmLookupName(names)
        self.descs = self.ctx.pmLookupDescs(self.pmids)

    def fetch_time(self) -> float:
        t = time.perf_counter()
        r = self.ctx.pmFetch(self.pmids)
        dt = time.perf_counter() - t
        self.ctx.pmFreeResult(r)
        return dt

    def values(self) -> dict:
        r = self.ctx.pmFetch(self.pmids)
        out = {}
        try:
            res = r.contents
            for i, (name, d) in enumerate(zip(self.names, self.descs)):
                dd = d.contents
                n = res.get_numval(i)
                if n <= 0:
                    continue
                names = {}
                if dd.indom != c_api.PM_INDOM_NULL:
                    ids, labels = self.ctx.pmGetInDom(d)
                    names = dict(zip(ids or [], labels or []))
                for j in range(n):
                    atom = self.ctx.pmExtractValue(res.get_valfmt(i), res.get_vlist(i, j), dd.type, dd.type)
                    v = atom.dref(dd.type)
                    out.setdefault(name, {})[names.get(res.get_inst(i, j), "")] = v
        finally:
            self.ctx.pmFreeResult(r)
        return out


def build_rawread(work: Path) -> Path:
    exe = work / "rawread"
    subprocess.run(["gcc", "-O2", "-o", str(exe), str(HERE / "rawread.c")], check=True)
    return exe


def floor_cpu(out: str) -> float:
    return int(re.search(r"cpu_us (\d+)", out).group(1)) / 1e6


def rawread(exe: Path, listfile: Path, passes: int, interval_ms: int = 0):
    out = subprocess.run([str(exe), str(listfile), str(passes), str(interval_ms)],
                         capture_output=True, text=True, check=True).stdout
    times = [int(x.split()[2]) / 1e6 for x in out.splitlines() if x.startswith("pass ")]
    return times, floor_cpu(out)


def traced_files(tree: Path, work: Path, names: list[str] | None) -> list[Path]:
    """The files one fetch of names reads, from the agent's -D appl0 trace."""
    with PrivatePmcd(work, tree, extra_agent_args=("-D", "appl0")) as pmcd:
        cl = Client(pmcd.spec, names)
        log = work / "lustreclient.log"
        cl.fetch_time()                 # first fetch: instance domains, base hints
        before = log.stat().st_size
        cl.fetch_time()
        time.sleep(0.3)
        with open(log) as f:
            f.seek(before)
            text = f.read()
    return [tree / p for p in re.findall(r" read \S+ -> \d+ \[(\S+)\]", text)]


def sample(cl: Client, seconds: int, pid: int) -> float:
    """Fetch every second for seconds; the agent's CPU seconds meanwhile."""
    c0 = cpu_seconds(pid)
    start = time.monotonic()
    for k in range(seconds):
        cl.fetch_time()
        wait = start + k + 1 - time.monotonic()
        if wait > 0:
            time.sleep(wait)
    return cpu_seconds(pid) - c0


def sample_with_floor(cl: Client, pid: int, exe: Path, listfile: Path, seconds: int) -> tuple[float, float]:
    """CPU seconds of the agent sampled at 1 Hz and of rawread reading listfile once a second
    alongside, over the same seconds."""
    floor = subprocess.Popen([str(exe), str(listfile), str(seconds), "1000"],
                             stdout=subprocess.PIPE, text=True)
    agent = sample(cl, seconds, pid)
    return agent, floor_cpu(floor.communicate()[0])


# ---------------------------------------------------------------------------------------------
# PCP's Perl pmdalustre in a private pmcd of its own

class PerlPmcd(Pmcd):
    """PCP's own Perl pmdalustre (domain 134) on the same llite stats files, in a private pmcd."""

    probe_metric = "lustre.llite.volume"

    def __init__(self, work: Path, llite: Path, lnet: Path):
        super().__init__(work)
        self.llite, self.lnet = llite, lnet

    def prepare(self) -> tuple[str, str]:
        w = self.workdir
        # pmcd passes no environment to its agents: a wrapper sets the paths
        wrapper = w / "pmdalustre.sh"
        # ... and PCP_VAR_DIR: it saves its instance cache there (config/pmda/134.0),
        # which must not land in the host's /var/lib/pcp
        var = w / "var"
        (var / "config" / "pmda").mkdir(parents=True, exist_ok=True)
        wrapper.write_text("#!/bin/sh\n"
                           f"LUSTRE_LLITE_PATH={self.llite}/ LUSTRE_LNET_PATH={self.lnet}/\n"
                           f"PCP_VAR_DIR={var}\n"
                           "export LUSTRE_LLITE_PATH LUSTRE_LNET_PATH PCP_VAR_DIR\n"
                           f"exec perl {PERL_PMDA} \"$@\"\n")
        wrapper.chmod(0o755)
        return f"lustre\t134\tpipe\tbinary\t{wrapper}", "root {\n\tlustre\t134:*:*\n}\n"

    def start(self, timeout: float = 20.0) -> "PerlPmcd":
        return super().start(timeout)


def have_perl_pmda() -> bool:
    ok = subprocess.run(["perl", "-MPCP::PMDA", "-e", "1"], capture_output=True).returncode == 0
    if not ok and os.geteuid() == 0:
        say("  (installing libpcp-pmda-perl for PCP's Perl pmdalustre)")
        subprocess.run([str(REPO / "scripts/install-deps.sh"), "libpcp-pmda-perl"],
                       stdout=subprocess.DEVNULL)
        ok = subprocess.run(["perl", "-MPCP::PMDA", "-e", "1"], capture_output=True).returncode == 0
    return ok and PERL_PMDA.exists()


OPS = ["open", "close", "getattr", "setattr", "statfs", "fsync", "seek", "mmap", "truncate",
       "readdir", "create", "unlink", "mkdir", "rmdir", "rename", "flock", "ioctl", "link",
       "symlink", "mknod", "setxattr", "getxattr", "listxattr", "removexattr", "inode_permission",
       "dirty_pages_hits", "dirty_pages_misses", "getxattr_hits", "alloc_inode"]
PAIRS = ([("read_bytes", "read_bytes.total", "read_bytes", 3),
          ("read_calls", "read_bytes.count", "read_bytes", 0),
          ("write_bytes", "write_bytes.total", "write_bytes", 3),
          ("write_calls", "write_bytes.count", "write_bytes", 0)]
         + [(op, f"{op}.count", op, 0) for op in OPS])


def compare_with_perl(tree: Path, client: SimClient, work: Path, llite: Path, lnet: Path,
                      label: str, timing: bool):
    from lustre_sim import formats
    from lustre_sim.version import profile
    p = profile(client.version)
    shown = {n for n, _, _ in formats.llite_table(p)}
    with PrivatePmcd(work / "ours", tree) as ours, PerlPmcd(work / "perl", llite, lnet) as perl:   # __enter__ starts it
        try:
            a = Client(ours.spec, root="lustreclient.llite")
            b = Client(perl.spec, root="lustre.llite")
            va, vb = a.values(), b.values()
            if timing:
                for _ in range(3):
                    a.fetch_time(), b.fetch_time()
                ta = statistics.median(a.fetch_time() for _ in range(30))
                tb = statistics.median(b.fetch_time() for _ in range(30))
        finally:
            perl.stop()
    rows, agree_ours, agree_perl, total = [], 0, 0, 0
    for fs, m in client.st["mounts"].items():
        ll = m["llite"]["stats"]
        for ours_m, perl_m, name, k in PAIRS:
            c = ll.get(name) if name in shown else None
            truth = (c[k] % (1 << 64) if c else 0)
            x = va.get(f"lustreclient.llite.{ours_m}", {}).get(fs)
            y = vb.get(f"lustre.llite.{perl_m}", {}).get(fs)
            total += 1
            agree_ours += x == truth
            agree_perl += y == truth
            if fs == next(iter(client.st["mounts"])) and (truth or x or y):
                rows.append((ours_m, truth, x, y))
    say(f"  {label}: value by value against the simulator's counters, {total} values "
        f"({len(client.st['mounts'])} filesystems):")
    say(f"    pmdalustreclient right: {agree_ours}/{total}    Perl pmdalustre right: {agree_perl}/{total}")
    say(f"    {'llite counter (first fs)':<26}{'simulator':>16}{'pmdalustreclient':>18}{'pmdalustre.pl':>16}")
    for name, truth, x, y in rows:
        mark = "" if y == truth else "   <- Perl wrong"
        say(f"    {name:<26}{truth:>16}{x if x is not None else '-':>18}{y if y is not None else '-':>16}{mark}")
    if timing:
        return ta, tb
    return None


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="bench-agent-"))
    try:
        return run(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(work: Path) -> int:
    say(f"building a simulated Lustre 2.15.4 client: {NFS} filesystems x {NOST} OSTs ...")
    t0 = time.monotonic()
    tree = work / "tree"
    client = SimClient.create(tree, version="2.15.4",
                              filesystems=[(f"fs{i}", NOST, 1) for i in range(NFS)], seed=1)
    client.run("ior", fs="fs0", tasks=8, block_size=64 << 20, transfer_size=1 << 20, stripe_count=-1)
    nfiles = sum(1 for p in tree.rglob("*") if p.is_file() and ".lustre-sim" not in p.parts)
    say(f"  {nfiles} files in the tree ({time.monotonic() - t0:.1f} s)")
    exe = build_rawread(work)

    # the files a full fetch reads, and those of the pmrep/pmie view
    allfiles = traced_files(tree, work / "trace-all", None)
    view_names = (["lustreclient.fs.rpc.read", "lustreclient.fs.rpc.write",
                   "lustreclient.llite.read_bytes", "lustreclient.llite.write_bytes",
                   "lustreclient.llite.read_calls", "lustreclient.llite.write_calls"]
                  + [f"lustreclient.llite.{op}" for op in OPS])
    viewfiles = traced_files(tree, work / "trace-view", view_names)
    osc_stats_read = [p for p in viewfiles if "/osc/" in str(p) and p.name != "rpc_stats"]
    (work / "all.list").write_text("".join(f"{p}\n" for p in allfiles))
    (work / "view.list").write_text("".join(f"{p}\n" for p in viewfiles))
    say(f"  a full fetch reads {len(allfiles)} files ({len(set(allfiles))} distinct); the view "
        f"reads {len(viewfiles)} (osc rpc_stats and llite stats), per-OSC stats files read by the "
        f"view: {len(osc_stats_read)}")

    results = {}
    with PrivatePmcd(work / "pmcd", tree) as pmcd:
        pid = agent_pid(pmcd)
        cl = Client(pmcd.spec)
        nvals = sum(max(0, n) for n in [len(v) for v in cl.values().values()])
        say(f"  {len(cl.names)} metrics, {nvals} values per full fetch")
        for _ in range(3):
            cl.fetch_time()
        # 1. full fetch vs floor, interleaved in rounds so both see the same machine
        fetches, floors = [], []
        for _ in range(5):
            fetches += [cl.fetch_time() for _ in range(6)]
            floors += rawread(exe, work / "all.list", 6)[0]
        f_med, r_med = statistics.median(fetches), statistics.median(floors)
        results["fetch"] = (f_med, r_med)
        say("")
        say(f"[1] full fetch of all lustreclient metrics (PMAPI pmFetch, median of {len(fetches)}):")
        say("    " + against_floor("pmdalustreclient", f"{f_med * 1e3:.1f} ms", f_med / r_med,
                                  f"its floor, the raw read ({r_med * 1e3:.1f} ms)", FETCH_GOAL))

        # 2. CPU at 1 Hz, all metrics; the floor reads the same files once a second alongside
        say("")
        say(f"[2] CPU while every metric is sampled at 1 Hz for {SAMPLE_S} s ...")
        agent_cpu, floor_cpu = sample_with_floor(cl, pid, exe, work / "all.list", SAMPLE_S)
        pct = 100 * agent_cpu / SAMPLE_S
        say("    " + against_floor("pmdalustreclient", f"{agent_cpu:.2f} s CPU = {pct:.1f} % of a core",
                                  agent_cpu / floor_cpu, f"its floor, the raw read ({floor_cpu:.2f} s = "
                                  f"{100 * floor_cpu / SAMPLE_S:.1f} %)", CPU_GOAL,
                                  f" (TACC Stats: {TACC_PCT:.0f} % at 1 Hz)"))
        results["cpu"] = (agent_cpu, floor_cpu)

        view = Client(pmcd.spec, view_names)
        say(f"    the pmrep/pmie view (fs.rpc.* and llite ops, {len(view_names)} metrics) at 1 Hz "
            f"for {VIEW_S} s ...")
        vcpu, vfloor = sample_with_floor(view, pid, exe, work / "view.list", VIEW_S)
        say("    " + against_floor("view: pmdalustreclient", f"{100 * vcpu / VIEW_S:.2f} % of a core",
                                  vcpu / vfloor, f"its floor, the raw read of its files "
                                  f"({100 * vfloor / VIEW_S:.2f} %)", CPU_GOAL,
                                  f"; per-OSC stats files read: {len(osc_stats_read)}"))
        results["view"] = (vcpu, vfloor)

    # 2b. the worst case for the agent: every OSC file changed since the last fetch, so none
    # is spared its parse (-D appl2: the agent parses as if all had changed)
    with PrivatePmcd(work / "pmcd-churn", tree, extra_agent_args=("-D", "appl2")) as pmcd:
        cl = Client(pmcd.spec)
        for _ in range(3):
            cl.fetch_time()
        say(f"    every OSC file changed at each fetch (agent -D appl2) at 1 Hz for {VIEW_S} s ...")
        ccpu, cfloor = sample_with_floor(cl, agent_pid(pmcd), exe, work / "all.list", VIEW_S)
        say("    " + against_floor("all changed: pmdalustreclient", f"{100 * ccpu / VIEW_S:.1f} % of a core",
                                  ccpu / cfloor, f"its floor, the raw read ({100 * cfloor / VIEW_S:.1f} %)"))
        results["churn"] = (ccpu, cfloor)

    # 1b. the same full fetch with two reader threads (-t 2)
    with PrivatePmcd(work / "pmcd-t2", tree, extra_agent_args=("-t", "2")) as pmcd:
        cl = Client(pmcd.spec)
        for _ in range(3):
            cl.fetch_time()
        fetches, floors = [], []
        for _ in range(4):
            fetches += [cl.fetch_time() for _ in range(6)]
            floors += rawread(exe, work / "all.list", 6)[0]
        f2, r2 = statistics.median(fetches), statistics.median(floors)
        results["fetch_t2"] = (f2, r2)
    say("")
    say("[1b] " + against_floor("the same with 2 reader threads (-t 2)", f"{f2 * 1e3:.1f} ms", f2 / r2,
                                f"its floor, the raw read ({r2 * 1e3:.1f} ms)", FETCH_GOAL))

    # 3. the Perl pmdalustre on the same llite files
    say("")
    say("[3] llite metrics vs PCP's Perl pmdalustre (same llite stats files, private pmcds):")
    if not have_perl_pmda():
        say("    skipped: PCP::PMDA (Debian libpcp-pmda-perl) is not installed")
    else:
        llite = tree / "sys/kernel/debug/lustre/llite"
        lnet = tree / "sys/kernel/debug/lnet"
        ta, tb = compare_with_perl(tree, client, work / "perl215", llite, lnet,
                                   "Lustre 2.15.4 (4 filesystems)", timing=True)
        say("    " + against_floor("fetch of all llite metrics: pmdalustreclient", f"{ta * 1e3:.2f} ms", ta / tb,
                                  f"its peer, pmdalustre.pl ({tb * 1e3:.2f} ms)"))
        results["perl"] = (ta, tb)
        t212 = work / "tree212"
        c212 = SimClient.create(t212, version="2.12.9", filesystems=[("scratch", 8, 1), ("home", 4, 1)],
                                seed=3)
        c212.run("overflow", fs="scratch")
        compare_with_perl(t212, c212, work / "perl212", t212 / "sys/kernel/debug/lustre/llite",
                          t212 / "sys/kernel/debug/lnet", "Lustre 2.12.9 ([regs] lines)", timing=False)

    say("")
    say("summary (ratios measured in this run):")
    f, r = results["fetch"]
    say("  " + against_floor("full fetch", f"{f * 1e3:.1f} ms", f / r, f"the raw read ({r * 1e3:.1f} ms)",
                             FETCH_GOAL))
    f, r = results["fetch_t2"]
    say("  " + against_floor("full fetch, -t 2", f"{f * 1e3:.1f} ms", f / r, f"the raw read ({r * 1e3:.1f} ms)",
                             FETCH_GOAL))
    a, b = results["cpu"]
    say("  " + against_floor("CPU at 1 Hz", f"{100 * a / SAMPLE_S:.1f} % of a core", a / b,
                             f"the raw read ({100 * b / SAMPLE_S:.1f} %)", CPU_GOAL, "; TACC Stats 3 %"))
    a, b = results["churn"]
    say("  " + against_floor("CPU at 1 Hz, every file changed", f"{100 * a / VIEW_S:.1f} % of a core", a / b,
                             f"the raw read ({100 * b / VIEW_S:.1f} %)"))
    a, b = results["view"]
    say("  " + against_floor("view at 1 Hz", f"{100 * a / VIEW_S:.2f} % of a core", a / b,
                             f"the raw read of its files ({100 * b / VIEW_S:.2f} %)", CPU_GOAL))
    if "perl" in results:
        a, b = results["perl"]
        say("  " + against_floor("llite fetch", f"{a * 1e3:.2f} ms", a / b, f"Perl pmdalustre's ({b * 1e3:.2f} ms)"))
    return 1 if osc_stats_read else 0


if __name__ == "__main__":
    sys.exit(main())
