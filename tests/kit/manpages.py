"""Reading a man page's roff source against an argparse command line (the man page tests of
lustre-jobreport.1 and lustre-sim.1)."""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path


def plain(roff: str) -> str:
    """roff source as words: font escapes dropped, escaped minus signs as '-'."""
    text = re.sub(r"\\f[BIRP]", "", roff).replace("\\-", "-").replace("\\(aq", "'")
    return re.sub(r"^\.(B|I|BR|IR|RB|BI|IB|RI)\s+", "", text, flags=re.M)


def section(roff: str, name: str) -> str:
    m = re.search(rf"^\.SH {name}\n(.*?)(?=^\.SH )", roff, re.S | re.M)
    assert m, f"no {name} section"
    return m.group(1)


def _subparsers(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            return dict(a.choices)
    return {}


def commands(p: argparse.ArgumentParser, prefix: str = "") -> dict[str, argparse.ArgumentParser]:
    """Every runnable subcommand, 'records add' style, and its parser."""
    out = {}
    for name, sub in _subparsers(p).items():
        full = f"{prefix}{name}"
        nested = commands(sub, full + " ")
        out.update(nested or {full: sub})
    return out


def synopsis_lines(page: Path) -> list[str]:
    """The SYNOPSIS, one usage form per item (forms are separated by .br)."""
    return [" ".join(plain(form).split()) for form in section(page.read_text(), "SYNOPSIS").split("\n.br\n")]


def form_of(page: Path, command: str) -> str:
    words = command.split()
    for line in synopsis_lines(page):
        tokens = re.split(r"[\s|\[\]{}]+", line)
        if any(tokens[i:i + len(words)] == words for i in range(len(tokens))):
            return line
    raise AssertionError(f"no SYNOPSIS form for {command!r}")


def missing_from_synopsis(page: Path, parser: argparse.ArgumentParser) -> list[str]:
    """Each subcommand's options (one of their spellings) and choices its SYNOPSIS form lacks."""
    missing = []
    for command, sub in commands(parser).items():
        form = form_of(page, command)
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            if action.option_strings and not any(
                    re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", form) for opt in action.option_strings):
                missing.append(f"{command}: {'/'.join(action.option_strings)} not in {form!r}")
            for choice in action.choices or ():
                if not re.search(rf"(?<![\w-]){re.escape(choice)}(?![\w-])", form):
                    missing.append(f"{command}: {choice}")
    return missing


def groff_complaints(page: Path) -> tuple[int, str]:
    """groff's exit status and warnings rendering the page (-ww: every warning)."""
    r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", str(page)], capture_output=True, text=True)
    return r.returncode, r.stderr


def man_reads(page: Path) -> tuple[int, str, str]:
    """man's exit status, output and errors on the page (80 columns)."""
    r = subprocess.run(["man", "-l", str(page)], capture_output=True, text=True,
                       env={"MANWIDTH": "80", "PATH": "/usr/bin:/bin"})
    return r.returncode, r.stdout, r.stderr
