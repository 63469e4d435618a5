/*
 * The value of each metric, one function per PMID cluster (as PCP's own
 * agents do: darwin's fetch_X()), from what the refresh left in memory.
 * lc_value() dispatches on the cluster; both fetch paths and the job view's
 * records read values through it only.  Each function returns 1 with *atom
 * set, 0 for no value (the file was missing, not read or not parsed, or
 * this Lustre has no such line), or PM_ERR_PMID for an item its cluster
 * does not have.
 */
#include "lustreclient.h"
#include "parse_lnet.h"

typedef int (*lc_value_fn)(unsigned item, void *priv, pmAtomValue *atom);

static int
start_value(const struct lc_start *s, pmAtomValue *atom)
{
    if (!s->ok)
	return 0;
    atom->d = s->sec;
    return 1;
}

static int
u64_value(uint64_t v, pmAtomValue *atom)
{
    atom->ull = v;
    return 1;
}

/* a string of the agent's own (lc.version, lc.kernel, lc.os), if it has one */
static int
str_value(int have, char *v, pmAtomValue *atom)
{
    if (!have)
	return 0;
    atom->cp = v;
    return 1;
}

static int
u32_value(int have, uint32_t v, pmAtomValue *atom)
{
    if (!have)
	return 0;
    atom->ul = v;
    return 1;
}

/* an rpc_stats header's start time (osc and mdc) */
static int
rpc_start_value(const struct rpc_stats *rs, pmAtomValue *atom)
{
    struct lc_start s;

    lc_start_set(&s, &rs->start);
    return start_value(&s, atom);
}

/* CL_OSC_IMPORT, CL_MDC_IMPORT: an import file's state and counters */
static int
import_value(unsigned item, const struct import_info *imp, pmAtomValue *atom)
{
    switch (item) {
    case IMP_STATE:
	if (!imp->have_state)
	    return 0;
	atom->cp = (char *)imp->state;
	return 1;
    case IMP_CONNECT_COUNT:
	if (!imp->have_attempts)
	    return 0;
	return u64_value(imp->connection_attempts, atom);
    case IMP_RECONNECTS:
	/* connection_attempts counts the first connect too */
	if (!imp->have_attempts)
	    return 0;
	return u64_value(imp->connection_attempts ? imp->connection_attempts - 1 : 0, atom);
    case IMP_TIMEOUTS:
	if (!imp->have_timeouts)
	    return 0;
	return u64_value(imp->timeouts, atom);
    case IMP_INFLIGHT:
	if (!imp->have_inflight || imp->inflight > UINT32_MAX)
	    return 0;
	atom->ul = (uint32_t)imp->inflight;
	return 1;
    }
    return PM_ERR_PMID;
}

/* CL_GLOBAL: version, page size, the agent's own counts (singular) */
static int
global_value(unsigned item, void *priv, pmAtomValue *atom)
{
    (void)priv;
    switch (item) {
    case GLOBAL_VERSION:
	return str_value(lc.version_ok, lc.version, atom);
    case GLOBAL_PAGESIZE:
	atom->ul = (uint32_t)lc.pagesize;
	return 1;
    case GLOBAL_FILES_READ:
    case GLOBAL_READ_FAILURES:
    case GLOBAL_PARSE_FAILURES:
    case GLOBAL_BUDGET_SKIPS:
	return u64_value(lc.self.total.n[item - GLOBAL_FILES_READ], atom);
    case GLOBAL_FETCH_FILES_READ:
    case GLOBAL_FETCH_READ_FAILURES:
    case GLOBAL_FETCH_PARSE_FAILURES:
    case GLOBAL_FETCH_BUDGET_SKIPS:
	/* set by lc_fetch() around its refresh: this fetch's reads */
	return u64_value(lc.self.fetch.n[item - GLOBAL_FETCH_FILES_READ], atom);
    }
    return PM_ERR_PMID;
}

/* CL_LLITE_DEV: llite.mount_id, from the device listing alone */
static int
llite_dev_value(unsigned item, void *priv, pmAtomValue *atom)
{
    (void)item;
    atom->cp = ((struct lc_fs *)priv)->sbi;
    return 1;
}

