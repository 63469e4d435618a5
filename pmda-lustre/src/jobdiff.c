/*
 * The job view's pure part (jobs.h): the job metric table, begin/now
 * records, the delta and left-out rules, the slot table.  No libpcp, no
 * files: tests/unit/test_jobs.c drives it.
 *
 * The rules are diff.py's (reporter/lustre_jobreport/report/diff.py, docs/design.md
 * §3.3), for one host, per source (stats file) and device; the differential
 * test (tests/report/test_diff_differential.py) holds the two together:
 *   read      some job metric of the source had a value (lc_value gave one)
 *   known     the device listing had the device; when that end listed no
 *             device of the kind at all, known = read
 *   required  a source every layout has (llite stats, the fs histogram, osc
 *             stats)
 *   reset     a value present at both ends went backwards, or the source's
 *             start time moved by > 1 ms (fs histogram: any of the fs's
 *             OSCs' rpc_stats start)
 *   replaced  the identity changed (fs histogram: one of its OSCs')
 *   lost_begin  read at begin but this value not there then and there now,
 *             or read now, not at begin, and known at begin
 *   lost_end  a value there at begin is not now, or read at begin and not
 *             now, or a required source of a device new now not read now
 *   never     required source, known at both ends, read at neither
 *   gone      not known now and lost_end, or known at begin and required
 *             (fs histogram: an OSC of the fs listed at begin is not now)
 *   remounted the device's fs had a mount at begin and has none now, or
 *             another one: everything of that fs is left out
 * A source not required and read at neither end is not judged: it has
 * nothing to count (1.8 has no import files), remounted or replaced.
 * A value is counted when present now, present at begin or the device was
 * not known at begin (a new device counts from zero), and its source of
 * that device is not left out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jobs.h"

#define FS	LC_JS_LLITE_STATS
#define RA	LC_JS_LLITE_RA
#define RPC	LC_JS_OSC_RPC
#define OST	LC_JS_OSC_STATS
#define OIMP	LC_JS_OSC_IMPORT
#define MIMP	LC_JS_MDC_IMPORT

/*
 * item k = index: a contract with the reporter, append only.  jobgen writes
 * it, with lc_job_sources and lc_job_reasons, into the reporter's
 * agentcontract.py, which catalog.py reads (make jobview).
 */
const struct lc_jobmetric lc_job_metrics[LC_JOB_NMETRICS] = {
    { "llite.read_bytes", 2, 0, FS },
    { "llite.write_bytes", 2, 1, FS },
    { "llite.read_calls", 2, 2, FS },
    { "llite.write_calls", 2, 3, FS },
    { "llite.open", 2, 10, FS },
    { "llite.close", 2, 11, FS },
    { "llite.getattr", 2, 12, FS },
    { "llite.setattr", 2, 13, FS },
    { "llite.statfs", 2, 14, FS },
    { "llite.fsync", 2, 15, FS },
    { "llite.seek", 2, 16, FS },
    { "llite.mmap", 2, 17, FS },
    { "llite.truncate", 2, 18, FS },
    { "llite.readdir", 2, 19, FS },
    { "llite.create", 2, 20, FS },
    { "llite.unlink", 2, 21, FS },
    { "llite.mkdir", 2, 22, FS },
    { "llite.rmdir", 2, 23, FS },
    { "llite.rename", 2, 24, FS },
    { "llite.flock", 2, 25, FS },
    { "llite.ioctl", 2, 26, FS },
    { "llite.link", 2, 27, FS },
    { "llite.symlink", 2, 28, FS },
    { "llite.mknod", 2, 29, FS },
    { "llite.setxattr", 2, 30, FS },
    { "llite.getxattr", 2, 31, FS },
    { "llite.listxattr", 2, 32, FS },
    { "llite.removexattr", 2, 33, FS },
    { "llite.fallocate", 2, 35, FS },
    { "llite.latency.read", 3, 0, FS },
    { "llite.latency.write", 3, 1, FS },
    { "llite.readahead.hits", 12, 0, RA },
    { "llite.readahead.misses", 12, 1, RA },
    { "llite.readahead.read_but_discarded", 12, 6, RA },
    { "llite.readahead.readahead_pages", 12, 16, RA },
    { "llite.hybrid.read_bytes", 2, 48, FS },
    { "llite.hybrid.write_bytes", 2, 49, FS },
    { "llite.hybrid.read_calls", 2, 50, FS },
    { "llite.hybrid.write_calls", 2, 51, FS },
    { "llite.hybrid.noswitch", 2, 52, FS },
    { "llite.hybrid.readsize_switch", 2, 53, FS },
    { "llite.hybrid.writesize_switch", 2, 54, FS },
    { "fs.rpc.read", 4, 0, RPC },
    { "fs.rpc.write", 4, 1, RPC },
    { "osc.read_bytes", 7, 0, OST },
    { "osc.write_bytes", 7, 1, OST },
    { "osc.read_rpcs", 7, 2, OST },
    { "osc.write_rpcs", 7, 3, OST },
    { "osc.req_waittime", 7, 4, OST },
    { "osc.req_count", 7, 5, OST },
    { "osc.reconnects", 10, 2, OIMP },
    { "mdc.reconnects", 11, 2, MIMP },
};

