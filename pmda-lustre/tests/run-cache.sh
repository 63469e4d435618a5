#!/bin/sh
# Instance ids survive an agent restart when the instance cache is
# persistent (-C on), and never when it is not (-C off, the default for a
# ROOT other than /).  PCP_VAR_DIR points the saved cache into tests/out,
# so the host's $PCP_VAR_DIR/config/pmda is not touched.
cd "$(dirname "$0")/.." || exit 1
HERE=$(pwd)
W=$HERE/tests/out/cache
rm -rf "$W"
mkdir -p "$W/var/config/pmda"
cp -a tests/trees/2.10 "$W/tree"
fail=0

insts() {	# cache-mode indom
    { echo "open pipe $HERE/pmdalustreclient -d 220 -h $HERE/help -l $W/agent.log -r $W/tree -C $1"
      echo "instance $2"; } |
    PCP_VAR_DIR=$W/var timeout 30 dbpmda -n root -ie 2>&1 | sed -n 's/^\[ *[0-9]*\] inst: \([0-9]*\) name: \(.*\)/\1 \2/p' | tr '\n' ' '
}
expect() {	# what got want
    if [ "$2" = "$3" ]; then
	echo "cache $1: ok"
    else
	echo "cache $1: FAILED"; echo "  got:  $2"; echo "  want: $3"; fail=1
    fi
}

expect "first run" "$(insts on 220.1)" \
    '0 "home-OST0000" 1 "home-OST0001" 2 "scratch-OST0000" 3 "scratch-OST0001" 4 "scratch-OST0003" '
[ -s "$W/var/config/pmda/220.1" ] || { echo "cache save: FAILED (no 220.1 written)"; fail=1; }

# home unmounted everywhere, a new fs that sorts first appears
for b in proc/fs/lustre sys/fs/lustre; do
    rm -rf "$W/tree/$b"/osc/home-* "$W/tree/$b"/llite/home-* "$W/tree/$b"/mdc/home-*
done
mkdir -p "$W/tree/proc/fs/lustre/osc/aaa-OST0000-osc-ffff000000000aaa"
expect "restart, persistent" "$(insts on 220.1)" \
    '2 "scratch-OST0000" 3 "scratch-OST0001" 4 "scratch-OST0003" 5 "aaa-OST0000" '
expect "restart, FS kept" "$(insts on 220.0)" '1 "scratch" '
expect "in memory only" "$(insts off 220.1)" \
    '0 "aaa-OST0000" 1 "scratch-OST0000" 2 "scratch-OST0001" 3 "scratch-OST0003" '
exit $fail
