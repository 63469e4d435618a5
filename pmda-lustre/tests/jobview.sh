#!/bin/sh
# The job view's PMNS and help text, and the reporter's copy of the contract,
# are made from the one job metric table (src/jobdiff.c) by jobgen
# (src/jobgen.c); pmns and help keep them between their "BEGIN job view" and
# "END job view" lines, the reporter's agentcontract.py is all jobgen's.
#   sh tests/jobview.sh update JOBGEN   rewrite them
#   sh tests/jobview.sh check JOBGEN    fail if one differs from jobgen's output
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
contract=../reporter/lustre_jobreport/agentcontract.py
"$gen" py > tests/out/jobview.py || exit 1
if [ "$mode" = update ]; then
    cmp -s $contract tests/out/jobview.py || { cp tests/out/jobview.py $contract; echo "jobview: $contract updated"; }
elif ! cmp -s $contract tests/out/jobview.py; then
    echo "jobview: $contract is not what jobgen makes (make jobview):"
    diff -u $contract tests/out/jobview.py | head -20; fail=1
fi
[ $fail = 0 ] && [ "$mode" = check ] && echo "jobview: pmns, help and the reporter's agentcontract.py match the job metric table"
exit $fail
