# lustre-jobreport: top-level build. On a fresh Debian 12 machine, as root:
#   make demo   - install what is missing, build the agent, run a simulated Enzo job, print its report
#   make demo-compare - a simulated cluster's Lustre upgrade caught by `lustre-jobreport compare`
#   make test   - install what is missing, run every test (C unit, dbpmda golden, pytest)
#   make bench  - performance figures (see bench/)
# Both are idempotent: what is already installed or built is left alone.

VENV      := .venv
PY        := $(VENV)/bin/python
SYSPYTHON := /usr/bin/python3
STAMP     := $(VENV)/.installed

.PHONY: all deps deps-test venv agent demo demo-compare test bench clean

all: agent venv

deps:
	@scripts/install-deps.sh

# What only the tests need: a browser to check the HTML report's charts; Slurm and munge for
# the end-to-end scheduler-hook test (tests/slurm), which starts its own daemons.
TEST_PKGS := chromium slurmctld slurmd slurm-client munge pcp-gui xvfb xauth
deps-test:
	@scripts/install-deps.sh $(TEST_PKGS)

# Debian's Python, so PCP's bindings (python3-pcp) are importable beside the pinned packages.
$(STAMP): requirements.txt reporter/pyproject.toml sim/pyproject.toml | deps
	test -x $(PY) || $(SYSPYTHON) -m venv --system-site-packages $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e reporter -e sim
	touch $@

venv: deps $(STAMP)

agent: deps
	@$(MAKE) -s -C pmda-lustre

demo: agent venv
	$(PY) scripts/demo.py

demo-compare: agent venv
	$(PY) scripts/demo_compare.py

test: agent venv deps-test
	$(MAKE) -C pmda-lustre test
	$(PY) -m pytest -q tests
	$(MAKE) -C pmda-lustre test-install

# Performance figures as ratios against a floor or peer measured in the same run.
bench: agent venv
	$(PY) bench/run.py

clean:
	$(MAKE) -C pmda-lustre clean
	rm -rf $(VENV) demo-out
