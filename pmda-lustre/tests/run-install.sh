#!/bin/sh
# Install/Remove on the SYSTEM pmcd, the way PCP's own agents are installed:
#   make install -> /var/lib/pcp/pmdas/lustreclient, ./Install </dev/null (with
#   LUSTRECLIENT_ARGS="-r <sim tree>"), pminfo -f lustreclient through the
#   system pmcd, ./Remove, the metrics are gone and pmcd.conf is as before.
# The system pmcd is started here (unless one is already running, which is
# then used and left running) and stopped by PID; everything the test touches
# (pmcd.conf, the PMNS, the agent directory, logs, instance caches, NOTICES,
# /run/pcp) is put back as it was found.
#
# Run by "make test" LAST: pmdaproc.sh's Install and Remove signal every pmcd
# (pmsignal -a HUP pmcd) and kill every process named pmdalustreclient, also
# the agents of private pmcds that other tests may be running.  So this test
# first waits (up to LC_INSTALL_WAIT seconds, default 60) until no other
# pmdalustreclient runs, and skips if one still does (LC_INSTALL_FORCE=1 runs
# it anyway).  Needs root; skipped otherwise.
cd "$(dirname "$0")/.." || exit 1
HERE=$(pwd)
REPO=$(cd .. && pwd)
W=$HERE/tests/out/install

if [ "$(id -u)" != 0 ]; then
    echo "install: skipped (needs root)"; exit 0
fi
. /etc/pcp.conf
. tests/lib.sh
export PCP_DIR=${PCP_DIR:-} PCPQA_SYSTEMD=no
PMDADIR=$PCP_PMDAS_DIR/lustreclient
CONF=$PCP_PMCDCONF_PATH
PMCD=$PCP_BINADM_DIR/pmcd
rm -rf "$W"
mkdir -p "$W"
fail=0
pmcdpid=

agents() {	# pids of every pmdalustreclient (comm is cut to 15 chars)
    ps -eo pid=,comm= | awk '$2 == "pmdalustreclien" { print $1 }'
}
# wait for a quiet spell: no other pmdalustreclient for 3 seconds running
waited=0 quiet=0
while [ $quiet -lt 3 ] && [ -z "$LC_INSTALL_FORCE" ]; do
    if [ -n "$(agents)" ]; then
	quiet=0
	if [ $waited -ge "${LC_INSTALL_WAIT:-60}" ]; then
	    echo "install: SKIPPED: other pmdalustreclient agents are running ($(agents | tr '\n' ' '))," \
		 "which Install/Remove would kill; LC_INSTALL_FORCE=1 to run anyway"
	    exit 0
	fi
	[ $waited = 0 ] && echo "install: waiting for other pmdalustreclient agents to end ..."
    else
	quiet=$((quiet + 1))
    fi
    sleep 1; waited=$((waited + 1))
done

# --- what the system looks like now ---------------------------------------
cp -p "$CONF" "$W/pmcd.conf.orig"
tar -C "$PCP_VAR_DIR" -cf "$W/pmns.tar" pmns
had_pmdadir=no; [ -e "$PMDADIR" ] && had_pmdadir=yes && tar -C "$PCP_PMDAS_DIR" -cf "$W/pmdadir.tar" lustreclient
had_rundir=no; [ -d "$PCP_RUN_DIR" ] && had_rundir=yes
ls -A "$PCP_VAR_DIR/config/pmda" 2>/dev/null | sort > "$W/caches.before"
ls -A "$PCP_LOG_DIR/pmcd" 2>/dev/null | sort > "$W/logs.before"
had_notices=no; [ -f "$PCP_LOG_DIR/NOTICES" ] && had_notices=yes && cp -p "$PCP_LOG_DIR/NOTICES" "$W/NOTICES.orig"
system_pmcd=no
pminfo -h local: pmcd.version > /dev/null 2>&1 && system_pmcd=yes

restore() {
    if [ -n "$pmcdpid" ]; then
	kids=$(ps -o pid= --ppid "$pmcdpid" | tr '\n' ' ')
	stop_pid "$pmcdpid"
	# its agents (pmdaroot, pmdalinux ...) go with it; any straggler by PID
	for k in $kids; do
	    kill "$k" 2>/dev/null
	done
	pmcdpid=
    fi
    cp -p "$W/pmcd.conf.orig" "$CONF"
    rm -rf "$PCP_VAR_DIR/pmns" && tar -C "$PCP_VAR_DIR" -xf "$W/pmns.tar"
    rm -rf "$PMDADIR"
    [ $had_pmdadir = yes ] && tar -C "$PCP_PMDAS_DIR" -xf "$W/pmdadir.tar"
    ls -A "$PCP_VAR_DIR/config/pmda" 2>/dev/null | sort | comm -13 "$W/caches.before" - |
	while read -r f; do rm -f "$PCP_VAR_DIR/config/pmda/$f"; done
    ls -A "$PCP_LOG_DIR/pmcd" 2>/dev/null | sort | comm -13 "$W/logs.before" - |
	while read -r f; do rm -rf "$PCP_LOG_DIR/pmcd/$f"; done
    if [ $had_notices = yes ]; then cp -p "$W/NOTICES.orig" "$PCP_LOG_DIR/NOTICES"; else rm -f "$PCP_LOG_DIR/NOTICES"; fi
    [ $had_rundir = no ] && rm -rf "$PCP_RUN_DIR"
}
trap 'restore' EXIT
trap 'exit 1' INT TERM

check() {	# what ok-or-not
    if [ "$2" = 0 ]; then echo "install $1: ok"; else echo "install $1: FAILED"; fail=1; fi
}

