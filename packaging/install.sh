#!/bin/sh
# The one file layout of lustre-jobreport's three packages. `make install-agent`,
# `make install-reporter` and `make install-admin` run this; so do `make deb`
# (packaging/deb/build.sh) and the RPM spec (packaging/rpm/), so the .debs and the RPMs hold
# the same files (tests/packages checks the lists against each other).
#
#   packaging/install.sh agent|node|admin DESTDIR
#
# agent  pcp-pmda-lustreclient: the agent in PCP's layout (files in /usr/lib/pcp/pmdas/
#        lustreclient, the symlinks pmcd.conf and Install/Remove use in /var/lib/pcp/pmdas/
#        lustreclient, as Debian's own PCP agents), its man page, and the pmrep views,
#        pmlogconf group, pmieconf rules and pmchart view where PCP looks for them.
# node   lustre-jobreport, for every compute node: /usr/bin/lustre-jobreport on the system's
#        python3 and the package's own code in a private directory, and no third-party library
#        (numpy, Jinja2, matplotlib, PCP's bindings, a TOML reader and python-hostlist are the
#        distribution's); the hooks, shipped config, tmpfiles.d file, man page and docs.
#        No bytecode: the package's installer compiles it for the python3 it finds (the .deb's
#        postinst, the RPM's build), so one package serves every Python from 3.9 on.
# admin  lustre-jobreport-admin, for the node that compacts records and runs compare: pyarrow
#        and DuckDB at the versions of packaging/admin-bundle.txt in a private directory (no
#        distribution packages them; scipy is the distribution's), the simulator (lustre-sim, to try the
#        agent without a Lustre client) and the nightly compaction's systemd service and timer.
#
# Environment:
#   PIP_PYTHON  admin: a Python with pip, of the same version as $PYTHON (it installs the
#               wheels of admin-bundle.txt; a different version would install unusable ones)
#   PYTHON      the interpreter the commands run (default /usr/bin/python3)
#   UNITDIR     systemd units (default /lib/systemd/system, Debian's place)
# The agent must be built (make agent) before.
set -eu
what=${1:?agent, node or admin}
DESTDIR=${2:?DESTDIR}
case $DESTDIR in /*) ;; *) DESTDIR=$(pwd)/$DESTDIR ;; esac
TOP=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}
UNITDIR=${UNITDIR:-/lib/systemd/system}
PMDA_LIBDIR=/usr/lib/pcp/pmdas/lustreclient
PMDA_DIR=/var/lib/pcp/pmdas/lustreclient
LIBDIR=/usr/lib/lustre-jobreport
ADMINDIR=$LIBDIR/admin
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

package_tree() {	# SOURCE_DIR PACKAGE TARGET: a Python package's code and templates
    (cd "$1" && find "$2" \( -name '*.py' -o -name '*.j2' \) -not -path '*/__pycache__/*') |
    while read -r p; do
        install -D -m 0644 "$1/$p" "$DESTDIR$3/$p"
    done
}

launcher() {	# COMMAND MODULE: /usr/bin/COMMAND, MODULE's main() on $PYTHON
    mkdir -p "$DESTDIR/usr/bin"
    sed -e "s|@PYTHON@|$PYTHON|" -e "s|@LIBDIR@|$LIBDIR|" -e "s|@MODULE@|$2|" \
        "$TOP/packaging/lustre-jobreport.in" > "$DESTDIR/usr/bin/$1"
    chmod 0755 "$DESTDIR/usr/bin/$1"
}

node() {
    package_tree "$TOP/reporter" lustre_jobreport "$LIBDIR/python"
    launcher lustre-jobreport lustre_jobreport.cli
    f 0644 "$TOP/hooks/lib.sh" "$SHAREDIR/hooks/lib.sh"
    for h in slurm/prolog slurm/epilog pbs/prologue pbs/epilogue pbs/execjob_begin pbs/prologue.parallel; do
        f 0755 "$TOP/hooks/$h" "$SHAREDIR/hooks/$h"
    done
    f 0644 "$TOP/hooks/pbs/lustre_jobreport.py" "$SHAREDIR/hooks/pbs/lustre_jobreport.py"  # imported by qmgr
    f 0644 "$TOP/packaging/config.toml" /etc/lustre-jobreport/config.toml
    f 0644 "$TOP/packaging/lustre-jobreport.default" /etc/default/lustre-jobreport
    f 0644 "$TOP/systemd/lustre-jobreport.conf" /usr/lib/tmpfiles.d/lustre-jobreport.conf
    man "$TOP/reporter/lustre-jobreport.1"
    doc=/usr/share/doc/lustre-jobreport
    f 0644 "$TOP/README.md" "$doc/README.md"
    for d in admin design records compare; do
        f 0644 "$TOP/docs/$d.md" "$doc/$d.md"
    done
    f 0644 "$TOP/hooks/README.md" "$doc/hooks.md"
    f 0644 "$TOP/packaging/copyright" "$doc/copyright"
}


admin() {
    : "${PIP_PYTHON:?PIP_PYTHON: a python with pip, the version of $PYTHON}"
    want=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    have=$("$PIP_PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    [ "$want" = "$have" ] || { echo "install.sh: PIP_PYTHON is Python $have, $PYTHON is $want" >&2; exit 1; }
    lib=$DESTDIR$ADMINDIR
    rm -rf "$lib"
    # exactly the libraries of packaging/admin-bundle.txt at its versions; --no-deps: what they
    # use beyond themselves (numpy) is the distribution's
    "$PIP_PYTHON" -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
        --no-compile --no-deps --target "$lib" -r "$TOP/packaging/admin-bundle.txt"
    "$PIP_PYTHON" "$TOP/packaging/check_bundled.py" "$TOP/packaging/admin-bundle.txt" "$lib"
    # their command-line scripts name the build's Python, and their man pages are not ours
    rm -rf "${lib:?}/bin" "${lib:?}/share"
    package_tree "$TOP/sim" lustre_sim "$ADMINDIR"
    # bytecode shipped (the package is built for one Python), so that nothing is written under
    # /usr at run time (compaction runs as root) and removal leaves nothing; unchecked-hash:
    # valid whatever the files' times
    "$PIP_PYTHON" -m compileall -q -j 0 --invalidation-mode unchecked-hash -d "$ADMINDIR" "$lib" >/dev/null
    launcher lustre-sim lustre_sim.cli
    man "$TOP/sim/lustre-sim.1"
    f 0644 "$TOP/systemd/lustre-jobreport-compact.service" "$UNITDIR/lustre-jobreport-compact.service"
    f 0644 "$TOP/systemd/lustre-jobreport-compact.timer" "$UNITDIR/lustre-jobreport-compact.timer"
    doc=$DESTDIR/usr/share/doc/lustre-jobreport-admin
    mkdir -p "$doc"
    { cat "$TOP/packaging/copyright"
      "$PIP_PYTHON" "$TOP/packaging/bundled_licenses.py" "$lib" "$ADMINDIR"; } > "$doc/copyright"
    chmod 0644 "$doc/copyright"
}

case $what in
agent) agent ;;
node) node ;;
admin) admin ;;
*) echo "install.sh: agent, node or admin, not $what" >&2; exit 2 ;;
esac
