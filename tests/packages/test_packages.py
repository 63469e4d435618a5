"""The packages, built and installed for real (issue 12; `make test-packages`, run last by
`make test`: it acts on this machine's system pmcd and its package database).

1. `packaging/deb/build.sh` builds the .debs (the agent, the node package, the admin package)
   and `packaging/rpm/build.sh` the RPMs with rpmbuild; both take their files from
   packaging/install.sh, and the lists must agree.
2. `apt-get install ./*.deb` into this system (their dependencies from the distribution installed
   first, so that what the packages themselves leave behind can be told apart); the agent's
   ./Install into the system pmcd
   (started and stopped by PID when none runs) on a simulated Lustre client; pmrep, pmlogconf
   and pmieconf find the installed views, group and rules by name.
3. A real Slurm (tests/kit/slurmkit.py) whose slurm.conf names the installed hooks, with the
   installed config as an admin edits it: an unprivileged user's Enzo job gets its report at
   the end of its output, with the numbers of the I/O it did; the installed
   `lustre-jobreport records compact` (the admin package) gathers its record into the dataset.
4. Upgrading the agent's package makes pmcd run the new binary with the admin's options.
5. `apt-get remove` leaves only the conffiles (the admin's change in one of them intact) and the
   data the packages made; `apt-get purge` leaves only the job records, the site's data.
   Every path under /etc, /usr, /var/lib/pcp and the packages' own directories is compared
   with what was there before.

The same module runs inside a minimal root of each Debian release (tests/matrix, the package
matrix): there LJR_MATRIX_RELEASE names the release, the agent's and the node's .debs are built
in the root against its PCP and Python, no RPMs, and the admin .deb is the one built on the host
(LJR_ADMIN_DEB) where the root's python3 is the host's minor version, else left out. Python 3.9
and pytest 6 (Debian 11) run it: no syntax or API newer than those.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from kit.hookkit import BIN, REPO, SIM, ensure_user, is_root, world_dir
from lustre_sim.workloads import TABLE_I_BUCKETS, TABLE_I_READ, TABLE_I_WRITE, TABLE_II   # the Enzo job (notes/io-findings.md)
from kit.slurmkit import Cluster, install_if_missing, job_users_tree
from kit.syspmcd import PMCD_CONF, SystemPmcd, pmcd_conf_entries, pminfo

# Installs into this system and acts on its pmcd: only when asked for (make test-packages), as root
pytestmark = [pytest.mark.skipif(os.environ.get("LJR_TEST_PACKAGES") != "1",
                                 reason="installs packages into this system: make test-packages"),
              pytest.mark.skipif(not is_root(), reason="installs packages into this system: needs root (CI is)")]

AGENT, NODE, ADMIN = "pcp-pmda-lustreclient", "lustre-jobreport", "lustre-jobreport-admin"
MATRIX_RELEASE = os.environ.get("LJR_MATRIX_RELEASE")           # set inside the matrix's roots
ADMIN_DEB = os.environ.get("LJR_ADMIN_DEB")                      # there: the host's admin .deb, if usable
PKGS = (AGENT, NODE) if MATRIX_RELEASE and not ADMIN_DEB else (AGENT, NODE, ADMIN)
# systemctl enables units without systemd running (this machine); a minimal root has none
SYSTEMCTL = shutil.which("systemctl") is not None
# The RPMs: the agent and the node package; no admin RPM (pyarrow and DuckDB are in no EL
# repository: the admin side is a Python 3.10+ venv there, docs/admin.md)
RPM_PKGS = (AGENT, NODE)
UPSTREAM = re.search(r'^version = "(.*)"$', (REPO / "reporter" / "pyproject.toml").read_text(), re.M).group(1)
ENV = dict(os.environ, PATH="/usr/bin:" + os.environ.get("PATH", ""), DEBIAN_FRONTEND="noninteractive")
# What the comparison of the system before and after looks at: everything a package or the
# agent's Install/Remove could leave behind.
WATCHED = ("/etc", "/usr", "/var/lib/pcp", "/var/lib/lustre-jobreport", "/var/spool/lustre-jobreport",
           "/var/log/pcp/pmcd")
DATA = "/var/lib/lustre-jobreport"


def run(*cmd: str, timeout: float = 300, check: bool = True, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout, env=kw.pop("env", ENV), **kw)
    if check:
        assert proc.returncode == 0, f"{cmd}: exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


# Where the system pmcd and its other agents write while it runs: only the agent's own files
# there are the packages' business (pmcd's logs, pmdalinux's instance caches come and go).
SHARED = {"/var/log/pcp/pmcd/": "lustreclient", "/var/lib/pcp/config/pmda/": "220."}


def system_paths() -> set[str]:
    """Every path under WATCHED; in pmcd's log and cache directories only the agent's."""
    found: set[str] = set()
    for top in WATCHED:
        if not os.path.lexists(top):
            continue
        found.add(top)
        for root, dirs, files in os.walk(top):
            for n in dirs + files:
                found.add(os.path.join(root, n))
    return {p for p in found if not any(p.startswith(d) and not p.startswith(d + own) for d, own in SHARED.items())}


def dpkg_status(pkg: str) -> str:
    """ii installed, rc removed with its conffiles left, "" or un: not known to dpkg."""
    return run("dpkg-query", "-W", "-f=${db:Status-Abbrev}", pkg, check=False).stdout.strip()


def installed(pkg: str) -> bool:
    return dpkg_status(pkg).startswith("ii")


def purge_all() -> None:
    """Purge whatever dpkg still knows of the packages (installed, or removed with conffiles)."""
    known = [p for p in PKGS if dpkg_status(p) not in ("", "un")]
    if known:
        run("apt-get", "purge", "-y", "-q", *known, check=False)


# --- building --------------------------------------------------------------------------------

def built_files(proc: subprocess.CompletedProcess) -> list[str]:
    """The packages a build script names on its output (one path a line, among make's notes)."""
    return [l for l in proc.stdout.splitlines() if l.startswith("/") and l.endswith((".deb", ".rpm"))]


@pytest.fixture(scope="module")
def built():
    with world_dir("ljr-packages-") as out:       # apt's _apt user reads the .debs from here
        env = dict(ENV, PIP_PYTHON=sys.executable,
                   DEB_ONLY=" ".join(p for p in PKGS if p != ADMIN or not ADMIN_DEB))
        t0 = time.monotonic()
        debs = built_files(run("sh", str(REPO / "packaging/deb/build.sh"), str(out), env=env, timeout=900))
        if ADMIN_DEB:
            debs.append(str(shutil.copy(ADMIN_DEB, out)))
        t_deb = time.monotonic() - t0
        t0 = time.monotonic()
        rpms = [] if MATRIX_RELEASE else \
            built_files(run("sh", str(REPO / "packaging/rpm/build.sh"), str(out), env=env, timeout=900))
        t_rpm = time.monotonic() - t0
        # the agent again, one Debian revision later, for the upgrade
        up = out / "upgrade"
        upgrade = built_files(run("sh", str(REPO / "packaging/deb/build.sh"), str(up),
                                  env=dict(env, DEB_VERSION=f"{UPSTREAM}-2", DEB_ONLY=AGENT)))
        sizes = {Path(p).name: os.path.getsize(p) >> 20 for p in debs + rpms}
        print(f"\npackages: .debs built in {t_deb:.1f} s, RPMs in {t_rpm:.1f} s; MiB: {sizes}")
        yield SimpleNamespace(dir=out, debs={pkg: Path(next(d for d in debs if Path(d).name.startswith(pkg + "_")))
                                             for pkg in PKGS},
                              rpms={pkg: Path(r) for pkg in RPM_PKGS for r in rpms
                                    if Path(r).name.startswith(pkg + f"-{UPSTREAM}")},
                              upgrade=Path(upgrade[0]))


def deb_entries(deb: Path) -> dict[str, tuple[str, int]]:
    """path -> (type, permission bits) of a .deb's data, read as the tar it is."""
    tar = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)], capture_output=True, check=True).stdout
    out = {}
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        for m in t.getmembers():
            p = "/" + m.name.removeprefix("./")
            if p != "/":
                out[p.rstrip("/")] = ("d" if m.isdir() else "l" if m.issym() else "f", stat.S_IMODE(m.mode))
    return out


