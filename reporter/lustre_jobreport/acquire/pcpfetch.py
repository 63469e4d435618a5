"""Fetch a host's snapshot metrics in-process through PCP's Python bindings (python3-pcp).

One pmFetch of every snapshot metric per host. The result is the HostSnapshot that
pminfoparse.parse_pminfo makes of one `pminfo -dfm` of the same metrics (the other way
snapshot.py reads a host): every value keeps its PMID (the agent's cluster says which stats
file it came from) and start times become whole microseconds (catalog.START_UNIT_US).
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import struct
import threading
import time
from typing import Callable

import numpy as np

from .. import agentcontract, catalog
from . import hostsnap, jobanswer, jobseries
from .hostsnap import HostSnapshot
from .pminfoparse import start_us
from .column import SINGULAR, Column

try:  # PCP's bindings exist only for the Debian Python; everything else uses pminfo.
    from pcp import pmapi  # type: ignore[import-not-found]
    import cpmapi as c_api  # type: ignore[import-not-found]
    HAVE_PMAPI = True
except ImportError:  # pragma: no cover - depends on the interpreter
    HAVE_PMAPI = False

_SEMS = {1: "counter", 3: "instant", 4: "discrete"}


def pmid_text(pmid: int) -> str:
    """PCP's domain.cluster.item (pmIDStr) of a PMID."""
    return f"{(pmid >> 22) & 0x1FF}.{(pmid >> 10) & 0xFFF}.{pmid & 0x3FF}"


class Catalog:
    """The PMIDs (as an array for pmFetch and as text for the snapshot) and descriptors of the
    snapshot metrics, looked up on the first host that answers and reused for the others: PMIDs
    and descriptors are fixed by the agent's contract, and every lookup saved is two round trips
    on each of 1,000 hosts. Names the agent does not have (an older agent) are left out.
    Thread-safe; a host never waits for another to fill it."""

    Entry = tuple[list[str], ctypes.Array, list[str], list[tuple[int, int, int]]]

    def __init__(self, metrics: tuple[str, ...] = catalog.SNAPSHOT_METRICS, required: tuple[str, ...] = ()) -> None:
        self._lock = threading.Lock()
        self._entry: Catalog.Entry | None = None
        self.metrics = metrics
        # names without which a host is not read: a lookup at a host that lacks one (an older
        # agent's namespace) is that host's alone, not kept for the others
        self.required = required
        # Instance names, shared by the hosts of a fan-out: hosts of one job list the same
        # OSCs, so the 600 names of each of a host's 13 per-OSC metrics are looked up once per
        # distinct (instance listing, instance order), not per host and metric (1.3 ms of
        # Python per host on a 600-OSC client). The lists handed out are shared and
        # never changed. Reads and setdefault of dicts are atomic under the GIL.
        self._listings: dict[tuple, tuple[int, dict[int, str]]] = {}
        self._raw_listings: dict[tuple, tuple[int, dict[int, str]]] = {}
        self.strings: dict[tuple[bytes, bytes], list[str]] = {}   # see _strings_in_one_read
        self._labels: dict[tuple[int, bytes], list[str | None]] = {}
        self._ids = itertools.count()
        self._by_pmid: tuple | None = None
        self.answer_listings: dict = {}     # jobanswer.decode's cache of listings
        self.answer_plans: dict = {}        # _from_answer's, by the answers' shape

    def listing(self, indom: int, ids, names) -> tuple[int, dict[int, str]]:
        """A host's pmGetInDom answer, as one shared (id, instance id -> name) per distinct answer."""
        key = (indom, tuple(ids or ()), tuple(names or ()))
        got = self._listings.get(key)
        if got is None:
            got = self._listings.setdefault(key, (next(self._ids), dict(zip(key[1], key[2]))))
        return got

    def host_listing(self, ctx, indom: int) -> tuple[int, dict[int, str]]:
        """This host's instances of indom, shared with every host that lists the same: the
        answer's raw bytes are the key, so the ~700 names are decoded once per distinct listing,
        not per host (the bindings' pmGetInDom makes a Python string of each: ~0.5 ms a host on
        a 600-OSC client)."""
        raw = _indom_bytes(ctx, indom)
        if raw is None:
            return self.listing(indom, *ctx.pmGetInDom(indom=indom))
        key = (indom, *raw)
        got = self._raw_listings.get(key)
        if got is None:
            ids = np.frombuffer(raw[0], dtype=np.int32).tolist()
            offsets = np.frombuffer(raw[1], dtype=np.int64).tolist()
            blob = raw[2]
            names = [blob[o:blob.index(b"\0", o)].decode("ascii", "ignore") for o in offsets]
            got = self._raw_listings.setdefault(key, self.listing(indom, ids, names))
        return got

    def labels(self, listing: tuple[int, dict[int, str]], insts: np.ndarray | tuple[int, ...]) -> list[str | None]:
        """The names of a metric's instances (None: not in the listing), in the result's order."""
        key = (listing[0], insts if isinstance(insts, tuple) else np.ascontiguousarray(insts, dtype=np.int32).tobytes())
        got = self._labels.get(key)
        if got is None:
            names = listing[1]
            got = self._labels.setdefault(key, [names.get(int(i)) for i in insts])
        return got

    def by_pmid(self, entry: "Catalog.Entry") -> dict[int, tuple[str, str, int]]:
        """The looked-up metrics by PMID: (name, PMID as text, semantics), for a slot's answer,
        which names its members by PMID."""
        got = self._by_pmid
        if got is None or got[0] is not entry:
            names, pmids, texts, descs = entry
            got = self._by_pmid = (entry, {int(p): (n, t, d[2]) for n, p, t, d in zip(names, pmids, texts, descs)})
        return got[1]

    def lookup(self, ctx) -> "Catalog.Entry":
        with self._lock:
            if self._entry is not None:
                return self._entry
        wanted = list(self.metrics)
        found = ctx.pmLookupName(wanted, relaxed=1)
        names = [n for n, pmid in zip(wanted, found) if pmid != c_api.PM_ID_NULL]
        pmids = (ctypes.c_uint * len(names))(*[pmid for pmid in found if pmid != c_api.PM_ID_NULL])
        if not names:
            raise NoAgent()
        descs = [(d.contents.indom, d.contents.type, d.contents.sem) for d in ctx.pmLookupDescs(pmids)]
        entry = (names, pmids, [pmid_text(p) for p in pmids], descs)
        if not set(self.required) <= set(names):
            return entry
        with self._lock:
            if self._entry is None:
                self._entry = entry
            return self._entry


