"""Who, what and where of a batch job, as its scheduler tells a root prolog/epilog.

- Slurm (Prolog/Epilog run by slurmd as root, no argv): SLURM_JOB_ID, SLURM_JOB_USER,
  SLURM_JOB_UID/GID, SLURM_NODELIST (SLURM_JOB_NODELIST is absent there), SLURMD_NODENAME,
  SLURM_CLUSTER_NAME; the job's stdout path from `scontrol show job -o` (StdOut=, expanded),
  never SLURM_JOB_STDOUT (the raw, unexpanded pattern).
- PBS/Torque (mom_priv/prologue, epilogue run by MoM as root on the primary host only):
  argv $1 job id, $2 user, $3 group (epilogue: ... $10 exit status); nodes from PBS_NODEFILE,
  else OpenPBS's $PBS_HOME/aux/<jobid>; the epilogue's stdout already is the job's output.
  The user's and group's ids come from NSS (LDAP, NIS, ... which can hang), so from_pbs leaves
  them out: pbs_ids looks them up in a bounded child, only where they are needed (with_owner).
- PBS's execjob_begin hook (hooks/pbs/lustre_jobreport.py, run by every MoM of the job before
  it starts): argv job id, this host's PBS name, "primary" or "sister", the job's exec_host.
- Torque (no hooks): MoM runs mom_priv/prologue.parallel on each sister host as the host joins
  the job, before the job starts, with the prologue's argv (Torque gives its prologues 7 or 8
  arguments, PBS Professional and OpenPBS 3), PBS_MSHOST and PBS_NODENUM (0 the primary's) in
  its environment, and knows no other host of the job; from_torque_sister. Where lustre-jobreport's
  prologue.parallel is installed, the primary's prologue keeps the job's start too (torque_primary).

Everything here comes from root-controlled sources (the daemon's environment and argv), but job
ids still go into file names, so they are checked. Light on purpose: the prolog imports it (a
Job is a NamedTuple: `dataclasses` would cost every job's start the import of `inspect`).
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import time
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Mapping, NamedTuple

from ..acquire import hostnames
from .budget import MIN_SCHEDULER_S, Budget
from ..errors import JobReportError
from .hooklog import HookLog

_JOB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+\-\[\]]{0,127}")
_SCONTROL_KEY = re.compile(r"(?:^|\s)([A-Za-z][A-Za-z0-9_/:]*)=")
_SCONTROL_JOBNAME = re.compile(r"(?:^|\s)JobName=(.*?) UserId=\S*\(\d+\) GroupId=")
GETENT_NOT_FOUND = 2     # getent's exit status for a key its database does not have


class JobEnvError(JobReportError):
    """The scheduler's environment does not describe a job we can act on."""


class Job(NamedTuple):
    scheduler: str                    # "slurm" | "pbs"
    job_id: str                       # safe as a file name (checked)
    user: str | None
    uid: int | None
    gid: int | None
    nodes: list[str]                  # the job's nodes, first = the node that acts
    this_node: str
    cluster: str                      # for record names; safe as a file name
    nodelist: str | None = None       # Slurm: the raw node list (for snapshot.targets_for_nodes)
    nodefile: str | None = None       # PBS: the node file read (for snapshot.read_hosts_file)
    workdir: str | None = None
    exit_code: str | None = None
    extra: Mapping[str, str] = MappingProxyType({})   # read-only: the default is shared
    group: str | None = None          # PBS: the job's group by name ($3); its id is gid once looked up
    every_node: bool = False          # the hook runs on every node of the job (Slurm's prolog and
                                      # epilog, PBS's execjob_begin hook, Torque's prologue.parallel
                                      # and the prologue beside it), not the primary's alone
    pbs_begin_hook: bool = False      # PBS's execjob_begin hook: it keeps the job's start in every
                                      # node's agent, or leaves it to the prologue's snapshot
    marks: bool = False               # on the primary, it tells the epilogue how the job is read
                                      # (the spool's mark: PBS's begin hook, Torque's prologue where
                                      # prologue.parallel keeps the sisters' starts)
    hosts_known: bool = True          # nodes are all the job's (a Torque sister knows itself and
                                      # the primary alone)

    @property
    def acts_here(self) -> bool:
        """Only the job's first node (Slurm) / the primary host (PBS) snapshots and reports."""
        return not self.nodes or self.nodes[0] == self.this_node

    def describe(self) -> str:
        return f"{self.scheduler} job {self.job_id}"