def rpm_entries(rpm: Path) -> dict[str, tuple[str, int]]:
    out = {}
    q = run("rpm", "-qp", "--qf", "[%{FILEMODES:octal} %{FILENAMES}\n]", str(rpm)).stdout
    for line in q.splitlines():
        mode, path = line.split(" ", 1)
        m = int(mode, 8)
        out[path] = ("d" if stat.S_ISDIR(m) else "l" if stat.S_ISLNK(m) else "f", stat.S_IMODE(m))
    return out


REPORTER_PYTHON_DIR = "/usr/lib/lustre-jobreport/python/"


def rpm_bytecode(path: str) -> bool:
    """What the node RPM adds by itself: the bytecode of its code, compiled at build
    (%py_byte_compile), where the .deb's postinst compiles it on the node."""
    return path.startswith(REPORTER_PYTHON_DIR) and "/__pycache__" in path


def test_the_rpms_hold_the_files_of_the_debs(built):
    """Same layout: every file and symlink with its mode, the same conffiles (%config), the RPM's
    directories among the .deb's and the packages' own all in the RPM. What each format adds by itself is left out: Debian's
    changelog.Debian.gz, the node RPM's bytecode (checked to be there for each module)."""
    if not built.rpms:
        pytest.skip("no RPMs are built in the matrix's Debian roots")
    for pkg in RPM_PKGS:
        deb, rpm = deb_entries(built.debs[pkg]), rpm_entries(built.rpms[pkg])
        deb_files = {p: e for p, e in deb.items() if e[0] != "d" and p != f"/usr/share/doc/{pkg}/changelog.Debian.gz"}
        rpm_files = {p: e for p, e in rpm.items() if e[0] != "d" and not rpm_bytecode(p)}
        assert set(deb_files) == set(rpm_files), (pkg, sorted(set(deb_files) ^ set(rpm_files))[:20])
        modes = {p for p in deb_files if deb_files[p][0] != "l" and deb_files[p] != rpm_files[p]}
        assert not modes, (pkg, [(p, deb_files[p], rpm_files[p]) for p in sorted(modes)[:10]])
        rpm_dirs = {p for p, e in rpm.items() if e[0] == "d" and not rpm_bytecode(p)}
        assert rpm_dirs <= set(deb), pkg
        # and owns its own directories, every one down to the deepest (rpm -qf names the package)
        assert {p for p, e in deb.items() if e[0] == "d" and "lustre" in p} <= rpm_dirs, pkg
        conffiles = run("dpkg-deb", "--info", str(built.debs[pkg]), "conffiles").stdout.split()
        assert sorted(conffiles) == sorted(run("rpm", "-qpc", str(built.rpms[pkg])).stdout.split()), pkg
        assert conffiles and all(c.startswith("/etc/") for c in conffiles)
    # the node package holds every module of the reporter and its templates, and the RPM each
    # module's bytecode
    tree = REPO / "reporter"
    code = {REPORTER_PYTHON_DIR + str(f.relative_to(tree)) for f in (tree / "lustre_jobreport").rglob("*")
            if f.suffix in (".py", ".j2") and "__pycache__" not in f.parts}
    assert code and code <= set(deb_entries(built.debs["lustre-jobreport"]))
    compiled = {re.sub(r"/__pycache__/([^/]+)\.cpython-\d+\.pyc$", r"/\1.py", p)
                for p in rpm_entries(built.rpms["lustre-jobreport"]) if rpm_bytecode(p)}
    assert {p for p in code if p.endswith(".py")} <= compiled
    # both formats run the same scriptlet functions at the same points
    deb_prerm = run("dpkg-deb", "--info", str(built.debs["pcp-pmda-lustreclient"]), "prerm").stdout
    rpm_scripts = run("rpm", "-qp", "--scripts", str(built.rpms["pcp-pmda-lustreclient"])).stdout
    shared = (REPO / "packaging" / "scriptlets.sh").read_text()
    assert shared in deb_prerm and shared in rpm_scripts
    assert 'if [ "$1" = remove ]; then\n    agent_remove' in deb_prerm
    assert re.search(r"preuninstall scriptlet.*?\nif \[ \"\$1\" -eq 0 \]; then agent_remove; fi", rpm_scripts, re.S)


