"""This machine's system pmcd for the package test, the way run-install.sh (make test-install)
handles it: a pmcd already running is used and left running; otherwise the test starts the
system pmcd in the foreground (its own binary, pmcd.conf and PMNS) and stops it by PID. What
the packages and PCP's Install/Remove change (pmcd.conf, the PMNS, instance caches, logs) is
saved first and put back afterwards whatever happened, so a failed run leaves the machine as
it was; the test itself checks that the packages' own removal already did.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import time
from pathlib import Path

from kit.privpmcd import alive, children_of, stop_process


def pcp_conf() -> dict[str, str]:
    conf = {}
    for line in Path("/etc/pcp.conf").read_text().splitlines():
        if "=" in line and not line.lstrip().startswith("#"):
            k, v = line.split("=", 1)
            conf[k.strip()] = v.strip().strip('"')
    return conf


PCP = pcp_conf()
PMCD_CONF = Path(PCP["PCP_PMCDCONF_PATH"])
VAR = Path(PCP["PCP_VAR_DIR"])
LOG = Path(PCP["PCP_LOG_DIR"])
RUN = Path(PCP["PCP_RUN_DIR"])
BINADM = Path(PCP["PCP_BINADM_DIR"])


def pminfo(*args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run(["pminfo", "-h", "local:", *args], capture_output=True, text=True, timeout=timeout)


def pmcd_conf_entries(text: str | None = None) -> list[str]:
    """pmcd.conf's entries (Install/Remove re-sort it and drop comments and blank lines)."""
    text = PMCD_CONF.read_text() if text is None else text
    return sorted(l for l in text.splitlines() if l.strip() and not l.lstrip().startswith("#"))


class SystemPmcd:
    def __init__(self, work: Path):
        self.work = work
        self.proc: subprocess.Popen | None = None   # the pmcd this started, if none ran

    def __enter__(self) -> SystemPmcd:
        w = self.work
        w.mkdir(parents=True, exist_ok=True)
        shutil.copy2(PMCD_CONF, w / "pmcd.conf")
        with tarfile.open(w / "pmns.tar", "w") as t:
            t.add(VAR / "pmns", arcname="pmns")
        self.caches = set(os.listdir(VAR / "config" / "pmda")) if (VAR / "config" / "pmda").is_dir() else set()
        self.logs = set(os.listdir(LOG / "pmcd")) if (LOG / "pmcd").is_dir() else set()
        self.notices = (LOG / "NOTICES").read_bytes() if (LOG / "NOTICES").exists() else None
        self.had_run = RUN.is_dir()
        if pminfo("pmcd.version").returncode == 0:
            return self                       # one runs already: used, left running
        if not self.had_run:                  # what /etc/init.d/pmcd start does first
            RUN.mkdir(mode=0o775, parents=True)
            shutil.chown(RUN, PCP.get("PCP_USER", "pcp"), PCP.get("PCP_GROUP", "pcp"))
        pmns = VAR / "pmns"
        if (pmns / ".NeedRebuild").exists() or not (pmns / "root").exists():
            subprocess.run(["./Rebuild", "-u"], cwd=pmns, capture_output=True, check=True)
            (pmns / ".NeedRebuild").unlink(missing_ok=True)
        self.proc = subprocess.Popen([str(BINADM / "pmcd"), "-f", "-A"], cwd=LOG / "pmcd",
                                     stdin=subprocess.DEVNULL, stdout=open(w / "pmcd.out", "wb"), stderr=subprocess.STDOUT)
        ok = subprocess.run([str(BINADM / "pmcd_wait"), "-t", "20"], capture_output=True).returncode == 0
        if not ok:
            self.__exit__(None, None, None)
            raise RuntimeError(f"the system pmcd did not start: {(w / 'pmcd.out').read_text()}")
        return self

    def agent_pids(self) -> list[int]:
        """The system pmcd's own pmdalustreclient (other pmcds' are not): forked by pmcd's
        pmdaroot, or by pmcd itself."""
        pid = self.proc.pid if self.proc else int((RUN / "pmcd.pid").read_text())
        out = []
        for c in children_of(pid):
            try:
                grandchildren = children_of(c)
            except OSError:
                grandchildren = []
            for a in [c, *grandchildren]:
                try:
                    if Path(f"/proc/{a}/comm").read_text().strip() == "pmdalustreclien" and alive(a):
                        out.append(a)
                except OSError:
                    pass
        return out

    def agents_told(self) -> str:
        """The system pmcd's agents as ps sees them, and the end of pmcd's and the agent's logs:
        what a failed count of agents needs to be understood."""
        ps = subprocess.run(["ps", "-o", "pid,ppid,stat,lstart,args", "--ppid",
                             ",".join(str(p) for p in [self.proc.pid if self.proc else 1, *self.agent_pids()])],
                            capture_output=True, text=True).stdout
        logs = []
        for name in ("pmcd.log", "lustreclient.log"):
            try:
                logs.append(f"--- {name}\n" + "\n".join((LOG / "pmcd" / name).read_text(errors="replace").splitlines()[-30:]))
            except OSError as exc:
                logs.append(f"--- {name}: {exc.strerror}")
        return "\n".join([ps, *logs])

    def __exit__(self, *exc) -> None:
        if self.proc is not None:
            kids = children_of(self.proc.pid) if alive(self.proc.pid) else []
            stop_process(self.proc)
            for k in kids:                    # its agents go with it; any straggler by PID
                try:
                    os.kill(k, 15)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 5
            while any(alive(k) for k in kids) and time.monotonic() < deadline:
                time.sleep(0.1)
            self.proc = None
        w = self.work
        shutil.copy2(w / "pmcd.conf", PMCD_CONF)
        # the saved PMNS unpacked beside the live one first, then swapped in
        fresh = VAR / ".pmns.restore"
        shutil.rmtree(fresh, ignore_errors=True)
        fresh.mkdir()
        with tarfile.open(w / "pmns.tar") as t:
            t.extractall(fresh)
        shutil.rmtree(VAR / "pmns")
        (fresh / "pmns").rename(VAR / "pmns")
        fresh.rmdir()
        for d, before in ((VAR / "config" / "pmda", self.caches), (LOG / "pmcd", self.logs)):
            if d.is_dir():
                for n in set(os.listdir(d)) - before:
                    p = d / n
                    shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()
        if self.notices is None:
            (LOG / "NOTICES").unlink(missing_ok=True)
        else:
            (LOG / "NOTICES").write_bytes(self.notices)
        if not self.had_run:
            shutil.rmtree(RUN, ignore_errors=True)