class JobCatalogs:
    """What the end of a job read through the agent's job view fetches from each host
    (catalog.job_view_metrics): the id of the job the slot holds, the job end metrics and the
    deltas of the job's slot, which the host's agent names (one pmLookupInDom of the job id).
    Slots differ between hosts (each agent gives out its own), so there is a Catalog per slot;
    the deltas are kept under slot-free names (catalog.job_slot_names), so the hosts stack into
    one table per metric whatever their slot."""

    def __init__(self, job_id: str) -> None:
        self.job_id = job_id
        self._by_slot: dict[int, tuple[Catalog, dict[str, str]]] = {}
        self._lock = threading.Lock()
        self.last_slot: int | None = None    # where the last host read by its answer had the job

    def for_slot(self, slot: int) -> tuple[Catalog, dict[str, str]]:
        with self._lock:
            got = self._by_slot.get(slot)
            if got is None:
                rename = catalog.job_slot_names(slot)
                got = (Catalog(catalog.job_view_metrics(slot), required=(catalog.job_slot_id_name(slot),)), rename)
                self._by_slot[slot] = got
            return got


JOB_INDOM = (catalog.DOMAIN << 22) | catalog.JOB_INDOM_SERIAL


def _job_slot(ctx, job_id: str) -> int:
    """The slot the host's agent keeps the job in (pmLookupInDom of JOB_INDOM)."""
    sts = pmapi.LIBPCP.pmUseContext(ctx.ctx)
    if sts >= 0:
        sts = pmapi.LIBPCP.pmLookupInDom(JOB_INDOM, job_id.encode("ascii", "replace"))
    if sts < 0:
        raise pmapi.pmErr(sts)
    return sts


def _not_the_jobs(job_id: str, id_name: str, numval: int, held: str | None) -> str | None:
    """Why a host's answer is not taken as the job's, or None: the slot's job id, in the same
    fetch as its deltas, names the job. Between the lookup of the job's slot and the fetch, a
    newer job can take the slot (the oldest of 8 in use), or it can be freed (job_end, an agent
    restart): the deltas are then another job's, or none, and the host is said as one whose
    agent does not know the job. The agent answers a fetch whole (no store comes between), so
    the id and the deltas are of one job. numval, held: the answer's value count and value of
    the slot's job_id (id_name), _slot_job_id."""
    if numval < 0:                     # e.g. an older agent, fetched by another host's PMIDs
        return hostsnap.job_values_unnamed(id_name, pmapi.pmErr(numval).message())
    if held != job_id:
        return hostsnap.no_job_values(job_id, "", True)
    return None