def test_the_debs_declare_what_they_need(built):
    agent = run("dpkg-deb", "-f", str(built.debs[AGENT]), "Depends").stdout
    assert re.search(r"\bpcp\b", agent) and "libpcp-pmda3" in agent and "libpcp3" in agent and "libc6" in agent
    # the node package: any Debian's python3 from 3.9 on and its libraries, nothing bundled
    node = run("dpkg-deb", "-f", str(built.debs[NODE]), "Architecture", "Depends").stdout
    assert "Architecture: all" in node
    for need in ("python3 (>= 3.9)", "python3-numpy", "python3-jinja2", "python3-matplotlib", "python3-pcp",
                 "python3 (>= 3.11) | python3-toml"):
        assert need in node, (need, node)
    elves = [p for p, e in deb_entries(built.debs[NODE]).items() if p.endswith(".so") or ".so." in p]
    assert not elves and "<< " not in node
    if ADMIN in PKGS:
        admin = run("dpkg-deb", "-f", str(built.debs[ADMIN]), "Depends").stdout
        py = run("python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])").stdout.strip()
        assert f"python3 (>= {py}~)" in admin and "python3 (<< " in admin and "python3-scipy" in admin
        assert "libstdc++6" in admin and re.search(r"lustre-jobreport \(= [^)]+\)", admin)      # the bundled wheels' C++


