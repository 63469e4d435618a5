"""What the reporter imports is what it declares (reporter/pyproject.toml: the node side's
dependencies and the admin side's `records` extra), and what it declares it imports; each that
the project's venv installs is pinned in requirements.txt, the one place for tested versions, at a
version the declared minimum allows."""

import ast
import re
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

try:
    import tomllib
except ImportError:          # Python < 3.11: the TOML reader the reporter falls back to
    import toml as tomllib

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "reporter" / "lustre_jobreport"
# import name -> distribution name, where they differ
DISTRIBUTION = {"hostlist": "python-hostlist", "jinja2": "Jinja2"}
# PCP's bindings come from the distribution (python3-pcp), not from pip, and are optional
SYSTEM = {"pcp", "cpmapi"}
# the standard library's modules that older Pythons lack (imported where they exist)
NEWER_STDLIB = {"tomllib"}


def third_party_imports() -> set:
    found = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if (top not in sys.stdlib_module_names and top not in NEWER_STDLIB
                        and top != "lustre_jobreport" and top not in SYSTEM):
                    found.add(DISTRIBUTION.get(top, top))
    return found


def requirements() -> list:
    project = tomllib.loads((REPO / "reporter" / "pyproject.toml").read_text())["project"]
    extras = project.get("optional-dependencies", {})
    return [Requirement(r) for r in project["dependencies"] + [r for group in extras.values() for r in group]]


def pins() -> dict:
    lines = (REPO / "requirements.txt").read_text().splitlines()
    return {name.strip().lower(): version.strip() for name, _, version in
            (re.split(r"(==)", line, 1) for line in lines if line.strip() and not line.startswith("#"))}


@pytest.mark.skipif(sys.version_info < (3, 10), reason="reads sys.stdlib_module_names (3.10+); the "
                    "source tree's imports are the same whichever Python reads them")
def test_imports_and_declared_dependencies_agree():
    assert third_party_imports() == {r.name for r in requirements()}


@pytest.mark.skipif(Path(sys.prefix).resolve() != (REPO / ".venv").resolve(),
                    reason="requirements.txt pins the project's venv (`make venv`), not this Python's libraries")
def test_every_dependency_the_venv_installs_is_pinned_within_its_minimum():
    pinned = pins()
    for req in requirements():
        if req.marker is None or req.marker.evaluate():
            assert req.name.lower() in pinned, req
            assert req.specifier.contains(pinned[req.name.lower()]), (req, pinned[req.name.lower()])
