"""Every man page of the project renders without a warning (groff -ww) and man reads it:
pmdalustreclient(1) and lustre-jobreport(1), which the packages install, and lustre-sim(1). What each page says is checked
against its command line beside its code (tests/docs/test_reporter_manpage.py,
tests/sim/test_sim_manpage.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kit import manpages

REPO = Path(__file__).resolve().parents[2]
# each page, and a word its rendering must contain
PAGES = [(REPO / "pmda-lustre" / "pmdalustreclient.1", "lustreclient"),
         (REPO / "reporter" / "lustre-jobreport.1", "compare"),
         (REPO / "sim" / "lustre-sim.1", "workloads")]
IDS = [p.name for p, _ in PAGES]


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff is not installed")
@pytest.mark.parametrize("page", [p for p, _ in PAGES], ids=IDS)
def test_groff_renders_it_without_warnings(page):
    assert manpages.groff_complaints(page) == (0, "")


@pytest.mark.skipif(shutil.which("man") is None, reason="man is not installed")
@pytest.mark.parametrize("page, word", PAGES, ids=IDS)
def test_man_reads_it(page, word):
    status, out, err = manpages.man_reads(page)
    assert status == 0 and word in out, err
