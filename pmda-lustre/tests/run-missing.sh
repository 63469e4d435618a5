#!/bin/sh
# Missing values, told apart: an OSC/MDC whose files could not be read in
# a fetch still has lustreclient.{osc,mdc}.device (from the listing alone),
# and lustreclient.agent.fetch.* of the same request say why its other
# metrics have no value.  Through dbpmda, on trees built here:
#   1. 2.15 with every osc/mdc file replaced by a directory (root reads a
#      file chmod 000, a directory it cannot): a device value for every OSC
#      and MDC, no other osc/mdc value, read_failures = the files tried;
#      a fetch of the devices alone reads no file;
#   2. 1,000 OSCs (hard links of one), -b 1 ms: a device value for every
#      OSC, budget_skips > 0, files_read + budget_skips = the files tried
#      (4 reader threads too); 0s for agent.fetch.* alone, also after an
#      instance request;
#   3. a remount between two fetches that the listing only sees once a file
#      is gone (-D appl1): the refresh reads twice and both passes count.
# Each on the agent's own fetch path and through pmdaFetch() (-F).
#   AGENT=/path/to/agent sh tests/run-missing.sh   e.g. a sanitizer build
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
agent_out missing
W=$OUT
fail=0
FETCH="lustreclient.agent.fetch.files_read lustreclient.agent.fetch.read_failures \
lustreclient.agent.fetch.parse_failures lustreclient.agent.fetch.budget_skips"

