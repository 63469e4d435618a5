"""Random jobs for the diff rules' property tests: the case model, its strategies, and the begin
and end snapshots of a case, as the agent would give them.

A case is a job on 1 to 16 hosts of one Lustre layout (1.8 to 2.17, 4 KiB or 64 KiB pages), told
per host, filesystem, device and stats file in plain Python (no reporter types), so that any
implementation of the diff rules can be fed the same cases (the reporter's diff in
test_diff_properties.py, the agent's lc_job_diff in test_diff_differential.py):

  Case      layout, hosts
  Host      name, reachable at [begin, end], mounts
  Mount     a filesystem on a host: its mount id at [begin, end] (None: not mounted), its llite
            stats files, its OSC and MDC devices
  Device    an OSC or MDC: its instance name, its identity (device directory) at [begin, end]
            (None: not there), its stats files
  StatsFile one stats file of one device: its counters, whether the agent read it at [begin,
            end], its start time (us) at [begin, end] (None: the layout has none), whether it
            was cleared (or its device replaced, or its filesystem remounted) during the job
  Counter   one value: at the begin, the job's I/O on it before and after the clear, whether
            the agent gave it at [begin, end]

A Counter's value at the end is `after` if its file was cleared, else `begin + before`; the job's
true I/O on it is `before + after`. The per-filesystem RPC histogram (fs.rpc.*) is not a file of
its own: it is the sum of the filesystem's OSCs' rpc_stats, each OSC's contribution a
StatsFile of source "osc rpc_stats" keyed by the histogram's instances, and the agent gives it
all or nothing (every OSC there read, else no bucket). The agent gives every counter of an OSC's
or MDC's file once it read it (pmda-lustre lc_value), which the job view's answer relies on (it
sends no OSC or MDC delta of 0): a value missing from a file read is an llite one. An end
snapshot has each OSC's and MDC's import state (osc.state, mdc.state) unless its import file
was not read then.

Cases are drawn as a shape (layout, filesystems, hosts), a list of events (clears, remounts,
devices added, gone or replaced, files unreadable, values missing, hosts unreachable, huge
values) and a seed for the counters' values: hypothesis shrinks a failure to few events on
few hosts. `snapshots(case)` builds the two snapshots the reporter would read.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass, field

from hypothesis import strategies as st

from lustre_jobreport import catalog
from lustre_jobreport.acquire import hostsnap
from lustre_jobreport.catalog import P
from lustre_jobreport.acquire.column import SINGULAR, Column
from lustre_jobreport.acquire.hostsnap import HostSnapshot
from lustre_jobreport.acquire.snapfile import Snapshot

BEGIN, END = 0, 1
U64_MAX = (1 << 64) - 1
T_BEGIN, T_END = 1_800_000_000.0, 1_800_003_600.0       # the snapshots' times
START_US = 1_790_000_000_000_000                         # stats files started before the job

# Lustre versions, one per layout family the agent reads (tests/agent/test_layouts.py)
VERSIONS = ("1.8.9", "2.5.3", "2.10.8", "2.12.9", "2.14.0", "2.15.0", "2.15.4", "2.16.1", "2.17.0")
PAGE_SIZES = (4096, 65536)

# The stats files modelled, the counters of each (a few of what the agent gives: the rules treat
# every counter of a file alike) and the start time that stamps it, if the catalog has one.
LLITE, READAHEAD, RPC, OSC_STATS, OSC_IMPORT, MDC_IMPORT = (
    "llite stats", "llite read_ahead_stats", "osc rpc_stats", "osc stats", "osc import", "mdc import")
REQUIRED = {s.name for s in catalog.SOURCES if s.required}
HISTOGRAM = (P + "fs.rpc.read", P + "fs.rpc.write")
START_METRIC = {LLITE: P + "llite.stats_start", OSC_STATS: P + "osc.stats_start", RPC: P + "osc.rpc_stats_start"}
STATE_METRIC = {"osc": P + "osc.state", "mdc": P + "mdc.state"}   # an end snapshot's import states


@dataclass(frozen=True)
class Layout:
    """What one Lustre version's agent gives (tests/agent/test_layouts.py has it in full)."""
    version: str
    page_size: int

    @property
    def v(self) -> tuple[int, ...]:
        return tuple(int(x) for x in self.version.split("."))

    @property
    def stats_start(self) -> str | None:
        """llite and osc stats start times: 'time' (2.15.2+, wall clock), 'zero' (2.15.0 and
        2.15.1 print a monotonic 0: not a time), None (older: none)."""
        return "time" if self.v >= (2, 15, 2) else "zero" if self.v >= (2, 15, 0) else None

    @property
    def rpc_start(self) -> str | None:
        """osc rpc_stats start: 'time' (2.15.2+), 'since_boot' (2.15.0, 2.15.1: seconds since
        boot of the last clear, 0 if never cleared), None (older)."""
        return "time" if self.v >= (2, 15, 2) else "since_boot" if self.v >= (2, 15, 0) else None

    @property
    def has_import(self) -> bool:
        return self.v >= (2, 0)          # 1.8 has no import files (no reconnect counts)

    @property
    def buckets(self) -> list[str]:
        """The RPC-size buckets the agent exports for every filesystem: one page to 64 MiB."""
        return _buckets(self.page_size)

    def counters(self, source: str, instance: str) -> list[tuple[str, str]]:
        """(metric, instance) of the counters a file of this source has for this instance."""
        if source == LLITE:
            names = ["llite.read_bytes", "llite.open"] + (["llite.latency.read"] if self.v >= (2, 14) else [])
        elif source == READAHEAD:
            names = ["llite.readahead.hits"]
        elif source == RPC:
            fs = instance.rsplit("-OST", 1)[0]
            return [(m, f"{fs}:{b}") for m in HISTOGRAM for b in self.buckets]
        elif source == OSC_STATS:       # all of them: the agent gives an OSC's file whole (below)
            names = ["osc.read_bytes", "osc.write_bytes", "osc.read_rpcs", "osc.write_rpcs", "osc.req_waittime",
                     "osc.req_count"]
        elif source == OSC_IMPORT:
            names = ["osc.reconnects"]
        else:
            names = ["mdc.reconnects"]
        return [(P + n, instance) for n in names]