def _slot_job_id(vset: int) -> tuple[int, str | None]:
    """The value count of a slot's job_id value set, and its one string (None: none, or not a
    string), read straight from the result (one value: the bindings' extraction costs more)."""
    _, numval, valfmt = _VSET_HEADER.unpack(ctypes.string_at(vset, _VSET_HEADER.size))
    if numval != 1 or valfmt == c_api.PM_VAL_INSITU:
        return numval, None
    _, ptr = _PM_VALUE.unpack(ctypes.string_at(vset + _VLIST_OFFSET, _PM_VALUE.size))
    header = ctypes.c_uint32.from_address(ptr).value
    vlen = header & 0xFFFFFF
    if header >> 24 != c_api.PM_TYPE_STRING or not 4 < vlen <= _MAX_GAP:
        return numval, None
    return numval, ctypes.string_at(ptr + 4, vlen - 4).split(b"\0", 1)[0].decode("ascii", "replace")


class NoAgent(Exception):
    """The host's pmcd knows no lustreclient metric."""


def _reason(exc) -> str:
    """libpcp's words for an error, as pminfo prints them (the bindings append their call's
    arguments, e.g. the host list, which the report does not need)."""
    text = pmapi.pmErr(exc.code).message() if exc.code else ""
    extra = " ".join(str(a) for a in exc.args[1:] if isinstance(a, str))
    return " ".join(t for t in (text, extra) if t) or str(exc)


def fetch_pmapi(host: str, spec: str, catalog_cache: Catalog | None = None,
                given_up: Callable[[], bool] = lambda: False, job: JobCatalogs | None = None) -> HostSnapshot:
    """One host's values. given_up: asked once the answer is in; True (the fan-out stopped
    waiting for this host) skips decoding it, which would only take the CPU from the work that
    goes on (writing the spool, the report). job: read the job's deltas from the agent's job
    view, with the job end metrics (a host whose agent does not know the job, or whose answer
    is not of the job, is not read)."""
    try:
        ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, spec)
    except pmapi.pmErr as exc:
        return hostsnap.failed(host, spec, hostsnap.cannot_connect(_reason(exc)))
    cat = catalog_cache or Catalog()
    rename: dict[str, str] = {}
    try:
        slot = -1
        if job is not None:
            if (guessed := _guessed_answer(ctx, host, spec, job, given_up)) is not None:
                return guessed
            try:
                slot = _job_slot(ctx, job.job_id)
                cat, rename = job.for_slot(slot)
            except pmapi.pmErr as exc:
                return hostsnap.failed(host, spec, hostsnap.no_job_values(job.job_id, _reason(exc),
                                                                          exc.code == c_api.PM_ERR_INST))
        if job is not None and (got := _slot_answer(ctx, job, slot)) is not None and \
                (read := _answered(host, spec, job, slot, got, given_up)) is not None:
            return read
        names, pmids, pmid_texts, descs = cat.lookup(ctx)
        checked = -1       # the slot's job id: checked before anything is decoded, not kept
        if job is not None:
            id_name = catalog.job_slot_id_name(slot)
            if id_name not in names:   # pmcd's namespace has no job ids: an older agent's
                return hostsnap.failed(host, spec, hostsnap.job_values_unnamed(id_name, "Unknown metric name"))
            checked = names.index(id_name)
        result = ctx.pmFetch(pmids)
        if given_up():
            ctx.pmFreeResult(result)
            return hostsnap.failed(host, spec, hostsnap.fetch_failed("answered after the snapshot gave up"))
        snap = HostSnapshot(host, spec, ok=True, fetched_at=time.time())
        listings: dict[int, tuple[int, dict[int, str]]] = {}
        answered = False   # some PMID was known there: the names were looked up at another host
        try:
            res = result.contents
            vsets = _vsets(res)
            if job is not None:
                if (refused := _not_the_jobs(job.job_id, names[checked], *_slot_job_id(vsets[checked]))) is not None:
                    return hostsnap.failed(host, spec, refused)
                answered = True    # its job id: the agent is there
            for i, (vset, name, pmid, (indom, mtype, sem)) in enumerate(zip(vsets, names, pmid_texts, descs)):
                if i == checked:
                    continue
                _, numval, valfmt = _VSET_HEADER.unpack(ctypes.string_at(vset, _VSET_HEADER.size))
                answered |= numval >= 0
                if numval <= 0:
                    continue  # no values now (e.g. no OSTs): absent
                insts, values = _values(ctx, res, i, vset, numval, valfmt, mtype, cat.strings)
                if mtype == c_api.PM_TYPE_DOUBLE:
                    values = start_us(values)
                labels, values = _labelled(ctx, cat, listings, indom, insts, values,
                                           job.job_id if job is not None else None, slot)
                name = rename.get(name, name)
                snap.metrics[name] = Column(labels, values)
                snap.sems[name] = _SEMS.get(sem, "instant")
                snap.pmids[name] = pmid
        finally:
            ctx.pmFreeResult(result)
        if not answered:   # every PMID an error (no agent for the domain there)
            raise NoAgent()
        return snap
    except pmapi.pmErr as exc:
        return hostsnap.failed(host, spec, hostsnap.fetch_failed(_reason(exc)))
    except NoAgent:
        return hostsnap.failed(host, spec, hostsnap.no_agent())
    finally:
        del ctx



