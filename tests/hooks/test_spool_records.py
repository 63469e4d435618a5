"""The spool of begin snapshots (root only, atomic, expiring) and the job records."""

import json
import os
import time

import pytest

from kit.hookkit import dead_spec, full_tmpfs
from lustre_jobreport.records import store as records
from lustre_jobreport.acquire import snapshot
from lustre_jobreport.hooks import spool


def snap():
    """A real snapshot, made the way the prolog makes one (of a host that is down: quick)."""
    return snapshot.take([snapshot.HostTarget("vm", dead_spec())], connect_timeout_s=1, fetch_timeout_s=1)


def test_missing_spool_is_created_root_only(tmp_path):
    d = spool.open_spool(tmp_path / "var" / "spool" / "ljr")
    st = os.stat(d)
    assert (st.st_uid, st.st_mode & 0o777) == (os.geteuid(), 0o700)
    assert spool.open_spool(d) == d     # and accepted as it is


@pytest.mark.parametrize("mode", [0o755, 0o770, 0o701])
def test_spool_others_can_reach_is_refused(tmp_path, mode):
    d = tmp_path / "spool"
    d.mkdir()
    os.chmod(d, mode)
    with pytest.raises(spool.SpoolError, match="must be 0700"):
        spool.open_spool(d)


def test_spool_symlink_or_foreign_owner_is_refused(tmp_path, job_user):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(spool.SpoolError, match="symbolic link"):
        spool.open_spool(tmp_path / "link")
    os.chown(real, job_user.pw_uid, job_user.pw_gid)
    with pytest.raises(spool.SpoolError, match="owned by uid"):
        spool.open_spool(real)
    with pytest.raises(spool.SpoolError, match="absolute"):
        spool.open_spool("relative/spool")


def test_put_take_remove(tmp_path):
    d = spool.open_spool(tmp_path / "spool")
    path = spool.put(d, "42", snap())
    assert path.name == "42.begin.json" and os.stat(path).st_mode & 0o777 == 0o600
    back = spool.take(d, "42")
    assert list(back.hosts) == ["vm"] and not back.hosts["vm"].ok and "connect" in back.hosts["vm"].error
    spool.remove(d, "42")
    spool.remove(d, "42")                # twice is fine
    assert spool.take(d, "42") is None and os.listdir(d) == []


def test_corrupt_or_strange_begin_files_are_removed_and_reported(tmp_path):
    d = spool.open_spool(tmp_path / "spool")
    for content in ("{not json", '{"schema": "lustre-jobreport/999", "kind": "snapshot"}', ""):
        spool.begin_path(d, "5").write_text(content)
        with pytest.raises(spool.SpoolError, match="corrupt begin snapshot removed"):
            spool.take(d, "5")
        assert not spool.begin_path(d, "5").exists()
    os.symlink("/etc/passwd", spool.begin_path(d, "6"))
    with pytest.raises(spool.SpoolError, match="not a regular file"):
        spool.take(d, "6")
    assert not os.path.lexists(spool.begin_path(d, "6")) and os.path.exists("/etc/passwd")


def test_stale_begin_snapshots_and_temp_files_expire(tmp_path):
    d = spool.open_spool(tmp_path / "spool")
    now = time.time()
    for name, age_days in (("1.begin.json", 40), ("2.begin.json", 1), (".3.begin.json.abc123", 40),
                           ("unrelated.txt", 400)):
        (d / name).write_text("{}")
        os.utime(d / name, (now - age_days * 86400, now - age_days * 86400))
    assert spool.expire(d, 30 * 86400, now=now) == [".3.begin.json.abc123", "1.begin.json"]
    assert sorted(os.listdir(d)) == ["2.begin.json", "unrelated.txt"]


