"""A job slot's timeline (lustreclient.job.slot<S>.series) read plainly, for the agent's tests:
fetched in one pmFetch with other metrics (so its points and the slot's deltas are of one
fetch), and decoded by a reader of the layout docs/design.md §2.5 documents, written here
with struct and loops, apart from any reader the reporter has."""

from __future__ import annotations

import ctypes
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

import cpmapi as c_api
from pcp import pmapi  # Debian python3-pcp (the venv has the system site packages)

from kit.privpmcd import PrivatePmcd

MAGIC = b"LCS2"
_HEADER = struct.Struct("<4sIIIQIIII")     # magic, level, interval ms, npoints, first bin, nfs,
                                            # nvalues, nmetrics, 0


@dataclass
class Series:
    level: int
    interval_ms: int
    first_bin: int
    samples: list[int]                      # per point: the samples that fell into its bin
    metrics: list[tuple[int, int]]          # the series table: (base PMID, values a point)
    points: dict[str, list[list[int]]]      # per filesystem: npoints x nvalues, signed
    sent: dict[str, list[int]]              # per filesystem: the values sent (its bitmap's bits)

    @property
    def width_ms(self) -> int:
        return self.interval_ms << self.level

    @property
    def bins(self) -> list[int]:
        return [self.first_bin + i for i in range(len(self.samples))]

    def totals(self, fs: str) -> list[int]:
        """Each value summed over the points: what the series says the job did on fs."""
        sums = [0] * sum(n for _, n in self.metrics)
        for point in self.points[fs]:
            for v, x in enumerate(point):
                sums[v] += x
        return sums

    def offset(self, pmid: int) -> int:
        """Where a metric's values start in a point."""
        at = 0
        for p, n in self.metrics:
            if p == pmid:
                return at
            at += n
        raise KeyError(pmid)