def _guessed_answer(ctx, host: str, spec: str, job: JobCatalogs, given_up: Callable[[], bool]) -> HostSnapshot | None:
    """The host read in one round trip, its job's slot guessed: the hosts of a job nearly
    always keep it in the same slot (their prologs stored the same jobs in the same order), so
    the slot the last host read had it in is fetched first, without looking it up. The answer
    names its job, so a wrong guess (another job there, or none) costs that one fetch and the
    host is then looked up as usual (None)."""
    slot = job.last_slot
    if slot is None or (got := _slot_answer(ctx, job, slot)) is None or got[0].job_id() != job.job_id:
        return None
    return _answered(host, spec, job, slot, got, given_up)   # None: read as if not guessed


def _slot_answer(ctx, job: JobCatalogs, slot: int):
    """The slot's answer, with the slot's Catalog, its looked-up entry and renames; None when
    the agent gives none or one this reader cannot decode (the host is then read metric by
    metric), or its namespace has no job ids."""
    cat, rename = job.for_slot(slot)
    entry = cat.lookup(ctx)
    if catalog.job_slot_id_name(slot) not in entry[0]:
        return None
    try:
        answered = _answer_of(ctx, slot, cat)
    except jobanswer.AnswerError:
        return None
    return None if answered is None else (*answered, cat, entry, rename)


def _answered(host: str, spec: str, job: JobCatalogs, slot: int, got,
              given_up: Callable[[], bool]) -> HostSnapshot | None:
    """The host's snapshot from its slot's answer (_slot_answer's); the slot remembered for the
    next host's guess when the answer is the job's. None: an answer this reader cannot take
    (the host is then read metric by metric)."""
    answer, series, cat, entry, rename = got
    if given_up():
        return hostsnap.failed(host, spec, hostsnap.fetch_failed("answered after the snapshot gave up"))
    try:
        read = _from_answer(host, spec, cat, answer, cat.by_pmid(entry), rename, job.job_id,
                            catalog.job_slot_id_name(slot), slot)
    except jobanswer.AnswerError:
        return None
    if read.ok:
        job.last_slot = slot
        read.series = series
    return read


def _answer_pmid(slot: int) -> int:
    return (catalog.DOMAIN << 22) | (agentcontract.JOB_ANSWER_CLUSTER << 10) | slot


def _series_pmid(slot: int) -> int:
    return (catalog.DOMAIN << 22) | (agentcontract.JOB_SERIES_CLUSTER << 10) | slot


# a slot's answer and its timeline, in one fetch: the agent answers a fetch whole, so the
# series sums to the deltas of the same answer (it takes a sample of its own for the fetch)
_ANSWER_PMIDS = [(ctypes.c_uint * 2)(_answer_pmid(slot), _series_pmid(slot)) for slot in range(catalog.JOB_SLOTS)]


def _answer_of(ctx, slot: int, cat: Catalog) -> tuple[jobanswer.Answer, jobseries.Series | str] | None:
    """The slot's answer, decoded where libpcp put it, and its timeline (or why there is
    none), in one fetch; None when the agent gives no answer (an agent older than the answer,
    or one too large for a value): the host is then read metric by metric. AnswerError: not
    an answer this reader knows."""
    if not 0 <= slot < len(_ANSWER_PMIDS):
        return None
    result = ctx.pmFetch(_ANSWER_PMIDS[slot])
    try:
        answer_set, series_set = _vsets(result.contents)[:2]
        view = _aggregate(answer_set)
        if view is None:
            return None
        answer = jobanswer.decode(view, cat.answer_listings)
        return answer, _series(series_set)
    finally:
        ctx.pmFreeResult(result)


