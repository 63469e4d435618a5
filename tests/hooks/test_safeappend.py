"""Writing into the job user's files from a root hook: every trick a job can play is refused.

Each attack is set up as the job itself could (or as root, to stand for files the job can only
point at); the check is always the same: nothing written where it must not be, the target
byte-for-byte unchanged, a reason given, and no hang.
"""

import json
import os
import pwd
import stat
import subprocess
import sys
import threading
import time

import pytest

from kit.hookkit import full_tmpfs, user_dir, user_file
from kit.nsshang import HANG_S, hung_group_lookups
from lustre_jobreport.safeio.safeappend import append_as_user, create_as_user

REPORT = b"\n--- Lustre I/O report ---\n"


@pytest.fixture
def home(wdir, job_user):
    return user_dir(wdir / "home", job_user)


def append(path, pw, data=REPORT, **kw):
    return append_as_user(str(path), data, pw.pw_uid, pw.pw_gid, pw.pw_name, **kw)


def root_file(path, text="root's secret\n", mode=0o600):
    path.write_text(text)
    os.chmod(path, mode)
    return path


def snapshot_of(path):
    st = os.lstat(path)
    return path.read_bytes(), st.st_mtime_ns, st.st_uid, stat.S_IMODE(st.st_mode)


def test_appends_to_the_users_own_output(home, job_user):
    out = user_file(home / "slurm-1.out", job_user, "job output\n", mode=0o640)
    res = append(out, job_user)
    assert res.ok and res.mode == 0o640
    assert out.read_bytes() == b"job output\n" + REPORT
    st = os.stat(out)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (job_user.pw_uid, job_user.pw_gid, 0o640)


def test_symlink_to_a_root_file_is_refused(wdir, home, job_user):
    victim = root_file(wdir / "victim")
    before = snapshot_of(victim)
    out = home / "slurm-2.out"
    os.symlink(victim, out)
    os.lchown(out, job_user.pw_uid, job_user.pw_gid)   # the job made the link
    res = append(out, job_user)
    assert not res.ok and "symbolic link" in res.reason
    assert snapshot_of(victim) == before


def test_symlink_to_the_users_own_file_is_refused_too(home, job_user):
    real = user_file(home / "real.out", job_user, "x\n")
    os.symlink(real, home / "link.out")
    assert not append(home / "link.out", job_user).ok and real.read_text() == "x\n"


def test_symlinked_directory_into_root_only_space_is_refused(wdir, job_user, home):
    secret_dir = wdir / "rootonly"
    secret_dir.mkdir(mode=0o700)
    victim = root_file(secret_dir / "slurm-3.out", mode=0o666)   # even world-writable
    before = snapshot_of(victim)
    os.symlink(secret_dir, home / "out")
    res = append(home / "out" / "slurm-3.out", job_user)
    assert not res.ok and "not writable by the job user" in res.reason
    assert snapshot_of(victim) == before


def test_fifo_without_a_reader_is_refused_without_hanging(home, job_user):
    fifo = home / "slurm-4.out"
    os.mkfifo(fifo, 0o666)
    os.chown(fifo, job_user.pw_uid, job_user.pw_gid)
    t0 = time.monotonic()
    res = append(fifo, job_user, timeout_s=5)
    assert not res.ok and "FIFO" in res.reason and time.monotonic() - t0 < 2


def test_fifo_with_a_reader_is_refused_and_gets_nothing(home, job_user):
    fifo = home / "slurm-5.out"
    os.mkfifo(fifo, 0o666)
    os.chown(fifo, job_user.pw_uid, job_user.pw_gid)
    got = []
    rfd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        res = append(fifo, job_user)
        time.sleep(0.05)
        try:
            got.append(os.read(rfd, 4096))
        except BlockingIOError:
            got.append(b"")
    finally:
        os.close(rfd)
    assert not res.ok and "FIFO" in res.reason and got == [b""]