def test_full_spool_leaves_no_partial_file(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a tiny tmpfs needs root")
    full = tmp_path / "full"
    full.mkdir(mode=0o700)
    with full_tmpfs(full, "size=64k,mode=0700"):
        with pytest.raises(spool.SpoolError, match="No space left"):
            spool.put(spool.open_spool(full), "9", snap())
        assert sorted(os.listdir(full)) == ["filler"]


def test_record_layout_and_content(tmp_path):
    doc = {"schema": "lustre-jobreport/1", "job": {"id": "42", "user": "ann", "end": "2026-03-09T23:59:59Z"},
           "filesystems": {"scratch": {"read_bytes": 2**63 + 5}}}
    path = records.store(doc, tmp_path / "records", "clu", "42", {"scheduler": "slurm", "exit_code": "0:0"})
    assert path == tmp_path / "records" / "2026" / "03" / "09" / "clu-42.json"
    rec = records.load(path)
    assert rec["schema"] == "lustre-jobreport/1" and rec["kind"] == "record"
    assert rec["filesystems"]["scratch"]["read_bytes"] == 2**63 + 5          # exact integers
    assert rec["record"]["cluster"] == "clu" and rec["record"]["exit_code"] == "0:0"
    assert os.stat(path).st_mode & 0o777 == 0o644
    assert [p.name for p in path.parent.iterdir()] == ["clu-42.json"]       # no temp file left
    json.loads(path.read_text())


def test_small_job_begin_via_pminfo_reports_like_the_in_process_snapshot(tmp_path):
    """One pminfo per host (kept raw, parsed at the end) and PCP's bindings give
    the same report, so a job's size does not change its numbers."""
    from lustre_jobreport import config
    from lustre_jobreport.report import document as report
    from lustre_sim import SimClient
    from kit.privpmcd import PrivatePmcd

    client = SimClient.create(tmp_path / "tree", version="2.12.9", filesystems=[("scratch", 4, 1)], seed=4)
    d = spool.open_spool(tmp_path / "spool")
    targets = lambda spec: [snapshot.HostTarget("n1", spec), snapshot.HostTarget("gone", dead_spec())]  # noqa: E731
    with PrivatePmcd(tmp_path / "pmcd", tmp_path / "tree") as pmcd:
        raw = snapshot.fetch_all(targets(pmcd.spec), connect_timeout_s=2, fetch_timeout_s=5, backend="pminfo")
        api = snapshot.take(targets(pmcd.spec), connect_timeout_s=2, fetch_timeout_s=5, backend="pmapi")
        spool.put(d, "1", raw)
        assert b'"pminfo_z"' in spool.begin_path(d, "1").read_bytes()      # kept raw, parsed at the end
        [gone] = raw.failed()
        assert gone.host == "gone" and "cannot connect to pmcd" in gone.error
        assert api.hosts["gone"].error == gone.error == "cannot connect to pmcd: Connection refused"  # the same words
        client.run("overflow", fs="scratch")
        end = snapshot.take(targets(pmcd.spec), connect_timeout_s=2, fetch_timeout_s=5)
    cfg = config.Config()
    via_raw, via_api = report.build(spool.take(d, "1"), end, cfg), report.build(api, end, cfg)
    assert via_raw["filesystems"] == via_api["filesystems"] and via_raw["filesystems"]["scratch"]["read_bytes"] > 0
    assert via_raw["job"]["hosts"] == via_api["job"]["hosts"] == ["n1"]
    assert via_raw["job"]["hosts_missing"] == ["gone"] and via_raw["lustre_versions"] == {"n1": "2.12.9"}
    # the same words (SHORT_JOB gives each begin snapshot's own age)
    assert [q for q in via_raw["data_quality"] if q["id"] != "SHORT_JOB"] == \
        [q for q in via_api["data_quality"] if q["id"] != "SHORT_JOB"]


def test_damaged_raw_begin_is_corrupt(tmp_path):
    d = spool.open_spool(tmp_path / "spool")
    spool.begin_path(d, "2").write_text('{"schema":"lustre-jobreport/1","kind":"begin-pminfo","taken_at":1,'
                                        '"hosts":[{"name":"n","spec":"n","fetched_at":1,"error":null,'
                                        '"pminfo_z":"not base64!"}]}')
    with pytest.raises(spool.SpoolError, match="corrupt begin snapshot removed"):
        spool.take(d, "2")
    assert not spool.begin_path(d, "2").exists()


def test_the_spooled_begin_snapshot_names_its_job(tmp_path):
    d = spool.open_spool(tmp_path / "spool")
    for form, taken in (("tables", snap()), ("raw", snapshot.fetch_all([snapshot.HostTarget("vm", dead_spec())],
                                                                        connect_timeout_s=1, fetch_timeout_s=1,
                                                                        backend="pminfo"))):
        spool.put(d, "42", taken)
        assert json.loads(spool.begin_path(d, "42").read_text())["job_id"] == "42", form
        assert spool.take(d, "42").job_id == "42", form


def test_a_begin_snapshot_of_another_job_is_removed_and_said(tmp_path):
    """A spool mix-up (a file renamed or copied into another job's name): its deltas would be of
    another job's time on other nodes, in a report that looked trusted."""
    d = spool.open_spool(tmp_path / "spool")
    spool.put(d, "41", snap())
    os.rename(spool.begin_path(d, "41"), spool.begin_path(d, "42"))
    with pytest.raises(spool.SpoolError, match=f"{spool.begin_path(d, '42')} is the begin snapshot of job 41, "
                                               "not of job 42; removed it"):
        spool.take(d, "42")
    assert os.listdir(d) == []


def test_a_begin_snapshot_naming_no_job_is_taken_as_it_is(tmp_path):
    """Spooled before begin snapshots named their job (an upgrade mid-job), or of a job whose id a
    snapshot file cannot hold (a PBS array job's '123[4].server'): nothing to check it against."""
    d = spool.open_spool(tmp_path / "spool")
    spool.put(d, "123[4].pbs01", snap())
    assert "job_id" not in json.loads(spool.begin_path(d, "123[4].pbs01").read_text())
    back = spool.take(d, "123[4].pbs01")
    assert back.job_id is None and list(back.hosts) == ["vm"]
    spool.begin_path(d, "2").write_text(json.dumps({"schema": "lustre-jobreport/2", "kind": "snapshot",
                                                    "taken_at": 1.0, "hosts": [], "metrics": {}}))
    assert spool.take(d, "2").job_id is None


def test_a_mark_is_a_root_file_only(tmp_path, job_user):
    """The PBS begin hook's mark: made, seen, taken once; a link or another user's file planted
    under its name is not a mark (and is not written through), an old one expires."""
    d = spool.open_spool(tmp_path / "spool")
    assert not spool.marked(d, "7.srv")
    spool.mark(d, "7.srv")
    spool.mark(d, "7.srv")                        # a requeued job's earlier mark stays one
    assert spool.marked(d, "7.srv") and oct(os.stat(spool.mark_path(d, "7.srv")).st_mode & 0o777) == "0o600"
    assert spool.unmark(d, "7.srv") and not spool.unmark(d, "7.srv") and not spool.marked(d, "7.srv")
    target = tmp_path / "target"
    target.write_text("x")
    os.symlink(target, spool.mark_path(d, "8.srv"))
    assert not spool.marked(d, "8.srv")
    with pytest.raises(spool.SpoolError, match="not a regular file"):
        spool.mark(d, "8.srv")
    assert target.read_text() == "x" and not spool.unmark(d, "8.srv") and target.exists()
    foreign = spool.mark_path(d, "9.srv")
    foreign.write_text("")
    os.chown(foreign, job_user.pw_uid, job_user.pw_gid)
    assert not spool.marked(d, "9.srv")
    spool.mark(d, "10.srv")
    old = time.time() - 9 * 86400
    os.utime(spool.mark_path(d, "10.srv"), (old, old))
    assert spool.expire(d, 8 * 86400) == ["10.srv.jobview"]
