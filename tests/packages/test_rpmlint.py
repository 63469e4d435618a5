"""rpmlint on the RPMs (`make test-packages`): the binary and source RPMs that
packaging/rpm/build.sh makes, as rpmlint sees them with EL's settings
(packaging/rpm/rpmlint-el.toml), say nothing that their packaging/rpm/<package>.rpmlintrc does
not filter, and every filter there still matches something (rpmlint reports an unused one as an
error). Each filter, there and in rpmlint-el.toml, has its reason written above it.

Builds the RPMs (rpmbuild, in a directory of its own); installs nothing.
"""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from kit.hookkit import REPO

pytestmark = pytest.mark.skipif(os.environ.get("LJR_TEST_PACKAGES") != "1",
                                reason="builds the RPMs: make test-packages")

RPM_DIR = REPO / "packaging" / "rpm"
EL_CONFIG = RPM_DIR / "rpmlint-el.toml"
PACKAGES = ("pcp-pmda-lustreclient", "lustre-jobreport")
SUMMARY = re.compile(r"(\d+) packages and (\d+) specfiles checked; (\d+) errors, (\d+) warnings")
FINDING = re.compile(r"^\S+: [EW]: ", re.M)


@pytest.fixture(scope="module")
def rpms(tmp_path_factory) -> dict[str, list[Path]]:
    """Each package's binary RPM and source RPM, built from this tree."""
    out = tmp_path_factory.mktemp("rpms")
    proc = subprocess.run(["sh", str(RPM_DIR / "build.sh"), str(out)], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {pkg: [*out.glob(f"{pkg}-[0-9]*.rpm"), *(out / "srpm").glob(f"{pkg}-[0-9]*.src.rpm")] for pkg in PACKAGES}


def rpmlint(pkg: str, files: list[Path]) -> subprocess.CompletedProcess:
    """rpmlint with EL's settings and the package's own filters, on one source package's RPMs
    (one run per source package: rpmlint 2.4 unpacks the SRPMs of one run side by side and
    then finds each one's spec in the others)."""
    return subprocess.run(["rpmlint", "-c", str(EL_CONFIG), "-r", str(RPM_DIR / f"{pkg}.rpmlintrc"), *map(str, files)],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("pkg", PACKAGES)
def test_rpmlint_finds_nothing_unexplained(rpms, pkg):
    files = rpms[pkg]
    assert sorted(f.name.endswith(".src.rpm") for f in files) == [False, True], files
    proc = rpmlint(pkg, files)
    summary = SUMMARY.search(proc.stdout)
    assert summary, proc.stdout[-2000:] + proc.stderr[-2000:]
    packages, _specs, errors, warnings = map(int, summary.groups())
    assert packages == 2
    assert FINDING.findall(proc.stdout) == [] and (errors, warnings) == (0, 0), proc.stdout
    assert proc.returncode == 0, proc.stderr


def test_every_filter_has_its_reason_above_it():
    for pkg in PACKAGES:
        lines = (RPM_DIR / f"{pkg}.rpmlintrc").read_text().splitlines()
        filters = [i for i, line in enumerate(lines) if line.startswith("addFilter(")]
        assert filters, pkg
        assert all(i > 0 and lines[i - 1].startswith("# ") for i in filters), pkg
        assert all(line.startswith(("addFilter(", "#")) or not line.strip() for line in lines), pkg
    config = EL_CONFIG.read_text()
    entries = tomllib.loads(config)["Filters"]
    lines = config.splitlines()
    for entry in entries:
        at = next(i for i, line in enumerate(lines) if line.strip() == repr(entry) + ",")
        assert lines[at - 1].strip().startswith("# "), entry


def test_each_command_has_its_man_page(rpms):
    """What rpmlint-el.toml's no-manual-page-for-binary filter leaves to this test (rpmlint 2.4
    mismatches the names): every command the RPMs put in /usr/bin has its page in man1."""
    commands = 0
    for pkg in PACKAGES:
        binary = next(f for f in rpms[pkg] if not f.name.endswith(".src.rpm"))
        listed = subprocess.run(["rpm", "-qpl", str(binary)], capture_output=True, text=True, check=True).stdout.split()
        names = [Path(p).name for p in listed if p.startswith("/usr/bin/")]
        assert all(f"/usr/share/man/man1/{n}.1.gz" in listed for n in names), (pkg, names)
        commands += len(names)
    assert commands >= 1      # lustre-jobreport's