def check_job_id(job_id: str | None) -> str:
    if not job_id or not _JOB_ID.fullmatch(job_id) or ".." in job_id:
        raise JobEnvError(f"unusable job id {job_id!r}")
    return job_id


def safe_name(text: str, fallback: str) -> str:
    name = re.sub(r"[^A-Za-z0-9._-]", "_", text or "").strip("._")[:64]
    return name or fallback


def pbs_cluster(job_id: str) -> str:
    """A PBS job's cluster name for its record: the server in its id ("123.pbs01": pbs01)."""
    return safe_name(job_id.split(".", 1)[1] if "." in job_id else "", "pbs")


def short_hostname() -> str:
    """This node's name without its domain (gethostname's, without importing socket)."""
    return os.uname().nodename.split(".")[0]


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except ValueError:
        return None


def from_slurm(env: dict[str, str]) -> Job:
    job_id = check_job_id(env.get("SLURM_JOB_ID") or env.get("SLURM_JOBID"))
    nodelist = env.get("SLURM_NODELIST") or env.get("SLURM_JOB_NODELIST") or ""
    this = env.get("SLURMD_NODENAME") or short_hostname()
    try:
        nodes = hostnames.expand(nodelist) if nodelist else [this]
    except hostnames.BadNodeList as exc:
        raise JobEnvError(f"bad SLURM_NODELIST {nodelist!r}: {exc}") from None
    return Job("slurm", job_id, env.get("SLURM_JOB_USER") or None,
               _int(env.get("SLURM_JOB_UID")), _int(env.get("SLURM_JOB_GID")), nodes, this,
               safe_name(env.get("SLURM_CLUSTER_NAME", ""), "slurm"),
               nodelist=nodelist or this, workdir=env.get("SLURM_JOB_WORK_DIR"),
               exit_code=env.get("SLURM_JOB_EXIT_CODE2"), every_node=True)


def _pbs_home(env: dict[str, str]) -> str:
    if env.get("PBS_HOME"):
        return env["PBS_HOME"]
    try:
        for line in Path(env.get("PBS_CONF_FILE", "/etc/pbs.conf")).read_text().splitlines():
            key, _, value = line.strip().partition("=")
            if key == "PBS_HOME" and value:
                return value
    except OSError:
        pass
    return "/var/spool/pbs"


def pbs_nodefile(job_id: str, env: dict[str, str]) -> str | None:
    """Torque gives PBS_NODEFILE to its prologue/epilogue; OpenPBS keeps it in $PBS_HOME/aux."""
    candidates = [env.get("PBS_NODEFILE") or ""]
    candidates += [os.path.join(_pbs_home(env), "aux", job_id), os.path.join("/var/spool/torque/aux", job_id)]
    for c in candidates:
        if c and os.path.isfile(c):
            return c
    return None


def read_node_names(path: str) -> list[str]:
    """A PBS node file lists a host once per slot: unique names, first-seen order."""
    names: dict[str, None] = {}
    for line in Path(path).read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            names.setdefault(line.split()[0], None)
    return list(names)


def from_pbs(argv: list[str], env: dict[str, str]) -> Job:
    """argv is the prologue's/epilogue's own: job id, user, group[, job name, ..., exit status].
    The user's and group's ids are not looked up here (see pbs_ids): uid and gid are None."""
    if len(argv) < 2:
        raise JobEnvError(f"PBS hook needs at least job id and user as arguments, got {len(argv)}")
    job_id = check_job_id(argv[0])
    user = argv[1] or None
    group = argv[2] if len(argv) > 2 and argv[2] else None
    this = short_hostname()
    nodefile = pbs_nodefile(job_id, env)
    nodes: list[str] = []
    if nodefile:
        try:
            nodes = read_node_names(nodefile)
        except OSError:
            nodefile = None
    if not nodes:  # no node file: this host is all we know of
        nodes = [this]
    exit_code = argv[9] if len(argv) > 9 else None
    extra = {"job_name": argv[3]} if len(argv) > 3 else {}
    # PBS runs these scripts on the primary host only, so this host acts whatever it is called.
    return Job("pbs", job_id, user, None, None, nodes, nodes[0], pbs_cluster(job_id),
               nodefile=nodefile, workdir=env.get("PBS_O_WORKDIR"),   # (PBS_JOBDIR may be a sandbox)
               exit_code=exit_code, extra=extra, group=group)


