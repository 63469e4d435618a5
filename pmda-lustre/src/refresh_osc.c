/*
 * osc.*.rpc_stats -> CL_OSC_RPC, CL_OSC_RPCHDR, CL_FS_RPC
 * osc.*.stats     -> CL_OSC_STATS
 * osc.*.import (state as fallback) -> CL_OSC_IMPORT
 */
#include <string.h>
#include "lustreclient.h"
#include "parse_stats.h"

static struct lstats	st;

void
lc_refresh_osc_rpc(void)
{
    struct lc_osc	*osc;
    struct lc_fs	*fs;
    const char		*buf;
    ssize_t		n;
    size_t		i;
    int			grew = 0, b;

    for (i = 0; i < lc.nosc; i++) {
	osc = lc.osc[i];
	osc->rpc_ok = 0;
	if (!osc->present)
	    continue;
	n = lc_read_devfile("osc", osc->dev, "rpc_stats", &osc->hint[FK_OSC_RPC],
			    &osc->logged, FK_OSC_RPC, &buf);
	if (n < 0)
	    continue;
	if (rpc_stats_parse(buf, (size_t)n, &osc->rs) < 0) {
	    lc_log_bad(&osc->logged, FK_OSC_RPC, "osc", osc->dev, "rpc_stats");
	    continue;
	}
	lc_log_ok(&osc->logged, FK_OSC_RPC);
	osc->rpc_ok = 1;
	if (osc->rs.ppr_maxidx > osc->maxidx) {
	    osc->maxidx = osc->rs.ppr_maxidx;
	    grew = 1;
	}
    }

    /*
     * The fs histogram is all or nothing: summing only the OSCs that
     * could be read would make the fs counters drop for one fetch and
     * look like a reset to anything computing deltas.
     */
    for (i = 0; i < lc.nfs; i++) {
	fs = lc.fs[i];
	fs->rpc_ok = fs->nosc > 0;
	memset(fs->rpc_read, 0, sizeof(fs->rpc_read));
	memset(fs->rpc_write, 0, sizeof(fs->rpc_write));
    }
    for (i = 0; i < lc.nosc; i++) {
	osc = lc.osc[i];
	if (!osc->present)
	    continue;
	if (!osc->rpc_ok) {
	    osc->fs->rpc_ok = 0;
	    continue;
	}
	for (b = 0; b < RPC_HIST_MAX; b++) {
	    osc->fs->rpc_read[b] += osc->rs.ppr_read[b];
	    osc->fs->rpc_write[b] += osc->rs.ppr_write[b];
	}
    }
    if (grew)
	lc_buckets_refresh();
}

void
lc_refresh_osc_stats(void)
{
    const struct lstats_counter *c;
    struct lc_osc	*osc;
    const char		*buf;
    ssize_t		n;
    size_t		i;

    for (i = 0; i < lc.nosc; i++) {
	osc = lc.osc[i];
	osc->stats_ok = 0;
	if (!osc->present)
	    continue;
	n = lc_read_devfile("osc", osc->dev, "stats", &osc->hint[FK_OSC_STATS],
			    &osc->logged, FK_OSC_STATS, &buf);
	if (n < 0)
	    continue;
	if (lstats_parse(buf, (size_t)n, &st) < 0) {
	    lc_log_bad(&osc->logged, FK_OSC_STATS, "osc", osc->dev, "stats");
	    continue;
	}
	lc_log_ok(&osc->logged, FK_OSC_STATS);
	osc->read_bytes = osc->write_bytes = osc->read_rpcs = osc->write_rpcs = 0;
	osc->waittime = osc->req_count = 0;
	if ((c = lstats_find(&st, "read_bytes")) != NULL) {
	    osc->read_rpcs = c->count;
	    osc->read_bytes = c->nvals >= 3 ? c->sum : 0;
	}
	if ((c = lstats_find(&st, "write_bytes")) != NULL) {
	    osc->write_rpcs = c->count;
	    osc->write_bytes = c->nvals >= 3 ? c->sum : 0;
	}
	if ((c = lstats_find(&st, "req_waittime")) != NULL) {
	    osc->req_count = c->count;
	    osc->waittime = c->nvals >= 3 ? c->sum : 0;
	}
	osc->stats_ok = 1;
    }
}

/*
 * State and connection count come from "import" (2.x); when it is missing
 * or has no state, the older "state" file ("current_state: FULL") is used.
 * Shared with refresh_mdc.c.
 */
void
lc_refresh_import(const char *type, const char *dev, int *hints,
		  unsigned *logged, int kimport, int kstate,
		  struct import_info *imp, int *ok)
{
    struct import_info	s;
    const char		*buf;
    ssize_t		n;

    memset(imp, 0, sizeof(*imp));
    n = lc_read_devfile(type, dev, "import", &hints[kimport], logged, kimport, &buf);
    if (n >= 0) {
	if (import_parse(buf, (size_t)n, imp) == 0)
	    lc_log_ok(logged, kimport);
	else
	    lc_log_bad(logged, kimport, type, dev, "import");
    }
    if (!imp->have_state) {
	n = lc_read_devfile(type, dev, "state", &hints[kstate], logged, kstate, &buf);
	if (n >= 0) {
	    if (import_parse(buf, (size_t)n, &s) == 0 && s.have_state) {
		lc_log_ok(logged, kstate);
		imp->have_state = 1;
		memcpy(imp->state, s.state, sizeof(imp->state));
	    } else {
		lc_log_bad(logged, kstate, type, dev, "state");
	    }
	}
    }
    *ok = imp->have_state || imp->have_attempts;
}

void
lc_refresh_osc_import(void)
{
    struct lc_osc	*osc;
    size_t		i;

    for (i = 0; i < lc.nosc; i++) {
	osc = lc.osc[i];
	osc->imp_ok = 0;
	if (!osc->present)
	    continue;
	lc_refresh_import("osc", osc->dev, osc->hint, &osc->logged,
			  FK_OSC_IMPORT, FK_OSC_STATE, &osc->imp, &osc->imp_ok);
    }
}
