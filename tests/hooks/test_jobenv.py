"""Job facts from the scheduler: Slurm hook environment, scontrol lines, PBS argv and node files."""

import grp
import os
import time

import pytest

from lustre_jobreport.hooks import jobenv

# The environment slurmd 22.05 gave a real Epilog on this machine (notes/slurm.md §4.2).
SLURM_EPILOG_ENV = {
    "SLURMD_NODENAME": "vm", "SLURM_CLUSTER_NAME": "ljrtest", "SLURM_CONF": "/x/slurm.conf",
    "SLURM_JOBID": "1", "SLURM_JOB_ID": "1", "SLURM_JOB_CPUS_PER_NODE": "1", "SLURM_JOB_DERIVED_EC": "0",
    "SLURM_JOB_EXIT_CODE2": "3:0", "SLURM_JOB_EXIT_CODE": "768", "SLURM_JOB_GID": "1001",
    "SLURM_JOB_NUM_NODES": "1", "SLURM_JOB_PARTITION": "debug", "SLURM_JOB_RESTART_COUNT": "0",
    "SLURM_JOB_STDIN": "/dev/null", "SLURM_JOB_STDOUT": "/tmp/w/job %j.out", "SLURM_JOB_UID": "1001",
    "SLURM_JOB_USER": "ann", "SLURM_JOB_WORK_DIR": "/tmp/w", "SLURM_NODELIST": "vm",
    "SLURM_SCRIPT_CONTEXT": "epilog_slurmd", "SLURM_UID": "1001"}

# A real `scontrol show job -o` line (Slurm 22.05.8, this machine), output path with a space.
SCONTROL_LINE = (
    "JobId=1 JobName=wrap UserId=ljr-test(1001) GroupId=ljr-test(1001) MCS_label=N/A Priority=4294901759 "
    "Nice=0 Account=(null) QOS=(null) JobState=COMPLETING Reason=None Dependency=(null) Requeue=1 Restarts=0 "
    "BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:00 TimeLimit=UNLIMITED TimeMin=N/A "
    "SubmitTime=2026-11-22T02:54:20 EligibleTime=2026-11-22T02:54:20 AccrueTime=2026-11-22T02:54:20 "
    "StartTime=2026-11-22T02:54:22 EndTime=2026-11-22T02:54:22 Deadline=N/A SuspendTime=None SecsPreSuspend=0 "
    "LastSchedEval=2026-11-22T02:54:22 Scheduler=Main Partition=debug AllocNode:Sid=localhost:10833 "
    "ReqNodeList=(null) ExcNodeList=(null) NodeList=vm BatchHost=vm NumNodes=1 NumCPUs=1 NumTasks=1 "
    "CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=1,node=1,billing=1 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* "
    "CoreSpec=* MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 "
    "OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) Command=(null) WorkDir=/tmp/ljr-exp-RQiM/work "
    "StdErr=/tmp/ljr-exp-RQiM/work/job 1.out StdIn=/dev/null StdOut=/tmp/ljr-exp-RQiM/work/job 1.out Power= ")


def test_slurm_epilog_environment():
    job = jobenv.from_slurm(SLURM_EPILOG_ENV)
    assert (job.job_id, job.user, job.uid, job.gid) == ("1", "ann", 1001, 1001)
    assert job.nodes == ["vm"] and job.this_node == "vm" and job.acts_here
    assert (job.cluster, job.exit_code, job.nodelist) == ("ljrtest", "3:0", "vm")


def test_only_the_first_node_of_a_slurm_job_acts():
    env = dict(SLURM_EPILOG_ENV, SLURM_NODELIST="n[01-03],gpu7")
    firsts = {n: jobenv.from_slurm(dict(env, SLURMD_NODENAME=n)).acts_here for n in ("n01", "n02", "gpu7")}
    assert firsts == {"n01": True, "n02": False, "gpu7": False}
    assert jobenv.from_slurm(dict(env, SLURMD_NODENAME="n02")).nodes == ["n01", "n02", "n03", "gpu7"]


def test_bad_slurm_environments_are_refused():
    with pytest.raises(jobenv.JobEnvError):
        jobenv.from_slurm({k: v for k, v in SLURM_EPILOG_ENV.items() if "JOB" not in k and k != "SLURM_JOBID"})
    for bad in ("../../etc/passwd", "1/2", ".hidden", "a b", "x" * 200):
        with pytest.raises(jobenv.JobEnvError):
            jobenv.from_slurm(dict(SLURM_EPILOG_ENV, SLURM_JOB_ID=bad))
    with pytest.raises(jobenv.JobEnvError):
        jobenv.from_slurm(dict(SLURM_EPILOG_ENV, SLURM_NODELIST="n[01-"))
    # array and PBS-style ids are fine as file names
    assert jobenv.check_job_id("1234_7") == "1234_7" and jobenv.check_job_id("99.pbs01.example") == "99.pbs01.example"


