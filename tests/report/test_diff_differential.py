"""The diff rules' two implementations against each other, on the same random jobs: the
reporter's diff.py (two snapshots of every host) and the agent's jobdiff.c (each host's agent
keeps the job's begin values and serves its deltas: the job view).

Each case (diffcases: Lustre 1.8 to 2.17, 1 to 16 hosts, clears, remounts, devices added, gone
or replaced, files unreadable, values missing, huge values ...) gives a begin and an end
snapshot. diff.py takes them whole. The C rules take them host by host, as each agent sees its
own host (agentdiff: the host's two fetches made into the agent's records as jobs.c's build()
makes them, then lc_job_diff and lc_job_answer, the agent's own code); what every agent serves
goes through jobview.delta, as the end of a job read through the job view does. They must agree
exactly on:

- per host, metric and instance, whether each value counts and its delta (lc_job_diff's own
  output, before anything is served);
- per host, stats file and device, what is left out and why (JobDelta.left_out);
- through jobview.delta: the same, the data_quality entries (id, host, filesystem), the hosts,
  the hosts not read, and the filesystems each host has values left out of;
- through the report (report.from_delta): totals, histograms, per-OST and per-host numbers,
  flags, clients.

Where the two differ by design, and nowhere else:
- the agent sends no OSC or MDC delta of 0 (docs/design.md §2.4): per host, metric and
  instance, their zeros are not compared through jobview.delta (whether the device's file was
  left out is, by its reason); the report must still show them as zeros. (The agent gives every
  counter of an OSC's or MDC's file once it read it, so a zero is never a value missing;
  diffcases models that.)
- a delta of 2^63 or more is the reporter's to leave out (TOO_LARGE), after the rules: the
  agent counts it and jobview.delta leaves it out, as diff.py does;
- the agent sends nothing it did not count, so a counter no host counted (a bucket of a
  histogram, an operation beyond the six always shown) is not in the job view's report, where
  the two snapshots list it with 0;
- the job view's begin time is the one the agents kept: with no host read, there is none;
- the words each way leaves out with, and a host not read (HOST_UNREACHABLE, whose grouping
  follows the words): compared by name, job.hosts and job.hosts_missing.

tests/report/test_jobview.py runs a few scenarios through the real agent in a private pmcd on
a simulated client end to end (build() from the Lustre files, pmcd, pcpfetch's decoding); this
test runs thousands of cases through what lies between: the rules and what a slot serves.
`make test` runs the cases this test states (tests/kit/proptest.py), `make fuzz` FUZZ_FACTOR times as many.
"""

from __future__ import annotations

import numpy as np
from hypothesis import event, example, given

from kit import agentdiff
from kit import diffcases as dc
from kit.proptest import runs
from kit.diffcases import Event, Layout, make_case
from lustre_jobreport import catalog, config
from lustre_jobreport.report import jobview, document as report
from lustre_jobreport.catalog import P, Reason
from lustre_jobreport.report.diff import JobDelta, device_of, diff

JOB = "4242"
CFG = config.Config()
SPARSE = {m.name for m in catalog.with_role(*catalog.SUMMED) if m.indom in (catalog.OSC, catalog.MDC)}
SOURCE_OF = {m.name: m.source.name for m in catalog.with_role(*catalog.SUMMED)}
TOO_LARGE = 1 << 63


def counted_values(d: JobDelta) -> dict[str, dict[tuple[str, str], int]]:
    """host -> (metric, instance) -> delta of every value the JobDelta counts there."""
    out: dict[str, dict[tuple[str, str], int]] = {h: {} for h in d.hosts}
    for metric, t in d.tables.items():
        for r, c in zip(*np.nonzero(t.counted)):
            out[d.hosts[r]][(metric, t.instances[c])] = int(t.delta[r, c])
    return out


def reasons_on(d: JobDelta, host: str) -> dict[tuple[str, str], Reason]:
    return {(source, device): reason for (h, source, device), reason in d.reasons().items() if h == host}


def the_rules_agree(central: JobDelta, outcomes: dict[str, agentdiff.Outcome]) -> None:
    """Per host, lc_job_diff's own output against diff.py's, value by value, device by device."""
    assert sorted(outcomes) == sorted(central.hosts)
    want_counted = counted_values(central)
    for host, got in outcomes.items():
        want = reasons_on(central, host)
        too_large = {k for k, r in want.items() if r == Reason.TOO_LARGE}
        assert {k: Reason(r) for k, r in got.reasons.items()} == {
            k: r for k, r in want.items() if r != Reason.TOO_LARGE}, host
        # a file the reporter leaves out as TOO_LARGE the agent counts, one delta of it past 2^63
        for source, device in too_large:
            assert any(v >= TOO_LARGE for (m, i), v in got.counted.items()
                       if SOURCE_OF[m] == source and device_of(i) == device), (host, source, device)
        counted = {k: v for k, v in got.counted.items() if (SOURCE_OF[k[0]], device_of(k[1])) not in too_large}
        assert counted == want_counted[host], host


def sent(values: dict[tuple[str, str], int]) -> dict[tuple[str, str], int]:
    """What the agent sends of counted values: all but OSC and MDC zeros."""
    return {k: v for k, v in values.items() if v or k[0] not in SPARSE}


def issues(d: JobDelta) -> list[tuple[str, str, str]]:
    """data_quality entries by (id, host, fs), but the hosts not read (compared by name)."""
    return sorted((q.id, q.host or "", q.fs or "") for q in d.issues if q.id != "HOST_UNREACHABLE")


