"""reporter/lustre-jobreport.1 stays true to the command line: every subcommand of cli.parser()
has its line in the SYNOPSIS with every option and choice it takes; compare's selection and
group keys are named; the page renders without a warning (groff -ww) and man reads it."""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from lustre_jobreport import cli, config, recordset

PAGE = Path(__file__).resolve().parents[2] / "reporter" / "lustre-jobreport.1"


def _plain(roff: str) -> str:
    """roff source as words: font escapes dropped, escaped minus signs as '-'."""
    text = re.sub(r"\\f[BIRP]", "", roff).replace("\\-", "-").replace("\\(aq", "'")
    return re.sub(r"^\.(B|I|BR|IR|RB|BI|IB)\s+", "", text, flags=re.M)


def _section(roff: str, name: str) -> str:
    m = re.search(rf"^\.SH {name}\n(.*?)(?=^\.SH )", roff, re.S | re.M)
    assert m, f"no {name} section"
    return m.group(1)


def _subparsers(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            return dict(a.choices)
    return {}


def commands(p: argparse.ArgumentParser | None = None, prefix: str = "") -> dict[str, argparse.ArgumentParser]:
    """Every runnable subcommand, 'records add' style, and its parser."""
    out = {}
    for name, sub in _subparsers(p or cli.parser()).items():
        full = f"{prefix}{name}"
        nested = commands(sub, full + " ")
        out.update(nested or {full: sub})
    return out


def synopsis_lines() -> list[str]:
    """The SYNOPSIS, one usage form per item (forms are separated by .br)."""
    return [" ".join(_plain(form).split()) for form in _section(PAGE.read_text(), "SYNOPSIS").split("\n.br\n")]


def _form(command: str) -> str:
    words = command.split()
    for line in synopsis_lines():
        tokens = re.split(r"[\s|\[\]]+", line)
        if any(tokens[i:i + len(words)] == words for i in range(len(tokens))):
            return line
    raise AssertionError(f"no SYNOPSIS form for {command!r}")


def test_every_subcommand_has_a_synopsis_form_with_all_its_options_and_choices():
    found = commands()
    assert {"snapshot", "report", "records add", "records compact", "compare", "prolog", "epilog"} <= set(found)
    for command, sub in found.items():
        form = _form(command)
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            if action.option_strings:         # one of its spellings (-o or --output)
                assert any(re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", form) for opt in action.option_strings), \
                    f"{command}: {'/'.join(action.option_strings)} not in {form!r}"
            for choice in action.choices or ():
                assert re.search(rf"(?<![\w-]){re.escape(choice)}(?![\w-])", form), f"{command}: {choice}"


def test_the_global_options_are_in_the_synopsis():
    lines = synopsis_lines()
    for action in cli.parser()._actions:
        for opt in action.option_strings:
            if opt.startswith("--") and opt != "--help":
                assert any(opt in line for line in lines), opt


def test_compare_keys_and_the_docs_are_named():
    text = _plain(PAGE.read_text())
    for key in (*recordset.KEYS, *config.GROUP_KEYS):
        assert re.search(rf"(?<![\w-]){key}(?![\w-])", text), key
    for doc in ("docs/compare.md", "docs/records.md"):
        assert doc in text and (PAGE.parents[1] / doc).is_file()
    files = _section(PAGE.read_text(), "FILES")
    for path in (config.DEFAULTS["hooks"]["records_dir"], config.DEFAULTS["records"]["dataset_dir"], ".compacted/",
                 ".unreadable/", "lustre-jobreport-compact.timer"):
        assert path in files, path


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff is not installed")
def test_groff_renders_it_without_warnings():
    r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", str(PAGE)], capture_output=True, text=True)
    assert (r.returncode, r.stderr) == (0, "")


@pytest.mark.skipif(shutil.which("man") is None, reason="man is not installed")
def test_man_reads_it():
    r = subprocess.run(["man", "-l", str(PAGE)], capture_output=True, text=True, env={"MANWIDTH": "80", "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0 and "compare" in r.stdout, r.stderr
