"""A job slot's answer (lustreclient.job.slot<S>.answer): every value a job's epilog reads of a
host, which the agent packs into one aggregate (layout: pmda-lustre/src/answer.h, docs/design.md
§2.4). Decoded here with a few numpy views, instead of one value set per metric and one instance
listing per instance domain: the members' value sets and the listings they use are in it.

decode() checks every count against the bytes it got before it trusts one; a malformed answer
raises AnswerError (the caller then reads the host metric by metric).

The slot's OSC and MDC deltas are sent only where not zero, and its left_out values only for
the devices left out (scattered()): the nodes of a real job, each touching its own OSTs, send
them for other instances. They are not part of the answer's shape: answers that differ in them
alone share one Plan, and each host's values of them are placed by their instances (Row.cols),
so that a job's hosts are decoded and stacked at the cost of hosts that did the same I/O.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from operator import itemgetter

import numpy as np

from .. import agentcontract, catalog
from .column import Column
from .pminfoparse import start_us

_SET = np.dtype([("pmid", "<u4"), ("numval", "<i4"), ("type", "<u4"), ("indom", "<u4")])
_LISTING = np.dtype([("indom", "<u4"), ("count", "<u4")])


_PM_TYPE_STRING = 6                         # PCP's type codes (pmapi.h): part of its ABI
_PM_TYPE_U64 = 3                            # PM_TYPE_32, _U32, _64, _U64 are 0 to 3
_PM_INDOM_NULL = 0xFFFFFFFF
# a slot's items the agent sends for some devices only: the OSC and MDC deltas (zeros not sent)
# and the left_out values (the devices left out)
_SPARSE_ITEMS = np.zeros(1024, dtype=bool)
_SPARSE_ITEMS[[k for k, name in enumerate(catalog.JOB_METRICS)
               if catalog.BY_NAME[name].indom in (catalog.OSC, catalog.MDC)]] = True
_SPARSE_ITEMS[agentcontract.JOB_LEFT_OUT_ITEM0:agentcontract.JOB_LEFT_OUT_ITEM0 + len(agentcontract.JOB_SOURCES)] = True


class AnswerError(ValueError):
    """The bytes are not a slot's answer as answer.h lays it out."""


@dataclass(frozen=True)
class Answer:
    """One host's answer. Member i's values are values[first[i]:first[i] + max(numval, 0)], their
    instance ids insts[...] beside them; a string value is the index of the string in the
    string table, whose first `nlisted` strings are the listed instances' names (listings)."""
    set_table: np.ndarray                       # _SET records: (pmid, numval, type, indom)
    values: np.ndarray                          # uint64 (a copy: the answer's bytes are not kept)
    insts: np.ndarray                           # int32
    listings: dict[int, tuple[tuple[int, ...], tuple[str, ...]]]   # indom -> (instance ids, names)
    strings: list[str]                          # the values' strings: string table index - nlisted
    nlisted: int
    shape: bytes                                # the members and instance ids as sent, but for the
                                                # scattered members' instances: answers of one shape
                                                # differ in their values and those only
    spread: np.ndarray                          # bool, each member's: scattered()
    apart: slice | np.ndarray                   # where the scattered members' values are
    kept: slice | np.ndarray                    # where the others' are

    def job_id(self) -> str | None:
        """The id of the job the answer is of: its first member's one string (None: none)."""
        if not len(self.set_table):
            return None
        _, numval, mtype, _ = self.set_table[0].tolist()
        return self.strings_at(np.zeros(1, dtype=np.intp))[0] if numval == 1 and mtype == _PM_TYPE_STRING else None

    @property
    def sets(self) -> list[tuple[int, int, int, int]]:
        return self.set_table.tolist()

    @property
    def first(self) -> list[int]:
        counts = np.maximum(self.set_table["numval"].astype(np.int64), 0)
        return (np.cumsum(counts) - counts).tolist()

    def strings_at(self, at: np.ndarray) -> list[str]:
        """The values at these positions as the strings they index (AnswerError: an index
        outside the table)."""
        return self.strings_of(self.values[at])

    def strings_of(self, words: np.ndarray) -> list[str]:
        """These values (string table indexes) as their strings (AnswerError: an index outside
        the table)."""
        if not len(words):
            return []
        idx = words.astype(np.int64) - self.nlisted
        try:
            if idx.min() < 0:
                raise IndexError
            if len(idx) == 1:
                return [self.strings[int(idx[0])]]
            return list(itemgetter(*idx.tolist())(self.strings))
        except IndexError:
            raise AnswerError("a string value outside the string table") from None