def the_job_views_agree(central: JobDelta, via_agent: JobDelta) -> None:
    assert (via_agent.hosts, via_agent.hosts_missing) == (central.hosts, central.hosts_missing)
    assert via_agent.reasons() == central.reasons()
    got, want = counted_values(via_agent), counted_values(central)
    for host in central.hosts:
        assert sent(got[host]) == sent(want[host]), host
    assert issues(via_agent) == issues(central)
    assert via_agent.incomplete == central.incomplete


def comparable(doc: dict, counted: set[tuple[str, str]]) -> dict:
    """What both reports must show alike: every figure, flag and entry, but the histogram
    buckets and the operations (beyond the six always shown) no host counted, the begin time of
    a job no host was read of, and the hosts not read (job.hosts_missing names them)."""
    metrics = {m for m, _ in counted}
    filesystems = {}
    for fs, t in doc["filesystems"].items():
        rpc = {way: by_label and {label: n for label, n in by_label.items()
                                  if (P + f"fs.rpc.{way}", f"{fs}:{label}") in counted}
               for way, by_label in t["rpc"].items()}
        ops = {op: n for op, n in t["ops"].items() if op in catalog.SHOWN_OPS or P + f"llite.{op}" in metrics}
        filesystems[fs] = {**t, "rpc": rpc, "ops": ops}
    job = dict(doc["job"])
    if not job["hosts"]:
        del job["begin"], job["elapsed_s"]
    return {"filesystems": filesystems, "flags": doc["flags"],
            "untrusted": sorted((q["id"], q["host"] or "", q["fs"] or "") for q in doc["data_quality"]
                                if q["id"] != "HOST_UNREACHABLE"),
            "job": job, "clients": doc["clients"], "versions": doc["lustre_versions"]}


def the_reports_agree(central: JobDelta, via_agent: JobDelta) -> None:
    counted = {(m, t.instances[c]) for m, t in central.tables.items() for c in np.flatnonzero(t.counted.any(axis=0))}
    want = report.from_delta(central, CFG, job_id=JOB, user="u")
    got = report.from_delta(via_agent, CFG, job_id=JOB, user="u")
    assert comparable(got, counted) == comparable(want, counted)


def check(case: dc.Case) -> JobDelta:
    begin, end = dc.snapshots(case)
    central = diff(begin, end)
    viewed, outcomes = agentdiff.job_view(begin, end, JOB)
    via_agent = jobview.delta(viewed, JOB)
    the_rules_agree(central, outcomes)
    the_job_views_agree(central, via_agent)
    the_reports_agree(central, via_agent)
    return central


# what the test found, kept: each was a number one way had and the other not, or a reason
ONE_OST = [("scratch", 1, 1)]
FOUND = {
    # the agent: an OSC's osc stats not read at the begin, the OSC gone at the end: left out unsaid
    "gone, unread at the begin": make_case(Layout("2.10.8", 4096), [("scratch", 2, 1)], 1, (
        Event("unreadable", file=2, end=0), Event("gone", device=0)), 0),
    # the agent: an OSC new during the job, its osc stats unreadable at the end: left out unsaid
    "new, unread at the end": make_case(Layout("2.10.8", 4096), [("scratch", 2, 1)], 1, (
        Event("added", device=0), Event("unreadable", file=2, end=1)), 0),
    # the agent: the histogram, summed over an OSC gone during the job, was counted short
    "histogram of a gone OSC": make_case(Layout("1.8.9", 4096), ONE_OST, 1, (Event("gone"),), 0),
    # the agent: the histogram, summed over an OSC replaced during the job, was counted short
    "histogram of a replaced OSC": make_case(Layout("2.10.8", 4096), [("scratch", 2, 1)], 1, (
        Event("replaced", device=1, climb="all"),), 0),
    # both: files this Lustre does not have (1.8: no import files) said left out of a remount
    "remount of a 1.8 client": make_case(Layout("1.8.9", 4096), ONE_OST, 1, (Event("remount"),), 0),
    # the job view's report: an OSC whose import file was not read at the end has no state, and
    # the OSTs the report showed were those with one: its I/O left the per-OST figures
    "an OSC with no state": make_case(Layout("2.5.3", 4096), ONE_OST, 1, (
        Event("unreadable", file=4, end=1),), 0),
    # the job view's report: one OSC's osc stats cleared, the other's counters that moved
    # nothing were sent as no delta (no table at all): those OST totals said "not read"
    "OSC zeros through the job view": make_case(Layout("1.8.9", 4096), [("scratch", 2, 1)], 1, (
        Event("clear", file=2),), 1),
    # ... an OSC a host does not have (n00 never mounts scratch) is no zero of that host's
    "an OSC of another host": make_case(Layout("1.8.9", 4096), ONE_OST, 2, (
        Event("remount", host=1), Event("unmount"), Event("mount")), 0),
    # the report from snapshots: reconnects of an OSC whose import was read at neither end on n00
    # (nothing to count) and left out on n01 (remounted) said left out on both, as a counter
    # nothing of which counted is taken for one that is not a counter
    "reconnects read nowhere": make_case(Layout("2.5.3", 4096), ONE_OST, 2, (
        Event("unreadable", file=4, end=2), Event("remount", host=1)), 0),
}


@runs(2000)
@given(dc.cases())
@example(FOUND["gone, unread at the begin"])
@example(FOUND["new, unread at the end"])
@example(FOUND["histogram of a gone OSC"])
@example(FOUND["histogram of a replaced OSC"])
@example(FOUND["remount of a 1.8 client"])
@example(FOUND["an OSC with no state"])
@example(FOUND["OSC zeros through the job view"])
@example(FOUND["an OSC of another host"])
@example(FOUND["reconnects read nowhere"])
def test_the_agent_and_the_reporter_diff_alike(case):
    central = check(case)
    for reason in sorted({r.name for r in central.reasons().values()}):
        event(f"left out: {reason}")       # --hypothesis-show-statistics: what the cases covered