def test_scontrol_line_gives_the_expanded_stdout_with_spaces():
    fields = jobenv.parse_scontrol(SCONTROL_LINE)
    assert jobenv.slurm_stdout(fields) == "/tmp/ljr-exp-RQiM/work/job 1.out"
    assert fields["UserId"] == "ljr-test(1001)" and fields["JobState"] == "COMPLETING"
    assert fields["TRES"] == "cpu=1,node=1,billing=1" and fields["Power"] == ""


def test_job_controlled_strings_cannot_shadow_stdout():
    sneaky = SCONTROL_LINE.replace("JobName=wrap", "JobName=x StdOut=/etc/shadow").replace(
        "StdErr=/tmp/ljr-exp-RQiM/work/job 1.out", "StdErr=/tmp/e StdOut=/root/.bashrc")
    assert jobenv.slurm_stdout(jobenv.parse_scontrol(sneaky)) == "/tmp/ljr-exp-RQiM/work/job 1.out"
    # interactive jobs have no StdOut; a relative one is not trusted either
    assert jobenv.slurm_stdout(jobenv.parse_scontrol("JobId=3 JobName=bash StdIn=/dev/null Power=")) is None
    assert jobenv.slurm_stdout({"StdOut": "slurm-%j.out"}) is None


def test_what_looks_like_a_key_inside_the_job_name_is_the_name():
    fields = jobenv.parse_scontrol(SCONTROL_LINE.replace("JobName=wrap", "JobName=x JobId=999 NodeList=n9"))
    assert (fields["JobName"], fields["JobId"]) == ("x JobId=999 NodeList=n9", "1")
    assert "NodeList" not in fields or fields["NodeList"] != "n9"


def test_pbs_prologue_and_epilogue_argv(tmp_path):
    nodefile = tmp_path / "nodes"
    nodefile.write_text("nodeA\nnodeA\nnodeB\nnodeA\nnodeB\n")   # one line per slot
    env = {"PBS_NODEFILE": str(nodefile), "PBS_O_WORKDIR": "/home/ann/run"}
    pro = jobenv.from_pbs(["123.pbs01", "root", "wheel"], env)
    # names only: their ids come from NSS, which may hang, so not here (pbs_ids, when needed)
    assert (pro.job_id, pro.user, pro.group, pro.uid, pro.gid) == ("123.pbs01", "root", "wheel", None, None)
    assert pro.nodes == ["nodeA", "nodeB"] and pro.acts_here and pro.nodefile == str(nodefile)
    assert (pro.cluster, pro.workdir, pro.exit_code) == ("pbs01", "/home/ann/run", None)
    epi = jobenv.from_pbs(["123.pbs01", "root", "root", "my job", "4242", "ncpus=4,walltime=01:00:00",
                           "cput=00:01:00,mem=1gb", "workq", "null", "3"], env)
    assert epi.exit_code == "3" and epi.extra == {"job_name": "my job"}
    with pytest.raises(jobenv.JobEnvError):
        jobenv.from_pbs(["123"], env)
    with pytest.raises(jobenv.JobEnvError):
        jobenv.from_pbs(["../x", "root", "root"], env)


def test_pbs_node_file_fallbacks(tmp_path):
    # OpenPBS gives its scripts no PBS_NODEFILE: the node file is $PBS_HOME/aux/<jobid>
    (tmp_path / "aux").mkdir()
    (tmp_path / "aux" / "77.srv").write_text("n1.example\nn2.example\n")
    job = jobenv.from_pbs(["77.srv", "root", "root"], {"PBS_HOME": str(tmp_path)})
    assert job.nodes == ["n1.example", "n2.example"] and job.nodefile.endswith("aux/77.srv")
    conf = tmp_path / "pbs.conf"
    conf.write_text(f"PBS_EXEC=/opt/pbs\nPBS_HOME={tmp_path}\n")
    assert jobenv.from_pbs(["77.srv", "root", "root"], {"PBS_CONF_FILE": str(conf)}).nodes == \
        ["n1.example", "n2.example"]
    # nothing at all: this host only
    lone = jobenv.from_pbs(["78", "no-such-user-ljr", "nogroup"], {"PBS_HOME": str(tmp_path / "none")})
    assert lone.nodes == [jobenv.short_hostname()] and lone.nodefile is None
    assert lone.cluster == "pbs"


