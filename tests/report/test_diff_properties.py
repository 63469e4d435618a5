"""The diff rules by property: random jobs (diffcases: Lustre 1.8 to 2.17, 1 to 16 hosts, clears
of whole files, of some OSCs, with counters climbing past their old values or not, with and
without start times, remounts, devices added, gone or replaced, files unreadable at either
end, values missing, histograms to 64M with 4 KiB and 64 KiB pages, huge values) against a
reference written here with plain loops, value by value, from what happened in the job.

Invariants:
- every value counted is the job's true I/O on it; where a clear could not be seen (every
  counter of the file climbed back past its old value and no start time moved: DESIGN §3.3) it
  is end - begin, short of the true I/O by what the counters held when cleared, never above it;
- nothing counted has its end below its begin, and no counted delta reaches 2^63;
- everything left out has its reason (JobDelta.left_out, the reference's, value by value) and
  its data_quality entry; nothing is said left out that was not;
- the report's per-filesystem totals are the sums of what was counted, and a total of 2^63 or
  more is said.

`make test` runs the number of cases each test states (tests/kit/proptest.py); `make fuzz` FUZZ_FACTOR times as many.
"""

from __future__ import annotations

import numpy as np
from hypothesis import event, example, given, strategies as st
from hypothesis.extra.numpy import arrays
from kit.proptest import runs

from kit import diffcases as dc
from kit.diffcases import BEGIN, END, HISTOGRAM, RPC, Case, Event, Mount, StatsFile
from lustre_jobreport import catalog, config
from lustre_jobreport.report import document as report
from lustre_jobreport.catalog import P, Reason
from lustre_jobreport.report.diff import DeviceColumns, diff, fs_of

CFG = config.Config()
TOLERANCE_US = catalog.START_TOLERANCE_US
ISSUE_OF = {Reason.REMOUNTED: "REMOUNT", Reason.CLEARED: "COUNTER_RESET", Reason.REPLACED: "COUNTER_RESET",
            Reason.NOT_READ_AT_BEGIN: "VALUES_MISSING", Reason.NOT_READ_AT_END: "VALUES_MISSING",
            Reason.GONE: "VALUES_MISSING", Reason.NOT_READ: "VALUES_MISSING", Reason.TOO_LARGE: "VALUE_TOO_LARGE"}


# ---- the reference -----------------------------------------------------------------------------

class Unit:
    """One stats file of one device on one host as the reporter sees it, value by value:
    values[(metric, instance)] = (at begin or None, at end or None, true I/O)."""

    def __init__(self, source: str, device: str, known: list[bool], values: dict, cleared: bool,
                 starts: list[tuple[int | None, int | None]]):
        self.source, self.device, self.known, self.values = source, device, known, values
        self.cleared = cleared      # the counters restarted during the job (a clear, a new device)
        self.starts = starts        # (start at begin, start at end) of each file it is made of

    def read(self, end: int) -> bool:
        return any(v[end] is not None for v in self.values.values())

    def clear_seen(self) -> bool:
        """A counter given at both ends went back, or a start time that is a time at both
        ends moved by more than the tolerance."""
        for b, e, _ in self.values.values():
            if b is not None and e is not None and e < b:
                return True
        for b, e in self.starts:
            if b and e and abs(e - b) > TOLERANCE_US:
                return True
        return False


def _file_unit(source: str, device: str, known: list[bool], f: StatsFile) -> Unit:
    values = {}
    for key, c in f.counters.items():
        values[key] = (f.value(key, BEGIN) if c.given[BEGIN] else None,
                       f.value(key, END) if c.given[END] else None, c.true_io)
    return Unit(source, device, known, values, f.cleared, [tuple(f.start)])