def _aggregate(vset: int) -> memoryview | None:
    """The bytes of a value set's one aggregate value (PCP's value header off), where libpcp
    keeps them until the result is freed; None when the set holds no such value."""
    _, numval, valfmt = _VSET_HEADER.unpack(ctypes.string_at(vset, _VSET_HEADER.size))
    if numval != 1 or valfmt == c_api.PM_VAL_INSITU:
        return None
    _, ptr = _PM_VALUE.unpack(ctypes.string_at(vset + _VLIST_OFFSET, _PM_VALUE.size))
    header = ctypes.c_uint32.from_address(ptr).value
    if header >> 24 != c_api.PM_TYPE_AGGREGATE or (header & 0xFFFFFF) < 4:
        return None
    return memoryview((ctypes.c_char * ((header & 0xFFFFFF) - 4)).from_address(ptr + 4)).cast("B")


NO_SERIES = "its agent keeps no timeline (older than the timeline)"


def _series(vset: int) -> jobseries.Series | str:
    """The slot's timeline from its value set, or why the host has none (one line)."""
    _, numval, _ = _VSET_HEADER.unpack(ctypes.string_at(vset, _VSET_HEADER.size))
    if numval < 0:
        return NO_SERIES if numval == c_api.PM_ERR_PMID else f"its timeline could not be read: {pmapi.pmErr(numval)}"
    view = _aggregate(vset)
    if view is None:
        return "its agent gave no timeline of the job"
    try:
        return jobseries.decode(bytes(view))
    except jobseries.SeriesError as exc:
        return f"its timeline could not be decoded: {exc}"


def _plan(cat: Catalog, answer: jobanswer.Answer, by_pmid: dict[int, tuple[str, str, int]],
          rename: dict[str, str], job_id: str, slot: int) -> jobanswer.Plan:
    """How the answers of this one's shape become a host's columns (jobanswer.Plan)."""
    columns, sems, pmids, strings = [], {}, {}, []
    listings: dict[int, tuple[int, dict[int, str]]] = {}

    def listing_of(indom: int) -> tuple[int, dict[int, str]]:     # the answer's own listings
        if indom not in listings:
            listings[indom] = cat.listing(indom, *answer.listings.get(indom, ((), ())))
        return listings[indom]

    scattered = answer.spread.tolist()
    insts = answer.insts[answer.kept]                  # the other members' instances
    spread: list[tuple[str | None, int]] = []          # the scattered members: (name, indom)
    lo = max(answer.sets[0][1], 0)                     # where a member's values start, the scattered aside
    for (pmid, numval, mtype, indom), apart in list(zip(answer.sets, scattered))[1:]:
        if numval == c_api.PM_ERR_TYPE:
            # a member whose values the answer could not carry: read the host metric by
            # metric rather than lose that metric
            raise jobanswer.AnswerError(f"{pmid_text(pmid)}: values the answer cannot carry")
        known = by_pmid.get(pmid)
        name = rename.get(known[0], known[0]) if known is not None else None
        if known is not None:
            sems[name] = _SEMS.get(known[2], "instant")
            pmids[name] = known[1]
        if apart:
            spread.append((name, indom))
            continue
        first, lo = lo, lo + max(numval, 0)
        if known is None or numval <= 0:
            continue
        labels, keep = _instance_names(listing_of, cat, indom, insts[first:lo], job_id, slot)
        kind = (jobanswer.STRINGS if mtype == c_api.PM_TYPE_STRING else
                jobanswer.START if mtype == c_api.PM_TYPE_DOUBLE else jobanswer.AS_IS)
        if kind == jobanswer.STRINGS:
            at = sum(len(r) for r in strings)
            strings.append(range(first, lo))
            columns.append((name, at, at + numval, kind, labels, keep))
        else:
            columns.append((name, first, lo, kind, labels, keep))
    known_names = {c[0] for c in columns} | {n for n, _ in spread if n is not None}
    sems = {n: v for n, v in sems.items() if n in known_names}
    pmids = {n: v for n, v in pmids.items() if n in known_names}
    return jobanswer.Plan(columns, sems, pmids, np.array([i for r in strings for i in r], dtype=np.intp),
                          _scattered(spread, answer.listings))


def _scattered(spread: list[tuple[str | None, int]],
               listings: dict[int, tuple[tuple[int, ...], tuple[str, ...]]]) -> jobanswer.Scattered:
    """The scattered members (name, indom) laid out over their listings (jobanswer.Scattered)."""
    indoms = list(dict.fromkeys(indom for name, indom in spread if name is not None))
    keys, at = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.intp)]
    for n, indom in enumerate(indoms):
        ids = np.array(listings.get(indom, ((), ()))[0], dtype=np.int64)
        keys.append((n << 32) | (ids & 0xFFFFFFFF))
        at.append(np.arange(len(ids)))
    keys, at = np.concatenate(keys), np.concatenate(at)
    order = np.argsort(keys, kind="stable")
    first, names, listing = [0], [], []
    for name, indom in spread:
        if name is None:
            listing.append(-1)
            first.append(first[-1])
            continue
        listed = listings.get(indom, ((), ()))[1]
        listing.append(indoms.index(indom))
        names += listed
        first.append(first[-1] + len(listed))
    return jobanswer.Scattered([name for name, _ in spread], np.array(first, dtype=np.intp), names, keys[order],
                               at[order], np.array(listing, dtype=np.int64))


