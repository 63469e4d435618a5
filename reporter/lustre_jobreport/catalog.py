"""What each lustreclient metric the reporter uses *is*: declared once, here, read everywhere else.

For every metric: the agent's PMID cluster (pmdalustreclient groups the metrics of one stats
file in one cluster, so the cluster says which file a value came from: what a clear or an
unreadable file takes away together), the instance domain, and its role in the report. A
snapshot takes exactly the metrics listed here; diff, aggregate, flags and render ask this
module which metrics are volumes, metadata operations, histograms, start times...

Snapshots carry each metric's PMID, so a value's source file comes from the agent, not from
its name; the cluster written here is what the agent's pmns says (a test checks the two agree)
and stands in for snapshot files older than schema 2, which did not carry PMIDs.

The prolog imports this module: standard library only, and its records are NamedTuples (a
dataclass would cost every job's start the import of `dataclasses`, with `inspect`).
"""

from __future__ import annotations

import re
from enum import IntEnum, unique
from typing import NamedTuple

from . import agentcontract

ROOT = "lustreclient"
P = ROOT + "."
DOMAIN = agentcontract.DOMAIN  # pmdalustreclient's PMDA domain (pmda-lustre/domain.h)

# Roles (what the report does with a metric).
VOLUME = "volume"          # llite bytes and calls, summed per filesystem
OP = "op"                  # a metadata operation the job asked for (llite op counts)
RPC_HISTOGRAM = "rpc"      # per-filesystem RPC-size histogram buckets
OST_VOLUME = "ost"         # per-OST bytes and RPCs
OST_WAIT = "wait"          # per-OST request wait time and count
RECONNECTS = "reconnects"  # import reconnects of an OSC/MDC
STATE = "state"            # import state (FULL, DISCONN, EVICTED ...)
START = "start"            # when a stats file was started or last cleared (2.15+)
DEVICE = "device"          # an instance's identity, from the device listing alone
LATENCY = "latency"        # llite per-call latency sums (2.14+), microseconds
READAHEAD = "readahead"    # llite read-ahead counters (read_ahead_stats)
HYBRID = "hybrid"          # llite hybrid I/O counters (2.16+: buffered calls sent as direct I/O)
SETTING = "setting"        # a client tunable that shapes RPCs (max_pages_per_rpc, read-ahead ...)
IDENTITY = "identity"      # what the host runs: kernel release, OS image
VERSION = "version"
PAGESIZE = "pagesize"
AGENT = "agent"            # the agent's account of the fetch that returned the values

# Instance domains, as the report sees them (DESIGN §2).
FS, FS_BUCKET, OSC, MDC, SINGULAR = "fs", "fs_bucket", "osc", "mdc", None


class Source(NamedTuple):
    """One kind of stats file (all instances of it: one file per device)."""
    name: str                  # as the report names it: "osc stats of scratch-OST0003 ..."
    clusters: tuple[int, ...]  # the agent's PMID clusters filled from it
    required: bool = False     # every supported Lustre layout has it for every device


SOURCES = (
    Source("agent", (0,)),
    Source("llite device list", (1,)),
    Source("llite stats", (2, 3), required=True),
    Source("osc rpc_stats", (4, 5, 6), required=True),
    Source("osc stats", (7,), required=True),
    Source("mdc md_stats", (8,)),
    Source("mdc stats", (9,)),
    Source("osc import", (10,)),
    Source("mdc import", (11,)),
    Source("llite read_ahead_stats", (12,)),
    Source("osc tunables", (13,)),
    Source("osc osc_stats", (14,)),
    Source("mdc rpc_stats", (15,)),
    Source("lnet stats", (16,)),
    Source("osc device list", (17,)),
    Source("mdc device list", (18,)),
    Source("llite tunables", (19,)),
    Source("host identity", (20,)),
)
_BY_CLUSTER = {c: s for s in SOURCES for c in s.clusters}


def source_of_cluster(cluster: int) -> Source:
    """The stats file an agent cluster is read from (an unknown cluster is a file of its own)."""
    return _BY_CLUSTER.get(cluster) or Source(f"cluster {cluster}", (cluster,))


