"""Byte-faithful renderers for the client stats files, per Lustre version.

Pure functions: state dicts + times in, file text out. Format strings follow
notes/lustre-formats.md (LF) and the Lustre source they were copied from:
  lprocfs_stats_seq_show / lprocfs_stats_header  (lustre/obdclass/lprocfs_status.c)
  osc_rpc_stats_seq_show / osc_stats_seq_show     (lustre/osc/lproc_osc.c)
  lprocfs_import_seq_show / lprocfs_state_seq_show (lprocfs_status.c)
  llite_opcode_table                              (lustre/llite/lproc_llite.c)
  ll_rpc_opcode_table / ll_eopcode_table          (lustre/ptlrpc/lproc_ptlrpc.c)
Counter values are kept as [count, min, max, sum, sumsq] lists (see counters.py).
"""

from __future__ import annotations

from .version import MD_NAME_21, Profile

NS = 1_000_000_000
OBD_HIST_MAX = 32
U64 = 1 << 64

# ----------------------------------------------------------------------------------------------
# Counter tables: (name, units-key, nvals). units-key is resolved per version by _units();
# nvals: 0 = count only, 3 = min max sum, 4 = min max sum sumsq.

# llite 1.8 / 2.0-2.3 (LF §2b first bullet)
LLITE_18 = [
    ("dirty_pages_hits", "regs", 0), ("dirty_pages_misses", "regs", 0),
    ("writeback_from_writepage", "regs", 0), ("writeback_from_pressure", "regs", 0),
    ("writeback_ok_pages", "regs", 0), ("writeback_failed_pages", "regs", 0),
    ("read_bytes", "bytes", 3), ("write_bytes", "bytes", 3),
    ("brw_read", "pages", 3), ("brw_write", "pages", 3),
    ("ioctl", "regs", 0), ("open", "regs", 0), ("close", "regs", 0), ("mmap", "regs", 0),
    ("seek", "regs", 0), ("fsync", "regs", 0), ("setattr", "regs", 0), ("truncate", "regs", 0),
    ("lockless_truncate", "regs", 0), ("flock", "regs", 0), ("getattr", "regs", 0),
    ("statfs", "regs", 0), ("alloc_inode", "regs", 0), ("setxattr", "regs", 0),
    ("getxattr", "regs", 0), ("listxattr", "regs", 0), ("removexattr", "regs", 0),
    ("inode_permission", "regs", 0), ("direct_read", "pages", 3), ("direct_write", "pages", 3),
    ("lockless_read_bytes", "bytes", 3), ("lockless_write_bytes", "bytes", 3),
]


def llite_24(v: tuple[int, int, int]):
    """2.4-2.13 (LF §2b second bullet; order of llite_opcode_table in 2.12)."""
    t = [("dirty_pages_hits", "regs", 0), ("dirty_pages_misses", "regs", 0),
         ("read_bytes", "bytes", 3), ("write_bytes", "bytes", 3),
         ("brw_read", "pages", 3), ("brw_write", "pages", 3)]
    if v < (2, 8, 0):
        t += [("osc_read", "bytes", 3), ("osc_write", "bytes", 3)]
    t += [("ioctl", "regs", 0), ("open", "regs", 0), ("close", "regs", 0), ("mmap", "regs", 0)]
    if v >= (2, 9, 0):
        t += [("page_fault", "regs", 0), ("page_mkwrite", "regs", 0)]
    t += [(n, "regs", 0) for n in ("seek", "fsync", "readdir", "setattr", "truncate", "flock",
                                   "getattr", "create", "link", "unlink", "symlink", "mkdir",
                                   "rmdir", "mknod", "rename", "statfs", "alloc_inode",
                                   "setxattr", "getxattr")]
    if v >= (2, 5, 0):
        t.append(("getxattr_hits", "regs", 0))
    t += [(n, "regs", 0) for n in ("listxattr", "removexattr", "inode_permission")]
    return t