def _histogram_unit(layout: dc.Layout, mount: Mount) -> Unit:
    """The filesystem's histogram: per bucket the OSCs' sum at each end (all or nothing), the
    true I/O of every OSC it ever summed; the OSCs' rpc_stats start times."""
    sums = [dc.histogram(mount, BEGIN), dc.histogram(mount, END)]
    values = {}
    for key in layout.counters(RPC, f"{mount.fs}-OST0000"):
        true = sum(d.files[RPC].counters[key].true_io for d in mount.oscs)
        values[key] = (sums[BEGIN][key] if sums[BEGIN] else None, sums[END][key] if sums[END] else None, true)
    starts = [tuple(d.files[RPC].start) for d in mount.oscs]
    known = [mount.mount_id[e] is not None for e in (BEGIN, END)]
    return Unit(RPC, mount.fs, known, values, any(d.files[RPC].cleared for d in mount.oscs), starts)


def reason_of(u: Unit, remounted: bool, gone: bool, replaced: bool) -> Reason:
    """The rules, for one unit (DESIGN §3.3), the first that applies."""
    required = u.source in dc.REQUIRED
    read_b, read_e = u.read(BEGIN), u.read(END)
    known_b, known_e = u.known
    if remounted:
        return Reason.REMOUNTED
    if gone or (known_b and not known_e and (read_b or required)):
        return Reason.GONE
    if replaced:
        return Reason.REPLACED
    if u.clear_seen():
        return Reason.CLEARED
    if read_e and known_b and not read_b:
        return Reason.NOT_READ_AT_BEGIN
    for b, e, _ in u.values.values():
        if read_b and b is None and e is not None:
            return Reason.NOT_READ_AT_BEGIN
    if read_b and not read_e:
        return Reason.NOT_READ_AT_END
    for b, e, _ in u.values.values():
        if b is not None and e is None:
            return Reason.NOT_READ_AT_END
    if required and known_e and not read_e and not known_b:
        return Reason.NOT_READ_AT_END      # a device that came during the job, not read at its end
    if required and known_b and known_e and not read_b and not read_e:
        return Reason.NOT_READ
    return Reason.COUNTED


class Expected:
    """What the diff of a case must give: the reasons of everything left out, the delta of
    everything counted, the true I/O of every value."""

    def __init__(self, case: Case):
        self.hosts = [h.name for h in case.hosts if all(h.reachable)]
        # a file no host gave any value of, at either end, is one this Lustre need not have,
        # unless every layout has it
        self.sources = {f.source for h in case.hosts for m in h.mounts for _, f in dc.all_files(m)
                        if any(h.reachable[e] and c.given[e] for c in f.counters.values() for e in (BEGIN, END))}
        self.reasons: dict[tuple[str, str, str], Reason] = {}
        self.deltas: dict[tuple[str, str, str], int] = {}
        self.true_io: dict[tuple[str, str, str], int] = {}
        self.undercounted: set[tuple[str, str, str]] = set()    # under a clear nobody can see
        for host in case.hosts:
            if all(host.reachable):
                for mount in host.mounts:
                    self._mount(case.layout, host.name, mount)

    def _mount(self, layout: dc.Layout, host: str, mount: Mount) -> None:
        ids = mount.mount_id
        remounted = ids[BEGIN] is not None and ids[END] != ids[BEGIN]
        known = [i is not None for i in ids]
        for f in mount.files.values():
            self._judge(host, _file_unit(f.source, mount.fs, known, f), remounted, False, False)
        oscs_gone = oscs_replaced = False
        for d in mount.devices:
            there = [bool(ids[e] and d.ident[e]) for e in (BEGIN, END)]
            replaced = all(there) and d.ident[BEGIN] != d.ident[END]
            if d.kind == "osc":
                oscs_gone |= there[BEGIN] and not there[END] and bool(ids[END])
                oscs_replaced |= replaced
            for f in d.files.values():
                if f.source != RPC:
                    self._judge(host, _file_unit(f.source, d.name, there, f), remounted, False, replaced)
        if mount.oscs:
            self._judge(host, _histogram_unit(layout, mount), remounted, oscs_gone, oscs_replaced)

    def _judge(self, host: str, u: Unit, remounted: bool, gone: bool, replaced: bool) -> None:
        if not any(u.known) or (u.source not in self.sources and u.source not in dc.REQUIRED):
            return          # a device there at neither end, a file no snapshot has
        if u.source not in dc.REQUIRED and not u.read(BEGIN) and not u.read(END):
            return          # a file not every layout has, read at neither end: nothing to count
        reason = reason_of(u, remounted, gone, replaced)
        counted = {}
        for key, (b, e, true) in u.values.items():
            self.true_io[(host, *key)] = true
            if reason == Reason.COUNTED and e is not None and (b is not None or not u.known[BEGIN]):
                counted[key] = e - (b or 0)
        if any(delta >= 1 << 63 for delta in counted.values()):
            reason, counted = Reason.TOO_LARGE, {}
        if reason != Reason.COUNTED:
            self.reasons[(host, u.source, u.device)] = reason
        for key, delta in counted.items():
            self.deltas[(host, *key)] = delta
            if u.cleared:
                self.undercounted.add((host, *key))


