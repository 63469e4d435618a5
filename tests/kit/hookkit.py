"""Helpers for the scheduler-hook tests (tests/hooks, tests/slurm) and bench/bench_prolog.py.

The hooks run as root and write as the job user, so these tests need root, an unprivileged
user (`ljr-test`, created if missing) and directories that user can reach: pytest's own tmp
tree is root-only (0700) and is re-tightened by concurrent pytest runs, so the tests make their
own world-traversable directories under /tmp and remove them afterwards.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HOOKS = REPO / "hooks"
HOOKLIB = HOOKS / "lib.sh"          # installed as /usr/share/lustre-jobreport/hooks/lib.sh
BIN = Path(sys.executable).parent
REPORTER = BIN / "lustre-jobreport"
SIM = BIN / "lustre-sim"
JOB_USER = "ljr-test"


def is_root() -> bool:
    return os.geteuid() == 0


def ensure_user(name: str = JOB_USER) -> pwd.struct_passwd:
    """An unprivileged login-less user with its own group, created if missing."""
    try:
        return pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/bin/sh",
                        "--comment", "lustre-jobreport tests", name], check=True, capture_output=True)
        return pwd.getpwnam(name)


@contextmanager
def world_dir(prefix: str):
    """A fresh root-owned 0755 directory under /tmp (traversable by the job user), removed after."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    os.chmod(path, 0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def user_dir(path: Path, pw: pwd.struct_passwd, mode: int = 0o755) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    os.chown(path, pw.pw_uid, pw.pw_gid)
    os.chmod(path, mode)
    return path


def user_file(path: Path, pw: pwd.struct_passwd, text: str = "", mode: int = 0o644) -> Path:
    path.write_text(text)
    os.chown(path, pw.pw_uid, pw.pw_gid)
    os.chmod(path, mode)
    return path


def write_config(path: Path, *, hosts: dict[str, str], spool: Path, records: Path | str, log: Path,
                 html: str = "beside", prolog_timeout_s: float = 5.0, epilog_timeout_s: float = 30.0,
                 snapshot: str = "", hooks_extra: str = "") -> Path:
    """A site config for a test rig; hooks_extra: more [hooks] keys."""
    host_lines = "".join(f'"{k}" = "{v}"\n' for k, v in hosts.items())
    if "job_view_from_nodes" not in hooks_extra:
        # the rig's jobs are snapshotted (PBS's way, and a Slurm job's without the job view),
        # unless a test asks for the job view, every Slurm job's way by default
        hooks_extra += "\njob_view_from_nodes = 0"
    path.write_text(
        f"[snapshot]\n{snapshot}\n"
        f"[hosts]\n{host_lines}\n"
        "[hooks]\n"
        f'spool_dir = "{spool}"\nrecords_dir = "{records}"\nlog = "{log}"\nhtml = "{html}"\n'
        f"prolog_timeout_s = {prolog_timeout_s}\nepilog_timeout_s = {epilog_timeout_s}\n{hooks_extra}\n")
    return path


def write_defaults(path: Path, *, config: Path, reporter: Path = REPORTER, path_prefix: Path | None = None,
                   lib: Path = HOOKLIB, log: Path | None = None) -> Path:
    """The /etc/default/lustre-jobreport of a test: which reporter, config, hook library, PATH,
    and where to log when the config cannot be read (default syslog)."""
    lines = [f"LUSTRE_JOBREPORT='{reporter}'", f"LUSTRE_JOBREPORT_CONFIG='{config}'", f"LUSTRE_JOBREPORT_LIB='{lib}'"]
    if log:
        lines.append(f"LUSTRE_JOBREPORT_LOG='{log}'")
    if path_prefix:
        lines.append(f"PATH='{path_prefix}':$PATH")
    path.write_text("\n".join(lines) + "\n")
    return path


def slurm_env(job_id: str, pw: pwd.struct_passwd, defaults: Path, *, nodelist: str = "vm",
              node: str = "vm", context: str = "prolog_slurmd", stdout_pattern: str | None = None) -> dict:
    """What slurmd gives its Prolog/Epilog (notes/slurm.md §4.2, captured on this machine): no PATH."""
    env = {"SLURM_JOB_ID": job_id, "SLURM_JOBID": job_id, "SLURM_JOB_USER": pw.pw_name,
           "SLURM_JOB_UID": str(pw.pw_uid), "SLURM_UID": str(pw.pw_uid), "SLURM_JOB_GID": str(pw.pw_gid),
           "SLURM_NODELIST": nodelist, "SLURMD_NODENAME": node, "SLURM_CLUSTER_NAME": "ljrtest",
           "SLURM_JOB_PARTITION": "debug", "SLURM_JOB_NUM_NODES": "1", "SLURM_JOB_CPUS_PER_NODE": "1",
           "SLURM_JOB_RESTART_COUNT": "0", "SLURM_JOB_WORK_DIR": "/tmp", "SLURM_JOB_STDIN": "/dev/null",
           "SLURM_SCRIPT_CONTEXT": context, "LUSTRE_JOBREPORT_DEFAULTS": str(defaults)}
    if stdout_pattern:
        env["SLURM_JOB_STDOUT"] = stdout_pattern   # the raw pattern: the hooks must not use it
    if context == "epilog_slurmd":
        env.update(SLURM_JOB_EXIT_CODE="0", SLURM_JOB_EXIT_CODE2="0:0", SLURM_JOB_DERIVED_EC="0")
    return env