/* CL_OSC_DEV, CL_MDC_DEV: from the device listing alone, a value for every device it holds */
static int
osc_dev_value(unsigned item, void *priv, pmAtomValue *atom)
{
    if (item != 0)
	return PM_ERR_PMID;
    atom->cp = ((struct lc_osc *)priv)->d.name;
    return 1;
}

static int
mdc_dev_value(unsigned item, void *priv, pmAtomValue *atom)
{
    if (item != 0)
	return PM_ERR_PMID;
    atom->cp = ((struct lc_mdc *)priv)->d.name;
    return 1;
}

/* CL_LLITE_STATS: bytes, calls, op counts, hybrid I/O, the start time */
static int
llite_stats_value(unsigned item, void *priv, pmAtomValue *atom)
{
    struct lc_fs	*fs = priv;

    if (item >= LC_MAXITEM)
	return PM_ERR_PMID;
    if (!fs->ll_ok)
	return 0;
    if (item == LLITE_STATS_START)
	return start_value(&fs->ll_start, atom);
    if ((item == LLITE_READ_BYTES || item == LLITE_WRITE_BYTES) && !fs->bytes_ok)
	return 0;
    /* before the version that has them: no value, not 0 (fill() in refresh_llite.c) */
    if (item >= LLITE_HYB_FIRST && item <= LLITE_HYB_LAST &&
	!(item < LLITE_HYB_NOSWITCH ? fs->hyb_bytes_ok : fs->hyb_switch_ok))
	return 0;
    if ((item == LLITE_HYB_READ_BYTES || item == LLITE_HYB_WRITE_BYTES) && !fs->hyb_sum_ok)
	return 0;
    return u64_value(fs->ll[item], atom);
}

/* CL_LLITE_TUNABLE: one file per setting */
static int
llite_tunable_value(unsigned item, void *priv, pmAtomValue *atom)
{
    struct lc_fs	*fs = priv;

    if (item >= LLTUN_N)
	return PM_ERR_PMID;
    return u32_value(fs->tun_ok & (1u << item), fs->tun[item], atom);
}

/* CL_LLITE_LAT: latency sums, where the stats line has a usec unit (2.14+) */
static int
llite_lat_value(unsigned item, void *priv, pmAtomValue *atom)
{
    struct lc_fs	*fs = priv;

    if (item >= LC_MAXITEM)
	return PM_ERR_PMID;
    if (!fs->ll_ok || !fs->lat_ok || !(fs->lat_valid & ((uint64_t)1 << item)))
	return 0;
    return u64_value(fs->lat[item], atom);
}

/* CL_LLITE_RA: read_ahead_stats */
static int
llite_ra_value(unsigned item, void *priv, pmAtomValue *atom)
{
    struct lc_fs	*fs = priv;

    if (item >= LC_MAXITEM)
	return PM_ERR_PMID;
    if (!fs->ra_ok)
	return 0;
    return u64_value(fs->ra[item], atom);
}

/* CL_FS_RPC: a bucket of the fs's pages-per-RPC histogram, summed over its OSCs */
static int
fs_rpc_value(unsigned item, void *priv, pmAtomValue *atom)
{
    struct lc_bucket	*b = priv;

    if (item > 1 || b->fs == NULL)
	return PM_ERR_PMID;
    if (!b->fs->rpc_ok)
	return 0;
    return u64_value(item == 0 ? b->fs->rpc_read[b->idx] : b->fs->rpc_write[b->idx], atom);
}

/* CL_OSC_RPC: a bucket of one OSC's pages-per-RPC histogram */
static int
osc_rpc_value(unsigned item, void *priv, pmAtomValue *atom)
{
    struct lc_bucket	*b = priv;

    if (item > 1 || b->osc == NULL)
	return PM_ERR_PMID;
    if (!b->osc->rpc_ok)
	return 0;
    return u64_value(item == 0 ? b->osc->rs.ppr_read[b->idx] : b->osc->rs.ppr_write[b->idx], atom);
}

