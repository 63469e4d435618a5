"""sim/lustre-sim.1 stays true to lustre-sim's command line: every subcommand has its SYNOPSIS
form with every option and choice; every workload, quirk and setting key is named; the page
renders (tests/docs/test_manpages.py)."""

from __future__ import annotations

import re
from pathlib import Path

from kit import manpages
from lustre_sim import cli, faults, settings, workloads

PAGE = Path(__file__).resolve().parents[2] / "sim" / "lustre-sim.1"


def test_every_subcommand_has_a_synopsis_form_with_all_its_options_and_choices():
    assert set(manpages.commands(cli.parser())) == {"create", "run", "fault", "set", "show", "workloads", "quirks"}
    assert manpages.missing_from_synopsis(PAGE, cli.parser()) == []


def test_every_workload_fault_quirk_and_setting_is_named():
    text = manpages.plain(PAGE.read_text())
    named = [*workloads.REGISTRY, *faults.FAULTS, *settings.QUIRKS, *settings.KEYS]
    assert [n for n in named if not re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", text)] == []

