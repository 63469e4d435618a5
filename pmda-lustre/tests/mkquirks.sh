#!/bin/sh
# Build the "quirks" tree: things that cannot (or should not) live in git,
# e.g. a FIFO, symlinks pointing out of the tree and a file over 4 MiB.
# Usage: mkquirks.sh DIR   (DIR is removed and re-created)
set -e
T=$1
[ -n "$T" ] || { echo "usage: $0 DIR" >&2; exit 1; }
rm -rf "$T"
P=$T/proc/fs/lustre
D=$T/sys/kernel/debug/lustre
S=$T/sys/fs/lustre
mkdir -p $P/osc $P/mdc $P/osp $D/llite $D/osc $D/mdc $S

HDR='snapshot_time             1510950459.787092770 secs.nsecs'
PPR='pages per rpc         rpcs   % cum % |       rpcs   % cum %'
row() {	# label read write
    printf '%s:\t\t%10s %3s %3s   | %10s %3s %3s\n' "$1" "$2" 0 0 "$3" 0 0
}

# an unparsable version file: lustreclient.version has no value
printf 'this is not a version\n' > $S/version

# --- alpha: mounted twice; the smaller <sbi> (...01) is used --------------
mkdir -p $D/llite/alpha-ffff000000000001 $D/llite/alpha-ffff000000000002
{ echo "$HDR"
  echo 'read_bytes                10 samples [bytes] 4096 4096 40960'
  echo 'open                      5 samples [regs]'
  echo 'close                     1'; } > $D/llite/alpha-ffff000000000001/stats
{ echo "$HDR"; echo 'open                      99 samples [regs]'; } > $D/llite/alpha-ffff000000000002/stats

# alpha-OST0000: a 32768-page row (128M with 4K pages) grows the buckets
mkdir -p $P/osc/alpha-OST0000-osc-ffff000000000001
{ echo 'snapshot_time:         1510950459.787092770 (secs.nsecs)'
  echo 'read RPCs in flight:  1'
  echo 'write RPCs in flight: 0'
  printf '\n\t\t\tread\t\t\twrite\n%s\n' "$PPR"
  row 1 1 0
  i=2; while [ $i -le 16384 ]; do row $i 0 0; i=$((i * 2)); done
  row 32768 2 0; } > $P/osc/alpha-OST0000-osc-ffff000000000001/rpc_stats
# the same OST seen through the second mount: ignored
mkdir -p $P/osc/alpha-OST0000-osc-ffff000000000002
{ echo 'snapshot_time:         1510950459.787092770 (secs.nsecs)'
  printf '\n\t\t\tread\t\t\twrite\n%s\n' "$PPR"
  row 1 1000 1000; } > $P/osc/alpha-OST0000-osc-ffff000000000002/rpc_stats
# alpha-OST0002 is a symlink that stays inside the tree: followed
mkdir -p $P/osp/alpha-OST0002-real
{ echo 'snapshot_time:         1510950459.787092770 (secs.nsecs)'
  printf '\n\t\t\tread\t\t\twrite\n%s\n' "$PPR"
  row 1 0 0
  row 2 0 4; } > $P/osp/alpha-OST0002-real/rpc_stats
ln -s ../osp/alpha-OST0002-real $P/osc/alpha-OST0002-osc-ffff000000000001
# a server-side OSP link: skipped
mkdir -p $P/osp/alpha-OST0001-osc-MDT0000
ln -s ../osp/alpha-OST0001-osc-MDT0000 $P/osc/alpha-OST0001-osc-MDT0000
# alpha-MDT0000: no md_stats (as on 1.8) but stats present
mkdir -p $P/mdc/alpha-MDT0000-mdc-ffff000000000001 $D/mdc/alpha-MDT0000-mdc-ffff000000000001
{ echo "$HDR"; echo 'req_waittime              4 samples [usec] 10 20 60 1000'; } \
    > $D/mdc/alpha-MDT0000-mdc-ffff000000000001/stats

