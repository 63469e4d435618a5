/*
 * pmdalustreclient: Lustre client statistics for PCP.
 *
 * The fetch entry point is wrapped (like pmdas/linux) so that each fetch
 * first works out which stats files its metrics come from, reads each of
 * those once, and only then lets pmdaFetch() walk the instances.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lustreclient.h"
#include "paths.h"
#include "../domain.h"

struct lc_agent	lc;

static pmdaIndom indomtab[LC_NINDOMS] = {
    { FS_INDOM, 0, NULL },
    { OSC_INDOM, 0, NULL },
    { MDC_INDOM, 0, NULL },
    { FS_BUCKET_INDOM, 0, NULL },
    { OSC_BUCKET_INDOM, 0, NULL },
};

static pmdaMetric	*metrictab;
static int		nmetrics, metriccap;

#define U_NONE	((pmUnits)PMDA_PMUNITS(0, 0, 0, 0, 0, 0))
#define U_BYTES	((pmUnits)PMDA_PMUNITS(1, 0, 0, PM_SPACE_BYTE, 0, 0))
#define U_COUNT	((pmUnits)PMDA_PMUNITS(0, 0, 1, 0, 0, PM_COUNT_ONE))
#define U_USEC	((pmUnits)PMDA_PMUNITS(0, 1, 0, 0, PM_TIME_USEC, 0))

static void
add_metric(unsigned cluster, unsigned item, int type, int indom, int sem, pmUnits units)
{
    pmdaMetric	*m;
    int		i;

    /* aliases (md_stats sync/fsync) share an item: one descriptor */
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

static void
build_metrictab(void)
{
    size_t	i;
    unsigned	k;

    add_metric(CL_GLOBAL, 0, PM_TYPE_STRING, -1, PM_SEM_DISCRETE, U_NONE);
    add_metric(CL_GLOBAL, 1, PM_TYPE_U32, -1, PM_SEM_DISCRETE, U_BYTES);

    add_metric(CL_LLITE_DEV, 0, PM_TYPE_STRING, FS_INDOM, PM_SEM_DISCRETE, U_NONE);

    add_metric(CL_LLITE_STATS, LLITE_READ_BYTES, PM_TYPE_U64, FS_INDOM, PM_SEM_COUNTER, U_BYTES);
    add_metric(CL_LLITE_STATS, LLITE_WRITE_BYTES, PM_TYPE_U64, FS_INDOM, PM_SEM_COUNTER, U_BYTES);
    add_metric(CL_LLITE_STATS, LLITE_READ_CALLS, PM_TYPE_U64, FS_INDOM, PM_SEM_COUNTER, U_COUNT);
    add_metric(CL_LLITE_STATS, LLITE_WRITE_CALLS, PM_TYPE_U64, FS_INDOM, PM_SEM_COUNTER, U_COUNT);
    for (i = 0; i < lc_llite_nops; i++)
	add_metric(CL_LLITE_STATS, lc_llite_ops[i].item, PM_TYPE_U64, FS_INDOM,
		   PM_SEM_COUNTER, U_COUNT);
    for (i = 0; i < lc_llite_nlat; i++)
	add_metric(CL_LLITE_LAT, lc_llite_lat[i].item, PM_TYPE_U64, FS_INDOM,
		   PM_SEM_COUNTER, U_USEC);

    for (k = 0; k < 2; k++) {
	add_metric(CL_FS_RPC, k, PM_TYPE_U64, FS_BUCKET_INDOM, PM_SEM_COUNTER, U_COUNT);
	add_metric(CL_OSC_RPC, k, PM_TYPE_U64, OSC_BUCKET_INDOM, PM_SEM_COUNTER, U_COUNT);
    }
    for (k = 0; k < 4; k++)
	add_metric(CL_OSC_RPCHDR, k, PM_TYPE_U32, OSC_INDOM, PM_SEM_INSTANT, U_COUNT);

    add_metric(CL_OSC_STATS, 0, PM_TYPE_U64, OSC_INDOM, PM_SEM_COUNTER, U_BYTES);
    add_metric(CL_OSC_STATS, 1, PM_TYPE_U64, OSC_INDOM, PM_SEM_COUNTER, U_BYTES);
    add_metric(CL_OSC_STATS, 2, PM_TYPE_U64, OSC_INDOM, PM_SEM_COUNTER, U_COUNT);
    add_metric(CL_OSC_STATS, 3, PM_TYPE_U64, OSC_INDOM, PM_SEM_COUNTER, U_COUNT);
    add_metric(CL_OSC_STATS, 4, PM_TYPE_U64, OSC_INDOM, PM_SEM_COUNTER, U_USEC);
    add_metric(CL_OSC_STATS, 5, PM_TYPE_U64, OSC_INDOM, PM_SEM_COUNTER, U_COUNT);

    for (i = 0; i < lc_mdc_nops; i++)
	add_metric(CL_MDC_MD, lc_mdc_ops[i].item, PM_TYPE_U64, MDC_INDOM,
		   PM_SEM_COUNTER, U_COUNT);
    add_metric(CL_MDC_STATS, 0, PM_TYPE_U64, MDC_INDOM, PM_SEM_COUNTER, U_USEC);
    add_metric(CL_MDC_STATS, 1, PM_TYPE_U64, MDC_INDOM, PM_SEM_COUNTER, U_COUNT);

    add_metric(CL_OSC_IMPORT, 0, PM_TYPE_STRING, OSC_INDOM, PM_SEM_INSTANT, U_NONE);
    add_metric(CL_OSC_IMPORT, 1, PM_TYPE_U64, OSC_INDOM, PM_SEM_COUNTER, U_COUNT);
    add_metric(CL_MDC_IMPORT, 0, PM_TYPE_STRING, MDC_INDOM, PM_SEM_INSTANT, U_NONE);
    add_metric(CL_MDC_IMPORT, 1, PM_TYPE_U64, MDC_INDOM, PM_SEM_COUNTER, U_COUNT);
}

