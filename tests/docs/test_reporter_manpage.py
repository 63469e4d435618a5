"""reporter/lustre-jobreport.1 stays true to the command line: every subcommand of cli.parser()
has its line in the SYNOPSIS with every option and choice it takes; compare's selection and
group keys are named; the page renders (tests/docs/test_manpages.py)."""

from __future__ import annotations

import re
from pathlib import Path

from kit import manpages
from lustre_jobreport import cli, config
from lustre_jobreport.records import recordset

PAGE = Path(__file__).resolve().parents[2] / "reporter" / "lustre-jobreport.1"


def synopsis_lines() -> list[str]:
    return manpages.synopsis_lines(PAGE)


def test_every_subcommand_has_a_synopsis_form_with_all_its_options_and_choices():
    found = manpages.commands(cli.parser())
    assert {"snapshot", "report", "records add", "records compact", "compare", "prolog", "epilog"} <= set(found)
    assert manpages.missing_from_synopsis(PAGE, cli.parser()) == []


def test_the_global_options_are_in_the_synopsis():
    lines = synopsis_lines()
    for action in cli.parser()._actions:
        for opt in action.option_strings:
            if opt.startswith("--") and opt != "--help":
                assert any(opt in line for line in lines), opt


def test_compare_keys_and_the_docs_are_named():
    text = manpages.plain(PAGE.read_text())
    for key in (*recordset.KEYS, *config.GROUP_KEYS):
        assert re.search(rf"(?<![\w-]){key}(?![\w-])", text), key
    for doc in ("docs/compare.md", "docs/records.md"):
        assert doc in text and (PAGE.parents[1] / doc).is_file()
    files = manpages.section(PAGE.read_text(), "FILES")
    for path in (config.DEFAULTS["hooks"]["records_dir"], config.DEFAULTS["records"]["dataset_dir"], ".compacted/",
                 ".unreadable/", "lustre-jobreport-compact.timer"):
        assert path in files, path

