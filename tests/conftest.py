import os

# Hypothesis profiles for the property tests: "test" for `make test` (the default), "fuzz" for
# `make fuzz` (HYPOTHESIS_PROFILE=fuzz). Each property test states its number of cases with
# proptest.runs(n), which fuzzing multiplies by FUZZ_FACTOR. Not derandomized: each run tries new
# cases. No example database (nothing written into the tree); a failure prints its
# @reproduce_failure blob and the hypothesis seed to rerun it with (pytest --hypothesis-seed=N),
# and each bug found stays as an explicit @example.
from hypothesis import HealthCheck, settings

settings.register_profile("test", deadline=None, database=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("fuzz", settings.get_profile("test"))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "test"))