/*
 * The series table (jobs.h): what a job's timeline needs to say when the
 * job did its I/O: bytes and calls each way, the metadata operations (the
 * llite ops but read and write, as the reporter's catalog.METADATA_OPS
 * counts them), the RPC size histograms and the read and write calls'
 * latency sums (2.14+; a client without them has no value, so 0 in every
 * point, and the reporter tells them apart by the slot's deltas).  Items of
 * lc_job_metrics; jobgen writes it into agentcontract.py.  Append only: a
 * timeline kept by an older agent is of this table's first metrics.
 */
const unsigned lc_job_series[LC_JOB_NSERIES] = {
    0, 1, 2, 3,				/* llite.read_bytes .. llite.write_calls */
    4, 5, 6, 7, 8, 9, 10, 11, 12, 13,	/* llite.open .. llite.readdir */
    14, 15, 16, 17, 18, 19, 20, 21, 22,	/* llite.create .. llite.symlink */
    23, 24, 25, 26, 27, 28,		/* llite.mknod .. llite.fallocate */
    LC_JOB_K_RPC_READ, LC_JOB_K_RPC_WRITE,
    29, 30,				/* llite.latency.read, llite.latency.write */
};

const struct lc_jobsource lc_job_sources[LC_JOB_NSOURCES] = {
    [LC_JS_LLITE_STATS] = { "llite_stats", LC_JK_FS, 1, "llite stats (the llite.* counters but read-ahead)" },
    [LC_JS_LLITE_RA] = { "llite_read_ahead", LC_JK_FS, 0, "llite read_ahead_stats (llite.readahead.*)" },
    [LC_JS_OSC_RPC] = { "osc_rpc_stats", LC_JK_FS, 1,
			"the fs's RPC size histogram fs.rpc.*, summed over its OSCs' rpc_stats" },
    [LC_JS_OSC_STATS] = { "osc_stats", LC_JK_OSC, 1, "osc stats (osc.read_bytes ... osc.req_count)" },
    [LC_JS_OSC_IMPORT] = { "osc_import", LC_JK_OSC, 0, "osc import (osc.reconnects)" },
    [LC_JS_MDC_IMPORT] = { "mdc_import", LC_JK_MDC, 0, "mdc import (mdc.reconnects)" },
};

const struct lc_jobend lc_job_end_metrics[LC_JOB_NEND] = {
    { "version", 0, 0 },
    { "pagesize", 0, 1 },
    { "agent.fetch.files_read", 0, 6 },
    { "agent.fetch.read_failures", 0, 7 },
    { "agent.fetch.parse_failures", 0, 8 },
    { "agent.fetch.budget_skips", 0, 9 },
    { "llite.mount_id", 1, 0 },
    { "osc.device", 17, 0 },
    { "osc.state", 10, 0 },
    { "mdc.state", 11, 0 },
    { "osc.max_pages_per_rpc", 13, 0 },
    { "osc.max_rpcs_in_flight", 13, 1 },
    { "osc.max_dirty_mb", 13, 2 },
    { "osc.checksums", 13, 3 },
    { "llite.max_read_ahead_mb", 19, 0 },
    { "llite.max_read_ahead_per_file_mb", 19, 1 },
    { "llite.max_read_ahead_whole_mb", 19, 2 },
    { "llite.hybrid_io", 19, 4 },
    { "llite.hybrid_io_read_threshold_bytes", 19, 5 },
    { "llite.hybrid_io_write_threshold_bytes", 19, 6 },
    { "kernel", 20, 0 },
    { "os", 20, 1 },
};