def _from_answer(host: str, spec: str, cat: Catalog, answer: jobanswer.Answer,
                 by_pmid: dict[int, tuple[str, str, int]], rename: dict[str, str], job_id: str, id_name: str,
                 slot: int) -> HostSnapshot:
    """The host's snapshot from its slot's answer: its values as its answer's shape lays them out
    (jobanswer.Row; materialized() or stacking make the columns the metric-by-metric read of the
    same metrics gives); the host refused when the answer is not of the job (_not_the_jobs)."""
    if not len(answer.set_table) or by_pmid.get(int(answer.set_table[0]["pmid"]), ("",))[0] != id_name:
        raise jobanswer.AnswerError("its first member is not the slot's job_id")
    if (refused := _not_the_jobs(job_id, id_name, int(answer.set_table[0]["numval"]), answer.job_id())) is not None:
        return hostsnap.failed(host, spec, refused)
    key = (answer.shape, id(answer.listings))
    plan = cat.answer_plans.get(key)
    if plan is None:
        plan = cat.answer_plans.setdefault(key, _plan(cat, answer, by_pmid, rename, job_id, slot))
    return HostSnapshot(host, spec, ok=True, fetched_at=time.time(), sems=plan.sems, pmids=plan.pmids,
                        answer=jobanswer.row(plan, answer))


def materialized(h: HostSnapshot) -> HostSnapshot:
    """A host read by its answer with its columns made, as the metric-by-metric read gives them
    (for a reader of one host; stacking makes them for many hosts at once)."""
    if h.answer is None:
        return h
    made = jobanswer.columns(h.answer)
    return HostSnapshot(h.host, h.spec, h.ok, h.error, h.fetched_at, {n: v for n, v in h.sems.items() if n in made},
                        made, {n: v for n, v in h.pmids.items() if n in made})


def _instance_names(listing_of: Callable[[int], tuple[int, dict[int, str]]], cat: Catalog, indom: int, insts,
                    job_id: str | None, slot: int) -> tuple[list[str], list[int] | None]:
    """A metric's instance names, and which of its values are kept (None: all): none for a
    metric without an instance domain; the job's id for the job's slot (no listing to read);
    else the names in listing_of(indom), the host's listing of the domain. An instance the
    listing does not name (or another slot) is dropped, the rest kept."""
    if indom == c_api.PM_INDOM_NULL:
        return [SINGULAR] * len(insts), None
    if indom == JOB_INDOM and job_id is not None:
        labels = [job_id if inst == slot else None for inst in list(insts)]
    else:
        labels = cat.labels(listing_of(indom), insts)
    if None not in labels:
        return labels, None
    keep = [j for j, label in enumerate(labels) if label is not None]
    return [labels[j] for j in keep], keep


def _labelled(ctx, cat: Catalog, listings: dict, indom: int, insts, values, job_id: str | None, slot: int):
    """_instance_names of a metric read metric by metric (the host's listings read once a
    host: listings), and its values kept."""
    def listing_of(i: int) -> tuple[int, dict[int, str]]:
        if i not in listings:
            listings[i] = cat.host_listing(ctx, i)
        return listings[i]

    labels, keep = _instance_names(listing_of, cat, indom, insts, job_id, slot)
    if keep is None:
        return labels, values
    return labels, values[keep] if isinstance(values, np.ndarray) else [values[j] for j in keep]

_VLIST_OFFSET = pmapi.pmValueSet.vlist.offset if HAVE_PMAPI else 0
_VSET_OFFSET = pmapi.pmResult.vset.offset if HAVE_PMAPI else 0
_VSET_HEADER = struct.Struct("<Iii")         # struct pmValueSet: pmid, numval, valfmt
_VALUE = np.dtype([("inst", "<i4"), ("pad", "<i4"), ("ptr", "<u8")])   # struct pmValue, 16 bytes
_BLOCK_64 = np.dtype([("header", "<u4"), ("value", "<u8")])            # packed pmValueBlock, 64-bit value
_PM_VALUE = struct.Struct("<i4xQ")          # struct pmValue: inst, pad, pval/lval
_BLOCK_HEADER_64 = struct.Struct("<IQ")     # pmValueBlock header + 64-bit value


