"""The CLI's error and warning lines echo names and texts from files: each stays one line with
its hidden characters shown as escapes, the same ones the report shows."""

import json
import subprocess
import sys

HOSTILE = "n1\x1b]52;c;ZXZpbAo=\x07\x1b[2J\nFAKE second line\u202e\u200b"


def test_a_host_name_with_terminal_controls_in_an_error_line_is_shown_escaped_on_one_line(tmp_path):
    """An OSC 52 (write the clipboard) and a newline in a host name reached the terminal raw."""
    path = tmp_path / "ctl.json"
    path.write_text(json.dumps({"schema": "lustre-jobreport/2", "kind": "snapshot", "taken_at": 1.0, "metrics": {},
                                "hosts": [{"name": HOSTILE, "spec": "n1", "ok": True, "fetched_at": 1.0,
                                           "pminfo_z": "AAAA"}]}))
    r = subprocess.run([sys.executable, "-m", "lustre_jobreport", "report", str(path), str(path)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stdout == ""
    [line] = r.stderr.splitlines()
    assert line.isprintable(), repr(line)
    assert ("pminfo text of n1\\x1b]52;c;ZXZpbAo=\\x07\\x1b[2J\\x0aFAKE second line\\u202e\\u200b: "
            "packed data is damaged") in line
