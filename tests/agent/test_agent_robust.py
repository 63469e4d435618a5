"""Robustness of pmdalustreclient on a live simulated client behind a private pmcd.

One agent serves the whole module (as in production: it is never restarted), while files of
its tree vanish, are cut mid-line, are emptied, become symlinks out of the tree, FIFOs, huge
or garbage, and while the client is remounted, gains an OST and has its rpc_stats cleared.
Each damaged file may cost only its own values for that fetch; the agent keeps answering,
reads each file at most once per fetch and only the files the fetched metrics need.
"""

from __future__ import annotations

import os
import re
import threading
import time
from pathlib import Path

import cpmapi as c_api
import pytest
from pcp import pmapi

from lustre_sim import SimClient
from kit.privpmcd import PrivatePmcd

from kit.agentfetch import fetch_all

P = "lustreclient."
DBG, PROC = "sys/kernel/debug/lustre", "proc/fs/lustre"


class Live:
    def __init__(self, tmp: Path):
        self.client = SimClient.create(tmp / "tree", version="2.15.4",
                                       filesystems=[("scratch", 4, 1), ("home", 2, 1)], seed=9)
        self.client.run("ior", fs="scratch", tasks=2, block_size=4 << 20, transfer_size=1 << 20)
        self.root = self.client.root
        self.pmcd = PrivatePmcd(tmp / "pmcd", self.root, extra_agent_args=("-D", "appl0"))
        self.log = tmp / "pmcd" / "lustreclient.log"

    def dev(self, kind: str, fs: str, idx: int = 0) -> str:
        sbi = self.client.mount_id(fs)
        return {"llite": f"llite/{fs}-{sbi}", "osc": f"osc/{fs}-OST{idx:04x}-osc-{sbi}",
                "mdc": f"mdc/{fs}-MDT{idx:04x}-mdc-{sbi}"}[kind]

    def fetch(self, names=None):
        return fetch_all(self.pmcd.spec, names=names)[0]

    def reads_during(self, names):
        """Fetch names; return the files the agent read for it (from its -D appl0 trace)."""
        before = self.log.stat().st_size
        self.fetch(names)
        time.sleep(0.05)
        with open(self.log) as f:
            f.seek(before)
            return re.findall(r" read (\S+) -> ", f.read())


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    lv = Live(tmp_path_factory.mktemp("robust"))
    with lv.pmcd:
        yield lv


def v(got, metric, inst=""):
    return got.get(P + metric, {}).get(inst)


def test_baseline(live):
    got = live.fetch()
    assert v(got, "version") == "2.15.4"
    assert v(got, "llite.read_bytes", "scratch") > 0 and v(got, "osc.read_bytes", "scratch-OST0001") > 0
    assert v(got, "agent.parse_failures") == 0 and v(got, "agent.read_failures") == 0


