"""The hooks' log: one line per event, to syslog (facility daemon, tag lustre-jobreport) or
appended to a file, never to the job. What it logs comes from elsewhere (a job's output path, a
host name, an error read from a snapshot file): every control or hidden character is written
as a visible escape (textsafe), so an admin's `tail -f` or `less -R` shows it and obeys
nothing. Light: the prolog imports it."""

from __future__ import annotations

import os
import time
from pathlib import Path

from ..present.textsafe import one_line

IDENT = "lustre-jobreport"
MAX_LINE = 900


class HookLog:
    """One line per event, to a file (append) or to syslog (daemon facility)."""

    def __init__(self, target: str = "syslog", context: str = ""):
        self.target, self.context = target or "syslog", context
        self.lines = 0

    def _line(self, level: str, msg: str) -> str:
        """One line, whatever the message held, escaped (the context too: a job id, a host)."""
        text = one_line(f"{self.context}: {msg}" if self.context else str(msg))
        if len(text) > MAX_LINE:   # cut after escaping: escapes lengthen it
            text = text[:MAX_LINE - 3] + "..."
        return f"{level}: {text}"

    def _syslog(self, level: str, line: str) -> None:
        import syslog
        syslog.openlog(IDENT, syslog.LOG_PID, syslog.LOG_DAEMON)
        syslog.syslog(syslog.LOG_ERR if level == "error" else syslog.LOG_INFO, line)

    def _emit(self, level: str, msg: str) -> None:
        line = self._line(level, msg)
        self.lines += 1
        if self.target.startswith("/"):
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            host = os.uname().nodename.split(".")[0]
            data = f"{stamp} {host} {IDENT}[{os.getpid()}]: {line}\n".encode("utf-8", "replace")
            try:
                fd = os.open(self.target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
                             | os.O_CLOEXEC | os.O_NOCTTY, 0o640)
                try:
                    os.write(fd, data)
                finally:
                    os.close(fd)
                return
            except OSError:
                pass  # an unwritable log file: fall back to syslog
        try:
            self._syslog(level, line)
        except Exception:  # pragma: no cover - no syslog at all: nowhere left to say it
            pass

    def error(self, msg: str) -> None:
        self._emit("error", msg)

    def info(self, msg: str) -> None:
        self._emit("info", msg)


def say(exc: BaseException) -> str:
    """An exception as one log line: an error of ours or of the OS by its message alone (it says
    enough), running out of memory in words (a bare MemoryError says nothing itself); anything
    else by type, message and the place it was raised."""
    from ..errors import JobReportError

    if isinstance(exc, (JobReportError, OSError)):
        return str(exc)
    if isinstance(exc, MemoryError):
        return str(exc) or "out of memory: needs more than this process may use (ulimit -v, a cgroup)"
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = f" at {Path(tb.tb_frame.f_code.co_filename).name}:{tb.tb_lineno}" if tb is not None else ""
    return f"{type(exc).__name__}: {exc}{where}"
