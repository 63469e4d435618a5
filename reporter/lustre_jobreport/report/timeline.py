"""When the job did its I/O: the report's "timeline" (docs/design.md §3.1), from its hosts' series
(§2.5, `acquire.jobseries.Series`).

Three parts:

- `Accumulator` sums the hosts' series one host at a time, keeping only the job's sums: per
  filesystem one int64 array [bins, len(VALUES)] over the bins seen so far, all of one width
  (the coarsest of the hosts', bins being epoch-aligned: a coarser bin is the exact sum of the
  finer ones it holds), and per bin whether some host took no sample in it. A 12,000-node epilog
  never holds 12,000 series.
- `section` turns the sums into the JSON: at most POINTS points (k adjacent bins summed, k
  aligned so that every point is a whole bin of k times the width), each array checked against
  the job's totals of the same hosts, the mean latency of a call per point where every client
  that made calls has latencies, and the phases (`phases.find`) on the full-resolution sums.
- `with_time` gives the open-storm and small-RPC findings their time: when most of them came in
  a start-up burst or a final flush, the finding says so with the job's numbers.

Every figure is an exact integer (signed: a device left out mid-job makes a point negative), but
the latency means (µs, to 0.1).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import agentcontract, catalog
from ..acquire.hostsnap import summarise
from ..acquire.jobseries import BUCKETS, VALUE_INDEX, VALUES, Series
from ..config import Config
from . import phases as phasefinder
from .aggregate import FsTotals, exact_sum
from .diff import Issue, JobDelta, iso_utc
from .flags import Flag, is_small_rpc

POINTS = 120                 # a timeline's most points: bins are summed k at a time to fit
STORM_SHARE = 0.70           # a finding is "of a phase" when this share of its count came in it
# A filesystem's values whose absolute points add up to this much could overflow an int64 sum
# (no job moves 4.6e18 bytes): its timeline is left out and said, never shown wrapped.
MAGNITUDE_LIMIT = float(1 << 62)
# The most bins the sums span: four times a slot's most points. A host whose bins would stretch
# them further (its clock, or the others', far off) is left out: memory stays bounded.
MAX_BINS = 4 * agentcontract.JOB_SERIES_POINTS

NVALUES = len(VALUES)


def _series_name(m: catalog.Metric) -> str:
    """A catalogued metric's name in the series table (agentcontract.JOB_SERIES)."""
    return m.name[len(catalog.P):]


# The series' llite values by the key aggregate keeps them under per host (read_bytes, open ...),
# each RPC histogram direction's 64 buckets (bucket i: RPCs of 2^i pages), the metadata ops
_LLITE = {m.key: VALUE_INDEX[(_series_name(m), None)] for m in catalog.with_role(catalog.VOLUME, catalog.OP)
          if (_series_name(m), None) in VALUE_INDEX}
_RPC_METRIC = {m.key: m for m in catalog.with_role(catalog.RPC_HISTOGRAM)}
_RPC = {d: np.array([VALUE_INDEX[(_series_name(m), b)] for b in range(BUCKETS)], dtype=np.intp)
        for d, m in _RPC_METRIC.items()}
_METADATA = np.array([_LLITE[op] for op in catalog.METADATA_OPS if op in _LLITE], dtype=np.intp)
# The calls' latency sums (2.14+, microseconds) by direction, and the calls they are the sums of
_LATENCY_METRIC = {m.key: m for m in catalog.with_role(catalog.LATENCY) if (_series_name(m), None) in VALUE_INDEX}
_LATENCY = {d: VALUE_INDEX[(_series_name(m), None)] for d, m in _LATENCY_METRIC.items()}
_CALLS_METRIC = {d: catalog.BY_NAME[f"{catalog.P}llite.{d}_calls"] for d in _LATENCY}
_NAME_OF = {i: key for key, i in _LLITE.items()} | {i: f"latency.{d}" for d, i in _LATENCY.items()} | {
    int(i): f"rpc.{d} of {1 << b} pages" for d, idx in _RPC.items() for b, i in enumerate(idx)}
# phases.find names its channels read, write and metadata (a final flush is a "write" burst)
_CHANNELS = {"read": "read_bytes", "write": "write_bytes", "metadata": "metadata_ops"}
_EDGE_KINDS = ("start-up burst", "final flush")


