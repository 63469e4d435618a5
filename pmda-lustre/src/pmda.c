/*
 * pmdalustreclient: Lustre client statistics for PCP.
 *
 * The fetch entry point is wrapped (like pmdas/linux) so that each fetch
 * first works out which stats files its metrics come from, reads each of
 * those once, and only then lets pmdaFetch() walk the instances.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/select.h>
#include <sys/time.h>
#include "lustreclient.h"
#include "answer.h"
#include "paths.h"
#include "jobstate.h"
#include "parse_lnet.h"
#include "../domain.h"

struct lc_agent	lc;

static pmdaIndom indomtab[LC_NINDOMS] = {
    { FS_INDOM, 0, NULL },
    { OSC_INDOM, 0, NULL },
    { MDC_INDOM, 0, NULL },
    { FS_BUCKET_INDOM, 0, NULL },
    { OSC_BUCKET_INDOM, 0, NULL },
    { JOB_INDOM, 0, NULL },		/* jobs.c keeps its instance list */
};

static pmdaMetric	*metrictab;
static int		nmetrics, metriccap;

#define U_NONE	((pmUnits)PMDA_PMUNITS(0, 0, 0, 0, 0, 0))
#define U_BYTES	((pmUnits)PMDA_PMUNITS(1, 0, 0, PM_SPACE_BYTE, 0, 0))
#define U_COUNT	((pmUnits)PMDA_PMUNITS(0, 0, 1, 0, 0, PM_COUNT_ONE))
#define U_USEC	((pmUnits)PMDA_PMUNITS(0, 1, 0, 0, PM_TIME_USEC, 0))
#define U_SEC	((pmUnits)PMDA_PMUNITS(0, 1, 0, 0, PM_TIME_SEC, 0))
#define U_MIB	((pmUnits)PMDA_PMUNITS(1, 0, 0, PM_SPACE_MBYTE, 0, 0))

static void
add_metric(unsigned cluster, unsigned item, int type, int indom, int sem, pmUnits units)
{
    pmdaMetric	*m;
    int		i;

    /* aliases (md_stats sync/fsync, old read-ahead names) share an item */
    for (i = 0; i < nmetrics; i++)
	if (metrictab[i].m_desc.pmid == PMDA_PMID(cluster, item))
	    return;
    if (nmetrics == metriccap) {
	metriccap = metriccap ? metriccap * 2 : 128;
	if ((metrictab = realloc(metrictab, metriccap * sizeof(*metrictab))) == NULL) {
	    pmNotifyErr(LOG_ERR, "out of memory building the metric table");
	    exit(1);
	}
    }
    m = &metrictab[nmetrics++];
    memset(m, 0, sizeof(*m));
    m->m_desc.pmid = PMDA_PMID(cluster, item);
    m->m_desc.type = type;
    m->m_desc.indom = indom == -1 ? PM_INDOM_NULL : (pmInDom)indom;
    m->m_desc.sem = sem;
    m->m_desc.units = units;
}

