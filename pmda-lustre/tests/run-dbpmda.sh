#!/bin/sh
# dbpmda golden tests: run each tests/dbpmda/<layout>.in against the agent
# on tests/trees/<layout> (quirks: a tree built by mkquirks.sh) and compare
# with the reviewed tests/dbpmda/<layout>.out.  dbpmda exits 0 even on
# errors, so the comparison is the test.
#   UPDATE=1 sh tests/run-dbpmda.sh   rewrites the .out files (review them!)
#   AGENT=/path/to/agent sh tests/run-dbpmda.sh   e.g. a sanitizer build;
#   then any sanitizer report in the agent logs fails the test too.
cd "$(dirname "$0")/.." || exit 1
HERE=$(pwd)
AGENT=${AGENT:-$HERE/pmdalustreclient}
OUT=$HERE/tests/out/dbpmda${AGENT_TAG:+-$AGENT_TAG}
rm -rf "$OUT"
mkdir -p "$OUT"
sh tests/mkquirks.sh "$OUT/quirks-tree" || exit 1
fail=0

run() {	# layout tree
    layout=$1 tree=$2
    sed -e "s|@AGENT@|$AGENT|" -e "s|@HELP@|$HERE/help|" \
	-e "s|@LOG@|$OUT/$layout.log|" -e "s|@TREE@|$tree|" \
	-e '/^#/d' tests/dbpmda/$layout.in > "$OUT/$layout.in"
    # timeout: a hang (e.g. on a FIFO) must fail the test, not stall it
    timeout 60 dbpmda -n root -ie < "$OUT/$layout.in" > "$OUT/$layout.raw" 2>&1
    sed -e "s|$AGENT|PMDA|g" -e "s|$HERE/help|HELP|g" \
	-e "s|$OUT/$layout.log|LOG|g" -e "s|$tree|TREE|g" \
	-e 's/dump from 0x[0-9a-f]*/dump from ADDR/' "$OUT/$layout.raw" > "$OUT/$layout.sed"
    awk -f tests/dbpmda/filter.awk "$OUT/$layout.sed" "$OUT/$layout.sed" > "$OUT/$layout.out"
    if [ -n "$UPDATE" ]; then
	cp "$OUT/$layout.out" tests/dbpmda/$layout.out
	echo "dbpmda $layout: golden updated"
    elif diff -u tests/dbpmda/$layout.out "$OUT/$layout.out" > "$OUT/$layout.diff"; then
	echo "dbpmda $layout: ok"
    else
	echo "dbpmda $layout: FAILED"; head -40 "$OUT/$layout.diff"; fail=1
    fi
}

for f in tests/dbpmda/*.in; do
    layout=$(basename "$f" .in)
    if [ "$layout" = quirks ]; then
	run quirks "$OUT/quirks-tree"
    else
	run "$layout" "$HERE/tests/trees/$layout"
    fi
done

# Reads per fetch: one fetch of every metric must read each file once.
tree=$HERE/tests/trees/2.15
log=$OUT/reads.log
{
    echo "debug appl0"
    echo "open pipe $AGENT -d 220 -h $HERE/help -l $log -r $tree -D appl0"
    echo "fetch $(pminfo -n root lustreclient | tr '\n' ' ')"
    echo "fetch lustreclient.llite.open"
} | timeout 60 dbpmda -n root -ie > "$OUT/reads.raw" 2>&1
reads=$(grep -c ' read ' "$log")
dups=$(grep ' read ' "$log" | sed 's/.* read //' | sort | uniq -d | grep -v 'llite/scratch-ffff8c2a4b9e0000/stats\|llite/proj-ffff8c2a4f1c3000/stats' || true)
# 1st fetch: version + 2 llite + 5 osc x (rpc_stats, stats, import) + 2 mdc x
# (md_stats, stats, import) = 24; 2nd fetch: the 2 llite stats only = 26
if [ "$reads" -eq 26 ] && [ -z "$dups" ]; then
    echo "dbpmda reads-per-fetch: ok ($reads reads)"
else
    echo "dbpmda reads-per-fetch: FAILED ($reads reads, want 26; duplicates: $dups)"
    grep ' read ' "$log"; fail=1
fi
if grep -l 'Sanitizer\|runtime error' "$OUT"/*.log 2>/dev/null; then
    echo "dbpmda: sanitizer reports in the agent logs above"; fail=1
fi
exit $fail