static unsigned
needs(pmID pmid)
{
    switch (pmID_cluster(pmid)) {
    case CL_GLOBAL:
	return pmID_item(pmid) == 0 ? NEED_VERSION : 0;
    case CL_LLITE_DEV:
	return NEED_DEVICES;
    case CL_LLITE_STATS:
    case CL_LLITE_LAT:
	return NEED_DEVICES | NEED_LLITE;
    case CL_FS_RPC:
    case CL_OSC_RPC:
    case CL_OSC_RPCHDR:
	return NEED_DEVICES | NEED_OSC_RPC;
    case CL_OSC_STATS:
	return NEED_DEVICES | NEED_OSC_STATS;
    case CL_OSC_IMPORT:
	return NEED_DEVICES | NEED_OSC_IMPORT;
    case CL_MDC_MD:
	return NEED_DEVICES | NEED_MDC_MD;
    case CL_MDC_STATS:
	return NEED_DEVICES | NEED_MDC_STATS;
    case CL_MDC_IMPORT:
	return NEED_DEVICES | NEED_MDC_IMPORT;
    }
    return 0;
}

static void
refresh(unsigned need)
{
    if (need & NEED_VERSION)
	lc_refresh_version();
    if (need & NEED_DEVICES)
	lc_devices_refresh();
    if (need & NEED_LLITE)
	lc_refresh_llite();
    if (need & NEED_OSC_RPC)
	lc_refresh_osc_rpc();
    if (need & NEED_OSC_STATS)
	lc_refresh_osc_stats();
    if (need & NEED_OSC_IMPORT)
	lc_refresh_osc_import();
    if (need & NEED_MDC_MD)
	lc_refresh_mdc_md();
    if (need & NEED_MDC_STATS)
	lc_refresh_mdc_stats();
    if (need & NEED_MDC_IMPORT)
	lc_refresh_mdc_import();
    if (need & NEED_DEVICES)
	lc_cache_save();
}

