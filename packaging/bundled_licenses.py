"""The copyright paragraphs of the Python packages bundled in lustre-jobreport's private
directory, from each one's own metadata (its license expression or field, its classifiers and
the license files it ships, which stay installed beside it).

    python3 packaging/bundled_licenses.py STAGED_DIR INSTALLED_DIR
"""

from __future__ import annotations

import sys
from email.parser import HeaderParser
from pathlib import Path


def license_of(meta) -> str:
    expr = meta.get("License-Expression")
    if expr:
        return expr.strip()
    field = (meta.get("License") or "").strip()
    if field and "\n" not in field and len(field) < 80:
        return field
    classifiers = [c.split("::")[-1].strip() for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]
    return " and ".join(classifiers) or "see its license files"


def main(staged: str, installed: str) -> None:
    for info in sorted(Path(staged).glob("*.dist-info"), key=lambda p: p.name.lower()):
        meta = HeaderParser().parsestr((info / "METADATA").read_text(encoding="utf-8", errors="replace"))
        files = sorted(p.relative_to(staged) for p in info.rglob("*")
                       if p.is_file() and any(k in p.name.upper() for k in ("LICENSE", "LICENCE", "COPYING", "NOTICE")))
        print(f"\nFiles: {installed}/{info.name}/*")
        print(f"Comment: the bundled Python package {meta['Name']} {meta['Version']}, its modules beside it")
        print(f"License: {license_of(meta)}")
        for f in files:
            print(f" {installed}/{f}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