# --- installed into this system ----------------------------------------------------------------

def install_dependencies(built) -> None:
    """What the packages need from the distribution, installed (and kept) before the comparison
    of the system starts: apt installs the packages with their dependencies, then purges the
    packages alone. python-hostlist too where the release has it (the node package recommends
    it; without it, as on Debian 11, the reporter expands host lists itself)."""
    run("apt-get", "install", "-y", "-q", "--no-install-recommends", *(str(built.debs[p]) for p in PKGS))
    purge_all()
    if run("apt-cache", "show", "python3-hostlist", check=False).returncode == 0:
        run("apt-get", "install", "-y", "-q", "--no-install-recommends", "python3-hostlist")


def package_dir_files() -> set[str]:
    """The files under the packages' private directory: theirs, and the node package's bytecode
    its postinst compiled."""
    return {os.path.join(r, f) for r, _, fs in os.walk("/usr/lib/lustre-jobreport") for f in fs}


def kib(paths) -> int:
    return sum(os.lstat(p).st_size for p in paths if os.path.isfile(p) and not os.path.islink(p)) >> 10


@pytest.fixture(scope="module")
def system(built):
    purge_all()                          # a leftover of an interrupted run on a dev machine
    had_data = os.path.lexists(DATA)
    pw = ensure_user()
    with world_dir("ljr-pkgtest-") as base, SystemPmcd(base / "pmcd-save") as pmcd:
        install_dependencies(built)
        before = system_paths()
        entries_before = pmcd_conf_entries()
        t0 = time.monotonic()
        run("apt-get", "install", "-y", "-q", "--no-install-recommends", *(str(built.debs[p]) for p in PKGS))
        compiled = package_dir_files()
        tree = base / "tree"
        client = job_users_tree(tree, pw, version="2.15.4", filesystems=[("scratch", 8, 1)], seed=7)
        state = SimpleNamespace(base=base, pw=pw, pmcd=pmcd, before=before, entries_before=entries_before,
                                tree=tree, client=client, install_s=time.monotonic() - t0, built=built,
                                compiled=compiled)
        try:
            yield state
        finally:
            purge_all()
            if not had_data:
                shutil.rmtree(DATA, ignore_errors=True)
            if SYSTEMCTL:
                run("systemctl", "disable", "lustre-jobreport-compact.timer", check=False)


