#!/usr/bin/env python3
"""make demo: the whole path on one simulated node, end to end, on real PCP.

simulated Lustre 2.15 client tree -> pmdalustreclient in a private pmcd -> begin snapshot ->
the Enzo job runs -> end snapshot -> report (text printed; JSON and HTML written beside it).
The system pmcd is never touched: the private pmcd has its own port and is stopped by PID.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from kit.privpmcd import PrivatePmcd  # noqa: E402

BIN = Path(sys.executable).parent
OUT = REPO / "demo-out"


def step(msg: str) -> None:
    print(f"==> {msg}", flush=True)


def run(*cmd: str) -> None:
    subprocess.run([str(c) for c in cmd], check=True)


def main() -> int:
    started = time.monotonic()
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir()
    tree = OUT / "tree"
    step(f"simulated Lustre 2.15.4 client in {tree.relative_to(REPO)} (scratch: 8 OSTs, home: 4 OSTs)")
    run(BIN / "lustre-sim", "create", tree, "--version", "2.15.4", "--fs", "scratch:8:1", "--fs", "home:4:1")
    with PrivatePmcd(OUT / "pmcd", tree) as pmcd:
        host = f"demo-node={pmcd.spec}"
        step(f"private pmcd on port {pmcd.port} (pid {pmcd.proc.pid}) running pmdalustreclient -r {tree.name}")
        step("job start: lustre-jobreport snapshot")
        run(BIN / "lustre-jobreport", "snapshot", "--host", host, "--job-id", "demo", "-o", OUT / "begin.json")
        step("the job: Enzo (NASA Pleiades study, io-findings §1) on scratch")
        run(BIN / "lustre-sim", "run", tree, "enzo", "--fs", "scratch")
        step("job end: lustre-jobreport snapshot")
        run(BIN / "lustre-jobreport", "snapshot", "--host", host, "--job-id", "demo", "-o", OUT / "end.json")
    for fmt in ("json", "html"):
        run(BIN / "lustre-jobreport", "report", OUT / "begin.json", OUT / "end.json",
            "--user", "enzo", "--format", fmt, "-o", OUT / f"report.{fmt}")
    step(f"report (JSON and HTML in {OUT.relative_to(REPO)}/report.json, report.html); "
         f"{time.monotonic() - started:.1f} s\n")
    run(BIN / "lustre-jobreport", "report", OUT / "begin.json", OUT / "end.json", "--user", "enzo")
    return 0


if __name__ == "__main__":
    sys.exit(main())