/* the fixed metrics: every one has a line here (and in pmns and help) */
static const struct {
    unsigned	cluster, item;
    int		type, indom, sem;
    pmUnits	units;
} fixed[] = {
    { CL_GLOBAL, GLOBAL_VERSION, PM_TYPE_STRING, -1, PM_SEM_DISCRETE, U_NONE },
    { CL_GLOBAL, GLOBAL_PAGESIZE, PM_TYPE_U32, -1, PM_SEM_DISCRETE, U_BYTES },
    { CL_GLOBAL, GLOBAL_FILES_READ, PM_TYPE_U64, -1, PM_SEM_COUNTER, U_COUNT },
    { CL_GLOBAL, GLOBAL_READ_FAILURES, PM_TYPE_U64, -1, PM_SEM_COUNTER, U_COUNT },
    { CL_GLOBAL, GLOBAL_PARSE_FAILURES, PM_TYPE_U64, -1, PM_SEM_COUNTER, U_COUNT },
    { CL_GLOBAL, GLOBAL_BUDGET_SKIPS, PM_TYPE_U64, -1, PM_SEM_COUNTER, U_COUNT },
    { CL_GLOBAL, GLOBAL_FETCH_FILES_READ, PM_TYPE_U64, -1, PM_SEM_INSTANT, U_COUNT },
    { CL_GLOBAL, GLOBAL_FETCH_READ_FAILURES, PM_TYPE_U64, -1, PM_SEM_INSTANT, U_COUNT },
    { CL_GLOBAL, GLOBAL_FETCH_PARSE_FAILURES, PM_TYPE_U64, -1, PM_SEM_INSTANT, U_COUNT },
    { CL_GLOBAL, GLOBAL_FETCH_BUDGET_SKIPS, PM_TYPE_U64, -1, PM_SEM_INSTANT, U_COUNT },

    { CL_LLITE_DEV, 0, PM_TYPE_STRING, FS_INDOM, PM_SEM_DISCRETE, U_NONE },

    { CL_LLITE_STATS, LLITE_READ_BYTES, PM_TYPE_U64, FS_INDOM, PM_SEM_COUNTER, U_BYTES },
    { CL_LLITE_STATS, LLITE_WRITE_BYTES, PM_TYPE_U64, FS_INDOM, PM_SEM_COUNTER, U_BYTES },
    { CL_LLITE_STATS, LLITE_READ_CALLS, PM_TYPE_U64, FS_INDOM, PM_SEM_COUNTER, U_COUNT },
    { CL_LLITE_STATS, LLITE_WRITE_CALLS, PM_TYPE_U64, FS_INDOM, PM_SEM_COUNTER, U_COUNT },
    { CL_LLITE_STATS, LLITE_STATS_START, PM_TYPE_DOUBLE, FS_INDOM, PM_SEM_DISCRETE, U_SEC },
    { CL_LLITE_STATS, LLITE_HYB_READ_BYTES, PM_TYPE_U64, FS_INDOM, PM_SEM_COUNTER, U_BYTES },
    { CL_LLITE_STATS, LLITE_HYB_WRITE_BYTES, PM_TYPE_U64, FS_INDOM, PM_SEM_COUNTER, U_BYTES },
    { CL_LLITE_STATS, LLITE_HYB_READ_CALLS, PM_TYPE_U64, FS_INDOM, PM_SEM_COUNTER, U_COUNT },
    { CL_LLITE_STATS, LLITE_HYB_WRITE_CALLS, PM_TYPE_U64, FS_INDOM, PM_SEM_COUNTER, U_COUNT },

    { CL_FS_RPC, 0, PM_TYPE_U64, FS_BUCKET_INDOM, PM_SEM_COUNTER, U_COUNT },
    { CL_FS_RPC, 1, PM_TYPE_U64, FS_BUCKET_INDOM, PM_SEM_COUNTER, U_COUNT },
    { CL_OSC_RPC, 0, PM_TYPE_U64, OSC_BUCKET_INDOM, PM_SEM_COUNTER, U_COUNT },
    { CL_OSC_RPC, 1, PM_TYPE_U64, OSC_BUCKET_INDOM, PM_SEM_COUNTER, U_COUNT },

    { CL_OSC_RPCHDR, RPCHDR_READ_INFLIGHT, PM_TYPE_U32, OSC_INDOM, PM_SEM_INSTANT, U_COUNT },
    { CL_OSC_RPCHDR, RPCHDR_WRITE_INFLIGHT, PM_TYPE_U32, OSC_INDOM, PM_SEM_INSTANT, U_COUNT },
    { CL_OSC_RPCHDR, RPCHDR_PENDING_READ, PM_TYPE_U32, OSC_INDOM, PM_SEM_INSTANT, U_COUNT },
    { CL_OSC_RPCHDR, RPCHDR_PENDING_WRITE, PM_TYPE_U32, OSC_INDOM, PM_SEM_INSTANT, U_COUNT },
    { CL_OSC_RPCHDR, RPCHDR_DIO_INFLIGHT, PM_TYPE_U32, OSC_INDOM, PM_SEM_INSTANT, U_COUNT },
    { CL_OSC_RPCHDR, RPCHDR_START, PM_TYPE_DOUBLE, OSC_INDOM, PM_SEM_DISCRETE, U_SEC },

    { CL_OSC_STATS, OSTATS_READ_BYTES, PM_TYPE_U64, OSC_INDOM, PM_SEM_COUNTER, U_BYTES },
    { CL_OSC_STATS, OSTATS_WRITE_BYTES, PM_TYPE_U64, OSC_INDOM, PM_SEM_COUNTER, U_BYTES },
    { CL_OSC_STATS, OSTATS_READ_RPCS, PM_TYPE_U64, OSC_INDOM, PM_SEM_COUNTER, U_COUNT },
    { CL_OSC_STATS, OSTATS_WRITE_RPCS, PM_TYPE_U64, OSC_INDOM, PM_SEM_COUNTER, U_COUNT },
    { CL_OSC_STATS, OSTATS_WAITTIME, PM_TYPE_U64, OSC_INDOM, PM_SEM_COUNTER, U_USEC },
    { CL_OSC_STATS, OSTATS_REQ_COUNT, PM_TYPE_U64, OSC_INDOM, PM_SEM_COUNTER, U_COUNT },
    { CL_OSC_STATS, OSTATS_START, PM_TYPE_DOUBLE, OSC_INDOM, PM_SEM_DISCRETE, U_SEC },

    { CL_MDC_MD, MDMD_START, PM_TYPE_DOUBLE, MDC_INDOM, PM_SEM_DISCRETE, U_SEC },
    { CL_MDC_STATS, MSTATS_WAITTIME, PM_TYPE_U64, MDC_INDOM, PM_SEM_COUNTER, U_USEC },
    { CL_MDC_STATS, MSTATS_REQ_COUNT, PM_TYPE_U64, MDC_INDOM, PM_SEM_COUNTER, U_COUNT },
    { CL_MDC_STATS, MSTATS_START, PM_TYPE_DOUBLE, MDC_INDOM, PM_SEM_DISCRETE, U_SEC },

    { CL_OSC_IMPORT, IMP_STATE, PM_TYPE_STRING, OSC_INDOM, PM_SEM_INSTANT, U_NONE },
    { CL_OSC_IMPORT, IMP_CONNECT_COUNT, PM_TYPE_U64, OSC_INDOM, PM_SEM_COUNTER, U_COUNT },
    { CL_OSC_IMPORT, IMP_RECONNECTS, PM_TYPE_U64, OSC_INDOM, PM_SEM_COUNTER, U_COUNT },
    { CL_OSC_IMPORT, IMP_TIMEOUTS, PM_TYPE_U64, OSC_INDOM, PM_SEM_COUNTER, U_COUNT },
    { CL_OSC_IMPORT, IMP_INFLIGHT, PM_TYPE_U32, OSC_INDOM, PM_SEM_INSTANT, U_COUNT },
    { CL_MDC_IMPORT, IMP_STATE, PM_TYPE_STRING, MDC_INDOM, PM_SEM_INSTANT, U_NONE },
    { CL_MDC_IMPORT, IMP_CONNECT_COUNT, PM_TYPE_U64, MDC_INDOM, PM_SEM_COUNTER, U_COUNT },
    { CL_MDC_IMPORT, IMP_RECONNECTS, PM_TYPE_U64, MDC_INDOM, PM_SEM_COUNTER, U_COUNT },
    { CL_MDC_IMPORT, IMP_TIMEOUTS, PM_TYPE_U64, MDC_INDOM, PM_SEM_COUNTER, U_COUNT },
    { CL_MDC_IMPORT, IMP_INFLIGHT, PM_TYPE_U32, MDC_INDOM, PM_SEM_INSTANT, U_COUNT },

    { CL_OSC_TUNABLE, OTUN_MAXPAGES, PM_TYPE_U32, OSC_INDOM, PM_SEM_DISCRETE, U_COUNT },
    { CL_OSC_TUNABLE, OTUN_MAXRIF, PM_TYPE_U32, OSC_INDOM, PM_SEM_DISCRETE, U_COUNT },
    { CL_OSC_TUNABLE, OTUN_MAXDIRTY, PM_TYPE_U32, OSC_INDOM, PM_SEM_DISCRETE, U_MIB },
    { CL_OSC_TUNABLE, OTUN_CHECKSUMS, PM_TYPE_U32, OSC_INDOM, PM_SEM_DISCRETE, U_NONE },
    { CL_OSC_LOCKLESS, 0, PM_TYPE_U64, OSC_INDOM, PM_SEM_COUNTER, U_BYTES },
    { CL_OSC_LOCKLESS, 1, PM_TYPE_U64, OSC_INDOM, PM_SEM_COUNTER, U_BYTES },

    { CL_MDC_RPC, MRPC_MOD_INFLIGHT, PM_TYPE_U32, MDC_INDOM, PM_SEM_INSTANT, U_COUNT },
    { CL_MDC_RPC, MRPC_MOD_RPCS, PM_TYPE_U64, MDC_INDOM, PM_SEM_COUNTER, U_COUNT },
    { CL_MDC_RPC, MRPC_READ_INFLIGHT, PM_TYPE_U32, MDC_INDOM, PM_SEM_INSTANT, U_COUNT },
    { CL_MDC_RPC, MRPC_WRITE_INFLIGHT, PM_TYPE_U32, MDC_INDOM, PM_SEM_INSTANT, U_COUNT },
    { CL_MDC_RPC, MRPC_START, PM_TYPE_DOUBLE, MDC_INDOM, PM_SEM_DISCRETE, U_SEC },

    { CL_LNET, LNET_MSGS_ALLOC, PM_TYPE_U32, -1, PM_SEM_INSTANT, U_COUNT },
    { CL_LNET, LNET_MSGS_MAX, PM_TYPE_U32, -1, PM_SEM_INSTANT, U_COUNT },
    { CL_LNET, LNET_ERRORS, PM_TYPE_U32, -1, PM_SEM_COUNTER, U_COUNT },
    { CL_LNET, LNET_SEND_COUNT, PM_TYPE_U32, -1, PM_SEM_COUNTER, U_COUNT },
    { CL_LNET, LNET_RECV_COUNT, PM_TYPE_U32, -1, PM_SEM_COUNTER, U_COUNT },
    { CL_LNET, LNET_ROUTE_COUNT, PM_TYPE_U32, -1, PM_SEM_COUNTER, U_COUNT },
    { CL_LNET, LNET_DROP_COUNT, PM_TYPE_U32, -1, PM_SEM_COUNTER, U_COUNT },
    { CL_LNET, LNET_SEND_LENGTH, PM_TYPE_U64, -1, PM_SEM_COUNTER, U_BYTES },
    { CL_LNET, LNET_RECV_LENGTH, PM_TYPE_U64, -1, PM_SEM_COUNTER, U_BYTES },
    { CL_LNET, LNET_ROUTE_LENGTH, PM_TYPE_U64, -1, PM_SEM_COUNTER, U_BYTES },
    { CL_LNET, LNET_DROP_LENGTH, PM_TYPE_U64, -1, PM_SEM_COUNTER, U_BYTES },

    { CL_OSC_DEV, 0, PM_TYPE_STRING, OSC_INDOM, PM_SEM_DISCRETE, U_NONE },
    { CL_MDC_DEV, 0, PM_TYPE_STRING, MDC_INDOM, PM_SEM_DISCRETE, U_NONE },

    { CL_LLITE_TUNABLE, LLTUN_RA_MB, PM_TYPE_U32, FS_INDOM, PM_SEM_DISCRETE, U_MIB },
    { CL_LLITE_TUNABLE, LLTUN_RA_FILE_MB, PM_TYPE_U32, FS_INDOM, PM_SEM_DISCRETE, U_MIB },
    { CL_LLITE_TUNABLE, LLTUN_RA_WHOLE_MB, PM_TYPE_U32, FS_INDOM, PM_SEM_DISCRETE, U_MIB },
    { CL_LLITE_TUNABLE, LLTUN_CHECKSUMS, PM_TYPE_U32, FS_INDOM, PM_SEM_DISCRETE, U_NONE },
    { CL_LLITE_TUNABLE, LLTUN_HYBRID_IO, PM_TYPE_U32, FS_INDOM, PM_SEM_DISCRETE, U_NONE },
    { CL_LLITE_TUNABLE, LLTUN_HYB_READ_THRESH, PM_TYPE_U32, FS_INDOM, PM_SEM_DISCRETE, U_BYTES },
    { CL_LLITE_TUNABLE, LLTUN_HYB_WRITE_THRESH, PM_TYPE_U32, FS_INDOM, PM_SEM_DISCRETE, U_BYTES },

    { CL_HOST, HOST_KERNEL, PM_TYPE_STRING, -1, PM_SEM_DISCRETE, U_NONE },
    { CL_HOST, HOST_OS, PM_TYPE_STRING, -1, PM_SEM_DISCRETE, U_NONE },

    { CL_JOB, JOB_CTL_BEGIN, PM_TYPE_STRING, -1, PM_SEM_DISCRETE, U_NONE },
    { CL_JOB, JOB_CTL_END, PM_TYPE_STRING, -1, PM_SEM_DISCRETE, U_NONE },
    { CL_JOB, JOB_BEGIN_TIME, PM_TYPE_DOUBLE, JOB_INDOM, PM_SEM_DISCRETE, U_SEC },
    { CL_JOB, JOB_NSLOTS, PM_TYPE_U32, -1, PM_SEM_DISCRETE, U_NONE },
    { CL_JOB, JOB_RESTARTS, PM_TYPE_U32, JOB_INDOM, PM_SEM_DISCRETE, U_COUNT },
};