def test_pbs_ids_as_nss_has_them():
    """The job's group is PBS's $3 (qsub -W group_list), not always the user's own."""
    nogroup = grp.getgrnam("nogroup").gr_gid
    assert jobenv.pbs_ids("root", "root", 5) == (0, 0)
    assert jobenv.pbs_ids("root", "nogroup", 5) == (0, nogroup)
    assert jobenv.pbs_ids("root", None, 5) == (0, 0)                     # no $3: the user's own
    # an unknown user has no uid (then nothing is written as it); an unknown group, the user's
    assert jobenv.pbs_ids("no-such-user-ljr", "nogroup", 5) == (None, nogroup)
    assert jobenv.pbs_ids("root", "no-such-group-ljr", 5) == (0, 0)
    assert jobenv.pbs_ids("0", "0", 5) == (None, None)                  # names, never ids
    assert jobenv.pbs_ids(None, None, 5) == (None, None)


def test_a_hung_pbs_id_lookup_is_one_clear_error_in_its_time(tmp_path):
    getent = tmp_path / "getent"
    getent.write_text("#!/bin/sh\nexec sleep 30\n")
    getent.chmod(0o755)
    started = time.monotonic()
    with pytest.raises(jobenv.JobEnvError) as err:
        jobenv.pbs_ids("ann", "physics", 0.3, getent=str(getent))
    assert str(err.value) == "getent passwd ann: no answer within 0.3 s (a hung NSS source: LDAP, NIS, ...?)"
    assert time.monotonic() - started < 1.5
    with pytest.raises(jobenv.JobEnvError) as err:
        jobenv.pbs_ids("ann", "physics", 0.3, getent=str(tmp_path / "none"))
    assert str(err.value).startswith(f"{tmp_path / 'none'} not found (PATH=")


def test_slurm_shared_nodes_from_squeue(tmp_path):
    """Other jobs on the job's nodes during its run (SHARED_NODE), from squeue's answer."""
    squeue = tmp_path / "squeue"
    squeue.write_text("#!/bin/sh\n[ \"$5\" = 'n[01-02]' ] || exit 9\ncat <<'EOF'\n"
                      "7|n[01-02]|2026-11-22T10:00:00|2026-11-22T11:00:00\n"       # the job itself
                      "8|n02|2026-11-22T10:30:00|2026-11-22T10:40:00\n"            # inside the window
                      "9|n[02-05]|2026-11-22T11:00:00|Unknown\n"                   # starts as it ends
                      "10|n01|2026-11-22T09:00:00|2026-11-22T09:59:59\n"          # before it
                      "11|n03|2026-11-22T10:10:00|2026-11-22T10:20:00\n"          # other nodes
                      "12|n01|N/A|N/A\n"                                          # pending
                      "EOF\n")
    squeue.chmod(0o755)
    job = jobenv.from_slurm(dict(SLURM_EPILOG_ENV, SLURM_JOB_ID="7", SLURM_NODELIST="n[01-02]",
                                 SLURMD_NODENAME="n01"))
    fields = {"JobId": "7", "StartTime": "2026-11-22T10:00:00", "EndTime": "2026-11-22T11:00:00",
              "OverSubscribe": "OK"}
    assert jobenv.slurm_shared_nodes(job, fields, 5, squeue=str(squeue)) == {"n02": "jobs 8, 9"}
    assert jobenv.slurm_shared_nodes(job, dict(fields, OverSubscribe="NO"), 5, squeue="/nonexistent") == {}
    other = jobenv.from_slurm(dict(SLURM_EPILOG_ENV, SLURM_NODELIST="x1", SLURMD_NODENAME="x1"))
    with pytest.raises(jobenv.JobEnvError, match="exit 9"):      # squeue failing is an error
        jobenv.slurm_shared_nodes(other, fields, 5, squeue=str(squeue))


def test_a_passwd_entry_that_is_not_utf8_is_read(tmp_path):
    """A legacy Latin-1 GECOS field (or a Latin-1 Slurm job name in scontrol's output): the
    fields used are ASCII, the rest may be anything, and the hook must not stop on it."""
    getent = tmp_path / "getent"
    getent.write_bytes(b"#!/bin/sh\n[ \"$1\" = passwd ] && printf 'ann:x:1001:1001:Ren\\351:/home/ann:/bin/sh\\n'"
                       b" && exit 0\nprintf 'physics:x:2001:\\n'\n")
    getent.chmod(0o755)
    assert jobenv.pbs_ids("ann", "physics", 5, getent=str(getent)) == (1001, 2001)


