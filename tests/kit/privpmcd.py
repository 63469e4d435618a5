"""A private pmcd running the real pmdalustreclient on a (simulated) client tree.

Each instance has its own port, pmcd.conf, PMNS, socket and logs in a work directory, so many
can run at once (each stands for one compute node) and the system pmcd is never touched.
Started in the foreground (-f) as our child and stopped by PID, as PCP's own QA does.
Used by the tests, the demo and the benchmarks.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
AGENT_DIR = REPO / "pmda-lustre"
AGENT = AGENT_DIR / "pmdalustreclient"
PMCD = Path("/usr/lib/pcp/bin/pmcd")
DOMAIN = 220


def stop_process(proc: subprocess.Popen | None, timeout: float = 10) -> None:
    """SIGTERM a daemon we started, SIGKILL it if it has not gone within timeout, and reap it."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pmns_for_private_pmcd() -> str:
    """The agent's PMNS under a root of its own, with the domain number filled in."""
    text = (AGENT_DIR / "pmns").read_text()
    text = re.sub(r"\bLUSTRECLIENT:", f"{DOMAIN}:", text)
    return "root {\n    lustreclient\n}\n\n" + text


def alive(pid: int) -> bool:
    """kill -0 lies about zombies here (PID 1 does not reap orphans): ask ps for the state."""
    out = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True).stdout
    return bool(out.strip()) and not out.strip().startswith("Z")


def cpu_seconds(pid: int) -> float:
    """User + system CPU a process has used (/proc/<pid>/stat): what the benchmarks charge to a
    pmcd or its agent."""
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def cpu_seconds_exact(pid: int) -> float:
    """CPU a process's threads have used, to the nanosecond (/proc/<pid>/task/*/schedstat, its
    first field): for figures of a few milliseconds, which cpu_seconds' clock ticks (10 ms) would
    round away."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):      # a thread that ended meanwhile
            pass
    return total / 1e9


def children_of(pid: int) -> list[int]:
    """A process's children (a pmcd's: its agents)."""
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


class Pmcd:
    """A private pmcd for any agent: its pmcd.conf line, its PMNS, and a metric that has a
    value once the agent answers. Subclasses say what those are."""

    probe_metric = ""
    access = ""     # a pmcd.conf [access] section (DEFAULT_ACCESS: the one PCP ships); "": none, all allowed

    def __init__(self, workdir: Path):
        self.workdir = Path(workdir)
        self.port: int | None = None
        self.proc: subprocess.Popen | None = None

    @property
    def spec(self) -> str:
        return f"localhost:{self.port}"

    @property
    def socket_path(self) -> Path:
        return self.workdir / "pmcd.socket"

    @property
    def local_spec(self) -> str:
        """This pmcd over its unix socket: what pmcd's access control calls a local connection."""
        return f"unix:{self.socket_path}"

    def prepare(self) -> tuple[str, str]:
        """Write what the agent needs; return (pmcd.conf line, PMNS text)."""
        raise NotImplementedError

    def start(self, timeout: float = 15.0) -> "Pmcd":
        self.workdir.mkdir(parents=True, exist_ok=True)
        conf_line, pmns = self.prepare()
        (self.workdir / "root").write_text(pmns)
        (self.workdir / "pmcd.conf").write_text(conf_line + "\n" + self.access)
        last_error = ""
        for _attempt in range(3):  # a port picked free can be taken before pmcd binds it
            self.port = free_port()
            log = self.workdir / "pmcd.log"
            env = dict(os.environ, PCP_RUN_DIR=str(self.workdir), PMCD_PORT=str(self.port))
            self.proc = subprocess.Popen(
                [str(PMCD), "-f", "-c", str(self.workdir / "pmcd.conf"), "-n", str(self.workdir / "root"),
                 "-s", str(self.socket_path), "-p", str(self.port), "-l", str(log)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                env=env, cwd=self.workdir)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and self.proc.poll() is None:
                probe = subprocess.run(["pminfo", "-h", self.spec, "-f", self.probe_metric],
                                       capture_output=True, text=True, timeout=10)
                if probe.returncode == 0 and "value" in probe.stdout:
                    return self
                last_error = (probe.stderr or probe.stdout).strip()
                time.sleep(0.1)
            self.stop()
        log_text = (self.workdir / "pmcd.log").read_text() if (self.workdir / "pmcd.log").exists() else ""
        raise RuntimeError(f"private pmcd did not come up: {last_error}\n{log_text[-2000:]}")

    def stop(self) -> None:
        stop_process(self.proc)
        self.proc = None

    def __enter__(self) -> "Pmcd":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# pmcd.conf's [access] as Debian's pcp ships it: stores only over local (unix socket) connections
DEFAULT_ACCESS = '[access]\ndisallow ".*" : store;\ndisallow ":*" : store;\nallow "local:*" : all;\n'


# the agent's job timeline sample interval (-T) unless a test asks for its own: the longest the
# agent takes, so that no sample of a job's timeline comes between a test's reads (a sample
# refreshes what a fetch would: it can meet a vanished file before the next fetch does, and
# change that fetch's agent.fetch.* counts)
QUIET_INTERVAL = 86400.0


class PrivatePmcd(Pmcd):
    """The real pmdalustreclient on a client tree."""

    probe_metric = "lustreclient.version"

    def __init__(self, workdir: Path, tree: Path, *, page_size: int | None = None,
                 agent: Path = AGENT, extra_agent_args: tuple[str, ...] = (), access: str = "",
                 interval: float = QUIET_INTERVAL):
        super().__init__(workdir)
        self.access = access
        self.tree, self.agent = Path(tree), Path(agent)
        self.page_size, self.extra_agent_args = page_size, extra_agent_args
        self.interval = interval

    def agent_command(self) -> str:
        # -h: the help text of this tree's agent, not of an installed one
        args = [str(self.agent), "-d", str(DOMAIN), "-r", str(self.tree),
                "-l", str(self.workdir / "lustreclient.log"), "-h", str(AGENT_DIR / "help")]
        if self.page_size:
            args += ["-P", str(self.page_size)]
        args += ["-T", f"{self.interval:g}"]
        return " ".join(args + list(self.extra_agent_args))

    def prepare(self) -> tuple[str, str]:
        if not self.agent.exists():
            raise RuntimeError(f"{self.agent} is not built (run make agent)")
        return f"lustreclient\t{DOMAIN}\tpipe\tbinary\t{self.agent_command()}", pmns_for_private_pmcd()

    def restart_agent(self, timeout: float = 10.0) -> None:
        """The agent dies (SIGKILL, by its PID) and pmcd starts it again (on SIGHUP, as pmcd does
        for an agent that exited): back once it answers, having forgotten what it kept."""
        [agent] = children_of(self.proc.pid)
        os.kill(agent, signal.SIGKILL)
        deadline = time.monotonic() + timeout
        while alive(agent) and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(self.proc.pid, signal.SIGHUP)
        while time.monotonic() < deadline:
            got = subprocess.run(["pminfo", "-h", self.spec, "-f", self.probe_metric], capture_output=True, text=True)
            if "value" in got.stdout and children_of(self.proc.pid) not in ([], [agent]):
                return
            time.sleep(0.1)
        raise RuntimeError("the agent did not come back")


def cleanup(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
