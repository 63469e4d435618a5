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

from .counters import cadd, split_even, tally, tally_log2
from .intervals import IntervalSet
from .version import Profile

NS = 1_000_000_000
PING_INTERVAL_S = 25          # obd_timeout 100 s / 4


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


# ----------------------------------------------------------------------------------------------
# RPC accounting on a device dict (osc or mdc of the state)

def rpc(dev: dict, opname: str, lat: int, active: int = 1, extra: str | None = None) -> None:
    s = dev["stats"]
    cadd(s, "req_waittime", lat)
    cadd(s, "req_active", active)
    cadd(s, opname, lat)
    if extra:
        cadd(s, extra, 1)


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
    __slots__ = ("f", "mode", "last_read_end", "hid")

    def __init__(self, f: File, mode: str, hid: int):
        self.f, self.mode, self.hid = f, mode, hid
        self.last_read_end: int | None = None


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
        idx = osc["index"]
        n = burst.get(idx, 0)
        burst[idx] = n + 1
        rif = min(n + 1, osc["max_rpcs_in_flight"])
        h = osc["hist"]
        d = "write" if write else "read"
        tally_log2(h[d + "_pages"], pages)
        tally(h[d + "_rif"], rif - 1 if self.p.rif_zero_based else rif)
        off = start_page
        if self.p.offset_in_chunk:
            off = start_page % max(1, (1 << 20) // self.P)
        tally_log2(h[d + "_off"], off + 1)
        lat = self.lat.brw(nbytes, rif)
        s = osc["stats"]
        cadd(s, d + "_bytes", nbytes)
        rpc(osc, "ost_write" if write else "ost_read", lat, active=rif)
        return lat

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
        f, P = h.f, self.P
        end = offset + size * count
        # dirty_pages_hits/misses (<= 2.13): page touches that found the page dirty or not
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

        f.size = max(f.size, end)
        burst: dict = {}
        rpc_lat = 0
        for k, a, b in f.obj_ranges(offset, end):
            self._lock(f, k)
            o = f.objs[k]
            idx = f.osts[k]
            before = o.dirty.total()
            o.dirty.add(a, b)
            self.osc_dirty[idx] = self.osc_dirty.get(idx, 0) + o.dirty.total() - before
            o.cached.add(a // P, _ceil_div(b, P))
            f.written.add(k)
            # a chunk of max_pages_per_rpc pages that is wholly dirty leaves at once
            ch = self._chunk(self.osc(idx)) * P
            s_, e_ = o.dirty.containing(a)
            lo, hi = _ceil_div(s_, ch) * ch, (e_ // ch) * ch
            if hi > lo:
                rpc_lat += self._send_dirty(f, k, lo, hi, burst)
            rpc_lat += self._dirty_limit(idx, burst)
        cadd(self.ll, "write_bytes", size, count)
        base = 3 + size // 3000                 # memcpy into the page cache, ~3 GB/s
        cadd_lat(self.ll, "write", base, count, rpc_lat // 8)

    def read(self, h: Handle, offset: int, size: int, count: int = 1,
             readahead: bool = True) -> None:
        """count calls of size bytes from offset on. readahead=False models a client whose
        read-ahead does nothing (max_read_ahead_mb=0, or the regression of io-findings §4):
        every call then fetches just its own pages."""
        if size <= 0 or count <= 0:
            raise ValueError("read of nothing")
        if not readahead and count > 1:
            for i in range(count):
                self.read(h, offset + i * size, size, 1, readahead=False)
            return
        f, P = h.f, self.P
        end = offset + size * count
        if end > f.size:
            raise ValueError(f"{f.path}: read [{offset}, {end}) beyond EOF {f.size}")
        seq = count >= 2 or (h.last_read_end is not None and h.last_read_end == offset)
        if not seq and h.last_read_end is not None:
            cadd(self.ra, "readpage_not_consecutive", 1)
        burst: dict = {}
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
            if seq and readahead:
                p1r = min(_ceil_div(p1, M) * M, last_page)
                if p1r == last_page and p1r > p1:
                    cadd(self.ra, "readahead_to_eof", 1)
            req_missing = sum(y - x for x, y in o.cached.missing(p0, p1))
            cadd(self.ra, "hits", 1, (p1 - p0) - req_missing)
            cadd(self.ra, "misses", 1, req_missing)
            for x, y in o.cached.missing(p0, p1r):
                while x < y:
                    z = min(y, (x // M + 1) * M)
                    rpc_lat += self._brw(osc, False, z - x, min(z * P, osz) - x * P, x, burst)
                    x = z
            o.cached.add(p0, p1r)
        h.last_read_end = end
        cadd(self.ll, "read_bytes", size, count)
        base = 2 + size // 4000
        cadd_lat(self.ll, "read", base, count, rpc_lat // 4)

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
