#!/bin/sh
# End-to-end test through a PRIVATE pmcd (never the system one): own
# config, PMNS, unix socket and a free TCP port, the agent on a copy of the
# 2.15 fixture tree.  Checks the full "pminfo -f lustreclient" against a
# reviewed golden file, that every metric has help and a descriptor
# through pmcd, that OSTs/mounts changing at runtime show up without a
# restart (instance ids kept), and that no saved instance cache of the
# host was touched.  pmcd is stopped by PID; nothing here needs systemd.
#   UPDATE=1 sh tests/run-pmcd.sh   rewrites the golden files (review them!)
cd "$(dirname "$0")/.." || exit 1
HERE=$(pwd)
W=$HERE/tests/out/pmcd
PMCD=${PMCD:-/usr/lib/pcp/bin/pmcd}
rm -rf "$W"
mkdir -p "$W"
fail=0
pmcdpid=

. /etc/pcp.conf
. tests/lib.sh
cachedir=$PCP_VAR_DIR/config/pmda
cache_state() { ls -l --time-style=full-iso "$cachedir"/220.* 2>/dev/null; }
cache_before=$(cache_state)

stop_pmcd() {
    stop_pid "$pmcdpid"
    pmcdpid=
}
trap stop_pmcd EXIT INT TERM

check() { golden pmcd "$1" "$2"; }	# name file: against tests/pmcd/<name>.out

cp -a tests/trees/2.15 "$W/tree"
T=$W/tree
printf 'lustreclient\t220\tpipe\tbinary\t%s -d 220 -h %s -r %s -l %s\n' \
    "$HERE/pmdalustreclient" "$HERE/help" "$T" "$W/lustreclient.log" > "$W/pmcd.conf"
# flattened PMNS: pmcd -n wants numeric PMIDs
{ echo 'root { lustreclient }'; sed 's/LUSTRECLIENT:/220:/' pmns; } > "$W/root"

port=$(free_port 44500)
H=localhost:$port

( cd "$W" && exec "$PMCD" -f -i 127.0.0.1 -c ./pmcd.conf -s ./pmcd.socket -p "$port" \
    -l ./pmcd.log -n ./root ) > "$W/pmcd.out" 2>&1 &
pmcdpid=$!
wait_pmcd "$pmcdpid" "$H" "$W" pmcd
agentpid=$(ps -o pid= --ppid "$pmcdpid" | tr -d ' ' | head -1)

# 1. everything, through pmcd
pminfo -h "$H" -f lustreclient > "$W/fetch.out" 2>&1
check 2.15-fetch "$W/fetch.out"

# 2. descriptors and help for every metric over the wire
pminfo -h "$H" -dT lustreclient > "$W/desc.out" 2>&1
n=$(grep -c '    Data Type: ' "$W/desc.out")
errs=$(grep -c '^pminfo\|Error:\|[Uu]nknown or illegal\|<no ' "$W/desc.out")
if [ "$n" -eq "$(pminfo -n root lustreclient | wc -l)" ] && [ "$errs" -eq 0 ]; then
    echo "pmcd desc+help: ok ($n metrics)"
else
    echo "pmcd desc+help: FAILED ($n metrics, $errs errors)"; fail=1
fi

# 3. runtime changes: an OST added, one removed, a remount of proj
P=$T/proc/fs/lustre D=$T/sys/kernel/debug/lustre
for b in "$P" "$D" "$T/sys/fs/lustre"; do
    cp -a "$b/osc/scratch-OST0002-osc-ffff8c2a4b9e0000" "$b/osc/scratch-OST0004-osc-ffff8c2a4b9e0000"
    rm -rf "$b/osc/scratch-OST0001-osc-ffff8c2a4b9e0000"
done
# (the llite directory in every base that has one: debugfs stats, sysfs tunables)
for b in "$D" "$T/sys/fs/lustre"; do
    mv "$b/llite/proj-ffff8c2a4f1c3000" "$b/llite/proj-ffff8c2a4f1c9999"
done
pminfo -h "$H" -f lustreclient.llite.mount_id lustreclient.osc.req_count lustreclient.osc.device \
    lustreclient.osc.state lustreclient.fs.rpc.read > "$W/change.out" 2>&1
check 2.15-change "$W/change.out"

# 4. stop pmcd by PID; its agent must go with it
stop_pmcd
st=$(ps -o stat= -p "$agentpid" 2>/dev/null)
case "$st" in
    ""|Z*) echo "pmcd stop: ok (agent $agentpid gone)" ;;
    *) echo "pmcd stop: FAILED (agent $agentpid still $st)"; kill "$agentpid"; fail=1 ;;
esac

# 5. agents on test trees never write the host's saved instance cache
if [ "$(cache_state)" = "$cache_before" ]; then
    echo "pmcd instance cache: ok (host cache files untouched)"
else
    echo "pmcd instance cache: FAILED ($cachedir/220.* changed)"; fail=1
fi
if grep -q 'Error\|Warning' "$W/lustreclient.log"; then
    echo "pmcd agent log: FAILED"; cat "$W/lustreclient.log"; fail=1
fi
exit $fail