/* CL_OSC_RPCHDR: the gauges and start time in an osc rpc_stats header */
static int
osc_rpchdr_value(unsigned item, void *priv, pmAtomValue *atom)
{
    const struct lc_osc	*osc = priv;
    const struct rpc_stats *rs = &osc->rs;

    if (!osc->rpc_ok)
	return 0;
    switch (item) {
    case RPCHDR_READ_INFLIGHT:
	return u32_value(rs->have & RPCS_READ_INFLIGHT, rs->read_inflight, atom);
    case RPCHDR_WRITE_INFLIGHT:
	return u32_value(rs->have & RPCS_WRITE_INFLIGHT, rs->write_inflight, atom);
    case RPCHDR_PENDING_READ:
	return u32_value(rs->have & RPCS_PENDING_READ, rs->pending_read_pages, atom);
    case RPCHDR_PENDING_WRITE:
	return u32_value(rs->have & RPCS_PENDING_WRITE, rs->pending_write_pages, atom);
    case RPCHDR_DIO_INFLIGHT:
	/* 2.17: one "DIO RPCs in flight"; 1.8: dio read + dio write */
	if (rs->have & RPCS_DIO_INFLIGHT)
	    return u32_value(1, rs->dio_inflight, atom);
	if ((rs->have & (RPCS_DIO_READ_INFLIGHT | RPCS_DIO_WRITE_INFLIGHT)) ==
	    (RPCS_DIO_READ_INFLIGHT | RPCS_DIO_WRITE_INFLIGHT))
	    return u32_value(1, rs->dio_read_inflight + rs->dio_write_inflight, atom);
	return 0;
    case RPCHDR_START:
	return rpc_start_value(rs, atom);
    }
    return PM_ERR_PMID;
}

/* CL_OSC_STATS: an OSC's bytes, RPCs, request wait and the start time */
static int
osc_stats_value(unsigned item, void *priv, pmAtomValue *atom)
{
    struct lc_osc	*osc = priv;

    if (!osc->stats_ok)
	return 0;
    switch (item) {
    case OSTATS_READ_BYTES: return u64_value(osc->read_bytes, atom);
    case OSTATS_WRITE_BYTES: return u64_value(osc->write_bytes, atom);
    case OSTATS_READ_RPCS: return u64_value(osc->read_rpcs, atom);
    case OSTATS_WRITE_RPCS: return u64_value(osc->write_rpcs, atom);
    case OSTATS_WAITTIME: return u64_value(osc->waittime, atom);
    case OSTATS_REQ_COUNT: return u64_value(osc->req_count, atom);
    case OSTATS_START: return start_value(&osc->stats_start, atom);
    }
    return PM_ERR_PMID;
}

static int
osc_import_value(unsigned item, void *priv, pmAtomValue *atom)
{
    struct lc_osc	*osc = priv;

    if (!osc->imp_ok)
	return 0;
    return import_value(item, &osc->imp, atom);
}

/* CL_OSC_TUNABLE: one file per setting */
static int
osc_tunable_value(unsigned item, void *priv, pmAtomValue *atom)
{
    struct lc_osc	*osc = priv;

    if (item >= OTUN_N)
	return PM_ERR_PMID;
    return u32_value(osc->tun_ok & (1u << item), osc->tun[item], atom);
}

/* CL_OSC_LOCKLESS: osc_stats, lockless reads and writes */
static int
osc_lockless_value(unsigned item, void *priv, pmAtomValue *atom)
{
    struct lc_osc	*osc = priv;

    if (!osc->lockless_ok)
	return 0;
    if (item > 1)
	return PM_ERR_PMID;
    return u64_value(item == 0 ? osc->lockless_read : osc->lockless_write, atom);
}

/* CL_MDC_MD: md_stats op counts and the start time */
static int
mdc_md_value(unsigned item, void *priv, pmAtomValue *atom)
{
    struct lc_mdc	*mdc = priv;

    if (!mdc->md_ok)
	return 0;
    if (item == MDMD_START)
	return start_value(&mdc->md_start, atom);
    if (item >= LC_MAXITEM)
	return PM_ERR_PMID;
    return u64_value(mdc->md[item], atom);
}

/* CL_MDC_STATS: request wait, count and the start time */
static int
mdc_stats_value(unsigned item, void *priv, pmAtomValue *atom)
{
    struct lc_mdc	*mdc = priv;

    if (!mdc->stats_ok)
	return 0;
    switch (item) {
    case MSTATS_WAITTIME: return u64_value(mdc->waittime, atom);
    case MSTATS_REQ_COUNT: return u64_value(mdc->req_count, atom);
    case MSTATS_START: return start_value(&mdc->stats_start, atom);
    }
    return PM_ERR_PMID;
}

