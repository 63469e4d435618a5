"""The client model: file accesses in, RPCs and counters out.

Simple but honest (see README "How the model works"):
* files are striped round-robin over the fs's OSTs (stripe count, stripe size, start OST);
* buffered writes dirty the pages of each OST object; a max_pages_per_rpc-aligned chunk that is
  wholly dirty is sent at once; partial chunks wait for fsync, close, the end of the run or the
  OSC's max_dirty_mb limit; an RPC never crosses a chunk boundary and never bridges a gap;
* reads fetch the pages that are not cached; a sequential read also reads ahead to the end of
  the current RPC chunk (bounded by EOF); cached pages cost no RPC;
* every RPC is tallied as the kernel does it: pages-per-rpc with lprocfs_oh_tally_log2(pages),
  rpcs-in-flight with the in-flight count, offset with log2(start page + 1), osc stats
  read_bytes/write_bytes (one sample per RPC, sum = bytes on the wire), the opcode latency,
  req_waittime and req_active; llite counts syscalls; mdc counts md ops and MDS RPCs.
"""

from __future__ import annotations

import random
import zlib
from bisect import bisect_left
from math import floor, gcd, lcm

from .counters import cadd, split_even, tally, tally_log2
from .intervals import IntervalSet
from .settings import quirk_factor
from .version import Profile

NS = 1_000_000_000
MiB = 1 << 20
PING_INTERVAL_S = 25          # obd_timeout 100 s / 4
# lu15274 quirk: what a read call costs without the fast read path. LU-15274's numbers, dd bs=4K
# of a 64 MiB file: 9.1 MB/s (450 us a call) with the bug, 994 MB/s (4.1 us) with the fix; the
# model's buffered 4 KiB call costs about 4 us, so a call that loses fast read takes 446 us more.
LU15274_SLOW_READ_US = 446
# ra-8k-rpcs quirk: the read-ahead of the Pleiades regression issued 8 KiB at a time
RA_8K_BYTES = 8192


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


# ----------------------------------------------------------------------------------------------
# RPC accounting on a device dict (osc or mdc of the state)

def rpc(dev: dict, opname: str, lat: int, active: int = 1, extra: str | None = None,
        n: int = 1) -> None:
    s = dev["stats"]
    cadd(s, "req_waittime", lat, n)
    cadd(s, "req_active", active, n)
    cadd(s, opname, lat, n)
    if extra:
        cadd(s, extra, 1, n)


def _bucket(x: int) -> int:
    """lprocfs_oh_tally_log2(x + 1)'s row for an offset x: fls(x), clamped to the last row."""
    return min(x.bit_length(), 31)