static int
lc_fetch(int numpmid, pmID pmidlist[], pmResult **resp, pmdaExt *pmda)
{
    unsigned	need = 0;
    int		i;

    for (i = 0; i < numpmid; i++)
	need |= needs(pmidlist[i]);
    refresh(need);
    return pmdaFetch(numpmid, pmidlist, resp, pmda);
}

static int
lc_instance(pmInDom indom, int inst, char *name, pmInResult **result, pmdaExt *pmda)
{
    refresh(NEED_DEVICES);
    return pmdaInstance(indom, inst, name, result, pmda);
}

static int
lc_fetchCallBack(pmdaMetric *mdesc, unsigned int inst, pmAtomValue *atom)
{
    unsigned	cluster = pmID_cluster(mdesc->m_desc.pmid);
    unsigned	item = pmID_item(mdesc->m_desc.pmid);
    void	*priv = NULL;
    struct lc_fs *fs;
    struct lc_osc *osc;
    struct lc_mdc *mdc;
    struct lc_bucket *b;

    if (mdesc->m_desc.indom != PM_INDOM_NULL) {
	if (pmdaCacheLookup(mdesc->m_desc.indom, inst, NULL, &priv) != PMDA_CACHE_ACTIVE ||
	    priv == NULL)
	    return PM_ERR_INST;
    } else if (inst != PM_IN_NULL) {
	return PM_ERR_INST;
    }

    /* return 0 (no value) where the file could not be read or parsed */
    switch (cluster) {
    case CL_GLOBAL:
	if (item == 0) {
	    if (!lc.version_ok)
		return 0;
	    atom->cp = lc.version;
	    return 1;
	}
	if (item == 1) {
	    atom->ul = (uint32_t)lc.pagesize;
	    return 1;
	}
	break;

    case CL_LLITE_DEV:
	fs = priv;
	atom->cp = fs->sbi;
	return 1;

    case CL_LLITE_STATS:
	fs = priv;
	if (item >= LC_MAXITEM)
	    break;
	if (!fs->ll_ok)
	    return 0;
	if ((item == LLITE_READ_BYTES || item == LLITE_WRITE_BYTES) && !fs->bytes_ok)
	    return 0;
	atom->ull = fs->ll[item];
	return 1;

    case CL_LLITE_LAT:
	fs = priv;
	if (item >= LC_MAXITEM)
	    break;
	if (!fs->ll_ok || !fs->lat_ok || !(fs->lat_valid & ((uint64_t)1 << item)))
	    return 0;
	atom->ull = fs->lat[item];
	return 1;

    case CL_FS_RPC:
	b = priv;
	if (item > 1 || b->fs == NULL)
	    break;
	if (!b->fs->rpc_ok)
	    return 0;
	atom->ull = item == 0 ? b->fs->rpc_read[b->idx] : b->fs->rpc_write[b->idx];
	return 1;

    case CL_OSC_RPC:
	b = priv;
	if (item > 1 || b->osc == NULL)
	    break;
	if (!b->osc->rpc_ok)
	    return 0;
	atom->ull = item == 0 ? b->osc->rs.ppr_read[b->idx] : b->osc->rs.ppr_write[b->idx];
	return 1;

    case CL_OSC_RPCHDR:
	osc = priv;
	if (!osc->rpc_ok)
	    return 0;
	switch (item) {
	case 0:
	    if (!(osc->rs.have & RPCS_READ_INFLIGHT))
		return 0;
	    atom->ul = osc->rs.read_inflight;
	    return 1;
	case 1:
	    if (!(osc->rs.have & RPCS_WRITE_INFLIGHT))
		return 0;
	    atom->ul = osc->rs.write_inflight;
	    return 1;
	case 2:
	    if (!(osc->rs.have & RPCS_PENDING_READ))
		return 0;
	    atom->ul = osc->rs.pending_read_pages;
	    return 1;
	case 3:
	    if (!(osc->rs.have & RPCS_PENDING_WRITE))
		return 0;
	    atom->ul = osc->rs.pending_write_pages;
	    return 1;
	}
	break;

    case CL_OSC_STATS:
	osc = priv;
	if (!osc->stats_ok)
	    return 0;
	switch (item) {
	case 0: atom->ull = osc->read_bytes; return 1;
	case 1: atom->ull = osc->write_bytes; return 1;
	case 2: atom->ull = osc->read_rpcs; return 1;
	case 3: atom->ull = osc->write_rpcs; return 1;
	case 4: atom->ull = osc->waittime; return 1;
	case 5: atom->ull = osc->req_count; return 1;
	}
	break;

    case CL_MDC_MD:
	mdc = priv;
	if (item >= LC_MAXITEM)
	    break;
	if (!mdc->md_ok)
	    return 0;
	atom->ull = mdc->md[item];
	return 1;

    case CL_MDC_STATS:
	mdc = priv;
	if (!mdc->stats_ok)
	    return 0;
	if (item == 0) {
	    atom->ull = mdc->waittime;
	    return 1;
	}
	if (item == 1) {
	    atom->ull = mdc->req_count;
	    return 1;
	}
	break;

    case CL_OSC_IMPORT:
    case CL_MDC_IMPORT: {
	struct import_info *imp;
	int ok;

	if (cluster == CL_OSC_IMPORT) {
	    osc = priv;
	    imp = &osc->imp;
	    ok = osc->imp_ok;
	} else {
	    mdc = priv;
	    imp = &mdc->imp;
	    ok = mdc->imp_ok;
	}
	if (!ok)
	    return 0;
	if (item == 0) {
	    if (!imp->have_state)
		return 0;
	    atom->cp = imp->state;
	    return 1;
	}
	if (item == 1) {
	    if (!imp->have_attempts)
		return 0;
	    atom->ull = imp->connection_attempts;
	    return 1;
	}
	break;
    }
    }
    return PM_ERR_PMID;
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
    PMOPT_HELP,
    PMDA_OPTIONS_END
};

