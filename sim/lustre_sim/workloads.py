"""Workloads: deterministic (given a seed) streams of file accesses fed to the client model.

Each workload is a function (client, fs, rng, **params) -> simulated elapsed seconds. It only
issues accesses (open, read, write, stat, ...); every counter comes out of the model. The
reference workloads are sized from notes/io-findings.md.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

from .model import Client, FsIO

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

# notes/io-findings.md §1.2-1.3: [SAINI] Table I (RPC histogram: RPCs per size bucket, the
# report's bucket labels) and Table II (Enzo)
TABLE_I_BUCKETS = ("4K", "8K", "16K", "32K", "64K", "128K", "256K", "512K", "1M")
TABLE_I_READ = (12243, 264, 56, 81, 242, 269, 543, 1812, 26572)
TABLE_I_WRITE = (393, 62, 198, 155, 96, 74, 199, 595, 52606)
TABLE_II = {"open": 5303, "close": 5769, "getattr": 12460, "statfs": 0,
            "read_bytes": 54_000_000_000, "write_bytes": 56_000_000_000}


@dataclass
class Workload:
    name: str
    fn: Callable
    summary: str
    params: dict


REGISTRY: dict[str, Workload] = {}


def workload(name: str, summary: str, **defaults):
    def deco(fn):
        REGISTRY[name] = Workload(name, fn, summary, defaults)
        return fn
    return deco


def get(name: str) -> Workload:
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown workload {name!r}; known: {', '.join(sorted(REGISTRY))}") from None


def coerce_params(w: Workload, params: dict) -> dict:
    """Fill defaults and convert CLI strings to the defaults' types ('4M' sizes accepted)."""
    out = dict(w.params)
    for k, v in params.items():
        if k not in w.params:
            raise KeyError(f"workload {w.name}: unknown parameter {k!r} "
                           f"(known: {', '.join(sorted(w.params)) or 'none'})")
        d = w.params[k]
        if isinstance(v, str):
            if isinstance(d, bool):
                v = v.strip().lower() in ("1", "true", "yes", "on", "y")
            elif isinstance(d, int) or d is None:
                v = parse_size(v) if v.lower() not in ("none", "") else None
            elif isinstance(d, float):
                v = float(v)
        out[k] = v
    return out


def parse_size(s: str) -> int:
    s = s.strip()
    mult = {"k": KiB, "m": MiB, "g": GiB, "t": 1 << 40}
    if s and s[-1].lower() in mult:
        return int(float(s[:-1]) * mult[s[-1].lower()])
    if s.lower().endswith(("kib", "mib", "gib")):
        return int(float(s[:-3]) * mult[s[-3].lower()])
    return int(s)


# ----------------------------------------------------------------------------------------------
# helpers

def partition(total: int, n: int, rng: random.Random, minimum: int = 1) -> list[int]:
    """n integers >= minimum summing to total, with a spread of sizes."""
    if n * minimum > total:
        raise ValueError(f"cannot split {total} into {n} parts >= {minimum}")
    free = total - n * minimum
    weights = [rng.lognormvariate(0, 0.9) for _ in range(n)]
    s = sum(weights)
    parts = [int(free * w / s) for w in weights]
    rem = free - sum(parts)
    order = sorted(range(n), key=lambda i: -weights[i])
    for i in range(rem):
        parts[order[i % n]] += 1
    return [p + minimum for p in parts]


def bucket_pages(i: int, rng: random.Random) -> int:
    """A page count that lands in rpc_stats row 2^i: (2^(i-1), 2^i] pages."""
    if i == 0:
        return 1
    return rng.randint((1 << (i - 1)) + 1, 1 << i)


def bytes_for_pages(p: int, P: int, rng: random.Random) -> int:
    """A byte count whose last page is partly used: ((p-1)*P, p*P]."""
    return (p - 1) * P + rng.randint(1, P)


READ_CALLS = (256 * KiB, 512 * KiB, MiB, 2 * MiB, 4 * MiB)
WRITE_CALLS = (64 * KiB, 128 * KiB, 256 * KiB, 512 * KiB, MiB)


def pick_call(size: int, rng: random.Random, choices=READ_CALLS) -> int:
    """An I/O call size for a file of `size` bytes (seq_read/seq_write do the remainder)."""
    ok = [c for c in choices if c <= size]
    return rng.choice(ok) if ok else size


def seq_read(io: FsIO, h, offset: int, nbytes: int, call: int, readahead: bool = True) -> None:
    n, rem = divmod(nbytes, call)
    if n:
        io.read(h, offset, call, n, readahead=readahead)
    if rem:
        io.read(h, offset + n * call, rem, readahead=readahead)


def seq_write(io: FsIO, h, offset: int, nbytes: int, call: int) -> None:
    n, rem = divmod(nbytes, call)
    if n:
        io.write(h, offset, call, n)
    if rem:
        io.write(h, offset + n * call, rem)


def shared_layout(io: FsIO, path: str, stripe_count=None, stripe_size=None) -> None:
    """A file that the ranks of several nodes share. Each node is its own simulated client, so
    the file is declared on every node with a layout taken from its name (as for files that
    existed before the run): every node then agrees on its OSTs, as they would on the layout the
    MDS gave when rank 0 created it. (Rank 0's node thereby skips the create, which costs only
    its first FID-sequence RPC.)"""
    if path not in io.files:
        io.existing(path, 0, stripe_count, stripe_size)


def skip_files(io: FsIO, n: int) -> None:
    """Multi-node runs: the per-process files of the n ranks on the nodes before this one were
    created first, so the round-robin start OST of this node's first file is n further on.
    Without this every simulated node would start its files on the same OST."""
    if n:
        active = sum(1 for o in io.m["osc"] if o["active"])
        io.m["next_ost"] = (io.m["next_ost"] + n) % active


