"""What the PCP tool tests share: PCP's Python tools need Debian's python3, and an archive that
the real pmlogger records from a private pmcd running the real agent while a sim client runs a
job again and again (a tool replaying an archive finds what was recorded, whatever the load of
the machine it replays on)."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

from lustre_sim import SimClient
from kit.privpmcd import PrivatePmcd

# pmrep, pmlogconf ... are Python scripts of PCP's: Debian's python3 has the bindings, a pyenv one first on PATH not
ENV = dict(os.environ, PATH="/usr/bin:" + os.environ.get("PATH", ""))


def record(tmp: Path, samples: int, seed: int, workload: str | None, pause_s: float) -> Path:
    """An archive of `samples` one-second samples of lustreclient.fs.rpc and lustreclient.llite,
    the client running `workload` (None: nothing) again and again, `pause_s` apart, meanwhile."""
    client = SimClient.create(tmp / "tree", version="2.15.4", filesystems=[("scratch", 4, 1), ("home", 2, 1)],
                              seed=seed)
    (tmp / "log.conf").write_text("log mandatory on 1 sec {\n\tlustreclient.fs.rpc\n\tlustreclient.llite\n}\n")
    done = threading.Event()

    def job() -> None:
        while workload and not done.is_set():
            client.run(workload, fs="scratch")
            done.wait(pause_s)

    with PrivatePmcd(tmp / "pmcd", tmp / "tree") as pmcd:
        runner = threading.Thread(target=job)
        runner.start()
        try:
            subprocess.run(["pmlogger", "-c", str(tmp / "log.conf"), "-h", pmcd.spec, "-s", str(samples),
                            "-l", str(tmp / "pmlogger.log"), str(tmp / "archive")],
                           check=True, capture_output=True, timeout=120, env=ENV)
        finally:
            done.set()
            runner.join()
    return tmp / "archive"