# --- beta: every file broken in a different way ---------------------------
mkdir -p $D/llite/beta-ffff0000000000b0
ln -s /etc/passwd $D/llite/beta-ffff0000000000b0/stats		# escapes the tree
mkdir -p $P/osc/beta-OST0000-osc-ffff0000000000b0 $P/osc/beta-OST0001-osc-ffff0000000000b0
mkfifo $P/osc/beta-OST0000-osc-ffff0000000000b0/rpc_stats		# must not hang
printf 'hello\nworld\n' > $P/osc/beta-OST0001-osc-ffff0000000000b0/rpc_stats
mkdir -p $D/osc/beta-OST0001-osc-ffff0000000000b0
{ echo "$HDR"; echo 'req_waittime              6 samples [usec] 10 20 90 1500'; } \
    > $D/osc/beta-OST0001-osc-ffff0000000000b0/stats
: > $D/osc/beta-OST0001-osc-ffff0000000000b0/stats.empty

# --- zeta: files cut off in the middle of a line, and empty files -------
mkdir -p $D/llite/zeta-ffff0000000000f1 $P/osc/zeta-OST0000-osc-ffff0000000000f1 \
    $D/osc/zeta-OST0000-osc-ffff0000000000f1 $P/mdc/zeta-MDT0000-mdc-ffff0000000000f1
{ echo "$HDR"
  echo 'open                      5 samples [regs]'
  printf 'read_bytes                10 samples [bytes] 4096 4096 409'; } \
    > $D/llite/zeta-ffff0000000000f1/stats			# cut: no llite values
{ echo 'snapshot_time:         1510950459.787092770 (secs.nsecs)'
  printf '\n\t\t\tread\t\t\twrite\n%s\n' "$PPR"
  row 1 5 6
  printf '2:\t\t         3   0'; } > $P/osc/zeta-OST0000-osc-ffff0000000000f1/rpc_stats	# cut
: > $D/osc/zeta-OST0000-osc-ffff0000000000f1/stats			# empty
: > $P/osc/zeta-OST0000-osc-ffff0000000000f1/import			# empty
printf 'current_state: FULL\n' > $P/osc/zeta-OST0000-osc-ffff0000000000f1/state
printf 'import:\n    state: FU' > $P/mdc/zeta-MDT0000-mdc-ffff0000000000f1/import	# cut

# --- devices that are not devices -----------------------------------------
ln -s /tmp $P/osc/gamma-OST0000-osc-ffff0000000000c0		# dir outside the tree
printf 'x\n' > $P/mdc/delta-MDT0000-mdc-ffff0000000000d0		# a file, not a dir
mkdir -p $P/osc/.hidden-OST0000-osc-ffff0000000000f0

# --- settings and host files, broken ----------------------------------------
# alpha's llite tunables (in sysfs, the debugfs directory has its stats):
# a word, a flag out of range, a link out of the tree, a fraction (kept: 7)
mkdir -p $S/llite/alpha-ffff000000000001
printf 'lots\n' > $S/llite/alpha-ffff000000000001/max_read_ahead_mb
printf '7.5\n' > $S/llite/alpha-ffff000000000001/max_read_ahead_per_file_mb
printf '2\n' > $S/llite/alpha-ffff000000000001/checksums
ln -s /etc/passwd $S/llite/alpha-ffff000000000001/hybrid_io
# osc max_dirty_mb: not a number; checksums fine
printf '1.2.3\n' > $P/osc/alpha-OST0000-osc-ffff000000000001/max_dirty_mb
printf '1\n' > $P/osc/alpha-OST0000-osc-ffff000000000001/checksums
# os-release leaves the tree (absolute link): usr/lib/os-release is read;
# the kernel release is a FIFO (must not hang: no value)
mkdir -p $T/etc $T/usr/lib $T/proc/sys/kernel
ln -s /etc/os-release $T/etc/os-release
printf 'NAME=Quirk\nVERSION_ID="1 \\"beta\\""\n' > $T/usr/lib/os-release
mkfifo $T/proc/sys/kernel/osrelease

# --- eps: llite stats over the 4 MiB cap ----------------------------------
mkdir -p $D/llite/eps-ffff0000000000e0
{ echo "$HDR"
  echo 'open                      3 samples [regs]'
  head -c 5000000 /dev/zero | tr '\0' 'x' | fold -w 99
  echo
  echo 'close                     7 samples [regs]'; } > $D/llite/eps-ffff0000000000e0/stats
