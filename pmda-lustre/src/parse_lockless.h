/*
 * Parser for osc.*.osc_stats / mdc.*.mdc_stats (notes/lustre-formats.md
 * §7): a snapshot_time header (any of the rpc_stats forms), then
 *	lockless_write_bytes\t\t%llu
 *	lockless_read_bytes\t\t%llu
 *	lockless_truncate\t\t%llu		(<= 2.14)
 */
#ifndef LC_PARSE_LOCKLESS_H
#define LC_PARSE_LOCKLESS_H

#include <stddef.h>
#include <stdint.h>
#include "parse_common.h"

#define LOCKLESS_READ		(1u << 0)
#define LOCKLESS_WRITE		(1u << 1)
#define LOCKLESS_TRUNCATE	(1u << 2)

struct lockless_stats {
    struct lc_time	snapshot, start, elapsed;
    unsigned		have;
    uint64_t		read_bytes, write_bytes, truncate;
};

/* 0 when at least one lockless_* line was found, -1 otherwise. */
int lockless_parse(const char *buf, size_t len, struct lockless_stats *ls);

#endif /* LC_PARSE_LOCKLESS_H */