def llite_214(v: tuple[int, int, int]):
    """2.14+ (LU-12631): latency counters; 2.15 adds opencount/openclosetime."""
    L = "lat"
    t = [("read_bytes", "bytes", 4), ("write_bytes", "bytes", 4)]
    if v >= (2, 16, 52):          # LU-18432: LPROCFS_TYPE_BYTES_FULL, right after write_bytes
        t += [("hybrid_read_bytes", "bytes", 4), ("hybrid_write_bytes", "bytes", 4)]
    t += [("read", L, 4), ("write", L, 4), ("ioctl", "reqs", 0)]
    t += [(n, L, 4) for n in ("open", "close", "mmap", "page_fault", "page_mkwrite", "seek",
                              "fsync", "readdir")]
    if v >= (2, 15, 0):
        t += [("opencount", "reqs", 4), ("openclosetime", L, 4)]
    t += [(n, L, 4) for n in ("setattr", "truncate", "flock", "getattr", "fallocate", "create",
                              "link", "unlink", "symlink", "mkdir", "rmdir", "mknod", "rename",
                              "statfs", "setxattr", "getxattr")]
    t.append(("getxattr_hits", "reqs", 0))
    t += [(n, L, 4) for n in ("listxattr", "removexattr", "inode_permission")]
    # (the PCC counters pcc_attach ... come here; the sim has no PCC, so they never print)
    if v >= (2, 15, 64):          # LU-13802: LPROCFS_TYPE_REQS, count only, at the table's end
        t += [("hybrid_noswitch", "reqs", 0), ("hybrid_writesize_switch", "reqs", 0),
              ("hybrid_readsize_switch", "reqs", 0)]
    return t


def llite_table(p: Profile):
    fam = p.llite_family
    if fam == "1.8":
        return LLITE_18
    if fam == "2.4":
        return llite_24(p.v)
    return llite_214(p.v)


# ptlrpc per-import stats (osc.*.stats, mdc.*.stats), LF §2a. All have min max sum sumsq.
PTLRPC_HEAD = [("req_waittime", "usec"), ("req_qdepth", "reqs"), ("req_active", "reqs"),
               ("req_timeout", "sec"), ("reqbuf_avail", "bufs")]
PTLRPC_EXTRA = [("ldlm_glimpse_enqueue", "reqs"), ("ldlm_plain_enqueue", "reqs"),
                ("ldlm_extent_enqueue", "reqs"), ("ldlm_flock_enqueue", "reqs"),
                ("ldlm_ibits_enqueue", "reqs"), ("mds_reint_setattr", "reqs"),
                ("mds_reint_create", "reqs"), ("mds_reint_link", "reqs"),
                ("mds_reint_unlink", "reqs"), ("mds_reint_rename", "reqs"),
                ("mds_reint_open", "reqs"), ("mds_reint_setxattr", "reqs"),
                ("read_bytes", "bytes"), ("write_bytes", "bytes")]
# Opcodes in ll_rpc_opcode_table order (only the ones a client sends).
PTLRPC_OPCODES = ["ost_reply", "ost_getattr", "ost_setattr", "ost_read", "ost_write", "ost_create",
                  "ost_destroy", "ost_get_info", "ost_connect", "ost_disconnect", "ost_punch",
                  "ost_open", "ost_close", "ost_statfs", "ost_sync", "ost_set_info",
                  "ost_quotacheck", "ost_quotactl", "ost_quota_adjust_qunit", "ost_ladvise",
                  "ost_fallocate", "ost_seek",
                  "mds_getattr", "mds_getattr_lock", "mds_close", "mds_reint", "mds_readpage",
                  "mds_connect", "mds_disconnect", "mds_get_root", "mds_statfs", "mds_pin",
                  "mds_unpin", "mds_sync", "mds_done_writing", "mds_set_info", "mds_quotacheck",
                  "mds_quotactl", "mds_getxattr", "mds_setxattr",
                  "ldlm_enqueue", "ldlm_convert", "ldlm_cancel", "ldlm_bl_callback",
                  "ldlm_cp_callback", "ldlm_gl_callback", "ldlm_set_info", "obd_ping",
                  "llog_cancel", "quota_acquire", "quota_release", "seq_query", "fld_query"]


