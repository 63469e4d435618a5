import sys
from pathlib import Path

# privpmcd.py (private pmcd harness) lives beside the tests.
sys.path.insert(0, str(Path(__file__).resolve().parent))
