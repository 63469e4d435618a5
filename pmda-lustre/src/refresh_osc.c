/*
 * osc.*.rpc_stats -> CL_OSC_RPC, CL_OSC_RPCHDR, CL_FS_RPC
 * osc.*.stats     -> CL_OSC_STATS
 * osc.*.import (state as fallback) -> CL_OSC_IMPORT
 * osc.*.max_pages_per_rpc, max_rpcs_in_flight, max_dirty_mb, checksums -> CL_OSC_TUNABLE
 * osc.*.osc_stats -> CL_OSC_LOCKLESS
 */
#include <errno.h>
#include <string.h>
#include "lustreclient.h"
#include "parse_lockless.h"
#include "parse_stats.h"

static __thread struct lstats	st;	/* per reader thread (pool.c) */

/*
 * Read one of a device's files: 1 = a new text in *bufp, *np, to parse;
 * 0 = the text the values were parsed from last time (seen, unchanged.h),
 * so they stand; -1 = nothing to use.  seen may be NULL (never the same).
 * -Dappl2 parses every file as if all had changed: the benchmark's worst
 * case.
 */
static int
read_new(struct lc_dev *d, const char *file, int kind, const struct lc_seen *seen,
	 const char **bufp, size_t *np)
{
    ssize_t	n = lc_read_devfile(d, file, kind, bufp);

    if (n < 0)
	return -1;
    *np = (size_t)n;
    return (seen && !pmDebugOptions.appl2 && lc_seen_same(seen, *bufp, *np)) ? 0 : 1;
}

/* after the parse of a new text: log as lc_parsed, and keep the text with the values */
static int
parsed(struct lc_dev *d, const char *file, int kind, int ok, struct lc_seen *seen,
       const char *buf, size_t n)
{
    if (lc_parsed(d, kind, file, ok))
	lc_seen_keep(seen, buf, n);
    else
	lc_seen_forget(seen);
    return ok;
}
/* the osc stats counters the agent uses */
static const char * const osc_want[] = { "read_bytes", "write_bytes", "req_waittime" };

static void
osc_rpc_one(struct lc_osc *osc)
{
    const char	*buf;
    size_t	n;
    int		r;

    if ((r = read_new(&osc->d, "rpc_stats", FK_OSC_RPC, &osc->seen_rpc, &buf, &n)) <= 0) {
	osc->rpc_ok = r == 0;	/* unchanged: osc->rs is what this text parses to */
	return;
    }
    osc->rpc_ok = parsed(&osc->d, "rpc_stats", FK_OSC_RPC,
			 rpc_stats_parse(buf, n, &osc->rs) == 0 && osc->rs.ppr_seen,
			 &osc->seen_rpc, buf, n);
    if (osc->rpc_ok && osc->rs.ppr_maxidx > osc->maxidx) {
	osc->maxidx = osc->rs.ppr_maxidx;
	osc->grew = 1;
    }
}

/* after the OSCs' rpc_stats are in: the per-fs sums, new buckets */
static void
osc_rpc_done(void)
{
    struct lc_osc	*osc;
    struct lc_fs	*fs;
    size_t		i;
    int			grew = 0, b;

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
	if (osc->grew) {
	    grew = 1;
	    osc->grew = 0;
	}
	if (!osc->present)
	    continue;
	if (!osc->rpc_ok) {
	    osc->fs->rpc_ok = 0;
	    continue;
	}
	for (b = 0; b <= osc->rs.ppr_maxidx; b++) {
	    osc->fs->rpc_read[b] += osc->rs.ppr_read[b];
	    osc->fs->rpc_write[b] += osc->rs.ppr_write[b];
	}
    }
    if (grew)
	lc_buckets_refresh();
}