@functools.cache
def _buckets(page_size: int) -> list[str]:
    out, size = [], page_size
    while size <= 64 << 20:
        out.append(f"{size >> 20}M" if size >= 1 << 20 else f"{size >> 10}K")
        size <<= 1
    return out


@dataclass
class Counter:
    begin: int                    # at the job's start (0 on a device that was not there)
    before: int                   # the job's I/O before the file was cleared (all of it if never)
    after: int = 0                # the job's I/O after the clear
    given: list[bool] = field(default_factory=lambda: [True, True])   # the agent gave it [begin, end]

    @property
    def true_io(self) -> int:
        return self.before + self.after


@dataclass
class StatsFile:
    source: str
    counters: dict[tuple[str, str], Counter]
    read: list[bool] = field(default_factory=lambda: [True, True])
    start: list[int | None] = field(default_factory=lambda: [None, None])
    start_kind: str | None = None     # Layout.stats_start or .rpc_start of its source
    cleared: bool = False

    def value(self, key: tuple[str, str], end: int) -> int:
        c = self.counters[key]
        if end == BEGIN:
            return c.begin
        return c.after if self.cleared else c.begin + c.before


@dataclass
class Device:
    kind: str                         # "osc" | "mdc"
    name: str                         # instance name: scratch-OST0001
    ident: list[str | None]           # its directory at [begin, end]; None: not there
    files: dict[str, StatsFile]


@dataclass
class Mount:
    fs: str
    mount_id: list[str | None]        # [begin, end]; None: not mounted
    files: dict[str, StatsFile]       # llite stats, llite read_ahead_stats
    devices: list[Device]

    @property
    def oscs(self) -> list[Device]:
        return [d for d in self.devices if d.kind == "osc"]


@dataclass
class Host:
    name: str
    reachable: list[bool]
    mounts: list[Mount]


@dataclass
class Case:
    layout: Layout
    hosts: list[Host]
    made_by: tuple = ()               # make_case's arguments: what a failure prints

    def __repr__(self) -> str:
        """The call that makes this case again (paste it into an @example)."""
        layout, shape, n_hosts, happened, seed = self.made_by
        return (f"make_case(Layout({layout.version!r}, {layout.page_size}), {shape!r}, {n_hosts}, "
                f"({''.join(repr(e) + ', ' for e in happened)}), {seed})")

    def _repr_pretty_(self, printer, cycle) -> None:
        """Hypothesis prints a failing case this way too (not field by field)."""
        printer.text(repr(self))


# ---- events -----------------------------------------------------------------------------------

