#!/bin/sh
# The job view's PMNS and help text are made from the one job metric table
# (src/jobdiff.c) by jobgen (src/jobgen.c); pmns and help keep them between
# their "BEGIN job view" and "END job view" lines.
#   sh tests/jobview.sh update JOBGEN   rewrite that part of pmns and help
#   sh tests/jobview.sh check JOBGEN    fail if it differs from jobgen's output
cd "$(dirname "$0")/.." || exit 1
mode=$1 gen=$2
[ -x "$gen" ] || { echo "jobview: no jobgen at '$gen'"; exit 1; }
mkdir -p tests/out
fail=0
for f in pmns help; do
    "$gen" $f > tests/out/jobview.$f || exit 1
    if ! grep -q 'BEGIN job view' $f || ! grep -q 'END job view' $f; then
	echo "jobview: $f has no BEGIN/END job view lines"; exit 1
    fi
    awk -v gen=tests/out/jobview.$f '
	/BEGIN job view/ { print; while ((getline l < gen) > 0) print l; skip = 1; next }
	/END job view/ { skip = 0 }
	!skip { print }' $f > tests/out/jobview.$f.new
    if [ "$mode" = update ]; then
	cmp -s $f tests/out/jobview.$f.new || { cp tests/out/jobview.$f.new $f; echo "jobview: $f updated"; }
    elif ! cmp -s $f tests/out/jobview.$f.new; then
	echo "jobview: the job view part of $f is not what jobgen makes (make jobview):"
	diff -u $f tests/out/jobview.$f.new | head -20; fail=1
    fi
done
[ $fail = 0 ] && [ "$mode" = check ] && echo "jobview: pmns and help match the job metric table"
exit $fail
