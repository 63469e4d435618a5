"""The reporter's decoder of a slot's timeline (acquire/jobseries.decode, docs/design.md §2.5):

- against a plain packer written here with struct and loops (hypothesis): random metric tables
  (the reporter's metrics in any order, histograms of other bucket counts, metrics it does not
  know), filesystems, sparse columns, negative values: each value the reporter knows and the
  agent sent lands in its column of VALUES, nothing else does, and the metrics the table does
  not name (an older agent's table) are the series' `lacks`;
- damaged (hypothesis: truncated, bits flipped, a count overwritten, bytes appended): a
  SeriesError of one line or a valid Series, never another exception, and never more memory
  than a small multiple of the input, whatever its counts claim;
- malformed by example: each refusal says why;
- a real agent's series, through a private pmcd on a sim client: decoded equal to the tests'
  plain reader (tests/kit/seriesread.py), and summing to the slot's deltas of the same fetch.
"""

from __future__ import annotations

import struct
import time
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, strategies as st

from kit.proptest import runs
from kit.seriesread import pack
from lustre_jobreport import agentcontract
from lustre_jobreport.acquire import jobseries
from lustre_jobreport.acquire.jobseries import VALUES, SeriesError, decode

MAGIC = 0x3253434C          # "LCS2"
I64 = st.integers(-(1 << 63), (1 << 63) - 1)


# ---- a plain reference (the plain packer: kit.seriesread.pack) ---------------------------------

def known_by_pmid() -> dict[int, tuple[str, bool]]:
    """The reporter's series metrics by PMID (domain << 22 | cluster << 10 | item): (name,
    histogram)."""
    hist = {name for name, bucket in VALUES if bucket is not None}
    return {agentcontract.DOMAIN << 22 | c << 10 | i: (name, name in hist)
            for name, c, i in agentcontract.JOB_SERIES_PMIDS}


def expected(table, filesystems) -> dict[str, dict[int, list[int]]]:
    """Per filesystem, {index into VALUES: its points} of each value the reporter knows and the
    agent sent (not zero at some point)."""
    known = known_by_pmid()
    where = {v: i for i, v in enumerate(VALUES)}
    out = {}
    for name, points in filesystems.items():
        cols = {}
        at = 0
        for p, n in table:
            for b in range(n):
                if p in known:
                    metric, hist = known[p]
                    key = (metric, b) if hist else (metric, None) if b == 0 else None
                    if key in where and any(point[at + b] != 0 for point in points):
                        cols[where[key]] = [point[at + b] for point in points]
            at += n
        out[name] = cols
    return out


def decoded(series) -> dict[str, dict[int, list[int]]]:
    return {name: {int(r): [int(x) for x in fs.data[:, k]] for k, r in enumerate(fs.index)}
            for name, fs in series.filesystems.items()}


# ---- random timelines ------------------------------------------------------------------------

@st.composite
def tables(draw):
    """The reporter's metrics, some left out, in any order, with metrics it does not know among
    them; a histogram with 64 buckets mostly, sometimes fewer or more."""
    known = known_by_pmid()
    chosen = draw(st.permutations(sorted(known)))
    chosen = chosen[:draw(st.integers(0, len(chosen)))]
    table = []
    for p in chosen:
        hist = known[p][1]
        table.append((p, draw(st.sampled_from([64, 64, 1, 3, 70])) if hist else 1))
    for _ in range(draw(st.integers(0, 3))):
        unknown = draw(st.integers(0, (1 << 32) - 1).filter(lambda q: q not in known))
        if unknown not in [q for q, _ in table]:
            table.insert(draw(st.integers(0, len(table))), (unknown, draw(st.integers(0, 5))))
    return table