@dataclass(frozen=True, repr=False)
class Event:
    """Something that happens to one host during the job. host, fs, file, device and counter
    are indices, taken modulo what the case has; `end` is 0 (begin), 1 (end) or 2 (both)."""
    kind: str
    host: int = 0
    fs: int = 0
    file: int = 0
    device: int = 0
    counter: int = 0
    end: int = 0
    climb: str = "none"     # after a clear: "none" fall below their old values, "some", "all" climb past

    def __repr__(self) -> str:
        """Event('clear', host=2, climb='all'): the fields that are not their defaults."""
        defaults = Event.__dataclass_fields__
        fields = [f"{k}={v!r}" for k, v in vars(self).items() if k != "kind" and v != defaults[k].default]
        return f"Event({', '.join([repr(self.kind)] + fields)})"


KINDS = ("clear", "clear_dropping", "clear_rpc_all", "unreadable", "missing", "remount", "unmount", "mount", "added", "gone",
         "replaced", "unreachable", "huge", "big_begin")

events = st.builds(Event, kind=st.sampled_from(KINDS), host=st.integers(0, 15), fs=st.integers(0, 1),
                   file=st.integers(0, 30), device=st.integers(0, 7), counter=st.integers(0, 40),
                   end=st.integers(0, 2), climb=st.sampled_from(("none", "some", "all")))


@st.composite
def cases(draw, max_hosts: int = 16, max_events: int = 10) -> Case:
    layout = Layout(draw(st.sampled_from(VERSIONS)), draw(st.sampled_from(PAGE_SIZES)))
    shape = [(name, draw(st.integers(1, 4)), draw(st.integers(1, 2)))
             for name in ("scratch", "home")[:draw(st.integers(1, 2))]]
    n_hosts = draw(st.one_of(st.integers(1, 4), st.integers(1, max_hosts)))   # few hosts, often
    happened = tuple(draw(st.lists(events, max_size=max_events)))
    seed = draw(st.integers(0, 2**32 - 1))
    return make_case(layout, shape, n_hosts, happened, seed)


def make_case(layout: Layout, shape: list[tuple[str, int, int]], n_hosts: int, happened: tuple,
              seed: int) -> Case:
    """A case: every host mounts every filesystem of shape (name, OSTs, MDTs) at both ends, every
    file read, nothing cleared, then the events happen; counter values from the seed."""
    rng = random.Random(seed)
    hosts = [Host(f"n{h:02d}", [True, True], [_mount(layout, fs, osts, mdts, h, rng) for fs, osts, mdts in shape])
             for h in range(n_hosts)]
    case = Case(layout, hosts, (layout, shape, n_hosts, tuple(happened), seed))
    for ev in happened:
        _happen(case, ev, rng)
    for host in hosts:
        for mount in host.mounts:
            _settle(layout, mount, rng)
    return case


def _value(rng: random.Random, bits: int = 40) -> int:
    """0 a tenth of the time, else small or up to 2^bits about as often."""
    pick = rng.random()
    return 0 if pick < 0.1 else 1 + rng.getrandbits(10) if pick < 0.5 else 1 + rng.getrandbits(bits)


def _file(layout: Layout, source: str, instance: str, rng: random.Random) -> StatsFile:
    bits = 34 if source == RPC else 40      # the agent sums a filesystem's OSCs: no wrap
    counters = {key: Counter(_value(rng, bits), _value(rng, 30)) for key in layout.counters(source, instance)}
    kind = layout.rpc_start if source == RPC else layout.stats_start if source in START_METRIC else None
    f = StatsFile(source, counters, start_kind=kind)
    if kind == "time":
        t = START_US + rng.randint(0, 10**12)
        f.start = [t, t + rng.randint(-1000, 1000)]           # read twice: within the tolerance
    elif kind == "zero":
        f.start = [0, 0]
    elif kind == "since_boot":
        t = rng.choice((0, rng.randint(10**6, 10**11)))      # 0: never cleared since boot
        f.start = [t, t]
    return f


def _mount(layout: Layout, fs: str, osts: int, mdts: int, h: int, rng: random.Random) -> Mount:
    sbi = f"ffff{h:04x}{rng.randint(0, 0xffff):04x}"
    devices = []
    for kind, count, tag in (("osc", osts, "OST"), ("mdc", mdts, "MDT")):
        for i in range(count):
            name = f"{fs}-{tag}{i:04x}"
            sources = ((OSC_STATS, RPC) + ((OSC_IMPORT,) if layout.has_import else ()) if kind == "osc"
                       else (MDC_IMPORT,) if layout.has_import else ())
            devices.append(Device(kind, name, [f"{name}-{kind}-{sbi}"] * 2,
                                  {s: _file(layout, s, name, rng) for s in sources}))
    return Mount(fs, [f"{fs}-{sbi}"] * 2, {s: _file(layout, s, fs, rng) for s in (LLITE, READAHEAD)}, devices)