_PBS_HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,254}")


def exec_hosts(exec_host: str) -> list[str]:
    """The hosts of a PBS exec_host ("nodeA/0*2+nodeB/1+nodeB/2"), each once, the primary first
    (PBS lists the mother superior first). A malformed entry is refused, never guessed at."""
    hosts: dict[str, None] = {}
    for entry in filter(None, exec_host.split("+")):
        host = entry.split("/", 1)[0]
        if not _PBS_HOST.fullmatch(host):
            raise JobEnvError(f"bad PBS exec_host entry {entry[:80]!r}")
        hosts.setdefault(host, None)
    return list(hosts)


def from_pbs_hook(argv: list[str], env: dict[str, str]) -> Job:
    """The execjob_begin hook's argv: job id, this host's PBS name (pbs.get_local_nodename()),
    "primary" or "sister" (pbs's job.in_ms_mom()), the job's exec_host. On the primary, this
    host is the exec_host's first (PBS says so: a name written another way there is not taken
    for a sister); on a sister, the name PBS gave it, which the [snapshot] local_spec pattern
    may use. Neither the user nor the nodes' files are needed to keep a job's start."""
    if len(argv) != 4 or argv[2] not in ("primary", "sister"):
        raise JobEnvError("PBS begin hook needs job id, host name, primary|sister and exec_host "
                          f"as arguments, got {len(argv)}")
    job_id = check_job_id(argv[0])
    if not _PBS_HOST.fullmatch(argv[1]):
        raise JobEnvError(f"bad PBS host name {argv[1][:80]!r}")
    nodes = exec_hosts(argv[3]) or [argv[1]]
    this = nodes[0] if argv[2] == "primary" else argv[1]
    return Job("pbs", job_id, None, None, None, nodes, this, pbs_cluster(job_id), every_node=True,
               pbs_begin_hook=True, marks=True)


# ---- Torque: prologue.parallel on the sisters, the prologue on the primary ----------------------

TORQUE_PROLOGUE_ARGC = (7, 8)     # src/resmom/prolog.c setup_pelog_arguments: 7, and the job
                                  # script's path since 6.0; PBS Pro and OpenPBS give 3
SISTERS_SCRIPT = "prologue.parallel"
SISTERS_SIGN = "hooks/pbs/prologue.parallel"   # in our wrapper's text, and in a site's own script
                                               # that runs ours by its installed path
_SIGN_WITHIN = 65536              # bytes of the script searched for SISTERS_SIGN


def is_torque_prologue(argv: list[str]) -> bool:
    """Whether a prologue's arguments are Torque's (job id, user, group, job name, resources
    asked, queue, account[, job script]) rather than PBS Professional's or OpenPBS's three."""
    return len(argv) in TORQUE_PROLOGUE_ARGC


def sisters_script(mom_priv: str) -> str | None:
    """lustre-jobreport's prologue.parallel in Torque's mom_priv, where MoM would run it on every
    sister host (the path), else None. MoM runs a pro/epilogue only if it is a regular file of
    root's, readable and executable by it and writable by no one else (prolog.c
    check_pelog_permissions): one it would refuse keeps no sister's start. Ours: its text names
    SISTERS_SIGN (a copy of hooks/pbs/prologue.parallel, or a site's script that runs it), so a
    site's own prologue.parallel for something else is not taken for one that keeps the starts."""
    path = os.path.join(mom_priv, SISTERS_SCRIPT)
    try:
        st = os.stat(path)
        if (not stat.S_ISREG(st.st_mode) or st.st_uid != 0 or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
                or st.st_mode & (stat.S_IRUSR | stat.S_IXUSR) != (stat.S_IRUSR | stat.S_IXUSR)):
            return None
        with open(path, "rb") as f:
            text = f.read(_SIGN_WITHIN)
    except OSError:
        return None
    return path if SISTERS_SIGN.encode() in text else None


