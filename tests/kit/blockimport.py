"""Run the real CLI as on a node where some libraries are not installed: a directory first on
PYTHONPATH holds a package of each blocked name whose import raises ImportError, as a missing
package does (ModuleNotFoundError is an ImportError)."""

from __future__ import annotations

import os
from pathlib import Path


def env_without(tmp: Path, *names: str) -> dict:
    """os.environ with the given top-level packages made unimportable."""
    shadow = tmp / "blocked-imports"
    for name in names:
        (shadow / name).mkdir(parents=True, exist_ok=True)
        (shadow / name / "__init__.py").write_text(
            f"raise ModuleNotFoundError(\"No module named '{name}' (blocked by the test)\", name={name!r})\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(shadow), env.get("PYTHONPATH")) if p)
    return env