def test_apt_installs_the_packages_where_pcp_and_admins_look(system):
    assert all(installed(p) for p in PKGS)
    print(f"\npackages: apt-get install of {', '.join(PKGS)} {system.install_s:.1f} s")
    for p in ("/usr/bin/lustre-jobreport", "/usr/share/lustre-jobreport/hooks/slurm/prolog",
              "/var/lib/pcp/pmdas/lustreclient/Install", "/var/lib/pcp/pmdas/lustreclient/pmdalustreclient"):
        assert os.access(p, os.X_OK), p
    # the postinst made the directories the hooks check, root's and in their modes
    for d, mode in (("/var/spool/lustre-jobreport", 0o700), (f"{DATA}/records", 0o750), (f"{DATA}/dataset", 0o750)):
        st = os.stat(d)
        assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, mode), d
    assert run("man", "-w", "lustre-jobreport").stdout.strip().endswith("lustre-jobreport.1.gz")
    assert run("man", "-w", "pmdalustreclient").stdout.strip().endswith("pmdalustreclient.1.gz")
    out = run("/usr/bin/lustre-jobreport", "--version").stdout
    assert UPSTREAM in out
    # the node package's code, compiled by its postinst for this python3, on the distribution's
    # numpy, Jinja2, matplotlib and PCP bindings; the admin package's pyarrow and DuckDB privately
    probe = run("/usr/bin/python3", "-I", "-c", "import sys; sys.path.insert(0, '/usr/lib/lustre-jobreport/python');"
                "sys.path.append('/usr/lib/lustre-jobreport/admin');"
                "import numpy, matplotlib, jinja2, lustre_jobreport.cli;"
                "from lustre_jobreport.acquire import pcpfetch;"
                "print(pcpfetch.HAVE_PMAPI, numpy.__file__, matplotlib.__file__, jinja2.__file__,"
                "     lustre_jobreport.cli.__cached__)").stdout.split()
    assert probe[0] == "True", probe
    assert all(m.startswith("/usr/lib/python3/dist-packages/") for m in probe[1:4]), probe
    assert os.path.isfile(probe[4]) and probe[4].startswith("/usr/lib/lustre-jobreport/python/"), probe
    node_files = set(run("dpkg", "-L", NODE).stdout.splitlines())
    pycache = {p for p in system.compiled if "/__pycache__/" in p and p.startswith("/usr/lib/lustre-jobreport/python/")}
    agent_files = set(run("dpkg", "-L", AGENT).stdout.splitlines())
    print(f"packages: {NODE} on {MATRIX_RELEASE or 'this system'}: {kib(node_files)} KiB, "
          f"with its bytecode {kib(node_files | pycache)} KiB; {AGENT}: {kib(agent_files)} KiB")
    if ADMIN in PKGS:
        where = run("/usr/bin/python3", "-I", "-c", "import sys; sys.path.append('/usr/lib/lustre-jobreport/admin');"
                    "import pyarrow, duckdb, scipy; print(pyarrow.__file__, duckdb.__file__, scipy.__file__)").stdout.split()
        assert [w.split("/")[3] for w in where] == ["lustre-jobreport", "lustre-jobreport", "python3"], where
        admin_files = set(run("dpkg", "-L", ADMIN).stdout.splitlines())
        print(f"packages: {ADMIN}: {kib(admin_files)} KiB")
        assert run("/usr/bin/lustre-sim", "--help").returncode == 0
    # PCP's tools find what the agent's package installed, by name
    tmp = system.base / "pcpcfg"
    tmp.mkdir()
    run("pmieconf", "-F", "-f", str(tmp / "pmie.config"))
    rules = run("pmieconf", "-f", str(tmp / "pmie.config"), "list", "lustre").stdout
    assert "lustre.small_read_rpcs" in rules and "lustre.metadata_storm" in rules
    assert os.path.isfile("/var/lib/pcp/config/pmchart/Lustre")
    assert "[lustre-rpc]" in Path("/etc/pcp/pmrep/lustreclient.conf").read_text()


