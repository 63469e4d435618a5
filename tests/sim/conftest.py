"""Sim tests: make lustre_sim importable from the source tree when it is not pip-installed."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))                       # simreader
try:
    import lustre_sim  # noqa: F401
except ImportError:
    sys.path.insert(0, str(HERE.parents[1] / "sim"))