def test_directory_device_and_missing_file(home, job_user):
    user_dir(home / "adir", job_user)
    assert "directory" in append(home / "adir", job_user).reason
    assert "device" in append("/dev/null", job_user).reason
    res = append(home / "gone.out", job_user)
    assert not res.ok and "does not exist" in res.reason
    assert not (home / "gone.out").exists()            # never created


def test_hard_links_are_refused(wdir, home, job_user):
    own = user_file(home / "own.out", job_user, "mine\n")
    os.link(own, home / "slurm-6.out")
    res = append(home / "slurm-6.out", job_user)
    assert not res.ok and "2 hard links" in res.reason and own.read_text() == "mine\n"
    # a hard link to a root file that the user may write (0666): refused by owner, unchanged
    shared = root_file(wdir / "shared", mode=0o666)
    os.link(shared, home / "slurm-7.out")
    before = snapshot_of(shared)
    res = append(home / "slurm-7.out", job_user)
    assert not res.ok and "owned by uid 0" in res.reason and snapshot_of(shared) == before


def test_someone_elses_file_is_refused_even_if_writable(home, job_user):
    nobody = pwd.getpwnam("nobody")
    other = home / "slurm-8.out"
    other.write_text("nobody's\n")
    os.chown(other, nobody.pw_uid, nobody.pw_gid)
    os.chmod(other, 0o666)
    res = append(other, job_user)
    assert not res.ok and f"owned by uid {nobody.pw_uid}" in res.reason and other.read_text() == "nobody's\n"


def test_root_powers_are_really_gone(wdir, home, job_user):
    # root ignores permission bits; the job user does not: a 0400 file of the user is refused
    ro = user_file(home / "slurm-9.out", job_user, "ro\n", mode=0o400)
    assert "not writable" in append(ro, job_user).reason and ro.read_text() == "ro\n"
    # root's supplementary groups are dropped: a directory only group root may enter is closed
    gdir = wdir / "grouproot"
    gdir.mkdir()
    os.chown(gdir, pwd.getpwnam("nobody").pw_uid, 0)
    os.chmod(gdir, 0o070)
    inside = user_file(gdir / "slurm-10.out", job_user, "in\n")
    assert "not writable" in append(inside, job_user).reason and inside.read_text() == "in\n"


def test_create_on_an_existing_fifo_fails_at_once(home, job_user):
    fifo = home / "blocked"
    os.mkfifo(fifo, 0o666)
    os.chown(fifo, job_user.pw_uid, job_user.pw_gid)
    t0 = time.monotonic()
    res = create_as_user(str(fifo), b"x", job_user.pw_uid, job_user.pw_gid, timeout_s=1)
    assert not res.ok and "already exists" in res.reason and time.monotonic() - t0 < 1


def test_a_hung_writer_is_abandoned_in_time(home, job_user, monkeypatch):
    """A writer stuck in the kernel (a hung NFS server) costs the bound, not the hook."""
    from lustre_jobreport.safeio import safeappend
    monkeypatch.setattr(safeappend, "_child", lambda *a: time.sleep(30) or "ok 644")  # runs in the fork
    out = user_file(home / "slurm-14.out", job_user, "x\n")
    t0 = time.monotonic()
    res = append(out, job_user, timeout_s=1)
    assert not res.ok and "no answer within 1 s" in res.reason and time.monotonic() - t0 < 2.5


def test_create_makes_a_new_user_file_and_never_replaces(wdir, home, job_user):
    target = home / "slurm-11.out.lustre.html"
    res = create_as_user(str(target), b"<html>", job_user.pw_uid, job_user.pw_gid, job_user.pw_name, mode=0o640)
    assert res.ok
    st = os.stat(target)
    assert (st.st_uid, stat.S_IMODE(st.st_mode), target.read_bytes()) == (job_user.pw_uid, 0o640, b"<html>")
    res = create_as_user(str(target), b"again", job_user.pw_uid, job_user.pw_gid)
    assert not res.ok and "already exists" in res.reason and target.read_bytes() == b"<html>"
    victim = root_file(wdir / "victim2")
    before = snapshot_of(victim)
    os.symlink(victim, home / "evil.html")
    res = create_as_user(str(home / "evil.html"), b"x", job_user.pw_uid, job_user.pw_gid)
    assert not res.ok and snapshot_of(victim) == before
    # a directory the user cannot write (root's): nothing created
    res = create_as_user(str(wdir / "new.html"), b"x", job_user.pw_uid, job_user.pw_gid)
    assert not res.ok and not (wdir / "new.html").exists()


