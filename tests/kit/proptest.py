"""How many cases a property test runs: the number it states for `make test`, times FUZZ_FACTOR
under `make fuzz` (HYPOTHESIS_PROFILE=fuzz). The profiles themselves (no deadline, no example
database, the failing case's blob printed) are tests/conftest.py's.

    @runs(2000)
    @given(...)
    def test_...(...):
"""

from __future__ import annotations

import os

from hypothesis import settings

FUZZING = os.environ.get("HYPOTHESIS_PROFILE") == "fuzz"
FACTOR = int(os.environ.get("FUZZ_FACTOR", "25")) if FUZZING else 1


def runs(n: int) -> settings:
    """Settings of the loaded profile with n cases (n x FUZZ_FACTOR when fuzzing)."""
    return settings(max_examples=n * FACTOR)
