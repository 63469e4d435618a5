"""A job slot's answer (lustreclient.job.slot<S>.answer): every value a job's epilog reads of a
host, which the agent packs into one aggregate (layout: pmda-lustre/src/answer.h, docs/design.md
§2.4). Decoded here with a few numpy views, instead of one value set per metric and one instance
listing per instance domain: the members' value sets and the listings they use are in it.

decode() checks every count against the bytes it got before it trusts one; a malformed answer
raises AnswerError (the caller then reads the host metric by metric).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from operator import itemgetter

import numpy as np

from .. import agentcontract
from .column import Column
from .pminfoparse import start_us

_SET = np.dtype([("pmid", "<u4"), ("numval", "<i4"), ("type", "<u4"), ("indom", "<u4")])
_LISTING = np.dtype([("indom", "<u4"), ("count", "<u4")])


_PM_TYPE_STRING = 6                         # PCP's type codes (pmapi.h): part of its ABI


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
    shape: bytes                                # the members and instance ids as sent: answers of
                                                # one shape differ in their values only

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
        if not len(at):
            return []
        idx = self.values[at].astype(np.int64) - self.nlisted
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
    return Answer(set_table=sets.copy(), values=np.frombuffer(raw, "<u8", nvalues, values_at).astype(np.uint64),
                  insts=np.frombuffer(raw, "<i4", nvalues, insts_at).copy(),
                  listings=_listings((raw[listings_at:listed_at], raw[listed_at:strings_at],
                                      raw[strings_at:strings_at + listed_bytes]), listing_cache),
                  strings=strings, nlisted=nlisted, shape=_shape(raw[sets_at:values_at], raw[insts_at:listings_at],
                                                                 listing_cache))


def _same_as_last(parts: tuple, cache: dict | None, slot: str):
    """What the cache holds for these parts (bytes or views), when they are the last ones seen
    under slot: one comparison of memory instead of hashing ~30 KB a host (the hosts of a job
    mostly answer alike); None otherwise."""
    last = cache.get(slot) if cache is not None else None
    if last is not None and len(last[0]) == len(parts) and all(a == b for a, b in zip(last[0], parts)):
        return last[1]
    return None


def _shape(sets: memoryview | bytes, insts: memoryview | bytes, cache: dict | None) -> bytes:
    """The members and instance ids as one bytes (the same object for hosts that answer alike)."""
    got = _same_as_last((sets, insts), cache, "last shape")
    if got is None:
        got = b"".join((sets, insts))
        if cache is not None:
            cache["last shape"] = ((bytes(sets), bytes(insts)), got)
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
class Plan:
    """How the answers of one shape (the same members, instances and listings: the hosts of a
    job) become columns, worked out once (pcpfetch): columns are (name, first, end, kind,
    instance names, the values kept or None for all); first and end index a host's values, or
    for STRINGS its strings. The dicts are shared by the hosts' snapshots: never changed."""
    columns: list[tuple[str, int, int, int, list[str], list[int] | None]]
    sems: dict[str, str]
    pmids: dict[str, str]
    string_values: np.ndarray     # where the string columns' values are among a host's values


@dataclass
class Row:
    """A host read by its answer, as its plan's values: what its snapshot carries until it is
    stacked with the other hosts of its plan, all at once (snapfile), instead of a column a
    metric a host."""
    plan: Plan
    values: np.ndarray            # uint64, the answer's values
    strings: list[str]            # the string columns' values, one after the other


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
    return out


def blocks(plan: Plan, rows: list[Row]):
    """The columns of many hosts of one plan at once: (name, instance names, a hosts x
    instances block, whether strings), in the plan's order."""
    values = np.stack([r.values for r in rows]) if rows else np.zeros((0, 0), dtype=np.uint64)
    width = len(plan.string_values)
    strings = np.empty((len(rows), width), dtype=object)
    if width:
        strings[:] = [r.strings for r in rows]
    for name, lo, hi, kind, labels, keep in plan.columns:
        if kind == STRINGS:
            block = strings[:, lo:hi]
        elif kind == START:
            block = start_us(values[:, lo:hi].view(np.float64))
        else:
            block = values[:, lo:hi]
        yield name, labels, block if keep is None else block[:, keep], kind == STRINGS