def ptlrpc_table(p: Profile):
    t = [(n, u, 4) for n, u in PTLRPC_HEAD]
    t += [(n, u, 4) for n, u in PTLRPC_EXTRA]
    for n in PTLRPC_OPCODES:
        if n == "mds_get_root":
            n = p.mds_root_opname
        t.append((n, "usec", 4))
    return t


RA_NAMES_OLD = {"hits": "hits", "misses": "misses",
                "readpage_not_consecutive": "readpage not consecutive",
                "miss_inside_window": "miss inside window",
                "failed_grab_cache_page": "failed grab_cache_page",
                "failed_lock_match": "failed lock match", "read_but_discarded": "read but discarded",
                "zero_length_file": "zero length file", "zero_size_window": "zero size window",
                "readahead_to_eof": "read-ahead to EOF", "hit_max_readahead_issue": "hit max r-a issue",
                "wrong_page_from_grab_cache_page": "wrong page from grab_cache_page",
                "failed_to_reach_end": "failed to reach end", "async_readahead": "async readahead",
                "failed_to_fast_read": "failed to fast read", "mmap_range_read": "mmap range read"}
RA_ORDER = ["hits", "misses", "readpage_not_consecutive", "miss_inside_window",
            "failed_grab_cache_page", "failed_lock_match", "read_but_discarded", "zero_length_file",
            "zero_size_window", "readahead_to_eof", "hit_max_readahead_issue",
            "wrong_page_from_grab_cache_page", "failed_to_reach_end", "async_readahead",
            "failed_to_fast_read", "mmap_range_read"]


def ra_table(p: Profile):
    v = p.v
    names = RA_ORDER[:12]
    if v >= (2, 10, 0):
        names = RA_ORDER[:13]
    if v >= (2, 14, 0):
        names = RA_ORDER[:16]
    out = []
    for n in names:
        shown = RA_NAMES_OLD[n] if p.ra_names_with_spaces else n
        out.append((n, shown, "pages", 0))
    out += [(n, n, "pages", 3) for n in p.ra_pages_counters]     # 2.16+: min max sum
    return out


def md_table(p: Profile):
    return [(n, "reqs", 0) for n in p.md_stats_names]


def _units(p: Profile, key: str) -> str:
    if key == "lat" or key == "usec":
        return p.usec
    if key == "sec":
        return p.sec
    return key


# ----------------------------------------------------------------------------------------------
# Timestamps

def _split(ns: int) -> tuple[int, int]:
    ns = max(0, ns)
    return ns // NS, ns % NS


def _stats_header(p: Profile, now_ns: int, init_ns: int, boot_ns: int) -> str:
    kind = p.stats_header
    w = p.name_width
    sec, nsec = _split(now_ns)
    if kind == "usecs":
        return f"{'snapshot_time':<{w}} {sec}.{nsec // 1000} secs.usecs\n"
    if kind == "nsecs":
        return f"{'snapshot_time':<{w}} {sec}.{nsec:09d} secs.nsecs\n"
    if kind == "mono3":
        snap = now_ns - boot_ns
        start = 0
    else:
        snap, start = now_ns, init_ns
    out = []
    for name, val in (("snapshot_time", snap), ("start_time", start), ("elapsed_time", snap - start)):
        s, n = _split(val)
        out.append(f"{name:<{w}} {s}.{n:09d} secs.nsecs\n")
    return "".join(out)


def _colon_header(p: Profile, now_ns: int, init_ns: int | None, boot_ns: int) -> str:
    """The header of rpc_stats/osc_stats: lprocfs_stats_header(seq, now, init, 25, ":", 1)."""
    kind = p.rpc_header
    sec, nsec = _split(now_ns)
    if kind == "1.8":
        return f"snapshot_time:            {sec}.{nsec // 1000} (secs.usecs)\n"
    if kind == "2.0":
        return f"snapshot_time:         {sec}.{nsec // 1000} (secs.usecs)\n"
    if kind == "2.10":
        return f"snapshot_time:         {sec}.{nsec:09d} (secs.nsecs)\n"
    out = []
    if kind == "2.15.0":
        snap = now_ns - boot_ns
        start = 0 if init_ns is None else init_ns - boot_ns   # cl_stats_init: 0 until a clear
        for name, val in (("snapshot_time", snap), ("start_time", start),
                          ("elapsed_time", snap - start)):
            s, n = _split(val)
            out.append(f"{name:<25}: {s}.{n:09d} secs.nsecs\n")
        return "".join(out)
    start = init_ns if init_ns is not None else 0
    for name, val in (("snapshot_time:", now_ns), ("start_time:", start),
                      ("elapsed_time:", now_ns - start)):
        s, n = _split(val)
        out.append(f"{name:<25} {s}.{n:09d} secs.nsecs\n")
    return "".join(out)


