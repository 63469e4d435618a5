"""Every layout end to end: a sim client of each Lustre version family -> pmdalustreclient in a
private pmcd -> every lustreclient metric through PMAPI, compared value by value with what the
simulator says it wrote (its state, through the same version rules the renderer uses), never
with the agent's own parsing.

Each tree also carries the edge values of notes/lustre-formats.md: a histogram count wider
than its %10lu column, sums past 2^63 (printed negative by %lld), a sumsq at 2^64-1 and an
INT64_MAX sum, a server-side *-osc-MDT* device that must be skipped, two filesystems, and on
2.16 64 KiB pages.
"""

from __future__ import annotations

import math
import posixpath
import re
import shlex

import pytest

from lustre_sim import SimClient, formats, tree
from lustre_sim.version import MD_NAME_21, profile
from kit.privpmcd import AGENT_DIR, PrivatePmcd

from kit.agentfetch import fetch_all

U64 = 1 << 64
# (version, page size): one per layout/format family of notes/lustre-formats.md
LAYOUTS = [("1.8.9", 4096), ("2.9.0", 4096), ("2.10.8", 4096), ("2.12.9", 4096),
           ("2.14.0_ddn133", 4096), ("2.15.0", 4096), ("2.15.4", 4096), ("2.16.0", 65536),
           ("2.17.0", 4096), ("2.17.55", 4096)]

# the agent's metric -> stats file counter name (pmns / src/optables.c, written out again here)
LLITE_OPS = ["open", "close", "getattr", "setattr", "statfs", "fsync", "seek", "mmap", "truncate",
             "readdir", "create", "unlink", "mkdir", "rmdir", "rename", "flock", "ioctl", "link",
             "symlink", "mknod", "setxattr", "getxattr", "listxattr", "removexattr",
             "inode_permission", "fallocate", "page_fault", "page_mkwrite", "opencount",
             "dirty_pages_hits", "dirty_pages_misses", "getxattr_hits", "alloc_inode"]
LLITE_LAT = {"read": "read", "write": "write", "openclose": "openclosetime",
             **{op: op for op in LLITE_OPS[:28]}}
RA = ["hits", "misses", "readpage_not_consecutive", "miss_inside_window", "failed_grab_cache_page",
      "failed_lock_match", "read_but_discarded", "zero_length_file", "zero_size_window",
      "readahead_to_eof", "hit_max_readahead_issue", "wrong_page_from_grab_cache_page",
      "failed_to_reach_end", "async_readahead", "failed_to_fast_read", "mmap_range_read",
      "readahead_pages", "forceread_pages"]
MDC_OPS = ["close", "create", "enqueue", "getattr", "intent_lock", "link", "rename", "setattr",
           "fsync", "read_page", "unlink", "setxattr", "getxattr", "intent_getattr_async",
           "revalidate_lock", "getstatus", "done_writing", "getattr_name", "is_subdir"]
LNET = ["msgs_alloc", "msgs_max", "errors", "send_count", "recv_count", "route_count",
        "drop_count", "send_length", "recv_length", "route_length", "drop_length"]
# lustreclient.llite.hybrid.<metric> -> llite stats line (2.15.64+ switch counts, 2.16.52+ bytes)
HYB_SWITCH = {"noswitch": "hybrid_noswitch", "readsize_switch": "hybrid_readsize_switch",
              "writesize_switch": "hybrid_writesize_switch"}
HYB_BYTES = ("hybrid_read_bytes", "hybrid_write_bytes")
# lustreclient.llite.<metric> -> the llite device file(s) it reads, first found; kind of value
LLITE_TUNABLES = {"max_read_ahead_mb": (("max_read_ahead_mb",), "mb"),
                  "max_read_ahead_per_file_mb": (("max_read_ahead_per_file_mb",), "mb"),
                  "max_read_ahead_whole_mb": (("max_read_ahead_whole_mb",), "mb"),
                  "checksums": (("checksums", "checksum_pages"), "flag"),
                  "hybrid_io": (("hybrid_io",), "flag"),
                  "hybrid_io_read_threshold_bytes": (("hybrid_io_read_threshold_bytes",), "u32"),
                  "hybrid_io_write_threshold_bytes": (("hybrid_io_write_threshold_bytes",), "u32")}
# the agent's search order over the Lustre roots (lctl's)
BASES = ("sys/fs/lustre", "sys/kernel/debug/lustre", "proc/fs/lustre")