_HEADER = struct.Struct("<8I")


def decode(raw: bytes | memoryview, listing_cache: dict | None = None) -> Answer:
    """The answer in raw (bytes, or a view of the fetch result's memory: nothing of it is kept).
    listing_cache: listings already decoded, by their bytes (the hosts of a job list the same
    devices: their ~700 names are decoded once, not per host)."""
    if len(raw) < _HEADER.size:
        raise AnswerError(f"{len(raw)} bytes: shorter than a header")
    magic, nsets, nvalues, nlistings, nlisted, nstrings, listed_bytes, _ = _HEADER.unpack_from(raw)
    if magic != agentcontract.JOB_ANSWER_MAGIC:
        raise AnswerError(f"not a slot's answer (first word {magic:#010x})")
    sets_at = _HEADER.size
    values_at = sets_at + nsets * _SET.itemsize
    insts_at = values_at + 8 * nvalues
    listings_at = insts_at + 4 * nvalues
    listed_at = listings_at + nlistings * _LISTING.itemsize
    strings_at = listed_at + 4 * nlisted
    if strings_at + listed_bytes > len(raw) or (len(raw) > strings_at and raw[-1] != 0):
        raise AnswerError(f"{len(raw)} bytes: not what its counts say")
    sets = np.frombuffer(raw, _SET, nsets, sets_at)
    listings = np.frombuffer(raw, _LISTING, nlistings, listings_at)
    if (int(np.maximum(sets["numval"], 0).sum(dtype=np.int64)) != nvalues
            or int(listings["count"].sum(dtype=np.int64)) != nlisted):
        raise AnswerError("its counts do not add up")
    strings = str(raw[strings_at + listed_bytes:], "utf-8", "replace").split("\0")[:-1]
    if len(strings) != nstrings - nlisted:
        raise AnswerError("its string table does not hold the strings it counts")
    insts = np.frombuffer(raw, "<i4", nvalues, insts_at).copy()
    members, spread, run = _members(sets, listing_cache)
    frame, apart, kept = _frame(members, sets["numval"], spread, run)
    return Answer(set_table=sets.copy(), values=np.frombuffer(raw, "<u8", nvalues, values_at).astype(np.uint64),
                  insts=insts,
                  listings=_listings((raw[listings_at:listed_at], raw[listed_at:strings_at],
                                      raw[strings_at:strings_at + listed_bytes]), listing_cache),
                  strings=strings, nlisted=nlisted, shape=_shape(frame, insts[kept], listing_cache),
                  spread=spread, apart=apart, kept=kept)


def scattered(sets: np.ndarray) -> np.ndarray:
    """Which members (_SET records) are a job slot's numbers the agent sends for some devices
    only (_SPARSE_ITEMS), so for other instances on each node of a job."""
    pmid = sets["pmid"]
    cluster = ((pmid >> 10) & 0xFFF) - agentcontract.JOB_SLOT_CLUSTER0
    return ((pmid >> 22 == agentcontract.DOMAIN) & (cluster >= 0) & (cluster < agentcontract.JOB_SLOTS)
            & _SPARSE_ITEMS[pmid & 0x3FF] & (sets["indom"] != _PM_INDOM_NULL) & (sets["type"] <= _PM_TYPE_U64))