/* the descriptor of a metric already in the table */
static const pmDesc *
desc_of(unsigned cluster, unsigned item)
{
    int		i;

    for (i = 0; i < nmetrics; i++)
	if (metrictab[i].m_desc.pmid == PMDA_PMID(cluster, item))
	    return &metrictab[i].m_desc;
    return NULL;
}

/*
 * The job slots: item k of slot s (cluster CL_JOB_SLOT0 + s) is the delta
 * of job metric k, with its base metric's type, instance domain and units;
 * items 56.. the left-out reason per source; item 63 the id of the job the
 * slot holds (jobs.h).
 */
_Static_assert(LC_JOB_ID_ITEM < LC_MAXITEM, "a slot's job_id item must fit the item tables");

static void
add_job_metrics(void)
{
    static const int src_indom[LC_JK_N] = { FS_INDOM, OSC_INDOM, MDC_INDOM };
    unsigned	s, k;

    for (s = 0; s < LC_JOB_SLOTS; s++) {
	for (k = 0; k < LC_JOB_NMETRICS; k++) {
	    const pmDesc *base = desc_of(lc_job_metrics[k].cluster, lc_job_metrics[k].item);

	    if (base == NULL) {
		pmNotifyErr(LOG_ERR, "job metric %s: no base metric", lc_job_metrics[k].path);
		exit(1);
	    }
	    add_metric(CL_JOB_SLOT0 + s, k, PM_TYPE_U64, (int)base->indom, PM_SEM_COUNTER,
		       base->units);
	}
	for (k = 0; k < LC_JOB_NSOURCES; k++)
	    add_metric(CL_JOB_SLOT0 + s, LC_JOB_LEFT_OUT_ITEM + k, PM_TYPE_U32,
		       src_indom[lc_job_sources[k].kind], PM_SEM_INSTANT, U_NONE);
	add_metric(CL_JOB_SLOT0 + s, LC_JOB_ID_ITEM, PM_TYPE_STRING, -1, PM_SEM_DISCRETE, U_NONE);
	add_metric(CL_JOB_ANSWER, s, PM_TYPE_AGGREGATE, -1, PM_SEM_DISCRETE, U_NONE);
	add_metric(CL_JOB_SERIES, s, PM_TYPE_AGGREGATE, -1, PM_SEM_INSTANT, U_NONE);
    }
}