class Metric(NamedTuple):
    name: str                  # full name, lustreclient.*
    cluster: int               # the agent's PMID cluster (pmda-lustre/pmns)
    indom: str | None          # FS, FS_BUCKET, OSC, MDC or SINGULAR
    role: str
    sem: str = "counter"       # counter | instant | discrete, as the agent declares it
    kind: str = "u64"          # u64 | string (start times: u64 microseconds, see START_UNIT_US)
    field: str = ""            # the report's name for it (JSON key), default: last name part

    @property
    def key(self) -> str:
        return self.field or self.name.rsplit(".", 1)[1]

    @property
    def source(self) -> Source:
        return source_of_cluster(self.cluster)


def _m(name: str, cluster: int, indom: str | None, role: str, **kw) -> Metric:
    return Metric(P + name, cluster, indom, role, **kw)


# llite operation counters that are metadata operations a job asked for (DESIGN §4
# METADATA_RATE: "llite ops but read/write"). Named one by one: an op the agent adds later is
# not counted until it is named here. Left out on purpose: opencount (repeats open, 2.15+),
# page and permission cache events (dirty_pages_*, getxattr_hits, alloc_inode, page_fault,
# page_mkwrite, inode_permission) and read/write themselves.
METADATA_OPS = ("open", "close", "getattr", "setattr", "statfs", "fsync", "seek", "mmap",
                "truncate", "readdir", "create", "unlink", "mkdir", "rmdir", "rename", "flock",
                "ioctl", "link", "symlink", "mknod", "setxattr", "getxattr", "listxattr",
                "removexattr", "fallocate")
# the operations the text report shows on its one ops line, in this order
SHOWN_OPS = ("open", "close", "getattr", "statfs", "setattr", "fsync")

# llite stats hybrid I/O counters (2.16+, LU-13802): calls switched to direct I/O and their bytes
HYBRID_COUNTERS = ("read_bytes", "write_bytes", "read_calls", "write_calls", "noswitch",
                   "readsize_switch", "writesize_switch")
# Client settings that change RPC shapes, per OSC and per mount (a record keeps them per fs)
OSC_SETTINGS = ("max_pages_per_rpc", "max_rpcs_in_flight", "max_dirty_mb", "checksums")
LLITE_SETTINGS = ("max_read_ahead_mb", "max_read_ahead_per_file_mb", "max_read_ahead_whole_mb",
                  "hybrid_io", "hybrid_io_read_threshold_bytes", "hybrid_io_write_threshold_bytes")

