"""The package matrix (`make test-matrix`, run by `make test` after the package test): the agent,
the node package and the hooks on each Debian release a Lustre client site may run, with that
release's own PCP, Python and libraries, in a minimal root of the release.

For each release (Debian 11 bullseye: Python 3.9, PCP 5.2; 12 bookworm: 3.11, PCP 6.0; 13 trixie:
3.13, PCP 6.3):
1. scripts/matrix-roots.sh builds the roots once, in parallel (debootstrap from this machine's
   mirror, with the build and test tools) and keeps them in LJR_ROOTS; each run works on an
   overlay of its root, so the cached root stays as built and a run leaves nothing behind.
2. The tree's files are copied in; in the root, the agent is built against the release's PCP and
   its unit, dbpmda, PMNS, missing-file and job-view tests run (pmda-lustre's Makefile).
3. tests/packages/test_packages.py runs in the root, on its python3 and pytest: the agent's and
   the node's .debs built there, installed with apt-get, the agent's ./Install under the root's
   pmcd on a simulated client, an Enzo job through the installed hooks under the release's Slurm
   with the exact numbers in its record, upgrade, remove and purge. On bookworm, whose python3 is
   this machine's, the admin .deb built here goes in too (`records compact`).
Each root runs in its own PID and network namespaces (unshare): its pmcd, Slurm and munge see
only themselves (PCP's scripts act on processes by name), bind their ports apart from this
machine's, and all end with the namespace.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from kit.hookkit import REPO, is_root

# what builds roots and runs in them: only when asked for (make test-matrix), as root
in_roots = [pytest.mark.skipif(os.environ.get("LJR_TEST_MATRIX") != "1",
                               reason="builds Debian roots and installs into them: make test-matrix"),
            pytest.mark.skipif(not is_root(), reason="debootstrap, chroot and unshare need root (CI is)")]


def matrix(test):
    for mark in in_roots:
        test = mark(test)
    return test

RELEASES = os.environ.get("LJR_MATRIX_RELEASES", "bullseye bookworm trixie").split()
ROOTS = Path(os.environ.get("LJR_ROOTS", "/var/cache/lustre-jobreport/roots"))
# The agent's tests that need no system pmcd (test-install does: the package test covers it)
AGENT_TESTS = "default harness test-unit test-pmns test-dbpmda test-missing test-cache test-pmcd test-jobs"
HOST_PYTHON = "%d.%d" % sys.version_info[:2]
NODE_ADDRESS = "10.200.0.1"     # the node's address in a root's network namespace


def host(*cmd: str, timeout: float = 1800, check: bool = True, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout, **kw)
    if check:
        assert proc.returncode == 0, f"{cmd}: exit {proc.returncode}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc


class Root:
    """An overlay of a cached release root, with the tree's files in /src."""

    def __init__(self, release: str, base: Path, work: Path):
        self.release, self.base, self.work = release, base, work
        self.path = work / "merged"

    def mount(self) -> None:
        for d in ("upper", "ovlwork", "merged"):
            (self.work / d).mkdir()
        host("mount", "-t", "overlay", "overlay", "-o",
             f"lowerdir={self.base},upperdir={self.work / 'upper'},workdir={self.work / 'ovlwork'}", str(self.path))

    def unmount(self) -> None:
        host("umount", "-l", str(self.path), check=False)

    def name_this_host(self) -> None:
        """The root shares this machine's host name (UTS namespace): resolvable there too, as on
        a real node, where pmcd's "local:*" access and Slurm's node name rely on it."""
        with open(self.path / "etc" / "hosts", "a") as hosts:
            hosts.write(f"127.0.0.1\t{socket.gethostname()}\n")

    def copy_tree(self) -> None:
        """The tree's files as a fresh clone has them (tracked, and new ones not ignored), no
        build products."""
        files = host("git", "-C", str(REPO), "ls-files", "-co", "--exclude-standard", "-z").stdout
        src = self.path / "src"
        src.mkdir()
        host("tar", "-C", str(REPO), "--null", "-T", "-", "-cf", str(self.work / "tree.tar"), input=files)
        host("tar", "-C", str(src), "-xf", str(self.work / "tree.tar"))

    def run(self, script: str, *, env: dict[str, str] | None = None, network: bool = False,
            timeout: float = 1800) -> subprocess.CompletedProcess:
        """SCRIPT (sh) in /src of the root, in new PID (and, unless NETWORK, network) namespaces
        with their own /proc; a clean environment."""
        variables = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "HOME": "/root",
                     "DEBIAN_FRONTEND": "noninteractive", **(env or {})}
        inner = ["chroot", str(self.path), "/usr/bin/env", "-i",
                 *(f"{k}={v}" for k, v in variables.items()), "/bin/sh", "-c", f"cd /src && {script}"]
        ns = ["unshare", "--pid", "--fork", f"--mount-proc={self.path}/proc"]
        # In the namespace, before the chroot, with this machine's mount and ip: its /sys (slurmd
        # looks for the cgroup filesystem there), and unless NETWORK a network namespace whose
        # loopback is brought up with an address beside 127.0.0.1 that stands for the node's own
        # (slurmd binds with getaddrinfo's AI_ADDRCONFIG, which counts no loopback address).
        setup = f"mount --rbind /sys '{self.path}/sys'"
        if not network:
            ns.append("--net")
            setup += f" && ip link set lo up && ip addr add {NODE_ADDRESS}/24 dev lo"
        inner = ["/bin/sh", "-c", setup + ' && exec "$@"', "sh", *inner]
        t0 = time.monotonic()
        proc = subprocess.run(ns + inner, capture_output=True, text=True, timeout=timeout)
        proc.seconds = time.monotonic() - t0
        return proc