static void
build_metrictab(void)
{
    size_t	i;

    for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
	add_metric(fixed[i].cluster, fixed[i].item, fixed[i].type, fixed[i].indom,
		   fixed[i].sem, fixed[i].units);
    for (i = 0; i < lc_llite_nops; i++) {
	if (lc_llite_ops[i].flags & LC_OP_COUNT)
	    add_metric(CL_LLITE_STATS, lc_llite_ops[i].item, PM_TYPE_U64, FS_INDOM,
		       PM_SEM_COUNTER, U_COUNT);
	if (lc_llite_ops[i].flags & LC_OP_LAT)
	    add_metric(CL_LLITE_LAT, lc_llite_ops[i].item, PM_TYPE_U64, FS_INDOM,
		       PM_SEM_COUNTER, U_USEC);
    }
    for (i = 0; i < lc_ra_nops; i++)
	add_metric(CL_LLITE_RA, lc_ra_ops[i].item, PM_TYPE_U64, FS_INDOM,
		   PM_SEM_COUNTER, U_COUNT);
    for (i = 0; i < lc_mdc_nops; i++)
	add_metric(CL_MDC_MD, lc_mdc_ops[i].item, PM_TYPE_U64, MDC_INDOM,
		   PM_SEM_COUNTER, U_COUNT);
    add_job_metrics();
}

#define NEED_LL		NEED_DEV_LLITE
#define NEED_LL_OSC	(NEED_DEV_LLITE | NEED_DEV_OSC)
#define NEED_LL_MDC	(NEED_DEV_LLITE | NEED_DEV_MDC)

/*
 * The files a metric's cluster comes from, and the device listings it
 * needs: llite metrics list llite only, osc metrics llite (to pick the
 * mount of a filesystem mounted twice) and osc, mdc metrics llite and mdc.
 */
static unsigned job_needs(void);

static unsigned
needs(pmID pmid)
{
    /* a job slot: the job's files, none while the slot is not in use; its
     * job id comes from memory */
    if (pmID_cluster(pmid) >= CL_JOB_SLOT0 && pmID_cluster(pmid) < CL_JOB_SLOT0 + LC_JOB_SLOTS) {
	if (lc_job_item(pmID_item(pmid)) == LC_JI_JOB_ID)
	    return 0;
	return lc_jobs_slot_used((int)pmID_cluster(pmid) - CL_JOB_SLOT0) ? job_needs() : 0;
    }
    switch (pmID_cluster(pmid)) {
    case CL_GLOBAL:
	return pmID_item(pmid) == GLOBAL_VERSION ? NEED_VERSION : 0;
    case CL_LLITE_DEV:
	return NEED_LL;
    case CL_OSC_DEV:
	return NEED_LL_OSC;
    case CL_MDC_DEV:
	return NEED_LL_MDC;
    case CL_LLITE_STATS:
	/* whether this Lustre has the hybrid counters at all: its version */
	if (pmID_item(pmid) >= LLITE_HYB_FIRST && pmID_item(pmid) <= LLITE_HYB_LAST)
	    return NEED_LL | NEED_LLITE | NEED_VERSION;
	return NEED_LL | NEED_LLITE;
    case CL_LLITE_LAT:	/* whether this Lustre has latencies at all: its version */
	return NEED_LL | NEED_LLITE | NEED_VERSION;
    case CL_LLITE_TUNABLE:
	return NEED_LL | NEED_LLITE_TUNABLE;
    case CL_HOST:
	return NEED_HOST;
    case CL_LLITE_RA:
	return NEED_LL | NEED_LLITE_RA;
    case CL_FS_RPC:
    case CL_OSC_RPC:
    case CL_OSC_RPCHDR:
	return NEED_LL_OSC | NEED_OSC_RPC;
    case CL_OSC_STATS:
	return NEED_LL_OSC | NEED_OSC_STATS;
    case CL_OSC_IMPORT:
	return NEED_LL_OSC | NEED_OSC_IMPORT;
    case CL_OSC_TUNABLE:
	return NEED_LL_OSC | NEED_OSC_TUNABLE;
    case CL_OSC_LOCKLESS:
	return NEED_LL_OSC | NEED_OSC_LOCKLESS;
    case CL_MDC_MD:
	return NEED_LL_MDC | NEED_MDC_MD;
    case CL_MDC_STATS:
	return NEED_LL_MDC | NEED_MDC_STATS;
    case CL_MDC_IMPORT:
	return NEED_LL_MDC | NEED_MDC_IMPORT;
    case CL_MDC_RPC:
	return NEED_LL_MDC | NEED_MDC_RPC;
    case CL_LNET:
	return NEED_LNET;
    }
    return 0;
}

