#!/bin/sh
# dbpmda golden tests: for each layout of tests/dbpmda/layouts, run the
# agent on tests/trees/<tree> (quirks: a tree built by mkquirks.sh) under
# dbpmda with a command script made from the PMNS, and compare with the
# reviewed tests/dbpmda/<layout>.out.  dbpmda exits 0 even on
# errors, so the comparison is the test.
#   UPDATE=1 sh tests/run-dbpmda.sh   rewrites the .out files (review them!)
#   AGENT=/path/to/agent sh tests/run-dbpmda.sh   e.g. a sanitizer build;
#   then any sanitizer report in the agent logs fails the test too.
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
agent_out dbpmda
sh tests/mkquirks.sh "$OUT/quirks-tree" || exit 1
fail=0

# The command script of a layout: every metric of the PMNS (so a new metric
# is covered, and shows up in the golden diff), desc and fetch one by one,
# the instance domains before and after the fetches (a bigger row grows the
# buckets), and for 2.15 the help texts too.  Of the job slots only slot 0
# (slots 1-7 are the same code and descriptors but for the cluster; no job
# is begun here, so they have no values either).
mkin() {	# layout tree agent-args
    metrics=$(pminfo -n root lustreclient | grep -v '^lustreclient\.job\.slot[1-9]')
    echo "# dbpmda golden test for the $1 layout (see tests/run-dbpmda.sh)"
    echo "open pipe $AGENT -d 220 -h $HERE/help -l $OUT/$1.log -r $2${3:+ $3}"
    for m in $metrics; do echo "desc $m"; done
    for i in 0 1 2 3 4 5; do echo "instance 220.$i"; done
    if [ "$1" = 2.15 ]; then
	for i in 0 1 2 3 4 5; do echo "text indom 220.$i"; done
	for m in $metrics; do echo "text $m"; done
    fi
    for m in $metrics; do echo "fetch $m"; done
    echo "instance 220.3"
    echo "instance 220.4"
}

# dbpmda's own words that differ between PCP releases, not the agent's answers: before PCP 6
# (Debian 11's 5.2) it heads a fetch's values "pmResult dump from ADDR timestamp: 0.000000
# 00:00:00.000" (PCP 6: "__pmResult ... 0.000000000 00:00:00.000000000", which the goldens keep),
# and says nothing of an empty instance domain (PCP 6: "Instance domain is empty", which the
# goldens leave out: the next line shows it empty all the same)
PCP5_DUMP='s/^pmResult dump from ADDR timestamp: 0\.000000 00:00:00\.000 /__pmResult dump from ADDR timestamp: 0.000000000 00:00:00.000000000 /
/^Instance domain is empty$/d'

run() {	# layout[@variant] tree agent-args: a variant is compared with the layout's golden
    layout=$1 tree=$2 golden=${1%@*}
    mkin "$golden" "$tree" "$3" | sed "s| -l $OUT/$golden.log | -l $OUT/$layout.log |" > "$OUT/$layout.in"
    # timeout: a hang (e.g. on a FIFO) must fail the test, not stall it
    timeout 60 dbpmda -n root -ie < "$OUT/$layout.in" > "$OUT/$layout.raw" 2>&1
    sed -e "s|$AGENT|PMDA|g" -e "s|$HERE/help|HELP|g" \
	-e "s|$OUT/$layout.log|LOG|g" -e "s|$tree|TREE|g" -e 's| -F$||' \
	-e 's/dump from 0x[0-9a-f]*/dump from ADDR/' -e "$PCP5_DUMP" "$OUT/$layout.raw" > "$OUT/$layout.sed"
    awk -f tests/dbpmda/filter.awk "$OUT/$layout.sed" "$OUT/$layout.sed" > "$OUT/$layout.out"
    if [ -n "$UPDATE" ] && [ "$layout" = "$golden" ]; then
	cp "$OUT/$layout.out" tests/dbpmda/$layout.out
	echo "dbpmda $layout: golden updated"
    elif diff -u tests/dbpmda/$golden.out "$OUT/$layout.out" > "$OUT/$layout.diff"; then
	echo "dbpmda $layout: ok"
    else
	echo "dbpmda $layout: FAILED"; head -40 "$OUT/$layout.diff"; fail=1
    fi
}

# layout, tree, extra agent options (tests/dbpmda/layouts)
while read -r layout tree args; do
    case $layout in ''|'#'*) continue ;; esac
    if [ "$tree" = QUIRKS ]; then
	run "$layout" "$OUT/quirks-tree" "$args"
    else
	run "$layout" "$HERE/tests/trees/$tree" "$args"
    fi