def test_each_damaged_file_costs_only_its_values(live):
    r = live.root
    # vanished
    os.unlink(r / DBG / live.dev("osc", "scratch", 1) / "stats")
    # cut in the middle of a line (the last number is short)
    p = r / DBG / live.dev("llite", "home") / "stats"
    p.write_text(p.read_text()[:-7])
    # empty
    (r / PROC / live.dev("osc", "scratch", 0) / "rpc_stats").write_text("")
    # a symlink out of the tree (the state file still gives the state)
    imp = r / PROC / live.dev("osc", "scratch", 2) / "import"
    imp.unlink()
    imp.symlink_to("/etc/passwd")
    # a FIFO (must not hang the agent)
    ra = r / DBG / live.dev("llite", "scratch") / "read_ahead_stats"
    ra.unlink()
    os.mkfifo(ra)
    # huge: a real header, then 5 MB of lines
    md = r / PROC / live.dev("mdc", "home") / "md_stats"
    md.write_text(md.read_text() + "x\n" * (5 << 19))
    # garbage
    (r / "sys/kernel/debug/lnet/stats").write_text("\x00\xffgarbage 1 2 3\n")

    t0 = time.monotonic()
    got = live.fetch()
    assert time.monotonic() - t0 < 5
    # each damaged file's own values are gone ...
    assert v(got, "osc.read_bytes", "scratch-OST0001") is None
    assert v(got, "llite.open", "home") is None and v(got, "llite.read_bytes", "home") is None
    assert v(got, "osc.rpc.read", "scratch-OST0000:1M") is None
    assert v(got, "osc.connect_count", "scratch-OST0002") is None
    assert v(got, "osc.state", "scratch-OST0002") == "FULL"
    assert v(got, "llite.readahead.hits", "scratch") is None
    assert v(got, "mdc.close", "home-MDT0000") is None
    assert P + "lnet.send_count" not in got
    # ... the fs histogram is all or nothing (one OSC unreadable: no sum rather than a drop)
    assert v(got, "fs.rpc.read", "scratch:1M") is None and v(got, "fs.rpc.read", "home:4K") is not None
    # ... and everything else is still there
    assert v(got, "osc.read_bytes", "scratch-OST0000") > 0
    assert v(got, "osc.rpc.read", "scratch-OST0001:1M") is not None
    assert v(got, "llite.open", "scratch") > 0 and v(got, "llite.readahead.hits", "home") is not None
    assert v(got, "mdc.close", "scratch-MDT0000") is not None
    assert v(got, "osc.connect_count", "scratch-OST0001") == 1
    assert v(got, "agent.parse_failures") >= 3 and v(got, "agent.read_failures") >= 2
    # the next workload rewrites the tree: everything is back, nothing restarted
    live.client.run("overflow", fs="scratch")
    again = live.fetch()
    assert v(again, "fs.rpc.read", "scratch:1M") > 0 and v(again, "llite.open", "home") > 0
    assert P + "lnet.send_count" in again


def test_reads_only_what_is_asked_once(live):
    # the per-fs histograms and llite ops (pmrep/pmie views): no per-OSC stats file
    files = live.reads_during([P + "fs.rpc.read", P + "fs.rpc.write", P + "llite.open",
                               P + "llite.close", P + "llite.getattr"])
    assert files and len(files) == len(set(files)), files
    assert all(f.endswith("/rpc_stats") and f.startswith("osc/") or
               re.fullmatch(r"llite/[^/]+/stats", f) for f in files), files
    assert len([f for f in files if f.startswith("osc/")]) == 6
    # everything: each file once
    files = live.reads_during(None)
    assert len(files) == len(set(files)), sorted(f for f in files if files.count(f) > 1)
    assert not [f for f in files if "-osc-MDT" in f]


def test_ost_added_at_runtime(live):
    live.client.fault("add-ost", fs="home")
    live.client.run("ior", fs="home", tasks=3, block_size=2 << 20, transfer_size=1 << 20)
    got = live.fetch()
    assert v(got, "osc.state", "home-OST0002") == "FULL"
    assert v(got, "osc.write_rpcs", "home-OST0002") > 0
    assert v(got, "fs.rpc.write", "home:1M") == sum(
        v(got, "osc.rpc.write", f"home-OST000{i}:1M") for i in range(3))


def test_cleared_rpc_stats_read_as_the_new_smaller_values(live):
    before = live.fetch()
    live.client.fault("clear", fs="scratch", what="rpc_stats")
    live.client.run("seqread", fs="scratch")
    after = live.fetch()
    b, a = v(before, "fs.rpc.read", "scratch:1M"), v(after, "fs.rpc.read", "scratch:1M")
    assert b > 0 and a < b
    assert sum(after[P + "fs.rpc.write"][k] for k in after[P + "fs.rpc.write"] if k.startswith("scratch:")) == 0
    # 2.15.2+: the clear shows as a new start time, so a reader sees it without guessing
    assert v(after, "osc.rpc_stats_start", "scratch-OST0000") > v(before, "osc.rpc_stats_start", "scratch-OST0000")
    assert v(after, "osc.stats_start", "scratch-OST0000") == v(before, "osc.stats_start", "scratch-OST0000")


