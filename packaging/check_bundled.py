"""Refuse a bundled directory holding anything but the libraries of a pin file, at its versions:
a library that is not pinned (a dependency pulled in) would change under us.

    python3 packaging/check_bundled.py PINS DIR
"""

from __future__ import annotations

import re
import sys
from pathlib import Path


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def main(pin_file: str, lib: str) -> int:
    pins = {norm(line.split("==")[0]): line.split("==")[1].strip()
            for line in open(pin_file) if "==" in line and not line.startswith("#")}
    wanted = set(pins)
    found = set()
    for info in Path(lib).glob("*.dist-info"):
        name, version = info.name[:-len(".dist-info")].rsplit("-", 1)
        name = norm(name)
        if name not in wanted or pins.get(name) != version:
            print(f"check_bundled: {name} {version} is not a pinned library meant to be bundled", file=sys.stderr)
            return 1
        found.add(name)
    if found != wanted:
        print(f"check_bundled: missing from {lib}: {', '.join(sorted(wanted - found))}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