const struct lc_jobreasoninfo lc_job_reasons[LC_JR_N] = {
    [LC_JR_COUNTED] = { "COUNTED", "" },
    [LC_JR_CLEARED] = { "CLEARED", "a counter went backwards, or the file's start time moved" },
    [LC_JR_REPLACED] = { "REPLACED", "the device's identity (its directory) changed" },
    [LC_JR_REMOUNTED] = { "REMOUNTED", "its filesystem was unmounted or remounted" },
    [LC_JR_NOT_READ_AT_BEGIN] = { "NOT_READ_AT_BEGIN", "" },
    [LC_JR_NOT_READ_AT_END] = { "NOT_READ_AT_END", "" },
    [LC_JR_GONE] = { "GONE", "there at the begin, not listed at the end" },
    [LC_JR_NOT_READ] = { "NOT_READ", "listed, read at neither end (a file every layout has)" },
};

#undef FS
#undef RA
#undef RPC
#undef OST
#undef OIMP
#undef MIMP

/* offsets of each metric's values in its kind's arrays, and the sizes */
static unsigned	off[LC_JOB_NMETRICS], kind_nval[LC_JK_N];
static int	laid_out;

static void
layout(void)
{
    unsigned	k, kind;

    if (laid_out)
	return;
    for (k = 0; k < LC_JOB_NMETRICS; k++) {
	kind = lc_job_sources[lc_job_metrics[k].src].kind;
	off[k] = kind_nval[kind];
	kind_nval[kind] += lc_job_nval(k);
    }
    laid_out = 1;
}

unsigned
lc_job_nval(unsigned k)
{
    return lc_job_metrics[k].src == LC_JS_OSC_RPC ? RPC_HIST_MAX : 1;
}

unsigned
lc_job_kind(unsigned k)
{
    return lc_job_sources[lc_job_metrics[k].src].kind;
}

unsigned
lc_job_off(unsigned k)
{
    layout();
    return off[k];
}

unsigned
lc_job_kind_nval(unsigned kind)
{
    layout();
    return kind_nval[kind];
}

unsigned
lc_job_series_nval(void)
{
    unsigned	n = 0;

    for (unsigned j = 0; j < LC_JOB_NSERIES; j++)
	n += lc_job_nval(lc_job_series[j]);
    return n;
}

unsigned
lc_job_series_metrics_of(unsigned nvalues)
{
    unsigned	n = 0;

    for (unsigned j = 0; j < LC_JOB_NSERIES && n < nvalues; j++)
	if ((n += lc_job_nval(lc_job_series[j])) == nvalues)
	    return j + 1;
    return 0;
}

/* ---- records ------------------------------------------------------------ */

struct lc_jobdev *
lc_jobrec_add(struct lc_jobrec *rec, unsigned kind, int inst, const char *name, const char *id)
{
    struct lc_jobdev	*d;
    unsigned		nv = lc_job_kind_nval(kind);

    if (rec->n[kind] == rec->cap[kind]) {
	size_t	ncap = rec->cap[kind] ? rec->cap[kind] * 2 : 8;
	void	*p = realloc(rec->dev[kind], ncap * sizeof(*rec->dev[kind]));

	if (p == NULL)
	    return NULL;
	rec->dev[kind] = p;
	rec->cap[kind] = ncap;
    }
    d = &rec->dev[kind][rec->n[kind]];
    memset(d, 0, sizeof(*d));
    d->inst = inst;
    d->fs = -1;
    d->name = strdup(name ? name : "");
    d->id = strdup(id ? id : "");
    d->val = calloc(nv, sizeof(*d->val));
    d->pres = calloc(nv, sizeof(*d->pres));
    if (kind == LC_JK_FS && (d->binst = malloc(RPC_HIST_MAX * sizeof(*d->binst))) != NULL) {
	for (unsigned b = 0; b < RPC_HIST_MAX; b++)
	    d->binst[b] = -1;
    }
    if (d->name == NULL || d->id == NULL || d->val == NULL || d->pres == NULL ||
	(kind == LC_JK_FS && d->binst == NULL)) {
	free(d->name);
	free(d->id);
	free(d->val);
	free(d->pres);
	free(d->binst);
	return NULL;
    }
    rec->n[kind]++;
    return d;
}

