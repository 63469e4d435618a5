"""The wheels of `make wheel`, built and pip-installed for real (docs/admin.md, "Installing with
pip"): run by `make test-packages` (LJR_TEST_PACKAGES=1), as pip resolves the dependencies from
the network and that takes a while.

1. `make wheel` gives build/wheels/lustre_jobreport-VERSION-py3-none-any.whl holding every module
   of reporter/lustre_jobreport and its templates and nothing else, with the console script and
   the metadata of reporter/pyproject.toml (the minimum Python, the dependencies and extras), and
   the simulator's wheel; the same tree gives the same bytes, whatever an earlier build or run
   left in it.
2. wheelcheck.py on this machine's /usr/bin/python3: the node side in a venv that sees the
   distribution's packages, the admin side (--records) in a venv of pip's; and it fails, in one
   line, on a wheel that lacks its templates.
"""

from __future__ import annotations

import email.parser
import hashlib
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from email.message import Message
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import wheelcheck

REPO = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((REPO / "reporter" / "pyproject.toml").read_text())["project"]
SIM_PROJECT = tomllib.loads((REPO / "sim" / "pyproject.toml").read_text())["project"]
WHEELS = REPO / "build" / "wheels"
SYSTEM_PYTHON = "/usr/bin/python3"

needs_network = pytest.mark.skipif(os.environ.get("LJR_TEST_PACKAGES") != "1",
                                   reason="pip installs from the network: make test-packages")


def wheel_name(project: dict) -> str:
    return f"{project['name'].replace('-', '_')}-{project['version']}-py3-none-any.whl"