def test_pbs_begin_hook_argv():
    """The execjob_begin hook's: job id, this host's PBS name, primary|sister, exec_host. The
    primary is the exec_host's first host whatever its name is written as (PBS says so)."""
    sister = jobenv.from_pbs_hook(["77.srv", "nodeB", "sister", "nodeA/0*4+nodeB/0*4+nodeB/1"], {})
    assert (sister.scheduler, sister.job_id, sister.nodes, sister.this_node) == ("pbs", "77.srv", ["nodeA", "nodeB"], "nodeB")
    assert sister.every_node and sister.pbs_begin_hook and not sister.acts_here and sister.cluster == "srv"
    primary = jobenv.from_pbs_hook(["77.srv", "nodeA.cluster", "primary", "nodeA/0*4+nodeB/0*4"], {})
    assert primary.acts_here and primary.this_node == "nodeA"
    alone = jobenv.from_pbs_hook(["78", "n1", "primary", ""], {})
    assert alone.nodes == ["n1"] and alone.acts_here and alone.cluster == "pbs"


@pytest.mark.parametrize("argv", [
    [], ["77.srv", "nodeA", "primary"], ["77.srv", "nodeA", "mom", "nodeA/0"], ["../x", "nodeA", "primary", "nodeA/0"],
    ["77.srv", "node A", "primary", "nodeA/0"], ["77.srv", "nodeA", "primary", "nodeA/0+;rm -rf/0"],
    ["77.srv", "-nodeA", "sister", "nodeA/0"]])
def test_bad_pbs_begin_hook_argv_is_refused(argv):
    with pytest.raises(jobenv.JobEnvError):
        jobenv.from_pbs_hook(argv, {})


def test_the_prologue_and_epilogue_run_on_the_primary_alone_and_slurm_hooks_on_every_node(tmp_path):
    nodefile = tmp_path / "nodes"
    nodefile.write_text("nodeA\nnodeB\n")
    assert not jobenv.from_pbs(["9.srv", "ann"], {"PBS_NODEFILE": str(nodefile)}).every_node
    assert jobenv.from_slurm({"SLURM_JOB_ID": "5", "SLURM_NODELIST": "n[1-2]", "SLURMD_NODENAME": "n2"}).every_node


# ---- Torque: prologue.parallel on the sisters, the prologue on the primary ------------------------

# Torque's prologue arguments (src/resmom/prolog.c setup_pelog_arguments): 7, and 6.0's job script
TORQUE_5 = ["77.srv", "ann", "physics", "my job", "nodes=2:ppn=4,walltime=01:00:00", "batch", ""]
TORQUE_6 = TORQUE_5 + ["/var/spool/torque/mom_priv/jobs/77.srv.SC"]
SISTER_ENV = {"PBS_MSHOST": "nodeA", "PBS_NODENUM": "1", "PBS_NUM_NODES": "2"}


@pytest.mark.parametrize("argv, torque", [(TORQUE_5, True), (TORQUE_6, True), (TORQUE_5[:3], False),
                                          (TORQUE_5[:2], False), (TORQUE_6 + ["x", "y", "z"], False)])
def test_a_torque_prologue_is_told_by_its_argument_count(argv, torque):
    """PBS Professional and OpenPBS give the prologue 3 arguments, Torque 7 (8 since 6.0)."""
    assert jobenv.is_torque_prologue(argv) is torque


@pytest.mark.parametrize("argv", [TORQUE_5, TORQUE_6])
def test_torque_sister_argv_and_environment(monkeypatch, argv):
    monkeypatch.setattr(jobenv, "short_hostname", lambda: "nodeB")
    sister = jobenv.from_torque_sister(argv, SISTER_ENV)
    assert (sister.scheduler, sister.job_id, sister.user, sister.this_node) == ("pbs", "77.srv", "ann", "nodeB")
    assert sister.nodes == ["nodeA", "nodeB"] and not sister.acts_here and sister.cluster == "srv"
    assert sister.every_node and not sister.hosts_known and not sister.marks and not sister.pbs_begin_hook
    far = jobenv.from_torque_sister(argv, dict(SISTER_ENV, PBS_MSHOST="nodeA.cluster", PBS_NODENUM="12"))
    assert far.nodes == ["nodeA.cluster", "nodeB"] and not far.acts_here


