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

# notes/io-findings.md §1.2-1.3: [SAINI] Table I (RPC histogram) and Table II (Enzo)
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


def seq_read(io: FsIO, h, offset: int, nbytes: int, call: int) -> None:
    n, rem = divmod(nbytes, call)
    if n:
        io.read(h, offset, call, n)
    if rem:
        io.read(h, offset + n * call, rem)


def seq_write(io: FsIO, h, offset: int, nbytes: int, call: int) -> None:
    n, rem = divmod(nbytes, call)
    if n:
        io.write(h, offset, call, n)
    if rem:
        io.write(h, offset + n * call, rem)


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
          ranks=8, grid_mib=1860, restart_mib=2850, elapsed=1800)
def overflow(cl: Client, fs: str, rng: random.Random, ranks: int, grid_mib: int, restart_mib: int,
             elapsed: int) -> float:
    io = cl.fs(fs)
    _check_1m_rpcs(io, "overflow")
    P = io.P
    top = f"/overflow.{cl.st['run_seq']}"
    io.statfs()
    grids = [io.existing(f"{top}/grid.in.{i}", m * MiB)
             for i, m in enumerate(partition(grid_mib, 3, rng, minimum=100))]
    # random record reads: 258 one-page, 100 in the 512K row, 40 in the 256K row, a few between
    recs = [rng.randint(256, P) for _ in range(258)]
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
          write=True, read=True, fsync=True, reorder=True, stripe_count=None, stripe_size=None)
def ior(cl: Client, fs: str, rng: random.Random, tasks: int, block_size: int, transfer_size: int,
        segments: int, file_per_process: bool, write: bool, read: bool, fsync: bool, reorder: bool,
        stripe_count, stripe_size) -> float:
    if block_size % transfer_size:
        raise ValueError("IOR: block_size must be a multiple of transfer_size")
    io = cl.fs(fs)
    top = f"/ior.{cl.st['run_seq']}"
    calls = block_size // transfer_size

    def path(t):
        return f"{top}/testFile.{t:08d}" if file_per_process else f"{top}/testFile"

    def offset(t, s):
        return s * block_size if file_per_process else (s * tasks + t) * block_size

    moved = 0
    tl = range(tasks)
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
    return max(1.0, moved / 1.5e9)


# ----------------------------------------------------------------------------------------------
# More reference patterns (io-findings §3, §4)

@workload("seqread", "sequential read of existing files in small calls; readahead=false gives the "
                     "read-ahead regression of io-findings §4 (1 MiB RPCs become call-sized RPCs)",
          files=1, size=256 * MiB, call=8 * KiB, readahead=True, stripe_count=None, elapsed=600)
def seqread(cl: Client, fs: str, rng: random.Random, files: int, size: int, call: int,
            readahead: bool, stripe_count, elapsed: int) -> float:
    io = cl.fs(fs)
    top = f"/seqread.{cl.st['run_seq']}"
    for i in range(files):
        f = io.existing(f"{top}/input.{i}", size, stripe_count)
        h = io.open(f.path, "r")
        io.stat(h)
        n, rem = divmod(size, call)
        if n:
            io.read(h, 0, call, n, readahead=readahead)
        if rem:
            io.read(h, n * call, rem, readahead=readahead)
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
          npix=12500, nbin=8, procs=16, shared=False, stripe_count=None, elapsed=1800)
def madbench(cl: Client, fs: str, rng: random.Random, npix: int, nbin: int, procs: int, shared: bool,
             stripe_count, elapsed: int) -> float:
    io = cl.fs(fs)
    top = f"/madbench.{cl.st['run_seq']}"
    call = 8 * npix * npix // procs

    def path(p):
        return f"{top}/data" if shared else f"{top}/data.{p:04d}"

    def off(p, b):
        return (p * nbin + b) * call if shared else b * call

    hs = [io.open(path(p), "w", create=True, stripe_count=stripe_count) for p in range(procs)]
    for b in range(nbin):                        # S: build and write the matrices
        for p in range(procs):
            io.write(hs[p], off(p, b), call)
    for h in hs:
        io.close(h)
    io.drop_caches()                             # the run fills 73 % of memory: no cache help
    hs = [io.open(path(p), "rw") for p in range(procs)]
    for b in range(nbin):                        # W: read, busy-work, write back
        for p in range(procs):
            io.read(hs[p], off(p, b), call)
            io.write(hs[p], off(p, b), call)
    for h in hs:
        io.close(h)
    io.drop_caches()
    hs = [io.open(path(p), "r") for p in range(procs)]
    for b in range(nbin):                        # C: read pairs
        for p in range(procs):
            io.read(hs[p], off(p, b), call)
    for h in hs:
        io.close(h)
    return float(elapsed)


@workload("boito", "MPI-IO Test classes of Boito et al.: pattern=sfsa-nonstrided|sfsa-strided|mfwa, "
                   "nseg requests of size/nseg per process, the ranks of this node only",
          pattern="sfsa-nonstrided", procs=40, node_ranks=1, per_proc=256 * MiB, nseg=32,
          stripe_size=64 * KiB, stripe_count=4, phase="both", elapsed=600)
def boito(cl: Client, fs: str, rng: random.Random, pattern: str, procs: int, node_ranks: int,
          per_proc: int, nseg: int, stripe_size: int, stripe_count: int, phase: str,
          elapsed: int) -> float:
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

    ranks = range(node_ranks)
    # the ranks of a node run concurrently: open all, issue the requests interleaved, close all
    if phase in ("write", "both"):
        hs = [io.open(path(i), "w", create=True, stripe_count=stripe_count, stripe_size=stripe_size)
              for i in ranks]
        if pattern == "sfsa-strided":
            for k in range(nseg):
                for i in ranks:
                    io.write(hs[i], offset(i, k), s)
        else:
            for i in ranks:
                io.write(hs[i], offset(i, 0), s, nseg)
        for h in hs:
            io.close(h)
    if phase in ("read", "both"):
        io.drop_caches()                          # clients restart between the phases
        for i in ranks:
            size = per_proc if pattern == "mfwa" else procs * per_proc
            if path(i) not in io.files:
                io.existing(path(i), size, stripe_count, stripe_size)
            f = io.files[path(i)]
            f.size = max(f.size, size)
        hs = [io.open(path(i), "r") for i in ranks]
        if pattern == "sfsa-strided":
            for k in range(nseg):
                for i in ranks:
                    io.read(hs[i], offset(i, k), s)
        else:
            for i in ranks:
                io.read(hs[i], offset(i, 0), s, nseg)
        for h in hs:
            io.close(h)
    return float(elapsed)


@workload("postmark", "Cluster PostMark (Sebepou et al.): a private file set, transactions pair a "
                      "create or delete with a whole-file read or an append; config a|b|c",
          config="c", transactions=2000, files=None, elapsed=600)
def postmark(cl: Client, fs: str, rng: random.Random, config: str, transactions: int, files,
             elapsed: int) -> float:
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
        h = io.open(p, "w", create=True, stripe_count=1)
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