def _rebin(a: np.ndarray, first: int, factor: int) -> tuple[np.ndarray, int]:
    """Rows that are bins first, first + 1, ... of one width, as bins of `factor` times that
    width aligned to multiples of factor (bin j holds bins j*factor .. j*factor + factor - 1):
    the rows summed (a bool row: any of them), and the first coarse bin."""
    lo = first // factor
    if factor == 1 or not len(a):
        return a, lo
    lead = first - lo * factor
    n = -(-(lead + len(a)) // factor)
    padded = np.zeros((n * factor,) + a.shape[1:], dtype=a.dtype)
    padded[lead:lead + len(a)] = a
    reduce = np.logical_or.reduce if a.dtype == bool else np.add.reduce
    return reduce(padded.reshape((n, factor) + a.shape[1:]), axis=1), lo


def _power_of_two_shift(big: int, small: int) -> int | None:
    """k when big = small * 2^k, else None."""
    if small <= 0 or big % small:
        return None
    ratio = big // small
    return ratio.bit_length() - 1 if ratio & (ratio - 1) == 0 else None


def _check(series: Series) -> str | None:
    """Why a series cannot be summed (one line), or None."""
    if series.interval_ms <= 0 or series.level < 0:
        return f"its series has a width of {series.interval_ms} ms x 2^{series.level}"
    for fs, cols in series.filesystems.items():
        idx = np.asarray(cols.index)
        if cols.data.shape != (series.npoints, len(idx)):
            return f"its series of {fs} has {cols.data.shape} values for {series.npoints} points of {len(idx)}"
        if len(idx) and (idx.min() < 0 or idx.max() >= NVALUES or np.any(np.diff(idx) <= 0)):
            return f"its series of {fs} names values outside the reporter's table"
    return None


class Accumulator:
    """The job's series summed over its hosts (module docstring). `add` each host's Series as it
    comes; a host that gave none is simply not added (the report names it). Memory: bins x
    len(VALUES) x 8 bytes a filesystem, whatever the number of hosts. Not thread-safe: one thread
    adds (the fan-out's collecting loop)."""

    def __init__(self) -> None:
        self.width_ms: int | None = None
        self.first_bin = 0                                 # the bin (of width_ms) of row 0
        self.sums: dict[str, np.ndarray] = {}              # fs -> int64 [bins, NVALUES]
        self.gap = np.zeros(0, dtype=bool)                 # [bins]: some host took no sample in it
        self.magnitude: dict[str, np.ndarray] = {}         # fs -> float64 [NVALUES]: sum of |point|
        self.hosts: list[str] = []                         # hosts whose series is in the sums
        self.left_out: dict[str, str] = {}                 # host -> why its series is not
        self.lacking: dict[str, list[str]] = {}            # series metric -> hosts (in the sums) whose
                                                           # agent's table lacks it: absent there, not 0

    @property
    def bins(self) -> int:
        return len(self.gap)

    def leave_out(self, host: str, why: str) -> None:
        """A host whose series could not be had (undecodable, say): named, with why."""
        self.left_out[host] = why

    def add(self, host: str, series: Series) -> None:
        """Sum one host's series in. Left out, with why: a series whose width is not a
        power-of-two multiple (or fraction) of the sums' (its bins cannot be aligned), or whose
        bins lie so far from the others' that the sums would pass MAX_BINS (a clock far off)."""
        why, shift = _check(series), None
        if why is None:
            why, shift = self._judged(series.width_ms, series.first_bin, series.npoints)
        if why is not None:
            self.left_out[host] = why
            return
        self._sum_in(series.width_ms, series.first_bin, shift, series.samples == 0,
                     [(fs, np.asarray(cols.index, dtype=np.intp), np.asarray(cols.data, dtype=np.int64),
                       np.abs(cols.data.astype(np.float64)).sum(axis=0))
                      for fs, cols in series.filesystems.items()])
        self.hosts.append(host)
        for metric in series.lacks:
            self.lacking.setdefault(metric, []).append(host)

    def _shift(self, width_ms: int) -> int | None:
        """k: the host's bins are 2^k of the sums' (k > 0: finer, k < 0: coarser); None when
        neither width is a power-of-two multiple of the other."""
        if self.width_ms is None or width_ms == self.width_ms:
            return 0
        if width_ms < self.width_ms:
            return _power_of_two_shift(self.width_ms, width_ms)
        k = _power_of_two_shift(width_ms, self.width_ms)
        return None if k is None else -k

    def _too_far(self, first_bin: int, npoints: int, width_ms: int, shift: int) -> str | None:
        """Why npoints bins from first_bin, of width_ms (2^shift of the sums' bins), would
        stretch the sums past MAX_BINS bins, or None."""
        if not npoints:
            return None
        to_host, to_sums = max(shift, 0), max(-shift, 0)      # each side's bins at the common width
        lo, hi = first_bin >> to_host, (first_bin + npoints - 1) >> to_host
        if self.bins:
            lo = min(lo, self.first_bin >> to_sums)
            hi = max(hi, (self.first_bin + self.bins - 1) >> to_sums)
        if hi - lo + 1 <= MAX_BINS:
            return None
        width = (self.width_ms or width_ms) << to_sums
        return (f"its points span {(hi - lo + 1) * width / 1000:,.0f} s with the other hosts': its clock or "
                "theirs is off")

    def merge(self, other: "Accumulator") -> None:
        """Another accumulator's sums added in (a worker process's share of the job's hosts):
        its hosts judged against these sums as one host added here would be (widths that do
        not align, bins too far off: its hosts left out, with why)."""
        self.left_out.update(other.left_out)
        if other.width_ms is None:                   # none of its hosts was added
            return
        why, shift = self._judged(other.width_ms, other.first_bin, other.bins)
        if why is not None:
            self.left_out.update(dict.fromkeys(other.hosts, why))
            return
        self._sum_in(other.width_ms, other.first_bin, shift, other.gap,
                     [(fs, slice(None), a, other.magnitude[fs]) for fs, a in other.sums.items()])
        self.hosts.extend(other.hosts)
        for metric, hosts in other.lacking.items():
            self.lacking.setdefault(metric, []).extend(hosts)

    def _judged(self, width_ms: int, first_bin: int, npoints: int) -> tuple[str | None, int | None]:
        """Why npoints bins of width_ms from first_bin cannot be summed in (None: they can), and
        their shift against the sums' width (_shift)."""
        shift = self._shift(width_ms)
        if shift is None:
            return (f"its points of {width_ms / 1000:g} s do not align with the other hosts' "
                    f"{self.width_ms / 1000:g} s"), None
        return self._too_far(first_bin, npoints, width_ms, shift), shift

    def _sum_in(self, width_ms: int, first_bin: int, shift: int, gap: np.ndarray, columns) -> None:
        """Bins of width_ms from first_bin (2^shift of the sums' width) added in: their gaps, and
        per filesystem (fs, the values' columns, int64 [bins, k], their magnitudes [k])."""
        if self.width_ms is None:
            self.width_ms = width_ms
        if shift < 0:                    # the bins are coarser: the sums go to them
            self._coarsen(1 << -shift)
            shift = 0
        factor = 1 << shift
        gap, first = _rebin(gap, first_bin, factor)
        at = 0                           # where the bins start in the sums (once covered)
        if len(gap):
            self._cover(first, len(gap))
            at = first - self.first_bin
            self.gap[at:at + len(gap)] |= gap
        for fs, idx, data, magnitude in columns:
            data, _ = _rebin(data, first_bin, factor)
            sums = self._fs(fs)
            if len(data):
                sums[at:at + len(data), idx] += data
            self.magnitude[fs][idx] += magnitude

    def _fs(self, fs: str) -> np.ndarray:
        if fs not in self.sums:
            self.sums[fs] = np.zeros((self.bins, NVALUES), dtype=np.int64)
            self.magnitude[fs] = np.zeros(NVALUES, dtype=np.float64)
        return self.sums[fs]

    def _coarsen(self, factor: int) -> None:
        """The sums as bins of `factor` times their width (exact: each the sum of those it holds)."""
        for fs, a in self.sums.items():
            self.sums[fs], _ = _rebin(a, self.first_bin, factor)
        self.gap, self.first_bin = _rebin(self.gap, self.first_bin, factor)
        self.width_ms *= factor

    def _cover(self, first: int, n: int) -> None:
        """Grow the bin range to hold bins [first, first + n)."""
        if not self.bins:
            self.first_bin = first
        lo, hi = min(first, self.first_bin), max(first + n, self.first_bin + self.bins)
        if (lo, hi) == (self.first_bin, self.first_bin + self.bins):
            return
        at = self.first_bin - lo
        gap = np.zeros(hi - lo, dtype=bool)
        gap[at:at + self.bins] = self.gap
        for fs, a in self.sums.items():
            grown = np.zeros((hi - lo, NVALUES), dtype=np.int64)
            grown[at:at + len(a)] = a
            self.sums[fs] = grown
        self.gap, self.first_bin = gap, lo


@dataclass(frozen=True)
class PhaseCounts:
    """A phase of one filesystem's timeline, in seconds since the job's begin, with the counts
    the findings' time context weighs (opens, small RPCs per direction)."""
    kind: str
    start_s: float
    end_s: float
    counts: dict[str, int]


@dataclass
class Timeline:
    """The report's "timeline" (json), what it could not trust (issues: data_quality), its notes,
    and per filesystem whose sums match the totals the phases and the job's counts over the
    timeline's hosts, for `with_time`."""
    json: dict
    issues: list[Issue] = field(default_factory=list)
    notes: list[dict] = field(default_factory=list)
    phases: dict[str, list[PhaseCounts]] = field(default_factory=dict)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    elapsed_s: float = 0.0


def span(seconds: float) -> str:
    """A length of time in words, to a finding's precision: 45 s, 2 min, 3 h, 1.5 h."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if round(seconds / 60) < 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f}".removesuffix(".0") + " h"


def _points_factor(first: int, n: int) -> int:
    """The least k whose k-aligned points (bin j in point j // k) hold bins [first, first + n)
    in at most POINTS points."""
    k = max(1, -(-n // POINTS))
    while (first + n - 1) // k - first // k + 1 > POINTS:
        k += 1
    return k


def _page_size(hosts: list[str], pagesizes: dict[str, int | None]) -> tuple[int | None, str | None]:
    """The one page size of these hosts (pages to bytes for the RPC sizes), or None and why."""
    sizes = {pagesizes.get(h) for h in hosts}
    if None in sizes:
        return None, "some hosts' page size is not known"
    if len(sizes) > 1:
        return None, f"the hosts' page sizes differ ({', '.join(str(s) for s in sorted(sizes))} bytes)"
    return (sizes.pop() if sizes else None), None


def _rows(delta: JobDelta, hosts) -> np.ndarray:
    """These hosts' rows of the delta's tables (a host the delta has not, none)."""
    row = {h: r for r, h in enumerate(delta.hosts)}
    return np.array([row[h] for h in hosts if h in row], dtype=np.intp)


def _fs_deltas(delta: JobDelta, metric: catalog.Metric, fs: str, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A filesystem counter's delta of fs on each of these rows (uint64) and whether it was
    counted there (a host without the counter, or whose value was left out: not)."""
    tab = delta.tables.get(metric.name)
    if tab is None or fs not in tab.instances or not len(rows):
        return np.zeros(len(rows), dtype=np.uint64), np.zeros(len(rows), dtype=bool)
    col = tab.instances.index(fs)
    return tab.delta[rows, col], tab.counted[rows, col]


def _job_totals(fs: str, hosts: list[str], lacking: dict[str, list[str]], delta: JobDelta, t: FsTotals | None,
                pagesize: int | None) -> tuple[list[int], list[str]]:
    """The job's totals of every VALUES entry over these hosts (the values counted on them, as
    aggregate keeps them per host; a latency over those whose series has it, `lacking` naming
    the others), and the values that cannot be told (RPC sizes without a page size, a bucket
    not of 2^i pages)."""
    out = [0] * NVALUES
    untold: list[str] = []
    if t is not None:
        for h in hosts:
            for key, v in t.hosts.get(h, {}).items():
                if key in _LLITE:
                    out[_LLITE[key]] += v
    # The totals keep a latency only where every host of the filesystem has it (aggregate's
    # latency_us): the sums of the hosts that have it are taken from the deltas themselves.
    for d, m in _LATENCY_METRIC.items():
        without = set(lacking.get(_series_name(m), ()))
        values, counted = _fs_deltas(delta, m, fs, _rows(delta, [h for h in hosts if h not in without]))
        out[_LATENCY[d]] = int(exact_sum(np.where(counted, values, 0), axis=0))
    rows = _rows(delta, hosts)
    for d, idx in _RPC.items():
        tab = delta.tables.get(_RPC_METRIC[d].name)
        cols = np.flatnonzero(tab.fs == fs) if tab is not None and len(tab.instances) else np.zeros(0, np.intp)
        if not len(cols) or not len(rows):
            continue
        counted = tab.counted[np.ix_(rows, cols)]
        sums = exact_sum(np.where(counted, tab.delta[np.ix_(rows, cols)], 0), axis=0).tolist()
        if pagesize is None:
            untold.append(f"rpc.{d}")
            continue
        for c, n in zip(cols, sums):
            label = tab.instances[c].rpartition(":")[2]
            pages, rest = divmod(catalog.size_bytes(label), pagesize) if catalog.is_size_label(label) else (0, 1)
            b = pages.bit_length() - 1
            if rest or pages <= 0 or pages & (pages - 1) or b >= BUCKETS:
                if n:
                    untold.append(f"rpc.{d} {label}")
                continue
            out[idx[b]] += n
    return out, untold


def _value_name(i: int) -> str:
    """A value's name in a data_quality line: read_bytes, open, rpc.read of 4 pages."""
    return _NAME_OF.get(i, VALUES[i][0])


@dataclass
class _Fs:
    """One filesystem's sums at full resolution and what the timeline says of them."""
    name: str
    full: np.ndarray            # int64 [bins, NVALUES]
    small: dict[str, np.ndarray] | None   # direction -> small RPCs per bin (None: page size unknown)


def section(acc: Accumulator | None, delta: JobDelta, totals: dict[str, FsTotals], cfg: Config,
            pagesizes: dict[str, int | None]) -> Timeline | None:
    """The report's "timeline" of a job (None: no timeline was asked of the agents). pagesizes:
    each host's page size (report "clients"), for the RPC sizes in bytes."""
    if acc is None:
        return None
    held = set(acc.hosts)
    without = [h for h in delta.hosts if h not in held]
    tl = Timeline({"width_s": None, "start": None, "begin_offset_s": None, "points": 0,
                   "hosts": len(acc.hosts), "hosts_without": without, "gaps": 0, "note": None,
                   "filesystems": {}}, elapsed_s=delta.elapsed_s)
    if not acc.hosts or acc.width_ms is None or not acc.bins:
        why = summarise(sorted(set(acc.left_out.values())), 2) if acc.left_out else \
            "an agent older than the timeline, or none asked"
        tl.json["note"] = f"no host's agent kept the job's timeline ({why})"
        return tl
    width_s = acc.width_ms / 1000.0
    if acc.bins < phasefinder.MIN_BINS:
        note = (f"the job ran {delta.elapsed_s:.0f} s: fewer than {phasefinder.MIN_BINS} points of {width_s:g} s, "
                "too short to say when")
        tl.json.update(width_s=width_s, note=note)
        tl.notes.append({"id": "TIMELINE_SHORT", "fs": None, "detail": note})
        return tl
    if without:
        tl.issues.append(_without_issue(without, acc, len(delta.hosts)))
    if (outside := _outside_the_job(acc, delta)) is not None:
        tl.issues.append(outside)
    k = _points_factor(acc.first_bin, acc.bins)
    gap, first = _rebin(acc.gap, acc.first_bin, k)
    start_s = first * k * width_s
    tl.json.update(width_s=k * width_s, start=iso_utc(start_s), begin_offset_s=round(start_s - delta.begin, 3),
                   points=len(gap), gaps=int(gap.sum()))
    pagesize, no_pagesize = _page_size(acc.hosts, pagesizes)
    for fs in sorted(set(acc.sums) | set(totals)):
        if fs in acc.magnitude and (acc.magnitude[fs] >= MAGNITUDE_LIMIT).any():
            tl.issues.append(Issue("TIMELINE_PARTIAL", None, fs,
                                   f"{fs}: the timeline's points add up to 2^62 or more, past what its sums "
                                   "keep exactly: its timeline is left out"))
            continue
        full = acc.sums.get(fs, np.zeros((acc.bins, NVALUES), dtype=np.int64))
        f = _Fs(fs, full, None if pagesize is None else _small_rpcs(full, pagesize, cfg))
        whole = _sums_to_totals(f, tl, acc, delta, totals.get(fs), pagesize, no_pagesize)
        tl.json["filesystems"][fs] = _fs_json(f, acc, k, whole, tl, delta)
    return tl


def _small_rpcs(full: np.ndarray, pagesize: int, cfg: Config) -> dict[str, np.ndarray]:
    """Per direction, the RPCs per bin of the sizes the SMALL_RPC findings count as small."""
    small = np.array([is_small_rpc((1 << b) * pagesize, cfg) for b in range(BUCKETS)])
    return {d: full[:, idx[small]].sum(axis=1) for d, idx in _RPC.items()}


def _without_issue(without: list[str], acc: Accumulator, n_hosts: int) -> Issue:
    """TIMELINE_PARTIAL: the hosts whose series is not in the sums, and why."""
    whys = sorted({acc.left_out[h] for h in without if h in acc.left_out})
    if any(h not in acc.left_out for h in without):
        whys.append("their agent kept no timeline of the job")
    host = without[0] if len(without) == 1 else None
    return Issue("TIMELINE_PARTIAL", host, None,
                 f"{len(without):,} of the job's {n_hosts:,} hosts {'is' if len(without) == 1 else 'are'} not in the "
                 f"timeline ({summarise(without)}): "
                 f"{'; '.join(whys)}. The timeline is of the other hosts, checked against their totals")


def _outside_the_job(acc: Accumulator, delta: JobDelta) -> Issue | None:
    """TIMELINE_PARTIAL when the bins run more than a bin before the job's begin or after its
    end: the hosts' clocks and the reporter's disagree, and a phase's times, clipped to the job,
    may be off by as much."""
    width_s = acc.width_ms / 1000.0
    lo, hi = acc.first_bin * width_s, (acc.first_bin + acc.bins) * width_s
    early, late = delta.begin - width_s - lo, hi - (delta.end + width_s)
    if early <= 0 and late <= 0:
        return None
    off = f"{span(early)} before its begin" if early > 0 else f"{span(late)} past its end"
    return Issue("TIMELINE_PARTIAL", None, None,
                 f"the timeline runs {off} ({iso_utc(lo)} to {iso_utc(hi)}, the job {iso_utc(delta.begin)} to "
                 f"{iso_utc(delta.end)}): the hosts' clocks and the reporter's disagree; the phases' times, "
                 "clipped to the job, may be off by as much")


def _sums_to_totals(f: _Fs, tl: Timeline, acc: Accumulator, delta: JobDelta, t: FsTotals | None,
                    pagesize: int | None, no_pagesize: str | None) -> bool:
    """Every array sums to the filesystem's total of the same hosts; what does not is said
    (TIMELINE_PARTIAL: which values, by how much, over which hosts)."""
    expected, untold = _job_totals(f.name, acc.hosts, acc.lacking, delta, t, pagesize)
    got = f.full.sum(axis=0)
    differ = [i for i in range(NVALUES) if int(got[i]) != expected[i]]
    if not differ and not untold:
        return True
    parts = []
    if differ:
        i = differ[0]
        names = summarise([_value_name(j) for j in differ], 3) if len(differ) > 1 else _value_name(i)
        parts.append(f"{names} do not add up to the totals of its {len(acc.hosts):,} "
                     f"host{'s' if len(acc.hosts) != 1 else ''} "
                     f"({_value_name(i)}: {int(got[i]):,} in the timeline, {expected[i]:,} in the totals): "
                     "the agents' series and their deltas disagree")
    if untold:
        parts.append(f"{', '.join(sorted(set(untold)))} could not be checked ({no_pagesize or 'an RPC size not of 2^i pages'})")
    host = acc.hosts[0] if len(acc.hosts) == 1 else None
    tl.issues.append(Issue("TIMELINE_PARTIAL", host, f.name, f"{f.name}: the timeline's " + "; ".join(parts)))
    return False


def _channels(f: _Fs) -> dict[str, np.ndarray]:
    """The filesystem's per-bin counts the JSON and the phases use, at full resolution."""
    full = f.full
    out = {"read_bytes": full[:, _LLITE["read_bytes"]], "write_bytes": full[:, _LLITE["write_bytes"]],
           "read_calls": full[:, _LLITE["read_calls"]], "write_calls": full[:, _LLITE["write_calls"]],
           "metadata_ops": full[:, _METADATA].sum(axis=1), "opens": full[:, _LLITE["open"]],
           "rpcs": full[:, np.concatenate(list(_RPC.values()))].sum(axis=1)}
    if f.small is not None:
        out |= {f"small_rpcs_{d}": a for d, a in f.small.items()}
        out["small_rpcs"] = f.small["read"] + f.small["write"]
    return out


def _fs_json(f: _Fs, acc: Accumulator, k: int, whole: bool, tl: Timeline, delta: JobDelta) -> dict:
    """One filesystem's arrays (at k bins a point), its phases and periodic bursts; its phases'
    counts kept for with_time when its sums match the totals."""
    ch = _channels(f)

    def points(a: np.ndarray) -> list[int]:
        return _rebin(a, acc.first_bin, k)[0].tolist()

    out: dict = {name: points(ch[name]) for name in ("read_bytes", "write_bytes", "read_calls", "write_calls",
                                                      "metadata_ops", "opens")}
    for d, idx in _RPC.items():
        used = np.flatnonzero(f.full[:, idx].any(axis=0))
        out[f"rpc_{d}"] = {str(1 << int(b)): points(f.full[:, idx[b]]) for b in used}
    out["small_rpcs"] = points(ch["small_rpcs"]) if "small_rpcs" in ch else None
    for d, i in _LATENCY.items():
        known = _latency_known(f.name, d, acc, delta)
        sums, calls = points(f.full[:, i]), out[f"{d}_calls"]
        out[f"{d}_latency_us"] = [_mean(s, c) for s, c in zip(sums, calls)] if known else None
        out[f"{d}_latency_us_mean"] = _mean(sum(sums), sum(calls)) if known else None
    out["sums_to_totals"] = whole
    found = phasefinder.find({c: ch[name] for c, name in _CHANNELS.items()}, acc.width_ms / 1000.0)
    out["phases"], counted = _phases_json(found, ch, acc, delta)
    out["periodic"] = [{"channel": _CHANNELS[r.channel], "period_s": round(r.period_bins * acc.width_ms / 1000.0, 3),
                        "count": r.count, "mean_amount": r.mean_amount,
                        "first_s": _since_begin(r.starts[0], acc, delta)} for r in found.periodic]
    if whole:
        tl.phases[f.name] = counted
        tl.counts[f.name] = {key: int(ch[key].sum()) for key in _COUNTED if key in ch}
    return out


def _latency_known(fs: str, direction: str, acc: Accumulator, delta: JobDelta) -> bool:
    """Whether the timeline's latency sums of fs in that direction are those of all its calls:
    every host of the timeline whose calls of fs were counted and not none had its latency
    counted too (a client before 2.14 has no latency: not counted) and a series that has it (an
    agent older than the latency in the timeline has not); no host's calls of fs were left out
    (a source left out mid-job: its series' points of calls are still in the sums, and whether
    its client had latencies cannot be told); and some host made such calls. Else a mean would
    divide some hosts' latency by other hosts' calls too."""
    rows = _rows(delta, acc.hosts)
    calls, calls_counted = _fs_deltas(delta, _CALLS_METRIC[direction], fs, rows)
    _, latency_counted = _fs_deltas(delta, _LATENCY_METRIC[direction], fs, rows)
    calling = calls_counted & (calls > 0)
    lacking = set(acc.lacking.get(_series_name(_LATENCY_METRIC[direction]), ()))
    has_it = latency_counted & np.array([delta.hosts[r] not in lacking for r in rows], dtype=bool)
    left_out = ~calls_counted & np.array([fs in delta.incomplete.get(delta.hosts[r], ()) for r in rows], dtype=bool)
    return bool(calling.any()) and not (calling & ~has_it).any() and not left_out.any()


def _mean(latency_us: int, calls: int) -> float | None:
    """The mean latency of a call in µs (0.1 µs), or None: no calls, or counts taken back (a
    source left out mid-job leaves its earlier counts as a negative point)."""
    return round(latency_us / calls, 1) if calls > 0 and latency_us >= 0 else None


_COUNTED = ("opens", "small_rpcs_read", "small_rpcs_write")     # what with_time weighs
_PHASE_AMOUNTS = ("read_bytes", "write_bytes", "metadata_ops", "opens", "small_rpcs", "rpcs")


def _since_begin(b: int, acc: Accumulator, delta: JobDelta) -> float:
    """Row b's start in seconds since the job's begin, clipped to [0, elapsed]."""
    t = (acc.first_bin + b) * acc.width_ms / 1000.0 - delta.begin
    return round(min(max(t, 0.0), delta.elapsed_s), 3)


def _phases_json(found: phasefinder.Phases, ch: dict[str, np.ndarray], acc: Accumulator,
                 delta: JobDelta) -> tuple[list[dict], list[PhaseCounts]]:
    """The phases in seconds since the job's begin with their amounts (JSON), and the counts
    with_time weighs."""
    out, counted = [], []
    for p in found.phases:
        amounts = {key: int(ch[key][p.first:p.end].sum()) if key in ch else None for key in _PHASE_AMOUNTS}
        entry = {"kind": p.kind, "start_s": _since_begin(p.first, acc, delta), "end_s": _since_begin(p.end, acc, delta),
                 "channel": _CHANNELS[p.channel] if p.channel else None, **amounts}
        out.append(entry)
        counted.append(PhaseCounts(p.kind, entry["start_s"], entry["end_s"],
                                   {key: int(ch[key][p.first:p.end].sum()) for key in _COUNTED if key in ch}))
    return out, counted


# What each finding's count is in the timeline, in words, and the advice when most of it came
# in a start-up burst or in a final flush.
_TIMED = {
    "OPEN_CLOSE_STORM": ("opens", "opens", {
        "start-up burst": "the opens come at start-up, not through the run: open the input once (one rank "
                          "reads and broadcasts it, or a shared HDF5/NetCDF file) rather than every rank "
                          "opening every file; the steady part of the job is not the problem",
        "final flush": "the opens come in the final write-out: write the results into one shared file "
                       "(HDF5/NetCDF, MPI-IO) rather than a file per rank or per step"}),
    "SMALL_RPC_READ": ("small_rpcs_read", "small read RPCs", {
        "start-up burst": "the small reads come at start-up (reading input): read the input once in large "
                          "blocks on one rank and broadcast it, or pack small input files into one",
        "final flush": "the small reads come at the end: read what the final step needs in blocks of "
                       ">= 1 MiB (collective MPI-IO reads)"}),
    "SMALL_RPC_WRITE": ("small_rpcs_write", "small write RPCs", {
        "start-up burst": "the small writes come at start-up (logs, per-rank files being created): write "
                          "them once, buffered, or from one rank",
        "final flush": "the small writes come in the final write-out: gather the results and write them "
                       "in >= 1 MiB blocks (MPI-IO collective buffering, romio_cb_write=enable) rather "
                       "than each rank writing small pieces at the end"}),
}


def with_time(flags: list[Flag], tl: Timeline | None) -> None:
    """Give the open-storm and small-RPC findings their time: when at least STORM_SHARE of the
    finding's count (over the timeline's hosts, where its sums match the totals) came in one
    start-up burst or final flush, the finding says so with the job's numbers, its advice is
    that phase's, and its `when` names the phase. What is flagged does not change."""
    if tl is None:
        return
    for flag in flags:
        if flag.id not in _TIMED or flag.fs not in tl.phases:
            continue
        key, what, advice = _TIMED[flag.id]
        total = tl.counts[flag.fs].get(key)
        if not total or total <= 0:
            continue
        for p in tl.phases[flag.fs]:
            amount = p.counts.get(key)
            if p.kind not in _EDGE_KINDS or amount is None or amount < STORM_SHARE * total:
                continue
            share = amount / total
            hosts = tl.json["hosts"]
            if tl.json["hosts_without"]:     # the count is the timeline's, not the finding's
                what += f" on the {hosts:,} host{'s' if hosts != 1 else ''} with a timeline"
            if p.kind == "start-up burst":
                said = (f"{100 * share:.0f} % of the {total:,} {what} came in the first {span(p.end_s)} "
                        f"of a {span(tl.elapsed_s)} job: a start-up storm, not a steady pattern")
            else:
                said = (f"{100 * share:.0f} % of the {total:,} {what} came in the last "
                        f"{span(tl.elapsed_s - p.start_s)} of a {span(tl.elapsed_s)} job: the final "
                        "write-out, not a steady pattern")
            flag.finding = f"{flag.finding}; {said}"
            flag.advice = advice[p.kind]
            flag.when = {"phase": p.kind, "start_s": p.start_s, "end_s": p.end_s, "share": round(share, 4),
                         "count": amount, "of": total}
            break
