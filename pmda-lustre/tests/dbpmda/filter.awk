# Make dbpmda output readable: name the instances in fetch results.  Run as
#	awk -f filter.awk FILE FILE
# The first pass collects metric -> indom (from "desc") and indom/id ->
# name (from "instance") anywhere in the run, since instance ids never
# change within one agent's life; the second pass rewrites
# "inst [N or ???]" to "inst [N or "name"]".
NR == FNR {
    if ($0 ~ /^PMID: /) pmid = $2
    if ($0 ~ /Data Type: .*InDom: /)
	for (i = 1; i <= NF; i++) if ($i == "InDom:") indom_of[pmid] = $(i + 1)
    if ($0 ~ /^pmInDom: /) cur = $2
    if ($0 ~ /^\[ *[0-9]+\] inst: [0-9]+ name: /) {
	match($0, /inst: [0-9]+/); id = substr($0, RSTART + 6, RLENGTH - 6)
	match($0, /name: ".*"/); name[cur, id] = substr($0, RSTART + 6, RLENGTH - 6)
    }
    next
}
/^  [0-9]+\.[0-9]+\.[0-9]+ \(/ { fpmid = $1 }
/^    inst \[[0-9]+ or \?\?\?\]/ {
    match($0, /\[[0-9]+ /); id = substr($0, RSTART + 1, RLENGTH - 2)
    key = indom_of[fpmid] SUBSEP id
    if (key in name) sub(/or \?\?\?\]/, "or " name[key] "]")
}
{ print }