def jittered(size: int, jitter: float, rng: random.Random, lo: int = 4096, hi: int | None = None,
             unit: int = 4096) -> int:
    """size x (1 + jitter x U(-1, 1)), in whole `unit`s, within [lo, hi]."""
    v = int(size * (1.0 + jitter * (2.0 * rng.random() - 1.0)))
    if hi is not None:
        v = min(v, hi)
    return max(lo, v // unit * unit)


def _check_1m_rpcs(io: FsIO, name: str) -> None:
    P = io.P
    bad = [o["index"] for o in io.m["osc"] if o["max_pages_per_rpc"] * P != MiB]
    if P != 4096 or bad:
        raise ValueError(f"{name} reproduces a 4 KiB-page, 1 MiB-RPC client (Lustre 1.8 on "
                         f"Pleiades); this client has {P}-byte pages and max_pages_per_rpc "
                         f"{io.m['osc'][0]['max_pages_per_rpc']}")


# ----------------------------------------------------------------------------------------------
# Enzo (io-findings §1.2, §1.3, §1.5)

@workload("enzo", "Enzo (NASA Pleiades study): RPC histogram = Table I, 5303 opens / 5769 closes, "
                  "12460 stats, 54 GB read / 56 GB written",
          files_out=1600, files_in=1100, inherited=466, dumps=16, fsyncs=32, elapsed=7200)
def enzo(cl: Client, fs: str, rng: random.Random, files_out: int, files_in: int, inherited: int,
         dumps: int, fsyncs: int, elapsed: int) -> float:
    """HDF5 AMR code: restart grids read sequentially (and re-read from the page cache),
    hierarchy/boundary files probed with small random reads, one packed HDF5 file per rank per
    data dump written sequentially, with its header rewritten at close.

    The RPC histogram is built, not copied: each Table I row is the outcome of accesses the model
    turns into RPCs of that many pages, e.g. a 1-page random read, a 300 KiB file tail flushed
    at close. The volumes of Table II are reached with page-cache hits (reads) and rewrites of
    still-dirty data (writes), which cost no RPC.
    """
    io = cl.fs(fs)
    _check_1m_rpcs(io, "enzo")
    P = io.P
    top = f"/enzo.{cl.st['run_seq']}"
    handle_mode = cl.p.open_tally == "handle"

    # -- random reads (hierarchy, boundary, parameter files): one RPC each, rows 1..128 pages
    rand_reads = []
    for i, n in enumerate(TABLE_I_READ[:8]):
        for _ in range(n):
            p = bucket_pages(i, rng)
            nb = rng.randint(512, P) if p == 1 else bytes_for_pages(p, P, rng)
            rand_reads.append(nb)
    rng.shuffle(rand_reads)
    rand_bytes = sum(rand_reads)

    # -- restart grids: read sequentially, 1 MiB RPCs (Table I 1024K read row)
    in_mib = partition(TABLE_I_READ[8], files_in, rng)
    in_files = [io.existing(f"{top}/restart/grid{i:05d}.h5", m * MiB) for i, m in enumerate(in_mib)]
    seq_bytes = sum(m * MiB for m in in_mib)

    # -- page-cache re-reads make up the rest of the 54 GB
    remaining = TABLE_II["read_bytes"] - seq_bytes - rand_bytes
    if remaining < 0:
        raise AssertionError("enzo: RPC reads exceed the read volume")
    rereads = []                                    # (file, bytes)
    order = list(in_files)
    rng.shuffle(order)
    i = 0
    while remaining > 0:
        f = order[i % len(order)]
        take = min(f.size, remaining)
        rereads.append((f, take))
        remaining -= take
        i += 1
    if len(rereads) < inherited and handle_mode:
        raise AssertionError("enzo: not enough re-reads to share handles")

    vfs_opens = TABLE_II["open"] + (inherited if handle_mode else 0)
    files_rand = vfs_opens - files_out - files_in - len(rereads)
    if not 1 <= files_rand <= len(rand_reads):
        raise AssertionError(f"enzo: {files_rand} hierarchy files do not fit the open budget")
    # spread the random reads over the hierarchy files
    per = [len(rand_reads) // files_rand + (1 if k < len(rand_reads) % files_rand else 0)
           for k in range(files_rand)]
    rand_files = []
    pos = 0
    for k, n in enumerate(per):
        f = io.existing(f"{top}/hierarchy/bnd{k:05d}.h5", (n + 1) * MiB + rng.randint(1, MiB))
        rand_files.append((f, rand_reads[pos:pos + n]))
        pos += n

    # -- outputs: k x 1 MiB RPCs + a tail flushed at close (rows 2..128) + a header rewrite (row 1)
    out_mib = partition(TABLE_I_WRITE[8], files_out, rng)
    tails = []
    for i, n in enumerate(TABLE_I_WRITE[1:8], start=1):
        tails += [bytes_for_pages(bucket_pages(i, rng), P, rng) for _ in range(n)]
    if len(tails) > files_out:
        raise AssertionError("enzo: more tails than output files")
    tails += [0] * (files_out - len(tails))
    rng.shuffle(tails)
    headers = [0] * files_out
    for k in rng.sample(range(files_out), TABLE_I_WRITE[0]):
        headers[k] = rng.randint(512, P)
    sizes = [m * MiB + t for m, t in zip(out_mib, tails)]
    absorbed = TABLE_II["write_bytes"] - sum(sizes) - sum(headers)
    tail_total = sum(tails)
    if absorbed < 0 or (absorbed and not tail_total):
        raise AssertionError("enzo: write volume below the RPC volume")
    rewrites = [absorbed * t // tail_total for t in tails]
    short = absorbed - sum(rewrites)
    for k in sorted(range(files_out), key=lambda k: -tails[k])[:short]:
        rewrites[k] += 1
    fsync_set = set(rng.sample(range(files_out), min(fsyncs, files_out)))
    setattr_set = set(rng.sample(range(files_out), min(dumps, files_out)))

    # -- stats: fstat after each open and stat after each close; the rest probe restart files
    extra_stats = TABLE_II["getattr"] - 2 * vfs_opens
    if extra_stats < 0:
        raise AssertionError("enzo: stat budget below 2 per open")

    cl.notes.update(restart_files=files_in, reread_opens=len(rereads), hierarchy_files=files_rand,
                    output_files=files_out, random_reads=len(rand_reads), tails=sum(1 for t in tails if t),
                    header_rewrites=TABLE_I_WRITE[0], absorbed_rewrite_bytes=absorbed,
                    cached_reread_bytes=TABLE_II["read_bytes"] - seq_bytes - rand_bytes,
                    extra_stats=extra_stats, shared_opens=inherited if handle_mode else 0,
                    resident_closes=0 if handle_mode else inherited)
    # ================================ the job ================================
    for d in range(dumps):
        io.mkdir(f"{top}/DD{d:04d}")
    if not handle_mode and inherited:
        io.close_resident(inherited)

    for k in range(extra_stats):                    # ls -l / stat of the restart directory
        io.stat(in_files[k % len(in_files)].path)

    shared = {id(f): nb for f, nb in rereads[:inherited]} if handle_mode else {}
    later = rereads[inherited:] if handle_mode else rereads
    for f in in_files:                              # pass 1: restart grids
        h = io.open(f.path, "r")
        io.stat(h)
        io.seek(h)
        seq_read(io, h, 0, f.size, pick_call(f.size, rng))
        if id(f) in shared:                         # another rank opens it meanwhile
            h2 = io.open(f.path, "r")
            io.stat(h2)
            seq_read(io, h2, 0, shared.pop(id(f)), MiB)
            io.close(h2)
            io.stat(f.path)
        io.close(h)
        io.stat(f.path)
    if shared:                                      # a file picked twice for sharing
        for f in in_files:
            if id(f) in shared:
                h = io.open(f.path, "r")
                io.stat(h)
                seq_read(io, h, 0, shared.pop(id(f)), MiB)
                io.close(h)
                io.stat(f.path)

    for f, reads in rand_files:                     # hierarchy / boundary probes
        h = io.open(f.path, "r")
        io.stat(h)
        chunks = list(range(len(reads)))
        rng.shuffle(chunks)
        for c, nb in zip(chunks, reads):
            io.read(h, c * MiB, nb)
        io.close(h)
        io.stat(f.path)

    for k in range(files_out):                      # data dumps
        path = f"{top}/DD{k % dumps:04d}/data{k:05d}.cpu{k // dumps:04d}"
        h = io.open(path, "w", create=True, stripe_count=1)
        io.stat(h)
        seq_write(io, h, 0, sizes[k], pick_call(sizes[k], rng, WRITE_CALLS))
        t, a = tails[k], rewrites[k]
        if a:
            base = sizes[k] - t
            full, part = divmod(a, t)
            for _ in range(full):
                io.write(h, base, t)
            if part:
                io.write(h, base, part)
        if headers[k]:
            io.write(h, 0, headers[k])
        if k in setattr_set:
            io.setattr(h)
        if k in fsync_set:
            io.fsync(h)
        io.close(h)
        io.stat(path)

    for f, nb in later:                             # pass 2: grids again, from the page cache
        h = io.open(f.path, "r")
        io.stat(h)
        seq_read(io, h, 0, nb, MiB)
        io.close(h)
        io.stat(f.path)
    return float(elapsed)


# ----------------------------------------------------------------------------------------------
# Overflow (io-findings §1.6, F.5 at 8 cores)

@workload("overflow", "Overflow-like, 8 cores: rank 0 reads a ~2 GB grid and writes a ~3 GB "
                      "restart in 1 MiB RPCs; 40 opens, 264 4K read and 25 4K write RPCs",
          ranks=8, grid_mib=1860, restart_mib=2850, small_reads=258, elapsed=1800)
def overflow(cl: Client, fs: str, rng: random.Random, ranks: int, grid_mib: int, restart_mib: int,
             small_reads: int, elapsed: int) -> float:
    """small_reads: the one-page record reads of the x-ray file. With the 6 first reads of the
    namelists they make the 4K read row: 258 gives F.5's 264 at 8 cores; F.5 has 2016 at 128
    cores, i.e. ranks=128, small_reads=2010."""
    io = cl.fs(fs)
    _check_1m_rpcs(io, "overflow")
    P = io.P
    top = f"/overflow.{cl.st['run_seq']}"
    io.statfs()
    grids = [io.existing(f"{top}/grid.in.{i}", m * MiB)
             for i, m in enumerate(partition(grid_mib, 3, rng, minimum=100))]
    # random record reads: 258 one-page, 100 in the 512K row, 40 in the 256K row, a few between
    recs = [rng.randint(256, P) for _ in range(small_reads)]
    recs += [bytes_for_pages(bucket_pages(7, rng), P, rng) for _ in range(100)]
    recs += [bytes_for_pages(bucket_pages(6, rng), P, rng) for _ in range(40)]
    for i in (1, 2, 3, 4, 5):
        recs += [bytes_for_pages(bucket_pages(i, rng), P, rng) for _ in range(3)]
    rng.shuffle(recs)
    conn = io.existing(f"{top}/xrays.in", (len(recs) + 2) * MiB)
    configs = [io.existing(f"{top}/{n}", rng.randint(300, 3800))
               for n in ("over.namelist", "mixsur.inp", "body.inp", "config.dat", "boundary.inp",
                         "grdwght.in")]

    for g in grids:                                  # rank 0: header probe, then the grid
        h = io.open(g.path, "r")
        io.stat(h)
        io.read(h, 0, 64 * KiB)
        io.close(h)
        h = io.open(g.path, "r")
        io.stat(h)
        seq_read(io, h, 0, g.size, 4 * MiB)
        io.close(h)
    chunks = list(range(len(recs)))
    rng.shuffle(chunks)
    share = [chunks[i::4] for i in range(4)]
    for r in range(4):                               # 4 ranks read their part of the x-rays
        h = io.open(conn.path, "r")
        io.stat(h)
        for c in share[r]:
            io.read(h, c * MiB, recs[c])
        io.close(h)
    for i, f in enumerate(configs):                  # namelists: everyone reads two of them
        readers = ranks if i < 2 else 1
        for _ in range(readers):
            h = io.open(f.path, "r")
            io.stat(h)
            io.read(h, 0, f.size)
            io.close(h)

    # restart file (rank 0), tail in the 512K row
    q = f"{top}/q.save"
    h = io.open(q, "w", create=True, stripe_count=1)
    size = restart_mib * MiB + bytes_for_pages(bucket_pages(7, rng), P, rng)
    seq_write(io, h, 0, size, 4 * MiB)
    io.close(h)
    io.stat(q)
    # per-rank solution pieces: 1 MiB + a tail in the 512K / 256K rows
    for r in range(ranks):
        p = f"{top}/fort.{60 + r}"
        h = io.open(p, "w", create=True, stripe_count=1)
        tail = bytes_for_pages(bucket_pages(7 if r < ranks // 2 else 6, rng), P, rng)
        seq_write(io, h, 0, MiB + tail, MiB)
        io.close(h)
    # convergence history: an append and an fsync per 10 steps -> 25 one-page RPCs
    p = f"{top}/resid.out"
    h = io.open(p, "w", create=True, stripe_count=1)
    off = 0
    for _ in range(25):
        n = rng.randint(120, 160)
        io.write(h, off, n)
        off += n
        io.fsync(h)
    io.close(h)
    io.stat(p)
    return float(elapsed)


# ----------------------------------------------------------------------------------------------
# Background activity and long-lived handles

@workload("background", "unrelated earlier activity: small and medium files, stats, a statfs, "
                        "and files held open by resident processes",
          files=60, medium=4, resident=1000, elapsed=600)
def background(cl: Client, fs: str, rng: random.Random, files: int, medium: int, resident: int,
               elapsed: int) -> float:
    io = cl.fs(fs)
    top = f"/home.bg{cl.st['run_seq']}"
    io.statfs()
    for d in ("src", "logs", "data"):
        io.mkdir(f"{top}/{d}")
        io.readdir(f"{top}/{d}", rng.randint(20, 300))
    paths = []
    for i in range(files):
        p = f"{top}/src/f{i:04d}"
        h = io.open(p, "w", create=True)
        io.stat(h)
        sz = rng.randint(200, 64 * KiB)
        seq_write(io, h, 0, sz, min(sz, 8 * KiB))
        if i % 10 == 0:
            io.fsync(h)
        io.close(h)
        paths.append(p)
    io.drop_caches()
    for p in rng.sample(paths, min(20, len(paths))):
        h = io.open(p, "r")
        f = h.f
        seq_read(io, h, 0, f.size, min(f.size, 4 * KiB))
        io.close(h)
        io.stat(p)
    for i in range(medium):
        p = f"{top}/data/m{i}"
        h = io.open(p, "w", create=True)
        sz = rng.randint(8, 40) * MiB + rng.randint(0, MiB)
        seq_write(io, h, 0, sz, MiB)
        io.close(h)
        io.drop_caches()
        h = io.open(p, "r")
        seq_read(io, h, 0, sz, 256 * KiB)
        io.close(h)
    for p in paths[:10]:
        io.unlink(p)
    io.statfs()
    if resident:
        io.open_resident(resident)
    return float(elapsed)


@workload("hold-open", "open files that stay open after the run (long-lived processes)", count=466)
def hold_open(cl: Client, fs: str, rng: random.Random, count: int) -> float:
    cl.fs(fs).open_resident(count)
    return 1.0


@workload("release", "close files held open by long-lived processes", count=466)
def release(cl: Client, fs: str, rng: random.Random, count: int) -> float:
    cl.fs(fs).close_resident(count)
    return 1.0


# ----------------------------------------------------------------------------------------------
# IOR (io-findings §1.4 Table III, §3.3)

@workload("ior", "IOR POSIX: tasks x segments x block_size in transfer_size calls, "
                 "file per process or one shared file, write and/or read phase",
          tasks=8, block_size=16 * MiB, transfer_size=MiB, segments=1, file_per_process=True,
          write=True, read=True, fsync=True, reorder=True, stripe_count=None, stripe_size=None,
          first_task=None, elapsed=None)
def ior(cl: Client, fs: str, rng: random.Random, tasks: int, block_size: int, transfer_size: int,
        segments: int, file_per_process: bool, write: bool, read: bool, fsync: bool, reorder: bool,
        stripe_count, stripe_size, first_task=None, elapsed=None) -> float:
    """tasks: the tasks on this client. first_task: for a file-per-process job over several
    nodes, the first task of this node (its files are named by the global task number and
    continue the round-robin of the nodes before); None = a one-node job.
    elapsed: the job's duration in seconds; None = the transfer time at 1.5 GB/s (at least 1 s)."""
    if block_size % transfer_size:
        raise ValueError("IOR: block_size must be a multiple of transfer_size")
    io = cl.fs(fs)
    top = f"/ior.{cl.st['run_seq']}"
    calls = block_size // transfer_size
    first = first_task or 0

    def path(t):
        return f"{top}/testFile.{first + t:08d}" if file_per_process else f"{top}/testFile"

    def offset(t, s):
        return s * block_size if file_per_process else (s * tasks + t) * block_size

    moved = 0
    tl = range(tasks)
    if first_task is not None:
        if not file_per_process:
            raise ValueError("IOR: first_task is for file-per-process runs")
        skip_files(io, first)
    if write:                       # tasks run concurrently: open all, write, fsync, close all
        hs = [io.open(path(t), "w", create=True, stripe_count=stripe_count, stripe_size=stripe_size)
              for t in tl]
        for s in range(segments):
            for t in tl:
                io.write(hs[t], offset(t, s), transfer_size, calls)
        for h in hs:
            if fsync:
                io.fsync(h)
            io.close(h)
        moved += tasks * segments * block_size
    if read:
        if reorder:
            io.drop_caches()          # -C: each task reads what another node wrote
        size = segments * block_size if file_per_process else tasks * segments * block_size
        for t in tl:
            if path(t) not in io.files:
                io.existing(path(t), size, stripe_count, stripe_size)
        hs = [io.open(path(t), "r") for t in tl]
        for h in hs:
            io.stat(h)
        for s in range(segments):
            for t in tl:
                io.read(hs[t], offset(t, s), transfer_size, calls)
        for h in hs:
            io.close(h)
        moved += tasks * segments * block_size
    return float(elapsed) if elapsed is not None else max(1.0, moved / 1.5e9)


# ----------------------------------------------------------------------------------------------
# More reference patterns (io-findings §3, §4)

@workload("seqread", "sequential read of existing files in small calls; readahead=false gives the "
                     "read-ahead regression of io-findings §4 (1 MiB RPCs become call-sized RPCs)",
          files=1, size=256 * MiB, call=8 * KiB, readahead=True, stripe_count=None, jitter=0.0,
          elapsed=600)
def seqread(cl: Client, fs: str, rng: random.Random, files: int, size: int, call: int,
            readahead: bool, stripe_count, jitter: float, elapsed: int) -> float:
    """jitter: each file's size is size x (1 +- jitter), drawn from the run's seed (whole 4 KiB
    pages); 0 = every file exactly `size` bytes."""
    io = cl.fs(fs)
    top = f"/seqread.{cl.st['run_seq']}"
    for i in range(files):
        f = io.existing(f"{top}/input.{i}", jittered(size, jitter, rng) if jitter else size,
                        stripe_count)
        h = io.open(f.path, "r")
        io.stat(h)
        seq_read(io, h, 0, f.size, call, readahead)
        io.close(h)
    return float(elapsed)


@workload("mitgcm", "MITgcm-like: the grid read in 4 KiB records (4K RPCs), an 8 GB checkpoint in "
                    "1 MiB RPCs, thousands of small per-rank files (open storm)",
          ranks=240, grid_mib=256, checkpoint_mib=8192, files_per_rank=8, elapsed=3600)
def mitgcm(cl: Client, fs: str, rng: random.Random, ranks: int, grid_mib: int, checkpoint_mib: int,
           files_per_rank: int, elapsed: int) -> float:
    """io-findings §1.6 F.8 / §2.6. grid_mib defaults to a quarter of the paper's 1 GB to keep the
    simulation quick (each 4 KiB record read is simulated individually)."""
    io = cl.fs(fs)
    P = io.P
    top = f"/mitgcm.{cl.st['run_seq']}"
    grid = io.existing(f"{top}/input/grid.bin", grid_mib * MiB)
    # Fortran direct-access records read in tile order: strided, so no read-ahead help
    nrec = grid.size // P
    h = io.open(grid.path, "r")
    io.stat(h)
    stride = 7
    for k in range(stride):
        for rec in range(k, nrec, stride):
            io.read(h, rec * P, P)
    io.close(h)
    # checkpoint by rank 0, Fortran sequential unformatted, 1 MiB RPCs
    ck = f"{top}/pickup.ckpt"
    h = io.open(ck, "w", create=True, stripe_count=4)
    seq_write(io, h, 0, checkpoint_mib * MiB, 4 * MiB)
    io.close(h)
    # per-rank diagnostics: small files, 4 KiB .. 1 MiB, about 1 GB in all
    for r in range(ranks):
        for j in range(files_per_rank):
            p = f"{top}/diags/r{r:04d}.{j}.data"
            h = io.open(p, "w", create=True, stripe_count=1)
            sz = int(rng.lognormvariate(12.5, 1.0)) + 1
            sz = min(sz, 2 * MiB)
            seq_write(io, h, 0, sz, min(sz, 64 * KiB))
            io.close(h)
            io.stat(p)
    return float(elapsed)


@workload("madbench", "MADbench2 (Borrill et al.): per process 2*NBIN writes and 2*NBIN reads of "
                      "8*NPIX^2/P bytes, unique or shared file",
          npix=12500, nbin=8, procs=16, shared=False, stripe_count=None, node_procs=None,
          first_proc=None, elapsed=1800)
def madbench(cl: Client, fs: str, rng: random.Random, npix: int, nbin: int, procs: int, shared: bool,
             stripe_count, node_procs, first_proc, elapsed: int) -> float:
    """procs: the job's processes (they set the call size 8*NPIX^2/procs). By default all run on
    this client. For a job over several nodes run it on each node with node_procs (the processes
    of that node) and first_proc (its first rank): the shared file then has the same layout on
    every node and per-process files continue the round-robin of the nodes before."""
    io = cl.fs(fs)
    top = f"/madbench.{cl.st['run_seq']}"
    call = 8 * npix * npix // procs
    first = first_proc or 0
    mine = range(first, first + (procs if node_procs is None else node_procs))
    if not 0 < len(mine) <= procs - first:
        raise ValueError("madbench: first_proc + node_procs must be within procs")

    def path(p):
        return f"{top}/data" if shared else f"{top}/data.{p:04d}"

    def off(p, b):
        return (p * nbin + b) * call if shared else b * call

    if first_proc is not None:
        if shared:
            shared_layout(io, path(0), stripe_count)
        else:
            skip_files(io, first)
    hs = {p: io.open(path(p), "w", create=True, stripe_count=stripe_count) for p in mine}
    for b in range(nbin):                        # S: build and write the matrices
        for p in mine:
            io.write(hs[p], off(p, b), call)
    for h in hs.values():
        io.close(h)
    io.drop_caches()                             # the run fills 73 % of memory: no cache help
    hs = {p: io.open(path(p), "rw") for p in mine}
    for b in range(nbin):                        # W: read, busy-work, write back
        for p in mine:
            io.read(hs[p], off(p, b), call)
            io.write(hs[p], off(p, b), call)
    for h in hs.values():
        io.close(h)
    io.drop_caches()
    hs = {p: io.open(path(p), "r") for p in mine}
    for b in range(nbin):                        # C: read pairs
        for p in mine:
            io.read(hs[p], off(p, b), call)
    for h in hs.values():
        io.close(h)
    return float(elapsed)


@workload("boito", "MPI-IO Test classes of Boito et al.: pattern=sfsa-nonstrided|sfsa-strided|mfwa, "
                   "nseg requests of size/nseg per process, the ranks of this node only",
          pattern="sfsa-nonstrided", procs=40, node_ranks=1, per_proc=256 * MiB, nseg=32,
          stripe_size=64 * KiB, stripe_count=4, phase="both", first_rank=None, elapsed=600)
def boito(cl: Client, fs: str, rng: random.Random, pattern: str, procs: int, node_ranks: int,
          per_proc: int, nseg: int, stripe_size: int, stripe_count: int, phase: str,
          first_rank, elapsed: int) -> float:
    """node_ranks: the ranks on this client, by default ranks 0..node_ranks-1. For the -SMP
    classes over several nodes (4 procs/node x 10 nodes) run it on each node with first_rank
    = the node's first rank: the shared file then has the same layout on every node, and MFWA
    files continue the round-robin of the nodes before."""
    if pattern not in ("sfsa-nonstrided", "sfsa-strided", "mfwa"):
        raise ValueError("boito: pattern is sfsa-nonstrided, sfsa-strided or mfwa")
    io = cl.fs(fs)
    top = f"/boito.{cl.st['run_seq']}"
    s = per_proc // nseg
    if s <= 0:
        raise ValueError("boito: per_proc/nseg must be at least one byte")

    def path(i):
        return f"{top}/mfwa.{i:04d}" if pattern == "mfwa" else f"{top}/sfsa"

    def offset(i, k):
        if pattern == "sfsa-nonstrided":
            return i * per_proc + k * s
        if pattern == "sfsa-strided":
            return (k * procs + i) * s
        return k * s

    first = first_rank or 0
    ranks = range(first, first + node_ranks)
    if first + node_ranks > procs:
        raise ValueError("boito: first_rank + node_ranks must be within procs")
    if first_rank is not None:
        if pattern == "mfwa":
            skip_files(io, first)
        else:
            shared_layout(io, path(first), stripe_count, stripe_size)
    # the ranks of a node run concurrently: open all, issue the requests interleaved, close all
    if phase in ("write", "both"):
        hs = {i: io.open(path(i), "w", create=True, stripe_count=stripe_count, stripe_size=stripe_size)
              for i in ranks}
        if pattern == "sfsa-strided":
            for k in range(nseg):
                for i in ranks:
                    io.write(hs[i], offset(i, k), s)
        else:
            for i in ranks:
                io.write(hs[i], offset(i, 0), s, nseg)
        for h in hs.values():
            io.close(h)
    if phase in ("read", "both"):
        io.drop_caches()                          # clients restart between the phases
        for i in ranks:
            size = per_proc if pattern == "mfwa" else procs * per_proc
            if path(i) not in io.files:
                io.existing(path(i), size, stripe_count, stripe_size)
            f = io.files[path(i)]
            f.size = max(f.size, size)
        hs = {i: io.open(path(i), "r") for i in ranks}
        if pattern == "sfsa-strided":
            for k in range(nseg):
                for i in ranks:
                    io.read(hs[i], offset(i, k), s)
        else:
            for i in ranks:
                io.read(hs[i], offset(i, 0), s, nseg)
        for h in hs.values():
            io.close(h)
    return float(elapsed)


@workload("postmark", "Cluster PostMark (Sebepou et al.): a private file set, transactions pair a "
                      "create or delete with a whole-file read or an append; config a|b|c",
          config="c", transactions=2000, files=None, stripe_count=1, stripe_size=None, elapsed=600)
def postmark(cl: Client, fs: str, rng: random.Random, config: str, transactions: int, files,
             stripe_count: int, stripe_size, elapsed: int) -> float:
    """stripe_count/stripe_size: the layout of every file. Sebepou et al. striped round-robin in
    64 KB units over all 12 servers (stripe_count=-1, stripe_size=64K on a 12-OST filesystem)."""
    cfgs = {"a": (100, 10 * MiB, 100 * MiB, 64 * KiB, 2 * MiB),
            "b": (800, MiB, 10 * MiB, 16 * KiB, MiB),
            "c": (8000, 4 * KiB, MiB, 4 * KiB, 128 * KiB)}
    if config not in cfgs:
        raise ValueError("postmark: config is a, b or c")
    n, smin, smax, bmin, bmax = cfgs[config]
    n = files or n
    io = cl.fs(fs)
    top = f"/postmark.{cl.st['run_seq']}"
    live: list[str] = []
    seq = 0

    def create():
        nonlocal seq
        p = f"{top}/s{seq % 16}/f{seq:06d}"
        seq += 1
        h = io.open(p, "w", create=True, stripe_count=stripe_count, stripe_size=stripe_size)
        seq_write(io, h, 0, rng.randint(smin, smax), rng.randint(bmin, bmax))
        io.close(h)
        live.append(p)

    for d in range(16):
        io.mkdir(f"{top}/s{d}")
    for _ in range(n):
        create()
    for _ in range(transactions):
        if rng.random() < 0.5 or not live:
            create()
        else:
            io.unlink(live.pop(rng.randrange(len(live))))
        if not live:
            continue
        p = rng.choice(live)
        if rng.random() < 1 / 3:
            h = io.open(p, "r")
            seq_read(io, h, 0, h.f.size, rng.randint(bmin, bmax))
        else:
            h = io.open(p, "w")
            io.write(h, h.f.size, rng.randint(bmin, bmax))
        io.close(h)
    for p in live:
        io.unlink(p)
    return float(elapsed)


# ----------------------------------------------------------------------------------------------
# The NASA codes of the Pleiades study that behave well (io-findings §1.6, §3.3): Cart3D, USM3D.
# They funnel their I/O through rank 0, open < 60 files and move most data in 1 MiB RPCs.

@workload("cart3d", "Cart3D-like, 8 cores (io-findings §1.6 F.6): rank 0 reads a 1.63 GiB mesh in "
                    "1 MiB RPCs (1667 of them) and again from the page cache (4 GB read), 300 4K "
                    "record reads, 1 GiB of output written back under memory pressure in 512K RPCs "
                    "(no 1M writes); < 60 opens",
          ranks=8, mesh_mib=1667, read_bytes=4_000_000_000, small_reads=300, output_mib=1024,
          writeback=512 * KiB, history=20, elapsed=1800)
def cart3d(cl: Client, fs: str, rng: random.Random, ranks: int, mesh_mib: int, read_bytes: int,
           small_reads: int, output_mib: int, writeback: int, history: int, elapsed: int) -> float:
    """[SAINI] F.6 (8-128 cores): RPCs are mostly 4 KB or 1024 KB; 1662-1672 1024 KB reads at
    every core count; no 1024 KB writes; 4 KB reads far above 4 KB writes. F.2: 4 GB read, 1 GB
    written; §VII: input 1.8 GB (the two conflict, io-findings §5).

    * mesh_mib: the mesh, read once from the OSTs by rank 0 -> mesh_mib 1 MiB RPCs (§VII's
      1.8 GB input). The rest of F.2's 4 GB (read_bytes) is re-read from the page cache
      (the partitioner reads the mesh again), as Enzo's reads do (io-findings §1.5).
    * small_reads: one-page record reads of the surface triangulation, each of an uncached page
      with no sequential run, so each is one 4K RPC. F.6 gives no count (a plot); 300 at 8
      cores is ours, of the order of Overflow's 264 (F.5).
    * output_mib written by rank 0 in `writeback`-sized calls. The paper shows no 1024 KB write
      RPC and does not say why; here the solver's memory footprint leaves the page cache under
      pressure, so the kernel writes dirty pages back (and drops clean ones) every `writeback`
      bytes: partial RPCs, a flush trigger listed in io-findings §2.2 ([BOITO] §3). 512 KiB
      puts every output RPC in the 512K row.
    * history: appends to the convergence history, each followed by an fsync (one 4K RPC each).
    """
    io = cl.fs(fs)
    _check_1m_rpcs(io, "cart3d")
    P = io.P
    top = f"/cart3d.{cl.st['run_seq']}"
    io.statfs()
    cntl = io.existing(f"{top}/input.c3d.cntl", rng.randint(2000, 6000))
    others = [io.existing(f"{top}/{n}", rng.randint(300, 3800)) for n in ("aero.csh", "Config.xml")]
    for r in range(ranks):                         # every rank parses the control file
        h = io.open(cntl.path, "r")
        io.stat(h)
        io.read(h, 0, cntl.size)
        io.close(h)
    for f in others:                               # rank 0 reads the rest
        h = io.open(f.path, "r")
        io.read(h, 0, f.size)
        io.close(h)
    mesh = io.existing(f"{top}/Mesh.mg.c3d", mesh_mib * MiB)
    h = io.open(mesh.path, "r")
    io.stat(h)
    seq_read(io, h, 0, mesh.size, 4 * MiB)
    io.close(h)
    tri = io.existing(f"{top}/Components.i.tri", (small_reads + 2) * MiB)
    recs = [rng.randint(256, P) for _ in range(small_reads)]
    slots = list(range(small_reads))
    rng.shuffle(slots)
    h = io.open(tri.path, "r")
    io.stat(h)
    for c, nb in zip(slots, recs):
        io.read(h, c * MiB, nb)
    io.close(h)
    done = mesh.size + sum(recs) + cntl.size * ranks + sum(f.size for f in others)
    remaining = read_bytes - done
    while remaining > 0:                           # the partitioner's pass, from the page cache
        take = min(mesh.size, remaining)
        h = io.open(mesh.path, "r")
        seq_read(io, h, 0, take, 4 * MiB)
        io.close(h)
        remaining -= take
    # output: check file written by rank 0, written back every `writeback` bytes
    out = f"{top}/check.01000"
    h = io.open(out, "w", create=True)
    total = output_mib * MiB
    for off in range(0, total, writeback):
        io.write(h, off, min(writeback, total - off))
        io.drop_caches()                           # memory pressure: write back, drop clean pages
    io.close(h)
    io.stat(out)
    hist = f"{top}/history.dat"
    h = io.open(hist, "w", create=True)
    off = 0
    for _ in range(history):
        n = rng.randint(90, 140)
        io.write(h, off, n)
        off += n
        io.fsync(h)
    io.close(h)
    return float(elapsed)


@workload("usm3d", "USM3D-like, 32 cores (io-findings §1.6 F.7): rank 0 reads a 6 GB grid in 1 MiB "
                   "RPCs plus 600 4K record reads of the boundary data, writes a 1 GB solution in "
                   "1 MiB RPCs; < 60 opens",
          ranks=32, grid_bytes=6_000_000_000, small_reads=600, solution_bytes=1_000_000_000,
          elapsed=3600)
def usm3d(cl: Client, fs: str, rng: random.Random, ranks: int, grid_bytes: int, small_reads: int,
          solution_bytes: int, elapsed: int) -> float:
    """[SAINI] F.7 (32/64/128 cores): writes (1 GB) mostly as 1024 KB RPCs; reads (the 6 GB
    grid) as 4 KB and 1024 KB RPCs; F.2: 6 GB read, 1 GB written (§VII says 1 GB in, 8 GB out,
    a conflict, io-findings §5); opens < 60 at these core counts (F.3/F.4).

    * grid_bytes: the grid, read sequentially by rank 0 in 4 MiB calls (1 MiB RPCs).
    * small_reads: one-page reads of boundary-condition records at scattered offsets (one 4K
      RPC each). F.7 gives no count; 600 at 32 cores is ours.
    * solution_bytes: the flow solution, written sequentially by rank 0 (1 MiB RPCs and a tail).
    * every rank reads the input deck once; rank 0 also appends to a residual history.
    """
    io = cl.fs(fs)
    _check_1m_rpcs(io, "usm3d")
    P = io.P
    top = f"/usm3d.{cl.st['run_seq']}"
    inp = io.existing(f"{top}/case.inpt", rng.randint(1500, 4000))
    for r in range(ranks):
        h = io.open(inp.path, "r")
        io.stat(h)
        io.read(h, 0, inp.size)
        io.close(h)
    mapbc = io.existing(f"{top}/case.mapbc", rng.randint(500, 3000))
    h = io.open(mapbc.path, "r")
    io.read(h, 0, mapbc.size)
    io.close(h)
    grid = io.existing(f"{top}/case.cogsg", grid_bytes)
    h = io.open(grid.path, "r")
    io.stat(h)
    seq_read(io, h, 0, grid.size, 4 * MiB)
    io.close(h)
    bc = io.existing(f"{top}/case.bc", (small_reads + 2) * MiB)
    slots = list(range(small_reads))
    rng.shuffle(slots)
    h = io.open(bc.path, "r")
    io.stat(h)
    for c in slots:
        io.read(h, c * MiB, rng.randint(256, P))
    io.close(h)
    sol = f"{top}/case.flo"
    h = io.open(sol, "w", create=True)
    seq_write(io, h, 0, solution_bytes, 4 * MiB)
    io.close(h)
    io.stat(sol)
    hist = f"{top}/case_hist.dat"
    h = io.open(hist, "w", create=True)
    seq_write(io, h, 0, rng.randint(20_000, 60_000), 80)
    io.close(h)
    return float(elapsed)


# ----------------------------------------------------------------------------------------------
# Stripe width with small I/O (io-findings §2.4, §3.4)

@workload("yu", "Yu et al. single-client stripe-width tests: test=dd (2 GiB in 512 B writes, then "
                "read back in 512 B reads) or iozone (a 4 GiB file in 64 KiB records: write, "
                "rewrite, read, reread), one file striped over stripe_count OSTs (-1 = all)",
          test="dd", size=None, record=None, stripe_count=-1, stripe_size=None, elapsed=300)
def yu(cl: Client, fs: str, rng: random.Random, test: str, size, record, stripe_count: int,
       stripe_size, elapsed: int) -> float:
    """[YU] §2.2 T.1: `dd if=/dev/zero of=/Lustre/file count=4M` (512 B blocks, 2 GiB) and the
    matching read; `iozone -e -i 0|1 ... -s 4194304 -r 64K` (4 GiB in 64 KB records; -i 0 is
    write + rewrite, -i 1 is read + reread, -e adds the fsync). Single client, stripe width
    1-64 OSTs. The file is larger than the client's cache, so the read phase starts cold; the
    reread is served by the pages the read left.

    Buffered and sequential, so the client still sends 1 MiB RPCs whatever the width: what
    Yu measured (no gain from width for 512 B, losses beyond 4-8 OSTs for 64 KB records) is
    per-OST protocol work, which the counters show only as the number of OSTs touched.
    """
    if test not in ("dd", "iozone"):
        raise ValueError("yu: test is dd or iozone")
    io = cl.fs(fs)
    top = f"/yu.{cl.st['run_seq']}"
    size = size or (2 * GiB if test == "dd" else 4 * GiB)
    record = record or (512 if test == "dd" else 64 * KiB)
    if size % record:
        raise ValueError("yu: size must be a multiple of record")
    n = size // record
    path = f"{top}/file"
    h = io.open(path, "w", create=True, stripe_count=stripe_count, stripe_size=stripe_size)
    io.write(h, 0, record, n)
    if test == "iozone":
        io.fsync(h)
        io.write(h, 0, record, n)                  # rewrite
        io.fsync(h)
    io.close(h)
    io.drop_caches()
    h = io.open(path, "r")
    io.read(h, 0, record, n)
    if test == "iozone":
        io.read(h, 0, record, n)                   # reread
    io.close(h)
    return float(elapsed)


# ----------------------------------------------------------------------------------------------
# Rank-0 funnelled I/O (io-findings §2.10, §3.3)

@workload("rank0", "rank-0 funnelled I/O: role=root reads the input and writes the gathered "
                   "output (SWR-like) on this node, role=worker nodes only read the namelists",
          role="root", ranks=12, input_mib=1024, output_mib=4096, stripe_count=None, namelists=2,
          elapsed=1800)
def rank0(cl: Client, fs: str, rng: random.Random, role: str, ranks: int, input_mib: int,
          output_mib: int, stripe_count, namelists: int, elapsed: int) -> float:
    """[SAINI] §II, §VII, §VIII.C: most NASA codes read and write through rank 0, which then
    scatters and gathers by MPI; SWR "mimics rank-0 gather/write". Run it on every node of the
    job: role=root on rank 0's node, role=worker elsewhere. ranks = ranks on this node; every
    rank reads the namelists (one-page files). The root reads input_mib sequentially and writes
    output_mib sequentially in 4 MiB calls (1 MiB RPCs) to a file of stripe_count OSTs (None =
    the filesystem default, 1 as on Pleiades)."""
    if role not in ("root", "worker"):
        raise ValueError("rank0: role is root or worker")
    io = cl.fs(fs)
    top = "/rank0"
    nml = [io.existing(f"{top}/run.{k}.nml", 800 + 700 * k) for k in range(namelists)]
    for r in range(ranks):
        for f in nml:
            h = io.open(f.path, "r")
            io.read(h, 0, f.size)
            io.close(h)
    if role == "root":
        inp = io.existing(f"{top}/input.{cl.st['run_seq']}.grid", input_mib * MiB, stripe_count)
        h = io.open(inp.path, "r")
        io.stat(h)
        seq_read(io, h, 0, inp.size, 4 * MiB)
        io.close(h)
        out = f"{top}/restart.{cl.st['run_seq']}"
        h = io.open(out, "w", create=True, stripe_count=stripe_count)
        seq_write(io, h, 0, output_mib * MiB, 4 * MiB)
        io.close(h)
        io.stat(out)
    return float(elapsed)


# ----------------------------------------------------------------------------------------------
# Read-ahead over-fetch by strided reads (io-findings §2.2)

@workload("strided-read", "one field of a record-interleaved file read record by record: each "
                          "field is a short sequential run, so read-ahead fetches to the end of "
                          "the 1 MiB chunk and the rest is never used",
          records=2048, record=64 * KiB, fields=16, field=0, calls=4, procs=1, stripe_count=4,
          elapsed=600)
def strided_read(cl: Client, fs: str, rng: random.Random, records: int, record: int, fields: int,
                 field: int, calls: int, procs: int, stripe_count: int, elapsed: int) -> float:
    """[BOITO] §3: read-ahead opens a 1 MB window once it sees a sequential run, and "may fail
    with large stride sizes"; §5.2: strided reads suffer more than strided writes "because the
    read-ahead ... requests too much data that are not used by the client".

    The file holds `records` records of `fields` fields of `record` bytes (a netCDF record
    variable, or an array of structures); the job wants field `field` only, so its reads are
    `record` bytes at a stride of fields*record. Each is read in `calls` contiguous calls: a
    sequential run, so the model's read-ahead (to the end of the 1 MiB chunk, README) fetches
    the other fields of the chunk too, and the next record starts in another chunk. With the
    defaults every 64 KiB read costs one 1 MiB RPC: 16x over-fetch. procs readers on this node
    take the records round-robin."""
    if record % calls or not 0 <= field < fields:
        raise ValueError("strided-read: record must be a multiple of calls and field < fields")
    io = cl.fs(fs)
    top = f"/strided.{cl.st['run_seq']}"
    f = io.existing(f"{top}/fields.nc", records * fields * record, stripe_count)
    hs = [io.open(f.path, "r") for _ in range(procs)]
    for h in hs:
        io.stat(h)
    for k in range(records):
        io.read(hs[k % procs], (k * fields + field) * record, record // calls, calls)
    for h in hs:
        io.close(h)
    return float(elapsed)


# ----------------------------------------------------------------------------------------------
# A slow OST: the same job, one OST answering late

# osc stats counters whose samples are the wait of an RPC (usec): req_waittime and the opcodes
OST_RPC_WAITS = ("req_waittime", "ost_read", "ost_write", "ost_punch", "ost_sync", "ost_statfs",
                 "ost_setattr", "ost_getattr", "ost_connect", "ost_disconnect", "obd_ping",
                 "ldlm_enqueue", "ldlm_cancel", "ost_get_info", "ost_set_info", "ost_quotactl")


def delay_rpcs(osc: dict, before: dict, delay_us: int) -> None:
    """Every RPC sent to `osc` since `before` (a copy of its stats) waited delay_us longer.

    Count and sum are exact; sumsq is exact too (sum of (x+d)^2 = sumsq + 2d*sum + n*d^2); min
    and max move by d where they belong to the new samples, else stay (max is then a lower
    bound: the largest new sample is not kept by the counter)."""
    stats = osc["stats"]
    for name in OST_RPC_WAITS:
        c = stats.get(name)
        if not c:
            continue
        b = before.get(name) or [0, None, 0, 0, 0]
        n, dsum = c[0] - b[0], c[3] - b[3]
        if n <= 0:
            continue
        c[3] += n * delay_us
        c[4] += 2 * delay_us * dsum + n * delay_us * delay_us
        if b[0] == 0 or c[1] < b[1]:
            c[1] = c[1] + delay_us if b[0] == 0 else min(b[1], c[1] + delay_us)
        c[2] = c[2] + delay_us if c[2] > b[2] else max(c[2], dsum // n + delay_us)


@workload("slow-ost", "a well-formed IOR file-per-process job (1 MiB transfers) while one OST "
                      "answers slowly: every RPC to `target` waits delay_ms longer",
          target="OST0003", delay_ms=30.0, tasks=8, block_size=256 * MiB, transfer_size=MiB,
          elapsed=600)
def slow_ost(cl: Client, fs: str, rng: random.Random, target: str, delay_ms: float, tasks: int,
             block_size: int, transfer_size: int, elapsed: int) -> float:
    """A busy, degraded or recovering OST (a rebuilding RAID, a full OSS queue) delays every
    request it serves. The client sees it in the wait of each RPC to that OST: req_waittime and
    the opcode latencies of that OSC's stats grow by delay_ms per RPC, and nothing else changes
    (same RPCs, same sizes). Pings and connects outside the run are not delayed; the llite
    syscall latencies are left as the model made them."""
    io = cl.fs(fs)
    t = target.upper().removeprefix(f"{fs.upper()}-")
    if not t.startswith("OST"):
        raise ValueError("slow-ost: target is an OST, e.g. OST0003")
    idx = int(t[3:], 16)
    if idx >= len(io.m["osc"]):
        raise ValueError(f"slow-ost: {fs} has no {target}")
    osc = io.osc(idx)
    before = {k: list(v) for k, v in osc["stats"].items()}
    ior(cl, fs, rng, tasks=tasks, block_size=block_size, transfer_size=transfer_size, segments=1,
        file_per_process=True, write=True, read=True, fsync=True, reorder=True, stripe_count=None,
        stripe_size=None)
    delay_rpcs(osc, before, int(delay_ms * 1000))
    return float(elapsed)


# ----------------------------------------------------------------------------------------------
# The applications of compare's validation fleet (issue 10): each varies from job to job with
# its size parameters, `jitter` and the run's `seed`, and each shows one client behaviour that a
# Lustre upgrade can change. (Sequential readers: seqread; metadata-heavy: postmark.)

@workload("smallfile-read", "many small files (<= max_size, 64 MiB) each read whole in call-byte "
                            "calls (dd bs=4K): the LU-15274 case, files within "
                            "max_read_ahead_whole_mb",
          files=64, size=32 * MiB, max_size=64 * MiB, call=4 * KiB, jitter=0.5, stripe_count=None,
          elapsed=None)
def smallfile_read(cl: Client, fs: str, rng: random.Random, files: int, size: int, max_size: int,
                   call: int, jitter: float, stripe_count, elapsed) -> float:
    """Input decks, images, per-sample files: `files` files of size x (1 +- jitter) bytes (whole
    4 KiB pages, at most max_size), each opened, fstat'ed and read from start to end in `call`
    byte calls, then closed. Sequential, so read-ahead makes 1 MiB RPCs; LU-15274 (quirk
    lu15274) makes every call after the first slow on files within max_read_ahead_whole_mb."""
    io = cl.fs(fs)
    top = f"/smallfile.{cl.st['run_seq']}"
    total = 0
    for i in range(files):
        f = io.existing(f"{top}/d{i // 100:03d}/sample{i:06d}.dat",
                        jittered(size, jitter, rng, hi=max_size), stripe_count)
        h = io.open(f.path, "r")
        io.stat(h)
        seq_read(io, h, 0, f.size, call)
        io.close(h)
        total += f.size
    return float(elapsed) if elapsed is not None else max(1.0, total / 1e9)


@workload("random-read", "small reads at random call-aligned offsets of large files (a database "
                         "or graph code): every read its own small RPC, read-ahead never starts",
          files=1, size=4 * GiB, reads=4000, call=4 * KiB, procs=4, stripe_count=None,
          elapsed=None)
def random_read(cl: Client, fs: str, rng: random.Random, files: int, size: int, reads: int,
                call: int, procs: int, stripe_count, elapsed) -> float:
    """procs processes (each with its own handle on every file) issue `reads` reads of `call`
    bytes in all, round-robin, each at a random offset that is a multiple of `call` and never
    right after the same handle's previous read (so no read is sequential). A repeated offset
    is served from the page cache. Per job: vary reads/size and the run's seed. Worked out
    in bulk, one handle after the other (FsIO.read_many)."""
    if size < 2 * call:
        raise ValueError("random-read: size must hold at least two calls")
    io = cl.fs(fs)
    top = f"/random.{cl.st['run_seq']}"
    fl = [io.existing(f"{top}/table.{i}", size, stripe_count) for i in range(files)]
    hs = [[io.open(f.path, "r") for f in fl] for _ in range(procs)]
    for row in hs:
        for h in row:
            io.stat(h)
    slots = size // call
    todo: dict = {}                   # per handle, its offsets in order
    last: dict = {}
    for i in range(reads):
        p, j = i % procs, (i // procs) % files
        off = rng.randrange(slots) * call
        while last.get((p, j)) == off:
            off = rng.randrange(slots) * call
        todo.setdefault((p, j), []).append(off)
        last[(p, j)] = off + call
    for (p, j), offs in todo.items():             # one handle after another (FsIO.read_many)
        io.read_many(hs[p][j], offs, call)
    for row in hs:
        for h in row:
            io.close(h)
    return float(elapsed) if elapsed is not None else max(1.0, reads * call / 2e8)


@workload("small-writes", "ranks append small records to their own regions of a few shared "
                          "files, interleaved: full RPCs only if the client aggregates dirty "
                          "pages per chunk (quirk poor-write-aggregation, LU-8515, does not)",
          ranks=16, files=1, record=16 * KiB, records=1024, burst=4, jitter=0.25, fsync=True,
          stripe_count=1, elapsed=None)
def small_writes(cl: Client, fs: str, rng: random.Random, ranks: int, files: int, record: int,
                 records: int, burst: int, jitter: float, fsync: bool, stripe_count,
                 elapsed) -> float:
    """A log or particle-output writer: rank r writes records x (1 +- jitter) records of
    `record` bytes to file r % files, contiguously in its own region (1 MiB aligned), `burst`
    records at a time (its I/O buffer), the ranks taking turns. A client that aggregates per
    chunk sends 1 MiB RPCs plus one partial tail per rank at close; with LU-8515 the object's
    dirty pages from all ranks add up to an RPC's worth long before any rank completes a chunk,
    and each rank's extent leaves as a partial RPC."""
    if ranks < 1 or files < 1 or burst < 1:
        raise ValueError("small-writes: ranks, files and burst must be at least 1")
    io = cl.fs(fs)
    top = f"/smallw.{cl.st['run_seq']}"
    n = [jittered(records, jitter, rng, lo=burst, unit=1) for _ in range(ranks)]
    region = -(-max(n) * record // MiB) * MiB
    hs = [io.open(f"{top}/out.{r % files}.dat", "w", create=True, stripe_count=stripe_count)
          for r in range(ranks)]
    base = [(r // files) * region for r in range(ranks)]
    done = [0] * ranks
    left = sum(n)
    while left:
        for r in range(ranks):
            k = min(burst, n[r] - done[r])
            if k:
                io.write(hs[r], base[r] + done[r] * record, record, k)
                done[r] += k
                left -= k
    for h in hs:
        if fsync:
            io.fsync(h)
        io.close(h)
    return float(elapsed) if elapsed is not None else max(1.0, sum(n) * record / 5e8)


@workload("checkpoint", "ranks write a checkpoint in large sequential calls (file per process or "
                        "one shared file), fsync, close; rank 0 adds a small index file",
          ranks=8, size=512 * MiB, call=4 * MiB, jitter=0.1, file_per_process=True, fsync=True,
          stripe_count=None, stripe_size=None, elapsed=None)
def checkpoint(cl: Client, fs: str, rng: random.Random, ranks: int, size: int, call: int,
               jitter: float, file_per_process: bool, fsync: bool, stripe_count, stripe_size,
               elapsed) -> float:
    """Each rank writes size x (1 +- jitter) bytes (whole 4 KiB pages) in `call` byte calls:
    to its own file, or to its slice of one shared file. 1 MiB RPCs when buffered; on 2.16+
    with hybrid_io=1 calls of hybrid_io_write_threshold_bytes (2 MiB) or more go out as direct
    I/O (the RPC mix changes by design, LU-13802)."""
    io = cl.fs(fs)
    top = f"/ckpt.{cl.st['run_seq']}"
    sizes = [jittered(size, jitter, rng) for _ in range(ranks)]
    if file_per_process:
        hs = [io.open(f"{top}/rank{r:05d}.chk", "w", create=True, stripe_count=stripe_count,
                      stripe_size=stripe_size) for r in range(ranks)]
        offs = [0] * ranks
    else:
        h0 = io.open(f"{top}/state.chk", "w", create=True, stripe_count=stripe_count,
                     stripe_size=stripe_size)
        hs = [h0] + [io.open(f"{top}/state.chk", "w") for _ in range(ranks - 1)]
        offs = [sum(sizes[:r]) for r in range(ranks)]
    for r in range(ranks):
        seq_write(io, hs[r], offs[r], sizes[r], call)
    for h in hs:
        if fsync:
            io.fsync(h)
        io.close(h)
    idx = f"{top}/index.txt"
    h = io.open(idx, "w", create=True, stripe_count=1)
    seq_write(io, h, 0, 64 * ranks + rng.randint(100, 400), 4 * KiB)
    if fsync:
        io.fsync(h)
    io.close(h)
    io.stat(idx)
    return float(elapsed) if elapsed is not None else max(1.0, sum(sizes) / 1.5e9)