def fake_scontrol(bindir: Path, job_id: str, pw: pwd.struct_passwd, stdout: str | None, *,
                  behaviour: str = "ok") -> Path:
    """A stand-in scontrol answering `show job -o ID` like Slurm 22.05 does (format captured on
    this machine, StdOut expanded); behaviour "fail" answers like a dead slurmctld, "hang" hangs."""
    bindir.mkdir(parents=True, exist_ok=True)
    out = f"StdErr={stdout} StdIn=/dev/null StdOut={stdout} " if stdout else "StdIn=/dev/null "
    line = (f"JobId={job_id} JobName=my job=x UserId={pw.pw_name}({pw.pw_uid}) GroupId={pw.pw_name}({pw.pw_gid}) "
            "MCS_label=N/A Priority=4294901759 Nice=0 Account=(null) QOS=(null) JobState=COMPLETING "
            "Reason=None Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 "
            "NodeList=vm BatchHost=vm NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* "
            "TRES=cpu=1,node=1,billing=1 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* "
            f"WorkDir=/tmp {out}Power= ")
    body = {"ok": f"cat <<'EOF'\n{line}\nEOF\n",
            "fail": "echo 'slurm_load_jobs error: Unable to contact slurm controller (connect failure)' >&2\nexit 1\n",
            "hang": "exec sleep 60\n"}[behaviour]
    script = bindir / "scontrol"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return script


def run_hook(script: Path, env: dict, args: tuple[str, ...] = (), stdout=subprocess.PIPE,
             timeout: float = 60, cwd: Path | str = "/") -> tuple[int, float, str, str]:
    """script run as the scheduler's daemon runs it, in cwd (Torque's MoM: its mom_priv)."""
    started = time.monotonic()
    proc = subprocess.run([str(script), *args], env=env, stdin=subprocess.DEVNULL, stdout=stdout,
                          stderr=subprocess.PIPE, timeout=timeout, cwd=cwd)
    elapsed = time.monotonic() - started
    out = proc.stdout.decode() if isinstance(proc.stdout, bytes) else ""
    return proc.returncode, elapsed, out, proc.stderr.decode()


def fake_reporter(path: Path, body: str) -> Path:
    """A stand-in reporter whose prolog/epilog is `body` (sh, given the reporter's arguments and
    its process id). It starts as the real one does when the wrapper names its bound (--bound):
    the config's limits first on standard error, and exit 75 under another bound than the
    config's; those, and `--limits`, it asks of the real reporter."""
    path.write_text(f"""#!{sys.executable}
import os, subprocess, sys
argv = sys.argv[1:]
head = argv[:argv.index("--")] if "--" in argv else argv
if "--limits" in head:
    os.execv({str(REPORTER)!r}, [{str(REPORTER)!r}, *argv])
if "--bound" in head:
    at = head.index("--bound")
    said = subprocess.run([{str(REPORTER)!r}, *head[:at], *head[at + 2:], "--limits"],
                          capture_output=True, text=True).stdout.strip()
    print("limits: " + said, file=sys.stderr, flush=True)
    if float(said.split()[2]) != float(head[at + 1]):
        sys.exit(75)
os.execv("/bin/sh", ["sh", "-c", {body!r}, sys.argv[0], *argv])
""")
    path.chmod(0o755)
    return path


def run_with_logger(script: Path, env: dict, said: Path, args: tuple[str, ...] = (),
                    stdout=subprocess.PIPE) -> tuple[int, float, str, str]:
    """run_hook, with /usr/bin/logger replaced (in a private mount namespace, for this run only)
    by one that appends its arguments to `said`: what the wrapper tells syslog when nothing else
    is left to it (the hook library missing, the defaults file broken)."""
    rec = said.with_suffix(".logger")
    rec.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$*\" >>'{said}'\n")
    rec.chmod(0o755)
    inner = ["unshare", "-m", "--propagation", "private", "sh", "-c",
             'mount --bind "$0" /usr/bin/logger && exec "$@"', str(rec), str(script), *args]
    started = time.monotonic()
    proc = subprocess.run(inner, env=env, stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.PIPE,
                          timeout=60, cwd="/")
    out = proc.stdout.decode() if isinstance(proc.stdout, bytes) else ""
    return proc.returncode, time.monotonic() - started, out, proc.stderr.decode()


