"""The Slurm hook wrappers (hooks/slurm/prolog, epilog) run as slurmd runs them: as root, with
slurmd's environment (no PATH), against private pmcds running the real agent on sim trees; a
stand-in `scontrol` answers `show job -o` in Slurm 22.05's format. Each fault of DESIGN §5 /
issue 3 item 3 is made real and must end the same way: exit 0 within the configured bound, one
log line saying what happened, and nothing wrong in the job's output.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import stat
import time

import pytest

from kit.hookkit import (HOOKS, BarePmcd, BlackHole, Rig, dead_spec, fake_reporter, full_tmpfs, run_hook, slurm_env,
                     write_defaults)
from kit.packed import zeros, zeros_bomb
from lustre_jobreport import catalog
from lustre_jobreport.hooks import entry as hooks
from lustre_jobreport.records import store as records
from lustre_jobreport.report import view as render
from lustre_jobreport.acquire import snapfile
from kit.privpmcd import PrivatePmcd

SLACK = 0.75    # process start/exit around the wrapper's own bound, on a busy CI machine


@pytest.fixture
def rig(wdir, job_user, node):
    return Rig(wdir, job_user, {"vm": node.pmcd.spec})


# The prolog snapshots jobs on at most prolog_cli_max_hosts nodes with one pminfo per node
# (kept raw in the spool), larger ones in-process through PCP's bindings; both must give the same report.
PATHS = pytest.mark.parametrize("cli_max", [16, 0], ids=["pminfo-prolog", "pmapi-prolog"])


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def appended(rig) -> str:
    text = rig.out.read_text()
    assert text.startswith("job output\n")
    return text[len("job output\n"):]


@PATHS
def test_prolog_then_epilog_appends_the_report_with_the_right_numbers(wdir, node, job_user, cli_max):
    rig = Rig(wdir, job_user, {"vm": node.pmcd.spec}, hooks_extra=f"prolog_cli_max_hosts = {cli_max}")
    # stale begin snapshots of jobs that never ended, and a fresh one of a running job
    os.makedirs(rig.spool, mode=0o700)
    old, fresh = rig.spool / "3.begin.json", rig.spool / "6.begin.json"
    for p in (old, fresh):
        p.write_text("{}")
    os.utime(old, (time.time() - 40 * 86400,) * 2)
    rc, took, out, err = rig.prolog(stdout_pattern=str(rig.home / "slurm-%j.out"))
    assert (rc, out, err) == (0, "", "") and took < 5
    st = os.stat(rig.begin)
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o600)
    # the begin snapshot takes what the report differences, not the settings the end is read for
    spooled = set(snapfile.read(rig.begin).metrics)
    assert "lustreclient.osc.read_bytes" in spooled
    assert not spooled & set(catalog.names(catalog.SETTING, catalog.IDENTITY))

    ran = node.client.run("overflow", fs="scratch")

    rc, took, out, err = rig.epilog(stdout_pattern=str(rig.home / "slurm-%j.out"))
    assert (rc, out, err) == (0, "", "") and took < 30
    [rec_path] = rig.record_files()
    assert rec_path.relative_to(rig.records).parts[-1] == "ljrtest-7.json"
    doc = records.load(rec_path)
    fs = doc["filesystems"]["scratch"]
    assert (fs["read_bytes"], fs["write_bytes"]) == (ran["read_bytes"], ran["write_bytes"])
    assert (fs["read_calls"], fs["write_calls"]) == (ran["read_calls"], ran["write_calls"])
    assert {k: fs["ops"][k] for k in ("open", "close", "getattr", "fsync")} == \
        {k: ran["ops"][k] for k in ("open", "close", "getattr", "fsync")}
    assert (fs["rpc"]["read"]["4K"], fs["rpc"]["read"]["1M"], fs["rpc"]["write"]["1M"]) == \
        (ran["rpc_pages"]["read"][1], ran["rpc_pages"]["read"][256], ran["rpc_pages"]["write"][256])
    assert doc["job"]["id"] == "7" and doc["job"]["user"] == job_user.pw_name and doc["job"]["hosts"] == ["vm"]
    # the text at the end of the job's output is the report of exactly this record, its last
    # line where its HTML report is
    html = rig.home / "slurm-7.out.lustre.html"
    assert appended(rig) == "\n" + render.render_text(doc, html_path=str(html))
    assert appended(rig).endswith(f"\nHTML report: {html}\n")
    assert f"job 7 'my job=x' ({job_user.pw_name})" in appended(rig)   # the name as scontrol has it
    assert (doc["job"]["name"], doc["job"]["num_nodes"]) == ("my job=x", 1)
    client = doc["clients"]["vm"]
    assert client["lustre"] == "2.15.4" and client["kernel"] and client["settings"]["scratch"]["max_pages_per_rpc"] == 256
    st = os.stat(rig.out)
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (job_user.pw_uid, 0o644)
    st = os.stat(html)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (job_user.pw_uid, job_user.pw_gid, 0o644)
    assert html.read_text().startswith("<!DOCTYPE html>")
    # the raw SLURM_JOB_STDOUT pattern was not used; the spool is clean but for the running job
    assert not (rig.home / "slurm-%j.out").exists()
    assert sorted(os.listdir(rig.spool)) == ["6.begin.json"]
    assert rig.errors() == []
    done, expired = rig.log_lines()
    assert f"info: slurm epilog job 7: report to {rig.out}; HTML {html}; record {rec_path};" in done
    assert expired.endswith("info: slurm epilog job 7: expired 1 stale spool file(s): 3.begin.json")


def test_only_the_first_node_acts(rig):
    rc, took, out, err = rig.prolog(nodelist="vm0,vm", node="vm")
    assert rc == 0 and not rig.spool.exists() and rig.log_lines() == []
    rc, took, out, err = rig.epilog(nodelist="vm0,vm", node="vm")
    assert rc == 0 and appended(rig) == "" and rig.log_lines() == []


def test_an_html_report_already_there_is_kept_and_the_text_says_it_has_none(rig, job_user):
    """A requeued job has its output file and id again: the first run's HTML report is not
    replaced, and the text, which named the path, says its own was not written there."""
    html = rig.home / "slurm-7.out.lustre.html"
    html.write_text("the first run's report")
    os.chown(html, job_user.pw_uid, job_user.pw_gid)
    assert rig.prolog()[0] == 0
    rc, took, out, err = rig.epilog()
    assert rc == 0 and html.read_text() == "the first run's report"
    lines = appended(rig).splitlines()
    assert lines[-2:] == [f"HTML report: {html}", render.HTML_NOT_WRITTEN]
    assert any("HTML report not written to" in line and "already exists" in line for line in rig.errors())


def test_pmcd_down(wdir, job_user):
    rig = Rig(wdir, job_user, {"vm": dead_spec()})
    rc, took, _, _ = rig.prolog()
    assert rc == 0 and took < 5 + SLACK and not rig.begin.exists()
    [line] = rig.errors()
    assert "no host could be read at job start: vm: cannot connect to pmcd" in line and line.endswith("; nothing spooled")
    rc, took, _, _ = rig.epilog()
    assert rc == 0 and appended(rig) == "" and rig.record_files() == []
    assert "no begin snapshot in the spool" in rig.errors()[-1] and len(rig.errors()) == 2


def test_agent_not_installed(wdir, job_user):
    with BarePmcd(wdir / "barepmcd") as bare:
        rig = Rig(wdir, job_user, {"vm": bare.spec})
        rc, took, _, _ = rig.prolog()
    assert rc == 0 and took < 5 + SLACK and not rig.begin.exists()
    [line] = rig.errors()
    assert "no host could be read at job start" in line and "Unknown metric name" in line


@PATHS
def test_a_hung_host_costs_the_bound_not_the_job(wdir, job_user, node, cli_max):
    hole = BlackHole()
    try:
        # the site's per-host bounds (1 + 1.5 s) fit the hooks' budgets: a hung host costs those
        rig = Rig(wdir, job_user, {"vm": node.pmcd.spec, "hung": hole.spec}, prolog_timeout_s=3.0,
                  epilog_timeout_s=8.0, hooks_extra=f"prolog_cli_max_hosts = {cli_max}",
                  snapshot="connect_timeout_s = 1.0\nfetch_timeout_s = 1.5")
        rc, took, _, _ = rig.prolog(nodelist="vm,hung")
        assert rc == 0 and took < 3 + SLACK
        [line] = rig.errors()
        assert "1 of 2 hosts not read at job start: hung:" in line
        node.client.run("overflow", fs="scratch")
        rc, took, _, _ = rig.epilog(nodelist="vm,hung")
        # a host not read at the start is not waited for again at the end: nothing to difference
        assert rc == 0 and took < 4 + SLACK, rig.log_lines()
    finally:
        hole.close()
    text = appended(rig)
    assert "1 host | 1 unreachable" in text and "scratch: read 1.9 GiB in " in text, rig.log_lines()
    assert "hung could not be read at job start: " in text, text     # timed out, one way or another
    assert len(rig.errors()) == 1, rig.errors()                      # the prolog's, nothing at the end
    doc = records.load(rig.record_files()[0])
    assert doc["job"]["hosts_missing"] == ["hung"]
    assert any(q["id"] == "HOST_UNREACHABLE" and q["host"] == "hung" for q in doc["data_quality"])


def test_lustre_not_mounted(wdir, job_user, tmp_path):
    (tmp_path / "empty").mkdir()
    with PrivatePmcd(tmp_path / "pmcd", tmp_path / "empty") as pmcd:
        rig = Rig(wdir, job_user, {"vm": pmcd.spec})
        assert not rig.spool.exists()                              # and the spool is missing too
        assert rig.prolog()[0] == 0 and rig.begin.exists()
        st = os.stat(rig.spool)
        assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o700)  # made, root only
        assert rig.epilog()[0] == 0
    assert "No Lustre filesystem was mounted on the job's hosts." in appended(rig)
    assert rig.errors() == []


@pytest.mark.parametrize("mode", [0o755, 0o777])
def test_spool_others_can_reach_is_refused(rig, mode):
    os.mkdir(rig.spool)
    os.chmod(rig.spool, mode)
    assert rig.prolog()[0] == 0 and os.listdir(rig.spool) == []
    assert rig.epilog()[0] == 0 and appended(rig) == ""
    assert len(rig.errors()) == 2 and all("must be 0700" in line for line in rig.errors())


def test_spool_full(rig):
    os.mkdir(rig.spool, 0o700)
    with full_tmpfs(rig.spool, "size=64k,mode=0700"):
        rc, took, _, _ = rig.prolog()
        assert rc == 0 and took < 5 + SLACK and os.listdir(rig.spool) == ["filler"]
    [line] = rig.errors()
    assert "cannot write" in line and "No space left on device" in line


def test_corrupt_begin_snapshot(rig):
    os.mkdir(rig.spool, 0o700)
    rig.begin.write_text('{"schema": "lustre-jobreport/1", "kind": "snapshot", "taken_at": "yesterday"}')
    assert rig.epilog()[0] == 0
    assert appended(rig) == "" and not rig.begin.exists() and rig.record_files() == []
    [line] = rig.errors()
    assert f"corrupt begin snapshot removed: {rig.begin}: " in line     # and why, in snapfile's words


@PATHS
def test_a_begin_snapshot_of_another_job_in_the_spool_makes_no_report(wdir, node, job_user, cli_max):
    """The prolog's begin snapshot names its job; one found under this job's name that names
    another (a spool mix-up) would give a report of another job's time that looked trusted:
    one log line, no report, no record, the file gone."""
    import json

    rig = Rig(wdir, job_user, {"vm": node.pmcd.spec}, hooks_extra=f"prolog_cli_max_hosts = {cli_max}")
    assert rig.prolog()[0] == 0 and rig.errors() == []
    doc = json.loads(rig.begin.read_text())
    spooled_as = doc.get("job_id")
    doc["job_id"] = "8"
    rig.begin.write_text(json.dumps(doc))
    node.client.run("overflow", fs="scratch")
    rc, took, out, err = rig.epilog()
    assert (rc, out, err) == (0, "", "") and took < 5
    assert appended(rig) == "" and rig.record_files() == [] and os.listdir(rig.spool) == []
    [line] = rig.errors()
    assert line.endswith(f"slurm epilog job 7: {rig.begin} is the begin snapshot of job 8, not of job 7; "
                         "removed it; no report"), line
    assert spooled_as == "7"


@pytest.mark.parametrize("schema", [1, 2])
@pytest.mark.parametrize("taken_at", ["NaN", "1e300"])
def test_a_begin_snapshot_taken_at_no_time_is_one_line_naming_it(rig, node, taken_at, schema):
    """A begin snapshot whose taken_at is no time (the old reader took NaN for one and failed
    later): one line naming the field, the file removed, exit 0, nothing said to the job."""
    os.mkdir(rig.spool, 0o700)
    rig.begin.write_text('{"schema":"lustre-jobreport/%d","kind":"snapshot","taken_at":%s,"hosts":[{"name":"vm",'
                         '"spec":"%s","ok":true,"error":null,"fetched_at":%f}],"metrics":{}}'
                         % (schema, taken_at, node.pmcd.spec, time.time() - 60))
    rc, took, out, err = rig.epilog()
    assert (rc, out, err) == (0, "", "") and took < 5
    assert appended(rig) == "" and not rig.begin.exists() and rig.record_files() == []
    [line] = rig.errors()
    assert f"corrupt begin snapshot removed: {rig.begin}: not a usable snapshot file: bad taken_at " in line, line


def test_output_swapped_for_a_symlink_to_a_root_file(rig, wdir):
    victim = wdir / "victim"
    victim.write_text("root only\n")
    os.chmod(victim, 0o600)
    before = (digest(victim), os.stat(victim).st_mtime_ns)
    assert rig.prolog()[0] == 0
    rig.out.unlink()
    os.symlink(victim, rig.out)
    os.lchown(rig.out, rig.pw.pw_uid, rig.pw.pw_gid)
    assert rig.epilog()[0] == 0
    assert (digest(victim), os.stat(victim).st_mtime_ns) == before and os.path.islink(rig.out)
    [line] = rig.errors()
    assert f"report not appended to {rig.out}: refused: is a symbolic link" in line
    assert not list(rig.home.glob("*.html"))                       # nothing beside a refused output
    assert records.load(rig.record_files()[0])["record"]["report_delivered"] is False


def test_output_file_deleted_by_the_job(rig):
    assert rig.prolog()[0] == 0
    rig.out.unlink()
    assert rig.epilog()[0] == 0 and not rig.out.exists()
    assert "refused: does not exist (not created)" in rig.errors()[0]


@pytest.mark.parametrize("behaviour", ["fail", "hang"])
def test_scontrol_failing_or_hanging(wdir, job_user, node, behaviour):
    rig = Rig(wdir, job_user, {"vm": node.pmcd.spec}, scontrol=behaviour, epilog_timeout_s=6.0,
              hooks_extra="scheduler_timeout_s = 1.0")
    assert rig.prolog()[0] == 0
    rc, took, _, _ = rig.epilog()
    assert rc == 0 and took < 6 + SLACK and appended(rig) == ""
    why = "Unable to contact slurm controller" if behaviour == "fail" else "no answer within"
    assert why in rig.errors()[0] and len(rig.errors()) == 1, rig.log_lines()
    assert len(rig.record_files()) == 1          # the record is kept all the same


def test_broken_config_is_logged(rig):
    rig.config.write_text(rig.config.read_text() + "\nthis is = not toml [\n")
    rc, took, _, _ = rig.prolog()
    assert rc == 0 and not rig.spool.exists()
    [line] = rig.errors()
    assert "configuration unusable, nothing done" in line


@pytest.mark.parametrize("case", ["missing", "crash", "hang"])
def test_reporter_missing_crashing_or_hanging(rig, case):
    reporter = {"missing": rig.d / "no-such-reporter",
                "crash": fake_reporter(rig.d / "crash", "echo 'Traceback (most recent call last):' >&2\n"
                                       "echo 'RuntimeError: boom' >&2\nkill -SEGV $$\n"),
                "hang": fake_reporter(rig.d / "hang", "exec sleep 30\n")}[case]
    write_defaults(rig.defaults, config=rig.config, reporter=reporter, log=rig.log)
    rig.config.write_text(rig.config.read_text().replace("prolog_timeout_s = 5.0", "prolog_timeout_s = 1.5"))
    rc, took, out, err = rig.prolog()
    assert (rc, out, err) == (0, "", "") and took < 1.5 + SLACK
    [line] = rig.errors()
    assert {"missing": f"cannot run {reporter} (exit 127)", "crash": "died of signal 11: RuntimeError: boom",
            "hang": "killed at the 1.5 s bound ([hooks] prolog_timeout_s)"}[case] in line
    assert "error: slurm prolog job 7: " in line


@pytest.mark.parametrize("broken", ["report.from_delta", "render.render_text"])
def test_an_internal_error_is_one_log_line_and_exit_0(rig, node, monkeypatch, broken):
    """The reporter's own code failing in the middle (building the report, render) is caught and logged
    in one line; the job's begin snapshot does not stay behind in the spool, and what does not
    need the failed step still happens (the record needs the report, not its text)."""
    from lustre_jobreport.report import view as render, document as report

    env = slurm_env("7", rig.pw, rig.defaults)
    assert hooks.run("prolog", "slurm", [], str(rig.config), env=env) == 0 and rig.begin.exists()

    def failing(*a, **k):
        raise RuntimeError("injected failure")
    module, name = broken.split(".")
    monkeypatch.setattr({"report": report, "render": render}[module], name, failing)
    env = slurm_env("7", rig.pw, rig.defaults, context="epilog_slurmd")
    monkeypatch.setenv("PATH", f"{rig.d / 'bin'}:/usr/bin:/bin")     # the stand-in scontrol
    assert hooks.run("epilog", "slurm", [], str(rig.config), env=env) == 0
    [line] = rig.errors()
    assert "RuntimeError: injected failure at test_hook_faults.py:" in line
    assert appended(rig) == "" and not rig.begin.exists() and os.listdir(rig.spool) == []
    assert len(rig.record_files()) == (broken == "render.render_text")


@pytest.mark.parametrize("form", ["schema 2", "schema 1 begin-pminfo"])
def test_a_begin_snapshot_that_inflates_to_gibs_costs_one_line_not_memory_or_the_bound(rig, wdir, form):
    """A 5 MB spool file whose pminfo text inflates to 4 GiB once took 8 GB (a MemoryError under a
    limit) and held the epilog, deaf to its own deadline, until the wrapper's SIGKILL. Spools of
    jobs that began before an upgrade hold schema 1 documents: read within the same bounds."""
    import json

    os.mkdir(rig.spool, 0o700)
    host = {"name": "vm", "spec": "vm", "error": None, "fetched_at": time.time() - 60, "pminfo_z": zeros_bomb(4)}
    doc = ({"schema": "lustre-jobreport/2", "kind": "snapshot", "metrics": {}, "hosts": [dict(host, ok=True)]}
           if form == "schema 2" else {"schema": "lustre-jobreport/1", "kind": "begin-pminfo", "hosts": [host]})
    rig.begin.write_text(json.dumps(dict(doc, taken_at=time.time() - 60)))
    rc, took, _, _ = epilog_limited(rig, wdir, 2 << 20)
    assert rc == 0 and took < 10
    assert appended(rig) == "" and not rig.begin.exists()
    [line] = rig.errors()
    assert "corrupt begin snapshot removed" in line and "pminfo text of vm" in line and "inflates past" in line
    assert "MemoryError" not in line and "gave up" not in line and "killed" not in line


def _children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


@pytest.mark.parametrize("what", ["frozen", "crashed"])
def test_the_bound_holds_when_the_reporter_cannot_stop_itself(wdir, job_user, what):
    """A timer thread cannot run while another thread holds the GIL in one long C call, or while
    the process is frozen: the supervising parent stops the worker at the deadline and says in
    which step, before the wrapper's SIGTERM and SIGKILL. Made real: the worker is frozen
    (SIGSTOP) while its end snapshot waits on a hung host. A worker that crashes (SIGSEGV in a C
    library) is said with its signal and step, at once."""
    import subprocess as sp
    from lustre_jobreport.acquire import hostsnap, snapfile

    hole = BlackHole()
    try:
        rig = Rig(wdir, job_user, {"vm": hole.spec}, epilog_timeout_s=4.0,
                  snapshot="connect_timeout_s = 3.0\nfetch_timeout_s = 3.0")
        os.mkdir(rig.spool, 0o700)
        snapfile.write(snapfile.Snapshot.from_hosts(time.time() - 60, [
            hostsnap.HostSnapshot("vm", hole.spec, ok=True, fetched_at=time.time() - 60)]), rig.begin)
        env = slurm_env(rig.job, rig.pw, rig.defaults, context="epilog_slurmd")
        started = time.monotonic()
        wrapper = sp.Popen([str(HOOKS / "slurm" / "epilog")], env=env, stdin=sp.DEVNULL, stdout=sp.DEVNULL,
                           stderr=sp.DEVNULL, cwd="/", start_new_session=True)
        worker = None
        while worker is None and time.monotonic() - started < 3:
            found = sp.run(["pgrep", "-s", str(wrapper.pid), "-f", "lustre-jobreport.* epilog --scheduler"],
                           capture_output=True, text=True).stdout.split()
            # timeout -> the reporter (the supervisor) -> its fork (the worker) all match; a
            # reporter that did not fork a worker within a second is the worker itself
            workers = [w for p in map(int, found) for s in _children(p) if str(s) in found
                       for w in _children(s) if str(w) in found]
            if not workers and time.monotonic() - started > 1.0:
                workers = [s for p in map(int, found) for s in _children(p) if str(s) in found]
            if workers:
                worker = workers[0]
                time.sleep(0.3)                       # into the end snapshot, waiting on the hung host
                os.kill(worker, signal.SIGSTOP if what == "frozen" else signal.SIGSEGV)
            time.sleep(0.02)
        assert worker is not None, "no reporter process"
        assert wrapper.wait(timeout=10) == 0
        took = time.monotonic() - started
    finally:
        hole.close()
    assert len(rig.errors()) == 1, "\n".join(rig.log_lines())
    [line] = rig.errors()
    if what == "frozen":
        assert took < 4 + SLACK
        assert "epilog_timeout_s = 4 s reached while snapshot of 1 host(s)" in line, line
        assert "stopped it" in line and "killed at the" not in line
    else:
        assert took < 2
        assert "the reporter died of signal 11 while snapshot of 1 host(s)" in line, line
    assert appended(rig) == "" and not rig.begin.exists()


def test_the_bound_holds_while_the_reporter_parses_a_begin_snapshot_in_one_long_call(wdir, job_user):
    """Made real: a 120 MiB begin snapshot is one long json.loads (~3 s, the GIL held: the
    reporter's own timer cannot run) under a 2 s bound: the supervisor stops it before the
    wrapper's signals, says so in one line naming the step, and the spool file is gone."""
    rig = Rig(wdir, job_user, {"vm": "127.0.0.1:1"}, epilog_timeout_s=2.0)
    os.mkdir(rig.spool, 0o700)
    with open(rig.begin, "wb") as f:
        f.write(b'{"schema":"lustre-jobreport/2","kind":"snapshot","taken_at":%d,"hosts":[],"metrics":{},"x":['
                % (time.time() - 60) + b"1," * (60 << 20) + b"1]}")
    rc, took, _, _ = rig.epilog()
    assert rc == 0 and took < 2 + SLACK
    assert len(rig.errors()) == 1, rig.log_lines()
    [line] = rig.errors()
    assert "epilog_timeout_s = 2 s reached while opening the spool" in line and "stopped it" in line, line
    assert not rig.begin.exists() and appended(rig) == ""


def test_a_begin_snapshot_too_large_for_the_memory_is_one_line(rig, wdir):
    """A begin snapshot within the caps whose tables need more than the hook's address space:
    one line saying so (it was 'MemoryError:  at snapformat.py:122'), the file removed."""
    import json

    hosts, width = 2048, 65535                 # just under the cap on values: 1 GiB as u64
    metric = {"pmid": "220.3.0", "sem": "counter", "type": "u64", "instances": [f"i{j}" for j in range(width)],
              "values": "z:" + zeros(64 << 20), "present": "z:"}
    os.mkdir(rig.spool, 0o700)
    rig.begin.write_text(json.dumps({"schema": "lustre-jobreport/2", "kind": "snapshot", "taken_at": time.time() - 60,
                                     "hosts": [{"name": f"n{i}", "spec": "x", "ok": True} for i in range(hosts)],
                                     "metrics": {"lustreclient.osc.read_bytes": metric}}))
    rc, took, _, _ = epilog_limited(rig, wdir, 1 << 20)
    assert rc == 0 and took < 10
    assert appended(rig) == "" and not rig.begin.exists()
    [line] = rig.errors()
    assert f"begin snapshot removed: {rig.begin}: needs more memory to read than this process may use" in line, line
    assert "MemoryError" not in line


def epilog_limited(rig, wdir, kib: int):
    """The Slurm epilog of the rig's job, run with at most kib KiB of address space."""
    limited = wdir / f"epilog-{kib}k"
    limited.write_text(f"#!/bin/sh\nulimit -v {kib}\nexec {HOOKS / 'slurm' / 'epilog'}\n")
    limited.chmod(0o755)
    return run_hook(limited, slurm_env(rig.job, rig.pw, rig.defaults, context="epilog_slurmd"))