def test_the_agent_installs_into_the_system_pmcd(system):
    # -C on: the instance caches a production agent (ROOT /) keeps, which purge must remove
    out = run("sh", "-c", f'cd /var/lib/pcp/pmdas/lustreclient && LUSTRECLIENT_ARGS="-r {system.tree} -C on" ./Install </dev/null')
    assert re.search(r"Check lustreclient metrics have appeared \.\.\. \d+ metrics and \d+ values", out.stdout), out.stdout
    line = [l for l in pmcd_conf_entries() if l.startswith("lustreclient")]
    assert len(line) == 1 and "/var/lib/pcp/pmdas/lustreclient/pmdalustreclient" in line[0] and f"-r {system.tree} -C on" in line[0]
    v = pminfo("-f", "lustreclient.version").stdout
    assert 'value "2.15.4"' in v
    assert len(system.pmcd.agent_pids()) == 1, system.pmcd.agents_told()
    # pmrep's installed views and pmlogconf's installed group, through the system pmcd
    # pmrep finds the views by name where it reads its whole directory (PCP 6; Debian 11's 5.2
    # reads pmrep.conf alone, and docs/admin.md §5 names the file for it)
    reads_dir = '"$PCP_SYSCONF_DIR/pmrep"' in Path(shutil.which("pmrep")).read_text()
    views = [] if reads_dir else ["-c", "/etc/pcp/pmrep/lustreclient.conf"]
    rep = run("pmrep", *views, "-h", "local:", "-t", "1", "-s", "2", ":lustre-health").stdout
    assert "scratch-OST0000" in rep or "OST0000" in rep, rep
    cfg = system.base / "pmlogger.config"
    run("pmlogconf", "-c", "-q", "-r", "-h", "local:", str(cfg))
    text = cfg.read_text()
    assert re.search(r"#\+ lustreclient/summary:y:", text) and re.search(r"#\+ lustreclient/per-ost:n:", text), text[-2000:]
    # pmchart (Debian's pcp-gui, under Xvfb) opens the installed view by its name
    if shutil.which("pmchart") and shutil.which("xvfb-run"):
        image = system.base / "lustre.png"
        r = run("xvfb-run", "-a", "-s", "-screen 0 1280x1024x24", "pmchart", "-h", "local:", "-c", "Lustre",
                "-g", "800x600", "-t", "1sec", "-o", str(image), check=False, timeout=120)
        assert r.returncode == 0 and image.stat().st_size > 10_000, (r.returncode, r.stderr[-2000:])


@pytest.fixture(scope="module")
def slurm_job(system):
    """The admin's edit of the installed config, then an Enzo job through the installed hooks."""
    install_if_missing()
    cfg = Path("/etc/lustre-jobreport/config.toml")
    base = system.base
    cluster = Cluster(base / "slurm", system.pw, system.tree,
                      installed_hooks={k: Path(f"/usr/share/lustre-jobreport/hooks/slurm/{k}") for k in ("prolog", "epilog")})
    (base / "slurm").mkdir(mode=0o755)
    log = cluster.hooks_log
    text = cfg.read_text()
    edited = text.replace('log = "syslog"', f'log = "{log}"', 1).replace('cluster = ""', 'cluster = "pkgtest"', 1)
    assert edited != text
    cfg.write_text(edited)
    cluster.write_files()
    # the simulator: the venv's command, or in a matrix root the tree's package on its python3
    sim = f"'{SIM}'" if SIM.exists() else f"PYTHONPATH='{REPO / 'sim'}' '{sys.executable}' -m lustre_sim"
    script = cluster.script("enzo.sh", f"""echo "job $SLURM_JOB_ID starts"
{sim} run '{system.tree}' enzo --fs scratch >/dev/null
echo "job $SLURM_JOB_ID done"
""")
    cluster.start()
    try:
        job_id = cluster.submit(script, str(cluster.work / "enzo-%j.out"))
        job = cluster.wait_done(job_id)
    finally:
        cluster.stop()
    yield SimpleNamespace(id=job_id, job=job, log=log, cluster=cluster, config_text=edited)