def make_wheel() -> dict[str, str]:
    """`make wheel`, and the sha256 of each wheel it made."""
    proc = subprocess.run(["make", "-s", "-C", str(REPO), "wheel"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"make wheel: exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in WHEELS.glob("*.whl")}


@pytest.fixture(scope="module")
def built() -> dict[str, str]:
    return make_wheel()


def package_files(top: Path, package: str) -> set[str]:
    """What a wheel of the package must hold: its modules (no bytecode) and its templates."""
    root = top / package
    files = {p for p in root.rglob("*.py") if "__pycache__" not in p.parts}
    files |= set((root / "templates").glob("*.j2"))
    return {str(p.relative_to(top)) for p in files}


def metadata(wheel: zipfile.ZipFile, dist_info: str):
    return email.parser.Parser().parsestr(wheel.read(f"{dist_info}/METADATA").decode())


def requirement(text: str) -> str:
    """A requirement in one spelling, whichever way pyproject or the metadata writes it (older
    setuptools write "Jinja2 (>=2.11)"): as packaging reads it."""
    return str(Requirement(text))


def opened(built: dict[str, str], project: dict) -> tuple[set[str], Message, dict[str, str]]:
    """The wheel `make wheel` made of a project: the files it holds beside its dist-info, its
    metadata, and its console scripts."""
    name = wheel_name(project)
    assert name in built, f"make wheel made {sorted(built)}, not {name}"
    dist_info = f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    with zipfile.ZipFile(WHEELS / name) as whl:
        listed = {n for n in whl.namelist() if not n.startswith(dist_info + "/")}
        entry_points = whl.read(f"{dist_info}/entry_points.txt").decode()
        meta = metadata(whl, dist_info)
    scripts = dict(line.split(" = ") for line in entry_points.splitlines() if " = " in line)
    return listed, meta, scripts


@needs_network
def test_the_reporter_wheel_holds_the_package_and_states_its_metadata(built):
    listed, meta, scripts = opened(built, PROJECT)
    assert listed == package_files(REPO / "reporter", "lustre_jobreport")
    assert scripts == PROJECT["scripts"]
    assert meta["Requires-Python"] == PROJECT["requires-python"]
    extras = PROJECT.get("optional-dependencies", {})
    assert sorted(meta.get_all("Provides-Extra") or []) == sorted(extras)
    wanted = {requirement(r) for r in PROJECT["dependencies"]}
    for extra, reqs in extras.items():
        for r in reqs:
            marker = f'extra=="{extra}"'
            wanted.add(requirement(f"{r} and {marker}" if ";" in r else f"{r};{marker}"))
    assert {requirement(r) for r in meta.get_all("Requires-Dist") or []} == wanted


@needs_network
def test_the_simulator_wheel_holds_its_modules_and_script(built):
    listed, _, scripts = opened(built, SIM_PROJECT)
    modules = {str(p.relative_to(REPO / "sim")) for p in (REPO / "sim" / "lustre_sim").glob("*.py")}
    assert listed == modules
    assert scripts == SIM_PROJECT["scripts"]


@needs_network
def test_the_same_tree_gives_the_same_wheels_whatever_earlier_runs_left(built):
    """Bytecode, an earlier setuptools build and its egg-info in the tree, and newer file times
    change nothing: the wheels are built from a copy without them, dated by the last commit."""
    stale_build = REPO / "reporter" / "build" / "lib" / "lustre_jobreport"
    stale_egg = REPO / "reporter" / "lustre_jobreport.egg-info"
    stale_pyc = REPO / "reporter" / "lustre_jobreport" / "__pycache__" / "wheelcheck_stale.cpython-311.pyc"
    made = [p for p in (REPO / "reporter" / "build", stale_egg) if not p.exists()]
    try:
        stale_build.mkdir(parents=True, exist_ok=True)
        (stale_build / "wheelcheck_stale.py").write_text("")
        stale_egg.mkdir(exist_ok=True)
        (stale_egg / "wheelcheck_stale.txt").write_text("")
        stale_pyc.parent.mkdir(exist_ok=True)
        stale_pyc.write_bytes(b"")
        os.utime(REPO / "reporter" / "lustre_jobreport" / "cli.py")
        again = make_wheel()
    finally:
        for p in made:
            shutil.rmtree(p, ignore_errors=True)
        for p in (stale_build / "wheelcheck_stale.py", stale_egg / "wheelcheck_stale.txt", stale_pyc):
            p.unlink(missing_ok=True)
    assert again == built


@needs_network
def test_pip_install_of_the_node_and_admin_sides_works_on_the_system_python(built, tmp_path):
    proc = subprocess.run([sys.executable, str(Path(wheelcheck.__file__)), SYSTEM_PYTHON, str(WHEELS),
                           str(tmp_path / "check"), "--records"], capture_output=True, text=True, timeout=3600)
    print(proc.stdout)
    assert proc.returncode == 0, proc.stderr
    assert "passed" in proc.stdout.splitlines()[-1]


@needs_network
def test_wheelcheck_fails_in_one_line_on_a_wheel_without_its_templates(built, tmp_path):
    broken = tmp_path / "wheels"
    broken.mkdir()
    name = wheel_name(PROJECT)
    with zipfile.ZipFile(WHEELS / name) as whl, zipfile.ZipFile(broken / name, "w") as out:
        for item in whl.infolist():
            if "/templates/" not in item.filename:
                out.writestr(item, whl.read(item))
    proc = subprocess.run([sys.executable, str(Path(wheelcheck.__file__)), SYSTEM_PYTHON, str(broken),
                           str(tmp_path / "check")], capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 1
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("wheelcheck: report (installed): exit"), proc.stderr
    assert "templates" in proc.stderr


def test_first_difference_names_the_path_of_a_changed_number():
    """What wheelcheck compares the installed package's JSON with the tree's by."""
    def report(read_1m):
        return {"filesystems": {"scratch": {"rpc": {"read": {"4K": 24486, "1M": read_1m}}}},
                "flags": [{"id": "SMALL_RPC_READ"}]}
    assert wheelcheck.first_difference(report(53144), report(53144)) is None
    assert wheelcheck.first_difference(report(53145), report(53144)) == \
        "/filesystems/scratch/rpc/read/1M: 53145, the tree's 53144"
    assert wheelcheck.first_difference({"a": 1}, {"a": 1.0}) == "/a: 1, the tree's 1.0"
    assert wheelcheck.first_difference({"f": [1]}, {"f": [1, 2]}) == "/f (1 items, the tree's 2)"