METRICS: tuple[Metric, ...] = (
    _m("version", 0, SINGULAR, VERSION, sem="discrete", kind="string"),
    _m("pagesize", 0, SINGULAR, PAGESIZE, sem="discrete"),
    _m("agent.fetch.files_read", 0, SINGULAR, AGENT, sem="instant"),
    _m("agent.fetch.read_failures", 0, SINGULAR, AGENT, sem="instant"),
    _m("agent.fetch.parse_failures", 0, SINGULAR, AGENT, sem="instant"),
    _m("agent.fetch.budget_skips", 0, SINGULAR, AGENT, sem="instant"),
    _m("llite.mount_id", 1, FS, DEVICE, sem="discrete", kind="string"),
    _m("osc.device", 17, OSC, DEVICE, sem="discrete", kind="string"),
    _m("mdc.device", 18, MDC, DEVICE, sem="discrete", kind="string"),
    _m("llite.read_bytes", 2, FS, VOLUME),
    _m("llite.write_bytes", 2, FS, VOLUME),
    _m("llite.read_calls", 2, FS, VOLUME),
    _m("llite.write_calls", 2, FS, VOLUME),
    *(_m(f"llite.{op}", 2, FS, OP) for op in METADATA_OPS),
    _m("llite.stats_start", 2, FS, START, sem="discrete"),
    _m("fs.rpc.read", 4, FS_BUCKET, RPC_HISTOGRAM, field="read"),
    _m("fs.rpc.write", 4, FS_BUCKET, RPC_HISTOGRAM, field="write"),
    _m("osc.rpc_stats_start", 6, OSC, START, sem="discrete"),
    _m("osc.read_bytes", 7, OSC, OST_VOLUME),
    _m("osc.write_bytes", 7, OSC, OST_VOLUME),
    _m("osc.read_rpcs", 7, OSC, OST_VOLUME),
    _m("osc.write_rpcs", 7, OSC, OST_VOLUME),
    _m("osc.req_waittime", 7, OSC, OST_WAIT),
    _m("osc.req_count", 7, OSC, OST_WAIT),
    _m("osc.stats_start", 7, OSC, START, sem="discrete"),
    _m("osc.state", 10, OSC, STATE, sem="instant", kind="string"),
    _m("osc.reconnects", 10, OSC, RECONNECTS),
    _m("mdc.state", 11, MDC, STATE, sem="instant", kind="string"),
    _m("mdc.reconnects", 11, MDC, RECONNECTS),
    _m("mdc.md_stats_start", 8, MDC, START, sem="discrete"),
    _m("mdc.stats_start", 9, MDC, START, sem="discrete"),
    # what compare needs beyond the job report: call latency, read-ahead, hybrid I/O ...
    _m("llite.latency.read", 3, FS, LATENCY),
    _m("llite.latency.write", 3, FS, LATENCY),
    _m("llite.readahead.hits", 12, FS, READAHEAD),
    _m("llite.readahead.misses", 12, FS, READAHEAD),
    _m("llite.readahead.read_but_discarded", 12, FS, READAHEAD),
    _m("llite.readahead.readahead_pages", 12, FS, READAHEAD),
    *(_m(f"llite.hybrid.{k}", 2, FS, HYBRID) for k in HYBRID_COUNTERS),
    # ... and what the client was: its settings (at the job's end) and the host's kernel and OS
    *(_m(f"osc.{k}", 13, OSC, SETTING, sem="discrete") for k in OSC_SETTINGS),
    *(_m(f"llite.{k}", 19, FS, SETTING, sem="discrete") for k in LLITE_SETTINGS),
    _m("kernel", 20, SINGULAR, IDENTITY, sem="discrete", kind="string"),
    _m("os", 20, SINGULAR, IDENTITY, sem="discrete", kind="string"),
)
BY_NAME = {m.name: m for m in METRICS}
SNAPSHOT_METRICS = tuple(m.name for m in METRICS)
# The job's begin snapshot (prolog) leaves out what only the end is read for: the client's
# settings and the host's identity (report "clients") and import states (aggregate's trouble
# list). Settings cost the agent four files per OSC of the eight it reads, and the state
# strings ~1 ms of Python per host on a 600-OSC client; the prolog holds up the job's start.
BEGIN_METRICS = tuple(m.name for m in METRICS if m.role not in (SETTING, IDENTITY, STATE))

# Start times are doubles (seconds) in the agent; snapshots keep them as whole microseconds so
# they live in the same u64 tables as counters. Two readings of one start time can differ by a
# rounding step (pminfo prints 6 decimals, the bindings give the double), never by more than
# this; a clear moves the start time by the time since the previous start, far more.
START_UNIT_US = 1_000_000
START_TOLERANCE_US = 1000
# The role that tells, per instance domain, which instances exist on a host.
DEVICE_METRIC = {FS: P + "llite.mount_id", FS_BUCKET: P + "llite.mount_id",
                 OSC: P + "osc.device", MDC: P + "mdc.device"}
# Counters whose deltas a report sums: a value of one of these left out is a number not trusted.
SUMMED = (VOLUME, OP, RPC_HISTOGRAM, OST_VOLUME, OST_WAIT, RECONNECTS, LATENCY, READAHEAD, HYBRID)


# RPC-size bucket names (the FS_BUCKET and OSC_BUCKET instances' "<size>", DESIGN §2)
_SIZE_LABEL = re.compile(r"^(\d+)([KMGT]?)$")
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def is_size_label(label: str) -> bool:
    return _SIZE_LABEL.match(label) is not None