static int
by_inst(const void *a, const void *b)
{
    const struct lc_jobdev *x = a, *y = b;

    return (x->inst > y->inst) - (x->inst < y->inst);
}

void
lc_jobrec_done(struct lc_jobrec *rec)
{
    if (rec->n[LC_JK_OSC] > 1)
	qsort(rec->dev[LC_JK_OSC], rec->n[LC_JK_OSC], sizeof(struct lc_jobdev), by_inst);
    if (rec->n[LC_JK_MDC] > 1)
	qsort(rec->dev[LC_JK_MDC], rec->n[LC_JK_MDC], sizeof(struct lc_jobdev), by_inst);
}

void
lc_jobrec_clear(struct lc_jobrec *rec)
{
    unsigned	kind;
    size_t	i;

    for (kind = 0; kind < LC_JK_N; kind++) {
	for (i = 0; i < rec->n[kind]; i++) {
	    struct lc_jobdev *d = &rec->dev[kind][i];

	    free(d->name);
	    free(d->id);
	    free(d->val);
	    free(d->pres);
	    free(d->binst);
	}
	free(rec->dev[kind]);
    }
    memset(rec, 0, sizeof(*rec));
}

void
lc_jobrec_move(struct lc_jobrec *dst, struct lc_jobrec *src)
{
    lc_jobrec_clear(dst);
    *dst = *src;
    memset(src, 0, sizeof(*src));
}

/* ---- the diff ------------------------------------------------------------- */

uint64_t
lc_job_start_us(double sec)
{
    /* pminfoparse.start_us: finite, 0 <= s < 2^40, rounded half to even */
    if (!isfinite(sec) || sec < 0 || sec >= 1099511627776.0)
	return 0;
    return (uint64_t)nearbyint(sec * 1e6);
}

#define START_TOLERANCE_US	1000

/* both start times are times and more than 1 ms apart */
static int
moved(int bok, double bs, int eok, double es)
{
    uint64_t	b, e;

    if (!bok || !eok)
	return 0;
    b = lc_job_start_us(bs);
    e = lc_job_start_us(es);
    if (b == 0 || e == 0)
	return 0;
    return (b > e ? b - e : e - b) > START_TOLERANCE_US;
}

static const struct lc_jobdev *
find_inst(const struct lc_jobrec *r, unsigned kind, int inst)
{
    size_t	lo = 0, hi = r->n[kind];

    while (lo < hi) {
	size_t mid = (lo + hi) / 2;

	if (r->dev[kind][mid].inst == inst)
	    return &r->dev[kind][mid];
	if (r->dev[kind][mid].inst < inst)
	    lo = mid + 1;
	else
	    hi = mid;
    }
    return NULL;
}

static int
find_fs(const struct lc_jobrec *r, const char *name)
{
    size_t	i;

    for (i = 0; i < r->n[LC_JK_FS]; i++)
	if (strcmp(r->dev[LC_JK_FS][i].name, name) == 0)
	    return (int)i;
    return -1;
}

static int
any_listed(const struct lc_jobrec *r, unsigned kind)
{
    size_t	i;

    for (i = 0; i < r->n[kind]; i++)
	if (r->dev[kind][i].listed)
	    return 1;
    return 0;
}

