"""The directories root writes into, records_dir (YYYY/MM/DD under it) and html_dir, are
checked like the spool: the directory and every one the hook creates or walks under it must be
root's (the hook's euid), not group/other-writable and not a symbolic link, walked one
component at a time from the parent's file descriptor (O_NOFOLLOW), so a link planted by a user
is never followed. A refused directory is one log line and no write. The job user plants the
links here for real (runuser)."""

from __future__ import annotations

import os
import stat
import subprocess
from datetime import datetime, timezone

import pytest

from kit.hookkit import JOB_USER, Rig, user_dir
from lustre_jobreport.records import store as records

DOC = {"schema": "lustre-jobreport/1", "job": {"id": "42", "end": "2026-03-09T23:59:59Z"}}


def as_user(*cmd):
    subprocess.run(["runuser", "-u", JOB_USER, "--", *cmd], check=True)


def root_only(wdir):
    d = wdir / "rootonly"
    d.mkdir(mode=0o700)
    return d


def tree(path):
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


def test_a_symlink_planted_in_a_user_writable_records_dir_is_not_followed(wdir, job_user, node):
    """The epilog used to follow records/<year> -> a root-only directory and write there."""
    target = root_only(wdir)
    rig = Rig(wdir, job_user, {"vm": node.pmcd.spec})
    user_dir(rig.records, job_user)
    as_user("ln", "-s", str(target), str(rig.records / f"{datetime.now(timezone.utc):%Y}"))
    assert rig.prolog()[0] == 0
    rc, took, out, err = rig.epilog()
    assert (rc, out, err) == (0, "", "")
    assert tree(target) == []                                          # nothing written through the link
    [line] = rig.errors()
    assert line.endswith(f"error: slurm epilog job 7: storing the job record: {rig.records}: owned by uid "
                         f"{job_user.pw_uid}, not 0; refusing it")
    assert "Lustre" in rig.out.read_text()                              # the report itself still arrived


def test_html_dir_others_could_write_is_refused(wdir, job_user, node):
    rig = Rig(wdir, job_user, {"vm": node.pmcd.spec}, html="dir",
              hooks_extra=f'html_dir = "{wdir / "html"}"')
    user_dir(wdir / "html", job_user)
    assert rig.prolog()[0] == 0 and rig.epilog()[0] == 0
    assert os.listdir(wdir / "html") == []
    [line] = rig.errors()
    assert line.endswith(f"writing the HTML report: {wdir / 'html'}: owned by uid {job_user.pw_uid}, not 0; "
                         "refusing it")
    os.chown(wdir / "html", 0, 0)                                     # fixed by the admin: it works
    assert rig.prolog()[0] == 0 and rig.epilog()[0] == 0
    [html] = os.listdir(wdir / "html")
    st = os.stat(wdir / "html" / html)
    assert html == "ljrtest-7.html" and (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o644)


@pytest.mark.parametrize("case", ["records is a symlink", "records 0777", "records 1777 (sticky)",
                                  "year group-writable", "year is the user's, month a link",
                                  "day is a file"])
def test_every_level_is_checked(wdir, job_user, case):
    from lustre_jobreport.safeio import securedir

    target = root_only(wdir)
    rec = wdir / "records"
    if case == "records is a symlink":
        rec.symlink_to(target)
    else:
        rec.mkdir(mode=0o755)
    if case.startswith("records 0777"):
        os.chmod(rec, 0o777)
    if case.startswith("records 1777"):
        os.chmod(rec, 0o1777)
    if case == "year group-writable":
        (rec / "2026").mkdir()
        os.chmod(rec / "2026", 0o775)
    if case.startswith("year is the user's"):
        user_dir(rec / "2026", job_user)
        as_user("ln", "-s", str(target), str(rec / "2026" / "03"))
    if case == "day is a file":
        (rec / "2026" / "03").mkdir(parents=True)
        (rec / "2026" / "03" / "09").write_text("")
    before = tree(wdir)
    with pytest.raises(securedir.UnsafeDirError) as err:
        records.store(DOC, rec, "clu", "42")
    assert tree(wdir) == before and tree(target) == []
    why = {"records is a symlink": f"{rec}: is a symbolic link; refusing it",
           "records 0777": f"{rec}: mode 0777 lets others write in it; refusing it",
           "records 1777 (sticky)": f"{rec}: mode 1777 lets others write in it; refusing it",
           "year group-writable": f"{rec}/2026: mode 0775 lets others write in it; refusing it",
           "year is the user's, month a link": f"{rec}/2026: owned by uid {job_user.pw_uid}, not 0; refusing it",
           "day is a file": f"{rec}/2026/03/09: is not a directory; refusing it"}[case]
    assert str(err.value) == why


def test_records_are_0644_in_0755_dirs_whatever_the_umask(wdir):
    old = os.umask(0o077)
    try:
        path = records.store(DOC, wdir / "var" / "records", "clu", "42")
    finally:
        os.umask(old)
    assert path == wdir / "var" / "records" / "2026" / "03" / "09" / "clu-42.json"
    for d in (wdir / "var", wdir / "var" / "records", path.parent.parent.parent, path.parent.parent, path.parent):
        st = os.lstat(d)
        assert (stat.S_ISDIR(st.st_mode), st.st_uid, stat.S_IMODE(st.st_mode)) == (True, 0, 0o755), d
    st = os.lstat(path)
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o644) and os.listdir(path.parent) == ["clu-42.json"]
    assert records.load(path)["kind"] == "record"
