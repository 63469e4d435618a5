# lustre-jobreport: top-level build. On a fresh Debian 12 machine, as root:
#   make demo   - install what is missing, build the agent, run a simulated Enzo job, print its report
#   make demo-compare - a simulated cluster's Lustre upgrade caught by `lustre-jobreport compare`
#   make test   - install what is missing, run every test (C unit, dbpmda golden, pytest)
#   make bench  - performance figures (see bench/)
#   make deb    - the agent's and the node's .debs in build/packages (make deb-admin: the admin
#                 node's; make rpm: the RPMs)
#   make wheel  - the reporter's and the simulator's wheels in build/wheels (pip install elsewhere)
#   make test-packages - build both, install the .debs for real, run a Slurm job, remove them
#   make fuzz   - long randomized runs (not part of make test): fuzz-diff, the property tests (the
#                 diff rules, their C twin against them, left-out values, record counts) with
#                 FUZZ_FACTOR (default 25) times their cases (~45 min), then
#                 fuzz-agent, the agent's libFuzzer targets (pmda-lustre: make fuzz, FUZZ_TIME s each)
# Both are idempotent: what is already installed or built is left alone.

VENV      := .venv
PY        := $(VENV)/bin/python
SYSPYTHON := /usr/bin/python3
STAMP     := $(VENV)/.installed

.PHONY: all deps deps-test venv agent demo demo-compare test lint-imports test-packages test-matrix bench clean \
	install install-agent install-reporter install-admin deb deb-admin rpm wheel fuzz fuzz-diff fuzz-agent

all: agent venv

deps:
	@scripts/install-deps.sh

# What only the tests need: a browser to check the HTML report's charts; Slurm and munge for
# the end-to-end scheduler-hook test (tests/slurm), which starts its own daemons.
# rpm: rpmbuild, to build the RPMs of the package test (tests/packages); rpmlint, which checks them.
# debootstrap, iproute2: the package matrix's Debian roots and their network namespaces.
TEST_PKGS := chromium slurmctld slurmd slurm-client munge pcp-gui xvfb xauth rpm rpmlint debootstrap iproute2
deps-test:
	@scripts/install-deps.sh $(TEST_PKGS)

# Debian's Python, so that PCP's bindings (python3-pcp) are importable beside the pinned
# packages: linked into the venv, they alone, not the whole of the system's dist-packages, where
# the packages' dependencies (python3-matplotlib, once the package test has installed it) would
# shadow pinned ones (its regular mpl_toolkits package wins over the pin's namespace package).
PCP_BINDINGS = dpkg -L python3-pcp | grep '/dist-packages/[^/]*$$'
$(STAMP): requirements.txt reporter/pyproject.toml sim/pyproject.toml | deps
	test -x $(PY) || $(SYSPYTHON) -m venv $(VENV)
	sed -i 's/^include-system-site-packages = true/include-system-site-packages = false/' $(VENV)/pyvenv.cfg
	site=$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])') && \
	    for f in $$($(PCP_BINDINGS)); do ln -sfn "$$f" "$$site/"; done
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e reporter -e sim
	touch $@

venv: deps $(STAMP)

agent: deps
	@$(MAKE) -s -C pmda-lustre

# The reporter's structure (reporter/pyproject.toml, [tool.importlinter]): subsystems import only
# downward, no import circle anywhere in the package.
lint-imports: venv
	$(PY) $(VENV)/bin/lint-imports reporter/pyproject.toml

demo: agent venv
	$(PY) scripts/demo.py

demo-compare: agent venv
	$(PY) scripts/demo_compare.py

test: agent venv deps-test
	$(MAKE) -C pmda-lustre test
	$(MAKE) lint-imports
	$(PY) -m pytest -q tests
	$(MAKE) -C pmda-lustre test-install
	$(MAKE) test-packages
	$(MAKE) test-matrix

# The property tests (each states its cases for make test: tests/kit/proptest.py; the differential
# test builds the agent's rules as a library, pmda-lustre's harness target) under hypothesis's
# "fuzz" profile, FUZZ_FACTOR times as many cases; a failure prints the case and the
# @reproduce_failure line that replays it.
PROPERTY_TESTS := tests/report/test_diff_properties.py tests/report/test_diff_differential.py \
	tests/report/test_left_out_property.py tests/records/test_jobrow_counts.py \
	tests/compare/test_compare.py tests/acquire/test_snapfile_job.py \
	tests/report/test_jobview_slots.py
FUZZ_FACTOR ?= 25
fuzz: fuzz-diff fuzz-agent
fuzz-diff: agent venv
	HYPOTHESIS_PROFILE=fuzz FUZZ_FACTOR=$(FUZZ_FACTOR) $(PY) -m pytest -q $(PROPERTY_TESTS) \
	    --hypothesis-show-statistics
