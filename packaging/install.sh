#!/bin/sh
# The one file layout of lustre-jobreport's two packages. `make install-agent` and
# `make install-reporter` run this; so do `make deb` (packaging/deb/build.sh) and the RPM spec
# (packaging/rpm/lustre-jobreport.spec), so the .deb and the .rpm hold the same files
# (tests/packages checks the two lists against each other).
#
#   packaging/install.sh agent|reporter DESTDIR
#
# agent     pcp-pmda-lustreclient: the agent in PCP's layout (files in /usr/lib/pcp/pmdas/
#           lustreclient, the symlinks pmcd.conf and Install/Remove use in /var/lib/pcp/pmdas/
#           lustreclient, as Debian's own PCP agents), its man page, and the pmrep views,
#           pmlogconf group, pmieconf rules and pmchart view where PCP looks for them.
# reporter  lustre-jobreport: /usr/bin/lustre-jobreport on the system's python3 with its pinned
#           Python packages in a private directory, the hooks, templates, shipped config,
#           systemd and tmpfiles.d files, man page and docs.
#
# Environment:
#   PIP_PYTHON  reporter: a Python with pip, of the same version as $PYTHON (it installs the
#               wheels of requirements.txt; a different version would install unusable ones)
#   PYTHON      the interpreter /usr/bin/lustre-jobreport runs (default /usr/bin/python3)
#   UNITDIR     systemd units (default /lib/systemd/system, Debian 12's place)
# The agent must be built (make agent) before.
set -eu
what=${1:?agent or reporter}
DESTDIR=${2:?DESTDIR}
case $DESTDIR in /*) ;; *) DESTDIR=$(pwd)/$DESTDIR ;; esac
TOP=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}
UNITDIR=${UNITDIR:-/lib/systemd/system}
PMDA_LIBDIR=/usr/lib/pcp/pmdas/lustreclient
PMDA_DIR=/var/lib/pcp/pmdas/lustreclient
LIBDIR=/usr/lib/lustre-jobreport
SHAREDIR=/usr/share/lustre-jobreport
MAN1=/usr/share/man/man1

f() {	# mode source destination: one file, its directories 0755
    install -D -m "$1" "$2" "$DESTDIR$3"
}
man() {	# compressed as Debian and RPM ship man pages (-n: no name or time inside, reproducible)
    mkdir -p "$DESTDIR$MAN1"
    gzip -9nc "$1" > "$DESTDIR$MAN1/$(basename "$1").gz"
    chmod 0644 "$DESTDIR$MAN1/$(basename "$1").gz"
}

agent() {
    make -s --no-print-directory -C "$TOP/pmda-lustre" install DESTDIR="$DESTDIR" LIBDIR="$PMDA_LIBDIR" PMDADIR="$PMDA_DIR"
    man "$TOP/pmda-lustre/pmdalustreclient.1"
    p=$TOP/packaging/pcp
    f 0644 "$p/pmrep/lustreclient.conf" /etc/pcp/pmrep/lustreclient.conf
    for g in summary per-ost; do
        f 0644 "$p/pmlogconf/lustreclient/$g" "/var/lib/pcp/config/pmlogconf/lustreclient/$g"
    done
    for r in small_read_rpcs metadata_storm; do
        f 0644 "$p/pmieconf/lustre/$r" "/var/lib/pcp/config/pmieconf/lustre/$r"
    done
    f 0644 "$p/pmchart/Lustre" /var/lib/pcp/config/pmchart/Lustre
    doc=/usr/share/doc/pcp-pmda-lustreclient
    f 0644 "$TOP/pmda-lustre/README.md" "$doc/README.md"
    f 0644 "$TOP/packaging/copyright" "$doc/copyright"
}

reporter() {
    : "${PIP_PYTHON:?PIP_PYTHON: a python with pip, the version of $PYTHON}"
    want=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    have=$("$PIP_PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    [ "$want" = "$have" ] || { echo "install.sh: PIP_PYTHON is Python $have, $PYTHON is $want" >&2; exit 1; }

    # The reporter's runtime dependencies (reporter/pyproject.toml) at the versions of
    # requirements.txt, the project's one place for pins, and nothing the tests alone need.
    py=$DESTDIR$LIBDIR/python
    rm -rf "$py"
    deps=$("$PIP_PYTHON" -c 'import sys, tomllib; print(" ".join(tomllib.load(open(sys.argv[1], "rb"))["project"]["dependencies"]))' \
        "$TOP/reporter/pyproject.toml")
    # shellcheck disable=SC2086
    "$PIP_PYTHON" -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
        --no-compile --target "$py" -c "$TOP/requirements.txt" $deps
    "$PIP_PYTHON" - "$TOP/requirements.txt" "$py" <<'EOF'
import pathlib, re, sys
# every package installed must be pinned: a dependency that is not would change under us
pins = {re.sub(r"[-_.]+", "-", l.split("==")[0]).lower(): l.split("==")[1].strip()
        for l in open(sys.argv[1]) if "==" in l and not l.startswith("#")}
for info in pathlib.Path(sys.argv[2]).glob("*.dist-info"):
    name, version = info.name[:-len(".dist-info")].rsplit("-", 1)
    name = re.sub(r"[-_.]+", "-", name).lower()
    if pins.get(name) != version:
        sys.exit(f"install.sh: {name} {version} is not pinned in requirements.txt")
EOF
    # their command-line scripts name the build's Python, and their man pages are not ours
    rm -rf "$py/bin" "$py/share"
    # the package with its subsystem folders: every .py below reporter/lustre_jobreport
    (cd "$TOP/reporter" && find lustre_jobreport -name '*.py' -not -path '*/__pycache__/*') |
    while read -r f; do
        install -D -m 0644 "$TOP/reporter/$f" "$py/$f"
    done
    # bytecode shipped, so that nothing is written under /usr at run time (the hooks run as
    # root) and removal leaves nothing; unchecked-hash: valid whatever the files' times
    "$PIP_PYTHON" -m compileall -q -j 0 --invalidation-mode unchecked-hash -d "$LIBDIR/python" "$py" >/dev/null

    mkdir -p "$DESTDIR/usr/bin"
    sed -e "s|@PYTHON@|$PYTHON|" -e "s|@LIBDIR@|$LIBDIR|" "$TOP/packaging/lustre-jobreport.in" \
        > "$DESTDIR/usr/bin/lustre-jobreport"
    chmod 0755 "$DESTDIR/usr/bin/lustre-jobreport"

    for t in report.txt.j2 report.html.j2 compare.html.j2; do
        f 0644 "$TOP/templates/$t" "$SHAREDIR/templates/$t"
    done
    f 0644 "$TOP/hooks/lib.sh" "$SHAREDIR/hooks/lib.sh"
    for h in slurm/prolog slurm/epilog pbs/prologue pbs/epilogue; do
        f 0755 "$TOP/hooks/$h" "$SHAREDIR/hooks/$h"
    done
    f 0644 "$TOP/packaging/config.toml" /etc/lustre-jobreport/config.toml
    f 0644 "$TOP/packaging/lustre-jobreport.default" /etc/default/lustre-jobreport
    f 0644 "$TOP/systemd/lustre-jobreport-compact.service" "$UNITDIR/lustre-jobreport-compact.service"
    f 0644 "$TOP/systemd/lustre-jobreport-compact.timer" "$UNITDIR/lustre-jobreport-compact.timer"
    f 0644 "$TOP/systemd/lustre-jobreport.conf" /usr/lib/tmpfiles.d/lustre-jobreport.conf
    man "$TOP/reporter/lustre-jobreport.1"
    doc=/usr/share/doc/lustre-jobreport
    f 0644 "$TOP/README.md" "$doc/README.md"
    for d in admin design records compare; do
        f 0644 "$TOP/docs/$d.md" "$doc/$d.md"
    done
    f 0644 "$TOP/hooks/README.md" "$doc/hooks.md"
    { cat "$TOP/packaging/copyright"
      "$PIP_PYTHON" "$TOP/packaging/bundled_licenses.py" "$py" "$LIBDIR/python"; } > "$DESTDIR$doc/copyright"
    chmod 0644 "$DESTDIR$doc/copyright"
}

case $what in
agent) agent ;;
reporter) reporter ;;
*) echo "install.sh: agent or reporter, not $what" >&2; exit 2 ;;
esac
