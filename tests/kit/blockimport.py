"""Run the real CLI as on a node where some libraries are not installed: a directory first on
PYTHONPATH holds a package of each blocked name whose import raises ImportError, as a missing
package does (ModuleNotFoundError is an ImportError), and notes that it was tried in the
directory's file `attempted` (attempted_imports), so that a test can tell a library never
asked for from one asked for and done without."""

from __future__ import annotations

import os
from pathlib import Path

SHADOW = "blocked-imports"


def env_without(tmp: Path, *names: str) -> dict:
    """os.environ with the given top-level packages made unimportable."""
    shadow = tmp / SHADOW
    for name in names:
        (shadow / name).mkdir(parents=True, exist_ok=True)
        (shadow / name / "__init__.py").write_text(
            f"with open({str(shadow / 'attempted')!r}, 'a') as f:\n"
            f"    f.write({name!r} + '\\n')\n"
            f"raise ModuleNotFoundError(\"No module named '{name}' (blocked by the test)\", name={name!r})\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(shadow), env.get("PYTHONPATH")) if p)
    return env


def attempted_imports(tmp: Path) -> list[str]:
    """The blocked packages something tried to import, in order, once per try."""
    path = tmp / SHADOW / "attempted"
    return path.read_text().split() if path.exists() else []
