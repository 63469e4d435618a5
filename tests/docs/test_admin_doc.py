"""docs/admin.md stays true: every key of the config is in its configuration table (flags by
reference to design.md), every make target, command and file it tells an admin to use exists,
and its links resolve."""

from __future__ import annotations

import re
from pathlib import Path

from lustre_jobreport import config

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "admin.md").read_text()


def test_every_config_key_is_in_the_table():
    table = re.search(r"## 3\. Configuration.*?(?=\n## )", DOC, re.S).group(0)
    missing = []
    for section, values in config.DEFAULTS.items():
        rows = [line for line in table.splitlines() if line.startswith(f"| `[{section}]` |")]
        if not rows:
            missing.append(f"[{section}]")
            continue
        for key, value in values.items():
            if isinstance(value, dict) or section == "hosts":
                continue          # flag thresholds: design.md §4; [hosts]: free-form node names
            if not re.search(rf"`{re.escape(key)}`", rows[0]):
                missing.append(f"{section}.{key}")
    assert missing == []


def test_the_files_targets_and_links_it_names_exist():
    for path in re.findall(r"`((?:packaging|systemd|hooks|pmda-lustre)/[\w./-]+)`", DOC):
        assert (REPO / path.rstrip("/")).exists(), path
    for link in re.findall(r"\]\(([^)#]+)\)", DOC):
        assert (REPO / "docs" / link).resolve().exists(), link
    makefile = (REPO / "Makefile").read_text() + (REPO / "pmda-lustre" / "Makefile").read_text()
    for target in re.findall(r"^make (?:-C \S+ )?([\w-]+)", DOC, re.M):
        assert re.search(rf"^{target}:", makefile, re.M) or re.search(rf"^[\w ]*\b{target}\b[\w ]*:", makefile, re.M), target
    for script in ("hooks/slurm/prolog", "hooks/slurm/epilog", "hooks/pbs/prologue", "hooks/pbs/epilogue",
                   "hooks/lib.sh", "systemd/lustre-jobreport-compact.timer"):
        assert script in DOC or Path(script).name in DOC, script
        assert (REPO / script).exists(), script