done < tests/dbpmda/layouts

# Reads per fetch: one fetch of every metric must read each file once.
tree=$HERE/tests/trees/2.15
log=$OUT/reads.log
{
    echo "debug appl0"
    echo "open pipe $AGENT -d 220 -h $HERE/help -l $log -r $tree -D appl0"
    echo "fetch $(pminfo -n root lustreclient | tr '\n' ' ')"
    echo "fetch lustreclient.llite.open lustreclient.agent.fetch.files_read"
    echo "fetch lustreclient.agent.fetch.files_read"
} | timeout 60 dbpmda -n root -ie > "$OUT/reads.raw" 2>&1
reads=$(grep -c ' read ' "$log")
dups=$(grep ' read ' "$log" | sed 's/.* read //' | sort | uniq -d | grep -v 'llite/scratch-ffff8c2a4b9e0000/stats\|llite/proj-ffff8c2a4f1c3000/stats' || true)
# 1st fetch: version + lnet + kernel osrelease + os-release + 2 llite x
# (stats, read_ahead_stats, 7 tunables) + 5 osc x (rpc_stats, stats, import,
# osc_stats, max_pages_per_rpc, max_rpcs_in_flight, max_dirty_mb,
# checksums) + 2 mdc x (md_stats, stats, import, rpc_stats) = 70;
# 2nd fetch: the 2 llite stats only = 72; 3rd (agent.fetch.* alone): none
if [ "$reads" -eq 72 ] && [ -z "$dups" ]; then
    echo "dbpmda reads-per-fetch: ok ($reads reads)"
else
    echo "dbpmda reads-per-fetch: FAILED ($reads reads, want 72; duplicates: $dups)"
    grep ' read ' "$log"; fail=1
fi
# The agent's own count of each fetch's reads (agent.fetch.files_read, in
# the same request) agrees with the trace, which also logs the files that
# do not exist (osc_stats of 4 OSCs, proj's mdc rpc_stats and the 3 hybrid_io
# files of each fs, a 2.15 client: not counted): 70 - 11 = 59, then 2, then
# 0 for a fetch of agent.fetch.* alone.
counted=$(sed -n '/(lustreclient.agent.fetch.files_read):/{n;s/^ *value //p;}' "$OUT/reads.raw" | tr '\n' ' ' | sed 's/ $//')
okreads=$(grep -c ' read .* -> [0-9]' "$log")
if [ "$counted" = "59 2 0" ] && [ "$okreads" -eq 61 ]; then
    echo "dbpmda agent.fetch.files_read: ok ($counted)"
else
    echo "dbpmda agent.fetch.files_read: FAILED (got $counted, want 59 2 0; $okreads reads in the trace, want 61)"
    fail=1
fi

# Only the files the metrics asked for: one fetch each, on the 2.17 tree
# (whose version has every file), the files it read from the trace.
tree=$HERE/tests/trees/2.17
log=$OUT/only.log
only() {	# metrics...: one fetch; prints the files read, basenames, sorted
    : > "$log"
    { echo "debug appl0"
      echo "open pipe $AGENT -d 220 -h $HERE/help -l $log -r $tree -D appl0"
      echo "fetch $*"; } | timeout 60 dbpmda -n root -ie > /dev/null 2>&1
    grep ' read ' "$log" | sed 's/.* read //; s/ ->.*//; s|.*/||' | sort | tr '\n' ' ' | sed 's/ $//'
}
check_only() {	# want metrics...
    want=$1; shift
    got=$(only "$@")
    if [ "$got" = "$want" ]; then
	echo "dbpmda only-needed files, $*: ok"
    else
	echo "dbpmda only-needed files, $*: FAILED (read '$got', want '$want')"; fail=1
    fi
}
check_only "stats" lustreclient.llite.read_bytes
check_only "stats version" lustreclient.llite.hybrid.read_bytes
check_only "max_read_ahead_mb" lustreclient.llite.max_read_ahead_mb
check_only "checksums hybrid_io_write_threshold_bytes" lustreclient.llite.checksums \
    lustreclient.llite.hybrid_io_write_threshold_bytes