@contextmanager
def full_tmpfs(path: Path, options: str):
    """A small tmpfs mounted on path (mount -o options) and filled up by a root file `filler`;
    unmounted after. Skips the test where mounting is not allowed."""
    import pytest

    if subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        with open(path / "filler", "wb", buffering=0) as f:
            try:
                while True:
                    f.write(b"\0" * 4096)
            except OSError:
                pass
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=True)


def log_lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


class BlackHole:
    """A TCP port that accepts connections and never says a word: a hung host's pmcd."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        self._stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def spec(self) -> str:
        return f"localhost:{self.port}"

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
                self.held.append(conn)
            except OSError:
                continue

    def close(self) -> None:
        self._stop = True
        self.thread.join(2)
        for c in self.held:
            c.close()
        self.sock.close()


def dead_spec() -> str:
    """A port where nothing listens: connection refused, like a node whose pmcd is down."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"localhost:{s.getsockname()[1]}"


class BarePmcd:
    """A private pmcd with only its own PMDA: a node where pmdalustreclient is not installed."""

    def __init__(self, workdir: Path):
        self.workdir = Path(workdir)
        self.proc: subprocess.Popen | None = None
        self.port: int | None = None

    @property
    def spec(self) -> str:
        return f"localhost:{self.port}"

    def __enter__(self) -> "BarePmcd":
        from kit.privpmcd import PMCD, free_port
        self.workdir.mkdir(parents=True, exist_ok=True)
        (self.workdir / "pmcd.conf").write_text("pmcd\t2\tdso\tpmcd_init\t/var/lib/pcp/pmdas/pmcd/pmda_pmcd.so\n")
        self.port = free_port()
        self.proc = subprocess.Popen(
            [str(PMCD), "-f", "-c", str(self.workdir / "pmcd.conf"), "-n", "/var/lib/pcp/pmns/root_pmcd",
             "-s", str(self.workdir / "pmcd.socket"), "-p", str(self.port), "-l", str(self.workdir / "pmcd.log")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=dict(os.environ, PCP_RUN_DIR=str(self.workdir)), cwd=self.workdir)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.proc.poll() is None:
            if subprocess.run(["pminfo", "-h", self.spec, "-f", "pmcd.version"], capture_output=True).returncode == 0:
                return self
            time.sleep(0.1)
        self.__exit__()
        raise RuntimeError(f"bare pmcd did not start: {(self.workdir / 'pmcd.log').read_text()[-1000:]}")

    def __exit__(self, *exc) -> None:
        from kit.privpmcd import stop_process
        stop_process(self.proc)
        self.proc = None


class Rig:
    """One compute node's hook setup for a test: config, defaults, spool, records, log, the job
    user's output file and a stand-in scontrol; runs the real hooks/slurm wrappers."""

    def __init__(self, d: Path, pw: pwd.struct_passwd, hosts: dict[str, str], *, job: str = "7",
                 scontrol: str = "ok", out_name: str | None = None, **cfg):
        self.d, self.pw, self.job = d, pw, job
        self.home = user_dir(d / "home", pw)
        self.out = user_file(self.home / (out_name or f"slurm-{job}.out"), pw, "job output\n")
        self.spool, self.records, self.log = d / "spool", d / "records", d / "hooks.log"
        self.config = write_config(d / "config.toml", hosts=hosts, spool=self.spool, records=self.records,
                                   log=self.log, **cfg)
        self.defaults = write_defaults(d / "default", config=self.config, path_prefix=d / "bin", log=self.log)
        fake_scontrol(d / "bin", job, pw, str(self.out), behaviour=scontrol)

    def prolog(self, **env):
        return run_hook(HOOKS / "slurm" / "prolog", slurm_env(self.job, self.pw, self.defaults, **env))

    def epilog(self, **env):
        return run_hook(HOOKS / "slurm" / "epilog",
                        slurm_env(self.job, self.pw, self.defaults, context="epilog_slurmd", **env))

    @property
    def begin(self) -> Path:
        return self.spool / f"{self.job}.begin.json"

    def log_lines(self) -> list[str]:
        return log_lines(self.log)

    def errors(self) -> list[str]:
        return [line for line in self.log_lines() if ": error: " in line]

    def record_files(self) -> list[Path]:
        return sorted(self.records.rglob("*.json")) if self.records.exists() else []
