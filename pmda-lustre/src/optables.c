/*
 * Stats-file counter names -> metric items.  Items are persistent PMIDs:
 * append, never renumber.  The PMNS (pmns) and help text list the same
 * names; tests/check-pmns.sh keeps them in step.
 */
#include "lustreclient.h"

/* llite.*.stats counters exported as counts (samples); 1.8 .. 2.17 names */
const struct lc_op lc_llite_ops[] = {
    { "open", 10, "open" },
    { "close", 11, "close" },
    { "getattr", 12, "getattr" },
    { "setattr", 13, "setattr" },
    { "statfs", 14, "statfs" },
    { "fsync", 15, "fsync" },
    { "seek", 16, "seek" },
    { "mmap", 17, "mmap" },
    { "truncate", 18, "truncate" },
    { "readdir", 19, "readdir" },
    { "create", 20, "create" },
    { "unlink", 21, "unlink" },
    { "mkdir", 22, "mkdir" },
    { "rmdir", 23, "rmdir" },
    { "rename", 24, "rename" },
    { "flock", 25, "flock" },
    { "ioctl", 26, "ioctl" },
    { "link", 27, "link" },
    { "symlink", 28, "symlink" },
    { "mknod", 29, "mknod" },
    { "setxattr", 30, "setxattr" },
    { "getxattr", 31, "getxattr" },
    { "listxattr", 32, "listxattr" },
    { "removexattr", 33, "removexattr" },
    { "inode_permission", 34, "inode_permission" },
    { "fallocate", 35, "fallocate" },
    { "page_fault", 36, "page_fault" },
    { "page_mkwrite", 37, "page_mkwrite" },
};
const size_t lc_llite_nops = sizeof(lc_llite_ops) / sizeof(lc_llite_ops[0]);

/* llite ops that carry a latency ([usec]/[usecs]) from 2.14 on */
const struct lc_op lc_llite_lat[] = {
    { "read", 0, "read" },
    { "write", 1, "write" },
    { "open", 10, "open" },
    { "close", 11, "close" },
    { "getattr", 12, "getattr" },
    { "setattr", 13, "setattr" },
    { "statfs", 14, "statfs" },
    { "fsync", 15, "fsync" },
    { "seek", 16, "seek" },
    { "mmap", 17, "mmap" },
    { "truncate", 18, "truncate" },
    { "readdir", 19, "readdir" },
    { "create", 20, "create" },
    { "unlink", 21, "unlink" },
    { "mkdir", 22, "mkdir" },
    { "rmdir", 23, "rmdir" },
    { "rename", 24, "rename" },
    { "flock", 25, "flock" },
    { "ioctl", 26, "ioctl" },
    { "link", 27, "link" },
    { "symlink", 28, "symlink" },
    { "mknod", 29, "mknod" },
    { "setxattr", 30, "setxattr" },
    { "getxattr", 31, "getxattr" },
    { "listxattr", 32, "listxattr" },
    { "removexattr", 33, "removexattr" },
    { "inode_permission", 34, "inode_permission" },
    { "fallocate", 35, "fallocate" },
    { "page_fault", 36, "page_fault" },
    { "page_mkwrite", 37, "page_mkwrite" },
};
const size_t lc_llite_nlat = sizeof(lc_llite_lat) / sizeof(lc_llite_lat[0]);

/*
 * mdc.*.md_stats.  2.1-2.4 md_ops names are mapped onto the 2.12+ ones
 * where only the name changed (sync -> fsync, readpage -> read_page), so a
 * comparison across versions sees one series.
 */
const struct lc_op lc_mdc_ops[] = {
    { "close", 0, "close" },
    { "create", 1, "create" },
    { "enqueue", 2, "enqueue" },
    { "getattr", 3, "getattr" },
    { "intent_lock", 4, "intent_lock" },
    { "link", 5, "link" },
    { "rename", 6, "rename" },
    { "setattr", 7, "setattr" },
    { "fsync", 8, "fsync" },
    { "sync", 8, "fsync" },
    { "read_page", 9, "read_page" },
    { "readpage", 9, "read_page" },
    { "unlink", 10, "unlink" },
    { "setxattr", 11, "setxattr" },
    { "getxattr", 12, "getxattr" },
    { "intent_getattr_async", 13, "intent_getattr_async" },
    { "revalidate_lock", 14, "revalidate_lock" },
    { "getstatus", 15, "getstatus" },
    { "done_writing", 16, "done_writing" },
    { "getattr_name", 17, "getattr_name" },
    { "is_subdir", 18, "is_subdir" },
};
const size_t lc_mdc_nops = sizeof(lc_mdc_ops) / sizeof(lc_mdc_ops[0]);
