#!/bin/sh
# The %files lines of what is under BUILDROOT: every file and symlink; the directories that are
# the package's own, which are those with "lustre" in their path (/usr/lib/lustre-jobreport and
# everything below it, /var/lib/pcp/pmdas/lustreclient, pmieconf/lustre ...; system and PCP's
# directories have none); files under /etc as %config(noreplace), so rpm keeps an admin's
# changes (.rpmsave on erase). Names are quoted, glob characters escaped, % doubled.
#   packaging/rpm/filelist.sh BUILDROOT
set -eu
cd "$1"
find . -mindepth 1 -printf '%y /%P\n' | LC_ALL=C sort -k2 | awk '{
    type = substr($0, 1, 1); p = substr($0, 3)
    q = p; gsub(/[][*?{}\\]/, "\\\\&", q); gsub(/%/, "%%", q); q = "\"" q "\""
    if (type == "d") { if (p ~ /lustre/) print "%dir " q }
    else if (p ~ /^\/etc\//) print "%config(noreplace) " q
    else print q
}'
