"""lustre-jobreport: PBS Professional / OpenPBS execjob_begin hook.

It keeps a job's start in the Lustre client agent of every host of the job, so that the job is
read through the agents' job view and its report says when it did its I/O (the timeline). PBS's
prologue runs on the primary host alone, so it cannot do this for the other hosts.

Install it once, on the PBS server (the MoMs get it from there):

    qmgr -c "create hook lustre_jobreport event=execjob_begin"
    qmgr -c "import hook lustre_jobreport application/x-python default \\
        /usr/share/lustre-jobreport/hooks/pbs/lustre_jobreport.py"

MoM runs it as root on every host of a job as that host joins the job, before the job starts
(on the primary, before the prologue). It runs the execjob_begin wrapper with the job id, this
host's PBS name, "primary" or "sister" and the job's exec_host. The wrapper holds the bound
([hooks] prolog_timeout_s) and logs every problem in one line in the [hooks] log.

The hook accepts the event whatever happens, so a job never waits for its report nor fails for
it. A wrapper still running after wait_s is killed with its process group, and that is one line
in MoM's log.

Settings, optional, as the hook's configuration file (a JSON object):

    qmgr -c "import hook lustre_jobreport application/x-config default settings.json"

- "wrapper": where the wrapper is (default below);
- "wait_s": how long the hook waits for it (default below). Keep it under the hook's alarm
  (PBS's default: 30 s) and above [hooks] prolog_timeout_s.

Only the standard library: PBS runs hooks in its own Python (3.6 and later).
"""

import json
import os
import signal
import subprocess

import pbs

WRAPPER = "/usr/share/lustre-jobreport/hooks/pbs/execjob_begin"
WAIT_S = 20.0
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SAID_MAX = 300      # characters of a problem in MoM's log


def settings():
    """The hook's settings: its configuration file's, else the defaults."""
    wrapper, wait_s = WRAPPER, WAIT_S
    name = getattr(pbs, "hook_config_filename", None)
    if name:
        with open(name) as f:
            given = json.load(f)
        if not isinstance(given, dict):
            raise ValueError("the hook's configuration file is not a JSON object")
        wrapper = str(given.get("wrapper", wrapper))
        wait_s = float(given.get("wait_s", wait_s))
        if not wait_s > 0:
            raise ValueError("wait_s must be above 0")
    return wrapper, wait_s


def arguments(job):
    """The wrapper's arguments: job id, this host's PBS name, primary|sister, exec_host."""
    exec_host = job.exec_host
    return [str(job.id), str(pbs.get_local_nodename()), "primary" if job.in_ms_mom() else "sister",
            str(exec_host) if exec_host else ""]


def keep_start(job):
    wrapper, wait_s = settings()
    env = dict(os.environ, PATH=PATH)
    proc = subprocess.Popen([wrapper] + arguments(job), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env, close_fds=True, start_new_session=True)
    try:
        proc.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        say("%s still running after %g s: killed" % (wrapper, wait_s))


def say(problem):
    line = " ".join(str(problem).split())[:SAID_MAX]
    pbs.logmsg(pbs.LOG_WARNING, "lustre-jobreport: job start not kept: " + line)


def main():
    event = pbs.event()
    try:
        if event.type == pbs.EXECJOB_BEGIN:
            keep_start(event.job)
    except Exception as exc:        # the job starts whatever happens here
        say("%s: %s" % (type(exc).__name__, exc))
    event.accept()


main()