def ap_log2_counts(a: int, d: int, n: int, mod: int | None = None) -> dict[int, int]:
    """{row: count} of the offset histogram for the n offsets a, a+d, ..., a+(n-1)d (taken
    modulo `mod` when given: the <= 2.2 offset inside the 1 MiB chunk)."""
    out: dict[int, int] = {}
    if n <= 0:
        return out
    if mod:
        a %= mod
        d %= mod
        per = mod // gcd(d, mod) if d else 1
        if n > per:
            full, rest = divmod(n, per)
            for b, c in ap_log2_counts(a, d, per, mod).items():
                out[b] = out.get(b, 0) + c * full
            for b, c in ap_log2_counts((a + full * per * d) % mod, d, rest, mod).items():
                out[b] = out.get(b, 0) + c
            return out
        for i in range(n):
            b = _bucket((a + i * d) % mod)
            out[b] = out.get(b, 0) + 1
        return out
    if d == 0:
        return {_bucket(a): n}
    for b in range(_bucket(a), _bucket(a + (n - 1) * d) + 1):
        lo = 0 if b == 0 else 1 << (b - 1)
        hi = 1 << b if b < 31 else None
        i_lo = max(0, -(-(lo - a) // d))
        i_hi = n if hi is None else min(n, -(-(hi - a) // d))
        if i_hi > i_lo:
            out[b] = i_hi - i_lo
    return out


def _runs(starts: list[int]) -> list[tuple[int, int, int]]:
    """Sorted page starts as arithmetic runs (start, step, count)."""
    starts = sorted(starts)
    out = []
    i = 0
    while i < len(starts):
        if i + 1 == len(starts):
            out.append((starts[i], 0, 1))
            break
        d = starts[i + 1] - starts[i]
        j = i + 1
        while j + 1 < len(starts) and starts[j + 1] - starts[j] == d:
            j += 1
        out.append((starts[i], d, j - i + 1))
        i = j + 1
    return out


class Latency:
    """Deterministic RPC and syscall latencies (usec). Means stay well under 10 ms."""

    def __init__(self, rng: random.Random):
        self.r = rng

    def brw(self, nbytes: int, rif: int) -> int:
        return int((180 + nbytes / 1000.0) * (0.85 + 0.3 * self.r.random()) + (rif - 1) * 25)

    def md(self) -> int:
        return int(110 + 240 * self.r.random())

    def small(self) -> int:
        return int(60 + 140 * self.r.random())

    def ping(self) -> int:
        return int(35 + 90 * self.r.random())

    def connect(self) -> int:
        return int(400 + 1200 * self.r.random())


class Obj:
    __slots__ = ("cached", "dirty")

    def __init__(self) -> None:
        self.cached = IntervalSet()   # page numbers in the page cache (clean or dirty)
        self.dirty = IntervalSet()    # dirty byte ranges, object offsets


class File:
    __slots__ = ("path", "size", "osts", "ss", "sc", "objs", "och", "opens", "md_locked",
                 "ext_locked", "written", "mdt")

    def __init__(self, path: str, size: int, osts: list[int], ss: int, mdt: int):
        self.path, self.size, self.osts, self.ss, self.sc = path, size, osts, ss, len(osts)
        self.objs = [Obj() for _ in osts]
        self.och: dict[str, int] = {}     # MDS open handles held by this client, per mode
        self.opens = 0
        self.md_locked = False
        self.ext_locked: set[int] = set()
        self.written: set[int] = set()
        self.mdt = mdt

    def obj_ranges(self, a: int, b: int):
        """[(stripe index, object start, object end)] covering file bytes [a, b)."""
        if a >= b:
            return []
        if self.sc == 1:
            return [(0, a, b)]
        out = []
        for k in range(self.sc):
            lo = self._first_obj_off(k, a, b)
            if lo is None:
                continue
            hi = self._last_obj_end(k, a, b)
            out.append((k, lo, hi))
        return out

    def _first_obj_off(self, k, a, b):
        ss, sc = self.ss, self.sc
        u = a // ss
        if u % sc == k:
            f = a
        else:
            u2 = u + ((k - u % sc) % sc)
            f = u2 * ss
        if f >= b:
            return None
        return (f // ss // sc) * ss + f % ss

    def _last_obj_end(self, k, a, b):
        ss, sc = self.ss, self.sc
        last = b - 1
        u = last // ss
        if u % sc == k:
            f = last
        else:
            u2 = u - ((u % sc - k) % sc)
            f = u2 * ss + ss - 1
        return (f // ss // sc) * ss + f % ss + 1

    def obj_size(self, k: int) -> int:
        ss, sc, n = self.ss, self.sc, self.size
        row = ss * sc
        full, rem = divmod(n, row)
        return full * ss + min(max(rem - k * ss, 0), ss)


class Handle:
    __slots__ = ("f", "mode", "last_read_end", "hid", "reads")

    def __init__(self, f: File, mode: str, hid: int):
        self.f, self.mode, self.hid = f, mode, hid
        self.last_read_end: int | None = None
        self.reads = 0                      # read calls so far (LU-15274: the first is fast)


# ----------------------------------------------------------------------------------------------

class Client:
    """One run over the whole simulated client (all mounts)."""

    def __init__(self, st: dict, prof: Profile, tag: str):
        self.st, self.p = st, prof
        self.rng = random.Random(f"{st['seed']}:{st['run_seq']}:{tag}")
        self.lat = Latency(self.rng)
        self._fs: dict[str, FsIO] = {}
        self.notes: dict = {}          # what a workload chose (file counts...), for the summary

    def fs(self, name: str) -> "FsIO":
        if name not in self.st["mounts"]:
            raise KeyError(f"no filesystem {name!r} mounted (have: {', '.join(self.st['mounts'])})")
        if name not in self._fs:
            self._fs[name] = FsIO(self, self.st["mounts"][name])
        return self._fs[name]

    def finish(self, elapsed_s: float) -> None:
        for io in self._fs.values():
            io.end_of_run()
        self.pings(elapsed_s)

    def pings(self, elapsed_s: float) -> None:
        n = int(elapsed_s // PING_INTERVAL_S)
        if n <= 0:
            return
        for m in self.st["mounts"].values():
            for dev in m["osc"] + m["mdc"]:
                if dev["imp"]["state"] != "FULL":
                    continue
                lat = [self.lat.ping() for _ in range(min(n, 4))]
                for v, k in split_groups(lat, n):
                    cadd(dev["stats"], "req_waittime", v, k)
                    cadd(dev["stats"], "req_active", 1, k)
                    cadd(dev["stats"], "obd_ping", v, k)


def split_groups(values: list[int], n: int):
    """Spread n samples over a few distinct values."""
    g = len(values)
    base, extra = divmod(n, g)
    return [(v, base + (1 if i < extra else 0)) for i, v in enumerate(values) if base + (i < extra)]


def mount_rpcs(client: Client, m: dict) -> None:
    """What mounting costs on the wire: connects, root lookup, a statfs."""
    lat = client.lat
    for osc in m["osc"]:
        rpc(osc, "ost_connect", lat.connect())
    for i, mdc in enumerate(m["mdc"]):
        rpc(mdc, "mds_connect", lat.connect())
        if i == 0:
            rpc(mdc, "mds_get_root", lat.md())
            rpc(mdc, "mds_statfs", lat.md())


class FsIO:
    """The I/O model of one mounted filesystem during a run."""

    def __init__(self, client: Client, m: dict):
        self.c, self.m, self.p = client, m, client.p
        self.P = client.st["page_size"]
        self.files: dict[str, File] = {}
        self.handles: dict[int, Handle] = {}
        self._hid = 0
        self.ll = m["llite"]["stats"]
        self.ra = m["llite"]["ra"]
        self.lat = client.lat
        self.rng = client.rng
        self.osc_dirty: dict[int, int] = {}      # dirty bytes per OSC (max_dirty_mb)
        self.tun = m["llite"]["tun"]
        self.quirks = frozenset(client.st.get("quirks", ()))
        # ra-split-rpcs=F quirk: read-ahead RPCs sent so far in the run, and F (None: no quirk)
        self.ra_split = quirk_factor(self.quirks, "ra-split-rpcs")
        self._ra_rpcs = 0
        # hybrid I/O: 2.15.64+, when llite.*.hybrid_io is 1 (LU-13802; on by default 2.16.59+)
        self.hybrid = self.p.has_hybrid_io and bool(self.tun.get("hybrid_io"))
        self._shapes: dict = {}                  # call shapes of _uniform_rpcs, per layout

    # -- helpers ------------------------------------------------------------------------------
    def osc(self, idx: int) -> dict:
        return self.m["osc"][idx]

    def mdc(self, f: File | None = None) -> dict:
        return self.m["mdc"][f.mdt if f is not None else 0]

    def md(self, f: File | None, name: str, n: int = 1) -> None:
        cadd(self.mdc(f)["md"], name, 1, n)

    def llop(self, name: str, lat: int) -> None:
        cadd(self.ll, name, max(1, int(lat)))

    def _mdt_of(self, path: str) -> int:
        n = len(self.m["mdc"])
        if n == 1:
            return 0
        top = path.strip("/").split("/")[0]
        return zlib.crc32(top.encode()) % n

    def _layout(self, path: str, stripe_count, stripe_size, existing: bool):
        n = len(self.m["osc"])
        active = [i for i in range(n) if self.m["osc"][i]["active"]]
        sc = self.m["stripe_count"] if stripe_count is None else stripe_count
        if sc == -1 or sc > len(active):
            sc = len(active)
        ss = self.m["stripe_size"] if stripe_size is None else stripe_size
        if ss % self.P or ss < 65536:
            raise ValueError(f"stripe size {ss} must be a multiple of 64 KiB and of the page size")
        if existing:
            start = zlib.crc32(path.encode()) % len(active)
        else:
            start = self.m["next_ost"] % len(active)
            self.m["next_ost"] = (start + 1) % len(active)
        return [active[(start + i) % len(active)] for i in range(sc)], ss

    def _chunk(self, osc: dict) -> int:
        return osc["max_pages_per_rpc"]

    # -- namespace ----------------------------------------------------------------------------
    def existing(self, path: str, size: int, stripe_count=None, stripe_size=None) -> File:
        """Declare a file that exists on the fs before the run (no counters)."""
        osts, ss = self._layout(path, stripe_count, stripe_size, existing=True)
        f = File(path, size, osts, ss, self._mdt_of(path))
        self.files[path] = f
        return f

    def mkdir(self, path: str) -> None:
        lat = self.lat.md()
        self.md(None, "create")
        rpc(self.mdc(None), "mds_reint", lat, extra=None)
        self.llop("mkdir", lat + 15)

    def readdir(self, path: str, entries: int = 100) -> None:
        pages = max(1, _ceil_div(entries, 100))
        total = 0
        for _ in range(pages):
            lat = self.lat.md()
            total += lat
            self.md(None, "read_page")
            rpc(self.mdc(None), "mds_readpage", lat)
        self.llop("readdir", total + 10)

    def unlink(self, path: str) -> None:
        f = self.files.pop(path)
        lat = self.lat.md()
        self.md(f, "unlink")
        rpc(self.mdc(f), "mds_reint", lat)
        self.llop("unlink", lat + 20)
        for k, o in enumerate(f.objs):   # dirty pages of an unlinked file are discarded
            self.osc_dirty[f.osts[k]] = self.osc_dirty.get(f.osts[k], 0) - o.dirty.total()
            o.dirty.clear()
            o.cached.clear()

    def statfs(self) -> None:
        total = 0
        for mdc in self.m["mdc"]:
            lat = self.lat.md()
            rpc(mdc, "mds_statfs", lat)
            total = max(total, lat)
        for osc in self.m["osc"]:
            if osc["imp"]["state"] == "FULL":
                lat = self.lat.small()
                rpc(osc, "ost_statfs", lat)
                total = max(total, lat)
        self.llop("statfs", total + 20)

    # -- open/close/stat ----------------------------------------------------------------------
    def open(self, path: str, mode: str = "r", create: bool = False, stripe_count=None,
             stripe_size=None) -> Handle:
        f = self.files.get(path)
        if f is None:
            if not create:
                raise FileNotFoundError(path)
            osts, ss = self._layout(path, stripe_count, stripe_size, existing=False)
            f = File(path, 0, osts, ss, self._mdt_of(path))
            self.files[path] = f
            mdc = self.mdc(f)
            if not mdc.get("seq_ok"):
                rpc(mdc, "seq_query", self.lat.md())     # first FID sequence of this mount
                mdc["seq_ok"] = True
        om = "w" if ("w" in mode or "a" in mode) else "r"
        shared = f.och.get(om, 0) > 0
        lat = 8
        if not shared:
            lat = self.lat.md()
            self.md(f, "intent_lock")
            rpc(self.mdc(f), "ldlm_enqueue", lat, extra="ldlm_ibits_enqueue")
            lat += 20
        if self.p.open_tally == "every" or not shared:
            self.llop("open", lat)
        f.opens += 1
        cadd(self.ll, "opencount", f.opens)
        f.och[om] = f.och.get(om, 0) + 1
        f.md_locked = True
        self._hid += 1
        h = Handle(f, om, self._hid)
        self.handles[h.hid] = h
        return h

    def close(self, h: Handle) -> None:
        f = h.f
        flush_lat = self._flush_file(f)
        del self.handles[h.hid]
        f.och[h.mode] -= 1
        lat = 6 + flush_lat
        if f.och[h.mode] == 0:
            mlat = self.lat.md()
            self.md(f, "close")
            rpc(self.mdc(f), "mds_close", mlat)
            lat += mlat
        self.llop("close", lat)
        cadd(self.ll, "openclosetime", int(2000 + 400000 * self.rng.random()))

    def close_resident(self, n: int) -> None:
        """Close n handles that long-lived processes opened before this run."""
        if n > self.m["resident"]:
            raise RuntimeError(
                f"{self.m['fs']}: the workload closes {n} files that were open before it started, "
                f"but only {self.m['resident']} are held open on this client. Lustre "
                f"{self.c.p.version} counts every open, so close > open needs them: run "
                f"'lustre-sim run ROOT hold-open --fs {self.m['fs']} --param count={n}' (or create "
                f"the client with its default background activity) before the job.")
        lats = []
        for _ in range(n):
            lat = self.lat.md()
            self.md(None, "close")
            rpc(self.mdc(None), "mds_close", lat)
            lats.append(lat + 6)
        for v in lats:
            cadd(self.ll, "close", v)
            cadd(self.ll, "openclosetime", int(3.6e9 + 1e9 * self.rng.random()))
        self.m["resident"] -= n

    def open_resident(self, n: int) -> None:
        """Open n long-lived handles (kept open after the run)."""
        for i in range(n):
            lat = self.lat.md()
            self.md(None, "intent_lock")
            rpc(self.mdc(None), "ldlm_enqueue", lat, extra="ldlm_ibits_enqueue")
            self.llop("open", lat + 20)
            cadd(self.ll, "opencount", 1)
        self.m["resident"] += n

    def _glimpse(self, f: File) -> int:
        lat_max = 0
        if f.size == 0:
            return 0
        for k, ost in enumerate(f.osts):
            if k in f.ext_locked or f.obj_size(k) == 0:
                continue
            lat = self.lat.small()
            rpc(self.osc(ost), "ldlm_enqueue", lat, extra="ldlm_glimpse_enqueue")
            lat_max = max(lat_max, lat)
        return lat_max

    def stat(self, target) -> None:
        f = target.f if isinstance(target, Handle) else self.files[target]
        if not f.md_locked:
            lat = self.lat.md()
            self.md(f, "intent_lock")
            rpc(self.mdc(f), "ldlm_enqueue", lat, extra="ldlm_ibits_enqueue")
            f.md_locked = True
        else:
            lat = 2 + int(6 * self.rng.random())
            self.md(f, "revalidate_lock")
        lat += self._glimpse(f)
        self.llop("getattr", lat + 2)

    def seek(self, h: Handle) -> None:
        self.llop("seek", 2)

    def setattr(self, target, size: int | None = None) -> None:
        f = target.f if isinstance(target, Handle) else self.files[target]
        lat = self.lat.md()
        self.md(f, "setattr")
        rpc(self.mdc(f), "mds_reint", lat)
        if size is not None:
            f.size = size
            for k, ost in enumerate(f.osts):
                plat = self.lat.small()
                rpc(self.osc(ost), "ost_punch", plat)
                lat += plat
                o = f.objs[k]
                osz = f.obj_size(k)
                before = o.dirty.total()
                o.dirty.remove(osz, 1 << 62)
                self.osc_dirty[ost] = self.osc_dirty.get(ost, 0) - before + o.dirty.total()
                o.cached.remove(_ceil_div(osz, self.P), 1 << 62)
            self.llop("truncate", lat)
        self.llop("setattr", lat + 10)

    def fsync(self, h: Handle) -> None:
        f = h.f
        lat = self._flush_file(f)
        for k in sorted(f.written):
            slat = self.lat.small()
            rpc(self.osc(f.osts[k]), "ost_sync", slat)
            lat += slat
        mlat = self.lat.md()
        self.md(f, "fsync")
        rpc(self.mdc(f), "mds_sync", mlat)
        self.llop("fsync", lat + mlat + 10)

    # -- data ---------------------------------------------------------------------------------
    def _lock(self, f: File, k: int) -> None:
        if k not in f.ext_locked:
            rpc(self.osc(f.osts[k]), "ldlm_enqueue", self.lat.small(), extra="ldlm_extent_enqueue")
            f.ext_locked.add(k)

    def _brw(self, osc: dict, write: bool, pages: int, nbytes: int, start_page: int,
             burst: dict) -> int:
        """One BRW RPC of `pages` pages from start_page, next in its OSC's `burst`."""
        return self._brw_run(osc, write, pages, nbytes, start_page, 0, 1, burst)

    def _send_dirty(self, f: File, k: int, a: int, b: int, burst: dict) -> int:
        """Send the dirty bytes [a, b) of object k (contiguous), one RPC per chunk."""
        o = f.objs[k]
        osc = self.osc(f.osts[k])
        P = self.P
        ch = self._chunk(osc) * P
        lat = 0
        x = a
        while x < b:
            y = min(b, (x // ch + 1) * ch)
            pages = _ceil_div(y, P) - x // P
            lat += self._brw(osc, True, pages, y - x, x // P, burst)
            x = y
        o.dirty.remove(a, b)
        idx = osc["index"]
        self.osc_dirty[idx] = self.osc_dirty.get(idx, 0) - (b - a)
        return lat

    def _flush_obj(self, f: File, k: int, burst: dict) -> int:
        lat = 0
        for a, b in list(f.objs[k].dirty):
            lat += self._send_dirty(f, k, a, b, burst)
        return lat

    def _flush_file(self, f: File) -> int:
        burst: dict = {}
        lat = 0
        for k in range(f.sc):
            lat += self._flush_obj(f, k, burst)
        return lat // 4 if lat else 0

    def _lu8515(self, f: File, k: int, burst: dict) -> int:
        """The poor-write-aggregation quirk, LU-8515 (2.4-2.9 osc_makes_rpc): an object whose
        dirty pages add up to max_pages_per_rpc makes an RPC whether or not they are
        contiguous. Its dirty extents then leave in offset order, each as its own (partial)
        RPCs, until fewer than max_pages_per_rpc dirty pages are left."""
        o = f.objs[k]
        P = self.P
        M = self._chunk(self.osc(f.osts[k]))
        ext = list(o.dirty)
        pages = sum(_ceil_div(b, P) - a // P for a, b in ext)
        lat = 0
        for a, b in ext:
            if pages < M:
                break
            pages -= _ceil_div(b, P) - a // P
            lat += self._send_dirty(f, k, a, b, burst)
        return lat

    def _dirty_limit(self, idx: int, burst: dict) -> int:
        """Over max_dirty_mb on one OSC: write out everything dirty there (partial RPCs)."""
        osc = self.osc(idx)
        if self.osc_dirty.get(idx, 0) <= osc["max_dirty_mb"] << 20:
            return 0
        lat = 0
        for f in self.files.values():
            for k, ost in enumerate(f.osts):
                if ost == idx and f.objs[k].dirty:
                    lat += self._flush_obj(f, k, burst)
        return lat

    def write(self, h: Handle, offset: int, size: int, count: int = 1) -> None:
        if size <= 0 or count <= 0:
            raise ValueError("write of nothing")
        if self._hybrid_dio(h, offset, size, count, write=True):
            return
        f, P = h.f, self.P
        end = offset + size * count
        # dirty_pages_hits/misses (<= 2.13): page touches that found the page dirty or not
        if self.p.llite_family != "2.14":
            self._dirty_page_touches(f, offset, size, count, end)
        f.size = max(f.size, end)
        burst: dict = {}
        rpc_lat = 0
        poor = "poor-write-aggregation" in self.quirks
        for k, a, b in f.obj_ranges(offset, end):
            self._lock(f, k)
            o = f.objs[k]
            idx = f.osts[k]
            added = (b - a) - sum(y - x for x, y in o.dirty.covered(a, b))
            o.dirty.add(a, b)
            self.osc_dirty[idx] = self.osc_dirty.get(idx, 0) + added
            o.cached.add(a // P, _ceil_div(b, P))
            f.written.add(k)
            # a chunk of max_pages_per_rpc pages that is wholly dirty leaves at once
            ch = self._chunk(self.osc(idx)) * P
            s_, e_ = o.dirty.containing(a)
            lo, hi = _ceil_div(s_, ch) * ch, (e_ // ch) * ch
            if hi > lo:
                rpc_lat += self._send_dirty(f, k, lo, hi, burst)
            if poor and o.dirty:
                rpc_lat += self._lu8515(f, k, burst)
            rpc_lat += self._dirty_limit(idx, burst)
        cadd(self.ll, "write_bytes", size, count)
        base = 3 + size // 3000                 # memcpy into the page cache, ~3 GB/s
        cadd_lat(self.ll, "write", base, count, rpc_lat // 8)

    def _dirty_page_touches(self, f: File, offset: int, size: int, count: int, end: int) -> None:
        P = self.P
        if offset % P == 0 and size % P == 0:
            touches = size // P * count
        elif count <= 4096:
            touches = sum((offset + i * size + size - 1) // P - (offset + i * size) // P + 1
                          for i in range(count))
        else:
            touches = _ceil_div(size * count, P) + (count if size % P else 0)
        misses = 0
        for k, a, b in f.obj_ranges(offset, end):
            p0, p1 = a // P, _ceil_div(b, P)
            dirty_pages = IntervalSet()
            for x, y in f.objs[k].dirty.covered(p0 * P, p1 * P):
                dirty_pages.add(x // P, _ceil_div(y, P))
            misses += (p1 - p0) - dirty_pages.total()
        cadd(self.ll, "dirty_pages_misses", 1, misses)
        cadd(self.ll, "dirty_pages_hits", 1, max(0, touches - misses))

    def read(self, h: Handle, offset: int, size: int, count: int = 1,
             readahead: bool = True) -> None:
        """count calls of size bytes from offset on.

        * Hybrid I/O (2.15.64+, hybrid_io=1): a call of hybrid_io_read_threshold_bytes or more
          is switched to direct I/O (_dio); a smaller one counts hybrid_noswitch and goes on.
        * Read-ahead window: min(max_read_ahead_per_file_mb, max_read_ahead_mb). 0 (or
          readahead=False, the regression of io-findings §4) = no read-ahead: every call fetches
          its own pages only (_read_own_pages).
        * Otherwise a sequential read reads ahead to the end of its RPC chunk, at most the window
          past the request (_fetch)."""
        if size <= 0 or count <= 0:
            raise ValueError("read of nothing")
        f = h.f
        end = offset + size * count
        if end > f.size:
            raise ValueError(f"{f.path}: read [{offset}, {end}) beyond EOF {f.size}")
        if self._hybrid_dio(h, offset, size, count, write=False):
            return
        ra = self._ra_window_pages() if readahead else 0
        if ra == 0:
            rpc_lat = self._read_own_pages(h, offset, size, count)
        else:
            seq = count >= 2 or (h.last_read_end is not None and h.last_read_end == offset)
            if not seq and h.last_read_end is not None:
                cadd(self.ra, "readpage_not_consecutive", 1)
            if count > 1 and ra < max(self._chunk(self.osc(o)) for o in f.osts):
                # a window smaller than an RPC bounds each call's read-ahead: call by call
                rpc_lat = sum(self._fetch(f, offset + i * size, offset + (i + 1) * size, True,
                                          ra, {}) for i in range(count))
            else:
                rpc_lat = self._fetch(f, offset, end, seq, ra, {})
        h.last_read_end = end
        cadd(self.ll, "read_bytes", size, count)
        base = 2 + size // 4000
        slow = self._slow_read_us(f, ra) * (count - (1 if h.reads == 0 else 0))
        h.reads += count
        cadd_lat(self.ll, "read", base, count, rpc_lat // 4 + slow)

    def read_many(self, h: Handle, offsets, size: int) -> None:
        """One read call of size bytes at each offset, in order: what read(h, off, size) does
        for each, worked out in bulk when no call continues the one before (so none reads
        ahead) and each stays within one stripe unit and one RPC chunk (small random reads);
        otherwise call by call."""
        f, P = h.f, self.P
        offsets = list(offsets)
        n = len(offsets)
        if not n:
            return
        if size <= 0 or min(offsets) < 0 or max(offsets) + size > f.size:
            raise ValueError(f"{f.path}: read_many outside [0, {f.size})")
        ss, sc = f.ss, f.sc
        chunks = [self._chunk(self.osc(o)) * P for o in f.osts]
        bulk = not self._switches(size, write=False)
        prev = h.last_read_end
        calls = []
        for off in offsets if bulk else ():
            u, r = divmod(off, ss)
            k = u % sc
            oa = (u // sc) * ss + r
            if off == prev or r + size > ss or oa // chunks[k] != (oa + size - 1) // chunks[k]:
                bulk = False
                break
            calls.append((k, oa // P, _ceil_div(oa + size, P)))
            prev = off + size
        if not bulk:
            for off in offsets:
                self.read(h, off, size)
            return
        if self.hybrid:
            cadd(self.ll, "hybrid_noswitch", 1, n)
        cadd(self.ra, "readpage_not_consecutive", 1, n - (1 if h.last_read_end is None else 0))
        fetched: dict[int, set] = {}
        rpcs: dict = {}
        hit_pages = miss_pages = hit_calls = 0
        if all(p1 - p0 == 1 for _, p0, p1 in calls):        # one page a call: the usual case
            for k in {k for k, _, _ in calls}:
                fetched[k] = set()
            for k, p0, _ in calls:
                new = fetched[k]
                if p0 in new:
                    hit_calls += 1
                    continue
                cached = f.objs[k].cached
                if cached and cached.containing(p0) is not None:
                    hit_calls += 1
                    continue
                new.add(p0)
                key = (k, p0, p0 + 1)
                rpcs[key] = rpcs.get(key, 0) + 1
            hit_pages, miss_pages = hit_calls, len(calls) - hit_calls
            calls_left = ()
        else:
            calls_left = calls
        for k, p0, p1 in calls_left:
            new = fetched.setdefault(k, set())
            o = f.objs[k]
            miss = [p for p in range(p0, p1)
                    if p not in new and (not o.cached or o.cached.containing(p) is None)]
            hit_pages += (p1 - p0) - len(miss)
            miss_pages += len(miss)
            if not miss:
                hit_calls += 1
                continue
            new.update(miss)
            x = miss[0]                        # contiguous missing pieces: one RPC each
            for i in range(1, len(miss) + 1):
                if i == len(miss) or miss[i] != miss[i - 1] + 1:
                    key = (k, x, miss[i - 1] + 1)
                    rpcs[key] = rpcs.get(key, 0) + 1
                    if i < len(miss):
                        x = miss[i]
        shapes: dict = {}
        osz: dict = {}
        for (k, x, y), times in rpcs.items():
            if k not in osz:
                osz[k] = f.obj_size(k)
            shapes.setdefault((k, y - x, min(y * P, osz[k]) - x * P), []).extend([x] * times)
        rpc_lat = 0
        for (k, pages, nbytes), starts in shapes.items():
            rpc_lat += self._brw_run(self.osc(f.osts[k]), False, pages, nbytes, 0, 0, len(starts),
                                     rif=1, starts=starts)
        for k in sorted({k for k, _, _ in calls}):
            self._lock(f, k)
        for k, pages in fetched.items():
            f.objs[k].cached.update((x, x + 1) for x in pages)
        cadd(self.ra, "hits", 1, hit_pages)
        cadd(self.ra, "misses", 1, miss_pages)
        cadd(self.ll, "read_bytes", size, n)
        base = 2 + size // 4000
        slow = self._slow_read_us(f, self._ra_window_pages())
        first = 1 if h.reads == 0 else 0
        miss_calls = n - hit_calls
        # calls that fetched carry their RPCs' time; the first call of a handle is never slow
        cadd_lat(self.ll, "read", base, hit_calls, slow * hit_calls)
        cadd_lat(self.ll, "read", base, miss_calls, rpc_lat // 4 + slow * max(0, miss_calls - first))
        h.reads += n
        h.last_read_end = offsets[-1] + size

    def _switches(self, size: int, write: bool) -> bool:
        """Hybrid I/O (2.15.64+, hybrid_io=1) switches a call of this size to direct I/O."""
        return self.hybrid and size >= self.tun["hybrid_io_write_threshold_bytes" if write
                                                 else "hybrid_io_read_threshold_bytes"]

    def _hybrid_dio(self, h: Handle, offset: int, size: int, count: int, write: bool) -> bool:
        """ll_hybrid_bio_dio_switch_check, once per call: count calls switched to direct I/O
        (done here, True), or counted as hybrid_noswitch and left to the buffered path."""
        if not self.hybrid:
            return False
        if self._switches(size, write):
            self._dio(h, offset, size, count, write=write)
            return True
        cadd(self.ll, "hybrid_noswitch", 1, count)
        return False

    def _slow_read_us(self, f: File, ra: int) -> int:
        """What each read call after a handle's first costs more with the lu15274 quirk.
        LU-12043 -> LU-15274: a file within max_read_ahead_whole_mb is read with whole-file
        read-ahead from its second read call on, and ll_use_fast_io() did not know that state:
        every such call took the slow cl_io path. The RPCs are the same."""
        if ("lu15274" in self.quirks and ra
                and 0 < f.size <= self.tun["max_read_ahead_whole_mb"] * MiB):
            return LU15274_SLOW_READ_US
        return 0

    def _ra_window_pages(self) -> int:
        mb = min(self.tun["max_read_ahead_per_file_mb"], self.tun["max_read_ahead_mb"])
        return mb * MiB // self.P

    def _fetch(self, f: File, offset: int, end: int, seq: bool, ra: int, burst: dict) -> int:
        """Buffered read of file bytes [offset, end): fetch the pages that are not cached, and
        for a sequential read (ra > 0) read ahead to the end of the chunk, at most ra pages past
        the request. RPCs of at most one chunk (8 KiB ones with the ra-8k-rpcs quirk; each read-ahead
        one in pieces with ra-split-rpcs=F)."""
        P = self.P
        q8 = max(1, RA_8K_BYTES // P) if (seq and ra and "ra-8k-rpcs" in self.quirks) else 0
        rpc_lat = 0
        for k, a, b in f.obj_ranges(offset, end):
            self._lock(f, k)
            o = f.objs[k]
            osc = self.osc(f.osts[k])
            M = self._chunk(osc)
            osz = f.obj_size(k)
            last_page = _ceil_div(osz, P)
            p0, p1 = a // P, _ceil_div(b, P)
            p1r = p1
            if seq and ra:
                p1r = min(_ceil_div(p1, M) * M, last_page)
                # a window smaller than an RPC: each call tops the window up by its own size,
                # so RPCs shrink toward the call size (what LU-13412 saw)
                p1r = max(p1, min(p1r, p1 + ra))
                if p1r == last_page and p1r > p1:
                    cadd(self.ra, "readahead_to_eof", 1)
            missing = o.cached.missing(p0, p1)
            req_missing = sum(y - x for x, y in missing)
            cadd(self.ra, "hits", 1, (p1 - p0) - req_missing)
            cadd(self.ra, "misses", 1, req_missing)
            split = self.ra_split if (seq and ra) else None
            for x, y in o.cached.missing(p0, p1r):
                if q8 and q8 < M:
                    rpc_lat += self._send_read_pages(osc, x, y, q8, osz, burst)
                    continue
                while x < y:
                    z = min(y, (x // M + 1) * M)
                    if split:
                        rpc_lat += self._send_split(osc, x, z, min(z * P, osz) - x * P, burst)
                    else:
                        rpc_lat += self._brw(osc, False, z - x, min(z * P, osz) - x * P, x, burst)
                    x = z
            o.cached.add(p0, p1r)
        return rpc_lat

    def _send_split(self, osc: dict, x: int, z: int, nbytes: int, burst: dict) -> int:
        """The ra-split-rpcs=F quirk: the read-ahead RPC of pages [x, z) (nbytes, the last page
        maybe partial) leaves as even pieces, a page apart at most, the last one carrying the
        partial page. The k-th read-ahead RPC of the run makes floor(kF) - floor((k-1)F) pieces
        (never more than its pages), so a run's K RPCs become floor(KF): F times the RPCs, the
        same bytes."""
        self._ra_rpcs += 1
        k, f = self._ra_rpcs, self.ra_split
        pieces = min(z - x, floor(k * f) - floor((k - 1) * f))
        end = x * self.P + nbytes                  # the RPC's last byte + 1
        lat = 0
        for pages, n in split_even(z - x, pieces):
            for _ in range(n):
                lat += self._brw(osc, False, pages, min((x + pages) * self.P, end) - x * self.P, x, burst)
                x += pages
        return lat

    def _send_read_pages(self, osc: dict, x: int, y: int, q: int, osz: int, burst: dict) -> int:
        """Read pages [x, y) of an object in RPCs of q pages that never cross a chunk; the one
        with the object's last page carries only the bytes before EOF. Batched."""
        P, M = self.P, self._chunk(osc)
        lat = 0
        # the last RPC apart (it may end at a partial page)
        cs = ((y - 1) // M) * M
        s0 = max(x, cs)
        last = s0 + ((y - s0 - 1) // q) * q
        segs = []
        if x < last:
            head_end = min(last, _ceil_div(x, M) * M) if x % M else x
            if x < head_end:
                segs.append((x, head_end))
            mid_end = max(head_end, (last // M) * M)
            if head_end < mid_end:
                segs.append((head_end, mid_end))
            if mid_end < last:
                segs.append((mid_end, last))
        for a, b in segs:
            if b - a <= M and (a // M == (b - 1) // M):          # within one chunk
                n, rem = divmod(b - a, q)
                lat += self._brw_run(osc, False, q, q * P, a, q, n, burst)
                if rem:
                    lat += self._brw_run(osc, False, rem, rem * P, a + n * q, 0, 1, burst)
            elif M % q == 0:                                       # whole chunks
                lat += self._brw_run(osc, False, q, q * P, a, q, (b - a) // q, burst)
            else:
                per, rem = divmod(M, q)
                nchunks = (b - a) // M
                for i in range(per):
                    lat += self._brw_run(osc, False, q, q * P, a + i * q, M, nchunks, burst)
                if rem:
                    lat += self._brw_run(osc, False, rem, rem * P, a + per * q, M, nchunks, burst)
        lat += self._brw_run(osc, False, y - last, min(y * P, osz) - last * P, last, 0, 1, burst)
        return lat

    def _brw_run(self, osc: dict, write: bool, pages: int, nbytes: int, start: int, step: int,
                 n: int, burst: dict | None = None, rif: int | None = None,
                 starts: list[int] | None = None) -> int:
        """n BRW RPCs of the same size whose first pages are start, start+step, ...: tallied as
        n calls of _brw would tally them, in O(buckets). rif: each one's RPCs-in-flight count;
        None = they go out one after another in `burst` (1, 2, ... up to max_rpcs_in_flight).
        Latencies: a few deterministic samples per in-flight count. Returns their sum.
        starts: the first pages as a list instead (start, step ignored)."""
        if n <= 0:
            return 0
        idx = osc["index"]
        mx = osc["max_rpcs_in_flight"]
        d = "write" if write else "read"
        h = osc["hist"]
        h[d + "_pages"][min((pages - 1).bit_length(), 31)] += n
        if rif is not None:
            groups = [(min(rif, mx), n)]
        else:
            b0 = burst.get(idx, 0)
            burst[idx] = b0 + n
            lo = b0 + 1
            groups = []
            if lo < mx:
                k = min(n, mx - lo)
                groups = [(lo + i, 1) for i in range(k)]
                if n > k:
                    groups.append((mx, n - k))
            else:
                groups = [(mx, n)]
        zb = self.p.rif_zero_based
        for r, c in groups:
            h[d + "_rif"][min(r - 1 if zb else r, 31)] += c
        mod = max(1, MiB // self.P) if self.p.offset_in_chunk else None
        if starts is not None:
            off = h[d + "_off"]
            for x in starts:
                off[_bucket(x % mod if mod else x)] += 1
        else:
            for b, c in ap_log2_counts(start, step, n, mod).items():
                h[d + "_off"][b] += c
        cadd(osc["stats"], d + "_bytes", nbytes, n)
        op = "ost_write" if write else "ost_read"
        total = 0
        for r, c in groups:
            lats = [self.lat.brw(nbytes, r) for _ in range(min(c, 3))]
            for v, k in split_groups(lats, c):
                rpc(osc, op, v, active=r, n=k)
                total += v * k
        return total

    def _read_own_pages(self, h: Handle, offset: int, size: int, count: int) -> int:
        """No read-ahead: each call fetches the pages of its own range that are not cached, in
        RPCs of at most one chunk. Page-aligned calls over uncached data are computed in bulk."""
        f, P = h.f, self.P
        seq0 = h.last_read_end is not None and h.last_read_end == offset
        if not seq0 and h.last_read_end is not None:
            cadd(self.ra, "readpage_not_consecutive", 1)
        end = offset + size * count
        pieces = f.obj_ranges(offset, end)
        if (count > 1 and offset % P == 0 and size % P == 0
                and all(f.objs[k].cached.missing(a // P, _ceil_div(b, P)) == [(a // P, _ceil_div(b, P))]
                        for k, a, b in pieces)):
            for k, _, _ in pieces:
                self._lock(f, k)
            rpc_lat, _ = self._uniform_rpcs(f, offset, size, count, write=False)
            cadd(self.ra, "misses", 1, size * count // P)
            for k, a, b in pieces:
                f.objs[k].cached.add(a // P, _ceil_div(b, P))
            return rpc_lat
        rpc_lat = 0
        for i in range(count):
            a = offset + i * size
            rpc_lat += self._fetch(f, a, a + size, seq0 or i > 0, 0, {})
        return rpc_lat

    def _call_pieces(self, f: File, a_file: int, b_file: int, chunks) -> list:
        """The RPCs of one call that moves exactly file bytes [a_file, b_file) (own pages, or
        direct I/O): (k, object start, object end, j) split at chunk boundaries, j = the
        RPC's place among the call's RPCs to that object's OSC."""
        out = []
        for k, a, b in f.obj_ranges(a_file, b_file):
            ch = chunks[k]
            x, j = a, 0
            while x < b:
                y = min(b, (x // ch + 1) * ch)
                out.append((k, x, y, j))
                x, j = y, j + 1
        return out

    def _uniform_rpcs(self, f: File, offset: int, size: int, n: int, write: bool):
        """The RPCs of n calls of size bytes from offset on, each call moving exactly its own
        bytes (no read-ahead, or direct I/O), each call's RPCs in flight together. Calls repeat
        their shape every T calls (when T*size is a multiple of the stripe row and of the
        chunks), so one period is worked out (cached per layout) and the rest tallied as
        arithmetic runs. Returns (sum of the RPC latencies, sum over the calls of the time a
        synchronous call waits for its RPCs)."""
        P = self.P
        oscs = [self.osc(ost) for ost in f.osts]
        chunks = tuple(self._chunk(o) * P for o in oscs)
        mxs = tuple(o["max_rpcs_in_flight"] for o in oscs)
        L = lcm(f.ss * f.sc, f.sc * lcm(*chunks))
        T = lcm(size, L) // size
        total = 0
        if T > 4096 or n <= T:               # no short period: every call on its own
            sh = self._shape(f, offset, size, n, chunks, mxs)
            for (k, pages, nbytes, j), runs in sh["runs"].items():
                for a0, d, m in runs:
                    total += self._brw_run(oscs[k], write, pages, nbytes, a0, d, m, rif=j + 1)
            return total, int(sh["wprefix"][-1])
        off0 = offset % L
        key = (f.sc, f.ss, chunks, mxs, size, off0, T)
        sh = self._shapes.get(key)
        if sh is None:
            sh = self._shapes[key] = self._shape(f, off0, size, T, chunks, mxs)
        Q, r = divmod(n, T)
        Dp = T * size // f.sc // P           # pages each object moves on per period
        sp = (offset - off0) // f.sc // P    # pages of the periods before `offset`
        for (k, pages, nbytes, j), runs in sh["runs"].items():
            if len(runs) == 1 and (runs[0][2] == 1 or runs[0][1] * runs[0][2] == Dp):
                a0, d, m = runs[0]
                runs = [(a0, d if m > 1 else Dp, m * Q)]       # the periods continue the run
            else:
                runs = [(a0 + i * d, Dp, Q) for a0, d, m in runs for i in range(m)]
            for a0, d, m in runs:
                total += self._brw_run(oscs[k], write, pages, nbytes, a0 + sp, d, m, rif=j + 1)
        if r:                                # the first r calls of one more period
            rest: dict = {}
            for c, gk, a0 in sh["order"][:bisect_left(sh["calls"], r)]:
                rest.setdefault(gk, []).append(a0 + sp + Q * Dp)
            for (k, pages, nbytes, j), starts in rest.items():
                for a0, d, m in _runs(starts):
                    total += self._brw_run(oscs[k], write, pages, nbytes, a0, d, m, rif=j + 1)
        return total, int(Q * sh["wprefix"][-1] + sh["wprefix"][r])

    def _shape(self, f: File, offset: int, size: int, n: int, chunks, mxs) -> dict:
        """The RPCs of calls 0..n-1 grouped by (object, pages, bytes, place in the call) as
        arithmetic runs of first pages; the calls' waits as prefix sums (see _uniform_rpcs)."""
        P = self.P
        groups: dict = {}
        order = []
        wait = [0.0] * n
        for c in range(n):
            per_k: dict = {}
            for k, a, b, j in self._call_pieces(f, offset + c * size, offset + (c + 1) * size, chunks):
                gk = (k, _ceil_div(b, P) - a // P, b - a, j)
                groups.setdefault(gk, []).append(a // P)
                order.append((c, gk, a // P))
                # a synchronous call waits for its RPCs: per OSC they drain max_rpcs_in_flight
                # at a time (the mean of Latency.brw); the call waits for its slowest OSC
                w = per_k.setdefault(k, [0.0, 0])
                w[0] += 180 + (b - a) / 1000.0 + (min(j + 1, mxs[k]) - 1) * 25
                w[1] += 1
            wait[c] = max((t / min(cnt, mxs[k]) for k, (t, cnt) in per_k.items()), default=0.0)
        pref = [0.0]
        for w in wait:
            pref.append(pref[-1] + w)
        return {"runs": {gk: _runs(st) for gk, st in groups.items()}, "order": order,
                "calls": [c for c, _, _ in order], "wprefix": pref}

    def _dio(self, h: Handle, offset: int, size: int, count: int, write: bool) -> None:
        """count buffered calls switched to direct I/O by hybrid I/O (ll_file_io_generic with
        IOCB_DIRECT): no page cache, no read-ahead, no extent lock; each call's RPCs cover
        exactly its bytes, split at chunk and stripe boundaries, sent together. Dirty pages in
        the range are written first; a write drops the cached pages it covers."""
        f, P = h.f, self.P
        end = offset + size * count
        burst: dict = {}
        pre = 0
        for k, a, b in f.obj_ranges(offset, end):
            o = f.objs[k]
            for x, y in o.dirty.covered(a, b):
                pre += self._send_dirty(f, k, x, y, burst)
            if write:
                o.cached.remove(a // P, _ceil_div(b, P))
                f.written.add(k)
        if write:
            f.size = max(f.size, end)
        _, wait = self._uniform_rpcs(f, offset, size, count, write)
        d = "write" if write else "read"
        cadd(self.ll, f"{d}_bytes", size, count)
        cadd(self.ll, f"hybrid_{d}size_switch", 1, count)
        if self.p.has_hybrid_bytes:                     # LU-18432: per switched call
            cadd(self.ll, f"hybrid_{d}_bytes", size, count)
        if not write:
            h.last_read_end = end
            h.reads += count
        # A switched call is synchronous: it costs the copy through the unaligned-DIO bounce
        # buffer plus the wait for its own RPCs (at least one round trip). A buffered call that
        # hits read-ahead only copies pages that were fetched earlier, asynchronously, so a
        # switched call is a bit slower than that one (the sim spreads a quarter of the
        # read-ahead RPC time over buffered calls, so their average can be higher).
        base = 15 + size // 4000
        cadd_lat(self.ll, d, base, count, wait + pre // 4)

    def drop_caches(self) -> None:
        """echo 1 > drop_caches (or another client's conflicting lock): flush, then forget."""
        for f in self.files.values():
            self._flush_file(f)
            for o in f.objs:
                o.cached.clear()
            f.ext_locked.clear()

    def end_of_run(self) -> None:
        for h in list(self.handles.values()):
            self.close(h)
        burst: dict = {}
        for f in self.files.values():
            for k in range(f.sc):
                self._flush_obj(f, k, burst)


def cadd_lat(stats: dict, name: str, base: int, count: int, extra_total: int) -> None:
    """count syscall latencies of `base` usec each, plus extra_total spread over them."""
    for v, n in split_even(base * count + extra_total, count):
        cadd(stats, name, max(1, v), n)
