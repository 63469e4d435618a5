/*
 * Parser for the LNet "stats" file (/proc/sys/lnet/stats, later
 * /sys/kernel/debug/lnet/stats; notes/lustre-formats.md §7): one line
 *	"%u %u %u %u %u %u %u %llu %llu %llu %llu\n"
 * msgs_alloc msgs_max errors send_count recv_count route_count drop_count
 * send_length recv_length route_length drop_length.
 */
#ifndef LC_PARSE_LNET_H
#define LC_PARSE_LNET_H

#include <stddef.h>
#include <stdint.h>

#define LNET_STATS_N	11

enum {
    LNET_MSGS_ALLOC, LNET_MSGS_MAX, LNET_ERRORS, LNET_SEND_COUNT,
    LNET_RECV_COUNT, LNET_ROUTE_COUNT, LNET_DROP_COUNT, LNET_SEND_LENGTH,
    LNET_RECV_LENGTH, LNET_ROUTE_LENGTH, LNET_DROP_LENGTH
};

struct lnet_stats {
    uint64_t	v[LNET_STATS_N];
};

/*
 * The first non-blank line must start with 11 unsigned decimals (more
 * fields, if a later version adds some, are ignored); the first 7 must
 * fit in 32 bits.  Returns 0, or -1 (then *ls is zeroed).
 */
int lnet_stats_parse(const char *buf, size_t len, struct lnet_stats *ls);

#endif /* LC_PARSE_LNET_H */