static pmdaOptions opts = {
    .short_options = "D:d:h:l:U:r:P:C:?",
    .long_options = longopts,
};

int
main(int argc, char **argv)
{
    pmdaInterface	dispatch;
    char		helppath[MAXPATHLEN];
    const char		*root = "/", *cachemode = "auto";
    long		ps;
    int			c, i, sep = pmPathSeparator();

    pmSetProgname(argv[0]);
    pmsprintf(helppath, sizeof(helppath), "%s%clustreclient%chelp",
	      pmGetConfig("PCP_PMDAS_DIR"), sep, sep);
    pmdaDaemon(&dispatch, PMDA_INTERFACE_7, pmGetProgname(), LUSTRECLIENT,
	       "lustreclient.log", helppath);

    ps = sysconf(_SC_PAGESIZE);
    lc.pagesize = ps > 0 ? (uint64_t)ps : 4096;
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
    pmNotifyErr(LOG_INFO, "root %s, page size %llu, instance cache %s",
		lc_paths_root(), (unsigned long long)lc.pagesize,
		lc.persist ? "persistent" : "in memory");

    build_metrictab();
    dispatch.version.seven.fetch = lc_fetch;
    dispatch.version.seven.instance = lc_instance;
    pmdaSetFetchCallBack(&dispatch, lc_fetchCallBack);
    pmdaInit(&dispatch, indomtab, LC_NINDOMS, metrictab, nmetrics);
    if (dispatch.status != 0) {
	pmNotifyErr(LOG_ERR, "pmdaInit failed: %s", pmErrStr(dispatch.status));
	exit(1);
    }
    for (i = 0; i < LC_NINDOMS; i++) {
	lc.indom[i] = indomtab[i].it_indom;
	if (lc.persist)
	    pmdaCacheOp(lc.indom[i], PMDA_CACHE_LOAD);
    }
    lc.version_hint = -1;

    pmdaConnect(&dispatch);
    pmdaMain(&dispatch);
    exit(0);
}
