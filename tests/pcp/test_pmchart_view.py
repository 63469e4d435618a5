"""The pmchart view (packaging/pcp/pmchart/Lustre, installed under /var/lib/pcp/config/pmchart/;
issue 12): the real pmlogger records a private pmcd running the real agent while the sim runs
a job again and again, and the real pmchart (Debian's pcp-gui) renders the view of that archive
under Xvfb into an image; the same view of a quiet client's archive is the control. The job's
RPCs and metadata operations must be drawn: the plot areas of the busy image hold far more
colour than the quiet one's (where only the axes' background shows)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from kit import pcpkit

VIEW = Path(__file__).resolve().parents[2] / "packaging" / "pcp" / "pmchart" / "Lustre"
ENV = pcpkit.ENV
SAMPLES = 8

pytestmark = pytest.mark.skipif(shutil.which("pmchart") is None or shutil.which("xvfb-run") is None,
                                reason="pmchart (pcp-gui) or xvfb-run (xvfb) is not installed")


def chart(tmp: Path, busy: bool) -> Path:
    """The view of an archive of SAMPLES one-second samples, the client busy or not meanwhile."""
    archive = pcpkit.record(tmp, SAMPLES, 5, "mitgcm" if busy else None, 0.3)   # 4 KiB reads, an open storm
    image = tmp / "lustre.png"
    # the whole archive in view: one-second points, SAMPLES of them, up to its end
    r = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1280x1024x24", "pmchart", "-a", str(archive),
                        "-c", str(VIEW), "-g", "1000x800", "-t", "1sec", "-v", str(SAMPLES), "-O", "-0",
                        "-o", str(image)], capture_output=True, text=True, timeout=120, env=ENV)
    assert r.returncode == 0 and image.stat().st_size > 0, r.stderr
    return image


def colour_share(image: Path) -> float:
    """The share of the image's pixels that are neither white, grey nor the plot background
    (the most common colour): what the charts' stacked areas and their legends draw."""
    from PIL import Image

    img = Image.open(image).convert("RGB")
    counts = img.getcolors(maxcolors=1 << 24)
    background = max(counts)[1]
    drawn = sum(n for n, (r, g, b) in counts
                if (r, g, b) != background and max(r, g, b) - min(r, g, b) > 40)
    return drawn / (img.width * img.height)


def test_the_view_draws_a_jobs_rpcs_and_metadata_operations(tmp_path):
    busy = colour_share(chart(tmp_path / "busy", busy=True))
    quiet = colour_share(chart(tmp_path / "quiet", busy=False))
    assert busy > quiet + 0.05, (busy, quiet)
