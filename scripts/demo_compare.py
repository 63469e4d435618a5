#!/usr/bin/env python3
"""make demo-compare: a Lustre client upgrade caught by `lustre-jobreport compare`, on real PCP.

Two simulated compute nodes (Lustre client trees served by the real pmdalustreclient in private
pmcds) run six applications, 8 jobs each, in October on Lustre 2.15.4 and in November on a
2.15.5 client that carries the read-ahead regression of NASA's Pleiades study (sequential reads
leave as 8 KiB RPCs). Every job is snapshotted, reported and stored as a job record exactly as
the epilog does; then the admin's two commands run:

    lustre-jobreport records compact ...
    lustre-jobreport compare --baseline until=2026-11-01 --candidate since=2026-11-01 ...

The text is printed; JSON and HTML are written to demo-out/compare/. The system pmcd is never
touched (private pmcds on their own ports, stopped by PID).
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))                # the tests' kit
from kit.fleet import APPS, BASELINE_MONTH, CANDIDATE_MONTH, IMAGE, SPLIT, Client, Fleet  # noqa: E402

BIN = Path(sys.executable).parent
OUT = REPO / "demo-out" / "compare"


def step(msg: str) -> None:
    print(f"==> {msg}", flush=True)


def jobreport(*args: str) -> None:
    cmd = [str(BIN / "lustre-jobreport"), "--config", str(OUT / "config.toml"), *args]
    print("$ lustre-jobreport " + " ".join(a if " " not in a else repr(a) for a in args), flush=True)
    subprocess.run(cmd, check=True)


def main() -> int:
    started = time.monotonic()
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    (OUT / "config.toml").write_text("")        # the built-in defaults, whatever /etc has
    records, dataset = OUT / "records", OUT / "dataset"
    records.mkdir()
    fleet = Fleet(OUT / "nodes", records)
    apps = ", ".join(a.name for a in APPS)
    step(f"October: 2 nodes on Lustre 2.15.4, 8 jobs each of {apps}")
    fleet.side(Client("2.15.4", (), IMAGE), BASELINE_MONTH, APPS, 8, random.Random(1))
    step("records compact (the nightly timer's job)")
    jobreport("records", "compact", "--records", str(records), "--dataset", str(dataset))
    step("November: the nodes upgraded to 2.15.5, a client with the Pleiades read-ahead regression")
    fleet.side(Client("2.15.5", ("ra-8k-rpcs",), IMAGE), CANDIDATE_MONTH, APPS, 8, random.Random(2))
    step("compare (the dataset and the November records not compacted yet)")
    sides = ["--baseline", f"until={SPLIT}", "--candidate", f"since={SPLIT}",
             "--records", str(records), "--dataset", str(dataset)]
    jobreport("compare", *sides)
    for fmt in ("json", "html"):
        subprocess.run([str(BIN / "lustre-jobreport"), "--config", str(OUT / "config.toml"), "compare",
                        *sides, "--format", fmt, "-o", str(OUT / f"compare.{fmt}")], check=True)
    shutil.rmtree(OUT / "nodes", ignore_errors=True)
    step(f"JSON and HTML in {OUT.relative_to(REPO)}/ ({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