static const char *
fs_name(const struct lc_jobrec *r, unsigned kind, const struct lc_jobdev *d)
{
    if (kind == LC_JK_FS)
	return d->name;
    return d->fs >= 0 && (size_t)d->fs < r->n[LC_JK_FS] ? r->dev[LC_JK_FS][d->fs].name : "";
}

/* the fs of this name had a mount at begin and none, or another, now */
static int
remounted(const struct lc_jobrec *b, const struct lc_jobrec *e, const char *fs)
{
    int		bi = find_fs(b, fs), ei;

    if (bi < 0 || !b->dev[LC_JK_FS][bi].listed)
	return 0;
    ei = find_fs(e, fs);
    return ei < 0 || !e->dev[LC_JK_FS][ei].listed ||
	   strcmp(b->dev[LC_JK_FS][bi].id, e->dev[LC_JK_FS][ei].id) != 0;
}

/* fs histogram: some OSC of this fs has its rpc_stats start moved */
static int
rpc_restarted(const struct lc_jobrec *b, const struct lc_jobrec *e, const char *fs)
{
    size_t	i;

    for (i = 0; i < e->n[LC_JK_OSC]; i++) {
	const struct lc_jobdev *eo = &e->dev[LC_JK_OSC][i], *bo;

	if (!eo->start_ok[1] || strcmp(fs_name(e, LC_JK_OSC, eo), fs) != 0)
	    continue;
	if ((bo = find_inst(b, LC_JK_OSC, eo->inst)) == NULL)
	    continue;
	if (moved(bo->start_ok[1], bo->start[1], eo->start_ok[1], eo->start[1]))
	    return 1;
    }
    return 0;
}

/*
 * fs histogram: the OSCs it sums changed: *gone, one listed at begin is not
 * now (its counts left the sum); *replaced, one's directory changed (a new
 * device's counts, from 0, took the old one's place in the sum)
 */
static void
rpc_oscs_changed(const struct lc_jobrec *b, const struct lc_jobrec *e, const char *fs, int *gone,
		 int *replaced)
{
    size_t	i;

    *gone = *replaced = 0;
    for (i = 0; i < b->n[LC_JK_OSC]; i++) {
	const struct lc_jobdev *bo = &b->dev[LC_JK_OSC][i], *eo;

	if (!bo->listed || strcmp(fs_name(b, LC_JK_OSC, bo), fs) != 0)
	    continue;
	eo = find_inst(e, LC_JK_OSC, bo->inst);
	if (eo == NULL || !eo->listed)
	    *gone = 1;
	else if (strcmp(bo->id, eo->id) != 0)
	    *replaced = 1;
    }
}

static int
left_add(struct lc_jobres *res, unsigned src, int inst, unsigned reason)
{
    if (res->nleft == res->capleft) {
	size_t	ncap = res->capleft ? res->capleft * 2 : 16;
	void	*p = realloc(res->left, ncap * sizeof(*res->left));

	if (p == NULL)
	    return -1;
	res->left = p;
	res->capleft = ncap;
    }
    res->left[res->nleft].src = src;
    res->left[res->nleft].inst = inst;
    res->left[res->nleft].reason = reason;
    res->nleft++;
    return 0;
}

/*
 * One source of one device: bd at begin, ed now (either may be NULL);
 * delta: ed's delta array (NULL without ed).  Returns the reason, 0 counted.
 */