@st.composite
def timelines(draw):
    table = draw(tables())
    nvalues = sum(n for _, n in table)
    npoints = draw(st.integers(0, 12))
    samples = draw(st.lists(st.integers(0, (1 << 32) - 1), min_size=npoints, max_size=npoints))
    names = draw(st.lists(st.text(min_size=1, max_size=12), max_size=4, unique=True))
    filesystems = {}
    for name in names:
        points = [[0] * nvalues for _ in range(npoints)]
        if nvalues and npoints:
            for v in draw(st.sets(st.integers(0, nvalues - 1), max_size=20)):
                for i, x in enumerate(draw(st.lists(I64, min_size=npoints, max_size=npoints))):
                    points[i][v] = x
        filesystems[name] = points
    level = draw(st.integers(0, 12))
    first_bin = draw(st.integers(0, ((1 << 64) - 1) // (10000 << level) - npoints))   # epoch ms in u64
    return table, samples, filesystems, level, first_bin


@runs(300)
@given(timelines())
def test_decode_places_each_value_sent_by_its_pmid(case):
    table, samples, filesystems, level, first_bin = case
    series = decode(pack(table, samples, filesystems, level=level, first_bin=first_bin))
    assert (series.level, series.interval_ms, series.first_bin) == (level, 10000, first_bin)
    assert series.width_ms == 10000 << level
    assert series.samples.tolist() == samples and series.npoints == len(samples)
    assert list(series.filesystems) == list(filesystems)
    assert decoded(series) == expected(table, filesystems)
    # what the agent's table does not name is absent, not zero: an older agent's table
    named = {p for p, _ in table}
    assert series.lacks == {name for p, (name, _) in known_by_pmid().items() if p not in named}
    for fs in series.filesystems.values():
        assert fs.data.dtype == np.int64 and fs.data.shape == (len(samples), len(fs.index))
        assert list(fs.index) == sorted(set(fs.index.tolist()))
    raw = pack(table, samples, filesystems)
    assert not any(np.shares_memory(fs.data, np.frombuffer(raw, np.uint8)) for fs in decode(raw).filesystems.values())


def test_decode_of_a_memoryview_gives_what_its_bytes_give():
    known = sorted(known_by_pmid())
    raw = pack([(known[0], 1), (known[-1], 64)], [1, 0, 2], {"scratch": [[5] + [0] * 64, [0] * 65, [-5] + [0] * 63 + [9]]})
    assert decoded(decode(memoryview(bytearray(raw)))) == decoded(decode(raw))
    assert decoded(decode(raw)) == {"scratch": {VALUES.index(("llite.read_bytes", None)): [5, 0, -5],
                                                VALUES.index(("fs.rpc.write", 63)): [0, 0, 9]}}


# ---- damaged timelines -----------------------------------------------------------------------

def damaged(raw: bytes, data) -> bytes:
    how = data.draw(st.sampled_from(["truncate", "flip", "word", "append"]))
    if how == "truncate":
        return raw[:data.draw(st.integers(0, len(raw) - 1))]
    if how == "append":
        return raw + data.draw(st.binary(min_size=1, max_size=16))
    at = data.draw(st.integers(0, len(raw) - 1))
    if how == "flip":
        return raw[:at] + bytes([raw[at] ^ 1 << data.draw(st.integers(0, 7))]) + raw[at + 1:]
    at -= at % 4        # a count claims anything
    word = data.draw(st.sampled_from([0, 1, 2, 63, 64, 65, 2048, 2049, 1 << 31, (1 << 32) - 1]))
    return raw[:at] + struct.pack("<I", word) + raw[at + 4:]


def decode_within_memory(raw: bytes):
    """decode(raw) and the most memory it took at once."""
    tracemalloc.start()
    try:
        try:
            got = decode(raw)
        except SeriesError as e:
            got = e
        return got, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@runs(400)
@given(timelines(), st.data())
def test_a_damaged_timeline_is_decoded_or_refused_in_one_line(case, data):
    table, samples, filesystems, level, first_bin = case
    raw = damaged(pack(table, samples, filesystems, level=level, first_bin=first_bin), data)
    got, peak = decode_within_memory(raw)
    if isinstance(got, SeriesError):
        assert str(got) and "\n" not in str(got)
    else:
        for fs in got.filesystems.values():
            assert fs.data.shape == (got.npoints, len(fs.index))
            assert ((0 <= fs.index) & (fs.index < len(VALUES))).all()
    # the input, the arrays made of it (each at most its bytes, the bitmap's bits 8x theirs)
    # and numpy's own small objects
    assert peak <= 16 * len(raw) + (64 << 10), (peak, len(raw))


@runs(300)
@given(st.tuples(*[st.sampled_from([0, 1, 7, 64, 2048, 2049, 1 << 31, (1 << 32) - 1])] * 8),
       st.binary(max_size=64))
def test_counts_that_claim_much_cost_what_the_input_holds(words, rest):
    level, interval_ms, npoints, nfs, nvalues, nmetrics, name_length, bitmap = words
    raw = (struct.pack("<IIIIQIIII", MAGIC, level % 70, interval_ms, npoints, 3, nfs, nvalues,
                       nmetrics, 0)
           + struct.pack("<II", 0x37000800, nvalues) * min(nmetrics, 2)
           + struct.pack("<I", name_length) + struct.pack("<Q", bitmap) + rest)
    got, peak = decode_within_memory(raw)
    assert isinstance(got, SeriesError) or got.npoints <= jobseries.MAX_POINTS
    assert peak <= 16 * len(raw) + (64 << 10), (peak, len(raw))


def good() -> tuple[list, list, dict]:
    known = sorted(known_by_pmid())
    return [(known[0], 1), (known[1], 1)], [1, 1, 0], {"scratch": [[1, 0], [2, 0], [0, 3]]}


@pytest.mark.parametrize("change, why", [
    (lambda raw: b"LCS1" + raw[4:], "not a timeline: magic"),
    (lambda raw: raw[:30], "truncated: the header"),
    (lambda raw: raw[:-1], "truncated: the columns of 'scratch'"),
    (lambda raw: raw + bytes(8), "8 bytes after the last filesystem"),
    (lambda raw: raw[:28] + struct.pack("<I", 3) + raw[32:], "add up to 2, the header says 3"),
    (lambda raw: raw[:12] + struct.pack("<I", 2049) + raw[16:], "2049 points: more than 2048"),
    (lambda raw: raw[:8] + struct.pack("<I", 0) + raw[12:], "bins of 0 ms"),
    (lambda raw: raw[:4] + struct.pack("<I", 64) + raw[8:], "x 2^64 are not a width"),
    (lambda raw: raw[:16] + struct.pack("<Q", (1 << 64) - 1) + raw[24:], "past the end of time"),
    (lambda raw: raw[:36] + struct.pack("<I", 1) + raw[40:], "last word is 1"),
    (lambda raw: raw[:24] + struct.pack("<I", 1 << 30) + raw[28:], "filesystems do not fit"),
    (lambda raw: raw.replace(b"scratch", b"scr\xfftch"), "is not UTF-8"),
    (lambda raw: raw.replace(b"scratch\0", b"scratch\1"), "padding after a filesystem's name"),
    (lambda raw: raw[:48] + raw[40:44] + raw[52:], "twice in the metric table"),
])
def test_a_malformed_timeline_is_refused_with_why(change, why):
    table, samples, filesystems = good()
    raw = pack(table, samples, filesystems)
    decode(raw)                                    # the timeline changed is a good one
    with pytest.raises(SeriesError, match=why.replace("^", r"\^")) as e:
        decode(change(raw))
    assert "\n" not in str(e.value)


def test_a_bit_past_the_values_or_of_no_point_is_refused():
    table, samples, filesystems = good()
    raw = pack(table, samples, filesystems)
    bitmap = raw.index(b"scratch") + 12     # past the name, padded to 16 with its length
    with pytest.raises(SeriesError, match="past the 2 a point"):
        decode(raw[:bitmap] + struct.pack("<Q", 0b111) + raw[bitmap + 8:] + bytes(8 * 3))
    none = pack(table, [], {"scratch": []})
    bitmap = none.index(b"scratch") + 12
    with pytest.raises(SeriesError, match="sends values of no points"):
        decode(none[:bitmap] + struct.pack("<Q", 0b1) + none[bitmap + 8:])


def test_a_known_value_sent_with_another_shape_is_refused():
    known = known_by_pmid()
    scalar = next(p for p, (_, hist) in known.items() if not hist)
    with pytest.raises(SeriesError, match="knows it as one"):
        decode(pack([(scalar, 2)], [1], {"scratch": [[1, 1]]}))


def test_not_bytes_is_refused():
    with pytest.raises(SeriesError, match="not a byte string"):
        decode("LCS2")


# ---- a real agent's timeline -----------------------------------------------------------------

def test_a_real_agents_series_decodes_as_the_plain_reader_reads_it(tmp_path):
    pytest.importorskip("pcp.pmapi")
    from kit.seriesread import bucket_label, decode as plain, fetch_together, start_node, store

    slot = "lustreclient.job.slot0"
    client, pmcd = start_node(tmp_path, 0.2)
    with pmcd:
        store(pmcd, "job_begin", "8001")
        for _ in range(3):
            client.run("overflow", fs="scratch")
            client.run("background", fs="home")
            time.sleep(0.5)
        names = [f"{slot}.series"] + [f"{slot}.{m}" for m in agentcontract.JOB_SERIES]
        values, _ = fetch_together(pmcd.spec, names)
    raw = values[f"{slot}.series"][""]
    ours, theirs = decode(raw), plain(raw)
    assert (ours.level, ours.interval_ms, ours.first_bin) == (theirs.level, theirs.interval_ms, theirs.first_bin)
    assert ours.samples.tolist() == theirs.samples
    assert list(ours.filesystems) == list(theirs.points) and set(theirs.points) == {"scratch", "home"}
    # the agent's table is the reporter's, in the same order: value v is VALUES[v]
    assert len(VALUES) == sum(n for _, n in theirs.metrics)
    for fs, columns in ours.filesystems.items():
        assert columns.index.tolist() == theirs.sent[fs]
        dense = np.zeros((ours.npoints, len(VALUES)), dtype=np.int64)
        dense[:, columns.index] = columns.data
        assert dense.tolist() == theirs.points[fs]
        # and the columns sum to the slot's deltas of the same fetch
        sums = dense.sum(axis=0)
        for r, (metric, bucket) in enumerate(VALUES):
            instance = fs if bucket is None else f"{fs}:{bucket_label(4096 << bucket)}"
            assert sums[r] == int(values.get(f"{slot}.{metric}", {}).get(instance, 0)), (fs, metric, bucket)
    scratch = ours.filesystems["scratch"]
    assert 0 < len(scratch.index) < len(VALUES) // 2        # a job touches few of the values
    assert len(raw) < 8 * ours.npoints * len(VALUES) * len(ours.filesystems)    # and only those are sent
