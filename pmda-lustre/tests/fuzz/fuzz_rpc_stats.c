/* osc.*.rpc_stats and mdc.*.rpc_stats */
#include "fuzz_common.h"
#include "parse_rpc_stats.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rpc_stats	rs;
    int			sts, i;

    sts = rpc_stats_parse((const char *)data, size, &rs);
    FUZZ_ASSERT(sts == 0 || sts == -1);
    FUZZ_ASSERT(sts == 0 ? (rs.ppr_seen || rs.mod_seen) : (!rs.ppr_seen && !rs.mod_seen));
    FUZZ_ASSERT(rs.ppr_maxidx >= -1 && rs.ppr_maxidx < RPC_HIST_MAX);
    FUZZ_ASSERT(rs.ppr_rows <= (unsigned)RPC_HIST_MAX);
    /* nothing above the highest row seen: the agent sums up to it */
    for (i = rs.ppr_maxidx + 1; i < RPC_HIST_MAX; i++)
	FUZZ_ASSERT(rs.ppr_read[i] == 0 && rs.ppr_write[i] == 0);
    FUZZ_ASSERT(rs.mod_seen || rs.mod_total == 0);
    FUZZ_ASSERT(rs.read_inflight <= INT32_MAX && rs.write_inflight <= INT32_MAX);
    FUZZ_ASSERT(!rs.start.present || rs.start.nsec < 1000000000u);
    return 0;
}