def torque_primary(job: Job, argv: list[str], mom_priv: str) -> Job:
    """The prologue's job on the primary host, kept like a Slurm job's where Torque's sisters keep
    theirs: a Torque prologue (its argument count) with our prologue.parallel in mom_priv (the
    prologue's working directory: MoM's, mom_main.c chdir(mom_home)) runs on every node of the job
    with the sisters' scripts, stores the primary's start itself and marks the job for the
    epilogue. Any other prologue is the primary's alone, as before (it follows a mark or snapshots)."""
    if not is_torque_prologue(argv) or sisters_script(mom_priv) is None:
        return job
    return job._replace(every_node=True, marks=True)


def from_torque_sister(argv: list[str], env: dict[str, str]) -> Job:
    """Torque's prologue.parallel on a sister host: the prologue's argv, the primary from
    PBS_MSHOST and this host's place in the job from PBS_NODENUM (1 or more: a sister's; prolog.c
    setup_pelog_environment). This host is its own name (Torque gives it no other). Torque tells a
    sister no other host (no node file, no exec_host), so its job's size is not known here."""
    if not is_torque_prologue(argv):
        raise JobEnvError(f"Torque's prologue.parallel gets 7 or 8 arguments, got {len(argv)}")
    job_id = check_job_id(argv[0])
    primary, place = env.get("PBS_MSHOST", ""), _int(env.get("PBS_NODENUM"))
    this = short_hostname()
    if not _PBS_HOST.fullmatch(primary) or place is None or place < 1 or primary.split(".")[0] == this:
        raise JobEnvError(f"job {job_id}: prologue.parallel is for a sister host, and MoM gave it PBS_MSHOST "
                          f"{primary[:80]!r} and PBS_NODENUM {env.get('PBS_NODENUM', '')[:20]!r} on {this}: "
                          "the job's start not kept here")
    return Job("pbs", job_id, argv[1] or None, None, None, [primary, this], this, pbs_cluster(job_id),
               every_node=True, hosts_known=False)


def _nss_entry(database: str, name: str | None, timeout_s: float, getent: str) -> list[str] | None:
    """The fields of `name`'s entry in an NSS database (passwd, group), or None if it has none.
    getent, not pwd/grp: a child that can be killed when NSS hangs (and holds the GIL)."""
    if not name or name.startswith("-") or not name.isprintable() or ":" in name:
        return None   # not a name getent could be asked about, nor one NSS could hold
    out = _run_tool([getent, database, name], f"getent {database} {name}", timeout_s,
                    f"{getent} not found (PATH={os.environ.get('PATH', '')})",
                    hung="a hung NSS source: LDAP, NIS, ...?", absent=GETENT_NOT_FOUND)
    fields = (out or "").split("\n", 1)[0].split(":")
    # getent takes a number for an id: a user "1001" must not be uid 1001's entry
    return fields if len(fields) >= 4 and fields[0] == name else None


def pbs_ids(user: str | None, group: str | None, timeout_s: float,
            getent: str = "getent") -> tuple[int | None, int | None]:
    """The uid of the PBS job's user and the gid of its group (else the user's own), as NSS has
    them, within about timeout_s; None for what NSS does not know. JobEnvError if NSS does not
    answer in time."""
    deadline = time.monotonic() + timeout_s
    pw = _nss_entry("passwd", user, timeout_s, getent)
    uid, gid = (_int(pw[2]), _int(pw[3])) if pw else (None, None)
    if group:
        gr = _nss_entry("group", group, deadline - time.monotonic(), getent)
        gid = _int(gr[2]) if gr else gid
    return uid, gid