# ---- the properties -----------------------------------------------------------------------------

def counted_values(d) -> dict[tuple[str, str, str], int]:
    out = {}
    for metric, t in d.tables.items():
        for r, c in zip(*np.nonzero(t.counted)):
            out[(d.hosts[r], metric, t.instances[c])] = int(t.delta[r, c])
    return out


def _values(snap) -> dict[tuple[str, str, str], int]:
    """(host, metric, instance) -> the snapshot's value, of every counter there."""
    out = {}
    for metric, t in snap.metrics.items():
        if t.sem == "counter" and not t.is_string:
            for r, c in zip(*np.nonzero(t.present)):
                out[(snap.host_names[r], metric, t.instances[c])] = int(t.values[r, c])
    return out


def _past_int64(doc) -> bool:
    """Whether a JSON document holds a whole number of 2^63 or more."""
    if isinstance(doc, dict):
        return any(_past_int64(v) for v in doc.values())
    if isinstance(doc, list):
        return any(_past_int64(v) for v in doc)
    return isinstance(doc, int) and doc >= 1 << 63


def check(case: Case) -> Expected:
    begin, end = dc.snapshots(case)
    d = diff(begin, end)
    want = Expected(case)
    assert d.hosts == want.hosts
    assert d.reasons() == want.reasons

    got = counted_values(d)
    assert got == want.deltas
    at_begin, at_end = _values(begin), _values(end)
    for key, delta in got.items():                          # end - begin, end >= begin, < 2^63
        b, e = at_begin.get(key), at_end.get(key)
        assert e is not None and (b is None or e >= b) and delta == e - (b or 0) < 1 << 63
        if key in want.undercounted:
            assert delta <= want.true_io[key]
        else:
            assert delta == want.true_io[key]
    for t in d.tables.values():
        assert not t.delta[~t.counted].any()

    said = {(q.id, q.host, q.fs) for q in d.issues}
    for (host, source, device), reason in want.reasons.items():
        fs = fs_of(device)
        assert (ISSUE_OF[reason], host, fs) in said or (ISSUE_OF[reason], None, fs) in said, (host, source, reason)
        assert fs in d.incomplete.get(host, ()), (host, source, device)
    left_fs = {(host, fs_of(device)) for host, _, device in want.reasons}
    assert {(h, fs) for h, fss in d.incomplete.items() for fs in fss} == left_fs
    for q in d.issues:
        if q.id in ("REMOUNT", "COUNTER_RESET", "VALUES_MISSING") or (q.id == "VALUE_TOO_LARGE" and q.host):
            assert any(fs == q.fs and q.host in (None, host) for host, fs in left_fs), q

    doc = report.from_delta(d, CFG)        # the report's sums: of what was counted, over the hosts
    summed: dict[tuple[str, str], int] = {}
    for (host, metric, instance), delta in got.items():
        summed[(metric, instance)] = summed.get((metric, instance), 0) + delta
    def total(metric: str, instance: str, shown) -> None:
        """A figure the report shows is the sum of what was counted; null only if nothing was."""
        if shown is None:
            assert (metric, instance) not in summed, (metric, instance)
        else:
            assert shown == summed.get((metric, instance), 0), (metric, instance)
    for fs, t in doc["filesystems"].items():
        total(P + "llite.read_bytes", fs, t["read_bytes"])
        for direction, metric in zip(("read", "write"), HISTOGRAM):
            buckets = t["rpc"][direction]
            if buckets is None:
                assert not any(m == metric and i.startswith(fs + ":") for m, i in summed), (fs, direction)
            for label in buckets or ():
                total(metric, f"{fs}:{label}", buckets[label])
        for ost, figures in t["osts"].items():
            total(P + "osc.read_bytes", f"{fs}-{ost}", figures["read_bytes"])
    # a count of 2^63 or more anywhere in the report is said, for its filesystem
    too_large = {q["fs"] for q in doc["data_quality"] if q["id"] == "VALUE_TOO_LARGE"}
    for fs, t in doc["filesystems"].items():
        assert fs in too_large or not _past_int64(t), fs
    assert not _past_int64({k: v for k, v in doc.items() if k != "filesystems"})
    return want