# ----------------------------------------------------------------------------------------------
# lprocfs stats files

def s64(x: int) -> int:
    """What printf("%lld") shows for a 64-bit counter: two's complement, so a u64 sum past
    2^63 - 1 prints negative (LF §2: count, min, max and sum are %lld, sumsq %llu)."""
    x %= U64
    return x - U64 if x >= 1 << 63 else x


def counter_line(name: str, c, units: str, nvals: int, width: int = 25) -> str:
    count, mn, mx, sm, sq = c
    s = f"{name:<{width}} {s64(count)} samples [{units}]"
    if nvals >= 3:
        s += f" {s64(mn if mn is not None else 0)} {s64(mx)} {s64(sm)}"
        if nvals == 4:
            s += f" {sq % U64}"
    return s + "\n"


def render_stats(p: Profile, table, counters: dict, now_ns: int, init_ns: int, boot_ns: int) -> str:
    out = [_stats_header(p, now_ns, init_ns, boot_ns)]
    for name, ukey, nvals in table:
        c = counters.get(name)
        if c is None or c[0] == 0:
            continue
        out.append(counter_line(name, c, _units(p, ukey), nvals, p.name_width))
    return "".join(out)


def render_llite_stats(p: Profile, llite: dict, now_ns: int, boot_ns: int) -> str:
    return render_stats(p, llite_table(p), llite["stats"], now_ns, llite["init_ns"], boot_ns)


def render_ptlrpc_stats(p: Profile, counters: dict, now_ns: int, init_ns: int, boot_ns: int) -> str:
    # the model always says mds_get_root; 1.8-2.7 print the older opcode name
    if p.mds_root_opname != "mds_get_root" and "mds_get_root" in counters:
        counters = dict(counters)
        counters[p.mds_root_opname] = counters.pop("mds_get_root")
    return render_stats(p, ptlrpc_table(p), counters, now_ns, init_ns, boot_ns)


def render_md_stats(p: Profile, md: dict, now_ns: int, init_ns: int, boot_ns: int) -> str:
    if p.v < (2, 9, 0):
        md = {MD_NAME_21.get(k, k): v for k, v in md.items()}
    return render_stats(p, md_table(p), md, now_ns, init_ns, boot_ns)


def render_ra_stats(p: Profile, ra: dict, now_ns: int, init_ns: int, boot_ns: int) -> str:
    out = [_stats_header(p, now_ns, init_ns, boot_ns)]
    for key, shown, units, nvals in ra_table(p):
        c = ra.get(key)
        if c is None or c[0] == 0:
            continue
        out.append(counter_line(shown, c, units, nvals, p.name_width))
    return "".join(out)


# ----------------------------------------------------------------------------------------------
# osc rpc_stats (LF §3)

def _pct(a: int, b: int) -> int:
    return a * 100 // b if b else 0


def _section(title: str, r: list[int], w: list[int], label, first: int = 0,
             head: str | None = None) -> str:
    out = ["\n\t\t\tread\t\t\twrite\n",
           head or f"{title:<22}rpcs   % cum % |       rpcs   % cum %\n"]
    rt, wt = sum(r), sum(w)           # lprocfs_oh_sum() over every bucket
    rc = wc = 0
    for i in range(first, OBD_HIST_MAX):
        rc += r[i]
        wc += w[i]
        out.append(f"{label(i)}:\t\t{r[i]:10d} {_pct(r[i], rt):3d} {_pct(rc, rt):3d}   | "
                   f"{w[i]:10d} {_pct(w[i], wt):3d} {_pct(wc, wt):3d}\n")
        if rc == rt and wc == wt:
            break
    return "".join(out)