def with_owner(job: Job, hk: dict, log: HookLog, budget: Budget) -> Job | None:
    """The job as writing the HTML report beside its output (as the job user) needs it: a PBS
    job's ids are looked up now, as a named step within the scheduler's time (hk:
    scheduler_timeout_s), and only if the HTML goes there. None if NSS did not answer: one log
    line, and nothing may be written as the user (never as root instead)."""
    if job.scheduler != "pbs" or job.uid is not None or hk["html"] != "beside" \
            or not (job.workdir or "").startswith("/"):   # no HTML beside a relative path (delivery)
        return job
    budget.step = f"looking up the job's user {job.user} and group {job.group}"
    try:
        uid, gid = pbs_ids(job.user, job.group, budget.for_scheduler(float(hk["scheduler_timeout_s"])))
    except (JobEnvError, OSError) as exc:   # (OSError: getent could not even be started)
        log.error(f"{exc}; no HTML report beside the output")
        return None
    return job._replace(uid=uid, gid=gid)


def parse_scontrol(line: str) -> dict[str, str]:
    """`scontrol show job -o` is one line of Key=Value separated by spaces; values may contain
    spaces (paths, job names), so a value runs to the next ` Key=`. A key seen twice keeps its
    last value: job-controlled strings (JobName, Comment, StdErr) come before StdOut, so a job
    named "x StdOut=/etc/shadow" cannot shadow the real field. (The append runs as the job user
    anyway, so a confused path could only ever reach the user's own files.)"""
    line = line.strip()
    marks = list(_SCONTROL_KEY.finditer(line))
    # The job name is the user's free text and may hold " word=" itself; scontrol prints it
    # right before UserId=name(uid) GroupId=, which pins where it ends: what looks like a key
    # inside it is not one (a job named "x JobId=9" must not change the job's id).
    if (named := _SCONTROL_JOBNAME.search(line)) is not None:
        inside = range(named.start(1), named.end(1))
        marks = [m for m in marks if m.start(1) not in inside]
    fields: dict[str, str] = {}
    for m, nxt in zip(marks, marks[1:] + [None]):
        end = nxt.start() if nxt else len(line)
        fields[m.group(1)] = line[m.end():end].strip()
    return fields


