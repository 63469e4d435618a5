"""A slot's answer (lustreclient.job.slot<S>.answer): one value holding everything a job's epilog
reads of a host, so that the host is decoded in one go instead of one value set per metric.

- Through the real agent, for each job of kit.jobscenarios (clears, remounts, OSTs added, files
  unreadable at the end, evictions): the host read by its answer is the host read metric by
  metric (the answer refused, as an agent older than it refuses it: a PMID it does not have):
  the same metrics, instances, values, semantics and PMIDs.
- A job's nodes each doing their own I/O (their OSC deltas on other OSCs: the slot's deltas are
  sent for the devices counted, OSC and MDC ones only where not zero) answer in one plan and
  are stacked at once, into the tables their metric-by-metric reads stack into; and so for
  random sparse sets, duplicates and unlisted instances, against a plain reference.
- The fan-out fetches the slot the last host had the job in without looking it up: a host whose
  job is in another slot, or whose guessed slot holds another job, is still read right, never
  with the other job's values.
- decode, against a plain packer of the layout answer.h documents, on random members and
  listings; and any answer cut short or with bytes changed is decoded or refused with
  AnswerError, nothing else.
"""

from __future__ import annotations

import struct
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lustre_jobreport import agentcontract, catalog
from lustre_jobreport.acquire import jobanswer

pcpfetch = pytest.importorskip("lustre_jobreport.acquire.pcpfetch")

JOB = "4242"
STRING, U64, U32, DOUBLE = 6, 3, 1, 5       # PCP's type codes
needs_pcp = pytest.mark.skipif(not pcpfetch.HAVE_PMAPI, reason="PCP's Python bindings are not importable")


# ---- through the real agent ----------------------------------------------------------------------

