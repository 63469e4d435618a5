"""End to end on a real Slurm (slurmctld + slurmd + munged started by the test, tests/slurm/
conftest.py): an unprivileged user's batch job drives a simulated Lustre workload (the Enzo job
of the NASA Pleiades study) and its I/O report appears by itself at the end of its output,
with the right numbers; a second job swaps its output for a symlink to a root-owned file and
gets nothing written anywhere. sbatch --wait returns before the Epilog ends, so the test waits
until the jobs have left COMPLETING.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from types import SimpleNamespace

import pytest

from kit.hookkit import SIM
from lustre_jobreport.records import store as records
from lustre_jobreport.report import view as render
from lustre_sim.workloads import TABLE_I_BUCKETS, TABLE_I_READ, TABLE_I_WRITE, TABLE_II   # the Enzo job (notes/io-findings.md)



@pytest.fixture(scope="module")
def jobs(cluster):
    """Both jobs at once (the node has a core for each): the Enzo job and the attacker."""
    victim = cluster.base / "victim"
    victim.write_text("root's own file\n")
    victim.chmod(0o600)
    enzo = cluster.script("enzo.sh", f"""echo "job $SLURM_JOB_ID starts on $(hostname) as $(id -un)"
'{SIM}' run '{cluster.tree}' enzo --fs scratch >/dev/null
echo "job $SLURM_JOB_ID done"
""")
    attack = cluster.script("attack.sh", f"""echo "attacker $SLURM_JOB_ID"
out='{cluster.work}'/attack-$SLURM_JOB_ID.out
rm -f "$out" && ln -s '{victim}' "$out"
""")
    before = (hashlib.sha256(victim.read_bytes()).hexdigest(), os.stat(victim).st_mtime_ns)
    t0 = time.monotonic()
    enzo_id = cluster.submit(enzo, str(cluster.work / "enzo job-%j.out"))     # a space in the path
    attack_id = cluster.submit(attack, str(cluster.work / "attack-%j.out"))
    enzo_job = cluster.wait_done(enzo_id)
    enzo_s = time.monotonic() - t0
    attack_job = cluster.wait_done(attack_id)
    total_s = time.monotonic() - t0
    print(f"\nslurm: enzo job {enzo_id} submit->epilog done {enzo_s:.2f} s; both jobs {total_s:.2f} s; "
          f"startup {cluster.startup_s:.2f} s")
    return SimpleNamespace(enzo_id=enzo_id, enzo=enzo_job, attack_id=attack_id, attack=attack_job,
                           victim=victim, victim_before=before)


def record_of(cluster, job_id):
    found = list(cluster.records.rglob(f"ljrtest-{job_id}.json"))
    assert len(found) == 1, f"record of job {job_id}: {found}\n{cluster.logs()}"
    return records.load(found[0])


def hook_lines(cluster, job_id):
    return [l for l in cluster.hooks_log.read_text().splitlines() if f" job {job_id}: " in l] \
        if cluster.hooks_log.exists() else []


def test_the_report_arrives_at_the_end_of_the_job_output(cluster, jobs):
    assert jobs.enzo["JobState"] == "COMPLETED" and jobs.enzo["ExitCode"] == "0:0", cluster.logs()
    out_path = jobs.enzo["StdOut"]
    assert out_path == str(cluster.work / f"enzo job-{jobs.enzo_id}.out")
    text = open(out_path).read()
    head = f"job {jobs.enzo_id} starts on {cluster.node} as {cluster.pw.pw_name}\njob {jobs.enzo_id} done\n"
    assert text.startswith(head), text[:500]
    doc = record_of(cluster, jobs.enzo_id)
    # the appended text is exactly the rendered report of this job's record, at the very end,
    # its last line where the HTML report is
    assert text == head + "\n" + render.render_text(doc, html_path=out_path + ".lustre.html"), cluster.logs()
    # ... with the Enzo job's numbers (notes/io-findings.md Table I/II), measured through
    # the agent in pmcd on the sim tree that the job itself drove
    fs = doc["filesystems"]["scratch"]
    assert [fs["rpc"]["read"][b] for b in TABLE_I_BUCKETS] == list(TABLE_I_READ)
    assert [fs["rpc"]["write"][b] for b in TABLE_I_BUCKETS] == list(TABLE_I_WRITE)
    assert {k: fs["ops"][k] for k in ("open", "close", "getattr")} == {k: TABLE_II[k] for k in ("open", "close", "getattr")}
    assert (fs["read_bytes"], fs["write_bytes"]) == (TABLE_II["read_bytes"], TABLE_II["write_bytes"])
    assert doc["job"]["id"] == jobs.enzo_id and doc["job"]["user"] == cluster.pw.pw_name
    assert doc["job"]["hosts"] == [cluster.node] and doc["record"]["exit_code"] == "0:0"
    assert "SMALL_RPC_READ" in text and "OPEN_CLOSE_STORM" in text and "12243" in text
    # the attacker ran on the same node: if their times overlapped, the report says so (squeue)
    overlap = jobs.attack["StartTime"] <= jobs.enzo["EndTime"] and jobs.attack["EndTime"] >= jobs.enzo["StartTime"]
    shared = [q for q in doc["data_quality"] if q["id"] == "SHARED_NODE"]
    assert [(q["host"], f"(job {jobs.attack_id})" in q["detail"]) for q in shared] == \
        ([(cluster.node, True)] if overlap else []), (jobs.enzo, jobs.attack, shared)
    # the output stays the user's; the HTML is beside it, the user's too; the spool is empty
    st = os.stat(out_path)
    assert (st.st_uid, st.st_gid) == (cluster.pw.pw_uid, cluster.pw.pw_gid)
    html = out_path + ".lustre.html"
    st = os.stat(html)
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (cluster.pw.pw_uid, stat.S_IMODE(os.stat(out_path).st_mode))
    assert not list(cluster.spool.glob(f"{jobs.enzo_id}.*"))
    lines = hook_lines(cluster, jobs.enzo_id)
    assert not [l for l in lines if ": error: " in l], lines
    assert any(f"report to {out_path};" in l for l in lines), lines


def test_a_job_that_swaps_its_output_for_a_symlink_gets_nothing_written(cluster, jobs):
    assert jobs.attack["JobState"] == "COMPLETED", cluster.logs()
    out_path = jobs.attack["StdOut"]
    assert os.path.islink(out_path) and os.readlink(out_path) == str(jobs.victim)
    after = (hashlib.sha256(jobs.victim.read_bytes()).hexdigest(), os.stat(jobs.victim).st_mtime_ns)
    assert after == jobs.victim_before and jobs.victim.read_text() == "root's own file\n"
    st = os.stat(jobs.victim)
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o600)
    [refused] = [l for l in hook_lines(cluster, jobs.attack_id) if ": error: " in l]
    assert f"report not appended to {out_path}: refused: is a symbolic link" in refused
    assert not os.path.exists(out_path + ".lustre.html")
    assert record_of(cluster, jobs.attack_id)["record"]["report_delivered"] is False


def test_the_node_was_never_drained(cluster, jobs):
    assert cluster.sinfo() in ("idle", "mix"), cluster.run("sinfo", "-R", check=False)
    assert all(p.poll() is None for p in cluster.procs.values())
