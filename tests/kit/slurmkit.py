"""A real single-node Slurm 22.05 for the tests that run jobs through the hooks (tests/slurm,
tests/packages; notes/slurm.md §2, §7).

Everything is private to the test and started in the foreground as its children, stopped by
PID: munged on its own socket and key (slurm.conf AuthInfo=socket=...), slurmctld -D and
slurmd -D on free ports, state/log/spool dirs in a fresh world-traversable directory. The
Prolog/Epilog are either generated wrappers that set the hooks' defaults file and exec the
tree's hooks/slurm/prolog and epilog, with a config that maps the Slurm node name to a private
pmcd (tests/slurm), or the hooks a package installed, as slurm.conf names them on a real
cluster, with the installed config (tests/packages).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

from kit.hookkit import HOOKS, REPO, user_file, write_config, write_defaults
from lustre_sim import SimClient
from kit.privpmcd import PrivatePmcd, alive, free_port, stop_process

PACKAGES = ("slurmctld", "slurmd", "slurm-client", "munge")
DAEMONS = ("/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/bin/sbatch")


def slurm_version() -> tuple[int, ...]:
    """slurmd's version, (24, 11, 5) of "slurm-wlm 24.11.5"."""
    out = subprocess.run(["slurmd", "-V"], capture_output=True, text=True, timeout=30).stdout
    return tuple(int(x) for x in out.split()[-1].split("+")[0].split(".")[:3])


def install_if_missing() -> None:
    if all(os.access(d, os.X_OK) for d in DAEMONS):
        return
    proc = subprocess.run([str(REPO / "scripts" / "install-deps.sh"), *PACKAGES], capture_output=True, text=True)
    assert proc.returncode == 0, f"installing {PACKAGES} failed:\n{proc.stdout}\n{proc.stderr}"


def job_users_tree(tree: Path, pw, **sim) -> SimClient:
    """A simulated client at tree, owned by the job's user: the job itself drives the sim."""
    client = SimClient.create(tree, **sim)
    for root, dirs, files in os.walk(tree):
        for n in [root, *(os.path.join(root, f) for f in files)]:
            os.chown(n, pw.pw_uid, pw.pw_gid)
    return client