def _members(sets: np.ndarray, cache: dict | None) -> tuple[bytes, np.ndarray, tuple[int, int] | None]:
    """The members' PMIDs, types and instance domains as bytes, which are scattered(), and
    the run of members they are (first, end), None when not one run; worked out once for the
    members of the hosts of a job (the last ones seen, in one memory comparison)."""
    parts = (sets["pmid"].tobytes(), sets["type"].tobytes(), sets["indom"].tobytes())
    got = _same_as_last(parts, cache, "last members")
    if got is None:
        spread = scattered(sets)
        where = np.flatnonzero(spread)
        run = (int(where[0]), int(where[-1]) + 1) if len(where) and where[-1] + 1 - where[0] == len(where) else None
        got = (b"".join(parts), spread, run)
        if cache is not None:
            cache["last members"] = (parts, got)
    return got


def _frame(members: bytes, numval: np.ndarray, spread: np.ndarray,
           run: tuple[int, int] | None) -> tuple[bytes, slice | np.ndarray, slice | np.ndarray]:
    """The members as the shape has them (a scattered member's count left out, an error kept:
    a host whose member is an error is read otherwise); where the scattered members' values are,
    and the others': slices when the scattered members are one run that ends or starts the
    answer (as the agent orders them, the last ones), else positions."""
    counts = np.maximum(numval, 0)
    if run is None and not spread.any():
        return members + numval.tobytes(), slice(0, 0), slice(0, int(counts.sum()))
    frame = members + np.where(spread, np.minimum(numval, 0), numval).tobytes()
    if run is not None:
        ends = np.cumsum(counts)
        total = int(ends[-1])
        lo, hi = int(ends[run[0]] - counts[run[0]]), int(ends[run[1] - 1])
        if hi == total:
            return frame, slice(lo, hi), slice(0, lo)
        if lo == 0:
            return frame, slice(0, hi), slice(hi, total)
    in_spread = np.repeat(spread, counts)
    return frame, np.flatnonzero(in_spread), np.flatnonzero(~in_spread)


def _same_as_last(parts: tuple, cache: dict | None, slot: str):
    """What the cache holds for these parts (bytes or views), when they are the last ones seen
    under slot: one comparison of memory instead of hashing ~30 KB a host (the hosts of a job
    mostly answer alike); None otherwise."""
    last = cache.get(slot) if cache is not None else None
    if last is not None and len(last[0]) == len(parts) and all(a == b for a, b in zip(last[0], parts)):
        return last[1]
    return None


def _shape(frame: bytes, insts: np.ndarray, cache: dict | None) -> bytes:
    """The members and the instance ids of all but the scattered ones as one bytes (the same
    object for hosts that answer alike)."""
    ids = insts.tobytes()
    got = _same_as_last((frame, ids), cache, "last shape")
    if got is None:
        got = frame + ids
        if cache is not None:
            cache["last shape"] = ((frame, ids), got)
    return got


def _listings(parts: tuple, cache: dict | None) -> dict[int, tuple[tuple[int, ...], tuple[str, ...]]]:
    """indom -> (instance ids, names) of the listings (parts: the listing table, the listed ids,
    their names, as bytes or views); checked and decoded once per distinct bytes (a hit in the
    cache is the same bytes, checked before)."""
    got = _same_as_last(parts, cache, "last listing")
    if got is not None:
        return got
    key = tuple(bytes(p) for p in parts)
    if cache is not None and (known := cache.get(key)) is not None:
        cache["last listing"] = (key, known)
        return known
    table_raw, listed_raw, names = key
    table = np.frombuffer(table_raw, _LISTING)
    listed = np.frombuffer(listed_raw, "<i4")
    all_names = names.decode("utf-8", "replace").split("\0")[:-1]
    if len(all_names) != len(listed) or (names and not names.endswith(b"\0")):
        raise AnswerError("its listed names do not match the listings")
    ids = listed.tolist()
    out, at = {}, 0
    for indom, count in table.tolist():
        out[indom] = (tuple(ids[at:at + count]), tuple(all_names[at:at + count]))
        at += count
    if cache is not None:
        out = cache.setdefault(key, out)
        cache["last listing"] = (key, out)
    return out


