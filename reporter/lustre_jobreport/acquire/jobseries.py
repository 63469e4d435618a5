"""A job slot's timeline (`lustreclient.job.slot<S>.series`, docs/design.md §2.5), decoded.

The agent serves, per filesystem, the growth of the slot's deltas in epoch-aligned bins. This
module turns one host's aggregate into a `Series`: its bins and, per filesystem, the values
the agent sent (the columns not all zero), laid out by the reporter's own table `VALUES`
(the series metrics of agentcontract.JOB_SERIES, a histogram metric one value per bucket), so
that a series of an older or newer agent with another table is read by PMID, not by position:
a value the reporter does not know is dropped, one the agent does not send is absent (zero), and
a metric the agent's table does not name is in the series' `lacks` (not counted on that host).

The aggregate is checked whole before anything is made of it: anything that is not a timeline
as §2.5 lays it out is a `SeriesError` (one line), never another exception, and what is
allocated is bounded by a small multiple of its size, whatever its counts claim.

Standard library and numpy only.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from .. import agentcontract, catalog

BUCKETS = 64    # a histogram metric's values in a point: bucket i the RPCs of 2^i pages


def _is_histogram(name: str) -> bool:
    return catalog.BY_NAME[catalog.P + name].role == catalog.RPC_HISTOGRAM


def _values() -> tuple[tuple[str, int | None], ...]:
    out: list[tuple[str, int | None]] = []
    for name in agentcontract.JOB_SERIES:
        if _is_histogram(name):
            out.extend((name, b) for b in range(BUCKETS))
        else:
            out.append((name, None))
    return tuple(out)


# The reporter's layout of a point: (metric, bucket), bucket None for a metric of one value.
VALUES: tuple[tuple[str, int | None], ...] = _values()
VALUE_INDEX: dict[tuple[str, int | None], int] = {v: i for i, v in enumerate(VALUES)}


class SeriesError(ValueError):
    """An aggregate that is not a timeline this reader can take (one line: what is wrong)."""


@dataclass(frozen=True)
class FsColumns:
    """One filesystem's points: `data[:, k]` is the value `VALUES[index[k]]` at each point
    (signed: a device left out mid-job takes its earlier counts back as a negative point). A
    value not in `index` is zero at every point."""
    index: np.ndarray       # intp [k], increasing, into VALUES
    data: np.ndarray        # int64 [npoints, k], column-major: a value's points side by side


@dataclass(frozen=True)
class Series:
    """One host's timeline of one job: point i is bin `first_bin + i` of width `width_ms`
    (ms since the epoch), holding the I/O that ended in that bin; `samples[i]` is how many of
    the agent's samples fell into it (0: none, its I/O is in the next point that has one).
    `lacks`: the reporter's series metrics the agent's table does not name (an agent older than
    them, or a job it took up from an older one's file): their values are absent, not zero."""
    level: int
    interval_ms: int
    first_bin: int
    samples: np.ndarray                 # uint32 [npoints]
    filesystems: dict[str, FsColumns]   # in the order the agent first saw them
    lacks: frozenset[str] = frozenset()

    @property
    def width_ms(self) -> int:
        return self.interval_ms << self.level

    @property
    def npoints(self) -> int:
        return len(self.samples)


def pmid(cluster: int, item: int) -> int:
    """The PMID of the agent's metric (cluster, item), as pmID_build makes it."""
    return agentcontract.DOMAIN << 22 | cluster << 10 | item


# The series metrics the reporter knows, by the PMID the agent's table names them by (sorted):
# where each one's values start in VALUES, and how many it has there (a histogram's buckets, or 1).
_KNOWN_PMIDS, _KNOWN_BASE, _KNOWN_COUNT = (np.array(column, dtype=np.int64) for column in zip(*sorted(
    (pmid(cluster, item), VALUE_INDEX[(name, 0 if _is_histogram(name) else None)],
     BUCKETS if _is_histogram(name) else 1)
    for name, cluster, item in agentcontract.JOB_SERIES_PMIDS)))
_NAME_OF_PMID = {pmid(cluster, item): name for name, cluster, item in agentcontract.JOB_SERIES_PMIDS}

MAX_POINTS = 4 * agentcontract.JOB_SERIES_POINTS    # more than any agent serves: not a timeline
_HEADER = struct.Struct("<IIIIQIIII")   # magic, level, interval ms, npoints, first bin, nfs,
                                        # nvalues, nmetrics, 0
_U64_END = 1 << 64


class _Reader:
    """The aggregate's bytes, taken in order; SeriesError when a part runs past the end."""

    def __init__(self, raw: bytes | memoryview):
        try:
            self.buf = memoryview(raw).cast("B")
        except (TypeError, ValueError) as e:
            raise SeriesError(f"not a byte string: {e}") from None
        self.at = 0

    @property
    def left(self) -> int:
        return len(self.buf) - self.at

    def take(self, size: int, what: str) -> int:
        """The offset of the next size bytes, which hold what."""
        if size > self.left:
            raise SeriesError(f"truncated: {what} needs {size} bytes at offset {self.at}, "
                              f"{self.left} left")
        at, self.at = self.at, self.at + size
        return at

    def array(self, dtype: str, count: int, what: str) -> np.ndarray:
        """count items of dtype (little-endian, as laid out), viewed in place."""
        size = np.dtype(dtype).itemsize
        return np.frombuffer(self.buf, dtype, count=count, offset=self.take(size * count, what))

    def zeros(self, size: int, what: str) -> None:
        at = self.take(size, what)
        if any(self.buf[at:at + size]):
            raise SeriesError(f"{what} at offset {at} is not zero")


@dataclass(frozen=True)
class _Table:
    """The agent's metric table, resolved against the reporter's: for each agent metric, the
    value its first value is in the agent's point, and where its values go in VALUES; and the
    reporter's metrics it does not name."""
    starts: np.ndarray      # int64 [nmetrics]: the agent's index of the metric's first value
    base: np.ndarray        # int64 [nmetrics]: VALUES index of its first value (-1: unknown)
    known: np.ndarray       # int64 [nmetrics]: how many of its values the reporter knows
    lacks: frozenset[str]


def _table(reader: _Reader, nmetrics: int, nvalues: int) -> _Table:
    rows = reader.array("<u4", 2 * nmetrics, "the metric table").reshape(nmetrics, 2)
    pmids, counts = rows[:, 0].astype(np.int64), rows[:, 1].astype(np.int64)
    if int(counts.sum()) != nvalues:
        raise SeriesError(f"the metric table's values add up to {int(counts.sum())}, "
                          f"the header says {nvalues} a point")
    if len(np.unique(pmids)) != nmetrics:
        raise SeriesError("a metric is twice in the metric table")
    at = np.minimum(np.searchsorted(_KNOWN_PMIDS, pmids), len(_KNOWN_PMIDS) - 1)
    is_known = _KNOWN_PMIDS[at] == pmids
    base = np.where(is_known, _KNOWN_BASE[at], -1)
    cap = np.where(is_known, _KNOWN_COUNT[at], 0)
    scalar_sent_as_many = (cap == 1) & (counts != 1)
    if scalar_sent_as_many.any():
        m = int(np.flatnonzero(scalar_sent_as_many)[0])
        raise SeriesError(f"metric {int(pmids[m]):#x} has {int(counts[m])} values a point, "
                          f"the reporter knows it as one")
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    named = set(pmids.tolist())
    lacks = frozenset(name for p, name in _NAME_OF_PMID.items() if p not in named)
    return _Table(starts, base, np.minimum(cap, counts), lacks)


def _columns(reader: _Reader, table: _Table, nvalues: int, npoints: int, name: str) -> FsColumns:
    """A filesystem's presence bitmap and the columns it says are sent, mapped onto VALUES."""
    words = (nvalues + 63) // 64
    bytes_ = reader.array("u1", 8 * words, f"the presence bitmap of {name!r}")
    bits = np.unpackbits(bytes_, bitorder="little")     # bit v of word v // 64, little-endian
    if bits[nvalues:].any():
        raise SeriesError(f"the presence bitmap of {name!r} names a value past the {nvalues} a point")
    sent = np.flatnonzero(bits)
    if len(sent) and npoints == 0:
        raise SeriesError(f"{name!r} sends values of no points")
    cols = reader.array("<i8", len(sent) * npoints, f"the columns of {name!r}").reshape(len(sent), npoints)
    metric = np.searchsorted(table.starts, sent, side="right") - 1
    within = sent - table.starts[metric]
    keep = within < table.known[metric]
    index = table.base[metric[keep]] + within[keep]
    order = np.argsort(index, kind="stable")
    # one copy, in the host's order; transposed, each value's points stay side by side
    data = np.take(cols, np.flatnonzero(keep)[order], axis=0).astype(np.int64, copy=False)
    return FsColumns(index=index[order].astype(np.intp), data=data.T)


def _filesystem_name(reader: _Reader) -> str:
    (length,) = struct.unpack_from("<I", reader.buf, reader.take(4, "a filesystem's name length"))
    at = reader.take(length, "a filesystem's name")
    reader.zeros((4 + length + 7) // 8 * 8 - 4 - length, "the padding after a filesystem's name")
    try:
        name = bytes(reader.buf[at:at + length]).decode("utf-8")
    except UnicodeDecodeError:
        raise SeriesError(f"a filesystem's name at offset {at} is not UTF-8") from None
    if not name:
        raise SeriesError(f"a filesystem without a name at offset {at}")
    return name


def decode(raw: bytes | memoryview) -> Series:
    """The Series of one aggregate's bytes (after PCP's 4-byte value header). SeriesError on
    anything this reader cannot take."""
    reader = _Reader(raw)
    at = reader.take(_HEADER.size, "the header")
    magic, level, interval_ms, npoints, first_bin, nfs, nvalues, nmetrics, zero = \
        _HEADER.unpack_from(reader.buf, at)
    if magic != agentcontract.JOB_SERIES_MAGIC:
        raise SeriesError(f"not a timeline: magic {magic:#010x}, "
                          f"want {agentcontract.JOB_SERIES_MAGIC:#010x}")
    if zero:
        raise SeriesError(f"the header's last word is {zero}, not 0")
    if interval_ms == 0 or level >= 64 or interval_ms << level >= _U64_END:
        raise SeriesError(f"bins of {interval_ms} ms x 2^{level} are not a width")
    if npoints > MAX_POINTS:
        raise SeriesError(f"{npoints} points: more than {MAX_POINTS}")
    if npoints and (first_bin + npoints - 1) * (interval_ms << level) >= _U64_END:
        raise SeriesError(f"bins {first_bin} + {npoints} lie past the end of time")
    table = _table(reader, nmetrics, nvalues)
    samples = reader.array("<u4", npoints, "the samples").astype(np.uint32)
    reader.zeros(4 * (npoints % 2), "the padding after the samples")
    # each filesystem takes at least its name's word and its bitmap: the count fits the bytes
    if nfs * (8 + 8 * ((nvalues + 63) // 64)) > reader.left:
        raise SeriesError(f"{nfs} filesystems do not fit in the {reader.left} bytes left")
    filesystems: dict[str, FsColumns] = {}
    for _ in range(nfs):
        name = _filesystem_name(reader)
        if name in filesystems:
            raise SeriesError(f"filesystem {name!r} is twice in the timeline")
        filesystems[name] = _columns(reader, table, nvalues, npoints, name)
    if reader.left:
        raise SeriesError(f"{reader.left} bytes after the last filesystem")
    return Series(level, interval_ms, first_bin, samples, filesystems, table.lacks)