def all_files(mount: Mount) -> list[tuple[Device | None, StatsFile]]:
    return [(None, f) for f in mount.files.values()] + [(d, f) for d in mount.devices for f in d.files.values()]


def _restart(f: StatsFile, rng: random.Random, climb: str = "none") -> None:
    """The file's counters start again from 0 during the job (a clear, a new device, a remount),
    its start time with them; climb: how many of them then pass their old values."""
    f.cleared = True
    for c in f.counters.values():
        up = climb == "all" or (climb == "some" and rng.random() < 0.5)
        if up:
            c.after = min(c.begin + rng.randint(0, 1 << 20), U64_MAX)
        else:
            c.after = rng.randint(0, c.begin - 1) if c.begin else 0
    if f.start_kind == "time":
        f.start[END] = (f.start[BEGIN] or START_US) + rng.randint(1001, 10**9)
    elif f.start_kind == "since_boot":
        f.start[END] = (f.start[BEGIN] or 10**6) + rng.randint(1001, 10**9)


def _happen(case: Case, ev: Event, rng: random.Random) -> None:
    host = case.hosts[ev.host % len(case.hosts)]
    if ev.kind == "unreachable":
        for end in ((BEGIN, END) if ev.end == 2 else (ev.end,)):
            host.reachable[end] = False
        return
    mount = host.mounts[ev.fs % len(host.mounts)]
    files = all_files(mount)
    device, f = files[ev.file % len(files)]
    d = mount.devices[ev.device % len(mount.devices)]
    if ev.kind == "clear":
        _restart(f, rng, ev.climb)
    elif ev.kind == "clear_dropping" and f.source in (LLITE, READAHEAD):   # not an OSC's or MDC's: whole
        # cleared, and (as a clear before the job did too) the lines of counters at 0 dropped:
        # the agent gives those no value
        _restart(f, rng, ev.climb)
        for c in f.counters.values():
            c.given[BEGIN] = c.given[BEGIN] and c.begin != 0
            c.given[END] = c.given[END] and c.after != 0
    elif ev.kind == "clear_rpc_all":                     # lctl set_param osc.*.rpc_stats=clear
        for osc in mount.oscs:
            _restart(osc.files[RPC], rng, ev.climb)
    elif ev.kind == "unreadable":
        for end in ((BEGIN, END) if ev.end == 2 else (ev.end,)):
            f.read[end] = False
    elif ev.kind == "missing" and f.source in (LLITE, READAHEAD):   # read, but this value not given
        c = list(f.counters.values())[ev.counter % len(f.counters)]
        c.given[ev.end % 2] = False
    elif ev.kind in ("remount", "unmount", "mount"):
        _remount(mount, ev.kind, rng)
    elif ev.kind == "added":                              # the device appeared during the job
        d.ident[BEGIN] = None
    elif ev.kind == "gone":
        d.ident[END] = None
    elif ev.kind == "replaced" and d.ident[BEGIN] and d.ident[END]:
        d.ident[END] = d.ident[END] + "-new"
        for df in d.files.values():
            _restart(df, rng, ev.climb)
    elif ev.kind == "huge" and f.source != RPC:          # a delta no Lustre counter makes
        c = list(f.counters.values())[ev.counter % len(f.counters)]
        c.begin, c.before = rng.randint(0, 1 << 20), (1 << 63) + rng.randint(0, 1 << 60)
    elif ev.kind == "big_begin" and f.source != RPC:     # counters near 2^64
        for c in f.counters.values():
            c.begin = U64_MAX - rng.randint(0, 1 << 40)
            c.before = rng.randint(0, U64_MAX - c.begin)


def _remount(mount: Mount, how: str, rng: random.Random) -> None:
    """remount: a new mount id, new device directories, every counter from 0; unmount: nothing
    of it at the end; mount: nothing of it at the begin."""
    if how == "remount" and mount.mount_id[BEGIN] and mount.mount_id[END]:
        mount.mount_id[END] += "-again"
        for d, f in all_files(mount):
            _restart(f, rng)
        for d in mount.devices:
            if d.ident[END]:
                d.ident[END] += "-again"
    elif how == "unmount":
        mount.mount_id[END] = None
        for d in mount.devices:
            d.ident[END] = None
    elif how == "mount":
        mount.mount_id[BEGIN] = None
        for d in mount.devices:
            d.ident[BEGIN] = None