# ---- answers as columns --------------------------------------------------------------------------

# how a member's values become a column: as they are, start times (whole microseconds), strings
AS_IS, START, STRINGS = range(3)


@dataclass(frozen=True)
class Scattered:
    """A plan's scattered members (scattered()), whose instances differ from host to host:
    each member's instances are laid out over its listing, member after member, and a host's
    values go by (listing, instance id) -> that column. names[c], first[k] <= c < first[k + 1]:
    column c is member k's instance names[c]."""
    members: list[str | None]     # the metric names, in the answer's order (None: not one this
                                  # reader asked for, whose values are dropped)
    first: np.ndarray             # intp, len(members) + 1: each member's first column, then the end
    names: list[str]              # every column's instance name
    keys: np.ndarray              # int64, sorted: (listing << 32) | instance id, of the listed instances
    at: np.ndarray                # intp: keys[j]'s place in its listing
    listing: np.ndarray           # int64, each member's listing (a key's high word; -1: none)

    def columns_of(self, counts: np.ndarray, insts: np.ndarray) -> np.ndarray:
        """The column of each of a host's values (counts: its values a member), -1 for an instance
        its listing does not name (dropped, as the metric-by-metric read drops it)."""
        if not len(self.keys):
            return np.full(len(insts), -1, dtype=np.intp)
        keys = np.repeat(self.listing << 32, counts) | (insts.astype(np.int64) & 0xFFFFFFFF)
        j = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
        return np.where(self.keys[j] == keys, np.repeat(self.first[:-1], counts) + self.at[j], -1)


NO_SCATTERED = Scattered([], np.zeros(1, dtype=np.intp), [], np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.intp),
                         np.zeros(0, dtype=np.int64))


@dataclass(frozen=True)
class Plan:
    """How the answers of one shape (the same members, instances and listings, the scattered
    members' instances aside: the hosts of a job) become columns, worked out once (pcpfetch):
    columns are (name, first, end, kind, instance names, the values kept or None for all) of
    the other members; first and end index a host's values of them, or for STRINGS its
    strings. The dicts are shared by the hosts' snapshots: never changed (sems and pmids name
    the scattered members too, which a host may not have sent)."""
    columns: list[tuple[str, int, int, int, list[str], list[int] | None]]
    sems: dict[str, str]
    pmids: dict[str, str]
    string_values: np.ndarray     # where the string columns' values are among a host's values
    scattered: Scattered = NO_SCATTERED


@dataclass
class Row:
    """A host read by its answer, as its plan's values: what its snapshot carries until it is
    stacked with the other hosts of its plan, all at once (snapfile), instead of a column a
    metric a host."""
    plan: Plan
    values: np.ndarray            # uint64, the answer's values but the scattered members'
    strings: list[str]            # the string columns' values, one after the other
    sent: np.ndarray              # int32, each scattered member's count of values (0: none sent)
    cols: np.ndarray              # intp, each scattered value's column (Scattered), as sent
    scattered: np.ndarray         # uint64, the scattered values of those columns


def row(plan: Plan, answer: Answer) -> Row:
    """The host's Row from its answer (of the plan's shape). AnswerError: its scattered values
    name a listed instance twice (the host is then read metric by metric, which says so)."""
    values = answer.values[answer.kept]
    strings = answer.strings_of(values[plan.string_values])
    sc = plan.scattered
    if not len(sc.members):
        return Row(plan, values, strings, _NONE_SENT, _NO_COLUMNS, _NO_VALUES)
    sent = np.maximum(answer.set_table["numval"][answer.spread], 0) * (sc.listing >= 0)
    cols = sc.columns_of(sent, answer.insts[answer.apart])
    got = answer.values[answer.apart]
    if len(cols) and cols.min() < 0:
        got, cols = got[cols >= 0], cols[cols >= 0]
    if len(cols) > 1:
        ordered = np.sort(cols)
        if bool((ordered[1:] == ordered[:-1]).any()):
            raise AnswerError("a member names an instance twice")
    return Row(plan, values, strings, sent, cols, got)