static unsigned
one(const struct lc_jobrec *b, const struct lc_jobrec *e, unsigned src,
    const struct lc_jobdev *bd, const struct lc_jobdev *ed, int b_any, int e_any, uint64_t *delta,
    uint8_t *counted)
{
    unsigned	kind = lc_job_sources[src].kind, k, v;
    int		required = lc_job_sources[src].required;
    int		b_read = 0, e_read = 0, b_known, e_known;
    int		reset = 0, lost_begin = 0, lost_end = 0, never, replaced, gone, restarted = 0;
    const char	*fs = ed ? fs_name(e, kind, ed) : fs_name(b, kind, bd);
    unsigned	reason;

    for (k = 0; k < LC_JOB_NMETRICS; k++) {
	if (lc_job_metrics[k].src != src)
	    continue;
	for (v = off[k]; v < off[k] + lc_job_nval(k); v++) {
	    b_read |= bd && bd->pres[v];
	    e_read |= ed && ed->pres[v];
	}
    }
    b_known = b_any ? bd != NULL && bd->listed : b_read;
    e_known = e_any ? ed != NULL && ed->listed : e_read;
    for (k = 0; k < LC_JOB_NMETRICS; k++) {
	if (lc_job_metrics[k].src != src)
	    continue;
	for (v = off[k]; v < off[k] + lc_job_nval(k); v++) {
	    int bp = bd && bd->pres[v], ep = ed && ed->pres[v];

	    reset |= bp && ep && ed->val[v] < bd->val[v];
	    lost_begin |= ep && !bp && b_read;
	    lost_end |= bp && !ep;
	}
    }
    reset |= bd && (bd->reset_seen >> src & 1);
    lost_begin |= e_read && !b_read && b_known;
    lost_end |= b_read && !e_read;
    /* a file every layout has, of a device new during the job, not read now: its I/O is
     * not known (another file's values are there) */
    lost_end |= required && !b_known && e_known && !e_read;
    never = required && !b_read && !e_read && b_known && e_known;
    replaced = b_known && e_known && b_any && e_any && bd && ed && strcmp(bd->id, ed->id) != 0;
    if (bd && ed) {
	if (src == LC_JS_LLITE_STATS || src == LC_JS_OSC_STATS)
	    restarted = moved(bd->start_ok[0], bd->start[0], ed->start_ok[0], ed->start[0]);
	else if (src == LC_JS_OSC_RPC)
	    restarted = rpc_restarted(b, e, fs);
    }
    /* there at begin, not now: said if read then, or if every layout has the file */
    gone = !e_known && (lost_end || (b_known && required));
    if (src == LC_JS_OSC_RPC) {
	int	oscs_gone, oscs_replaced;

	rpc_oscs_changed(b, e, fs, &oscs_gone, &oscs_replaced);
	gone |= oscs_gone;
	replaced |= oscs_replaced;
    }

    if (!required && !b_read && !e_read)
	reason = LC_JR_COUNTED;		/* not judged: it has nothing to count */
    else if (remounted(b, e, fs))
	reason = LC_JR_REMOUNTED;
    else if (gone)
	reason = LC_JR_GONE;
    else if (replaced)
	reason = LC_JR_REPLACED;
    else if (reset || restarted)
	reason = LC_JR_CLEARED;
    else if (lost_begin)
	reason = LC_JR_NOT_READ_AT_BEGIN;
    else if (lost_end)
	reason = LC_JR_NOT_READ_AT_END;
    else if (never)
	reason = LC_JR_NOT_READ;
    else
	reason = LC_JR_COUNTED;

    if (ed == NULL)
	return reason;
    for (k = 0; k < LC_JOB_NMETRICS; k++) {
	if (lc_job_metrics[k].src != src)
	    continue;
	for (v = off[k]; v < off[k] + lc_job_nval(k); v++) {
	    int bp = bd && bd->pres[v], ep = ed->pres[v];

	    delta[v] = 0;
	    counted[v] = reason == LC_JR_COUNTED && ep && (bp || !b_known);
	    if (counted[v])
		delta[v] = ed->val[v] - (bp ? bd->val[v] : 0);
	}
    }
    return reason;
}

/* the source's reason for a device: into the left-out list when not counted */
static int
note(struct lc_jobres *res, unsigned src, const struct lc_jobdev *bd, const struct lc_jobdev *ed,
     unsigned reason)
{
    int		inst = ed ? ed->inst : bd->inst;

    if (reason == LC_JR_COUNTED || inst < 0)
	return 0;
    return left_add(res, src, inst, reason);
}