def decode(raw: bytes) -> Series:
    magic, level, interval_ms, npoints, first, nfs, nvalues, nmetrics, zero = _HEADER.unpack_from(raw, 0)
    assert magic == MAGIC and zero == 0, (magic, zero)
    at = _HEADER.size
    metrics = []
    for _ in range(nmetrics):
        metrics.append(struct.unpack_from("<II", raw, at))
        at += 8
    assert sum(n for _, n in metrics) == nvalues
    samples = list(struct.unpack_from(f"<{npoints}I", raw, at))
    at += 4 * npoints + (4 if npoints % 2 else 0)
    points, sent = {}, {}
    for _ in range(nfs):
        (length,) = struct.unpack_from("<I", raw, at)
        name = raw[at + 4:at + 4 + length].decode()
        at += (4 + length + 7) // 8 * 8
        words = struct.unpack_from(f"<{(nvalues + 63) // 64}Q", raw, at)
        at += 8 * len(words)
        bits = [v for v in range(64 * len(words)) if words[v // 64] >> (v % 64) & 1]
        assert all(v < nvalues for v in bits), bits
        rows = [[0] * nvalues for _ in range(npoints)]
        for v in bits:                      # column after column: value v at every point
            column = struct.unpack_from(f"<{npoints}q", raw, at)
            at += 8 * npoints
            assert any(column), v           # a value zero at every point is not sent
            for i in range(npoints):
                rows[i][v] = column[i]
        points[name], sent[name] = rows, bits
    assert at == len(raw), (at, len(raw))
    return Series(level, interval_ms, first, samples, metrics, points, sent)


def pack(table, samples, filesystems, *, level=0, interval_ms=10000, first_bin=1000,
         magic=int.from_bytes(MAGIC, "little")) -> bytes:
    """The layout of §2.5, written plainly: table [(pmid, values)], samples [n], filesystems
    {name: points, each a list of nvalues ints}; a value zero at every point is not sent."""
    nvalues = sum(n for _, n in table)
    npoints = len(samples)
    out = struct.pack("<IIIIQIIII", magic, level, interval_ms, npoints, first_bin,
                      len(filesystems), nvalues, len(table), 0)
    for p, n in table:
        out += struct.pack("<II", p, n)
    for n in samples:
        out += struct.pack("<I", n)
    if npoints % 2:
        out += bytes(4)
    for name, points in filesystems.items():
        raw = name.encode()
        out += struct.pack("<I", len(raw)) + raw
        while len(out) % 8:
            out += b"\0"
        sent = [v for v in range(nvalues) if any(point[v] != 0 for point in points)]
        words = [0] * ((nvalues + 63) // 64)
        for v in sent:
            words[v // 64] |= 1 << (v % 64)
        for w in words:
            out += struct.pack("<Q", w)
        for v in sent:
            for point in points:
                out += struct.pack("<q", point[v])
    return out


def fetch_together(spec: str, names: list[str]) -> tuple[dict[str, dict[str, object]], dict[str, int]]:
    """These metrics in one pmFetch: ({metric: {instance name or "": value}}, {metric: PMID});
    an aggregate's value is its bytes, a metric without values is left out."""
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, spec)
    try:
        pmids = ctx.pmLookupName(names)
        descs = ctx.pmLookupDescs(pmids)
        result = ctx.pmFetch(pmids)
        out: dict[str, dict[str, object]] = {}
        try:
            res = result.contents
            for i, (name, d) in enumerate(zip(names, descs)):
                dd = d.contents
                labels = {}
                if dd.indom != c_api.PM_INDOM_NULL:
                    ids, names_ = ctx.pmGetInDom(d)
                    labels = dict(zip(ids or [], names_ or []))
                vals = {}
                for j in range(res.get_numval(i)):
                    pv = res.get_vlist(i, j)
                    key = labels.get(pv.inst, f"?{pv.inst}") if labels or dd.indom != c_api.PM_INDOM_NULL else ""
                    if dd.type == c_api.PM_TYPE_AGGREGATE:
                        block = pv.value.pval.contents
                        vals[key] = ctypes.string_at(ctypes.addressof(block) + 4, block.vlen - 4)
                    else:
                        vals[key] = ctx.pmExtractValue(res.get_valfmt(i), pv, dd.type, dd.type).dref(dd.type)
                if vals:
                    out[name] = vals
        finally:
            ctx.pmFreeResult(result)
        return out, dict(zip(names, pmids))
    finally:
        del ctx


def bucket_label(size: int) -> str:
    """An RPC size bucket's instance suffix as the agent names it: 4K ... 1M ... 64M."""
    for unit, suffix in ((1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")):
        if size >= unit and size % unit == 0:
            return f"{size // unit}{suffix}"
    return str(size)


def start_node(tmp_path: Path, interval: float, version: str = "2.15.4"):
    """A sim Lustre client (2.15 unless told) with two filesystems (scratch: 8 OSTs, home: 4)
    and a private pmcd running the agent on it, sampling every interval seconds (-T): (client,
    pmcd), the pmcd not started."""
    from lustre_sim import SimClient

    client = SimClient.create(tmp_path / "tree", version=version,
                              filesystems=[("scratch", 8, 1), ("home", 4, 1)], seed=11)
    pmcd = PrivatePmcd(tmp_path / "pmcd", tmp_path / "tree", interval=interval)
    return client, pmcd


def store(pmcd, control: str, job: str) -> None:
    """pmstore a job id into lustreclient.control.<control> (job_begin, job_end)."""
    done = subprocess.run(["pmstore", "-h", pmcd.local_spec, f"lustreclient.control.{control}", job],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr


def epilog_report(spec: str, job: str, host: str = "n1") -> dict:
    """The job's report document as the epilog makes it from the job view (hooksnap.end_job_view,
    epilog._report): the host's slot answer and series in one fetch, the series summed, the
    deltas, the document."""
    from lustre_jobreport import config
    from lustre_jobreport.acquire import snapshot
    from lustre_jobreport.acquire.snapfile import Snapshot
    from lustre_jobreport.report import document, jobview
    from lustre_jobreport.report.timeline import Accumulator

    fetched = snapshot.fetch_all([snapshot.HostTarget(host, spec)], connect_timeout_s=5, fetch_timeout_s=20,
                                 job_id=job, series_sum=Accumulator)
    end = Snapshot.from_hosts(fetched.taken_at, fetched.hosts, job_id=job, timeline=fetched.series)
    return document.from_delta(jobview.delta(end, job), config.load(None), job_id=job, timeline=end.timeline)
