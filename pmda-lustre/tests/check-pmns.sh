#!/bin/sh
# PMNS, help text and the C item tables must agree:
#  - every metric in pmns has a one-line and a long help text (chkhelp -e
#    only checks existence, so the texts are checked directly too);
#  - every instance domain has help;
#  - the op tables in src/optables.c give the same PMIDs as pmns;
#  - the job view part of pmns and help, and the reporter's agentcontract.py,
#    are what jobgen makes from the job metric table (JOBGEN, built by make),
#    whose base metrics are in pmns.
cd "$(dirname "$0")/.." || exit 1
CHKHELP=${CHKHELP:-/usr/lib/pcp/bin/chkhelp}
NEWHELP=${NEWHELP:-/usr/lib/pcp/bin/newhelp}
fail=0
# check the help source as it is now, not a help.dir built earlier
mkdir -p tests/out
$NEWHELP -n root -v 2 -o tests/out/help-check help || { echo "check-pmns: newhelp failed"; exit 1; }
HELP=tests/out/help-check
metrics=$(pminfo -n root lustreclient) || { echo "check-pmns: pminfo -n root failed"; exit 1; }
n=$(echo "$metrics" | wc -l)

missing=$($CHKHELP -n root -e $HELP $metrics 2>&1)
if [ -n "$missing" ]; then
    echo "check-pmns: metrics without help:"; echo "$missing"; fail=1
fi
for m in $metrics; do
    # chkhelp prints "PMID <id> <name>:<text>" or "<no ... available>"
    oneline=$($CHKHELP -n root -O $HELP $m 2>/dev/null | sed -n 's/^PMID [^ ]* [^ ]*: *//p')
    long=$($CHKHELP -n root -H $HELP $m 2>/dev/null | sed 's/^PMID [^ ]* [^ ]*://' | tr -d ' \n')
    if [ -z "$oneline" ] || [ -z "$long" ] || echo "$oneline$long" | grep -q '<no'; then
	echo "check-pmns: $m: one-line or long help text missing"; fail=1
    fi
done
for i in 0 1 2 3 4 5; do
    if ! grep -q "^@ 220\.$i " help; then
	echo "check-pmns: instance domain 220.$i has no help"; fail=1
    fi
done

# src/optables.c { "file name", item, "metric", FLAGS } rows against pmns:
# C (count) -> <prefix>.<metric> = 220.<cluster>.<item>; L (latency) ->
# lustreclient.llite.latency.<metric> = 220.3.<item>; S (sum) like C.
check_table() {	# table cluster prefix
    rows=$(sed -n "/^const struct lc_op $1\[\] = {/,/^};/p" src/optables.c |
	   sed -n 's/.*{ "[^"]*", \([0-9]*\), "\([^"]*\)", \([^}]*\) }.*/\2 \1 \3/p')
    if [ -z "$rows" ]; then
	echo "check-pmns: no rows parsed from $1 in src/optables.c"; return
    fi
    echo "$rows" | while read -r name item flags; do
	for want in $(echo "$flags" | tr -d ' ' | tr '|' ' '); do
	    case $want in
		C|S) cl=$2; m="$3.$name" ;;
		L) cl=3; m="lustreclient.llite.latency.$name" ;;
		*) echo "check-pmns: $1: unknown flag $want"; continue ;;
	    esac
	    pmid=$(pminfo -n root -m "$m" 2>/dev/null | sed 's/.*PMID: //')
	    if [ "$pmid" != "220.$cl.$item" ]; then
		echo "check-pmns: $m is '$pmid' in pmns, 220.$cl.$item in $1"
	    fi
	done
    done
}
bad=$( { check_table lc_llite_ops 2 lustreclient.llite
	 check_table lc_mdc_ops 8 lustreclient.mdc
	 check_table lc_ra_ops 12 lustreclient.llite.readahead; } )
if [ -n "$bad" ]; then
    echo "$bad"; fail=1
fi

# the job view: generated text as committed, base metrics as in pmns
JOBGEN=${JOBGEN:-tests/out/jobgen}
sh tests/jobview.sh check "$JOBGEN" || fail=1
bad=$("$JOBGEN" base | while read -r k name pmid; do
    got=$(pminfo -n root -m "$name" 2>/dev/null | sed 's/.*PMID: //')
    [ "$got" = "$pmid" ] || echo "check-pmns: job metric $k: $name is '$got' in pmns, $pmid in lc_job_metrics"
done)
if [ -n "$bad" ]; then
    echo "$bad"; fail=1
fi

if [ $fail = 0 ]; then
    echo "check-pmns: ok ($n metrics, all with help)"
fi
exit $fail