static void
osc_stats_one(struct lc_osc *osc)
{
    const struct lstats_counter *c;
    const char	*buf;
    size_t	n;
    int		r;

    if ((r = read_new(&osc->d, "stats", FK_OSC_STATS, &osc->seen_stats, &buf, &n)) <= 0) {
	osc->stats_ok = r == 0;
	return;
    }
    st.want = osc_want;
    st.nwant = sizeof(osc_want) / sizeof(osc_want[0]);
    if (!parsed(&osc->d, "stats", FK_OSC_STATS, lstats_parse(buf, n, &st) == 0,
		&osc->seen_stats, buf, n))
	return;
    osc->read_bytes = osc->write_bytes = osc->read_rpcs = osc->write_rpcs = 0;
    osc->waittime = osc->req_count = 0;
    lc_start_set(&osc->stats_start, &st.start);
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

/*
 * State and connection count come from "import" (2.x); when it is missing
 * or has no state, the older "state" file ("current_state: FULL") is used.
 * Shared with refresh_mdc.c.  With seen (OSCs), an import file that reads
 * as it did keeps *imp, when *imp came from that file alone.
 */
void
lc_refresh_import(struct lc_dev *d, int kimport, int kstate,
		  struct import_info *imp, int *ok, struct lc_seen *seen)
{
    struct import_info	s;
    const char		*buf;
    size_t		n;
    int			r;

    if ((r = read_new(d, "import", kimport, seen, &buf, &n)) == 0) {
	*ok = 1;
	return;
    }
    memset(imp, 0, sizeof(*imp));
    if (r > 0)
	lc_parsed(d, kimport, "import", import_parse(buf, n, imp) == 0);
    /* reusable next time only if the import file gave everything, the state too */
    if (seen && r > 0 && imp->have_state)
	lc_seen_keep(seen, buf, n);
    else if (seen)
	lc_seen_forget(seen);
    if (!imp->have_state && !(r < 0 && lc.deadline_hit) &&
	read_new(d, "state", kstate, NULL, &buf, &n) > 0 &&
	lc_parsed(d, kstate, "state", import_parse(buf, n, &s) == 0 && s.have_state)) {
	imp->have_state = 1;
	memcpy(imp->state, s.state, sizeof(imp->state));
    }
    *ok = imp->have_state || imp->have_attempts;
}

static void
osc_lockless_one(struct lc_osc *osc)
{
    struct lockless_stats ls;
    const char	*buf;
    size_t	n;
    int		r;

    if ((r = read_new(&osc->d, "osc_stats", FK_OSC_LOCKLESS, &osc->seen_lockless, &buf, &n)) <= 0) {
	osc->lockless_ok = r == 0;
	return;
    }
    if (!parsed(&osc->d, "osc_stats", FK_OSC_LOCKLESS, lockless_parse(buf, n, &ls) == 0,
		&osc->seen_lockless, buf, n))
	return;
    osc->lockless_read = ls.read_bytes;
    osc->lockless_write = ls.write_bytes;
    osc->lockless_ok = 1;
}

/* the file of each OTUN_* item, its kind, bound, and whether a size in MiB
 * (max_dirty_mb: printed with a fraction up to 2.11) */
static const struct {
    const char	*file;
    int		kind;
    uint32_t	max;
    int		mb;
} otun[OTUN_N] = {
    [OTUN_MAXPAGES] = { "max_pages_per_rpc", FK_OSC_MAXPAGES, UINT32_MAX, 0 },
    [OTUN_MAXRIF] = { "max_rpcs_in_flight", FK_OSC_MAXRIF, UINT32_MAX, 0 },
    [OTUN_MAXDIRTY] = { "max_dirty_mb", FK_OSC_MAXDIRTY, UINT32_MAX, 1 },
    [OTUN_CHECKSUMS] = { "checksums", FK_OSC_CHECKSUMS, 1, 0 },
};

/* every file of one OSC that the fetch needs; runs on a reader thread */
static void
osc_one(size_t i, void *arg)
{
    struct lc_osc	*osc = lc.osc[i];
    unsigned		need = *(unsigned *)arg;
    unsigned		item;

    if (need & NEED_OSC_RPC) {
	osc->rpc_ok = 0;
	if (osc->present)
	    osc_rpc_one(osc);
    }
    if (need & NEED_OSC_STATS) {
	osc->stats_ok = 0;
	if (osc->present)
	    osc_stats_one(osc);
    }
    if (need & NEED_OSC_IMPORT) {
	osc->imp_ok = 0;
	if (osc->present)
	    lc_refresh_import(&osc->d, FK_OSC_IMPORT, FK_OSC_STATE, &osc->imp, &osc->imp_ok,
			      &osc->seen_import);
    }
    if (need & NEED_OSC_TUNABLE) {
	/* only the files of the items asked for */
	osc->tun_ok = 0;
	for (item = 0; item < OTUN_N; item++)
	    if (osc->present && lc_wanted(CL_OSC_TUNABLE, item) &&
		lc_read_u32(&osc->d, otun[item].file, otun[item].kind, &osc->tun[item],
			    otun[item].max, otun[item].mb) > 0)
		osc->tun_ok |= 1u << item;
    }
    if (need & NEED_OSC_LOCKLESS) {
	osc->lockless_ok = 0;
	if (osc->present)
	    osc_lockless_one(osc);
    }
}

void
lc_refresh_osc(unsigned need)
{
    need &= NEED_OSC_ALL;
    if (!need)
	return;
    lc_parallel_for(lc.nosc, osc_one, &need);
    if (need & NEED_OSC_RPC)
	osc_rpc_done();
}
