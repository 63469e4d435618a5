"""What the reporter imports is what it declares (reporter/pyproject.toml), and what it declares
it imports; each is pinned in requirements.txt, the one place for versions."""

import ast
import re
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "reporter" / "lustre_jobreport"
# import name -> distribution name, where they differ
DISTRIBUTION = {"hostlist": "python-hostlist", "jinja2": "Jinja2"}
# PCP's bindings come from Debian (python3-pcp), not from pip, and are optional
SYSTEM = {"pcp", "cpmapi"}


def third_party_imports() -> set[str]:
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
                if top not in sys.stdlib_module_names and top != "lustre_jobreport" and top not in SYSTEM:
                    found.add(DISTRIBUTION.get(top, top))
    return found


def declared() -> set[str]:
    project = tomllib.loads((REPO / "reporter" / "pyproject.toml").read_text())["project"]
    return set(project["dependencies"])


def test_imports_and_declared_dependencies_agree():
    assert third_party_imports() == declared()


def test_every_dependency_is_pinned_in_requirements():
    pins = {re.split(r"==", line)[0].strip().lower() for line in (REPO / "requirements.txt").read_text().splitlines()
            if line.strip() and not line.startswith("#")}
    assert {d.lower() for d in declared()} <= pins