@pytest.mark.parametrize("argv, env", [
    (TORQUE_5[:3], SISTER_ENV),                                  # PBS Pro's argument count
    (TORQUE_6 + ["x"], SISTER_ENV),
    (["../x"] + TORQUE_5[1:], SISTER_ENV),                       # not a job id
    (TORQUE_5, {}),                                              # MoM names no primary
    (TORQUE_5, dict(SISTER_ENV, PBS_NODENUM="0")),               # the primary's own place
    (TORQUE_5, dict(SISTER_ENV, PBS_NODENUM="")),
    (TORQUE_5, dict(SISTER_ENV, PBS_MSHOST="nodeA;rm -rf /")),
    (TORQUE_5, dict(SISTER_ENV, PBS_MSHOST="nodeB.cluster")),     # this host is the primary
])
def test_bad_torque_sister_argv_or_environment_is_refused(monkeypatch, argv, env):
    monkeypatch.setattr(jobenv, "short_hostname", lambda: "nodeB")
    with pytest.raises(jobenv.JobEnvError):
        jobenv.from_torque_sister(argv, env)


def sisters_file(mom_priv, text="#!/bin/sh\n# lustre-jobreport: Torque's prologue.parallel "
                                "(hooks/pbs/prologue.parallel).\nexit 0\n", mode=0o755):
    mom_priv.mkdir(exist_ok=True)
    path = mom_priv / "prologue.parallel"
    path.write_text(text)
    path.chmod(mode)
    return path


def test_the_primary_keeps_its_start_where_our_prologue_parallel_is_in_mom_priv(tmp_path):
    nodefile = tmp_path / "nodes"
    nodefile.write_text("nodeA\nnodeA\nnodeB\n")
    mom_priv = tmp_path / "mom_priv"
    plain = jobenv.from_pbs(TORQUE_6, {"PBS_NODEFILE": str(nodefile)})
    assert jobenv.torque_primary(plain, TORQUE_6, str(mom_priv)) == plain       # no prologue.parallel
    sisters_file(mom_priv)
    for argv in (TORQUE_5, TORQUE_6):
        primary = jobenv.torque_primary(jobenv.from_pbs(argv, {"PBS_NODEFILE": str(nodefile)}), argv, str(mom_priv))
        assert primary.every_node and primary.marks and primary.hosts_known and not primary.pbs_begin_hook
        assert primary.acts_here and primary.nodes == ["nodeA", "nodeB"]
    pro = jobenv.from_pbs(TORQUE_5[:3], {"PBS_NODEFILE": str(nodefile)})
    assert jobenv.torque_primary(pro, TORQUE_5[:3], str(mom_priv)) == pro       # PBS Pro: its begin hook's way


@pytest.mark.parametrize("case", ["other script", "group writable", "not executable", "not root's",
                                  "a directory", "a link to ours"])
def test_a_prologue_parallel_moms_would_refuse_or_not_ours_keeps_no_start(tmp_path, case):
    """MoM runs only a root-owned regular file that no one else may write (prolog.c
    check_pelog_permissions); ours names hooks/pbs/prologue.parallel (a copy, or a site's script
    that runs it). A link to ours is followed, as MoM follows it."""
    mom_priv = tmp_path / "mom_priv"
    if case == "other script":
        sisters_file(mom_priv, "#!/bin/sh\n/usr/local/sbin/check-health\n")
    elif case == "group writable":
        sisters_file(mom_priv, mode=0o775)
    elif case == "not executable":
        sisters_file(mom_priv, mode=0o644)
    elif case == "not root's":
        os.chown(sisters_file(mom_priv), 1, 1)
    elif case == "a directory":
        (mom_priv / "prologue.parallel").mkdir(parents=True)
    else:
        ours = sisters_file(tmp_path / "pkg")
        mom_priv.mkdir()
        (mom_priv / "prologue.parallel").symlink_to(ours)
    found = jobenv.sisters_script(str(mom_priv))
    assert found == (str(mom_priv / "prologue.parallel") if case == "a link to ours" else None)


def test_a_site_script_that_runs_ours_is_ours(tmp_path):
    mom_priv = tmp_path / "mom_priv"
    sisters_file(mom_priv, "#!/bin/sh\n/usr/local/sbin/check-health\n"
                           "/usr/share/lustre-jobreport/hooks/pbs/prologue.parallel \"$@\"\nexit 0\n")
    assert jobenv.sisters_script(str(mom_priv)) == str(mom_priv / "prologue.parallel")


def test_the_shipped_prologue_parallel_installed_in_mom_priv_is_ours(tmp_path):
    """As hooks/README.md installs it: install -o root -g root -m 0755 ... mom_priv/prologue.parallel."""
    from kit.hookkit import HOOKS
    mom_priv = tmp_path / "mom_priv"
    sisters_file(mom_priv, (HOOKS / "pbs" / "prologue.parallel").read_text())
    assert jobenv.sisters_script(str(mom_priv)) == str(mom_priv / "prologue.parallel")