def _header(mtype: int) -> int:
    return (mtype << 24) | 12   # vtype, vlen 12 (gcc bit-fields: vlen in the low 24 bits)


@functools.lru_cache(maxsize=None)
def _small_structs(numval: int) -> tuple[struct.Struct, struct.Struct]:
    """numval pmValues, and numval packed 64-bit value blocks, each as one struct."""
    return struct.Struct("<" + "i4xQ" * numval), struct.Struct("<" + "IQ" * numval)


# Value blocks closer than a page to the next are read as one run: every byte between two valid
# blocks under a page apart lies in one of their two pages, so the read never touches memory
# libpcp did not map (libpcp decodes a fetch PDU's blocks into one buffer: they are close).
_MAX_GAP = 4096


def _strings_in_one_read(ptrs: np.ndarray, cache: dict | None = None) -> list[str] | None:
    """The strings of a metric's pmValueBlocks (e.g. 600 OSC device names) from one read of the
    memory they lie in, instead of one ctypes call per value (1.2 ms per host on a 600-OSC
    client); None when the blocks are not close together or a header is not a string's.
    cache: lists already decoded, by the memory read and the blocks' offsets in it: the hosts
    of a job answer the same device names, decoded once (the lists are shared, never changed)."""
    p = ptrs.astype(np.int64)
    if len(p) < 2:
        return None
    order = np.sort(p)
    if bool(np.any(np.diff(order) > _MAX_GAP)):
        return None
    lo, hi = int(order[0]), int(order[-1])
    last = ctypes.c_uint32.from_address(hi).value
    if last >> 24 != c_api.PM_TYPE_STRING or not 4 < (last & 0xFFFFFF) <= _MAX_GAP:
        return None
    blob = ctypes.string_at(lo, hi - lo + (last & 0xFFFFFF))
    key = ((p - lo).tobytes(), blob)
    if cache is not None and (known := cache.get(key)) is not None:
        return known
    out = _decode_blocks(blob, (p - lo).tolist())
    if cache is not None and out is not None:
        out = cache.setdefault(key, out)
    return out


def _decode_blocks(blob: bytes, offsets: list[int]) -> list[str] | None:
    out: list[str] = []
    seen: dict[bytes, str] = {}          # many OSCs share a state ("FULL"): decode it once
    for o in offsets:
        header = int.from_bytes(blob[o:o + 4], "little")
        vlen = header & 0xFFFFFF
        if header >> 24 != c_api.PM_TYPE_STRING or vlen <= 4 or o + vlen > len(blob):
            return None
        raw = blob[o + 4:o + vlen].split(b"\0", 1)[0]
        text = seen.get(raw)
        if text is None:
            text = seen[raw] = raw.decode("utf-8", "replace")
        out.append(text)
    return out


def _indom_bytes(ctx, indom: int) -> tuple[bytes, bytes, bytes] | None:
    """pmGetInDom's answer as bytes: the instance ids, each name's offset in the names' memory,
    and that memory, read in one go (names under a page apart, as libpcp lays them out: never
    unmapped memory, see _MAX_GAP). None: no instances, or not laid out so (the bindings then)."""
    ids_p, names_p = ctypes.POINTER(ctypes.c_int)(), ctypes.POINTER(ctypes.c_char_p)()
    sts = pmapi.LIBPCP.pmUseContext(ctx.ctx)
    if sts < 0:
        raise pmapi.pmErr(sts)
    n = pmapi.LIBPCP.pmGetInDom(indom, ctypes.byref(ids_p), ctypes.byref(names_p))
    if n < 0:
        raise pmapi.pmErr(n)
    if n == 0:
        return None
    try:
        ids = ctypes.string_at(ctypes.addressof(ids_p.contents), 4 * n)
        ptrs = np.frombuffer(ctypes.string_at(ctypes.cast(names_p, ctypes.c_void_p).value, 8 * n), dtype=np.int64)
        order = np.sort(ptrs)
        if n > 1 and bool(np.any(np.diff(order) > _MAX_GAP)):
            return None
        lo, hi = int(order[0]), int(order[-1])
        last = ctypes.string_at(hi)        # NUL-terminated: up to the end of the last name
        if len(last) >= _MAX_GAP:
            return None
        return ids, (ptrs - lo).astype(np.int64).tobytes(), ctypes.string_at(lo, hi - lo + len(last) + 1)
    finally:
        pmapi.LIBC.free(ids_p)
        pmapi.LIBC.free(names_p)