/* a job slot: every file of the job metrics, as a fetch of all of them */
static unsigned
job_needs(void)
{
    static unsigned	need;
    unsigned		k;

    if (need == 0)
	for (k = 0; k < LC_JOB_NMETRICS; k++)
	    need |= needs(pmID_build(0, lc_job_metrics[k].cluster, lc_job_metrics[k].item));
    return need;
}

/*
 * A timeline's sample: the files of the job metrics of the sources the
 * series metrics come from (llite stats, the OSCs' rpc_stats), which are
 * all the diff rules look at to count those: not the OSCs' stats or
 * imports, not the MDCs'.
 */
static unsigned
series_needs(void)
{
    static unsigned	need;
    unsigned		j, k;

    if (need == 0)
	for (k = 0; k < LC_JOB_NMETRICS; k++)
	    for (j = 0; j < LC_JOB_NSERIES; j++)
		if (lc_job_metrics[k].src == lc_job_metrics[lc_job_series[j]].src)
		    need |= needs(pmID_build(0, lc_job_metrics[k].cluster, lc_job_metrics[k].item));
    return need;
}

/* every file the fetch needs, device listings aside */
static void
refresh_files(unsigned need)
{
    if (need & NEED_LLITE)
	lc_refresh_llite();
    if (need & NEED_LLITE_RA)
	lc_refresh_llite_ra();
    if (need & NEED_LLITE_TUNABLE)
	lc_refresh_llite_tunables();
    lc_refresh_osc(need);
    if (need & NEED_MDC_MD)
	lc_refresh_mdc_md();
    if (need & NEED_MDC_STATS)
	lc_refresh_mdc_stats();
    if (need & NEED_MDC_IMPORT)
	lc_refresh_mdc_import();
    if (need & NEED_MDC_RPC)
	lc_refresh_mdc_rpc();
    if (need & NEED_LNET)
	lc_refresh_lnet();
}

static void
refresh(unsigned need)
{
    unsigned	which = (need & NEED_DEVICES) >> NEED_DEV_SHIFT;
    unsigned long vanished;

    lc_budget_start();
    if (need & NEED_VERSION)
	lc_refresh_version();
    if (need & NEED_HOST)
	lc_refresh_host();
    if (need & NEED_DEVICES)
	lc_devices_refresh(which, 0);
    vanished = lc_paths_vanished();
    refresh_files(need);
    /*
     * A file that was read before is gone.  Mostly its device went away
     * and the listing already knew; but a device replaced between two
     * fetches (the fs unmounted and mounted again) can leave the procfs
     * directory looking the same.  So list again now, and if the devices
     * did change, read once more rather than answer with gaps.
     */
    if ((need & NEED_DEVICES) && lc_paths_vanished() != vanished &&
	lc_devices_refresh(which, 1))
	refresh_files(need);
    if (need & NEED_DEVICES)
	lc_cache_save();
}

/* what a fetch of pmid needs read, its item noted (lc.items); a slot's answer, what its members need */
static unsigned
asked(pmID pmid)
{
    unsigned	c = pmID_cluster(pmid), it = pmID_item(pmid), need;
    pmID	members[LC_ANSWER_MAX_MEMBERS];
    int		n, k;

    if (c == CL_JOB_SERIES)
	return it < LC_JOB_SLOTS && lc_jobs_slot_used((int)it) ? series_needs() : 0;
    if (c == CL_JOB_ANSWER) {
	if (it >= LC_JOB_SLOTS)
	    return 0;
	n = lc_answer_members(it, lc_jobs_slot_used((int)it), members);
	for (k = 0, need = 0; k < n; k++)
	    need |= asked(members[k]);
	return need;
    }
    if (c < CL_NCLUSTERS && it < 64)
	lc.items[c] |= (uint64_t)1 << it;
    return needs(pmid);
}

static int	use_pmdafetch;	/* -F: through pmdaFetch(), for comparison */

static int
lc_fetch(int numpmid, pmID pmidlist[], pmResult **resp, pmdaExt *pmda)
{
    unsigned	need = 0;
    int		i;

    /* the clusters of tunables read only the files of the items asked for */
    memset(lc.items, 0, sizeof(lc.items));
    for (i = 0; i < numpmid; i++)
	need |= asked(pmidlist[i]);
    /* agent.fetch.*: what this refresh reads, both passes (not instance requests) */
    lc_selfstats_fetch_begin(&lc.self);
    refresh(need);
    lc_selfstats_fetch_end(&lc.self);
    lc_jobs_changed();		/* job slots: differenced against these values */
    if (use_pmdafetch)
	return pmdaFetch(numpmid, pmidlist, resp, pmda);
    return lc_fast_fetch(numpmid, pmidlist, resp, pmda);
}

/*
 * An instance request for one id or name of a device that is gone now (no
 * longer active, still in the cache): answered too, so the name of a
 * device a job slot's left_out.* lists as gone (reason 6) can be looked up.
 */
