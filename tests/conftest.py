import os
import sys
from pathlib import Path

# privpmcd.py (private pmcd harness) lives beside the tests.
sys.path.insert(0, str(Path(__file__).resolve().parent))


# Hypothesis profiles for the property tests (tests/reporter/test_diff_properties.py, and
# test_diff_differential.py, the agent's C rules against them): "test" for
# `make test` (the default: thousands of cases in well under a minute), "fuzz" for `make fuzz`
# (HYPOTHESIS_PROFILE=fuzz, HYPOTHESIS_FUZZ_EXAMPLES cases, default 50,000).
# Not derandomized: each run tries new cases. No example database (nothing written into the
# tree); a failure prints its @reproduce_failure blob and the hypothesis seed to rerun it with
# (pytest --hypothesis-seed=N), and each bug found stays as an explicit @example.
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("test", max_examples=2000, deadline=None, database=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("fuzz", settings.get_profile("test"),
                          max_examples=int(os.environ.get("HYPOTHESIS_FUZZ_EXAMPLES", "50000")))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "test"))