# what the properties found in diff.py, kept
TWO_OSTS = [("scratch", 2, 1)]
FOUND = {
    # an OSC not read at the begin and gone at the end: its osc stats (a file every layout has)
    # were left out unsaid, as it had not been read
    "gone, unread at the begin": dc.make_case(dc.Layout("2.10.8", 4096), TWO_OSTS, 1, (
        Event("unreadable", file=2, end=0), Event("gone", device=0)), 0),
    # an OSC that came during the job, its osc stats unreadable at the end: left out unsaid
    "new, unread at the end": dc.make_case(dc.Layout("2.10.8", 4096), TWO_OSTS, 1, (
        Event("added", device=0), Event("unreadable", file=2, end=1)), 0),
    # an OSC replaced on 2.10 (no start times) whose RPC counts climbed past the old device's:
    # the filesystem's histogram, their sum, was counted short of the old device's counts
    "replaced OSC in the histogram": dc.make_case(dc.Layout("2.10.8", 4096), TWO_OSTS, 1, (
        Event("replaced", device=1, climb="all"),), 0),
    # a filesystem unmounted on one host: the OSC its other host had was said left out there too
    "another host's OSC": dc.make_case(dc.Layout("1.8.9", 4096), [("scratch", 1, 1)], 2, (
        Event("unmount"), Event("added")), 0),
    # an OST's read and write bytes each below 2^63, their sum, on which UNDER_STRIPED rests, not:
    # the flag carried it unsaid
    "a flag's figure past int64": dc.make_case(dc.Layout("2.14.0", 65536), [("scratch", 4, 1)], 2, (
        Event("clear"), Event("big_begin", host=1, file=26), Event("remount"), Event("remount", host=1),
        Event("mount", host=1)), 0),
}


@runs(2000)
@given(dc.cases())
@example(FOUND["gone, unread at the begin"])
@example(FOUND["new, unread at the end"])
@example(FOUND["replaced OSC in the histogram"])
@example(FOUND["another host's OSC"])
@example(FOUND["a flag's figure past int64"])
def test_the_diff_counts_the_true_io_and_says_everything_it_leaves_out(case):
    want = check(case)
    for reason in sorted({r.name for r in want.reasons.values()}):
        event(f"left out: {reason}")       # --hypothesis-show-statistics: what the cases covered
    if want.undercounted:
        event("a clear nobody can see")


@runs(2000)
@given(st.lists(st.integers(0, 5), max_size=40), st.integers(0, 2), st.data())
def test_a_mask_per_instance_becomes_one_per_device(cols, spare, data):
    """Several instances of one device (a histogram's buckets): any of them, by device."""
    n_devices = max(cols, default=-1) + 1 + spare
    mask = data.draw(arrays(np.bool_, (data.draw(st.integers(0, 4)), len(cols))))
    got = DeviceColumns.of(np.array(cols, dtype=np.intp)).any(mask, n_devices)
    for h in range(mask.shape[0]):
        for device in range(n_devices):
            assert got[h, device] == any(mask[h, i] for i, c in enumerate(cols) if c == device)
