"""The pmrep views an admin reads the agent with (packaging/pcp/pmrep/lustreclient.conf, installed
as /etc/pcp/pmrep/lustreclient.conf; issue 12): the real pmrep against a private pmcd running the
real agent on a sim client, while the sim runs a job between pmrep's two samples.

The numbers are checked against the agent's own counters read before and after (pminfo), not
against the clock: pmrep's rates share one interval, so a ratio of two rates is the ratio of the
two counters' deltas, and the per-OST RPC size and wait are deltas over deltas.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from lustre_sim import SimClient
from kit import pcpkit
from kit.privpmcd import PrivatePmcd

VIEWS = Path(__file__).resolve().parents[2] / "packaging" / "pcp" / "pmrep" / "lustreclient.conf"
ENV = pcpkit.ENV
TIME = re.compile(r"^\d\d:\d\d:\d\d\s")


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pmrep")
    client = SimClient.create(tmp / "tree", version="2.15.4", filesystems=[("scratch", 4, 1), ("home", 2, 1)],
                              seed=9)
    with PrivatePmcd(tmp / "pmcd", tmp / "tree") as pmcd:
        yield client, pmcd


def values(pmcd: PrivatePmcd, metric: str) -> dict[str, float]:
    out = subprocess.run(["pminfo", "-h", pmcd.spec, "-f", metric], capture_output=True, text=True,
                         timeout=30, env=ENV).stdout
    return {m.group(1): float(m.group(2)) for m in re.finditer(r'inst \[\d+ or "([^"]+)"\] value (\S+)', out)}


def view(pmcd: PrivatePmcd, name: str, during=None) -> tuple[list[str], dict[str, list[str]]]:
    """pmrep :name over two samples 3 s apart, `during` run between them (once pmrep has printed
    its first sample): the column labels and, per row (instance), the second sample's values."""
    proc = subprocess.Popen(["stdbuf", "-oL", "pmrep", "-c", str(VIEWS), "-h", pmcd.spec, "-t", "3", "-s", "2",
                             ":" + name], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    first: list[str] = []
    while len(first) < 500 and not (first and TIME.match(first[-1])):
        first.append(proc.stdout.readline())
        if not first[-1]:
            break                              # pmrep ended: its errors say why below
    if during:
        during()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    lines = [line for line in "".join(first + [out]).splitlines() if line.strip()]
    header = next(line for line in lines if not TIME.match(line)).split()
    rows = [line.split() for line in lines if TIME.match(line)]
    stamps = sorted({r[0] for r in rows})
    assert len(stamps) == 2, out
    return header, {r[1]: r[2:] for r in rows if r[0] == stamps[-1]}


def test_rpc_sizes_per_filesystem_are_the_agents_histogram_as_rates(node):
    client, pmcd = node
    before = values(pmcd, "lustreclient.fs.rpc.read")
    header, rows = view(pmcd, "lustre-rpc", lambda: client.run("enzo", fs="scratch"))
    after = values(pmcd, "lustreclient.fs.rpc.read")
    assert header[-2:] == ["read/s", "write/s"]
    grew = {k: after[k] - before[k] for k in after}
    assert set(rows) == set(after)                       # every bucket of every filesystem, a row each
    assert all(float(rows[k][0]) == 0 for k in rows if k.startswith("home:"))
    big, small = float(rows["scratch:1M"][0]), float(rows["scratch:4K"][0])
    assert big > 0 and small > 0
    assert big / small == pytest.approx(grew["scratch:1M"] / grew["scratch:4K"], rel=0.01)


def test_metadata_rates_per_filesystem(node):
    client, pmcd = node
    before = {op: values(pmcd, f"lustreclient.llite.{op}") for op in ("open", "getattr")}
    header, rows = view(pmcd, "lustre-md", lambda: client.run("overflow", fs="scratch"))
    after = {op: values(pmcd, f"lustreclient.llite.{op}") for op in ("open", "getattr")}
    assert header[1:4] == ["open/s", "close/s", "getattr/s"] and set(rows) == {"scratch", "home"}
    opens, getattrs = (after[op]["scratch"] - before[op]["scratch"] for op in ("open", "getattr"))
    assert opens > 0 and float(rows["scratch"][0]) > 0 and float(rows["home"][0]) == 0
    assert float(rows["scratch"][2]) / float(rows["scratch"][0]) == pytest.approx(getattrs / opens, rel=0.02)


def test_per_ost_bytes_rpc_size_and_wait_are_deltas_over_deltas(node):
    client, pmcd = node
    names = ("read_bytes", "write_bytes", "read_rpcs", "write_rpcs", "req_waittime", "req_count")
    before = {n: values(pmcd, f"lustreclient.osc.{n}") for n in names}
    header, rows = view(pmcd, "lustre-ost", lambda: client.run("overflow", fs="scratch"))
    after = {n: values(pmcd, f"lustreclient.osc.{n}") for n in names}
    assert header[1:] == ["rKB/s", "wKB/s", "rRPC/s", "wRPC/s", "KB/RPC", "wait_us"]
    ost = max(after["write_bytes"], key=lambda o: after["write_bytes"][o] - before["write_bytes"][o])
    d = {n: after[n][ost] - before[n][ost] for n in names}
    kb_per_rpc, wait_us = float(rows[ost][4]), float(rows[ost][5])
    assert kb_per_rpc == pytest.approx((d["read_bytes"] + d["write_bytes"]) / 1024 / (d["read_rpcs"] + d["write_rpcs"]),
                                       abs=0.06)
    assert wait_us == pytest.approx(d["req_waittime"] / d["req_count"], abs=0.06)


def test_health_names_a_target_that_is_not_connected(node):
    client, pmcd = node
    header, rows = view(pmcd, "lustre-health", lambda: client.fault("evict", fs="home", target="OST0001", hold=1))
    assert header[1:] == ["ost_state", "ost_reconn", "mdt_state", "mdt_reconn"]
    assert rows["scratch-OST0000"][0] == "FULL" and rows["scratch-MDT0000"][2] == "FULL"
    assert rows["home-OST0001"][0] not in ("FULL", "~")
    client.fault("reconnect", fs="home", target="OST0001")
    header, rows = view(pmcd, "lustre-health")
    assert rows["home-OST0001"][0] == "FULL"