def size_label(b: int) -> str:
    for unit, suf in ((1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")):
        if b >= unit and b % unit == 0:
            return f"{b // unit}{suf}"
    return str(b)


def cnt(stats: dict, name: str) -> int:
    c = stats.get(name)
    return c[0] % U64 if c else 0


def csum(stats: dict, name: str) -> int:
    c = stats.get(name)
    return c[3] % U64 if c else 0


def expected(c: SimClient) -> dict:
    """{metric: {instance: value}}; a metric absent from the dict must have no value."""
    st, p = c.st, profile(c.st["version"])
    ps = st["page_size"]
    v18 = p.v < (2, 0, 0)
    E: dict[str, dict] = {}

    def put(metric: str, inst: str, value) -> None:
        E.setdefault("lustreclient." + metric, {})[inst] = value

    put("version", "", p.version)
    put("pagesize", "", ps)
    w = Written(st)
    for metric, value in (("kernel", w.kernel()), ("os", w.os())):
        if value is not None:
            put(metric, "", value)
    ll_names = {n for n, _, _ in formats.llite_table(p)}
    ll_lat = {n for n, u, _ in formats.llite_table(p) if u == "lat"}
    ra_table = formats.ra_table(p)
    nbuckets = max(i for i in range(32) if ps << i <= 64 << 20) + 1

    def start(init_ns):
        if p.stats_header == "real3":
            return init_ns / 1e9
        return 0.0 if p.stats_header == "mono3" else None

    for fs, m in st["mounts"].items():
        ll = {k: v for k, v in m["llite"]["stats"].items() if k in ll_names}
        put("llite.mount_id", fs, m["sbi"])
        for d in ("read", "write"):
            put(f"llite.{d}_bytes", fs, csum(ll, f"{d}_bytes"))
            put(f"llite.{d}_calls", fs, cnt(ll, f"{d}_bytes"))
        for op in LLITE_OPS:
            put(f"llite.{op}", fs, cnt(ll, op))
        if p.llite_family == "2.14":
            for metric, name in LLITE_LAT.items():
                put(f"llite.latency.{metric}", fs, csum(ll, name) if name in ll_lat else 0)
        # hybrid I/O: where the version has the lines (or one is printed) an absent one is 0
        printed = {n for n in ll if cnt(ll, n)}
        bytes_ok = p.v >= (2, 16, 52) or bool(printed & set(HYB_BYTES))
        if bytes_ok:
            for d in ("read", "write"):
                put(f"llite.hybrid.{d}_bytes", fs, csum(ll, f"hybrid_{d}_bytes"))
                put(f"llite.hybrid.{d}_calls", fs, cnt(ll, f"hybrid_{d}_bytes"))
        if bytes_ok or p.v >= (2, 15, 64) or printed & set(HYB_SWITCH.values()):
            for metric, name in HYB_SWITCH.items():
                put(f"llite.hybrid.{metric}", fs, cnt(ll, name))
        for metric, (names, kind) in LLITE_TUNABLES.items():
            value = w.tunable(f"llite/{tree.llite_name(m)}", names, kind)
            if value is not None:
                put(f"llite.{metric}", fs, value)
        if start(m["llite"]["init_ns"]) is not None:
            put("llite.stats_start", fs, start(m["llite"]["init_ns"]))
        ra = m["llite"]["ra"]
        shown = {key: nv for key, _, _, nv in ra_table}
        for name in RA:
            v = 0
            if name in shown and name in ra:
                v = csum(ra, name) if shown[name] == 3 else cnt(ra, name)
            put(f"llite.readahead.{name}", fs, v)
        for d in ("read", "write"):
            for i in range(nbuckets):
                put(f"fs.rpc.{d}", f"{fs}:{size_label(ps << i)}",
                    sum(o["hist"][f"{d}_pages"][i] for o in m["osc"]))
        for o in m["osc"]:
            inst = tree.device_name(m, "osc", o["index"]).rsplit("-osc-", 1)[0]
            put("osc.device", inst, tree.device_name(m, "osc", o["index"]))
            s, g, imp = o["stats"], o["gauges"], o["imp"]
            for d in ("read", "write"):
                for i in range(nbuckets):
                    put(f"osc.rpc.{d}", f"{inst}:{size_label(ps << i)}", o["hist"][f"{d}_pages"][i])
                put(f"osc.{d}_bytes", inst, csum(s, f"{d}_bytes"))
                put(f"osc.{d}_rpcs", inst, cnt(s, f"{d}_bytes"))
            put("osc.req_waittime", inst, csum(s, "req_waittime"))
            put("osc.req_count", inst, cnt(s, "req_waittime"))
            put("osc.rpcs_in_flight.read", inst, g["r_in_flight"])
            put("osc.rpcs_in_flight.write", inst, g["w_in_flight"])
            put("osc.pending_pages.read", inst, g["pending_r"])
            put("osc.pending_pages.write", inst, g["pending_w"])
            if v18 or p.rif_dio_line:
                put("osc.rpcs_in_flight.dio", inst, g["dio_r_in_flight"] + g["dio_w_in_flight"])
            if p.rpc_header == "2.15.2":
                put("osc.rpc_stats_start", inst, (o["rpc_init_ns"] or 0) / 1e9)
            elif p.rpc_header == "2.15.0":
                put("osc.rpc_stats_start", inst,
                    0.0 if o["rpc_init_ns"] is None else (o["rpc_init_ns"] - st["boot_ns"]) / 1e9)
            if start(o["stats_init_ns"]) is not None:
                put("osc.stats_start", inst, start(o["stats_init_ns"]))
            put("osc.state", inst, imp["state"])
            if not v18:         # 1.8 has no import file: state comes from "state" only
                put("osc.connect_count", inst, imp["conn_attempts"])
                put("osc.reconnects", inst, imp["conn_attempts"] - 1)
                put("osc.timeouts", inst, imp.get("timeouts", 0))
                put("osc.rpcs_in_flight.all", inst, 0)
                put("osc.lockless_read_bytes", inst, o["lockless"]["read"])
                put("osc.lockless_write_bytes", inst, o["lockless"]["write"])
            put("osc.max_pages_per_rpc", inst, o["max_pages_per_rpc"])
            put("osc.max_rpcs_in_flight", inst, o["max_rpcs_in_flight"])
            put("osc.max_dirty_mb", inst, o["max_dirty_mb"])
            dev = f"osc/{tree.device_name(m, 'osc', o['index'])}"
            checksums = w.tunable(dev, ("checksums",), "flag")
            if checksums is not None:
                put("osc.checksums", inst, checksums)
        for d in m["mdc"]:
            inst = tree.device_name(m, "mdc", d["index"]).rsplit("-mdc-", 1)[0]
            put("mdc.device", inst, tree.device_name(m, "mdc", d["index"]))
            if p.has_md_stats:
                md = d["md"]
                if p.v < (2, 9, 0):
                    md = {MD_NAME_21.get(k, k): v for k, v in md.items()}
                names = set(p.md_stats_names)
                for op in MDC_OPS:
                    old = {"fsync": "sync", "read_page": "readpage"}.get(op)
                    put(f"mdc.{op}", inst, sum(cnt(md, n) for n in (op, old) if n and n in names))
                if start(d["md_init_ns"]) is not None:
                    put("mdc.md_stats_start", inst, start(d["md_init_ns"]))
            put("mdc.req_waittime", inst, csum(d["stats"], "req_waittime"))
            put("mdc.req_count", inst, cnt(d["stats"], "req_waittime"))
            if start(d["stats_init_ns"]) is not None:
                put("mdc.stats_start", inst, start(d["stats_init_ns"]))
            put("mdc.state", inst, d["imp"]["state"])
            if not v18:
                put("mdc.connect_count", inst, d["imp"]["conn_attempts"])
                put("mdc.reconnects", inst, d["imp"]["conn_attempts"] - 1)
                put("mdc.timeouts", inst, d["imp"].get("timeouts", 0))
                put("mdc.rpcs_in_flight.all", inst, 0)
            if p.has_mdc_rpc_stats:
                put("mdc.modify_rpcs", inst, sum(formats.mod_rpcs_hist(d)))
                put("mdc.rpcs_in_flight.modify", inst, 0)
                if p.mdc_rpc_dom_block:
                    put("mdc.rpcs_in_flight.read", inst, 0)
                    put("mdc.rpcs_in_flight.write", inst, 0)
                if p.rpc_header == "2.15.2":
                    put("mdc.rpc_stats_start", inst, d["stats_init_ns"] / 1e9)
                elif p.rpc_header == "2.15.0":
                    put("mdc.rpc_stats_start", inst, 0.0)
    # LNet: the one line the sim writes (its own derivation, LF §7 layout)
    for name, value in zip(LNET, formats.render_lnet_stats(st).split()):
        put(f"lnet.{name}", "", int(value))
    # the job view with no job stored (tests/report/test_jobview.py has jobs): no slot has
    # values, the controls have no last id, and there are 8 slots
    put("control.job_begin", "", "")
    put("control.job_end", "", "")
    put("job.slots", "", 8)
    # each slot's answer: one aggregate (the fetch here does not decode it: None), its job_id
    # alone while the slot holds no job (its contents: tests/report/test_jobanswer.py)
    for slot in range(8):
        put(f"job.slot{slot}.answer", "", None)
    return E


def make_client(root, version: str, page_size: int) -> SimClient:
    c = SimClient.create(root, version=version, filesystems=[("scratch", 3, 1), ("home", 2, 1)],
                         page_size=page_size, seed=4, clock=1_790_000_000, server_osp=True)
    c.run("ior", fs="scratch", tasks=2, block_size=8 << 20, transfer_size=1 << 20)
    c.run("postmark", fs="home", config="a")
    c.fault("evict", fs="home", target="OST0001", hold=True)
    # the edges of the formats, put into the state and rendered by the sim (after the last
    # run/fault: those reload the state from disk)
    m = c.st["mounts"]["scratch"]
    o = m["osc"][1]
    o["hist"]["read_pages"][2] += 12_345_678_901              # wider than %10lu
    o["stats"]["write_bytes"][3] = U64 - 4096                 # %lld prints it negative
    o["stats"]["write_bytes"][4] = U64 - 1                    # sumsq 2^64-1
    o["gauges"].update(r_in_flight=3, w_in_flight=8, dio_r_in_flight=1, dio_w_in_flight=2,
                       pending_w=256, pending_r=7)
    o["max_rpcs_in_flight"] = 16
    m["llite"]["stats"]["read_bytes"][3] += 1 << 63           # past INT64_MAX
    m["llite"]["stats"].setdefault("getattr", [1, 5, 5, 5, 25])[4] = 2**63 - 1
    c.st["mounts"]["home"]["llite"]["ra"]["readahead_pages"] = [3, 16, 1024, 1100, 5]
    c.write_tree()
    return c


class Written:
    """The files and symlinks the simulator writes for its state (tree.files_for /
    symlinks_for, not the tree on disk), and the value each new setting or host metric must
    have, decided here from that text independently of the agent's C parsers. The settings
    and host files come and go with the simulator's version (they are being added to it in a
    parallel change): a file it does not write means no value."""

    def __init__(self, st: dict):
        self.files = tree.files_for(st)
        self.links = tree.symlinks_for(st)

    def lustre(self, rel: str) -> str | None:
        """<base>/<rel> from the first base that has it."""
        for b in BASES:
            if f"{b}/{rel}" in self.files:
                return self.files[f"{b}/{rel}"]
        return None

    @staticmethod
    def number(text: str | None, kind: str) -> int | None:
        m = re.fullmatch(r"[ \t]*(\d+)(\.\d{1,9})?[ \t]*\n?", text or "")
        if m is None or (m.group(2) and kind != "mb"):
            return None
        v = int(m.group(1))
        return v if v <= (1 if kind == "flag" else 2**32 - 1) else None

    def tunable(self, dev_rel: str, names: tuple[str, ...], kind: str) -> int | None:
        for name in names:
            text = self.lustre(f"{dev_rel}/{name}")
            if text is not None:
                return self.number(text, kind)
        return None

    def kernel(self) -> str | None:
        text = self.files.get("proc/sys/kernel/osrelease")
        lines = (text or "").split("\n")
        first = lines[0].strip()
        return first if first and all(not x.strip() for x in lines[1:]) else None

    def os(self) -> str | None:
        """os-release(5): etc/os-release (a link followed only while it stays in the tree),
        else usr/lib/os-release; PRETTY_NAME, else NAME VERSION_ID, then the image keys."""
        text = self.files.get("etc/os-release")
        if text is None and "etc/os-release" in self.links:
            target = posixpath.normpath(posixpath.join("etc", self.links["etc/os-release"]))
            if not target.startswith(("/", "..")):
                text = self.files.get(target)
        if text is None:
            text = self.files.get("usr/lib/os-release")
        if text is None:
            return None
        keys, n = {}, 0
        for line in text.splitlines():
            m = re.fullmatch(r"\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)", line)
            if not m or line.lstrip().startswith("#"):
                continue
            try:
                words = shlex.split(m.group(2), comments=True)
            except ValueError:
                continue
            n += 1
            keys[m.group(1)] = words[0] if words else ""
        if not n:
            return None
        out = keys.get("PRETTY_NAME") or " ".join(
            x for x in (keys.get("NAME") or "Linux", keys.get("VERSION_ID")) if x)
        image = " ".join(x for x in (keys.get("IMAGE_ID"), keys.get("IMAGE_VERSION")) if x)
        return out + (f" ({image})" if image else "")


def close(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=1e-6)
    return a == b


@pytest.mark.parametrize("version,page_size", LAYOUTS, ids=[v for v, _ in LAYOUTS])
def test_every_metric_of_every_layout(tmp_path, version, page_size):
    c = make_client(tmp_path / "tree", version, page_size)
    want = expected(c)
    with PrivatePmcd(tmp_path / "pmcd", c.root, page_size=page_size) as pmcd:
        got, descs = fetch_all(pmcd.spec)
    got.pop("lustreclient.agent.files_read", None)
    bad = []
    for metric in sorted(set(descs)):
        if metric.startswith("lustreclient.agent."):
            continue
        w, g = want.get(metric), got.get(metric)
        if w is None or g is None:
            if w != g:
                bad.append(f"{metric}: want {w!r}, got {g!r}")
            continue
        if set(w) != set(g):
            bad.append(f"{metric}: instances want {sorted(w)}, got {sorted(g)}")
            continue
        for inst in w:
            if not close(w[inst], g[inst]):
                bad.append(f"{metric}[{inst}]: want {w[inst]!r}, got {g[inst]!r}")
    assert not bad, f"{version}: {len(bad)} differences:\n" + "\n".join(bad[:40])
    # the server-side OSP device was there and was skipped
    assert "scratch-OST0000" in got["lustreclient.osc.state"]
    assert not [i for i in got["lustreclient.osc.state"] if "MDT" in i]
    assert got["lustreclient.agent.parse_failures"] == {"": 0}


def test_reader_threads_give_the_same_values(tmp_path):
    """The per-OSC files are read on a pool of threads (-t): 1 and 4 threads must agree, and
    agree with the simulator, on a client with enough OSCs to use the pool."""
    c = SimClient.create(tmp_path / "tree", version="2.15.4", filesystems=[("big", 40, 2), ("small", 3, 1)],
                         seed=6, clock=1_790_000_000)
    c.run("ior", fs="big", tasks=4, block_size=4 << 20, transfer_size=1 << 20, stripe_count=-1)
    want = expected(c)
    got = {}
    for t in ("1", "4"):
        with PrivatePmcd(tmp_path / f"pmcd{t}", c.root, extra_agent_args=("-t", t)) as pmcd:
            vals, _ = fetch_all(pmcd.spec)
            vals = {k: v for k, v in vals.items() if not k.startswith("lustreclient.agent.")}
            got[t] = {k: v for k, v in vals.items() if not k.endswith("_start")}
    assert got["1"] == got["4"]
    for metric in ("lustreclient.osc.read_bytes", "lustreclient.osc.rpc.write",
                   "lustreclient.fs.rpc.write", "lustreclient.osc.state"):
        assert got["4"][metric] == want[metric], metric


ASAN_AGENT = AGENT_DIR / "tests/out/asan/pmdalustreclient"


@pytest.mark.skipif(not ASAN_AGENT.exists(), reason="no sanitizer build (make -C pmda-lustre test-asan)")
def test_reader_threads_under_asan(tmp_path, monkeypatch):
    """The ASan/UBSan build of the agent, 4 reader threads, a client with 60 OSCs, a few
    fetches while the simulator rewrites the tree: no sanitizer report, the same values."""
    # pmcd hands its environment to the agent; libpcp_pmda's own lifetime allocations are not ours
    monkeypatch.setenv("LSAN_OPTIONS", f"suppressions={AGENT_DIR / 'tests/lsan.supp'}")
    c = SimClient.create(tmp_path / "tree", version="2.17.0", filesystems=[("big", 60, 1)], seed=8,
                         clock=1_790_000_000)
    with PrivatePmcd(tmp_path / "pmcd", c.root, agent=ASAN_AGENT, extra_agent_args=("-t", "4")) as pmcd:
        for _ in range(3):
            c.run("ior", fs="big", tasks=2, block_size=2 << 20, transfer_size=1 << 20, stripe_count=-1)
            got, _ = fetch_all(pmcd.spec)
        want = expected(c)
    for metric in ("lustreclient.osc.write_bytes", "lustreclient.fs.rpc.write", "lustreclient.osc.rpc.write"):
        assert got[metric] == want[metric], metric
    log = (tmp_path / "pmcd" / "lustreclient.log").read_text()
    assert "Sanitizer" not in log and "runtime error" not in log, log[-3000:]