def test_clear_of_llite_stats_moves_stats_start(live):
    """... and its latencies are 0: a 2.14+ file just cleared has no [usec] line left, and the
    agent took it for an older Lustre's, giving them no value (a report then said the cleared
    file twice: cleared, and not read)."""
    names = [P + "llite.stats_start", P + "llite.open", P + "llite.latency.read", P + "llite.latency.open"]
    before = live.fetch(names)
    time.sleep(0.01)
    live.client.fault("clear", fs="home", what="llite")
    after = live.fetch(names)
    assert v(after, "llite.stats_start", "home") > v(before, "llite.stats_start", "home")
    assert v(after, "llite.open", "home") == 0 < v(before, "llite.open", "home")
    assert v(after, "llite.latency.read", "home") == 0 and v(after, "llite.latency.open", "home") == 0


def test_remount_gives_a_new_mount_id(live):
    old = v(live.fetch(), "llite.mount_id", "scratch")
    live.client.fault("remount", fs="scratch")
    got = live.fetch()
    new = v(got, "llite.mount_id", "scratch")
    assert new == live.client.mount_id("scratch") != old
    assert v(got, "llite.open", "scratch") == 0 and v(got, "osc.read_rpcs", "scratch-OST0000") == 0
    assert v(got, "osc.req_count", "scratch-OST0000") == 1          # the mount's own connect
    assert v(got, "osc.write_rpcs", "home-OST0002") > 0                 # home untouched


def test_fetch_budget_answers_in_time(tmp_path):
    """-b: files not read when the budget is used up are skipped for that fetch (no values,
    counted), so pmcd always gets an answer; the next fetch starts afresh."""
    c = SimClient.create(tmp_path / "tree", version="2.15.4", filesystems=[("wide", 300, 1)], seed=2,
                         background=False)
    with PrivatePmcd(tmp_path / "pmcd", c.root, extra_agent_args=("-b", "1")) as pmcd:
        got = fetch_all(pmcd.spec)[0]
        skipped = v(got, "agent.budget_skips")
        have = len(got.get(P + "osc.read_bytes", {}))
        assert skipped > 0 and have < 300, (skipped, have)
        assert v(got, "version") == "2.15.4"          # read first, inside the budget
    with PrivatePmcd(tmp_path / "pmcd0", c.root, extra_agent_args=("-b", "0")) as pmcd:
        got = fetch_all(pmcd.spec)[0]
        assert v(got, "agent.budget_skips") == 0 and len(got[P + "osc.read_bytes"]) == 300


def _trace(log: Path, start: int) -> str:
    time.sleep(0.05)
    with open(log) as f:
        f.seek(start)
        return f.read()


def test_devices_listed_again_only_when_their_directories_change(tmp_path):
    """Listing 2,048 OSC directories at every fetch costs as much as parsing their files; a
    listing is kept while the directories' signatures (link count, times) stay the same."""
    c = SimClient.create(tmp_path / "tree", version="2.15.4", filesystems=[("scratch", 3, 1)], seed=4)
    with PrivatePmcd(tmp_path / "pmcd", c.root, extra_agent_args=("-D", "appl0")) as pmcd:
        log = tmp_path / "pmcd" / "lustreclient.log"
        # a listing taken within 0.1 s of a directory's last change is not trusted (its
        # timestamp is coarse), so the first listing that counts comes after that
        time.sleep(0.15)
        fetch_all(pmcd.spec)
        start = log.stat().st_size
        got = fetch_all(pmcd.spec)[0]
        quiet = _trace(log, start)
        assert " read osc/" in quiet and " list " not in quiet, quiet
        assert len(got[P + "osc.read_bytes"]) == 3
        c.fault("add-ost", fs="scratch")
        start = log.stat().st_size
        got = fetch_all(pmcd.spec)[0]
        assert re.search(r" list osc$", _trace(log, start), re.M)
        assert v(got, "osc.state", "scratch-OST0003") == "FULL"