@pytest.fixture(scope="module")
def roots() -> Path:
    """The releases' roots, built in parallel by scripts/matrix-roots.sh where not cached."""
    t0 = time.monotonic()
    host("bash", str(REPO / "scripts" / "matrix-roots.sh"), *RELEASES, env=dict(os.environ, LJR_ROOTS=str(ROOTS)))
    print(f"\nmatrix: roots of {', '.join(RELEASES)} ready in {time.monotonic() - t0:.0f} s ({ROOTS})")
    return ROOTS


@pytest.fixture(scope="module")
def admin_deb():
    """The admin package built on this machine: for the release whose python3 is this one's."""
    with tempfile.TemporaryDirectory(prefix="ljr-matrix-admin-") as out:
        env = dict(os.environ, PIP_PYTHON=sys.executable, DEB_ONLY="lustre-jobreport-admin")
        built = host("sh", str(REPO / "packaging" / "deb" / "build.sh"), out, env=env, timeout=900).stdout.split()
        yield Path(built[-1])


@pytest.fixture(scope="module", params=RELEASES)
def root(request, roots, admin_deb):
    release = request.param
    base = roots / release
    with tempfile.TemporaryDirectory(prefix=f"ljr-matrix-{release}-", dir="/var/tmp") as work:
        r = Root(release, base, Path(work))
        r.mount()
        try:
            r.name_this_host()
            r.copy_tree()
            r.python = r.run("python3 -c 'import sys; print(\"%d.%d\" % sys.version_info[:2])'").stdout.strip()
            r.admin = None
            if r.python == HOST_PYTHON:
                r.admin = "/src/" + admin_deb.name
                shutil.copy(admin_deb, r.path / "src")
            r.versions = r.run("dpkg-query -W -f='${Package} ${Version}\\n' python3 python3-numpy python3-jinja2 "
                               "python3-matplotlib pcp slurmd python3-hostlist 2>/dev/null").stdout
            print(f"\nmatrix: {release}: " + "; ".join(r.versions.splitlines()))
            yield r
        finally:
            r.unmount()


def report(proc: subprocess.CompletedProcess, what: str) -> str:
    return f"{what}: exit {proc.returncode} after {proc.seconds:.0f} s\n{proc.stdout[-6000:]}\n{proc.stderr[-4000:]}"


@matrix
def test_the_agent_builds_against_the_release_pcp_and_passes_its_tests(root):
    proc = root.run(f"make -s -C pmda-lustre {AGENT_TESTS}")
    assert proc.returncode == 0, report(proc, f"{root.release}: the agent's tests")
    assert "pmda-lustre: all tests passed" in proc.stdout or "passed" in proc.stdout, proc.stdout[-2000:]
    print(f"\nmatrix: {root.release}: agent built and tested in {proc.seconds:.0f} s")


@matrix
def test_the_packages_install_and_a_slurm_job_gets_its_report(root):
    env = {"LJR_TEST_PACKAGES": "1", "LJR_MATRIX_RELEASE": root.release, "PYTHONPATH": "/src/tests:/src/sim:/src/reporter"}
    if root.admin:
        env["LJR_ADMIN_DEB"] = root.admin
    # pytest 6 (Debian 11) knows no `pythonpath` ini key: PYTHONPATH; tests/conftest.py's
    # hypothesis profiles are not needed here
    proc = root.run("python3 -m pytest -q -rA -s -p no:cacheprovider --noconftest tests/packages/test_packages.py",
                    env=env)
    assert proc.returncode == 0, report(proc, f"{root.release}: the package test")
    # what must have run here, not been skipped: the install, the agent, the job, upgrade, removal
    passed = set(re.findall(r"^PASSED \S+::(test_\w+)", proc.stdout, re.M))
    must = {"test_the_debs_declare_what_they_need", "test_apt_installs_the_packages_where_pcp_and_admins_look",
            "test_the_agent_installs_into_the_system_pmcd", "test_a_slurm_job_gets_its_report_through_the_installed_hooks",
            "test_upgrading_the_agent_package_restarts_the_agent_with_the_admins_options",
            "test_remove_leaves_the_conffiles_and_purge_only_the_job_records"}
    if root.admin:
        must.add("test_the_admin_package_compacts_records_and_compares_them")
    assert must <= passed, (sorted(must - passed), proc.stdout[-3000:])
    lines = [l for l in proc.stdout.splitlines() if l.startswith("packages:")]
    print(f"\nmatrix: {root.release}: package test, {len(passed)} passed in {proc.seconds:.0f} s\n" + "\n".join(lines))