def _settle(layout: Layout, mount: Mount, rng: random.Random) -> None:
    """After the events: what was not there at the begin starts from 0, and what the agent
    gives at each end follows from what was there and which files it read."""
    for d, f in all_files(mount):
        there = list(mount.mount_id) if d is None else list(d.ident)
        if d is not None:
            there = [there[e] if mount.mount_id[e] else None for e in (BEGIN, END)]
        if there[BEGIN] is None and there[END] is None:    # not a device of the job at all
            for c in f.counters.values():
                c.before = c.after = 0
        if there[BEGIN] is None:
            for c in f.counters.values():
                c.begin = 0
            f.start[BEGIN] = None
            if f.start_kind == "time":           # the new device's file started when it came
                f.start[END] = START_US + rng.randint(2 * 10**12, 3 * 10**12)
            elif f.start_kind == "since_boot":   # never cleared since
                f.start[END] = 0
        for e in (BEGIN, END):
            f.read[e] = f.read[e] and there[e] is not None
            if not f.read[e]:
                f.start[e] = None
            for c in f.counters.values():
                c.given[e] = c.given[e] and f.read[e]
        end_value_fits = all(f.value(k, END) <= U64_MAX for k in f.counters)
        assert end_value_fits, "a counter past 2^64 - 1"


# ---- the snapshots ----------------------------------------------------------------------------

def _there(mount: Mount, d: Device, end: int) -> bool:
    return bool(mount.mount_id[end] and d.ident[end])


def histogram(mount: Mount, end: int) -> dict[tuple[str, str], int] | None:
    """The filesystem's RPC histogram as the agent gives it at that end: the sum of its OSCs'
    rpc_stats, or None when some OSC there could not be read (or none is there)."""
    oscs = [d for d in mount.oscs if _there(mount, d, end)]
    if not mount.mount_id[end] or not oscs or not all(d.files[RPC].read[end] for d in oscs):
        return None
    return {key: sum(d.files[RPC].value(key, end) for d in oscs) for key in oscs[0].files[RPC].counters}


def _state_read(d: Device) -> bool:
    """Whether the agent gives the device's import state at the end (osc.state, mdc.state: the
    prolog's begin snapshot does not take them), from its import file or, on 1.8 and when that
    fails, its state file. An import file not read at the end stands for both not read (the
    agent's time budget ran out before them): the OSC is then listed and has no state."""
    imp = d.files.get(OSC_IMPORT if d.kind == "osc" else MDC_IMPORT)
    return imp is None or imp.read[END]


def host_snapshot(case: Case, host: Host, end: int) -> HostSnapshot:
    spec = f"{host.name}:44321"
    if not host.reachable[end]:
        return hostsnap.failed(host.name, spec, hostsnap.cannot_connect("Connection refused"))
    values: dict[str, dict[str, int | str]] = {P + "version": {SINGULAR: case.layout.version}}

    def put(metric: str, instance: str, value: int | str) -> None:
        values.setdefault(metric, {})[instance] = value

    def put_file(f: StatsFile, start_instance: str, counters: bool = True) -> None:
        if not f.read[end]:
            return
        for key, c in f.counters.items():
            if counters and c.given[end]:
                put(*key, f.value(key, end))
        if f.start[end] is not None:
            put(START_METRIC[f.source], start_instance, f.start[end])

    for mount in host.mounts:
        if not mount.mount_id[end]:
            continue
        put(P + "llite.mount_id", mount.fs, mount.mount_id[end])
        for f in mount.files.values():
            put_file(f, mount.fs)
        for d in mount.devices:
            if not _there(mount, d, end):
                continue
            put(catalog.DEVICE_METRIC[catalog.OSC if d.kind == "osc" else catalog.MDC], d.name, d.ident[end])
            if end == END and _state_read(d):
                put(STATE_METRIC[d.kind], d.name, "FULL")
            for f in d.files.values():
                put_file(f, d.name, counters=f.source != RPC)     # an OSC's rpc_stats: only in the sum
        for key, n in (histogram(mount, end) or {}).items():
            put(*key, n)
    h = HostSnapshot(host.name, spec, ok=True, fetched_at=(T_BEGIN, T_END)[end])
    for metric, by_instance in values.items():
        m = catalog.get(metric)
        h.metrics[metric] = Column.from_dict(by_instance)
        h.sems[metric] = m.sem
        h.pmids[metric] = f"220.{m.cluster}.0"
    return h


def snapshots(case: Case) -> tuple[Snapshot, Snapshot]:
    """The begin and end snapshots the reporter reads of this case."""
    return tuple(Snapshot.from_hosts((T_BEGIN, T_END)[end], [host_snapshot(case, h, end) for h in case.hosts])
                 for end in (BEGIN, END))