def size_bytes(label: str) -> int:
    """'4K' -> 4096: an RPC-size bucket as the agent names it (pages-per-rpc label x page size).

    Lustre tallies an RPC of p pages in the row labelled 2^ceil(log2 p), so the bucket named
    16K holds the RPCs larger than 8 KiB and up to 16 KiB: the name is the bucket's upper bound.
    """
    m = _SIZE_LABEL.match(label)
    if not m:
        raise ValueError(f"not an RPC size label: {label!r}")
    return int(m.group(1)) * _UNITS[m.group(2)]



def shown_buckets(labels, nonempty) -> list[str]:
    """Of RPC-size buckets (labels, smallest first), those worth a column or a bar in a report or a
    comparison: up to the largest in `nonempty`, and at least up to 1M (so that every histogram
    shows the sizes a healthy client sends). A label that is not a size (over_64M) is shown only
    below a non-empty one or when non-empty itself."""
    marks = [i for i, label in enumerate(labels)
             if label in nonempty or (_SIZE_LABEL.match(label) and size_bytes(label) <= 1 << 20)]
    return list(labels[:max(marks) + 1]) if marks else []

def get(name: str) -> Metric | None:
    return BY_NAME.get(name)


def with_role(*roles: str) -> list[Metric]:
    return [m for m in METRICS if m.role in roles]


def names(*roles: str) -> list[str]:
    return [m.name for m in with_role(*roles)]


def start_metric_of(source: Source) -> Metric | None:
    """The start-time metric stamping a stats file, if the agent exports one."""
    return next((m for m in METRICS if m.role == START and m.source == source), None)


def cluster_of_pmid(pmid: str | None, name: str) -> int | None:
    """'220.2.10' -> 2; without a PMID (schema 1 files), the cluster this catalog expects."""
    if pmid:
        parts = pmid.split(".")
        if len(parts) == 3 and parts[1].isdigit():
            return int(parts[1])
    m = BY_NAME.get(name)
    return m.cluster if m else None


def wanted(name: str) -> bool:
    return name in BY_NAME


# ---- the agent's job view ---------------------------------------------------------------------
# A job on many nodes is not snapshotted centrally at its start: each node's prolog stores the
# job id into its own agent (lustreclient.control.job_begin, a local store), which keeps the
# job's begin values and serves the job's deltas since then, already differenced by diff's
# rules, under lustreclient.job.slot<S>.<metric> (S: the job's slot, found by its id in the
# JOB_INDOM instance domain). Zero deltas are not sent; a device whose values the delta leaves
# out is listed, with why, under lustreclient.job.slot<S>.left_out.<source>; the id of the job
# the slot holds under lustreclient.job.slot<S>.job_id, fetched with its deltas (the slot a job
# was looked up in may hold another job by the fetch). PMIDs, items and codes are the agent's
# contract (pmda-lustre/README.md, "Per-job deltas"), declared once, in the agent's job metric
# table (pmda-lustre/src/jobdiff.c): agentcontract.py is jobgen's copy of it, which
# `make -C pmda-lustre jobview` rewrites. Item numbers are never moved or reused.
JOB_BEGIN_CONTROL = P + "control.job_begin"
JOB_BEGIN_TIME = P + "job.begin_time"
# per job: how often an agent restart took the job's slot up again from its file (0: none)
JOB_RESTARTS = P + "job.restarts"
JOB_INDOM_SERIAL = agentcontract.JOB_INDOM_SERIAL
JOB_SLOTS = agentcontract.JOB_SLOTS
JOB_CLUSTER = agentcontract.JOB_CLUSTER
JOB_SLOT_CLUSTER0 = agentcontract.JOB_SLOT_CLUSTER0
# The summed counters the agent keeps per job, in the agent's item order (item = index).
JOB_METRICS: tuple[str, ...] = tuple(P + name for name, _source in agentcontract.JOB_METRICS)
JOB_LEFT_OUT_ITEM0 = agentcontract.JOB_LEFT_OUT_ITEM0
JOB_ID_ITEM = agentcontract.JOB_ID_ITEM


class JobSource(NamedTuple):
    """A stats file whose devices the job view can leave out: its agent name and indom."""
    key: str                # lustreclient.job.slot<S>.left_out.<key>
    source: Source
    indom: str