@pytest.fixture(scope="module")
def wheels():
    """The wheels `make wheel` builds, as a site's admin would copy them in."""
    host("make", "-s", "-C", str(REPO), "wheel", timeout=900)
    return REPO / "build" / "wheels"


# The admin side by pip needs Python 3.11 (DuckDB 2, pyarrow's numpy 2): not on Debian 11
RECORDS_FROM = (3, 11)


@matrix
def test_pip_installs_the_wheels_on_the_release_python(root, wheels):
    """tests/packages/wheelcheck.py on the root's python3, with the index and CA bundle this
    machine's pip uses: the node side beside the distribution's libraries, and where Python is
    new enough the admin side with the records extra."""
    dest = root.path / "src" / "build" / "wheels"
    shutil.copytree(wheels, dest, dirs_exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k.startswith("PIP_") and k != "PIP_FIND_LINKS"}
    cert = os.environ.get("PIP_CERT", "/etc/ssl/certs/ca-certificates.crt")
    if os.path.isfile(cert):
        shutil.copy(cert, root.path / "src" / "pip-ca.crt")
        env["PIP_CERT"] = "/src/pip-ca.crt"
    records = tuple(int(x) for x in root.python.split(".")) >= RECORDS_FROM
    proc = root.run("python3 tests/packages/wheelcheck.py python3 build/wheels /tmp/wheelcheck"
                    + (" --records" if records else ""), env=env, network=True, timeout=1800)
    assert proc.returncode == 0, report(proc, f"{root.release}: pip")
    print(f"\nmatrix: {root.release}: pip (node{' and records' if records else ''}) in {proc.seconds:.0f} s\n"
          + proc.stdout[-1500:])


# --- the administrator's guide, as written ------------------------------------------------------

GUIDE = REPO / "docs" / "admin.md"


def guide_blocks() -> dict[str, str]:
    """The shell blocks of docs/admin.md marked `<!-- guide-test: NAME -->`, by name."""
    return dict(re.findall(r"^<!-- guide-test: ([\w-]+) -->\n```sh\n(.*?)^```$", GUIDE.read_text(), re.M | re.S))


def test_the_guide_marks_the_blocks_this_test_runs():
    assert set(guide_blocks()) == {"install-node", "install-admin", "agent", "agent-on-simulator"}


@matrix
def test_a_new_admin_follows_the_guide(root):
    """A fresh overlay of the root (the package test's purge left it as built), then docs/admin.md's
    blocks as written, each after the one before, in one shell: build and install the node's
    packages, start pmcd and ./Install the agent (no Lustre client here: the guide says what
    pminfo answers then), and where the admin package is (it carries the simulator) the agent on
    a simulated client. `make deb-admin` is the one block not run in a root (it needs the venv's
    pip and the package index): the host's admin .deb stands for its output."""
    blocks = guide_blocks()
    steps = [("install-node", blocks["install-node"]), ("agent", blocks["agent"])]
    if root.admin:
        os.makedirs(root.path / "src" / "build" / "packages", exist_ok=True)
        shutil.copy(root.path / root.admin.lstrip("/"), root.path / "src" / "build" / "packages")
        admin_install = [l for l in blocks["install-admin"].splitlines() if not l.startswith("make deb-admin")]
        steps += [("install-admin", "\n".join(admin_install)), ("agent-on-simulator", blocks["agent-on-simulator"])]
    script = "set -e\n" + "".join(f"echo '=== {name}'\ncd /src\n{text}\n" for name, text in steps)
    proc = root.run(script, env={"DEBIAN_FRONTEND": "noninteractive"})
    assert proc.returncode == 0, report(proc, f"{root.release}: the guide")
    out = dict(re.findall(r"^=== ([\w-]+)\n(.*?)(?=^=== |\Z)", proc.stdout, re.M | re.S))
    assert re.search(r"Check lustreclient metrics have appeared \.\.\. \d+ metrics", out["agent"]), out["agent"]
    # no Lustre here: what the guide says pminfo answers on such a node
    assert re.search(r"lustreclient\.version\n\s*No value\(s\) available!", out["agent"]), out["agent"]
    if root.admin:
        sim = out["agent-on-simulator"]
        # the agent reads the simulated client: scratch's mount, by the id lustre-sim made it with
        made = re.search(r"client in /tmp/lustre-tree: scratch \((\w+)\)", sim)
        assert made and re.search(r'lustreclient\.llite\.mount_id\n\s*inst \[\d+ or "scratch"\] value "%s"'
                                  % made.group(1), sim), sim
    print(f"\nmatrix: {root.release}: the guide's blocks {', '.join(n for n, _ in steps)} ran in {proc.seconds:.0f} s")