def _vsets(res) -> list[int]:
    """The addresses of a fetch result's value sets, in one read (the bindings' getters cost
    ~10 us of ctypes a call, three calls a metric: a third of decoding a job view's answer)."""
    raw = ctypes.string_at(ctypes.addressof(res) + _VSET_OFFSET, 8 * res.numpmid)
    return list(struct.unpack(f"<{res.numpmid}Q", raw))


def _values(ctx, res, i: int, vset: int, numval: int, valfmt: int, mtype: int,
            strings: dict | None = None) -> tuple[np.ndarray | tuple[int, ...], np.ndarray | list[str]]:
    """Instance ids (a tuple for the small sets read without numpy) and values of one metric
    in a fetch result (doubles as float64, the rest of the numbers as uint64).

    pmExtractValue through the bindings costs ~7 us a value: 0.2 s for the 25,000 values of a
    2,048-OSC client, 200 s of one core for a 1,000-host job. For 64-bit values (u64 counters,
    double start times) the pmValue array and the value blocks are read as arrays instead:
    libpcp decodes a fetch PDU into packed 12-byte blocks, so when the block pointers advance
    by exactly 12 the blocks are one contiguous run and are read in one go; anything else
    takes the general path.
    """
    wide = mtype in (c_api.PM_TYPE_U64, c_api.PM_TYPE_DOUBLE)
    as_dtype = np.float64 if mtype == c_api.PM_TYPE_DOUBLE else np.uint64
    if numval <= 16 and (wide or mtype == c_api.PM_TYPE_U32):   # numpy costs more than it saves
        vlist, blocks = _small_structs(numval)
        flat = vlist.unpack(ctypes.string_at(vset + _VLIST_OFFSET, vlist.size))
        insts, words = flat[0::2], flat[1::2]
        got = None
        if valfmt == c_api.PM_VAL_INSITU:
            if not wide:
                got = [word & 0xFFFFFFFF for word in words]
        elif list(words) == list(range(words[0], words[0] + blocks.size, _BLOCK_HEADER_64.size)):
            # the value blocks are one packed run (libpcp decodes a PDU so): one read
            flat = blocks.unpack(ctypes.string_at(words[0], blocks.size))
            if flat[0::2].count(_header(mtype)) == numval:
                got = flat[1::2]
        if got is not None:
            raw = np.array(got, dtype=np.uint64)
            return insts, raw.view(as_dtype) if wide else raw     # a tuple: labels key on it as it is
    vlist = np.frombuffer(ctypes.string_at(vset + _VLIST_OFFSET, numval * _VALUE.itemsize), _VALUE)
    if mtype == c_api.PM_TYPE_U32 and valfmt == c_api.PM_VAL_INSITU:   # the value is in the pmValue
        return vlist["inst"], (vlist["ptr"] & 0xFFFFFFFF).astype(np.uint64)
    if mtype == c_api.PM_TYPE_STRING and valfmt != c_api.PM_VAL_INSITU:
        decoded = _strings_in_one_read(vlist["ptr"], strings)
        if decoded is not None:
            return vlist["inst"], decoded
        headers = [ctypes.c_uint32.from_address(int(p)).value for p in vlist["ptr"]]
        if all(h >> 24 == c_api.PM_TYPE_STRING for h in headers):   # NUL-terminated vbuf
            return vlist["inst"], [ctypes.string_at(int(p) + 4).decode("utf-8", "replace") for p in vlist["ptr"]]
    if wide and valfmt != c_api.PM_VAL_INSITU:
        ptrs = vlist["ptr"].astype(np.int64)
        if numval == 1 or bool(np.all(np.diff(ptrs) == _BLOCK_64.itemsize)):
            blocks = np.frombuffer(ctypes.string_at(int(ptrs[0]), numval * _BLOCK_64.itemsize), _BLOCK_64)
            if bool(np.all(blocks["header"] == _header(mtype))):
                return vlist["inst"], blocks["value"].astype(np.uint64).view(as_dtype)
    values = []
    for j in range(numval):
        atom = ctx.pmExtractValue(valfmt, res.get_vlist(i, j), mtype, mtype)
        value = atom.cp if mtype == c_api.PM_TYPE_STRING else atom.dref(mtype)
        values.append(value.decode("utf-8", "replace") if isinstance(value, bytes) else value)
    if mtype == c_api.PM_TYPE_STRING:
        return vlist["inst"], values
    if mtype in (c_api.PM_TYPE_FLOAT, c_api.PM_TYPE_DOUBLE):
        return vlist["inst"], np.array(values, dtype=np.float64)
    return vlist["inst"], np.array([int(v) for v in values], dtype=np.uint64)