def test_a_slurm_job_gets_its_report_through_the_installed_hooks(system, slurm_job):
    job, c = slurm_job.job, slurm_job.cluster
    assert job["JobState"] == "COMPLETED", c.logs()
    text = open(job["StdOut"]).read()
    head = f"job {slurm_job.id} starts\njob {slurm_job.id} done\n"
    assert text.startswith(head + "\n"), (text[:600], c.logs())
    [path] = list(Path(f"{DATA}/records").rglob(f"pkgtest-{slurm_job.id}.json"))
    doc = json.loads(path.read_text())
    fs = doc["filesystems"]["scratch"]
    assert [fs["rpc"]["read"][b] for b in TABLE_I_BUCKETS] == list(TABLE_I_READ)
    assert [fs["rpc"]["write"][b] for b in TABLE_I_BUCKETS] == list(TABLE_I_WRITE)
    assert (fs["read_bytes"], fs["write_bytes"]) == (TABLE_II["read_bytes"], TABLE_II["write_bytes"])
    assert "SMALL_RPC_READ" in text and "OPEN_CLOSE_STORM" in text and "12243" in text
    assert not doc["data_quality"] or all(q["id"] not in ("HOST_UNREACHABLE", "COUNTER_RESET") for q in doc["data_quality"])
    st = os.stat(job["StdOut"] + ".lustre.html")
    assert st.st_uid == system.pw.pw_uid
    lines = slurm_job.log.read_text().splitlines() if slurm_job.log.exists() else []
    assert not [l for l in lines if ": error: " in l], lines
    # the nightly compaction as the admin package's unit runs it: the installed command over the
    # default dirs; on a node without the admin package, one line that says what to install
    out = run("/usr/bin/lustre-jobreport", "records", "compact", check=ADMIN in PKGS)
    if ADMIN in PKGS:
        assert list(Path(f"{DATA}/dataset").rglob("*.parquet")), out.stdout + out.stderr
    else:
        assert out.returncode != 0 and ADMIN in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
    # nothing was written under /usr at run time (bytecode, caches): the files there are those the
    # packages and the node package's postinst made
    assert package_dir_files() == system.compiled, sorted(package_dir_files() ^ system.compiled)[:10]


def test_the_admin_package_compacts_records_and_compares_them(system):
    """The admin node's two commands, installed: pyarrow and DuckDB from the admin package on the
    distribution's numpy and scipy, over a cluster's records before and after a client upgrade
    (the same applications, 6 jobs each side)."""
    if ADMIN not in PKGS:
        pytest.skip("no admin package for this release's python3")
    from kit.records import put
    recs, data = system.base / "admin-records", system.base / "admin-dataset"
    for i in range(12):
        lustre, end = ("2.15.4", f"2026-10-{10 + i}T12:00:00Z") if i < 6 else ("2.15.5", f"2026-11-{4 + i}T12:00:00Z")
        put(recs, str(1000 + i), "adm", seed=i, lustre=lustre, end=end, name="wrf")
    run("/usr/bin/lustre-jobreport", "records", "compact", "--records", str(recs), "--dataset", str(data))
    assert list(data.rglob("*.parquet"))
    args = ("compare", "--records", str(recs), "--dataset", str(data),
            "--baseline", "lustre=2.15.4", "--candidate", "lustre=2.15.5", "--format", "json")
    doc = json.loads(run("/usr/bin/lustre-jobreport", *args).stdout)
    [group] = doc["groups"]
    assert (group["key"]["job_name"], group["n_baseline"], group["n_candidate"]) == ("wrf", 6, 6), group
    assert group["metrics"] and all(0 <= m["q_value"] <= 1 for m in group["metrics"] if m["q_value"] is not None)
    # where the tree's venv is (this machine), its pinned libraries give the same comparison
    venv = BIN / "lustre-jobreport"
    if venv.exists():
        assert json.loads(run(str(venv), *args).stdout) == doc