# run NAME TREE AGENT-ARGS: the dbpmda commands on stdin; $W/NAME.vals gets
# a line per metric of each fetch, "<fetch no> <metric> numval <n>", and
# for singular metrics "<fetch no> <metric> value <v>"
run() {
    { echo "open pipe $AGENT -d 220 -h $HERE/help -l $W/$1.log -r $2 $3"; cat; } |
	timeout 60 dbpmda -n root -ie > "$W/$1.raw" 2>&1
    awk '/^dbpmda> fetch/ { k++; name = "" }
	 /^  [0-9]+\.[0-9]+\.[0-9]+ \(/ {
	     name = $2; gsub(/[():]/, "", name)
	     print k, name, "numval", ($3 == "numval:" ? $4 : 0)
	 }
	 /^   value / && name != "" { print k, name, "value", $2 }' "$W/$1.raw" > "$W/$1.vals"
}
get() {		# NAME FETCH-NO METRIC numval|value
    awk -v k="$2" -v m="lustreclient.$3" -v w="$4" '$1 == k && $2 == m && $3 == w { print $4 }' "$W/$1.vals"
}
fetchstats() {	# NAME FETCH-NO: files_read read_failures parse_failures budget_skips
    echo $(get "$1" "$2" agent.fetch.files_read value) $(get "$1" "$2" agent.fetch.read_failures value) \
	 $(get "$1" "$2" agent.fetch.parse_failures value) $(get "$1" "$2" agent.fetch.budget_skips value)
}
expect() {	# what got want
    if [ "$2" = "$3" ]; then
	echo "missing $1: ok ($2)"
    else
	echo "missing $1: FAILED (got '$2', want '$3')"; fail=1
    fi
}
devices() {	# TREE TYPE: device directories of that type, over all bases
    find "$1" -mindepth 5 -maxdepth 5 -path "*/lustre/$2/*" -type d | sed 's|.*/||' | sort -u | wc -l
}

# --- 1. unreadable osc/mdc files ------------------------------------------
T=$W/unreadable
cp -a tests/trees/2.15 "$T"
files=$(find "$T" -type f \( -path '*/lustre/osc/*' -o -path '*/lustre/mdc/*' \))
for f in $files; do rm "$f" && mkdir "$f"; done
nosc=$(devices "$T" osc) nmdc=$(devices "$T" mdc)
# the reads fetch 2 tries: one per device and file, whichever base has it
# (osc stats, import, and state as import fails; mdc stats)
tried=$(echo "$files" | sed -n -e 's#.*/lustre/\(osc/[^/]*/\(stats\|import\|state\)\)$#\1#p' \
	-e 's#.*/lustre/\(mdc/[^/]*/stats\)$#\1#p' | sort -u | wc -l)
for mode in fast pmdafetch; do
    args="-D appl0"; [ $mode = pmdafetch ] && args="$args -F"
    # the devices alone, in an agent of their own: its trace has no read
    run devices-$mode "$T" "$args" <<EOF
fetch lustreclient.osc.device lustreclient.mdc.device
EOF
    n=devices-$mode
    expect "$mode: devices alone, reads" "$(grep -c ' read ' "$W/$n.log")" 0
    expect "$mode: devices alone, OSCs MDCs" "$(get $n 1 osc.device numval) $(get $n 1 mdc.device numval)" \
	"$nosc $nmdc"
    run unreadable-$mode "$T" "$args" <<EOF
fetch lustreclient.osc.device lustreclient.osc.read_bytes lustreclient.osc.state lustreclient.mdc.device lustreclient.mdc.req_count $FETCH
EOF
    n=unreadable-$mode
    expect "$mode: unreadable, device values for OSCs MDCs" \
	"$(get $n 1 osc.device numval) $(get $n 1 mdc.device numval)" "$nosc $nmdc"
    expect "$mode: unreadable, osc.read_bytes osc.state mdc.req_count values" \
	"$(get $n 1 osc.read_bytes numval) $(get $n 1 osc.state numval) $(get $n 1 mdc.req_count numval)" "0 0 0"
    expect "$mode: unreadable, fetch.{files_read,read_failures,parse_failures,budget_skips}" \
	"$(fetchstats $n 1)" "0 $tried 0 0"
done

# --- 2. the time budget on 1,000 OSCs ----------------------------------------
T=$W/big
cp -a tests/trees/2.15 "$T"
N=1000
for b in proc/fs/lustre sys/fs/lustre sys/kernel/debug/lustre; do
    d=$T/$b/osc
    [ -d "$d/scratch-OST0000-osc-ffff8c2a4b9e0000" ] || continue
    mv "$d/scratch-OST0000-osc-ffff8c2a4b9e0000" "$W/one"
    rm -rf "$d"/*
    i=0
    while [ $i -lt $N ]; do
	cp -al "$W/one" "$d/$(printf 'scratch-OST%04x-osc-ffff8c2a4b9e0000' $i)"
	i=$((i + 1))
    done
    rm -rf "$W/one"
done
# per OSC: rpc_stats, stats, import (which has the state: no "state" read)
want=$((3 * N))
OSCM="lustreclient.osc.device lustreclient.osc.read_bytes lustreclient.osc.state lustreclient.osc.rpc.read"
for mode in t4 pmdafetch; do
    args="-b 1"; [ $mode = t4 ] && args="$args -t 4"; [ $mode = pmdafetch ] && args="$args -F"
    run budget-$mode "$T" "$args" <<EOF
fetch $OSCM $FETCH
fetch $OSCM $FETCH
fetch $FETCH
instance 220.1
fetch $FETCH
EOF
    n=budget-$mode
    # the first fetch also lists 3,000 directories: it may skip every file
    for k in 1 2; do
	set -- $(fetchstats $n $k)
	have=$(get $n $k osc.read_bytes numval)
	expect "$mode -b 1, fetch $k: osc.device values" "$(get $n $k osc.device numval)" "$N"
	if [ "${4:-0}" -gt 0 ] && [ "${have:-$N}" -lt $N ]; then
	    echo "missing $mode -b 1, fetch $k: ok (files_read $1, budget_skips $4, osc.read_bytes for $have OSCs)"
	else
	    echo "missing $mode -b 1, fetch $k: FAILED (budget_skips '$4', osc.read_bytes for '$have' of $N OSCs)"
	    fail=1
	fi
	expect "$mode -b 1, fetch $k: files_read + budget_skips" "$((${1:-0} + ${4:-0}))" "$want"
	expect "$mode -b 1, fetch $k: read_failures parse_failures" "$2 $3" "0 0"
    done
    expect "$mode: agent.fetch.* alone" "$(fetchstats $n 3)" "0 0 0 0"
    expect "$mode: agent.fetch.* alone, after an instance request" "$(fetchstats $n 4)" "0 0 0 0"
done
# no budget, 4 threads: every file read and counted once
run budget-none "$T" "-b 0 -t 4" <<EOF
fetch $OSCM $FETCH
EOF
expect "-b 0 -t 4: fetch.* and osc.read_bytes values" \
    "$(fetchstats budget-none 1) $(get budget-none 1 osc.read_bytes numval)" "$want 0 0 0 $N"

# --- 3. a refresh that reads twice counts both passes ------------------------
T=$W/remount
L=$T/sys/kernel/debug/lustre/llite
for mode in fast pmdafetch; do
    args="-D appl1"; [ $mode = pmdafetch ] && args="$args -F"
    rm -rf "$T" && cp -a tests/trees/2.15 "$T"
    # -D appl1 judges directories by link count, as on procfs: the rename
    # (scratch remounted) shows only when scratch's stats are found gone,
    # and is then listed and read again in the same fetch: proj, then proj
    # and the new scratch = 3 (the gone file counts nowhere).  The rename
    # happens once dbpmda has answered the second fetch (it writes each
    # answer out at once), while it waits for the third.
    { echo "fetch lustreclient.llite.open lustreclient.agent.fetch.files_read"
      echo "instance 220.0"
      echo "fetch lustreclient.agent.fetch.files_read"
      i=0
      while c=$(grep -c '(lustreclient.agent.fetch.files_read):' "$W/remount-$mode.raw" 2>/dev/null)
	    [ "${c:-0}" -lt 2 ] && [ $i -lt 300 ]; do
	  sleep 0.1; i=$((i + 1))
      done
      # (its sysfs directory, the tunables, moves too: both are the mount's)
      for l in "$L" "$T/sys/fs/lustre/llite"; do
	  mv "$l/scratch-ffff8c2a4b9e0000" "$l/scratch-ffff8c2a4b9e9999"
      done
      echo "fetch lustreclient.llite.open lustreclient.agent.fetch.files_read"; } |
	run remount-$mode "$T" "$args"
    n=remount-$mode
    expect "$mode: files_read of each fetch, a remount before the third" \
	"$(get $n 1 agent.fetch.files_read value) $(get $n 2 agent.fetch.files_read value) $(get $n 3 agent.fetch.files_read value)" \
	"2 0 3"
    expect "$mode: llite.open values after the remount" "$(get $n 3 llite.open numval)" 2
done

if grep -l 'Sanitizer\|runtime error' "$W"/*.log 2>/dev/null; then
    echo "missing: sanitizer reports in the agent logs above"; fail=1
fi
exit $fail