static int
inactive_instance(pmInDom indom, int inst, char *name, pmInResult **result)
{
    pmInResult	*r;
    char	*cname = NULL;
    int		cinst = inst;

    if (name != NULL && *name == '\0')
	name = NULL;		/* pmcd sends an empty name with an instance id */
    if (name != NULL) {
	if (pmdaCacheLookupName(indom, name, &cinst, NULL) != PMDA_CACHE_INACTIVE)
	    return PM_ERR_INST;
    } else if (pmdaCacheLookup(indom, inst, &cname, NULL) != PMDA_CACHE_INACTIVE) {
	return PM_ERR_INST;
    }
    if ((r = calloc(1, sizeof(*r))) == NULL)
	return -ENOMEM;
    r->indom = indom;
    r->numinst = 1;
    if (name != NULL) {
	if ((r->instlist = malloc(sizeof(int))) == NULL) {
	    free(r);
	    return -ENOMEM;
	}
	r->instlist[0] = cinst;
    } else {
	if ((r->namelist = malloc(sizeof(char *))) == NULL ||
	    (r->namelist[0] = strdup(cname)) == NULL) {
	    free(r->namelist);
	    free(r);
	    return -ENOMEM;
	}
    }
    *result = r;
    return 0;
}

static int
lc_instance(pmInDom indom, int inst, char *name, pmInResult **result, pmdaExt *pmda)
{
    int		sts;

    if (indom == lc.indom[JOB_INDOM])
	return pmdaInstance(indom, inst, name, result, pmda);
    refresh(NEED_DEVICES);
    sts = pmdaInstance(indom, inst, name, result, pmda);
    if (sts == PM_ERR_INST && (inst != (int)PM_IN_NULL || (name != NULL && *name != '\0')))
	sts = inactive_instance(indom, inst, name, result);
    return sts;
}

/* the job_begin store's refresh: every file of the job metrics, as a fetch of them all */
void
lc_refresh_job_files(void)
{
    memset(lc.items, 0, sizeof(lc.items));
    refresh(job_needs());
}

void
lc_refresh_series_files(void)
{
    memset(lc.items, 0, sizeof(lc.items));
    refresh(series_needs());
}

/* pmdaFetch() callback (option -F) */
static int
lc_fetchCallBack(pmdaMetric *mdesc, unsigned int inst, pmAtomValue *atom)
{
    void	*priv = NULL;

    if (pmID_cluster(mdesc->m_desc.pmid) == CL_JOB_ANSWER)
	return lc_answer_atom(pmID_item(mdesc->m_desc.pmid), atom);
    if (pmID_cluster(mdesc->m_desc.pmid) == CL_JOB_SERIES)
	return lc_series_atom(pmID_item(mdesc->m_desc.pmid), atom);
    if (lc_is_job_cluster(pmID_cluster(mdesc->m_desc.pmid)))
	return lc_jobs_value(pmID_cluster(mdesc->m_desc.pmid), pmID_item(mdesc->m_desc.pmid),
			     (int)inst, atom);
    if (mdesc->m_desc.indom != PM_INDOM_NULL) {
	if (pmdaCacheLookup(mdesc->m_desc.indom, inst, NULL, &priv) != PMDA_CACHE_ACTIVE ||
	    priv == NULL)
	    return PM_ERR_INST;
    } else if (inst != PM_IN_NULL) {
	return PM_ERR_INST;
    }
    return lc_value(pmID_cluster(mdesc->m_desc.pmid), pmID_item(mdesc->m_desc.pmid), priv, atom);
}

static int
parse_pagesize(const char *s, uint64_t *out)
{
    char		*end;
    unsigned long long	v;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s)
	return -1;
    if (*end == 'k' || *end == 'K') {
	v <<= 10;
	end++;
    } else if (*end == 'm' || *end == 'M') {
	v <<= 20;
	end++;
    }
    if (*end != '\0' || v < 512 || v > (1ULL << 30) || (v & (v - 1)) != 0)
	return -1;
    *out = v;
    return 0;
}

/* -T: seconds, a fraction allowed, as the whole milliseconds of the sample interval */
static int
parse_interval(const char *s)
{
    char	*end;
    double	sec;

    errno = 0;
    sec = strtod(s, &end);
    if (errno || end == s || *end != '\0' || !(sec >= 0.01 && sec <= 86400))
	return -1;
    lc_jobs_set_interval((uint32_t)(sec * 1000 + 0.5));
    return 0;
}

/*
 * A sample of every job's timeline: the files it needs read as a fetch
 * reads them, then each slot in use differenced against its begin values.
 */
static void
sample_jobs(uint64_t t_ms)
{
    lc_refresh_series_files();
    lc_jobs_changed();
    lc_jobs_sample(t_ms);
}

/* the job slots are written again this often while one is in use (-K), in ms */
static uint64_t		checkpoint_ms = 60000;
/* SIGTERM came: the loop ends, the slots are written as they are */
static volatile sig_atomic_t terminated;

static void
on_term(int sig)
{
    (void)sig;
    terminated = 1;
}

/* SIGTERM interrupts the wait for pmcd's next request (no SA_RESTART) */
static void
catch_term(void)
{
    struct sigaction	sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
}

/* the earlier of two deadlines (ms since the epoch; 0: none) */
static uint64_t
earliest(uint64_t a, uint64_t b)
{
    if (a == 0)
	return b;
    if (b == 0)
	return a;
    return a < b ? a : b;
}

/*
 * pmdaMain's loop, with the timelines' samples between the requests: pmcd's
 * PDUs are answered as they come, and while a slot holds a job a sample is
 * taken at the first wake-up at or after each multiple of the interval
 * since the epoch (so all the nodes of a job sample into the same bins).
 * And every checkpoint_ms while a slot holds a job, the slots are written
 * to disk (lc_jobs_checkpoint).  No slot in use: no timeout, the agent
 * sleeps until pmcd asks.  Leaves when pmcd has gone, as pmdaMain does, or
 * on SIGTERM, the slots written once more as they are then.
 */