# --- a simulated client for the installed agent to read ---------------------
PY=$REPO/.venv/bin/python
[ -x "$PY" ] || PY=python3
PYTHONPATH=$REPO/sim "$PY" -c '
import sys
from lustre_sim import SimClient
c = SimClient.create(sys.argv[1], version="2.15.4", filesystems=[("scratch", 4, 1)], seed=2)
print(c.mount_id("scratch"))' "$W/tree" > "$W/sbi" || { echo "install: cannot build the sim tree"; exit 1; }
SBI=$(cat "$W/sbi")

# --- the system pmcd ----------------------------------------------------------
if [ $system_pmcd = no ]; then
    # what /etc/init.d/pmcd start does first: run dir and PMNS
    [ -d "$PCP_RUN_DIR" ] || { mkdir -p -m 775 "$PCP_RUN_DIR"; chown "$PCP_USER:$PCP_GROUP" "$PCP_RUN_DIR"; }
    if [ -f "$PCP_VAR_DIR/pmns/.NeedRebuild" ] || [ ! -f "$PCP_VAR_DIR/pmns/root" ]; then
	(cd "$PCP_VAR_DIR/pmns" && ./Rebuild -u > "$W/rebuild.out" 2>&1 && rm -f .NeedRebuild && touch root)
    fi
    # foreground, so that it stays our child and is stopped by its PID; in the
    # pmcd log directory like /etc/init.d/pmcd (pmcd and its agents log there)
    (cd "$PCP_LOG_DIR/pmcd" && exec "$PMCD" -f -A) > "$W/pmcd.out" 2>&1 &
    pmcdpid=$!
    if ! "$PCP_BINADM_DIR/pmcd_wait" -t 20; then
	echo "install: the system pmcd did not start"; cat "$W/pmcd.out" "$PCP_LOG_DIR/pmcd/pmcd.log" 2>/dev/null
	exit 1
    fi
    echo "install: system pmcd started (pid $pmcdpid)"
else
    echo "install: using the system pmcd already running"
fi

# --- make install, ./Install ------------------------------------------------
make -s install > "$W/make-install.out" 2>&1
check "make install" $?
(cd "$PMDADIR" && LUSTRECLIENT_ARGS="-r $W/tree" ./Install < /dev/null) > "$W/Install.out" 2>&1
sts=$?
# the client's and the job view's (its slots have values only while a job is kept)
grep -q "Check lustreclient metrics have appeared \.\.\. 681 metrics and [0-9]* values" "$W/Install.out"
check "./Install (exit $sts)" $(( sts | $? ))
cp "$CONF" "$W/pmcd.conf.installed"
grep -Eq "^lustreclient[[:space:]]+220[[:space:]]+pipe[[:space:]]+binary[[:space:]]+$PMDADIR/pmdalustreclient .*-r $W/tree" "$CONF"
check "pmcd.conf line" $?

# --- through the system pmcd --------------------------------------------------
pminfo -f lustreclient > "$W/pminfo.out" 2>&1
check "pminfo -f lustreclient" $?
grep -A1 '^lustreclient.version$' "$W/pminfo.out" | grep -q 'value "2.15.4"'
check "version through pmcd" $?
grep -A1 '^lustreclient.llite.mount_id$' "$W/pminfo.out" | grep -q "inst \[.* or \"scratch\"\] value \"$SBI\""
check "mount_id through pmcd" $?
n=$(grep -c '^    inst \[' "$W/pminfo.out")
# metrics a 2.15 client has no file or line for (hybrid I/O: 2.16+) and the job view's slots
# and kept jobs' metrics (no job kept) aside
nov=$(grep -B1 'No value' "$W/pminfo.out" | grep '^lustreclient\.' |
    grep -v '^lustreclient\.job\.\(slot\|begin_time\|restarts\)' |
    grep -vc '^lustreclient\.llite\.hybrid')
[ "$n" -gt 300 ] && [ "$nov" -le 2 ]
check "values through pmcd ($n instance values, $nov metrics without values)" $?
pminfo -T lustreclient.osc.req_waittime | grep -q 'Divide its rate'
check "help text installed" $?
# the job view as a node's prolog uses it: root's local store through the system pmcd and its
# shipped pmcd.conf [access] section, then the job's slot by its id
pmstore -h local: lustreclient.control.job_begin 4321 > "$W/store.out" 2>&1 &&
    pminfo -f lustreclient.job.begin_time | grep -q 'inst \[[0-7] or "4321"\]'
check "job start stored locally through the system pmcd" $?

# --- ./Remove -------------------------------------------------------------------
(cd "$PMDADIR" && ./Remove < /dev/null) > "$W/Remove.out" 2>&1
check "./Remove (exit $?)" $?
if pminfo lustreclient > "$W/pminfo-after.out" 2>&1; then
    echo "install metrics gone: FAILED"; cat "$W/pminfo-after.out"; fail=1
else
    echo "install metrics gone: ok"
fi
# pmdaproc.sh re-sorts pmcd.conf and drops its blank lines: compare the entries
norm() { grep -v '^#' "$1" | grep -v '^[[:space:]]*$' | sort; }
norm "$W/pmcd.conf.orig" > "$W/conf.before"
norm "$CONF" > "$W/conf.after"
diff -u "$W/conf.before" "$W/conf.after" > "$W/conf.diff"
check "pmcd.conf entries restored" $?
# the installed agent (other engineers' private pmcds may start their own meanwhile)
[ -z "$(ps -eo args= | grep "^$PMDADIR/pmdalustreclient" | grep -v grep)" ]
check "installed agent stopped" $?
exit $fail