int
lc_job_diff(const struct lc_jobrec *b, const struct lc_jobrec *e, struct lc_jobres *res)
{
    unsigned	kind, src;
    size_t	i;

    layout();
    res->nleft = 0;
    for (kind = 0; kind < LC_JK_N; kind++) {
	size_t need = e->n[kind] * kind_nval[kind];
	int b_any = any_listed(b, kind), e_any = any_listed(e, kind);

	if (need > res->cap[kind]) {
	    uint64_t *p = realloc(res->delta[kind], need * sizeof(*p));
	    uint8_t *c;

	    if (p == NULL)
		return -1;
	    res->delta[kind] = p;
	    if ((c = realloc(res->counted[kind], need)) == NULL)
		return -1;
	    res->counted[kind] = c;
	    res->cap[kind] = need;
	}
	if (need) {
	    memset(res->delta[kind], 0, need * sizeof(uint64_t));
	    memset(res->counted[kind], 0, need);
	}
	for (src = 0; src < LC_JOB_NSOURCES; src++) {
	    if (lc_job_sources[src].kind != kind)
		continue;
	    /* every device now, then those only at begin */
	    for (i = 0; i < e->n[kind]; i++) {
		const struct lc_jobdev *ed = &e->dev[kind][i], *bd;

		if (kind == LC_JK_FS) {
		    int bi = find_fs(b, ed->name);

		    bd = bi < 0 ? NULL : &b->dev[kind][bi];
		} else {
		    bd = find_inst(b, kind, ed->inst);
		}
		if (note(res, src, bd, ed,
			 one(b, e, src, bd, ed, b_any, e_any, res->delta[kind] + i * kind_nval[kind],
			     res->counted[kind] + i * kind_nval[kind])) < 0)
		    return -1;
	    }
	    for (i = 0; i < b->n[kind]; i++) {
		const struct lc_jobdev *bd = &b->dev[kind][i];

		if (kind == LC_JK_FS ? find_fs(e, bd->name) >= 0 : find_inst(e, kind, bd->inst) != NULL)
		    continue;
		if (note(res, src, bd, NULL, one(b, e, src, bd, NULL, b_any, e_any, NULL, NULL)) < 0)
		    return -1;
	    }
	}
    }
    return 0;
}

void
lc_jobres_free(struct lc_jobres *res)
{
    unsigned	kind;

    for (kind = 0; kind < LC_JK_N; kind++) {
	free(res->delta[kind]);
	free(res->counted[kind]);
    }
    free(res->left);
    memset(res, 0, sizeof(*res));
}

void
lc_job_series_values(const struct lc_jobrec *e, const struct lc_jobres *res, size_t i,
		     uint64_t *out)
{
    unsigned	nv = lc_job_kind_nval(LC_JK_FS), o, v, n = 0;
    size_t	at;

    (void)e;
    for (unsigned j = 0; j < LC_JOB_NSERIES; j++) {
	o = lc_job_off(lc_job_series[j]);
	for (v = 0; v < lc_job_nval(lc_job_series[j]); v++) {
	    at = i * nv + o + v;
	    out[n++] = res->counted[LC_JK_FS][at] ? res->delta[LC_JK_FS][at] : 0;
	}
    }
}

/* ---- a slot's answer ----------------------------------------------------------- */

unsigned
lc_job_item(unsigned item)
{
    if (item < LC_JOB_NMETRICS)
	return LC_JI_DELTA;
    if (item >= LC_JOB_LEFT_OUT_ITEM && item < LC_JOB_LEFT_OUT_ITEM + LC_JOB_NSOURCES)
	return LC_JI_LEFT_OUT;
    if (item == LC_JOB_ID_ITEM)
	return LC_JI_JOB_ID;
    return LC_JI_NONE;
}

size_t
lc_job_answer_max(const struct lc_jobrec *e, const struct lc_jobres *res, unsigned item)
{
    switch (lc_job_item(item)) {
    case LC_JI_DELTA:
	return e->n[lc_job_kind(item)] * lc_job_nval(item);
    case LC_JI_LEFT_OUT:
	return res->nleft;
    default:
	return 0;
    }
}

/* left_out.<source>: the reason of each device of the source left out */
static int
answer_left_out(const struct lc_jobres *res, unsigned src, lc_job_value_fn fn, void *arg)
{
    size_t	i;
    int		sts;

    for (i = 0; i < res->nleft; i++) {
	if (res->left[i].src != src)
	    continue;
	if ((sts = fn(arg, res->left[i].inst, res->left[i].reason)) < 0)
	    return sts;
    }
    return 0;
}