fuzz-agent:
	$(MAKE) -C pmda-lustre fuzz

# Builds the .debs and RPMs, then installs the .debs into this machine's system (apt-get), runs
# the agent in the system pmcd and a Slurm job through the installed hooks, and removes them
# (tests/packages/test_packages.py says what each step checks). Acts on the system pmcd: run
# last, never beside other agent tests; `pytest tests` alone skips it.
test-packages: agent venv deps-test
	LJR_TEST_PACKAGES=1 $(PY) -m pytest -q tests/packages

# The agent, the node package and the hooks in a minimal root of each Debian release (11, 12,
# 13) with its own PCP, Python, Slurm (tests/matrix/test_matrix.py). The roots are built once
# from the package mirror and kept in LJR_ROOTS (a fresh machine builds them: a few minutes).
LJR_ROOTS ?= /var/cache/lustre-jobreport/roots
test-matrix: venv deps-test
	LJR_TEST_MATRIX=1 LJR_ROOTS=$(LJR_ROOTS) $(PY) -m pytest -q -s tests/matrix

# --- installing and packaging: one file layout (packaging/install.sh) for the .deb and the .rpm
DESTDIR ?=
PKGDIR  ?= build/packages
install: install-agent install-reporter
install-agent: agent
	sh packaging/install.sh agent "$(or $(DESTDIR),/)"
# the node package's layout; its bytecode compiled for the system's python3, as the .deb's postinst does
install-reporter:
	sh packaging/install.sh node "$(or $(DESTDIR),/)"
	/usr/bin/python3 -m compileall -q --invalidation-mode unchecked-hash "$(or $(DESTDIR),/)usr/lib/lustre-jobreport/python"
install-admin: venv
	PIP_PYTHON=$(CURDIR)/$(PY) sh packaging/install.sh admin "$(or $(DESTDIR),/)"
# deb: what every compute node gets, the agent's package (against this machine's PCP) and the
# node's (the same on every release); deb-admin: the admin node's, for this machine's python3
deb: agent
	DEB_ONLY="pcp-pmda-lustreclient lustre-jobreport" sh packaging/deb/build.sh $(PKGDIR)
deb-admin: venv
	DEB_ONLY=lustre-jobreport-admin PIP_PYTHON=$(CURDIR)/$(PY) sh packaging/deb/build.sh $(PKGDIR)

# The specs build the agent and take the node package's files from a tarball of the tree:
# rpmbuild (Debian's rpm) and the agent's build dependencies, not this tree's build or venv.
# The RPMs in $(PKGDIR), their source RPMs in $(PKGDIR)/srpm (EL hosts rebuild those).
rpm: deps
	@scripts/install-deps.sh rpm
	sh packaging/rpm/build.sh $(PKGDIR)

# The wheels for `pip install` where no package fits (docs/admin.md, "Installing with pip"):
# lustre_jobreport-VERSION-py3-none-any.whl and lustre_sim-VERSION-py3-none-any.whl, built with the
# venv's pip, setuptools and wheel (pinned in requirements.txt) from a copy of reporter/ and sim/
# without what earlier builds and runs left there (build/, *.egg-info, __pycache__), dated by the
# last commit: the same tree gives the same bytes. tests/packages/wheelcheck.py installs them.
WHEELDIR := build/wheels
WHEELSRC := build/wheel-src
wheel: venv
	rm -rf $(WHEELSRC) $(WHEELDIR)/lustre_jobreport-*.whl $(WHEELDIR)/lustre_sim-*.whl
	mkdir -p $(WHEELSRC) $(WHEELDIR)
	tar -cf - --exclude=build --exclude='*.egg-info' --exclude=__pycache__ --exclude='*.pyc' reporter sim \
	    | tar -xf - -C $(WHEELSRC)
	SOURCE_DATE_EPOCH=$$(git log -1 --format=%ct 2>/dev/null || echo 315532800) \
	    $(PY) -m pip wheel -q --disable-pip-version-check --no-deps --no-build-isolation \
	    -w $(WHEELDIR) $(WHEELSRC)/reporter $(WHEELSRC)/sim
	rm -rf $(WHEELSRC)
	@ls $(WHEELDIR)/lustre_jobreport-*.whl $(WHEELDIR)/lustre_sim-*.whl

# Performance figures as ratios against a floor or peer measured in the same run.
bench: agent venv
	$(PY) bench/run.py

clean:
	$(MAKE) -C pmda-lustre clean
	rm -rf $(VENV) demo-out
