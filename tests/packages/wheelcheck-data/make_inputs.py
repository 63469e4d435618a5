"""Writes the snapshots wheelcheck.py reports on (begin.json, end.json beside this file): the
Enzo job (notes/io-findings.md §1) on two simulated Lustre 2.15.4 clients, each read by the real
pmdalustreclient in a private pmcd, as `lustre-jobreport snapshot` takes them. They name no job
(wheelcheck gives each report its own id), and the begin is dated back by the simulated job
time, so the rates are the job's and no "short job" entry hides the numbers. Run again only
when the snapshot format changes:

    PYTHONPATH=tests .venv/bin/python tests/packages/wheelcheck-data/make_inputs.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from kit.privpmcd import PrivatePmcd
from lustre_jobreport.acquire import snapfile, snapshot
from lustre_sim import SimClient

HERE = Path(__file__).resolve().parent
NODES = ("cn001", "cn002")


def take(pmcds: list[PrivatePmcd]):
    targets = [snapshot.HostTarget(name, p.spec) for name, p in zip(NODES, pmcds)]
    return snapshot.take(targets, connect_timeout_s=2, fetch_timeout_s=10)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        clients = [SimClient.create(work / n / "tree", version="2.15.4",
                                    filesystems=[("scratch", 8, 1), ("home", 4, 1)], seed=i + 1)
                   for i, n in enumerate(NODES)]
        pmcds = [PrivatePmcd(work / n / "pmcd", work / n / "tree") for n in NODES]
        for p in pmcds:
            p.__enter__()
        try:
            begin = take(pmcds)
            elapsed = max(c.run("enzo", fs="scratch")["elapsed_s"] for c in clients)
            end = take(pmcds)
        finally:
            for p in pmcds:
                p.__exit__(None, None, None)
    begin.taken_at = end.taken_at - elapsed
    snapfile.write(begin, HERE / "begin.json")
    snapfile.write(end, HERE / "end.json")


if __name__ == "__main__":
    main()
