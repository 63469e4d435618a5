/*
 * Parser for osc.*.rpc_stats (and the osc-style part of mdc.*.rpc_stats):
 * the in-flight/pending gauges of the header and the "pages per rpc"
 * read/write histogram.  See notes/lustre-formats.md sections 3 and 4.
 */
#ifndef LC_PARSE_RPC_STATS_H
#define LC_PARSE_RPC_STATS_H

#include <stddef.h>
#include <stdint.h>
#include "parse_common.h"

#define RPC_HIST_MAX	64	/* bucket i holds label 1<<i (pages) */

/* bits of rpc_stats.have */
#define RPCS_READ_INFLIGHT	(1u << 0)
#define RPCS_WRITE_INFLIGHT	(1u << 1)
#define RPCS_PENDING_WRITE	(1u << 2)
#define RPCS_PENDING_READ	(1u << 3)
#define RPCS_DIO_INFLIGHT	(1u << 4)	/* 2.17 "DIO RPCs in flight" */
#define RPCS_DIO_READ_INFLIGHT	(1u << 5)	/* 1.8 */
#define RPCS_DIO_WRITE_INFLIGHT	(1u << 6)	/* 1.8 */
#define RPCS_MOD_INFLIGHT	(1u << 7)	/* mdc "modify_RPCs_in_flight" */

struct rpc_stats {
    struct lc_time	snapshot, start, elapsed;
    unsigned		have;
    uint32_t		read_inflight, write_inflight;
    uint32_t		pending_write_pages, pending_read_pages;
    uint32_t		dio_inflight, dio_read_inflight, dio_write_inflight;
    uint32_t		mod_inflight;
    int			ppr_seen;	/* "pages per rpc" section header seen */
    int			ppr_maxidx;	/* highest bucket row seen, -1 = none */
    unsigned		ppr_rows;
    uint64_t		ppr_read[RPC_HIST_MAX];
    uint64_t		ppr_write[RPC_HIST_MAX];
    int			mod_seen;	/* mdc "modify" section seen */
    uint64_t		mod_total;	/* its rows summed: modifying RPCs sent */
    unsigned		garbage;
};

/*
 * Parse buf[0..len) into *rs (fully overwritten).  Returns 0 when a
 * histogram section was found: "pages per rpc" (osc, and mdc 2.12+ DoM;
 * ppr_seen) or the mdc "modify" "rpcs in flight" section (mod_seen), even
 * with no rows; -1 otherwise.  Gauges found before a failure are still
 * filled in.  Rows missing because the kernel stops printing at the last
 * non-zero bucket read as 0.  The mdc file (notes/lustre-formats.md §4:
 * "%%" headers, space-padded nsec) is the same format.
 */
int rpc_stats_parse(const char *buf, size_t len, struct rpc_stats *rs);

#endif /* LC_PARSE_RPC_STATS_H */