_NONE_SENT = np.zeros(0, dtype=np.int32)
_NO_COLUMNS = np.zeros(0, dtype=np.intp)
_NO_VALUES = np.zeros(0, dtype=np.uint64)


def columns(row: Row) -> dict[str, Column]:
    """One host's columns, as the metric-by-metric read gives them (for a reader of one host)."""
    out = {}
    for name, lo, hi, kind, labels, keep in row.plan.columns:
        if kind == STRINGS:
            got = row.strings[lo:hi]
            out[name] = Column(labels, got if keep is None else [got[j] for j in keep])
            continue
        got = row.values[lo:hi] if kind == AS_IS else start_us(row.values[lo:hi].view(np.float64))
        out[name] = Column(labels, got if keep is None else got[keep])
    sc = row.plan.scattered
    member = np.searchsorted(sc.first, row.cols, side="right") - 1
    for k in np.flatnonzero(row.sent):
        mine = member == k
        out[sc.members[k]] = Column([sc.names[c] for c in row.cols[mine].tolist()], row.scattered[mine])
    return out


@dataclass
class Block:
    """A metric's values of a plan's hosts: dense, a rows x labels block of values; or
    scattered, one value per (rows[j], labels[cols[j]])."""
    name: str
    labels: list[str]
    rows: np.ndarray              # intp: the block's rows (dense), or each value's row (scattered)
    values: np.ndarray
    is_string: bool
    cols: np.ndarray | None = None


def blocks(plan: Plan, rows: list[Row]):
    """The columns of many hosts of one plan at once (Blocks, in the plan's order, the scattered
    members last; rows index `rows`)."""
    values = np.stack([r.values for r in rows]) if rows else np.zeros((0, 0), dtype=np.uint64)
    width = len(plan.string_values)
    strings = np.empty((len(rows), width), dtype=object)
    if width:
        strings[:] = [r.strings for r in rows]
    every = np.arange(len(rows))
    for name, lo, hi, kind, labels, keep in plan.columns:
        if kind == STRINGS:
            block = strings[:, lo:hi]
        elif kind == START:
            block = start_us(values[:, lo:hi].view(np.float64))
        else:
            block = values[:, lo:hi]
        yield Block(name, labels, every, block if keep is None else block[:, keep], kind == STRINGS)
    if len(plan.scattered.members):
        yield from _scattered_blocks(plan.scattered, rows)


def _scattered_blocks(sc: Scattered, rows: list[Row]):
    """The scattered members' values of these hosts, a Block a member any host sent: its
    instances in the order the hosts (in turn) sent them, as stacking their columns one by one
    would list them."""
    sent = np.stack([r.sent for r in rows]).any(axis=0)
    cols = np.concatenate([r.cols for r in rows])
    got = np.concatenate([r.scattered for r in rows])
    at = np.repeat(np.arange(len(rows)), [len(r.cols) for r in rows])
    member = np.searchsorted(sc.first, cols, side="right") - 1
    by_member = np.argsort(member.astype(np.uint16), kind="stable")
    bounds = np.searchsorted(member[by_member], np.arange(len(sc.members) + 1))
    for k in np.flatnonzero(sent):
        mine = by_member[bounds[k]:bounds[k + 1]]
        c = cols[mine]
        listed, first_seen = np.unique(c, return_index=True)
        listed = listed[np.argsort(first_seen)]
        local = np.empty(int(sc.first[k + 1] - sc.first[k]), dtype=np.intp)
        local[listed - sc.first[k]] = np.arange(len(listed))
        yield Block(sc.members[k], [sc.names[j] for j in listed.tolist()], at[mine], got[mine], False,
                    local[c - sc.first[k]])