def _latency_bucket(us: int) -> int:
    """Row of the 2.17 'RPC latency (us)' section: label 0, then 1 << (i-1) (LF §3)."""
    return min(max(0, int(us)).bit_length(), OBD_HIST_MAX - 1)


def latency_hist(c) -> list[int]:
    """The sim keeps no per-RPC latencies, only the lprocfs counter [count, min, max, sum, sumsq]
    of ost_read/ost_write. The 2.17 latency histogram is derived from it: the smallest and the
    largest sample in their own buckets, the others at the mean of the rest. Deterministic, and
    its total is the counter's count, as in the kernel."""
    h = [0] * OBD_HIST_MAX
    if not c or c[0] <= 0:
        return h
    n, mn, mx, sm = c[0], c[1] or 0, c[2], c[3]
    h[_latency_bucket(mn)] += 1
    if n >= 2:
        h[_latency_bucket(mx)] += 1
    if n >= 3:
        h[_latency_bucket((sm - mn - mx) // (n - 2))] += n - 2
    return h


def _rpc_sections(p: Profile, h: dict, lat: tuple[list[int], list[int]] | None) -> list[str]:
    out = [_section("pages per rpc", h["read_pages"], h["write_pages"], lambda i: 1 << i),
           _section("rpcs in flight", h["read_rif"], h["write_rif"], lambda i: i, p.rif_first_row),
           _section("offset", h["read_off"], h["write_off"],
                    lambda i: 0 if i == 0 else 1 << (i - 1))]
    if p.rpc_latency_section:
        r, w = lat if lat is not None else ([0] * OBD_HIST_MAX, [0] * OBD_HIST_MAX)
        out.append(_section("RPC latency (us)", r, w, lambda i: 0 if i == 0 else 1 << (i - 1),
                            head="RPC latency (us)       count   % cum % |       count   % cum %\n"))
    return out


def render_rpc_stats(p: Profile, osc: dict, now_ns: int, boot_ns: int) -> str:
    h = osc["hist"]
    g = osc["gauges"]
    out = [_colon_header(p, now_ns, osc.get("rpc_init_ns"), boot_ns)]
    if p.rpc_header == "1.8":
        out.append(f"read RPCs in flight:      {g['r_in_flight']}\n"
                   f"write RPCs in flight:     {g['w_in_flight']}\n"
                   f"dio read RPCs in flight:  {g['dio_r_in_flight']}\n"
                   f"dio write RPCs in flight: {g['dio_w_in_flight']}\n"
                   f"pending write pages:      {g['pending_w']}\n"
                   f"pending read pages:       {g['pending_r']}\n")
    else:
        out.append(f"read RPCs in flight:  {g['r_in_flight']}\n"
                   f"write RPCs in flight: {g['w_in_flight']}\n")
        if p.rif_dio_line:
            out.append(f"DIO RPCs in flight: {g['dio_r_in_flight'] + g['dio_w_in_flight']}\n")
        out.append(f"pending write pages:  {g['pending_w']}\n"
                   f"pending read pages:   {g['pending_r']}\n")
    st = osc.get("stats", {})
    out += _rpc_sections(p, h, (latency_hist(st.get("ost_read")), latency_hist(st.get("ost_write"))))
    return "".join(out)


# ----------------------------------------------------------------------------------------------
# mdc rpc_stats (LF §4)

MOD_RPC_OPS = ("mds_reint", "mds_close")


def mod_rpcs_hist(mdc: dict) -> list[int]:
    """The 'modify RPCs in flight' histogram. The sim keeps no per-RPC concurrency for the MDC;
    its modifying RPCs (reint and close, obd_get_mod_rpc_slot) go one at a time, so each is
    tallied with 1 in flight (1-based, like obd_get_mod_rpc_slot). Derived from mdc stats, so
    clearing those clears it too."""
    h = [0] * OBD_HIST_MAX
    h[1] = sum(mdc["stats"].get(op, [0])[0] for op in MOD_RPC_OPS)
    return h


def _mdc_rpc_header(p: Profile, now_ns: int, init_ns: int | None, boot_ns: int) -> str:
    kind = p.mdc_rpc_header
    sec, nsec = _split(now_ns)
    if kind == "2.8":
        return f"snapshot_time:         {sec}.{nsec // 1000} (secs.usecs)\n"
    if kind == "2.10":
        return f"snapshot_time:         {sec}.{nsec:9d} (secs.nsecs)\n"     # %9lu: space-padded
    return _colon_header(p, now_ns, init_ns, boot_ns)


def render_mdc_rpc_stats(p: Profile, mdc: dict, now_ns: int, boot_ns: int) -> str:
    g = mdc.get("gauges") or {}
    init = mdc.get("stats_init_ns") if p.rpc_header == "2.15.2" else None
    h = mod_rpcs_hist(mdc)
    tot = sum(h)
    pct = "%%" if p.mdc_rpc_pct_bug else "%"
    out = [_mdc_rpc_header(p, now_ns, init, boot_ns),
           f"modify_RPCs_in_flight:  {g.get('mod_in_flight', 0)}\n",
           "\n\t\t\tmodify\n", f"rpcs in flight        rpcs   {pct} cum {pct}\n"]
    cum = 0
    for i in range(OBD_HIST_MAX):
        cum += h[i]
        out.append(f"{i}:\t\t{h[i]:10d} {_pct(h[i], tot):3d} {_pct(cum, tot):3d}\n")
        if cum == tot:
            break
    if p.mdc_rpc_dom_block:
        # DoM I/O through the MDC: not modelled, so the histograms are empty
        z = {k: [0] * OBD_HIST_MAX for k in ("read_pages", "write_pages", "read_rif", "write_rif",
                                             "read_off", "write_off")}
        out.append(f"\nread RPCs in flight:  {g.get('r_in_flight', 0)}\n"
                   f"write RPCs in flight: {g.get('w_in_flight', 0)}\n"
                   f"pending write pages:  {g.get('pending_w', 0)}\n"
                   f"pending read pages:   {g.get('pending_r', 0)}\n")
        out += _rpc_sections(p, z, None)
    return "".join(out)


# ----------------------------------------------------------------------------------------------
# lnet stats (LF §7)

def render_lnet_stats(st: dict) -> str:
    """/proc/sys/lnet/stats or /sys/kernel/debug/lnet/stats: "%u %u %u %u %u %u %u %llu %llu
    %llu %llu" = msgs_alloc msgs_max errors send_count recv_count route_count drop_count
    send_length recv_length route_length drop_length. The sim has no LNet model: the counts
    are derived from the import RPC counters (one request and one reply per RPC, plus a bulk
    message per BRW), the lengths from the bulk bytes plus a small header per message."""
    rpcs = rd_n = wr_n = rd_b = wr_b = 0
    for m in st["mounts"].values():
        for dev in m["osc"] + m["mdc"]:
            s = dev["stats"]
            rpcs += s.get("req_waittime", [0])[0]
            rd_n += s.get("read_bytes", [0])[0]
            wr_n += s.get("write_bytes", [0])[0]
            rd_b += s.get("read_bytes", [0, 0, 0, 0])[3]
            wr_b += s.get("write_bytes", [0, 0, 0, 0])[3]
    send = rpcs + wr_n
    recv = rpcs + rd_n
    u32 = 1 << 32
    return (f"0 {min(64, rpcs) % u32} 0 {send % u32} {recv % u32} 0 0 "
            f"{(wr_b + 512 * rpcs) % U64} {(rd_b + 1024 * rpcs) % U64} 0 0\n")


def render_osc_lockless(p: Profile, osc: dict, now_ns: int, boot_ns: int) -> str:
    ll = osc["lockless"]
    out = [_colon_header(p, now_ns, osc.get("lockless_init_ns"), boot_ns),
           f"lockless_write_bytes\t\t{ll['write']}\n", f"lockless_read_bytes\t\t{ll['read']}\n"]
    if p.osc_stats_has_truncate:
        out.append(f"lockless_truncate\t\t{ll['truncate']}\n")
    return "".join(out)


# ----------------------------------------------------------------------------------------------
# import / state

CONNECT_FLAGS_OSC = ["write_grant", "server_lock", "version", "request_portal", "truncate_lock",
                     "max_byte_per_rpc", "early_lock_cancel", "adaptive_timeouts", "lru_resize",
                     "alt_checksum_algorithm", "fid_is_enabled", "version_recovery", "grant_shrink",
                     "full20", "layout_lock", "64bithash", "object_max_bytes", "jobstats",
                     "einprogress", "lvb_type", "short_io", "lfsck", "bulk_mbits"]
CONNECT_FLAGS_MDC = ["write_grant", "server_lock", "version", "request_portal", "acl", "xattr",
                     "truncate_lock", "inode_bit_locks", "getattr_by_fid", "no_oh_for_devices",
                     "max_byte_per_rpc", "early_lock_cancel", "adaptive_timeouts", "lru_resize",
                     "fid_is_enabled", "version_recovery", "pools", "large_ea", "full20",
                     "layout_lock", "64bithash", "jobstats", "umask", "einprogress", "lvb_type",
                     "flock_deadlock", "disp_stripe", "open_by_fid", "lfsck", "multi_mod_rpcs",
                     "dir_stripe", "subtree", "bulk_mbits"]


def render_import(p: Profile, dev: dict, kind: str, now_ns: int) -> str:
    imp = dev["imp"]
    stats = dev["stats"]
    sec = now_ns // NS
    flags = CONNECT_FLAGS_OSC if kind == "osc" else CONNECT_FLAGS_MDC
    wt = stats.get("req_waittime")
    avg = (wt[3] // wt[0]) if wt and wt[0] else 0
    tv = p.v + (0,)
    out = [f"import:\n    name: {imp['name']}\n    target: {imp['target']}\n"
           f"    state: {imp['state']}\n    connect_flags: [ {', '.join(flags)} ]\n"
           f"    connect_data:\n       flags: {0x2040401443000066 if kind == 'osc' else 0x2f0ac1bb7e400:#x}\n"
           f"       instance: {imp['instance']}\n"
           f"       target_version: {tv[0]}.{tv[1]}.{tv[2]}.{tv[3]}\n"]
    if kind == "osc":
        out.append(f"       initial_grant: 2097152\n       max_brw_size: {dev['max_pages_per_rpc'] * dev['page_size']}\n")
    else:
        out.append("       mdt_index: 0\n       max_brw_size: 1048576\n       ibits_known: 0xff\n")
    out.append(f"    import_flags: [ replayable, pingable, connect_tried ]\n"
               f"    connection:\n       failover_nids: [ {imp['nid']} ]\n"
               f"       current_connection: {imp['nid']}\n"
               f"       connection_attempts: {imp['conn_attempts']}\n"
               f"       generation: {imp['generation']}\n"
               f"       in-progress_invalidations: 0\n")
    if p.has_idle_line:
        out.append(f"       idle: {max(0, sec - imp.get('last_reply', sec))} sec\n")
    out.append(f"    rpcs:\n       inflight: 0\n       unregistering: 0\n"
               f"       timeouts: {imp.get('timeouts', 0)}\n"
               f"       avg_waittime: {avg} {p.usec}\n"
               f"    service_estimates:\n       services: 1 sec\n       network: 1 sec\n"
               f"    transactions:\n       last_replay: 0\n       peer_committed: 0\n"
               f"       last_checked: 0\n")
    if kind == "osc":
        for rw, ck, ok in (("read", "read_bytes", "ost_read"), ("write", "write_bytes", "ost_write")):
            b, o = stats.get(ck), stats.get(ok)
            if b and b[0] and b[3] > 0:
                bpr = b[3] // b[0]
                out.append(f"    {rw}_data_averages:\n       bytes_per_rpc: {bpr}\n")
                if o and o[0] and o[3] > 0:
                    upr = o[3] // o[0]
                    out.append(f"       {p.usec}_per_rpc: {upr}\n")
                    if upr > 0:
                        out.append(f"       MB_per_sec: {bpr // upr}.{(100 * bpr // upr) % 100:02d}\n")
    return "".join(out)


def render_state(p: Profile, imp: dict) -> str:
    out = [f"current_state: {imp['state']}\nstate_history:\n"]
    for t, s in imp["history"][-16:]:
        out.append(f" - [ {t}, {s} ]\n")
    return "".join(out)
