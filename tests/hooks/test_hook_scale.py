"""A job larger than the hooks' bounds allow (issue 11): the prolog spools the hosts it could
read in its bound and names the rest; the epilog reads only those again and reports their
numbers, exactly, with the hosts not read named in one "Not trusted" line and in the record.

2,000 node names of one job (read the central way: the job view's is test_hook_jobview) all lead
to one private pmcd running the real agent on a sim tree of 100 OSTs: one pmcd answers far fewer than 2,000 fetches in the prolog's 3 s, whatever the
machine, so the job is always too large for its bound here.
"""

from __future__ import annotations

import re

import pytest

from kit.hookkit import Rig
from lustre_jobreport.records import store as records
from lustre_jobreport.acquire import snapfile

NODES = 2000
SLACK = 0.75    # process start/exit around the wrapper's own bound, on a busy CI machine


@pytest.fixture(scope="module")
def wide_node(tmp_path_factory):
    from lustre_sim import SimClient
    from kit.privpmcd import PrivatePmcd

    tmp = tmp_path_factory.mktemp("widenode")
    client = SimClient.create(tmp / "tree", version="2.15.4", filesystems=[("scratch", 100, 1)], seed=11)
    with PrivatePmcd(tmp / "pmcd", tmp / "tree") as pmcd:
        yield client, pmcd


def test_a_job_too_large_for_the_bounds_reports_what_was_read_and_names_the_rest(wdir, job_user, wide_node):
    client, pmcd = wide_node
    names = [f"n{i:04d}" for i in range(NODES)]
    rig = Rig(wdir, job_user, {n: pmcd.spec for n in names}, prolog_timeout_s=3.0, epilog_timeout_s=12.0,
              hooks_extra="prolog_cli_max_hosts = 0\njob_view_from_nodes = 0", snapshot="parallel = 16")
    job = dict(nodelist=f"n[0000-{NODES - 1}]", node="n0000")

    rc, took, out, err = rig.prolog(**job)
    assert (rc, out, err) == (0, "", "") and took < 3 + SLACK, rig.log_lines()
    assert rig.begin.exists(), rig.log_lines()
    begin = snapfile.read(rig.begin)       # spooled, though the bound was reached
    read = [h for h, s in begin.hosts.items() if s.ok]
    assert len(begin.hosts) == NODES and 0 < len(read) < NODES
    not_read = NODES - len(read)
    [line] = rig.errors()                  # one line, whatever the number of hosts
    assert re.search(rf"{not_read} of {NODES} hosts not read at job start: {not_read:,} hosts \(n\d{{4}}, "
                     rf"n\d{{4}}, n\d{{4}}, n\d{{4}} and {not_read - 4:,} more\): not reached: the "
                     rf"snapshot stopped after [\d.]+ s to keep its time bound$", line), line

    ran = client.run("overflow", fs="scratch")

    rc, took, out, err = rig.epilog(**job)
    assert (rc, out, err) == (0, "", "") and took < 12 + SLACK, rig.log_lines()
    [rec_path] = rig.record_files()
    doc = records.load(rec_path)
    hosts, missing = doc["job"]["hosts"], doc["job"]["hosts_missing"]
    assert set(hosts) <= set(read) and len(hosts) + len(missing) == NODES
    # every host read at both ends is the same client: the totals are exactly that many runs
    fs = doc["filesystems"]["scratch"]
    assert (fs["read_bytes"], fs["write_bytes"]) == (len(hosts) * ran["read_bytes"], len(hosts) * ran["write_bytes"])
    # the hosts not read at start are one entry (not 1,000), named by count and reason
    [start] = [q for q in doc["data_quality"] if q["id"] == "HOST_UNREACHABLE" and "at job start" in q["detail"]]
    assert start["host"] is None and start["detail"].startswith(f"{not_read:,} hosts could not be read at job start: "
                                                                "not reached: the snapshot stopped after ")
    text = rig.out.read_text()
    assert f"{len(hosts)} hosts | {len(missing)} unreachable" in text
    assert len([t for t in text.splitlines() if t.startswith(" ! ")]) <= 3, text
    assert f"{not_read:,} hosts could not be read at job start" in text