static void
main_loop(pmdaInterface *dispatch)
{
    int		fd = __pmdaInFd(dispatch);
    uint64_t	next = 0, next_checkpoint = 0, now, wake;
    uint32_t	iv = lc_jobs_interval();

    if (fd < 0) {
	pmNotifyErr(LOG_ERR, "no input from pmcd: %s", pmErrStr(fd));
	return;
    }
    for (;;) {
	struct timeval	tv, *timeout = NULL;
	fd_set		readable;
	int		sts;

	if (terminated)
	    break;
	if (lc_jobs_in_use()) {
	    now = lc_jobs_clock_ms();
	    /* the first sample of a job, or a clock stepped back: the next multiple */
	    if (next == 0 || next > now + iv)
		next = lc_series_next(iv, now);
	    if (now >= next) {
		/* a timed sample holds the I/O of the interval that just ended: it is
		 * put at that interval's last millisecond, so that a bin holds the I/O
		 * done in it (the fetch's own sample, at its time, holds the I/O done
		 * so far in the interval it is in, the next timed sample the rest) */
		sample_jobs(now - now % iv - 1);
		/* the next multiple after the sample ended: pmcd's requests get their turn
		 * between two samples even when one takes longer than the interval (the bins
		 * it overran get no sample) */
		now = lc_jobs_clock_ms();
		next = lc_series_next(iv, now + 1);
	    }
	    if (lc_jobstate_enabled()) {
		if (next_checkpoint == 0 || next_checkpoint > now + checkpoint_ms)
		    next_checkpoint = now + checkpoint_ms;
		if (now >= next_checkpoint) {
		    lc_jobs_checkpoint();
		    now = lc_jobs_clock_ms();
		    next_checkpoint = now + checkpoint_ms;
		}
	    }
	    wake = earliest(next, next_checkpoint);
	    wake = wake > now ? wake - now : 0;
	    tv.tv_sec = (time_t)(wake / 1000);
	    tv.tv_usec = (suseconds_t)(wake % 1000 * 1000);
	    timeout = &tv;
	} else {
	    next = next_checkpoint = 0;
	}
	FD_ZERO(&readable);
	FD_SET(fd, &readable);
	sts = select(fd + 1, &readable, NULL, NULL, timeout);
	if (sts < 0) {
	    if (errno == EINTR)
		continue;
	    pmNotifyErr(LOG_ERR, "select: %s", strerror(errno));
	    break;
	}
	if (sts > 0 && __pmdaMainPDU(dispatch) < 0)
	    break;
    }
    lc_jobs_checkpoint();
}

static pmLongOptions longopts[] = {
    PMDA_OPTIONS_HEADER("Options"),
    PMDAOPT_DEBUG,
    PMDAOPT_DOMAIN,
    PMDAOPT_HELPTEXT,
    PMDAOPT_LOGFILE,
    PMDAOPT_USERNAME,
    { "root", 1, 'r', "DIR", "directory that stands for / [default /]" },
    { "pagesize", 1, 'P', "BYTES", "client page size for RPC size buckets [default: this host's]" },
    { "instance-cache", 1, 'C', "MODE", "persist instance ids: auto (only when ROOT is /), on, off" },
    { "budget", 1, 'b', "MSEC", "stop reading files this long into a fetch [default 2000, 0 = never]" },
    { "pmdafetch", 0, 'F', NULL, "build results with pmdaFetch() (slower; for tests)" },
    { "threads", 1, 't', "N", "reader threads for the per-OSC files [default 1]" },
    { "interval", 1, 'T', "SEC", "sample each job's timeline this often [default 10]" },
    { "state", 1, 'S', "DIR", "keep the running jobs here across restarts [default: "
      "$PCP_VAR_DIR/pmdas/lustreclient/jobs when ROOT is /, else none]; none: do not" },
    { "checkpoint", 1, 'K', "SEC", "write the running jobs' timelines to DIR this often [default 60]" },
    PMOPT_HELP,
    PMDA_OPTIONS_END
};

static pmdaOptions opts = {
    .short_options = "D:d:h:l:U:r:P:C:b:Ft:T:S:K:?",
    .long_options = longopts,
};