class Cluster:
    """installed_hooks: {"prolog": path, "epilog": path} of installed hooks, used as they are;
    without it, the tree's hooks through wrappers, with a config naming pmcd for the node."""

    def __init__(self, base: Path, pw, tree: Path, *, pmcd: PrivatePmcd | None = None,
                 installed_hooks: dict[str, Path] | None = None):
        self.base, self.pw, self.pmcd, self.tree = base, pw, pmcd, tree
        self.installed_hooks = installed_hooks
        self.node = socket.gethostname().split(".")[0]
        self.etc, self.work = base / "etc", base / "work"
        self.conf = self.etc / "slurm.conf"
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))
        self.procs: dict[str, subprocess.Popen] = {}
        self.hooks_log = base / "ljr" / "hooks.log"
        self.records = base / "ljr" / "records"
        self.spool = base / "ljr" / "spool"

    def script(self, name: str, body: str) -> Path:
        """A job script of the job's user in the cluster's work directory."""
        return user_file(self.work / name, self.pw, "#!/bin/sh\n" + body, mode=0o755)

    # -- set-up ---------------------------------------------------------------------------
    def write_files(self) -> None:
        b = self.base
        for d in ("etc", "state", "spool", "log", "run", "munge", "ljr"):
            (b / d).mkdir(mode=0o755)
        shutil.chown(b / "state", "slurm", "slurm")
        shutil.chown(b / "log", "slurm", "slurm")
        shutil.chown(b / "munge", "munge", "munge")
        key = b / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        shutil.chown(key, "munge", "munge")
        key.chmod(0o400)
        self.work.mkdir(mode=0o755)
        os.chown(self.work, self.pw.pw_uid, self.pw.pw_gid)
        hooks = self.installed_hooks or self._wrappers()
        ctld_port, d_port = free_port(), free_port()
        self.conf.write_text(f"""ClusterName=ljrtest
SlurmctldHost={self.node}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser=slurm
AuthType=auth/munge
AuthInfo=socket={b}/munge/munge.socket
StateSaveLocation={b}/state
SlurmdSpoolDir={b}/spool
SlurmctldPidFile={b}/run/slurmctld.pid
SlurmdPidFile={b}/run/slurmd.pid
SlurmctldLogFile={b}/log/slurmctld.log
SlurmdLogFile={b}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
Prolog={hooks["prolog"]}
Epilog={hooks["epilog"]}
NodeName={self.node} NodeAddr=127.0.0.1 CPUs={os.cpu_count() or 1} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
        # Slurm 24.05 on starts its cgroup plugin whatever the other plugins, and a node without
        # a cgroup filesystem (a minimal root) must say so; older slurmds know no "disabled"
        if slurm_version() >= (24, 5):
            (self.conf.parent / "cgroup.conf").write_text("CgroupPlugin=disabled\n")

    def _wrappers(self) -> dict[str, Path]:
        """The tree's hooks: the site config, the defaults file, and the two wrappers."""
        config = write_config(self.etc / "lustre-jobreport.toml", hosts={self.node: self.pmcd.spec},
                              spool=self.spool, records=self.records, log=self.hooks_log)
        defaults = write_defaults(self.etc / "lustre-jobreport.default", config=config)
        for kind in ("prolog", "epilog"):
            w = self.etc / kind
            w.write_text(f"#!/bin/sh\nLUSTRE_JOBREPORT_DEFAULTS='{defaults}'\nexport LUSTRE_JOBREPORT_DEFAULTS\n"
                         f"exec '{HOOKS / 'slurm' / kind}'\n")
            w.chmod(0o755)
        return {kind: self.etc / kind for kind in ("prolog", "epilog")}

    def start(self) -> float:
        t0 = time.monotonic()
        b = self.base
        self.procs["munged"] = subprocess.Popen(   # setpriv execs munged: the PID is the daemon's
            ["setpriv", "--reuid=munge", "--regid=munge", "--init-groups", "/usr/sbin/munged", "-F",
             f"--socket={b}/munge/munge.socket", f"--key-file={b}/munge/munge.key",
             f"--log-file={b}/munge/munged.log", f"--pid-file={b}/munge/munged.pid",
             f"--seed-file={b}/munge/munged.seed"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._wait(lambda: (b / "munge" / "munge.socket").exists(), 10, "munged socket")
        for daemon in ("slurmctld", "slurmd"):
            self.procs[daemon] = subprocess.Popen(
                [f"/usr/sbin/{daemon}", "-D", "-f", str(self.conf)], cwd=b / "log",
                stdin=subprocess.DEVNULL, stdout=open(b / "log" / f"{daemon}.out", "wb"),
                stderr=subprocess.STDOUT, env=self.env)
        self._wait(lambda: self.sinfo() == "idle", 60, "the node to be idle")
        return time.monotonic() - t0

    def _wait(self, ok, timeout: float, what: str) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for name, p in self.procs.items():
                assert p.poll() is None and alive(p.pid), f"{name} died:\n{self.logs()}"
            if ok():
                return
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}:\n{self.logs()}")

    def stop(self) -> float:
        t0 = time.monotonic()
        for name in ("slurmd", "slurmctld", "munged"):
            stop_process(self.procs.get(name))
        return time.monotonic() - t0

    # -- use ------------------------------------------------------------------------------
    def run(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(list(args), capture_output=True, text=True, env=self.env, timeout=30)
        if check:
            assert proc.returncode == 0, f"{args}: {proc.stderr}\n{self.logs()}"
        return proc.stdout.strip()

    def sinfo(self) -> str:
        return self.run("sinfo", "-h", "-o", "%t", check=False)

    def submit(self, script: Path, output: str) -> str:
        """sbatch as the unprivileged job user, from its work directory."""
        proc = subprocess.run(["runuser", "-u", self.pw.pw_name, "--", "env", f"SLURM_CONF={self.conf}",
                               "sbatch", "--parsable", "-o", output, str(script)],
                              capture_output=True, text=True, cwd=self.work, timeout=30)
        assert proc.returncode == 0, f"sbatch: {proc.stderr}\n{self.logs()}"
        return proc.stdout.strip().split(";")[0]

    def job(self, job_id: str) -> dict[str, str]:
        from lustre_jobreport.hooks.jobenv import parse_scontrol
        return parse_scontrol(self.run("scontrol", "show", "job", "-o", job_id))

    def wait_done(self, job_id: str, timeout: float = 120) -> dict[str, str]:
        """Until the job left COMPLETING (its Epilog has finished): sbatch --wait returns earlier."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            fields = self.job(job_id)
            if fields.get("JobState") not in ("PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED",
                                              "REQUEUED", "RESIZING", None):
                flags = self.run("squeue", "-h", "-j", job_id, "-t", "all", "-o", "%T", check=False)
                if "COMPLETING" not in flags:
                    return fields
            time.sleep(0.1)
        raise AssertionError(f"job {job_id} did not finish:\n{self.logs()}")

    def logs(self) -> str:
        out = []
        for f in ("log/slurmctld.log", "log/slurmd.log", "munge/munged.log", "ljr/hooks.log"):
            p = self.base / f
            if p.exists():
                out.append(f"--- {f}\n" + "\n".join(p.read_text(errors="replace").splitlines()[-15:]))
        return "\n".join(out)