int
lc_job_answer(const struct lc_jobrec *e, const struct lc_jobres *res, unsigned item,
	      lc_job_value_fn fn, void *arg)
{
    unsigned	kind, nv, o, b, nval;
    size_t	i;
    int		sts;

    switch (lc_job_item(item)) {
    case LC_JI_LEFT_OUT:
	return answer_left_out(res, item - LC_JOB_LEFT_OUT_ITEM, fn, arg);
    case LC_JI_DELTA:
	break;
    default:
	return -1;
    }
    kind = lc_job_kind(item);
    nv = lc_job_kind_nval(kind);
    o = lc_job_off(item);
    nval = lc_job_nval(item);
    for (i = 0; i < e->n[kind]; i++) {
	const struct lc_jobdev *d = &e->dev[kind][i];

	for (b = 0; b < nval; b++) {
	    uint64_t v = res->delta[kind][i * nv + o + b];
	    int inst = nval > 1 ? d->binst[b] : d->inst;

	    /* zero deltas are not sent for OSCs and MDCs (hundreds a client, most of
	     * them idle in a job); a filesystem's and a bucket's are, so that "0"
	     * and "not counted" (e.g. a counter this Lustre does not have) differ,
	     * as they do in the reporter's diff */
	    if (!res->counted[kind][i * nv + o + b] || inst < 0 || (v == 0 && kind != LC_JK_FS))
		continue;
	    if ((sts = fn(arg, inst, v)) < 0)
		return sts;
	}
    }
    return 0;
}

/* ---- job ids and slots ------------------------------------------------------ */

int
lc_job_id_ok(const char *s)
{
    size_t	n = 0;

    if (s == NULL)
	return 0;
    for (; s[n]; n++) {
	char c = s[n];

	if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	      c == '_' || c == '.' || c == ':' || c == '+' || c == '-'))
	    return 0;
	if (n >= LC_JOB_ID_MAX)
	    return 0;
    }
    return n >= 1;
}

int
lc_job_find(const struct lc_jobslot slots[LC_JOB_SLOTS], const char *id)
{
    int		s;

    for (s = 0; s < LC_JOB_SLOTS; s++)
	if (slots[s].used && strcmp(slots[s].id, id) == 0)
	    return s;
    return -1;
}

int
lc_job_pick(const struct lc_jobslot slots[LC_JOB_SLOTS], const char *id, int *evicted)
{
    int		s, oldest = 0;

    *evicted = 0;
    if ((s = lc_job_find(slots, id)) >= 0)
	return s;
    for (s = 0; s < LC_JOB_SLOTS; s++)
	if (!slots[s].used)
	    return s;
    for (s = 1; s < LC_JOB_SLOTS; s++)
	if (slots[s].begin_time < slots[oldest].begin_time)
	    oldest = s;
    *evicted = 1;
    return oldest;
}

int
lc_job_begin(struct lc_jobslot slots[LC_JOB_SLOTS], const char *id, double begin_time,
	     struct lc_jobrec *rec, char evicted[LC_JOB_ID_MAX + 1])
{
    int		ev, s = lc_job_pick(slots, id, &ev);

    snprintf(evicted, LC_JOB_ID_MAX + 1, "%s", ev ? slots[s].id : "");
    lc_jobrec_move(&slots[s].rec, rec);
    slots[s].used = 1;
    snprintf(slots[s].id, sizeof(slots[s].id), "%s", id);
    slots[s].begin_time = begin_time;
    return s;
}

int
lc_job_end(struct lc_jobslot slots[LC_JOB_SLOTS], const char *id)
{
    int		s = lc_job_find(slots, id);

    if (s >= 0) {
	lc_jobrec_clear(&slots[s].rec);
	slots[s].used = 0;
	slots[s].id[0] = '\0';
    }
    return s;
}

const char *
lc_job_slot_id(const struct lc_jobslot *slot)
{
    return slot->used ? slot->id : NULL;
}