check_only "max_dirty_mb max_dirty_mb" lustreclient.osc.max_dirty_mb
check_only "max_pages_per_rpc max_pages_per_rpc" lustreclient.osc.max_pages_per_rpc
check_only "osrelease" lustreclient.kernel
check_only "os-release" lustreclient.os
check_only "" lustreclient.pagesize
# A job slot: a fetch of a slot not in use reads nothing; job_begin (a store)
# and a fetch of one slot metric read the job's files (llite stats and
# read_ahead_stats, osc rpc_stats, stats and import, mdc import, the version
# for the hybrid counters), and each once: no tunable, no md_stats
check_only "" lustreclient.job.slot0.llite.read_bytes
: > "$log"
{ echo "debug appl0"
  echo "open pipe $AGENT -d 220 -h $HERE/help -l $log -r $tree -D appl0"
  echo 'attr 11 "0"'
  echo 'store lustreclient.control.job_begin "42"'
  echo "fetch lustreclient.job.slot3.osc.read_bytes"
  echo "fetch lustreclient.job.slot0.llite.read_bytes"; } | timeout 60 dbpmda -n root -ie > "$OUT/jobreads.out" 2>&1
got=$(grep ' read ' "$log" | sed 's/.* read //; s/ ->.*//' | sort | uniq -c | awk '{print $1}' | sort -u | tr '\n' ' ')
files=$(grep ' read ' "$log" | sed 's/.* read //; s/ ->.*//; s|.*/||' | sort -u | tr '\n' ' ' | sed 's/ $//')
if [ "$files" = "import read_ahead_stats rpc_stats stats version" ] && [ "$got" = "2 " ]; then
    echo "dbpmda only-needed files, job_begin and a job slot: ok"
else
    echo "dbpmda only-needed files, job_begin and a job slot: FAILED (read '$files', times per file '$got')"
    fail=1
fi
# A slot names the job it holds (job_id, from memory: no file read for it):
# the first job's id; after 8 newer jobs the 9th, which took the oldest's
# slot; none once it ended.  Golden tests/dbpmda/job_id.out, through the
# agent's own fetch path and pmdaFetch() (-F); every job file is read once
# per job_begin (9), never for a job id.
tree=$HERE/tests/trees/2.15
for opt in "" -F; do
    log=$OUT/job_id$opt.log
    { echo "debug appl0"
      echo "open pipe $AGENT -d 220 -h $HERE/help -l $log -r $tree -D appl0${opt:+ $opt}"
      echo 'attr 11 "0"'
      echo 'store lustreclient.control.job_begin "42"'
      echo "fetch lustreclient.job.slot0.job_id lustreclient.job.slot1.job_id"
      for j in 43 44 45 46 47 48 49 50; do echo "store lustreclient.control.job_begin \"$j\""; done
      echo "fetch lustreclient.job.slot0.job_id lustreclient.job.slot1.job_id lustreclient.job.slot7.job_id"
      echo 'store lustreclient.control.job_end "50"'
      echo "fetch lustreclient.job.slot0.job_id"; } | timeout 60 dbpmda -n root -ie > "$OUT/job_id$opt.raw" 2>&1
    sed -e "s|$AGENT|PMDA|g" -e "s|$HERE/help|HELP|g" -e "s|$log|LOG|g" -e "s|$tree|TREE|g" -e 's| -F$||' \
	-e 's/dump from 0x[0-9a-f]*/dump from ADDR/' -e "$PCP5_DUMP" "$OUT/job_id$opt.raw" > "$OUT/job_id$opt.out"
    if [ -n "$UPDATE" ] && [ -z "$opt" ]; then
	cp "$OUT/job_id.out" tests/dbpmda/job_id.out; echo "dbpmda job_id: golden updated"
    elif diff -u tests/dbpmda/job_id.out "$OUT/job_id$opt.out" > "$OUT/job_id$opt.diff"; then
	echo "dbpmda job_id${opt:+ $opt}: ok"
    else
	echo "dbpmda job_id${opt:+ $opt}: FAILED"; head -40 "$OUT/job_id$opt.diff"; fail=1
    fi
    times=$(grep ' read ' "$log" | sed 's/.* read //; s/ ->.*//' | sort | uniq -c | awk '{print $1}' | sort -u | tr '\n' ' ')
    if [ "$times" = "9 " ]; then
	echo "dbpmda only-needed files, job ids${opt:+ $opt}: ok (none)"
    else
	echo "dbpmda only-needed files, job ids${opt:+ $opt}: FAILED (times per file '$times', want 9: one per job_begin)"
	fail=1
    fi
done
if grep -l 'Sanitizer\|runtime error' "$OUT"/*.log 2>/dev/null; then
    echo "dbpmda: sanitizer reports in the agent logs above"; fail=1
fi
exit $fail