def test_upgrading_the_agent_package_restarts_the_agent_with_the_admins_options(system, slurm_job):
    agents = system.pmcd.agent_pids()
    assert len(agents) == 1, system.pmcd.agents_told()
    [old] = agents
    line = [l for l in pmcd_conf_entries() if l.startswith("lustreclient")]
    run("apt-get", "install", "-y", "-q", str(system.built.upgrade))
    assert run("dpkg-query", "-W", "-f=${Version}", "pcp-pmda-lustreclient").stdout == f"{UPSTREAM}-2"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (system.pmcd.agent_pids() in ([], [old])
                                           or pminfo("-f", "lustreclient.version").returncode):
        time.sleep(0.2)
    new = system.pmcd.agent_pids()
    assert new and new != [old], (old, new)
    assert [l for l in pmcd_conf_entries() if l.startswith("lustreclient")] == line
    assert 'value "2.15.4"' in pminfo("-f", "lustreclient.version").stdout


def test_remove_leaves_the_conffiles_and_purge_only_the_job_records(system, slurm_job):
    # the admin runs the compaction nightly on this node
    wants = Path("/etc/systemd/system/timers.target.wants/lustre-jobreport-compact.timer")
    if ADMIN in PKGS and SYSTEMCTL:
        run("systemctl", "enable", "lustre-jobreport-compact.timer")
        assert wants.is_symlink()
    run("apt-get", "remove", "-y", "-q", *PKGS)
    # each is left for purge: conffiles, or (the admin package) its postrm
    assert [dpkg_status(p) for p in PKGS] == ["rc"] * len(PKGS)
    # the agent left pmcd: no metrics, no process, pmcd.conf's entries as before
    assert pminfo("lustreclient").returncode != 0
    # pmcd drops the agent as Remove restarts it; the agent exits on its pipe's end, which can
    # be a moment after apt-get returns on a loaded machine
    deadline = time.monotonic() + 10
    while system.pmcd.agent_pids() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not system.pmcd.agent_pids(), system.pmcd.agents_told()
    assert pmcd_conf_entries() == system.entries_before
    assert not wants.is_symlink()
    new = system_paths() - system.before
    assert not system.before - system_paths(), "removal deleted what was there before"
    conffiles = {"/etc/lustre-jobreport/config.toml", "/etc/default/lustre-jobreport", "/etc/pcp/pmrep/lustreclient.conf"}
    assert Path("/etc/lustre-jobreport/config.toml").read_text() == slurm_job.config_text    # the admin's change
    made = {p for p in new if p.startswith((DATA, "/var/spool/lustre-jobreport", "/var/lib/pcp/config/pmda/220.",
                                            "/var/log/pcp/pmcd/lustreclient.log"))}
    assert new - made == conffiles | {"/etc/lustre-jobreport"}, sorted(new - made)
    assert any(p.startswith("/var/lib/pcp/config/pmda/220.") for p in made)   # the agent's caches, until purge

    run("apt-get", "purge", "-y", "-q", *PKGS)
    left = system_paths() - system.before
    assert system.before - system_paths() == set()
    records = {p for p in left if p.startswith(f"{DATA}/records/") or p.startswith(f"{DATA}/dataset/")}
    assert left - records - {DATA, f"{DATA}/records", f"{DATA}/dataset"} == set(), sorted(left)
    assert any(p.endswith(f"pkgtest-{slurm_job.id}.json") for p in records), sorted(left)
    assert all(dpkg_status(p) in ("un", "") for p in PKGS), [dpkg_status(p) for p in PKGS]
