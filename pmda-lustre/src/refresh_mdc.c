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

void
lc_refresh_mdc_md(void)
{
    const struct lstats_counter *c;
    struct lc_mdc	*mdc;
    const char		*buf;
    ssize_t		n;
    size_t		i, k;

    for (i = 0; i < lc.nmdc; i++) {
	mdc = lc.mdc[i];
	mdc->md_ok = 0;
	if (!mdc->present)
	    continue;
	/* absent in 1.8: the metrics then have no value, they are not 0 */
	n = lc_read_devfile(&mdc->d, "md_stats", FK_MDC_MD, &buf);
	if (n < 0 || !lc_parsed(&mdc->d, FK_MDC_MD, "md_stats",
				lstats_parse(buf, (size_t)n, &st) == 0))
	    continue;
	memset(mdc->md, 0, sizeof(mdc->md));
	lc_start_set(&mdc->md_start, &st.start);
	/* += because old and new names of one op share an item */
	for (k = 0; k < lc_mdc_nops; k++)
	    if ((c = lstats_find(&st, lc_mdc_ops[k].file_name)) != NULL)
		mdc->md[lc_mdc_ops[k].item] += c->count;
	mdc->md_ok = 1;
    }
}

void
lc_refresh_mdc_stats(void)
{
    const struct lstats_counter *c;
    struct lc_mdc	*mdc;
    const char		*buf;
    ssize_t		n;
    size_t		i;

    for (i = 0; i < lc.nmdc; i++) {
	mdc = lc.mdc[i];
	mdc->stats_ok = 0;
	if (!mdc->present)
	    continue;
	n = lc_read_devfile(&mdc->d, "stats", FK_MDC_STATS, &buf);
	if (n < 0 || !lc_parsed(&mdc->d, FK_MDC_STATS, "stats",
				lstats_parse(buf, (size_t)n, &st) == 0))
	    continue;
	mdc->waittime = mdc->req_count = 0;
	lc_start_set(&mdc->stats_start, &st.start);
	if ((c = lstats_find(&st, "req_waittime")) != NULL) {
	    mdc->req_count = c->count;
	    mdc->waittime = c->nvals >= 3 ? c->sum : 0;
	}
	mdc->stats_ok = 1;
    }
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

void
lc_refresh_mdc_rpc(void)
{
    struct lc_mdc	*mdc;
    const char		*buf;
    ssize_t		n;
    size_t		i;

    for (i = 0; i < lc.nmdc; i++) {
	mdc = lc.mdc[i];
	mdc->rpc_ok = 0;
	if (!mdc->present)
	    continue;
	/* absent before 2.8: the metrics then have no value */
	n = lc_read_devfile(&mdc->d, "rpc_stats", FK_MDC_RPC, &buf);
	mdc->rpc_ok = n >= 0 &&
		      lc_parsed(&mdc->d, FK_MDC_RPC, "rpc_stats",
				rpc_stats_parse(buf, (size_t)n, &mdc->rs) == 0 && mdc->rs.mod_seen);
    }
}