def _job_source(key: str) -> JobSource:
    """A left_out source as the report sees it: the stats file and instance domain of the job
    metrics it leaves out (the agent's table says which metrics, this catalog what they are;
    the osc_rpc_stats source leaves out the per-fs histogram, FS_BUCKET)."""
    first = next(name for name, source in agentcontract.JOB_METRICS if source == key)
    metric = BY_NAME[P + first]
    return JobSource(key, metric.source, metric.indom)


JOB_SOURCES: tuple[JobSource, ...] = tuple(_job_source(key) for key in agentcontract.JOB_SOURCES)

# The agent's codes (agentcontract.REASONS) and the reporter's own TOO_LARGE: after the rules,
# a delta of 2^63 or more. unique: were the agent to add code 8, the catalog would not import
# (every test fails) rather than make TOO_LARGE another name of it.
Reason = unique(IntEnum("Reason", [*agentcontract.REASONS, ("TOO_LARGE", 8)],
                        module=__name__, qualname="Reason"))
Reason.__doc__ = """Why a device's values of a stats file were left out of a job's delta: the agent's
    left_out.* values (pmda-lustre/src/jobs.h, enum lc_jobreason), one of the diff's cases
    (diff.py), which JobDelta.left_out keeps whichever way the job was read. When several
    apply, the first in PRECEDENCE is the one given."""


# the order the rules are tried in, for one stats file of one device (DESIGN §3.3)
PRECEDENCE = (Reason.REMOUNTED, Reason.GONE, Reason.REPLACED, Reason.CLEARED, Reason.NOT_READ_AT_BEGIN,
              Reason.NOT_READ_AT_END, Reason.NOT_READ)
CLEARED, REPLACED, REMOUNTED, NOT_READ_AT_BEGIN, NOT_READ_AT_END, GONE, NOT_READ = (
    Reason.CLEARED, Reason.REPLACED, Reason.REMOUNTED, Reason.NOT_READ_AT_BEGIN, Reason.NOT_READ_AT_END,
    Reason.GONE, Reason.NOT_READ)


def job_view_name(name: str) -> str:
    """lustreclient.osc.read_bytes -> lustreclient.job.osc.read_bytes: a job delta, slot aside."""
    return P + "job." + name[len(P):]


def job_left_out_name(js: JobSource) -> str:
    return P + "job.left_out." + js.key


def job_slot_names(slot: int) -> dict[str, str]:
    """The agent's names of a slot's deltas and left_out metrics -> the slot-free names a snapshot
    keeps them under."""
    out = {f"{P}job.slot{slot}.{m[len(P):]}": job_view_name(m) for m in JOB_METRICS}
    out.update({f"{P}job.slot{slot}.left_out.{js.key}": job_left_out_name(js) for js in JOB_SOURCES})
    return out


def job_slot_id_name(slot: int) -> str:
    """The agent's name of the id of the job a slot holds (a string; none while it holds none)."""
    return f"{P}job.slot{slot}.job_id"


# What the end of a job read through the job view fetches beside the deltas: everything the end
# snapshot has but the counters (their deltas come from the agent), the start times and the MDC
# device names (the agent judged the clears and the replaced devices). The mounts stay: the
# report's filesystems are the mounted ones; so does the OSC listing: a filesystem's OSTs (the
# report's per-OST figures and OST count) are those listed, as in an end snapshot. An OSC's
# state is no listing: the agent gives none for an OSC whose import file it did not read.
JOB_END_METRICS = tuple(m.name for m in METRICS if m.role not in SUMMED and m.role != START
                        and not (m.role == DEVICE and m.indom == MDC))


def job_view_metrics(slot: int) -> tuple[str, ...]:
    """What one fetch of a host reads for a job its agent holds in this slot: the slot's job id
    (first: whether the answer is the job's is known before anything else of it is decoded),
    the job end metrics, the begin times, the slot's deltas and left_out values, the restarts
    (the order of the slot's answer)."""
    return ((job_slot_id_name(slot),) + JOB_END_METRICS + (JOB_BEGIN_TIME,) + tuple(job_slot_names(slot))
            + (JOB_RESTARTS,))