def test_remount_between_fetches_seen_where_directories_look_the_same(tmp_path):
    """On procfs and debugfs only a directory's link count tells that entries changed, and an
    unmount and mount between two fetches leaves it as it was. The stale device's files are then
    gone: the agent lists again in the same fetch and answers for the new mount, no gap."""
    c = SimClient.create(tmp_path / "tree", version="2.15.4", filesystems=[("scratch", 2, 1)], seed=5)
    c.run("ior", fs="scratch", tasks=2, block_size=4 << 20, transfer_size=1 << 20)
    with PrivatePmcd(tmp_path / "pmcd", c.root, extra_agent_args=("-D", "appl0,appl1")) as pmcd:
        log = tmp_path / "pmcd" / "lustreclient.log"
        before = fetch_all(pmcd.spec)[0]
        assert v(before, "osc.write_rpcs", "scratch-OST0000") > 0
        c.fault("remount", fs="scratch")
        start = log.stat().st_size
        got = fetch_all(pmcd.spec)[0]
        trace = _trace(log, start)
        assert "list llite (a file read before is gone)" in trace, trace
        assert v(got, "llite.mount_id", "scratch") == c.mount_id("scratch") != v(before, "llite.mount_id", "scratch")
        assert v(got, "llite.open", "scratch") == 0 and v(got, "osc.write_rpcs", "scratch-OST0000") == 0
        assert v(got, "osc.req_count", "scratch-OST0000") == 1


def test_files_that_read_as_before_give_what_a_fresh_agent_parses(tmp_path):
    """An OSC file whose text is unchanged but for its clock lines is not parsed again; its
    values must still be exactly what parsing gives, before and after the files change."""
    c = SimClient.create(tmp_path / "tree", version="2.15.4", filesystems=[("scratch", 4, 1)], seed=6)
    osc = lambda got: {k: d for k, d in got.items() if k.startswith(P + "osc.") or k.startswith(P + "fs.")}
    with PrivatePmcd(tmp_path / "long", c.root) as long_lived:
        first = osc(fetch_all(long_lived.spec)[0])
        assert osc(fetch_all(long_lived.spec)[0]) == first            # nothing changed
        c.run("ior", fs="scratch", tasks=2, block_size=4 << 20, transfer_size=1 << 20)
        c.fault("clear", fs="scratch", what="rpc_stats")
        c.run("seqread", fs="scratch")
        later = osc(fetch_all(long_lived.spec)[0])
        with PrivatePmcd(tmp_path / "fresh", c.root) as fresh:
            assert later == osc(fetch_all(fresh.spec)[0])
    assert later != first and v(later, "osc.read_rpcs", "scratch-OST0000") > v(first, "osc.read_rpcs", "scratch-OST0000")



def test_reads_through_a_dotdot_link_survive_renames_elsewhere(tmp_path):
    """Beneath a root other than /, openat2 refuses a path with ".." in it (etc/os-release ->
    ../usr/lib/os-release, osc -> ../osp/...) with EAGAIN whenever a rename anywhere on the
    machine races the lookup; the agent asks again, and no fetch misses the value."""
    c = SimClient.create(tmp_path / "tree", version="2.16.0", filesystems=[("scratch", 2, 1)], seed=1)
    stop = threading.Event()

    def rename_all_the_time() -> None:
        a, b = tmp_path / "a", tmp_path / "b"
        a.write_text("x")
        while not stop.is_set():
            os.rename(a, b)
            os.rename(b, a)

    with PrivatePmcd(tmp_path / "pmcd", c.root) as pmcd:
        ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, pmcd.spec)
        pmid = ctx.pmLookupName(["lustreclient.os"])
        renamer = threading.Thread(target=rename_all_the_time)
        renamer.start()
        try:
            missing = 0
            for _ in range(300):
                result = ctx.pmFetch(pmid)
                missing += result.contents.get_numval(0) != 1
                ctx.pmFreeResult(result)
        finally:
            stop.set()
            renamer.join()
        log = (tmp_path / "pmcd" / "lustreclient.log").read_text()
    assert missing == 0 and "Resource temporarily unavailable" not in log
