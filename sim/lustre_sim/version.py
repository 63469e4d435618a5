"""Lustre version strings and the per-version rules (paths, formats, counter sets).

Every rule cites notes/lustre-formats.md (LF §n) and was checked against the Lustre source where
noted. A profile is derived from the numeric version, so any release maps onto the rules of its
family; vendor suffixes (2.14.0_ddn133) are kept verbatim in the version file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_VRE = re.compile(r"^(?:lustre:\s*)?(\d+)\.(\d+)(?:\.(\d+))?")

# Families that have been checked byte for byte (golden tests); others fall into the nearest rules.
# "2.18" stands for master after 2.17.54 (2.18-dev): 35-column counter names (LU-11850).
# The node the defaults assume: RAM/32 is above every max_read_ahead_mb cap, RAM/8 above the
# 2000 MiB max_dirty_mb (llite_lib.c, obd.h client_adjust_max_dirty).
NODE_RAM_GIB = 128

SUPPORTED = ("1.8", "2.9", "2.10", "2.12", "2.15.0", "2.15", "2.16", "2.17", "2.18")


def parse(version: str) -> tuple[int, int, int]:
    m = _VRE.match(version.strip())
    if not m:
        raise ValueError(f"not a Lustre version string: {version!r}")
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


@dataclass(frozen=True)
class Profile:
    version: str                 # as written to the version file
    v: tuple[int, int, int]

    # -- version file (LF §1)
    @property
    def version_path(self) -> str:
        return "sys/fs/lustre/version" if self.v >= (2, 10, 0) else "proc/fs/lustre/version"

    def version_text(self) -> str:
        if self.v >= (2, 10, 0):
            return f"{self.version}\n"
        if self.v[:2] == (2, 9):
            return f"lustre: {self.version}\n"
        # 1.8.x and 2.0-2.8: three lines, TWO spaces after "build:"
        return (f"lustre: {self.version}\nkernel: patchless_client\n"
                f"build:  {self.version}-wc1-g4d6e3ea-CHANGED-2.6.32-431.23.3.el6.x86_64\n")

    @property
    def health_path(self) -> str:
        return "sys/fs/lustre/health_check" if self.v >= (2, 10, 0) else "proc/fs/lustre/health_check"

    # -- where each file lives (LF §0 table)
    def root_of(self, kind: str) -> str:
        """'proc' (proc/fs/lustre), 'debugfs' (sys/kernel/debug/lustre) or 'sysfs' (sys/fs/lustre)."""
        v = self.v
        if kind in ("llite_stats", "read_ahead_stats"):
            return "debugfs" if v >= (2, 12, 0) else "proc"
        if kind in ("osc_stats_ptlrpc", "mdc_stats"):
            return "debugfs" if v >= (2, 12, 0) else "proc"
        if kind == "rpc_stats":
            return "debugfs" if v >= (2, 16, 53) else "proc"
        if kind == "md_stats":
            return "proc"             # lprocfs_alloc_md_stats uses obd_proc_entry, even in 2.17
        if kind in ("import", "state", "osc_stats_lockless", "mdc_rpc_stats"):
            return "debugfs" if v >= (2, 16, 53) else "proc"
        if kind == "tunable":          # max_pages_per_rpc (proc until LU-8066 moves)
            return "proc"
        raise KeyError(kind)

    # -- client settings (tunables) and where each lives. Source-checked in lustre-release:
    # llite/lproc_llite.c (LUSTRE_RW_ATTR = sysfs, lprocfs_vars = proc), osc/lproc_osc.c.
    def llite_tunable_root(self, name: str) -> str | None:
        """'proc', 'sysfs', or None when this version has no such llite file."""
        v = self.v
        if name in ("max_read_ahead_mb", "max_read_ahead_per_file_mb", "max_read_ahead_whole_mb"):
            # lprocfs_llite_obd_vars: registered where llite stats are (ll_proc_root, then
            # ll_debugfs_entry from 2.12.0) until LU-12043 made them sysfs attributes
            return "sysfs" if v >= (2, 13, 53) else self.root_of("llite_stats")
        if name == "checksum_pages":
            return "sysfs" if v >= (2, 11, 55) else "proc"       # 2.12: an alias of checksums
        if name == "checksums":
            return "sysfs" if v >= (2, 11, 55) else None         # LUSTRE_RW_ATTR(checksums)
        if name == "hybrid_io":
            return "sysfs" if v >= (2, 15, 62) else None         # LU-13802
        if name in ("hybrid_io_read_threshold_bytes", "hybrid_io_write_threshold_bytes"):
            return "sysfs" if v >= (2, 15, 64) else None         # LU-13802 switch thresholds
        raise KeyError(name)

    def osc_tunable_root(self, name: str) -> str:
        if name == "checksums":
            return "sysfs" if self.v >= (2, 11, 52) else "proc"
        if name == "max_pages_per_rpc":
            return self.root_of("tunable")
        if name in ("active", "max_rpcs_in_flight", "max_dirty_mb"):
            return self.device_attr_root
        raise KeyError(name)

    @property
    def device_attr_root(self) -> str:
        """osc and mdc active, max_rpcs_in_flight (and osc max_dirty_mb): lprocfs_vars in /proc
        up to 2.11.51, LUSTRE_RW_ATTR in sysfs from 2.11.52 (lproc_osc.c, lproc_mdc.c)."""
        return "sysfs" if self.v >= (2, 11, 52) else "proc"

    @property
    def has_hybrid_io(self) -> bool:
        """Hybrid I/O (buffered calls switched to direct I/O by size) with its thresholds and
        the hybrid_noswitch/_writesize_switch/_readsize_switch counters: 2.15.64+ (LU-13802)."""
        return self.v >= (2, 15, 64)

    @property
    def has_hybrid_bytes(self) -> bool:
        """llite stats hybrid_read_bytes/hybrid_write_bytes: 2.16.52+ (LU-18432)."""
        return self.v >= (2, 16, 52)

    def llite_defaults(self, rpc_bytes: int) -> dict:
        """The llite settings a fresh mount has (llite_lib.c ll_init_sbi/client_common_fill_super,
        llite_internal.h), for a node of NODE_RAM_GIB and OSTs that grant rpc_bytes RPCs.

        max_read_ahead_mb = min(RAM/32, cap), the cap 40 MiB up to 2.8.52, 64 MiB from 2.8.53
        (LU-7990), 1024 MiB from 2.13.57 (LU-11548); per_file = max_read_ahead_mb before
        2.13.57, then min(max/4, 256). whole: 2 MiB; from 2.10.55 (LU-7990) max(2 MiB, the
        connect data's ocd_brw_size) = the largest BRW the client supports (16 MiB until the
        64 MiB RPCs of 2.12.5/2.12.54, LU-11526, which also capped it at per_file); from
        2.16.51 (LU-18504) max(4 MiB, the OSTs' max_pages_per_rpc), capped at per_file.
        checksums: 1 (configure enables data checksums), but the 1.8 checksum_pages file shows
        LL_SBI_LLITE_CHECKSUM (in-memory page checksums), never set by default: 0.
        hybrid_io: off until LU-18033 turned it on by default in 2.16.59."""
        v = self.v
        ram_mb = NODE_RAM_GIB * 1024
        if v < (2, 8, 53):
            max_ra = per_file = min(ram_mb // 32, 40)
        elif v < (2, 13, 57):
            max_ra = per_file = min(ram_mb // 32, 64)
        else:
            max_ra = min(ram_mb // 32, 1024)
            per_file = min(max_ra // 4, 256)
        if v < (2, 10, 55):
            whole = 2
        elif v < (2, 12, 5):
            whole = 16
        elif v < (2, 16, 51):
            whole = min(64, per_file)
        else:
            whole = min(max(4, rpc_bytes >> 20), per_file)
        return {"max_read_ahead_mb": max_ra, "max_read_ahead_per_file_mb": per_file,
                "max_read_ahead_whole_mb": whole, "checksums": 0 if v < (2, 0, 0) else 1,
                "hybrid_io": 1 if v >= (2, 16, 59) else 0,
                "hybrid_io_read_threshold_bytes": 8 << 20,     # SBI_DEFAULT_HYBRID_IO_READ_THRESHOLD
                "hybrid_io_write_threshold_bytes": 2 << 20}    # SBI_DEFAULT_HYBRID_IO_WRITE_THRESHOLD

    @property
    def max_dirty_mb_default(self) -> int:
        """osc max_dirty_mb: OSC_MAX_DIRTY_DEFAULT, 8 RPCs in flight x 4 = 32 MiB, then 2000 from
        2.11.53 (LU-10990), below RAM/8 either way (client_adjust_max_dirty)."""
        return 2000 if self.v >= (2, 11, 53) else 32

    def host_defaults(self, page_size: int) -> dict:
        """A plausible node image for the release: the RHEL the release was built for."""
        arch = "x86_64" if page_size == 4096 else "aarch64"
        v = self.v
        if v < (2, 9, 0):       # 1.8 - 2.8: RHEL 6 (the kernel of the version file's build line)
            return {"kernel": f"2.6.32-431.23.3.el6.{arch}", "os_image": "rhel-6.5"}
        if v < (2, 12, 0):
            return {"kernel": f"3.10.0-693.21.1.el7.{arch}", "os_image": "rhel-7.4"}
        if v < (2, 13, 0):
            return {"kernel": f"3.10.0-1160.25.1.el7.{arch}", "os_image": "rhel-7.9"}
        if v < (2, 15, 0):
            return {"kernel": f"4.18.0-240.22.1.el8_3.{arch}", "os_image": "rhel-8.3"}
        if v < (2, 16, 0):
            return {"kernel": f"4.18.0-477.27.1.el8_8.{arch}", "os_image": "rhel-8.8"}
        if v < (2, 16, 59):
            return {"kernel": f"5.14.0-427.42.1.el9_4.{arch}", "os_image": "rhel-9.4"}
        return {"kernel": f"5.14.0-570.17.1.el9_6.{arch}", "os_image": "rhel-9.6"}

    @property
    def has_md_stats(self) -> bool:
        return self.v >= (2, 1, 0)

    @property
    def has_mdc_rpc_stats(self) -> bool:
        """mdc.*.rpc_stats, obd_mod_rpc_stats_seq_show (LF §4): 2.8+."""
        return self.v >= (2, 8, 0)

    @property
    def mdc_rpc_header(self) -> str:
        """LF §4: 2.8-2.9 '%lu.%lu (secs.usecs)'; 2.10-2.14 '%llu.%9lu (secs.nsecs)' with the
        nsec part SPACE-padded; 2.15+ the snapshot/start/elapsed header of osc rpc_stats."""
        v = self.v
        if v < (2, 10, 0):
            return "2.8"
        if v < (2, 15, 0):
            return "2.10"
        return self.rpc_header

    @property
    def mdc_rpc_pct_bug(self) -> bool:
        """2.16+: the modify section header is printed with a literal '%%' (LF §4)."""
        return self.v >= (2, 16, 0)

    @property
    def mdc_rpc_dom_block(self) -> bool:
        """2.12+: an osc-style block (DoM I/O) follows the modify section (LF §4)."""
        return self.v >= (2, 12, 0)

    @property
    def rpc_latency_section(self) -> bool:
        """2.16.58+ (2.17, LU-18993): 'RPC latency (us)' histogram after 'offset' (LF §3)."""
        return self.v >= (2, 16, 58)

    @property
    def name_width(self) -> int:
        """lprocfs stats name column: %-25s, %-35s in master after 2.17.54 (LU-11850, LF §2)."""
        return 35 if self.v >= (2, 17, 54) else 25

    @property
    def lnet_stats_path(self) -> str:
        """/proc/sys/lnet/stats before the move to debugfs, /sys/kernel/debug/lnet/stats after.
        LF §7 gives both; the 2.12 cut is the one PCP's pmdalustre assumes ("defaults for
        Lustre v2.12 and later"), the same release that moved llite to debugfs."""
        return "sys/kernel/debug/lnet/stats" if self.v >= (2, 12, 0) else "proc/sys/lnet/stats"

    # -- lprocfs stats header (LF §2)
    @property
    def stats_header(self) -> str:
        v = self.v
        if v < (2, 10, 0):
            return "usecs"            # "%-25s %lu.%lu secs.usecs", usec not zero-padded
        if v < (2, 15, 0):
            return "nsecs"            # one line, %09lu
        if v < (2, 15, 2):
            return "mono3"            # 2.15.0/2.15.1: LU-16231, monotonic, start 0
        return "real3"                # 2.15.2+: snapshot/start/elapsed, wall clock

    # -- rpc_stats header (LF §3)
    @property
    def rpc_header(self) -> str:
        v = self.v
        if v < (2, 0, 0):
            return "1.8"
        if v < (2, 10, 0):
            return "2.0"
        if v < (2, 15, 0):
            return "2.10"
        if v < (2, 15, 2):
            return "2.15.0"
        return "2.15.2"

    @property
    def rif_dio_line(self) -> bool:
        return self.v >= (2, 16, 51)

    @property
    def rif_first_row(self) -> int:
        """'rpcs in flight' row 0 printed up to 2.13, dropped from 2.14 (LU-14130)."""
        return 1 if self.v >= (2, 14, 0) else 0

    @property
    def rif_zero_based(self) -> bool:
        """<= 2.2: tallied before incrementing the in-flight count."""
        return self.v < (2, 3, 0)

    @property
    def offset_in_chunk(self) -> bool:
        """<= 2.2: offset histogram of the offset inside the 1 MiB (PTLRPC_MAX_BRW_SIZE) chunk."""
        return self.v < (2, 3, 0)

    @property
    def max_brw_pages_4k(self) -> int:
        v = self.v
        if v < (2, 4, 0):
            return 256
        if v < (2, 9, 0):
            return 1024
        if v < (2, 13, 0):
            return 4096
        return 16384

    # -- units (LF §2)
    @property
    def usec(self) -> str:
        return "usecs" if self.v >= (2, 15, 52) else "usec"

    @property
    def sec(self) -> str:
        return "secs" if self.v >= (2, 15, 52) else "sec"

    @property
    def llite_family(self) -> str:
        v = self.v
        if v < (2, 4, 0):
            return "1.8"
        if v < (2, 14, 0):
            return "2.4"
        return "2.14"

    @property
    def open_tally(self) -> str:
        """'handle': llite 'open' counted only when a new MDS open handle is made (1.8-2.3,
        ll_file_open tallies inside the och branch); 'every': every successful open (2.4+)."""
        return "handle" if self.v < (2, 4, 0) else "every"

    @property
    def has_idle_line(self) -> bool:
        return self.v >= (2, 12, 0)

    @property
    def md_stats_names(self) -> tuple[str, ...]:
        return MD_STATS_29 if self.v >= (2, 9, 0) else MD_STATS_21

    @property
    def mds_root_opname(self) -> str:
        return "mds_get_root" if self.v >= (2, 8, 0) else "mds_getstatus"

    @property
    def has_enable_stats_header(self) -> bool:
        return self.v >= (2, 15, 58)

    @property
    def osc_stats_has_truncate(self) -> bool:
        return self.v < (2, 15, 0)

    @property
    def ra_names_with_spaces(self) -> bool:
        return self.v < (2, 15, 0)

    @property
    def ra_pages_counters(self) -> tuple[str, ...]:
        """read_ahead_stats counters with min max sum (LF §5): readahead_pages from 2.16,
        forceread_pages in master (2.17.54+ here)."""
        if self.v >= (2, 17, 54):
            return ("readahead_pages", "forceread_pages")
        if self.v >= (2, 16, 0):
            return ("readahead_pages",)
        return ()


def profile(version: str) -> Profile:
    v = parse(version)
    if v < (1, 8, 0):
        raise ValueError(f"Lustre {version} is older than anything the simulator knows (1.8+)")
    if v >= (2, 19, 0):
        raise ValueError(f"Lustre {version} is newer than anything the simulator knows (<= 2.18-dev)")
    return Profile(version=version.strip(), v=v)


# md_stats counter names (LF §2c). 2.1-2.8 used the md_ops names.
MD_STATS_29 = ("close", "create", "enqueue", "getattr", "intent_lock", "link", "rename", "setattr",
               "fsync", "read_page", "unlink", "setxattr", "getxattr", "intent_getattr_async",
               "revalidate_lock")
MD_STATS_21 = ("getstatus", "null_inode", "find_cbdata", "close", "create", "done_writing", "enqueue",
               "getattr", "getattr_name", "intent_lock", "link", "rename", "is_subdir", "setattr",
               "sync", "readpage", "unlink", "setxattr", "getxattr", "init_ea_size", "get_lustre_md",
               "free_lustre_md", "set_open_replay_data", "clear_open_replay_data", "set_lock_data",
               "lock_match", "cancel_unused", "renew_capa", "unpack_capa", "get_remote_perm",
               "intent_getattr_async", "revalidate_lock")
# The model speaks the 2.9+ names; map them for 2.1-2.8.
MD_NAME_21 = {"fsync": "sync", "read_page": "readpage"}