int
main(int argc, char **argv)
{
    pmdaInterface	dispatch;
    char		helppath[MAXPATHLEN];
    const char		*root = "/", *cachemode = "auto", *statedir = NULL;
    char		statepath[MAXPATHLEN];
    long		ps;
    int			threads;
    int			c, i, sep = pmPathSeparator();

    pmSetProgname(argv[0]);
    pmsprintf(helppath, sizeof(helppath), "%s%clustreclient%chelp",
	      pmGetConfig("PCP_PMDAS_DIR"), sep, sep);
    pmdaDaemon(&dispatch, PMDA_INTERFACE_7, pmGetProgname(), LUSTRECLIENT,
	       "lustreclient.log", helppath);

    ps = sysconf(_SC_PAGESIZE);
    lc.pagesize = ps > 0 ? (uint64_t)ps : 4096;
    lc.budget_ns = (uint64_t)2000 * 1000000u;
    /*
     * One reader thread by default: on a compute node the agent should
     * take as little CPU, on as few cores, as it can (OS noise); -t trades
     * some CPU for a shorter fetch on clients with many OSTs.
     */
    threads = 1;
    lc_dev_init(&lc.top, NULL);
    lc_dev_init(&lc.lnetdev, "lnet");
    lc_dev_init(&lc.host, NULL);
    lc.version_code = -1;
    while ((c = pmdaGetOptions(argc, argv, &opts, &dispatch)) != EOF) {
	switch (c) {
	case 'r':
	    root = opts.optarg;
	    break;
	case 'P':
	    if (parse_pagesize(opts.optarg, &lc.pagesize) < 0) {
		pmprintf("%s: -P wants a power of two between 512 and 1G, got \"%s\"\n",
			 pmGetProgname(), opts.optarg);
		opts.errors++;
	    }
	    break;
	case 'b': {
	    char		*end;
	    unsigned long	ms;

	    errno = 0;
	    ms = strtoul(opts.optarg, &end, 10);
	    if (errno || end == opts.optarg || *end != '\0' || ms > 3600000) {
		pmprintf("%s: -b wants milliseconds (0 .. 3600000), got \"%s\"\n",
			 pmGetProgname(), opts.optarg);
		opts.errors++;
	    }
	    lc.budget_ns = (uint64_t)ms * 1000000u;
	    break;
	}
	case 'F':
	    use_pmdafetch = 1;
	    break;
	case 't': {
	    char	*end;
	    long	t;

	    t = strtol(opts.optarg, &end, 10);
	    if (end == opts.optarg || *end != '\0' || t < 1 || t > 64) {
		pmprintf("%s: -t wants 1 .. 64 threads, got \"%s\"\n", pmGetProgname(), opts.optarg);
		opts.errors++;
	    }
	    threads = (int)t;
	    break;
	}
	case 'T':
	    if (parse_interval(opts.optarg) < 0) {
		pmprintf("%s: -T wants seconds (0.01 .. 86400), got \"%s\"\n",
			 pmGetProgname(), opts.optarg);
		opts.errors++;
	    }
	    break;
	case 'S':
	    statedir = opts.optarg;
	    break;
	case 'K': {
	    char	*end;
	    double	sec;

	    errno = 0;
	    sec = strtod(opts.optarg, &end);
	    if (errno || end == opts.optarg || *end != '\0' || !(sec >= 0.01 && sec <= 86400)) {
		pmprintf("%s: -K wants seconds (0.01 .. 86400), got \"%s\"\n",
			 pmGetProgname(), opts.optarg);
		opts.errors++;
	    } else {
		checkpoint_ms = (uint64_t)(sec * 1000 + 0.5);
	    }
	    break;
	}
	case 'C':
	    if (strcmp(opts.optarg, "auto") && strcmp(opts.optarg, "on") &&
		strcmp(opts.optarg, "off")) {
		pmprintf("%s: -C wants auto, on or off\n", pmGetProgname());
		opts.errors++;
	    }
	    cachemode = opts.optarg;
	    break;
	default:
	    opts.errors++;
	    break;
	}
    }
    if (opts.errors || opts.optind != argc) {
	pmdaUsageMessage(&opts);
	exit(1);
    }

    pmdaOpenLog(&dispatch);
    /*
     * Stay root unless told otherwise: llite/osc/mdc stats sit in debugfs
     * from 2.12 on, and debugfs is readable by root only.
     */
    if (opts.username)
	pmSetProcessIdentity(opts.username);
    if (lc_paths_init(root) < 0) {
	pmNotifyErr(LOG_ERR, "root directory \"%s\": %s", root, strerror(errno));
	exit(1);
    }
    /*
     * Saved instance caches live in $PCP_VAR_DIR/config/pmda/220.N, one
     * set per host.  Agents pointed at test trees (private pmcds, several
     * at once) must neither clobber nor inherit them, so by default only
     * the agent that reads the real / persists its instance ids.
     */
    if (strcmp(cachemode, "on") == 0)
	lc.persist = 1;
    else if (strcmp(cachemode, "off") == 0)
	lc.persist = 0;
    else
	lc.persist = lc_paths_root_is_slash();
    if (lc_pool_init(threads) < 0)
	pmNotifyErr(LOG_WARNING, "no reader threads (out of memory): reading on one thread");
    pmNotifyErr(LOG_INFO, "root %s, page size %llu, instance cache %s, "
		"fetch budget %llu ms, confinement %s, %d reader thread%s",
		lc_paths_root(), (unsigned long long)lc.pagesize,
		lc.persist ? "persistent" : "in memory",
		(unsigned long long)(lc.budget_ns / 1000000u),
		lc_paths_have_openat2() ? "openat2" : "realpath",
		lc_pool_threads(), lc_pool_threads() > 1 ? "s" : "");

    build_metrictab();
    dispatch.version.seven.fetch = lc_fetch;
    dispatch.version.seven.instance = lc_instance;
    lc_control_init(&dispatch);		/* job_begin, job_end: root's stores only */
    pmdaSetFetchCallBack(&dispatch, lc_fetchCallBack);
    if (!use_pmdafetch)
	pmdaSetResultCallBack(&dispatch, lc_fast_fetch_done);
    pmdaInit(&dispatch, indomtab, LC_NINDOMS, metrictab, nmetrics);
    if (dispatch.status != 0) {
	pmNotifyErr(LOG_ERR, "pmdaInit failed: %s", pmErrStr(dispatch.status));
	exit(1);
    }
    lc_fetch_init(metrictab, nmetrics);
    lc_jobs_init(&indomtab[JOB_INDOM]);
    for (i = 0; i < LC_NINDOMS; i++) {
	lc.indom[i] = indomtab[i].it_indom;
	if (lc.persist && i < LC_NCACHED)
	    pmdaCacheOp(lc.indom[i], PMDA_CACHE_LOAD);
    }
    /*
     * The running jobs are kept where the agent of the real / keeps them;
     * an agent pointed at a test tree keeps them only where it is told to.
     */
    if (statedir == NULL && lc_paths_root_is_slash()) {
	pmsprintf(statepath, sizeof(statepath), "%s%cpmdas%clustreclient%cjobs",
		  pmGetConfig("PCP_VAR_DIR"), sep, sep, sep);
	statedir = statepath;
    }
    if (statedir != NULL && strcmp(statedir, "none") != 0 && lc_jobstate_open(statedir) == 0)
	pmNotifyErr(LOG_INFO, "running jobs kept in %s, their timelines every %.3g s",
		    statedir, checkpoint_ms / 1000.0);
    lc_jobs_restore();
    catch_term();

    pmdaConnect(&dispatch);
    main_loop(&dispatch);
    exit(0);
}
