/*
 * Stats-file counter names -> metric items.  Items are persistent PMIDs:
 * append, never renumber.  The PMNS (pmns) and help text list the same
 * names; tests/check-pmns.sh keeps them in step.
 */
#include "lustreclient.h"

#define C	LC_OP_COUNT
#define L	LC_OP_LAT

/*
 * llite.*.stats, 1.8 .. 2.17 names.  COUNT: lustreclient.llite.<metric>
 * (CL_LLITE_STATS) is the samples; LAT: lustreclient.llite.latency.<metric>
 * (CL_LLITE_LAT) is the sum where the unit is usec/usecs (2.14+, LU-12631).
 * read/write have no count metric of their own: read_calls/write_calls
 * (the samples of read_bytes/write_bytes) are those.
 */
const struct lc_op lc_llite_ops[] = {
    { "read", 0, "read", L },
    { "write", 1, "write", L },
    { "open", 10, "open", C | L },
    { "close", 11, "close", C | L },
    { "getattr", 12, "getattr", C | L },
    { "setattr", 13, "setattr", C | L },
    { "statfs", 14, "statfs", C | L },
    { "fsync", 15, "fsync", C | L },
    { "seek", 16, "seek", C | L },
    { "mmap", 17, "mmap", C | L },
    { "truncate", 18, "truncate", C | L },
    { "readdir", 19, "readdir", C | L },
    { "create", 20, "create", C | L },
    { "unlink", 21, "unlink", C | L },
    { "mkdir", 22, "mkdir", C | L },
    { "rmdir", 23, "rmdir", C | L },
    { "rename", 24, "rename", C | L },
    { "flock", 25, "flock", C | L },
    { "ioctl", 26, "ioctl", C | L },
    { "link", 27, "link", C | L },
    { "symlink", 28, "symlink", C | L },
    { "mknod", 29, "mknod", C | L },
    { "setxattr", 30, "setxattr", C | L },
    { "getxattr", 31, "getxattr", C | L },
    { "listxattr", 32, "listxattr", C | L },
    { "removexattr", 33, "removexattr", C | L },
    { "inode_permission", 34, "inode_permission", C | L },
    { "fallocate", 35, "fallocate", C | L },
    { "page_fault", 36, "page_fault", C | L },
    { "page_mkwrite", 37, "page_mkwrite", C | L },
    { "opencount", 38, "opencount", C },
    { "openclosetime", 39, "openclose", L },
    { "dirty_pages_hits", 40, "dirty_pages_hits", C },
    { "dirty_pages_misses", 41, "dirty_pages_misses", C },
    { "getxattr_hits", 42, "getxattr_hits", C },
    { "alloc_inode", 43, "alloc_inode", C },
    /* hybrid I/O (2.15.64+, LU-13802): lustreclient.llite.hybrid.*; items
     * 48-51 are the bytes/calls of hybrid_{read,write}_bytes (lustreclient.h) */
    { "hybrid_noswitch", 52, "hybrid.noswitch", C },
    { "hybrid_readsize_switch", 53, "hybrid.readsize_switch", C },
    { "hybrid_writesize_switch", 54, "hybrid.writesize_switch", C },
};
const size_t lc_llite_nops = sizeof(lc_llite_ops) / sizeof(lc_llite_ops[0]);

/*
 * mdc.*.md_stats.  2.1-2.4 md_ops names are mapped onto the 2.12+ ones
 * where only the name changed (sync -> fsync, readpage -> read_page), so a
 * comparison across versions sees one series.
 */
const struct lc_op lc_mdc_ops[] = {
    { "close", 0, "close", C },
    { "create", 1, "create", C },
    { "enqueue", 2, "enqueue", C },
    { "getattr", 3, "getattr", C },
    { "intent_lock", 4, "intent_lock", C },
    { "link", 5, "link", C },
    { "rename", 6, "rename", C },
    { "setattr", 7, "setattr", C },
    { "fsync", 8, "fsync", C },
    { "sync", 8, "fsync", C },
    { "read_page", 9, "read_page", C },
    { "readpage", 9, "read_page", C },
    { "unlink", 10, "unlink", C },
    { "setxattr", 11, "setxattr", C },
    { "getxattr", 12, "getxattr", C },
    { "intent_getattr_async", 13, "intent_getattr_async", C },
    { "revalidate_lock", 14, "revalidate_lock", C },
    { "getstatus", 15, "getstatus", C },
    { "done_writing", 16, "done_writing", C },
    { "getattr_name", 17, "getattr_name", C },
    { "is_subdir", 18, "is_subdir", C },
};
const size_t lc_mdc_nops = sizeof(lc_mdc_ops) / sizeof(lc_mdc_ops[0]);

/*
 * llite.*.read_ahead_stats (notes/lustre-formats.md §5): the names with
 * spaces (<= 2.14) map onto the 2.15+ underscore names.  Count-only lines
 * give their samples (pages); readahead_pages/forceread_pages (2.16+,
 * min max sum) give their sum, the pages read ahead.
 */
#define S	LC_OP_SUM
const struct lc_op lc_ra_ops[] = {
    { "hits", 0, "hits", C },
    { "misses", 1, "misses", C },
    { "readpage_not_consecutive", 2, "readpage_not_consecutive", C },
    { "readpage not consecutive", 2, "readpage_not_consecutive", C },
    { "miss_inside_window", 3, "miss_inside_window", C },
    { "miss inside window", 3, "miss_inside_window", C },
    { "failed_grab_cache_page", 4, "failed_grab_cache_page", C },
    { "failed grab_cache_page", 4, "failed_grab_cache_page", C },
    { "failed_lock_match", 5, "failed_lock_match", C },
    { "failed lock match", 5, "failed_lock_match", C },
    { "read_but_discarded", 6, "read_but_discarded", C },
    { "read but discarded", 6, "read_but_discarded", C },
    { "zero_length_file", 7, "zero_length_file", C },
    { "zero length file", 7, "zero_length_file", C },
    { "zero_size_window", 8, "zero_size_window", C },
    { "zero size window", 8, "zero_size_window", C },
    { "readahead_to_eof", 9, "readahead_to_eof", C },
    { "read-ahead to EOF", 9, "readahead_to_eof", C },
    { "hit_max_readahead_issue", 10, "hit_max_readahead_issue", C },
    { "hit max r-a issue", 10, "hit_max_readahead_issue", C },
    { "wrong_page_from_grab_cache_page", 11, "wrong_page_from_grab_cache_page", C },
    { "wrong page from grab_cache_page", 11, "wrong_page_from_grab_cache_page", C },
    { "failed_to_reach_end", 12, "failed_to_reach_end", C },
    { "failed to reach end", 12, "failed_to_reach_end", C },
    { "async_readahead", 13, "async_readahead", C },
    { "async readahead", 13, "async_readahead", C },
    { "failed_to_fast_read", 14, "failed_to_fast_read", C },
    { "failed to fast read", 14, "failed_to_fast_read", C },
    { "mmap_range_read", 15, "mmap_range_read", C },
    { "mmap range read", 15, "mmap_range_read", C },
    { "readahead_pages", 16, "readahead_pages", S },
    { "forceread_pages", 17, "forceread_pages", S },
};
const size_t lc_ra_nops = sizeof(lc_ra_ops) / sizeof(lc_ra_ops[0]);
