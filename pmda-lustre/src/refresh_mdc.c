/*
 * mdc.*.md_stats -> CL_MDC_MD
 * mdc.*.stats    -> CL_MDC_STATS
 * mdc.*.import (state as fallback) -> CL_MDC_IMPORT
 * mdc.*.rpc_stats (2.8+) -> CL_MDC_RPC
 */
#include <string.h>
#include "lustreclient.h"
#include "parse_stats.h"

static struct lstats	st;

/* an MDC's file of the stats format (md_stats, stats) read and parsed into st: 1, else 0 */
static int
read_lstats(struct lc_mdc *mdc, const char *file, int kind)
{
    const char	*buf;
    ssize_t	n = lc_read_devfile(&mdc->d, file, kind, &buf);

    return n >= 0 && lc_parsed(&mdc->d, kind, file, lstats_parse(buf, (size_t)n, &st) == 0);
}

/* md_stats: absent in 1.8, the metrics then have no value, they are not 0 */
static int
md_stats_read(struct lc_mdc *mdc)
{
    const struct lstats_counter *c;
    size_t		k;

    if (!read_lstats(mdc, "md_stats", FK_MDC_MD))
	return 0;
    memset(mdc->md, 0, sizeof(mdc->md));
    lc_start_set(&mdc->md_start, &st.start);
    /* += because old and new names of one op share an item */
    for (k = 0; k < lc_mdc_nops; k++)
	if ((c = lstats_find(&st, lc_mdc_ops[k].file_name)) != NULL)
	    mdc->md[lc_mdc_ops[k].item] += c->count;
    return 1;
}

void
lc_refresh_mdc_md(void)
{
    size_t	i;

    for (i = 0; i < lc.nmdc; i++)
	lc.mdc[i]->md_ok = lc.mdc[i]->present && md_stats_read(lc.mdc[i]);
}

/* stats: the request wait time and count */
static int
stats_read(struct lc_mdc *mdc)
{
    const struct lstats_counter *c;

    if (!read_lstats(mdc, "stats", FK_MDC_STATS))
	return 0;
    mdc->waittime = mdc->req_count = 0;
    lc_start_set(&mdc->stats_start, &st.start);
    if ((c = lstats_find(&st, "req_waittime")) != NULL) {
	mdc->req_count = c->count;
	mdc->waittime = c->nvals >= 3 ? c->sum : 0;
    }
    return 1;
}

void
lc_refresh_mdc_stats(void)
{
    size_t	i;

    for (i = 0; i < lc.nmdc; i++)
	lc.mdc[i]->stats_ok = lc.mdc[i]->present && stats_read(lc.mdc[i]);
}

void
lc_refresh_mdc_import(void)
{
    struct lc_mdc	*mdc;
    size_t		i;

    for (i = 0; i < lc.nmdc; i++) {
	mdc = lc.mdc[i];
	mdc->imp_ok = 0;
	if (!mdc->present)
	    continue;
	lc_refresh_import(&mdc->d, FK_MDC_IMPORT, FK_MDC_STATE, &mdc->imp, &mdc->imp_ok, NULL);
    }
}

/* rpc_stats: absent before 2.8, the metrics then have no value */
static int
rpc_stats_read(struct lc_mdc *mdc)
{
    const char	*buf;
    ssize_t	n = lc_read_devfile(&mdc->d, "rpc_stats", FK_MDC_RPC, &buf);

    return n >= 0 &&
	   lc_parsed(&mdc->d, FK_MDC_RPC, "rpc_stats",
		     rpc_stats_parse(buf, (size_t)n, &mdc->rs) == 0 && mdc->rs.mod_seen);
}

void
lc_refresh_mdc_rpc(void)
{
    size_t	i;

    for (i = 0; i < lc.nmdc; i++)
	lc.mdc[i]->rpc_ok = lc.mdc[i]->present && rpc_stats_read(lc.mdc[i]);
}
