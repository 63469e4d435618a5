"""The PBS side of the hook tests: PbsRig runs the PBS/Torque wrappers as MoM runs them (as root
on the primary host, with the documented argv, a PBS_NODEFILE listing each host once per slot,
the epilogue's standard output on the job's output file), TorqueRig as Torque's MoMs run them
(prologue.parallel on each sister, then the prologue and epilogue, from copies in mom_priv with
Torque's arguments), and run_begin_hook runs the
execjob_begin hook (hooks/pbs/lustre_jobreport.py) as MoM's hook Python runs it, under a stand-in
`pbs` module. PBS itself does not exist on Debian 12, so these are its documented contract: the
hook module's pbs.event() (.type, .job.id, .job.exec_host, .job.in_ms_mom(), .accept(), which
ends the hook), pbs.get_local_nodename(), pbs.logmsg(), pbs.hook_config_filename and the event
constants (HOOK_EVENT_* of OpenPBS's hook.h).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from kit import phaseload
from kit.hookkit import HOOKS, log_lines, run_hook, user_dir, user_file, write_config, write_defaults
from lustre_jobreport.records import store as records

JOB = "123.pbs01"
NODES = ("nodeA", "nodeB")
WIDTH = 0.4                 # the agents' sampling interval in the job-view tests (two_hosts), s
EXEC_HOST = "nodeA/0*4+nodeB/0*4"
BEGIN_HOOK = HOOKS / "pbs" / "lustre_jobreport.py"
BEGIN_WRAPPER = HOOKS / "pbs" / "execjob_begin"      # the hook's "wrapper" setting, as installed elsewhere

# pbs.py as MoM's hook Python has it, as much as the hook uses; the event is FAKE_PBS_EVENT's
FAKE_PBS = '''
import json, os
EXECJOB_BEGIN, EXECJOB_PROLOGUE, EXECJOB_END = 0x40, 0x80, 0x200
LOG_WARNING, LOG_DEBUG = 4, 7
_given = json.loads(os.environ["FAKE_PBS_EVENT"])
hook_config_filename = _given.get("config")

def _said(*words):
    with open(_given["said"], "a") as f:
        f.write(" ".join(str(w) for w in words) + "\\n")

class _Job:
    id, exec_host = _given["job"], _given.get("exec_host")
    def in_ms_mom(self):
        return _given["primary"]

class _Event:
    type, job = _given["type"], _Job()
    def accept(self):
        _said("accept")
        raise SystemExit(0)
    def reject(self, msg=""):
        _said("reject", msg)
        raise SystemExit(0)

_event = _Event()
def event():
    return _event
def get_local_nodename():
    return _given["node"]
def logmsg(level, msg):
    _said("log", level, msg)
'''


@dataclass
class HookRun:
    returncode: int
    said: list[str]            # "accept", "reject ...", "log <level> <message>" in order
    stderr: str

    @property
    def accepted(self) -> bool:
        return self.said[-1:] == ["accept"] and not any(s.startswith("reject") for s in self.said)

    @property
    def logged(self) -> list[str]:
        return [s.split(" ", 2)[2] for s in self.said if s.startswith("log ")]


def run_begin_hook(d: Path, node: str, *, primary: bool, job: str = JOB, exec_host: str | None = EXEC_HOST,
                   env: dict | None = None, settings: dict | None = None, event: int = 0x40,
                   timeout: float = 60) -> HookRun:
    """The execjob_begin hook as MoM runs it on `node` (root, its own Python: here Debian's,
    which is what PBS's packages on Debian use), settings: the hook's configuration file."""
    d.mkdir(parents=True, exist_ok=True)
    (d / "pbs.py").write_text(FAKE_PBS)
    said = d / f"said-{node}"
    said.write_text("")
    given = {"type": event, "job": job, "exec_host": exec_host, "primary": primary, "node": node,
             "said": str(said), "config": None}
    if settings is not None:
        (d / "settings.json").write_text(json.dumps(settings))
        given["config"] = str(d / "settings.json")
    run_env = dict(env or {}, FAKE_PBS_EVENT=json.dumps(given), PYTHONPATH=str(d), PATH="/usr/bin:/bin")
    proc = subprocess.run([sys.executable, "-B", str(BEGIN_HOOK)], env=run_env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout, cwd="/")
    return HookRun(proc.returncode, said.read_text().splitlines(), proc.stderr)


def job_view_config(where: Path, pmcds: dict, least: int = 1) -> dict:
    """PbsRig's (TorqueRig's) settings for hosts read through the job view (the two_hosts
    fixture's): each host's pmcd, and its own local one for the hooks' store."""
    return {"hosts": {n: p.spec for n, p in pmcds.items()}, "hooks_extra": f"job_view_from_nodes = {least}",
            "snapshot": f'local_spec = "unix:{where}/{{host}}/pmcd.socket"'}


class PbsRig:
    """config_kw: write_config's; group: the job's ($3); nss: run the wrappers under it
    (nsshang.HungGroupLookups)."""

    def __init__(self, d, pw, hosts, job=JOB, group=None, **config_kw):
        self.d, self.pw, self.job = d, pw, job
        self.group, self.nss = group or pw.pw_name, None
        self.workdir = user_dir(d / "home", pw)                      # PBS_O_WORKDIR
        self.out = user_file(self.workdir / f"myjob.o{job.split('.')[0]}", pw, "job output\n")
        self.nodefile = d / "aux" / job
        self.nodefile.parent.mkdir()
        self.nodefile.write_text("".join(f"{h}\n" for h in [NODES[0]] * 4 + [NODES[1]] * 4))
        self.spool, self.records, self.log = d / "spool", d / "records", d / "hooks.log"
        self.config = write_config(d / "config.toml", hosts=hosts, spool=self.spool, records=self.records,
                                   log=self.log, **config_kw)
        self.defaults = write_defaults(d / "default", config=self.config)

    def env(self):
        return {"PBS_NODEFILE": str(self.nodefile), "PBS_O_WORKDIR": str(self.workdir), "PBS_JOBID": self.job,
                "PBS_MSHOST": NODES[0], "PBS_NUM_NODES": "2", "LUSTRE_JOBREPORT_DEFAULTS": str(self.defaults)}

    def run(self, script, argv, stdout=subprocess.PIPE, cwd="/"):
        if self.nss is None:
            return run_hook(script, self.env(), argv, stdout=stdout, cwd=cwd)
        unshare, *rest = self.nss.command([script, *argv])
        return run_hook(Path(unshare), self.nss.env(self.env()), tuple(rest), stdout=stdout, cwd=cwd)

    def begin_hook(self, node: str, **kw) -> HookRun:
        """The execjob_begin hook on `node` (the primary: NODES[0]), MoM's environment
        (LUSTRE_JOBREPORT_DEFAULTS: which reporter and config the wrapper uses)."""
        kw.setdefault("settings", {"wrapper": str(BEGIN_WRAPPER)})
        return run_begin_hook(self.d / "hook", node, primary=node == NODES[0], job=self.job,
                              env={"LUSTRE_JOBREPORT_DEFAULTS": str(self.defaults)}, **kw)

    def prologue(self):
        return self.run(HOOKS / "pbs" / "prologue", (self.job, self.pw.pw_name, self.group))

    def epilogue(self):
        argv = (self.job, self.pw.pw_name, self.group, "myjob", "4242", "ncpus=16,nodes=2,walltime=01:00:00",
                "cput=00:10:00,mem=2gb,walltime=00:05:00", "workq", "null", "0")
        with open(self.out, "ab") as job_output:     # MoM opens it (as the user) and hands it over
            return self.run(HOOKS / "pbs" / "epilogue", argv, stdout=job_output)

    def errors(self):
        return [line for line in log_lines(self.log) if ": error: " in line]

    def mark(self) -> Path:
        return self.spool / f"{self.job}.jobview"

    def begin_snapshot(self) -> Path:
        return self.spool / f"{self.job}.begin.json"


# Torque's prologue arguments (src/resmom/prolog.c setup_pelog_arguments, 6.0 and later): job id,
# user, group, job name, resources asked, queue, account ("" when unset), the job script
TORQUE_RESOURCES = "nodes=2:ppn=4,walltime=01:00:00"
INSTALLED_MODE = 0o755                # install -o root -g root -m 0755 (hooks/README.md)


class TorqueRig(PbsRig):
    """Torque's MoMs. Each host has its mom_priv, MoM's working directory, where its scripts are
    copies of ours (parallel: prologue.parallel too, as hooks/README.md installs it). A sister's
    MoM runs prologue.parallel as the host joins the job, under the host's own name (a UTS
    namespace: Torque gives the script no other), with PBS_MSHOST and PBS_NODENUM; then the
    primary's runs the prologue, and after the job the epilogue, with Torque 6's arguments."""

    def __init__(self, d, pw, hosts, *, parallel: bool = True, **config_kw):
        super().__init__(d, pw, hosts, **config_kw)
        self.mom_privs = {n: self._mom_priv(d / f"mom_priv-{n}", parallel) for n in NODES}

    @staticmethod
    def _mom_priv(where: Path, parallel: bool) -> Path:
        where.mkdir()
        for name in ("prologue", "epilogue") + (("prologue.parallel",) if parallel else ()):
            shutil.copyfile(HOOKS / "pbs" / name, where / name)
            (where / name).chmod(INSTALLED_MODE)
        return where

    def prologue_args(self) -> tuple[str, ...]:
        script = str(self.mom_privs[NODES[0]] / "jobs" / f"{self.job}.SC")
        return (self.job, self.pw.pw_name, self.group, "myjob", TORQUE_RESOURCES, "batch", "", script)

    def sister(self, node: str, nodenum: int = 1, **env):
        """prologue.parallel on a sister host, as its MoM runs it (env: more or other variables)."""
        script = self.mom_privs[node] / "prologue.parallel"
        run_env = {"LUSTRE_JOBREPORT_DEFAULTS": str(self.defaults), "PBS_MSHOST": NODES[0],
                   "PBS_NODENUM": str(nodenum), "PBS_NUM_NODES": "2", "PBS_O_WORKDIR": str(self.workdir), **env}
        named = ("/bin/sh", "-c", 'hostname "$0" && exec "$@"', node, str(script), *self.prologue_args())
        return run_hook(Path("/usr/bin/unshare"), run_env, ("--uts", *named), cwd=self.mom_privs[node])

    def prologue(self):
        primary = self.mom_privs[NODES[0]]
        return self.run(primary / "prologue", self.prologue_args(), cwd=primary)

    def pbs_pro_prologue(self):
        """The primary's prologue as PBS Professional's MoM calls it (3 arguments), in the same place."""
        primary = self.mom_privs[NODES[0]]
        return self.run(primary / "prologue", self.prologue_args()[:3], cwd=primary)

    def epilogue(self):
        primary = self.mom_privs[NODES[0]]
        argv = (self.job, self.pw.pw_name, self.group, "myjob", "4242", TORQUE_RESOURCES,
                "cput=00:10:00,mem=2gb,walltime=00:05:00", "batch", "", "0", self.prologue_args()[-1])
        with open(self.out, "ab") as job_output:
            return self.run(primary / "epilogue", argv, stdout=job_output, cwd=primary)


def run_job_and_check_its_timeline(rig: PbsRig, clients: dict, bins: int = 30) -> tuple[dict, str]:
    """Once every host's agent keeps the job's start: the job of known phases on both hosts in
    real time (an open storm at start-up on scratch, checkpoints every 6 bins on home), then
    the epilogue, whose report must have the timeline of both hosts, summing to the totals, the
    checkpoints found at their period and a When block per filesystem. The record and the
    text the job got."""
    plan = [phaseload.startup_storm(bins, fs="scratch", storm=3),
            phaseload.checkpoints(bins, fs="home", period=6, first=3)]
    phaseload.drive(list(clients.values()), plan, WIDTH)
    time.sleep(WIDTH)
    rc, took, out, err = rig.epilogue()
    assert (rc, err) == (0, "") and rig.errors() == [], log_lines(rig.log)
    assert not rig.mark().exists() and os.listdir(rig.spool) == []

    [rec] = sorted(rig.records.rglob("*.json"))
    doc = records.load(rec)
    assert doc["job"]["hosts"] == list(NODES) and doc["job"]["hosts_missing"] == [] and doc["data_quality"] == []
    tl = doc["timeline"]
    assert tl["hosts"] == 2 and tl["hosts_without"] == [] and tl["note"] is None
    for fs in ("scratch", "home"):
        assert tl["filesystems"][fs]["sums_to_totals"] is True
        for way in ("read_bytes", "write_bytes"):
            assert sum(tl["filesystems"][fs][way]) == doc["filesystems"][fs][way]
    assert doc["filesystems"]["scratch"]["read_bytes"] > 0 and doc["filesystems"]["home"]["write_bytes"] > 0
    (periodic,) = tl["filesystems"]["home"]["periodic"]
    assert periodic["channel"] == "write_bytes" and abs(periodic["period_s"] - 6 * WIDTH) <= WIDTH
    assert not any(n["id"] == "TIMELINE_NONE" for n in doc["notes"])
    text = rig.out.read_text()
    assert sum(line.strip().startswith("When (") for line in text.splitlines()) == 2, text
    assert "checkpoints:" in text and "start-up burst" in text, text
    return doc, text