def store_begin(pmcd, job: str) -> None:
    done = subprocess.run(["pmstore", "-h", pmcd.local_spec, catalog.JOB_BEGIN_CONTROL, job],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr


def as_plain(h) -> dict:
    """A host's snapshot as plain values, for ==."""
    assert h.ok, h.error
    h = pcpfetch.materialized(h)
    return {"metrics": {m: (list(c.instances), list(c.values) if c.is_string else c.values.tolist())
                        for m, c in h.metrics.items()},
            "sems": dict(h.sems), "pmids": dict(h.pmids)}


def read(spec: str, *, by_answer: bool, monkeypatch, stacked: bool = False) -> tuple[dict, int]:
    """The host read through the job view, by its answer or metric by metric; and how many
    hosts were read by their answer. stacked: three hosts of that spec read and stacked into
    the snapshot's tables, as the epilog stacks them, instead."""
    answered = []
    real = pcpfetch._from_answer

    def counted(*args, **kw):
        got = real(*args, **kw)       # an AnswerError (the host read metric by metric) not counted
        answered.append(1)
        return got

    with monkeypatch.context() as m:
        m.setattr(pcpfetch, "_from_answer", counted)
        if not by_answer:     # a PMID no agent has: refused, as an agent older than the answer does
            m.setattr(pcpfetch, "_ANSWER_PMIDS", [(pcpfetch.ctypes.c_uint * 2)(
                (catalog.DOMAIN << 22) | (511 << 10) | s, (catalog.DOMAIN << 22) | (510 << 10) | s)
                for s in range(catalog.JOB_SLOTS)])
        job = pcpfetch.JobCatalogs(JOB)
        if stacked:
            from lustre_jobreport.acquire.snapfile import Snapshot
            hosts = [pcpfetch.fetch_pmapi(f"node{i}", spec, job=job) for i in range(3)]
            return as_tables(Snapshot.from_hosts(0.0, hosts, consume=True)), len(answered)
        h = pcpfetch.fetch_pmapi("node0", spec, job=job)
    return as_plain(h), len(answered)


def as_tables(snap) -> dict:
    return {m: (t.sem, t.is_string, list(t.instances), t.values.tolist(), t.present.tolist(), t.pmid)
            for m, t in snap.metrics.items()}


@needs_pcp
@pytest.mark.parametrize("scenario", ["plain", "osc stats cleared", "remounted", "OST added",
                                      "osc stats unreadable at the end", "osc import unreadable at the end",
                                      "evicted"])
def test_a_hosts_answer_reads_what_its_metrics_read(tmp_path, monkeypatch, scenario):
    from kit.jobscenarios import SCENARIOS
    from kit.privpmcd import PrivatePmcd
    from lustre_sim import SimClient

    client = SimClient.create(tmp_path / "tree", version="2.15.4", filesystems=[("scratch", 12, 1), ("home", 4, 1)],
                              seed=5)
    client.run("background", fs="home")
    with PrivatePmcd(tmp_path / "pmcd", tmp_path / "tree") as pmcd:
        store_begin(pmcd, "older")          # the job in slot 1, not 0
        store_begin(pmcd, JOB)
        SCENARIOS[scenario](client)
        by_answer, answered = read(pmcd.spec, by_answer=True, monkeypatch=monkeypatch)
        by_metric, none = read(pmcd.spec, by_answer=False, monkeypatch=monkeypatch)
        # and as the epilog stacks many hosts: all at once by their answers' shape
        tables_by_answer, _ = read(pmcd.spec, by_answer=True, monkeypatch=monkeypatch, stacked=True)
        tables_by_metric, _ = read(pmcd.spec, by_answer=False, monkeypatch=monkeypatch, stacked=True)
    assert (answered, none) == (1, 0)
    assert by_answer == by_metric
    assert tables_by_answer == tables_by_metric
    deltas = [m for m in by_answer["metrics"] if m.startswith(catalog.P + "job.")]
    assert deltas and catalog.P + "osc.device" in by_answer["metrics"]


@needs_pcp
def test_an_answer_this_reader_cannot_decode_leaves_the_host_read_metric_by_metric(tmp_path, monkeypatch):
    """A newer agent's answer laid out otherwise, or a damaged one: nothing of the host is lost,
    it is read as from an agent without the answer."""
    from kit.privpmcd import PrivatePmcd
    from lustre_sim import SimClient

    client = SimClient.create(tmp_path / "tree", version="2.15.4", filesystems=[("scratch", 6, 1)], seed=7)
    with PrivatePmcd(tmp_path / "pmcd", tmp_path / "tree") as pmcd:
        store_begin(pmcd, JOB)
        client.run("overflow", fs="scratch")
        want, _ = read(pmcd.spec, by_answer=False, monkeypatch=monkeypatch)

        def refuse(raw, cache=None):
            raise jobanswer.AnswerError("laid out otherwise")

        monkeypatch.setattr(jobanswer, "decode", refuse)
        got, answered = read(pmcd.spec, by_answer=True, monkeypatch=monkeypatch)
    assert answered == 0 and got == want


@needs_pcp
@pytest.mark.parametrize("member", ["a job end metric", "a slot delta"])
def test_a_member_the_answer_could_not_carry_leaves_the_host_read_metric_by_metric(tmp_path, monkeypatch, member):
    """The agent says PM_ERR_TYPE for a member whose values it cannot pack: that metric is not
    dropped from the host, the host is read metric by metric (a slot delta too, whose instances
    are not part of the answer's shape: a plan of answers without the error is not taken)."""
    import cpmapi as c_api
    from kit.privpmcd import PrivatePmcd
    from lustre_sim import SimClient

    client = SimClient.create(tmp_path / "tree", version="2.15.4", filesystems=[("scratch", 6, 1)], seed=8)
    with PrivatePmcd(tmp_path / "pmcd", tmp_path / "tree") as pmcd:
        store_begin(pmcd, JOB)
        client.run("overflow", fs="scratch")
        want, _ = read(pmcd.spec, by_answer=False, monkeypatch=monkeypatch)
        real, decoded = jobanswer.decode, []
        # an answer as it is, read first: its plan is then known to the catalog
        job = pcpfetch.JobCatalogs(JOB)
        assert pcpfetch.fetch_pmapi("node0", pmcd.spec, job=job).answer is not None

        def one_not_carried(raw, cache=None):
            a = real(raw, cache)
            table = a.set_table.copy()
            spread = jobanswer.scattered(table) & (table["numval"] > 0)
            k = 3 if member == "a job end metric" else int(np.flatnonzero(spread)[0])
            table["numval"][k] = c_api.PM_ERR_TYPE
            counts = np.maximum(a.set_table["numval"], 0)
            keep = np.ones(len(a.values), dtype=bool)
            first = int(counts[:k].sum())
            keep[first:first + int(counts[k])] = False
            decoded.append(k)
            return real(pack_again(a, table, keep), cache)

        monkeypatch.setattr(jobanswer, "decode", one_not_carried)
        got = pcpfetch.fetch_pmapi("node1", pmcd.spec, job=job)
    assert decoded and got.answer is None and as_plain(got) == want


def pack_again(a, table: np.ndarray, keep: np.ndarray) -> bytes:
    """Answer a packed again (answer.h's layout) with this set table and the values kept."""
    listings = [(indom, list(zip(ids, names))) for indom, (ids, names) in a.listings.items()]
    listed = b"".join(n.encode() + b"\0" for _, lst in listings for _, n in lst)
    nlisted = sum(len(lst) for _, lst in listings)
    out = struct.pack("<8I", agentcontract.JOB_ANSWER_MAGIC, len(table), int(keep.sum()), len(listings), nlisted,
                      nlisted + len(a.strings), len(listed), 0)
    out += table.tobytes() + a.values[keep].astype("<u8").tobytes() + a.insts[keep].astype("<i4").tobytes()
    out += b"".join(struct.pack("<II", indom, len(lst)) for indom, lst in listings)
    out += b"".join(struct.pack("<i", i) for _, lst in listings for i, _ in lst)
    return out + listed + b"".join(t.encode() + b"\0" for t in a.strings)


@needs_pcp
def test_a_guessed_slot_is_taken_only_when_it_holds_the_job(tmp_path, monkeypatch):
    """Host a has the job in slot 0; host b has another job in slot 0 and the job in slot 1.
    Read a, a, b in that order (one thread): the second a is read from its guessed slot without
    a lookup; b's guess (slot 0, a's) holds the other job, so b is looked up and read from slot
    1. Every host's values are those of its metric-by-metric read."""
    from kit.privpmcd import PrivatePmcd
    from lustre_jobreport.acquire import snapshot
    from lustre_sim import SimClient

    ta = SimClient.create(tmp_path / "ta", version="2.15.4", filesystems=[("scratch", 4, 1)], seed=1)
    tb = SimClient.create(tmp_path / "tb", version="2.15.4", filesystems=[("scratch", 6, 1)], seed=2)
    with PrivatePmcd(tmp_path / "pa", ta.root) as a, PrivatePmcd(tmp_path / "pb", tb.root) as b:
        store_begin(a, JOB)
        store_begin(b, "other")
        store_begin(b, JOB)
        tb.run("overflow", fs="scratch")
        specs = {"a": a.spec, "b": b.spec}
        lookups = []
        real_lookup = pcpfetch._job_slot
        monkeypatch.setattr(pcpfetch, "_job_slot", lambda ctx, job: lookups.append(1) or real_lookup(ctx, job))
        got = snapshot.fetch_all([snapshot.HostTarget(n, specs[n[0]]) for n in ("a1", "a2", "b1")], parallel=1,
                                 connect_timeout_s=5, fetch_timeout_s=20, job_id=JOB).hosts
        assert len(lookups) == 2       # a1 (nothing to guess from) and b1 (its guess held "other")
        monkeypatch.setattr(pcpfetch, "_job_slot", real_lookup)
        want = {n: read(specs[n], by_answer=False, monkeypatch=monkeypatch)[0] for n in specs}
    assert [as_plain(h) for h in got] == [want["a"], want["a"], want["b"]]


def differing_nodes(tmp_path, count: int):
    """count sim clients (private pmcds with the real agent) of one job, each node writing and
    reading its own files of a file-per-process IOR, striped over its own few OSCs."""
    from kit.privpmcd import PrivatePmcd
    from lustre_sim import SimClient

    pmcds = []
    for i in range(count):
        client = SimClient.create(tmp_path / f"t{i}", version="2.15.4", filesystems=[("scratch", 24, 1), ("home", 4, 1)],
                                  seed=i)
        pmcds.append(PrivatePmcd(tmp_path / f"p{i}", client.root).start())
        store_begin(pmcds[-1], JOB)
        client.run("ior", fs="scratch", tasks=2, first_task=3 * i, stripe_count=1 + i % 4, block_size=1 << 20)
    return pmcds


def read_all(specs: list[str], *, by_answer: bool, monkeypatch) -> list:
    """The hosts (one a spec) read by the job view, as the epilog reads them (one fan-out)."""
    from lustre_jobreport.acquire import snapshot

    with monkeypatch.context() as m:
        if not by_answer:
            m.setattr(pcpfetch, "_ANSWER_PMIDS", [(pcpfetch.ctypes.c_uint * 2)(
                (catalog.DOMAIN << 22) | (511 << 10) | s, (catalog.DOMAIN << 22) | (510 << 10) | s)
                for s in range(catalog.JOB_SLOTS)])
        got = snapshot.fetch_all([snapshot.HostTarget(f"node{i}", spec) for i, spec in enumerate(specs)], parallel=2,
                                 connect_timeout_s=5, fetch_timeout_s=20, job_id=JOB).hosts
    assert all(h.ok for h in got), [h.error for h in got]
    return got


@needs_pcp
def test_nodes_doing_their_own_io_answer_in_one_plan_and_stack_as_their_metrics_do(tmp_path, monkeypatch):
    """Four nodes of one job, each its own OSCs: their OSC deltas are sent for other instances,
    yet the hosts share one plan (decoded and stacked at the cost of hosts that did the same
    I/O), and each host, and the tables they stack into, are what their metric-by-metric reads
    give."""
    from lustre_jobreport.acquire.snapfile import Snapshot

    pmcds = differing_nodes(tmp_path, 4)
    try:
        specs = [p.spec for p in pmcds]
        by_answer = read_all(specs, by_answer=True, monkeypatch=monkeypatch)
        by_metric = read_all(specs, by_answer=False, monkeypatch=monkeypatch)
    finally:
        for p in pmcds:
            p.stop()
    sent = [set(h.metrics[catalog.P + "job.osc.write_bytes"].instances) for h in by_metric]
    assert len({frozenset(s) for s in sent}) == 4, sent      # the scenario: every node its own OSCs
    assert all(h.answer is not None for h in by_answer)
    assert len({id(h.answer.plan) for h in by_answer}) == 1
    assert [as_plain(h) for h in by_answer] == [as_plain(h) for h in by_metric]
    assert as_tables(Snapshot.from_hosts(0.0, by_answer)) == as_tables(Snapshot.from_hosts(0.0, by_metric))


# ---- hosts of random sparse sets, against a plain reference ------------------------------------------

SLOT = 2
OSC_INDOM, MDC_INDOM = (220 << 22) | 1, (220 << 22) | 2


def slot_pmid(item: int) -> int:
    return (220 << 22) | ((catalog.JOB_SLOT_CLUSTER0 + SLOT) << 10) | item


# the members as a slot's answer has them: the job id, an end metric over the OSCs (every host
# sends it for every OSC: part of the shape), then the slot's deltas over OSC and MDC and a
# left_out, which each host sends for its own instances
END_DEVICE = ((220 << 22) | (4 << 10) | 0, STRING, OSC_INDOM, catalog.P + "osc.device")
DELTAS = [(slot_pmid(44), U64, OSC_INDOM, catalog.P + "job.osc.read_bytes"),
          (slot_pmid(45), U64, OSC_INDOM, catalog.P + "job.osc.write_bytes"),
          (slot_pmid(49), U64, OSC_INDOM, catalog.P + "job.osc.req_count"),
          (slot_pmid(51), U64, MDC_INDOM, catalog.P + "job.mdc.reconnects"),
          (slot_pmid(catalog.JOB_LEFT_OUT_ITEM0 + 3), U32, OSC_INDOM, catalog.P + "job.left_out.osc_stats")]


def plain_answer(oscs: list[tuple[int, str]], mdcs: list[tuple[int, str]], sent: list[list[tuple[int, int]]],
                 end_at: int = 0) -> bytes:
    """A host's answer: the listings, and its values (inst, value) of each of DELTAS; the end
    metric among them at end_at (the agent sends it before them: 0)."""
    members = [(pmid, mtype, indom, values) for (pmid, mtype, indom, _), values in zip(DELTAS, sent)]
    members.insert(end_at, (END_DEVICE[0], STRING, OSC_INDOM, [(i, name) for i, name in oscs]))
    members.insert(0, (slot_pmid(catalog.JOB_ID_ITEM), STRING, 0xFFFFFFFF, [(-1, JOB)]))
    return pack(members, [(OSC_INDOM, oscs), (MDC_INDOM, mdcs)])


def reference_host(oscs, mdcs, sent) -> dict:
    """The host as its metric-by-metric read gives it, written plainly: each member it sent
    values of, its listed instances' names and values in the order sent."""
    named = {OSC_INDOM: dict(oscs), MDC_INDOM: dict(mdcs)}
    metrics = {END_DEVICE[3]: ([name for _, name in oscs], [name for _, name in oscs])} if oscs else {}
    sems, pmids = ({END_DEVICE[3]: "discrete"}, {END_DEVICE[3]: pcpfetch.pmid_text(END_DEVICE[0])}) if oscs else ({}, {})
    for (pmid, _, indom, name), values in zip(DELTAS, sent):
        if not values:
            continue
        labels, kept = [], []
        for inst, value in values:
            if inst in named[indom]:
                labels.append(named[indom][inst])
                kept.append(value)
        metrics[name] = (labels, kept)
        sems[name] = "counter"
        pmids[name] = pcpfetch.pmid_text(pmid)
    return {"metrics": metrics, "sems": sems, "pmids": pmids}


def reference_tables(hosts: list[dict]) -> dict:
    """The hosts' metrics stacked, written plainly: a metric's instances in the order the hosts
    (in turn) list them first, values 0 and present False where a host has none."""
    out = {}
    for metric in dict.fromkeys(m for h in hosts for m in h["metrics"]):
        instances = []
        for h in hosts:
            for label in h["metrics"].get(metric, ([], []))[0]:
                if label not in instances:
                    instances.append(label)
        is_string = metric == END_DEVICE[3]
        values = [["" if is_string else 0] * len(instances) for _ in hosts]
        present = [[False] * len(instances) for _ in hosts]
        for r, h in enumerate(hosts):
            labels, got = h["metrics"].get(metric, ([], []))
            for label, value in zip(labels, got):
                values[r][instances.index(label)] = value
                present[r][instances.index(label)] = True
        sem = next(h["sems"][metric] for h in hosts if metric in h["sems"])
        pmid = next(h["pmids"][metric] for h in hosts if metric in h["pmids"])
        out[metric] = (sem, is_string, instances, values, present, pmid)
    return out


def answer_catalog():
    """A slot's Catalog with the members' PMIDs looked up (as Catalog.lookup would)."""
    cat, _ = pcpfetch.JobCatalogs(JOB).for_slot(SLOT)
    by_pmid = {slot_pmid(catalog.JOB_ID_ITEM): (catalog.job_slot_id_name(SLOT), "", 4),
               END_DEVICE[0]: (END_DEVICE[3], pcpfetch.pmid_text(END_DEVICE[0]), 4)}
    by_pmid.update({pmid: (name, pcpfetch.pmid_text(pmid), 1) for pmid, _, _, name in DELTAS})
    return cat, by_pmid


listed_ids = st.lists(st.integers(0, 40), min_size=0, max_size=10, unique=True)


@st.composite
def sparse_hosts(draw):
    """Listings, then hosts each sending its own sparse sets: instances listed or not (an OSC
    added since the listing), in any order, now and then one twice; and where among the
    deltas the end metric is (the scattered members one run at the end, or not)."""
    oscs = [(i, f"fs-OST{i:04x}-osc") for i in draw(listed_ids)]
    mdcs = [(i, f"fs-MDT{i:04x}-mdc") for i in draw(st.lists(st.integers(0, 3), max_size=2, unique=True))]
    hosts = []
    for _ in range(draw(st.integers(1, 6))):
        sent = []
        for _, _, indom, _ in DELTAS:
            ids = [i for i, _ in (oscs if indom == OSC_INDOM else mdcs)]
            pick = draw(st.lists(st.sampled_from(ids + [99]) if ids else st.just(99), max_size=len(ids) + 1,
                                 unique=not draw(st.integers(0, 9)) == 0))
            sent.append([(i, draw(st.integers(0, 2**64 - 1))) for i in pick])
        hosts.append(sent)
    return oscs, mdcs, hosts, draw(st.integers(0, len(DELTAS)))


@needs_pcp
@settings(max_examples=400, deadline=None)
@given(sparse_hosts())
def test_hosts_of_random_sparse_sets_read_and_stack_as_a_plain_reference_says(case):
    """Any sparse sets: hosts whose answers differ in them alone share one plan; each host's
    columns, and the tables the hosts stack into, are the plain reference's (an instance the
    listing does not name dropped); a host naming a listed instance twice in one member is
    refused (AnswerError: read metric by metric, which says so)."""
    from lustre_jobreport.acquire.snapfile import Snapshot

    oscs, mdcs, hosts, end_at = case
    cat, by_pmid = answer_catalog()
    read, want = [], []
    for n, sent in enumerate(hosts):
        answer = jobanswer.decode(plain_answer(oscs, mdcs, sent, end_at), cat.answer_listings)
        listed = [[i for i, _ in values if i in dict(oscs if indom == OSC_INDOM else mdcs)]
                  for (_, _, indom, _), values in zip(DELTAS, sent)]
        twice = any(len(set(ids)) < len(ids) for ids in listed)      # a listed instance twice
        try:
            h = pcpfetch._from_answer(f"h{n}", "spec", cat, answer, by_pmid, {}, JOB,
                                      catalog.job_slot_id_name(SLOT), SLOT)
        except jobanswer.AnswerError:
            assert twice
            continue
        assert not twice
        read.append(h)
        want.append(reference_host(oscs, mdcs, sent))
    assert len({id(h.answer.plan) for h in read}) <= 1
    assert [as_plain(h) for h in read] == want
    assert as_tables(Snapshot.from_hosts(0.0, read)) == reference_tables(want)


# ---- decode, against a plain packer ----------------------------------------------------------------

def pack(members: list[tuple[int, int, int, list[tuple[int, object]]] | tuple[int, int, int, int]],
         listings: list[tuple[int, list[tuple[int, str]]]]) -> bytes:
    """answer.h's layout, written plainly: members (pmid, type, indom, [(inst, value)]) or
    (pmid, type, indom, error); listings (indom, [(inst, name)]). Strings are not shared."""
    names = [name for _, listed in listings for _, name in listed]
    strings: list[str] = []
    sets, values, insts = [], [], []
    for pmid, mtype, indom, vals in members:
        if isinstance(vals, int):
            sets.append((pmid, vals, mtype, indom))
            continue
        sets.append((pmid, len(vals), mtype, indom))
        for inst, v in vals:
            if mtype == STRING:
                strings.append(v)
                v = len(names) + len(strings) - 1
            elif mtype == DOUBLE:
                v = struct.unpack("<Q", struct.pack("<d", v))[0]
            values.append(v)
            insts.append(inst)
    listed = b"".join(n.encode() + b"\0" for n in names)
    out = struct.pack("<8I", agentcontract.JOB_ANSWER_MAGIC, len(sets), len(values), len(listings), len(names),
                      len(names) + len(strings), len(listed), 0)
    out += b"".join(struct.pack("<IiII", *s) for s in sets)
    out += b"".join(struct.pack("<Q", v) for v in values) + b"".join(struct.pack("<i", i) for i in insts)
    out += b"".join(struct.pack("<II", indom, len(lst)) for indom, lst in listings)
    out += b"".join(struct.pack("<i", i) for _, lst in listings for i, _ in lst)
    return out + listed + b"".join(s.encode() + b"\0" for s in strings)


names = st.text(st.characters(min_codepoint=33, max_codepoint=0x2FF), min_size=1, max_size=12)
member = st.one_of(
    st.tuples(st.integers(0, 2**31), st.just(U64), st.integers(0, 9),
              st.lists(st.tuples(st.integers(-1, 99), st.integers(0, 2**64 - 1)), max_size=5)),
    st.tuples(st.integers(0, 2**31), st.just(STRING), st.integers(0, 9),
              st.lists(st.tuples(st.integers(-1, 99), names), max_size=5)),
    st.tuples(st.integers(0, 2**31), st.just(DOUBLE), st.integers(0, 9),
              st.lists(st.tuples(st.integers(-1, 99), st.floats(0, 2e9)), max_size=3)),
    st.tuples(st.integers(0, 2**31), st.just(U64), st.integers(0, 9), st.integers(-20000, -1)))
listing = st.tuples(st.integers(0, 9), st.lists(st.tuples(st.integers(0, 99), names), max_size=6))


@settings(max_examples=300, deadline=None)
@given(st.lists(member, min_size=1, max_size=8), st.lists(listing, max_size=3))
def test_decode_gives_the_members_and_listings_packed(members, listings):
    a = jobanswer.decode(pack(members, listings), {})
    assert len(a.sets) == len(members)
    for (pmid, mtype, indom, vals), (gpmid, numval, gtype, gindom), lo in zip(members, a.sets, a.first):
        assert (gpmid, gtype, gindom) == (pmid, mtype, indom)
        if isinstance(vals, int):
            assert numval == vals
            continue
        assert numval == len(vals)
        assert a.insts[lo:lo + numval].tolist() == [i for i, _ in vals]
        if mtype == STRING:
            assert a.strings_at(np.arange(lo, lo + numval)) == [v for _, v in vals]
        elif mtype == DOUBLE:
            assert a.values[lo:lo + numval].view(np.float64).tolist() == [v for _, v in vals]
        else:
            assert a.values[lo:lo + numval].tolist() == [v for _, v in vals]
    want = {}
    for indom, listed in listings:     # an indom listed twice: the last one (a dict by indom)
        want[indom] = (tuple(i for i, _ in listed), tuple(n for _, n in listed))
    assert a.listings == want


@settings(max_examples=300, deadline=None)
@given(st.lists(member, min_size=1, max_size=6), st.lists(listing, max_size=2), st.data())
def test_a_damaged_answer_is_decoded_or_refused_never_anything_else(members, listings, data):
    raw = bytearray(pack(members, listings))
    if data.draw(st.booleans()):
        raw = raw[:data.draw(st.integers(0, len(raw) - 1))]
    else:
        for _ in range(data.draw(st.integers(1, 4))):
            raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    try:
        a = jobanswer.decode(bytes(raw), {})
    except jobanswer.AnswerError:
        return
    # decoded: every string value it hands out is one of the table's, or refused
    for (_, numval, mtype, _), lo in zip(a.sets, a.first):
        if mtype == STRING and numval > 0:
            try:
                assert all(isinstance(s, str) for s in a.strings_at(np.arange(lo, lo + numval)))
            except jobanswer.AnswerError:
                pass


def test_not_an_answer_is_refused_with_why():
    with pytest.raises(jobanswer.AnswerError, match="not a slot's answer"):
        jobanswer.decode(b"\0" * 64, {})
    with pytest.raises(jobanswer.AnswerError, match="shorter than a header"):
        jobanswer.decode(b"LCA1", {})


# ---- stacking hosts read by their answers ------------------------------------------------------------

@pytest.fixture(scope="module")
def two_layouts(tmp_path_factory):
    """Hosts read by their answers from two clients of other layouts (two answer shapes)."""
    if not pcpfetch.HAVE_PMAPI:
        pytest.skip("PCP's Python bindings are not importable")
    from kit.jobscenarios import SCENARIOS
    from kit.privpmcd import PrivatePmcd
    from lustre_sim import SimClient

    tmp = tmp_path_factory.mktemp("layouts")
    hosts = {}
    for name, fss, scenario in (("a", [("scratch", 8, 1), ("home", 2, 1)], "plain"),
                                ("b", [("scratch", 5, 1)], "osc stats cleared")):
        client = SimClient.create(tmp / f"t{name}", version="2.15.4", filesystems=fss, seed=11)
        with PrivatePmcd(tmp / f"p{name}", client.root) as pmcd:
            store_begin(pmcd, JOB)
            SCENARIOS[scenario](client)
            job = pcpfetch.JobCatalogs(JOB)
            hosts[name] = [pcpfetch.fetch_pmapi(f"{name}{i}", pmcd.spec, job=job) for i in range(3)]
    assert all(h.answer is not None for hs in hosts.values() for h in hs)
    return hosts["a"] + hosts["b"]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_hosts_stacked_by_their_answers_are_the_hosts_stacked_by_their_columns(two_layouts, data):
    """Any order of hosts of two answer shapes, some with their columns made first (as a host
    read metric by metric has them) and a host not read among them: the stacked tables are
    those of every host's columns stacked one by one."""
    from lustre_jobreport.acquire import hostsnap
    from lustre_jobreport.acquire.snapfile import Snapshot

    order = data.draw(st.permutations(two_layouts))
    made = data.draw(st.lists(st.booleans(), min_size=len(order), max_size=len(order)))
    failed = hostsnap.failed("down", "down", hostsnap.no_agent())
    at = data.draw(st.integers(0, len(order)))
    mixed = [pcpfetch.materialized(h) if m else h for h, m in zip(order, made)]
    columns = [pcpfetch.materialized(h) for h in order]
    mixed.insert(at, failed)
    columns.insert(at, failed)
    assert as_tables(Snapshot.from_hosts(0.0, mixed)) == as_tables(Snapshot.from_hosts(0.0, columns))
    assert all(h.answer is not None for h in two_layouts)      # not consumed: the fixture's hosts are kept
