"""The hooks' log shows what it is told, never obeys it: a job's output path, a host name or an
error read from a snapshot file may hold terminal controls (an admin's `tail -f` or `less -R`
would run them) or characters that reorder or hide text. Every one is written as a visible
escape, the same one the report shows (render.displayable), and each record stays one line."""

import unicodedata

import pytest

from lustre_jobreport.hooks import hooklog
from lustre_jobreport.report import view as render
from lustre_jobreport.hooks.hooklog import HookLog

# C0 (ESC, BEL, BS, file/group/unit separators), DEL, C1 (NEL, CSI), bidi override and isolate,
# zero-width space and joiner, BOM, line and paragraph separators, a lone surrogate (an
# undecodable byte of a path, as os.fsdecode gives it), a tag character
HIDDEN = "\x1b\x07\x08\x1c\x1d\x1e\x1f\x7f\x85\x9b\u202e\u2066\u200b\u200d\ufeff\u2028\u2029\udcff\U000e0041"
SHOWN = {"\x1b": "\\x1b", "\x7f": "\\x7f", "\x85": "\\x85", "\x9b": "\\x9b", "\u202e": "\\u202e",
         "\u200b": "\\u200b", "\u2028": "\\u2028", "\udcff": "\\udcff", "\U000e0041": "\\U000e0041"}


def hidden_in(text):
    return [c for c in text if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cs") and c != "\n"]


def test_controls_in_a_logged_string_reach_the_file_escaped(tmp_path):
    target = tmp_path / "hooks.log"
    log = HookLog(str(target), "slurm epilog job 5")
    path = "/home/ann/out\x1b]2;owned\x07\x1b[2J" + HIDDEN + "\u202ecod.exe"
    log.error(f"report not appended to {path}: refused")
    log.info("host n1\x1b[31m read\nin two\r\n\tlines")
    raw = target.read_bytes().decode("utf-8")
    lines = raw.splitlines(keepends=True)
    assert len(lines) == 2 and raw.count("\n") == 2, raw          # one record, one line
    assert hidden_in(raw) == [], [hex(ord(c)) for c in hidden_in(raw)]
    for char, shown in SHOWN.items():
        assert shown in lines[0], (char, shown)
    assert "out\\x1b]2;owned\\x07\\x1b[2J" in lines[0] and "\\u202ecod.exe: refused" in lines[0]
    assert lines[1].endswith("info: slurm epilog job 5: host n1\\x1b[31m read in two lines\n")


def test_the_context_and_syslog_lines_are_escaped_too(monkeypatch):
    said = []
    monkeypatch.setattr(HookLog, "_syslog", lambda self, level, line: said.append((level, line)))
    log = HookLog("syslog", "pbs prolog job \x1b[8m9")
    log.error("node\u2028b\x00")
    assert said == [("error", "error: pbs prolog job \\x1b[8m9: node\\u2028b\\x00")]


def test_a_long_line_is_cut_after_escaping():
    line = HookLog("syslog")._line("error", "\x1b" * 2000)
    assert len(line) <= len("error: ") + hooklog.MAX_LINE and line.endswith("...")
    assert hidden_in(line) == []


@pytest.mark.parametrize("text", [HIDDEN, "plain", "tab\tand\u00a0nbsp", "é\u0301 中文 \U0001f600"])
def test_the_log_escapes_as_the_report_does(text):
    """One escaping for the log and the report (render.displayable): an admin who greps the log
    for what the report showed finds it."""
    from lustre_jobreport.present import textsafe
    assert textsafe.escaped(text) == render.displayable({"k": text})["k"]
