"""Hand-made answers of the agents' job view (tests/report/test_jobview_codes.py,
tests/report/test_trust.py): a host's job view of job JOB on three OSTs of scratch, with the
deltas and left-out codes a test gives, and jobview.delta over such hosts."""

from __future__ import annotations

from lustre_jobreport import catalog
from lustre_jobreport.report import jobview
from lustre_jobreport.catalog import P
from lustre_jobreport.acquire.hostsnap import HostSnapshot
from lustre_jobreport.acquire.column import SINGULAR, Column
from lustre_jobreport.acquire.snapfile import Snapshot

JOB = "77"
OSTS = ["scratch-OST0000", "scratch-OST0001", "scratch-OST0002"]


def host(name: str, *, osc_read: dict[str, int], left_out: dict[str, dict[str, int]] | None = None,
         llite_read: dict[str, int] | None = None) -> HostSnapshot:
    h = HostSnapshot(name, name, ok=True, fetched_at=1000.0)

    def put(metric: str, values: dict, sem: str = "counter") -> None:
        h.metrics[metric] = Column.from_dict(values)
        h.sems[metric] = sem

    put(P + "version", {SINGULAR: "2.15.4"}, "discrete")
    put(P + "llite.mount_id", {"scratch": "scratch-ffff0001", "home": "home-ffff0002"}, "discrete")
    put(P + "osc.device", {o: o + "-osc-ffff0001" for o in OSTS}, "discrete")
    put(catalog.JOB_BEGIN_TIME, {JOB: 400 * catalog.START_UNIT_US}, "discrete")
    put(catalog.job_view_name(P + "llite.read_bytes"), llite_read if llite_read is not None else {"scratch": 10, "home": 0})
    if osc_read:
        put(catalog.job_view_name(P + "osc.read_bytes"), osc_read)
    for key, codes in (left_out or {}).items():
        js = next(j for j in catalog.JOB_SOURCES if j.key == key)
        put(catalog.job_left_out_name(js), codes, "instant")
    return h


def delta(*hosts: HostSnapshot):
    return jobview.delta(Snapshot.from_hosts(1000.0, list(hosts)), JOB)

