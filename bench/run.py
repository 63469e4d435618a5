#!/usr/bin/env python3
"""make bench: run every bench/bench_*.py in turn and print their figures.

Each benchmark measures its subject and a floor or peer in the same run and prints ratios, so
the figures mean the same on any machine, and says which goals it met. A benchmark that
crashes is reported and the others still run; the exit code says whether all of them ran
(a missed goal is a figure, not a crash).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    chosen = set(argv[1:])
    scripts = sorted(p for p in HERE.glob("bench_*.py") if not chosen or p.stem in chosen)
    failed = []
    for script in scripts:
        print(f"=== {script.stem}", flush=True)
        started = time.monotonic()
        rc = subprocess.run([sys.executable, str(script)]).returncode
        print(f"--- {script.stem}: {'ok' if rc == 0 else f'FAILED (exit {rc})'} "
              f"in {time.monotonic() - started:.1f} s\n", flush=True)
        if rc:
            failed.append(script.stem)
    if not scripts:
        print("no benchmarks found")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