def test_unknown_uid_writes_nothing(home, job_user):
    out = user_file(home / "slurm-12.out", job_user, "x\n")
    res = append_as_user(str(out), REPORT, None, None)
    assert not res.ok and out.read_text() == "x\n"


def test_parallel_appends_from_threads_do_not_interleave(home, job_user):
    out = user_file(home / "slurm-13.out", job_user, "")
    results = []
    threads = [threading.Thread(target=lambda i=i: results.append(append(out, job_user, f"line {i}\n".encode())))
               for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r.ok for r in results)
    assert sorted(out.read_text().splitlines()) == sorted(f"line {i}" for i in range(8))


def test_a_hung_group_lookup_costs_the_writers_bound_not_the_hook(home, job_user, tmp_path):
    """The job user's groups come from NSS (LDAP, NIS, ...), which can hang; os.getgrouplist
    holds the GIL meanwhile, so not even the hook's watchdog thread could run. The lookup must
    cost the writer's bound and no more. Made real: in a private mount namespace, NSS asks
    hesiod for groups, and hesiod's DNS server is a UDP port that never answers."""
    out = user_file(home / "slurm-15.out", job_user, "x\n")
    code = f"""
import json, os, time
from lustre_jobreport.safeio.safeappend import append_as_user
t0 = time.monotonic()
res = append_as_user({str(out)!r}, b"report\\n", {job_user.pw_uid}, {job_user.pw_gid}, {job_user.pw_name!r},
                     timeout_s=1)
took = time.monotonic() - t0
t0 = time.monotonic()
os.getgrouplist({job_user.pw_name!r}, {job_user.pw_gid})      # the same lookup, in this process
print(json.dumps([res.ok, res.reason, took, time.monotonic() - t0]))
"""
    with hung_group_lookups(tmp_path) as nss:
        proc = subprocess.run(nss.command([sys.executable, "-c", code]), capture_output=True, text=True,
                              timeout=60, env=nss.env(dict(os.environ)))
    assert proc.returncode == 0, proc.stderr
    ok, reason, took, lookup = json.loads(proc.stdout)
    assert lookup >= HANG_S - 0.1                           # the lookup really hangs there
    assert not ok and "no answer within 1 s" in reason and took < 2.5, (ok, reason, took)
    assert out.read_text() == "x\n"


def test_html_on_a_full_filesystem_leaves_no_file_and_a_later_run_writes_it(home, job_user):
    """create_as_user made the file (O_CREAT|O_EXCL), the write failed: it used to stay, empty,
    and every later run was refused ("already exists"). Now the writer removes the file it made."""
    full = user_dir(home / "full", job_user)
    with full_tmpfs(full, f"size=512k,mode=0755,uid={job_user.pw_uid},gid={job_user.pw_gid}"):
        target, data = full / "slurm-16.out.lustre.html", b"<html>" + b"x" * 200_000
        res = create_as_user(str(target), data, job_user.pw_uid, job_user.pw_gid, job_user.pw_name, mode=0o644)
        assert not res.ok and res.reason == "failed: filesystem is full"
        assert os.listdir(full) == ["filler"]                            # nothing left behind
        os.unlink(full / "filler")                                       # space again: the next run
        res = create_as_user(str(target), data, job_user.pw_uid, job_user.pw_gid, job_user.pw_name, mode=0o644)
        assert res.ok and target.read_bytes() == data