static int
mdc_import_value(unsigned item, void *priv, pmAtomValue *atom)
{
    struct lc_mdc	*mdc = priv;

    if (!mdc->imp_ok)
	return 0;
    return import_value(item, &mdc->imp, atom);
}

/* CL_MDC_RPC: the gauges, modifying RPCs and start time of an mdc rpc_stats (2.8+) */
static int
mdc_rpc_value(unsigned item, void *priv, pmAtomValue *atom)
{
    const struct lc_mdc	*mdc = priv;
    const struct rpc_stats *rs = &mdc->rs;

    if (!mdc->rpc_ok)
	return 0;
    switch (item) {
    case MRPC_MOD_INFLIGHT:
	return u32_value(rs->have & RPCS_MOD_INFLIGHT, rs->mod_inflight, atom);
    case MRPC_MOD_RPCS:
	return u64_value(rs->mod_total, atom);
    case MRPC_READ_INFLIGHT:
	return u32_value(rs->have & RPCS_READ_INFLIGHT, rs->read_inflight, atom);
    case MRPC_WRITE_INFLIGHT:
	return u32_value(rs->have & RPCS_WRITE_INFLIGHT, rs->write_inflight, atom);
    case MRPC_START:
	return rpc_start_value(rs, atom);
    }
    return PM_ERR_PMID;
}

/* CL_HOST: kernel release, OS image (singular) */
static int
host_value(unsigned item, void *priv, pmAtomValue *atom)
{
    (void)priv;
    if (item == HOST_KERNEL)
	return str_value(lc.kernel_ok, lc.kernel, atom);
    if (item == HOST_OS)
	return str_value(lc.os_ok, lc.os, atom);
    return PM_ERR_PMID;
}

/* CL_LNET: lnet stats (singular); the first values are u32 gauges */
static int
lnet_value(unsigned item, void *priv, pmAtomValue *atom)
{
    (void)priv;
    if (item >= LNET_NVALS)
	return PM_ERR_PMID;
    if (!lc.lnet_ok)
	return 0;
    if (item < LNET_SEND_LENGTH) {
	atom->ul = (uint32_t)lc.lnet[item];
	return 1;
    }
    return u64_value(lc.lnet[item], atom);
}

/* the value function of each base cluster; the job view's clusters are jobs.c's */
static const lc_value_fn value_of[CL_JOB] = {
    [CL_GLOBAL] = global_value,
    [CL_LLITE_DEV] = llite_dev_value,
    [CL_LLITE_STATS] = llite_stats_value,
    [CL_LLITE_LAT] = llite_lat_value,
    [CL_FS_RPC] = fs_rpc_value,
    [CL_OSC_RPC] = osc_rpc_value,
    [CL_OSC_RPCHDR] = osc_rpchdr_value,
    [CL_OSC_STATS] = osc_stats_value,
    [CL_MDC_MD] = mdc_md_value,
    [CL_MDC_STATS] = mdc_stats_value,
    [CL_OSC_IMPORT] = osc_import_value,
    [CL_MDC_IMPORT] = mdc_import_value,
    [CL_LLITE_RA] = llite_ra_value,
    [CL_OSC_TUNABLE] = osc_tunable_value,
    [CL_OSC_LOCKLESS] = osc_lockless_value,
    [CL_MDC_RPC] = mdc_rpc_value,
    [CL_LNET] = lnet_value,
    [CL_OSC_DEV] = osc_dev_value,
    [CL_MDC_DEV] = mdc_dev_value,
    [CL_LLITE_TUNABLE] = llite_tunable_value,
    [CL_HOST] = host_value,
};

/*
 * The value of metric (cluster, item) for the instance whose struct is
 * priv (NULL for singular metrics): 1 with *atom set, 0 for no value
 * (file missing or not parsed), or PM_ERR_PMID.  Used by both fetch paths.
 */
int
lc_value(unsigned cluster, unsigned item, void *priv, pmAtomValue *atom)
{
    if (cluster >= sizeof(value_of) / sizeof(value_of[0]) || value_of[cluster] == NULL)
	return PM_ERR_PMID;
    return value_of[cluster](item, priv, atom);
}