def _run_tool(argv: list[str], what: str, timeout_s: float, missing: str, *, hung: str = "",
              absent: int | None = None) -> str | None:
    """A command's standard output (scontrol, squeue, getent), None if it exits `absent` (what
    it was asked about does not exist); JobEnvError saying what went wrong otherwise (hung: what
    no answer in time may mean)."""
    try:   # any bytes decode (a Latin-1 GECOS or job name): the fields used are ASCII
        proc = subprocess.run(argv, capture_output=True, text=True, errors="replace",
                              timeout=max(MIN_SCHEDULER_S, timeout_s), stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise JobEnvError(missing) from None
    except subprocess.TimeoutExpired:
        raise JobEnvError(f"{what}: no answer within {max(MIN_SCHEDULER_S, timeout_s):.1f} s"
                          + (f" ({hung})" if hung else "")) from None
    if proc.returncode == absent:
        return None
    if proc.returncode != 0:
        raise JobEnvError(f"{what}: {(proc.stderr.strip().splitlines() or [f'exit {proc.returncode}'])[-1]}")
    return proc.stdout


def slurm_job_fields(job_id: str, timeout_s: float, scontrol: str = "scontrol") -> dict[str, str]:
    out = _run_tool([scontrol, "show", "job", "-o", job_id], f"scontrol show job {job_id}",
                    timeout_s, f"{scontrol} not found (PATH={os.environ.get('PATH', '')})")
    for line in out.splitlines():
        if line.strip().startswith(f"JobId={job_id} "):
            return parse_scontrol(line)
    raise JobEnvError(f"scontrol show job {job_id}: job not in its answer")


def _slurm_time(text: str | None) -> datetime | None:
    try:
        return datetime.strptime(text or "", "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return None


def slurm_shared_nodes(job: Job, fields: dict[str, str], timeout_s: float,
                       squeue: str = "squeue") -> dict[str, str]:
    """The job's nodes that other jobs used while it ran: {node: "job 5, 9"} (SHARED_NODE).

    Exclusive jobs (OverSubscribe=NO) are not asked about. Jobs slurmctld has already forgotten
    (MinJobAge) cannot be seen: this is a lower bound."""
    if fields.get("OverSubscribe", "").upper() == "NO":
        return {}
    start, end = _slurm_time(fields.get("StartTime")), _slurm_time(fields.get("EndTime")) or datetime.max
    if start is None:
        return {}
    me = {fields.get("JobId", job.job_id), job.job_id}
    if fields.get("ArrayJobId") and fields.get("ArrayTaskId"):
        me.add(f"{fields['ArrayJobId']}_{fields['ArrayTaskId']}")
    out = _run_tool([squeue, "-h", "-t", "all", "-w", job.nodelist or ",".join(job.nodes),
                     "-o", "%i|%N|%S|%e"], "squeue", timeout_s, f"{squeue} not found")
    mine = set(job.nodes)
    others: dict[str, list[str]] = {}
    for line in out.splitlines():
        parts = line.strip().split("|")
        if len(parts) != 4 or parts[0] in me:
            continue
        o_start, o_end = _slurm_time(parts[2]), _slurm_time(parts[3]) or datetime.max
        if o_start is None or not (o_start <= end and o_end >= start):  # 1 s resolution: inclusive
            continue
        try:
            nodes = hostnames.expand(parts[1])
        except hostnames.BadNodeList:
            continue
        for n in mine.intersection(nodes):
            others.setdefault(n, []).append(parts[0])
    return {n: ("job " if len(ids) == 1 else "jobs ") + ", ".join(sorted(ids)[:5]) + (" ..." if len(ids) > 5 else "")
            for n, ids in others.items()}


def slurm_ids(fields: dict[str, str]) -> tuple[int | None, int | None]:
    """The job's uid and gid from `UserId=ann(1001) GroupId=ann(1001)`."""
    return _paren_int(fields.get("UserId")), _paren_int(fields.get("GroupId"))


def _paren_int(value: str | None) -> int | None:
    if value and value.endswith(")") and "(" in value:
        return _int(value[value.rindex("(") + 1:-1])
    return None


def slurm_stdout(fields: dict[str, str]) -> str | None:
    """The expanded StdOut path, or None (interactive jobs have none)."""
    path = fields.get("StdOut", "")
    return path if path.startswith("/") else None


# ---- what the scheduler tells about a job, for its record (report.JOB_FACTS) -------------------

def _fact(value: str | None) -> str | None:
    """A scheduler string, or None for what it prints when unset."""
    value = (value or "").strip()
    return None if value in ("", "(null)", "null", "N/A") else value


def slurm_facts(fields: dict[str, str] | None, env: dict[str, str], job: Job) -> dict:
    """From `scontrol show job` (JobName, Command, Partition, Account, NumNodes, NumTasks), else
    what the Epilog's environment has (SLURM_JOB_PARTITION, SLURM_JOB_NUM_NODES; the Epilog gets
    no job name or account, notes/slurm.md §4.2)."""
    fields = fields or {}
    return {"name": _fact(fields.get("JobName")),
            "command": _fact(fields.get("Command")),
            "partition": _fact(fields.get("Partition")) or _fact(env.get("SLURM_JOB_PARTITION")),
            "account": _fact(fields.get("Account")) or _fact(env.get("SLURM_JOB_ACCOUNT")),
            "num_nodes": _int(fields.get("NumNodes", "").split("-")[0]) or _int(env.get("SLURM_JOB_NUM_NODES"))
            or len(job.nodes) or None,
            "num_tasks": _int(fields.get("NumTasks", "").split("-")[0])}


def pbs_epilogue_facts(argv: list[str], job: Job) -> dict:
    """The epilogue's arguments (OpenPBS and Torque alike): $4 job name, $8 queue, $9 account
    ("null" when unset); nodes from the node file."""
    def arg(i: int) -> str | None:
        return _fact(argv[i]) if len(argv) > i else None
    return {"name": arg(3), "command": None, "partition": arg(7), "account": arg(8),
            "num_nodes": len(job.nodes) or None, "num_tasks": None}
