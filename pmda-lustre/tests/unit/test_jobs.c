/*
 * The job view's pure part (src/jobdiff.c): deltas and left-out reasons
 * from a begin and a now record, as diff.py computes them, and the slots.
 */
#include "harness.h"
#include "jobs.h"

/* job metric items used here (lc_job_metrics order) */
#define K_READ_BYTES	0
#define K_OPEN		4
#define K_LAT_READ	29
#define K_RA_HITS	31
#define K_RPC_READ	42
#define K_RPC_WRITE	43
#define K_OSC_RB	44
#define K_OSC_WB	45
#define K_OSC_RC	50
#define K_MDC_RC	51

static struct lc_jobdev *
fs_dev(struct lc_jobrec *r, const char *name, const char *sbi, int inst)
{
    struct lc_jobdev *d = lc_jobrec_add(r, LC_JK_FS, inst, name, sbi);
    unsigned	b;

    d->listed = 1;
    for (b = 0; b < RPC_HIST_MAX; b++)
	d->binst[b] = inst * 100 + (int)b;
    return d;
}

static struct lc_jobdev *
dev(struct lc_jobrec *r, unsigned kind, int inst, int fs, const char *id)
{
    struct lc_jobdev *d = lc_jobrec_add(r, kind, inst, NULL, id);

    d->listed = 1;
    d->fs = fs;
    return d;
}

static void
setv(struct lc_jobdev *d, unsigned k, unsigned b, uint64_t v)
{
    d->val[lc_job_off(k) + b] = v;
    d->pres[lc_job_off(k) + b] = 1;
}

/* every value of one source of a device: base + item */
static void
fill(struct lc_jobdev *d, unsigned src, uint64_t base)
{
    unsigned	k, b;

    for (k = 0; k < LC_JOB_NMETRICS; k++)
	if (lc_job_metrics[k].src == src)
	    for (b = 0; b < lc_job_nval(k); b++)
		setv(d, k, b, base + k + b);
}

static void
unset(struct lc_jobdev *d, unsigned src)
{
    unsigned	k, b;

    for (k = 0; k < LC_JOB_NMETRICS; k++)
	if (lc_job_metrics[k].src == src)
	    for (b = 0; b < lc_job_nval(k); b++)
		d->pres[lc_job_off(k) + b] = 0;
}

/*
 * A client: fs "scratch" (inst 0, mount sbi A) with OSC 10, 11 and MDC 20;
 * fs "proj" (inst 1) with OSC 12.  Every source read, values from base.
 */
static void
client(struct lc_jobrec *r, uint64_t base)
{
    struct lc_jobdev *d;

    d = fs_dev(r, "scratch", "ffffA", 0);
    fill(d, LC_JS_LLITE_STATS, base);
    fill(d, LC_JS_LLITE_RA, base);
    fill(d, LC_JS_OSC_RPC, base);
    d->start_ok[0] = 1;
    d->start[0] = 1700000000.0;
    d = fs_dev(r, "proj", "ffffB", 1);
    fill(d, LC_JS_LLITE_STATS, base);
    fill(d, LC_JS_LLITE_RA, base);
    fill(d, LC_JS_OSC_RPC, base);
    for (int i = 0; i < 3; i++) {
	d = dev(r, LC_JK_OSC, 10 + i, i < 2 ? 0 : 1, i == 0 ? "scratch-OST0000-osc-ffffA" :
		i == 1 ? "scratch-OST0001-osc-ffffA" : "proj-OST0000-osc-ffffB");
	fill(d, LC_JS_OSC_STATS, base);
	fill(d, LC_JS_OSC_IMPORT, base);
	d->start_ok[0] = d->start_ok[1] = 1;
	d->start[0] = d->start[1] = 1700000000.0 + i;
    }
    d = dev(r, LC_JK_MDC, 20, 0, "scratch-MDT0000-mdc-ffffA");
    fill(d, LC_JS_MDC_IMPORT, base);
}

static struct lc_jobdev *
get(struct lc_jobrec *r, unsigned kind, int inst)
{
    size_t	i;

    for (i = 0; i < r->n[kind]; i++)
	if (r->dev[kind][i].inst == inst)
	    return &r->dev[kind][i];
    return NULL;
}

/* where value b of metric k of device inst is in a result's arrays; -1: no such device */
static long
value_at(const struct lc_jobrec *e, unsigned k, int inst, unsigned b)
{
    unsigned	kind = lc_job_kind(k);
    size_t	i;

    for (i = 0; i < e->n[kind]; i++)
	if (e->dev[kind][i].inst == inst)
	    return (long)(i * lc_job_kind_nval(kind) + lc_job_off(k) + b);
    return -1;
}

/* whether value b of metric k of device inst counts (1), does not (0), or no such device (-1) */
static int
counted(const struct lc_jobrec *e, const struct lc_jobres *res, unsigned k, int inst, unsigned b)
{
    long	at = value_at(e, k, inst, b);

    return at < 0 ? -1 : res->counted[lc_job_kind(k)][at];
}

static uint64_t
delta(const struct lc_jobrec *e, const struct lc_jobres *res, unsigned k, int inst, unsigned b)
{
    long	at = value_at(e, k, inst, b);

    return at < 0 ? 0xdead : res->delta[lc_job_kind(k)][at];
}

static unsigned
reason(const struct lc_jobres *res, unsigned src, int inst)
{
    size_t	i;
    unsigned	r = 0;

    for (i = 0; i < res->nleft; i++)
	if (res->left[i].src == src && res->left[i].inst == inst) {
	    if (r)
		return 99;	/* listed twice: one code per device and source */
	    r = res->left[i].reason;
	}
    return r;
}

struct pair {
    struct lc_jobrec b, e;
    struct lc_jobres res;
};

static void
setup(struct pair *p)
{
    memset(p, 0, sizeof(*p));
    client(&p->b, 100);
    client(&p->e, 100);
}

static int
run(struct pair *p)
{
    lc_jobrec_done(&p->b);
    lc_jobrec_done(&p->e);
    return lc_job_diff(&p->b, &p->e, &p->res);
}

static void
done(struct pair *p)
{
    lc_jobrec_clear(&p->b);
    lc_jobrec_clear(&p->e);
    lc_jobres_free(&p->res);
}

static void
test_growth(void)
{
    struct pair p;

    setup(&p);
    setv(get(&p.e, LC_JK_FS, 0), K_READ_BYTES, 0, 100 + K_READ_BYTES + 150);
    setv(get(&p.e, LC_JK_FS, 0), K_RPC_WRITE, 3, 100 + K_RPC_WRITE + 3 + 7);
    setv(get(&p.e, LC_JK_OSC, 11), K_OSC_WB, 0, 100 + K_OSC_WB + (1ull << 40));
    setv(get(&p.e, LC_JK_MDC, 20), K_MDC_RC, 0, 100 + K_MDC_RC + 2);
    CHECK_INT(run(&p), 0);
    CHECK_U64(delta(&p.e, &p.res, K_READ_BYTES, 0, 0), 150);
    CHECK_U64(delta(&p.e, &p.res, K_RPC_WRITE, 0, 3), 7);
    CHECK_U64(delta(&p.e, &p.res, K_OSC_WB, 11, 0), 1ull << 40);
    CHECK_U64(delta(&p.e, &p.res, K_MDC_RC, 20, 0), 2);
    /* unchanged values are 0, and counted (the fetch leaves out OSC and MDC zeros) */
    CHECK_U64(delta(&p.e, &p.res, K_OPEN, 0, 0), 0);
    CHECK_U64(delta(&p.e, &p.res, K_READ_BYTES, 1, 0), 0);
    CHECK_U64(delta(&p.e, &p.res, K_OSC_RB, 10, 0), 0);
    CHECK_INT(counted(&p.e, &p.res, K_OPEN, 0, 0), 1);
    CHECK_INT(counted(&p.e, &p.res, K_OSC_RB, 10, 0), 1);
    CHECK_INT(counted(&p.e, &p.res, K_READ_BYTES, 0, 0), 1);
    CHECK_INT(p.res.nleft, 0);
    /* the result of a second diff into the same res is the same */
    CHECK_INT(lc_job_diff(&p.b, &p.e, &p.res), 0);
    CHECK_U64(delta(&p.e, &p.res, K_READ_BYTES, 0, 0), 150);
    CHECK_INT(p.res.nleft, 0);
    done(&p);
}

static void
test_cleared(void)
{
    struct pair p;

    /* a counter went backwards: the whole llite stats of scratch is left out */
    setup(&p);
    setv(get(&p.e, LC_JK_FS, 0), K_OPEN, 0, 1);
    setv(get(&p.e, LC_JK_FS, 0), K_READ_BYTES, 0, 100000);
    setv(get(&p.e, LC_JK_FS, 1), K_READ_BYTES, 0, 100000);
    CHECK_INT(run(&p), 0);
    CHECK_INT(reason(&p.res, LC_JS_LLITE_STATS, 0), LC_JR_CLEARED);
    CHECK_U64(delta(&p.e, &p.res, K_READ_BYTES, 0, 0), 0);
    CHECK_INT(reason(&p.res, LC_JS_LLITE_STATS, 1), 0);
    CHECK_U64(delta(&p.e, &p.res, K_READ_BYTES, 1, 0), 100000 - 100 - K_READ_BYTES);
    CHECK_INT(reason(&p.res, LC_JS_LLITE_RA, 0), 0);	/* other sources still count */
    CHECK_INT(p.res.nleft, 1);
    done(&p);

    /* start time moved by more than 1 ms: cleared though every counter grew */
    setup(&p);
    get(&p.e, LC_JK_OSC, 10)->start[0] += 0.0015;
    setv(get(&p.e, LC_JK_OSC, 10), K_OSC_RB, 0, 100000);
    get(&p.e, LC_JK_OSC, 11)->start[0] += 0.0009;	/* within the tolerance */
    setv(get(&p.e, LC_JK_OSC, 11), K_OSC_RB, 0, 100000);
    get(&p.e, LC_JK_FS, 0)->start[0] += 30;
    CHECK_INT(run(&p), 0);
    CHECK_INT(reason(&p.res, LC_JS_OSC_STATS, 10), LC_JR_CLEARED);
    CHECK_U64(delta(&p.e, &p.res, K_OSC_RB, 10, 0), 0);
    CHECK_INT(counted(&p.e, &p.res, K_OSC_RB, 10, 0), 0);
    CHECK_INT(counted(&p.e, &p.res, K_READ_BYTES, 0, 0), 0);	/* the fs's llite stats: cleared */
    CHECK_INT(reason(&p.res, LC_JS_OSC_STATS, 11), 0);
    CHECK_U64(delta(&p.e, &p.res, K_OSC_RB, 11, 0), 100000 - 100 - K_OSC_RB);
    CHECK_INT(reason(&p.res, LC_JS_OSC_IMPORT, 10), 0);	/* import has no start time */
    CHECK_INT(reason(&p.res, LC_JS_LLITE_STATS, 0), LC_JR_CLEARED);
    CHECK_INT(reason(&p.res, LC_JS_OSC_RPC, 0), 0);
    CHECK_INT(p.res.nleft, 2);
    done(&p);

    /* a start time of 0 (2.15.0 bug) or missing at one end is not compared */
    setup(&p);
    get(&p.b, LC_JK_OSC, 10)->start[0] = 0;
    get(&p.e, LC_JK_OSC, 11)->start_ok[0] = 0;
    CHECK_INT(run(&p), 0);
    CHECK_INT(p.res.nleft, 0);
    done(&p);

    /* the fs histogram: one OSC's rpc_stats start moved clears its fs, not the other */
    setup(&p);
    get(&p.e, LC_JK_OSC, 11)->start[1] += 5;
    setv(get(&p.e, LC_JK_FS, 0), K_RPC_READ, 0, 1000);
    setv(get(&p.e, LC_JK_FS, 1), K_RPC_READ, 0, 1000);
    CHECK_INT(run(&p), 0);
    CHECK_INT(reason(&p.res, LC_JS_OSC_RPC, 0), LC_JR_CLEARED);
    CHECK_U64(delta(&p.e, &p.res, K_RPC_READ, 0, 0), 0);
    CHECK_INT(reason(&p.res, LC_JS_OSC_RPC, 1), 0);
    CHECK_U64(delta(&p.e, &p.res, K_RPC_READ, 1, 0), 1000 - 100 - K_RPC_READ);
    CHECK_INT(reason(&p.res, LC_JS_OSC_STATS, 11), 0);	/* its stats file is another source */
    CHECK_INT(p.res.nleft, 1);
    done(&p);

    /* one bucket of the fs histogram went backwards */
    setup(&p);
    setv(get(&p.e, LC_JK_FS, 1), K_RPC_WRITE, 5, 3);
    CHECK_INT(run(&p), 0);
    CHECK_INT(reason(&p.res, LC_JS_OSC_RPC, 1), LC_JR_CLEARED);
    done(&p);
}

static void
test_replaced_remounted(void)
{
    struct pair p;

    /* replaced: the OSC's device directory changed */
    setup(&p);
    free(get(&p.e, LC_JK_OSC, 11)->id);
    get(&p.e, LC_JK_OSC, 11)->id = strdup("scratch-OST0001-osc-ffffC");
    setv(get(&p.e, LC_JK_OSC, 11), K_OSC_RB, 0, 100000);
    CHECK_INT(run(&p), 0);
    CHECK_INT(reason(&p.res, LC_JS_OSC_STATS, 11), LC_JR_REPLACED);
    CHECK_INT(reason(&p.res, LC_JS_OSC_IMPORT, 11), LC_JR_REPLACED);
    CHECK_INT(reason(&p.res, LC_JS_OSC_RPC, 0), LC_JR_REPLACED);	/* the histogram summing it */
    CHECK_U64(delta(&p.e, &p.res, K_OSC_RB, 11, 0), 0);
    CHECK_INT(p.res.nleft, 3);
    done(&p);

    /* remount of scratch: every source of every device of scratch, nothing of proj */
    setup(&p);
    free(get(&p.e, LC_JK_FS, 0)->id);
    get(&p.e, LC_JK_FS, 0)->id = strdup("ffffD");
    setv(get(&p.e, LC_JK_FS, 0), K_READ_BYTES, 0, 1);	/* backwards too: remount wins */
    setv(get(&p.e, LC_JK_OSC, 10), K_OSC_RB, 0, 100000);
    setv(get(&p.e, LC_JK_FS, 1), K_READ_BYTES, 0, 100000);
    CHECK_INT(run(&p), 0);
    CHECK_INT(reason(&p.res, LC_JS_LLITE_STATS, 0), LC_JR_REMOUNTED);
    CHECK_INT(reason(&p.res, LC_JS_LLITE_RA, 0), LC_JR_REMOUNTED);
    CHECK_INT(reason(&p.res, LC_JS_OSC_RPC, 0), LC_JR_REMOUNTED);
    CHECK_INT(reason(&p.res, LC_JS_OSC_STATS, 10), LC_JR_REMOUNTED);
    CHECK_INT(reason(&p.res, LC_JS_OSC_STATS, 11), LC_JR_REMOUNTED);
    CHECK_INT(reason(&p.res, LC_JS_OSC_IMPORT, 10), LC_JR_REMOUNTED);
    CHECK_INT(reason(&p.res, LC_JS_OSC_IMPORT, 11), LC_JR_REMOUNTED);
    CHECK_INT(reason(&p.res, LC_JS_MDC_IMPORT, 20), LC_JR_REMOUNTED);
    CHECK_U64(delta(&p.e, &p.res, K_OSC_RB, 10, 0), 0);
    CHECK_INT(reason(&p.res, LC_JS_OSC_STATS, 12), 0);
    CHECK_U64(delta(&p.e, &p.res, K_READ_BYTES, 1, 0), 100000 - 100 - K_READ_BYTES);
    CHECK_INT(p.res.nleft, 8);
    done(&p);

    /* unmounted: scratch has no mount now (its devices linger, unread) */
    setup(&p);
    get(&p.e, LC_JK_FS, 0)->listed = 0;
    unset(get(&p.e, LC_JK_FS, 0), LC_JS_LLITE_STATS);
    CHECK_INT(run(&p), 0);
    CHECK_INT(reason(&p.res, LC_JS_LLITE_STATS, 0), LC_JR_REMOUNTED);
    CHECK_INT(reason(&p.res, LC_JS_OSC_RPC, 0), LC_JR_REMOUNTED);
    CHECK_INT(reason(&p.res, LC_JS_OSC_STATS, 12), 0);
    done(&p);
}

static void
test_not_read(void)
{
    struct pair p;
    struct lc_jobdev *d;

    /* listed at begin, its stats not read then, read now -> 4 */
    setup(&p);
    unset(get(&p.b, LC_JK_OSC, 10), LC_JS_OSC_STATS);
    CHECK_INT(run(&p), 0);
    CHECK_INT(reason(&p.res, LC_JS_OSC_STATS, 10), LC_JR_NOT_READ_AT_BEGIN);
    CHECK_U64(delta(&p.e, &p.res, K_OSC_RB, 10, 0), 0);
    CHECK_INT(reason(&p.res, LC_JS_OSC_IMPORT, 10), 0);
    CHECK_INT(p.res.nleft, 1);
    done(&p);

    /* one value (latency) missing at begin while its file was read: 4 as well */
    setup(&p);
    get(&p.b, LC_JK_FS, 0)->pres[lc_job_off(K_LAT_READ)] = 0;
    CHECK_INT(run(&p), 0);
    CHECK_INT(reason(&p.res, LC_JS_LLITE_STATS, 0), LC_JR_NOT_READ_AT_BEGIN);
    done(&p);

    /* ... and missing at both ends while the file was read: no value, counted */
    setup(&p);
    get(&p.b, LC_JK_FS, 0)->pres[lc_job_off(K_LAT_READ)] = 0;
    get(&p.e, LC_JK_FS, 0)->pres[lc_job_off(K_LAT_READ)] = 0;
    setv(get(&p.e, LC_JK_FS, 0), K_OPEN, 0, 1000);
    CHECK_INT(run(&p), 0);
    CHECK_INT(p.res.nleft, 0);
    CHECK_U64(delta(&p.e, &p.res, K_OPEN, 0, 0), 1000 - 100 - K_OPEN);
    CHECK_INT(counted(&p.e, &p.res, K_LAT_READ, 0, 0), 0);   /* no value at either end: not sent */
    CHECK_INT(counted(&p.e, &p.res, K_OPEN, 0, 0), 1);
    done(&p);

    /* read at begin, not now (still listed) -> 5 */
    setup(&p);
    unset(get(&p.e, LC_JK_FS, 1), LC_JS_LLITE_RA);
    unset(get(&p.e, LC_JK_MDC, 20), LC_JS_MDC_IMPORT);
    CHECK_INT(run(&p), 0);
    CHECK_INT(reason(&p.res, LC_JS_LLITE_RA, 1), LC_JR_NOT_READ_AT_END);
    CHECK_INT(reason(&p.res, LC_JS_MDC_IMPORT, 20), LC_JR_NOT_READ_AT_END);
    CHECK_INT(p.res.nleft, 2);
    done(&p);

    /* the fs histogram is all or nothing: not read now -> 5 on the fs */
    setup(&p);
    unset(get(&p.e, LC_JK_FS, 0), LC_JS_OSC_RPC);
    CHECK_INT(run(&p), 0);
    CHECK_INT(reason(&p.res, LC_JS_OSC_RPC, 0), LC_JR_NOT_READ_AT_END);
    done(&p);

    /* gone: read at begin, no longer listed -> 6 on both of its sources */
    memset(&p, 0, sizeof(p));
    client(&p.b, 100);
    client(&p.e, 100);
    get(&p.e, LC_JK_OSC, 11)->inst = 99;	/* OSC 11 is not there now ... */
    d = dev(&p.e, LC_JK_OSC, 13, 0, "scratch-OST0002-osc-ffffA");	/* ... a new one is */
    setv(d, K_OSC_RB, 0, 42);
    setv(d, K_OSC_RC, 0, 0);
    CHECK_INT(run(&p), 0);
    CHECK_INT(reason(&p.res, LC_JS_OSC_STATS, 11), LC_JR_GONE);
    CHECK_INT(reason(&p.res, LC_JS_OSC_IMPORT, 11), LC_JR_GONE);
    /* a device new during the job counts from zero */
    CHECK_INT(reason(&p.res, LC_JS_OSC_STATS, 13), 0);
    CHECK_U64(delta(&p.e, &p.res, K_OSC_RB, 13, 0), 42);
    CHECK_U64(delta(&p.e, &p.res, K_OSC_WB, 13, 0), 0);
    /* OSC 99 was not known at begin: counts from zero too (its values all) */
    CHECK_U64(delta(&p.e, &p.res, K_OSC_RB, 99, 0), 100 + K_OSC_RB);
    done(&p);

    /* listed at both ends, read at neither: 7 for a required source only */
    setup(&p);
    unset(get(&p.b, LC_JK_OSC, 12), LC_JS_OSC_STATS);
    unset(get(&p.e, LC_JK_OSC, 12), LC_JS_OSC_STATS);
    unset(get(&p.b, LC_JK_OSC, 12), LC_JS_OSC_IMPORT);
    unset(get(&p.e, LC_JK_OSC, 12), LC_JS_OSC_IMPORT);
    unset(get(&p.b, LC_JK_FS, 1), LC_JS_LLITE_RA);
    unset(get(&p.e, LC_JK_FS, 1), LC_JS_LLITE_RA);
    unset(get(&p.b, LC_JK_FS, 1), LC_JS_LLITE_STATS);
    unset(get(&p.e, LC_JK_FS, 1), LC_JS_LLITE_STATS);
    CHECK_INT(run(&p), 0);
    CHECK_INT(reason(&p.res, LC_JS_OSC_STATS, 12), LC_JR_NOT_READ);
    CHECK_INT(reason(&p.res, LC_JS_OSC_IMPORT, 12), 0);
    CHECK_INT(reason(&p.res, LC_JS_LLITE_STATS, 1), LC_JR_NOT_READ);
    CHECK_INT(reason(&p.res, LC_JS_LLITE_RA, 1), 0);
    CHECK_INT(p.res.nleft, 2);
    done(&p);

    /* no device of a kind listed at one end: known falls back to read */
    memset(&p, 0, sizeof(p));
    client(&p.b, 100);
    fs_dev(&p.e, "scratch", "ffffA", 0);
    fs_dev(&p.e, "proj", "ffffB", 1);
    CHECK_INT(run(&p), 0);
    CHECK_INT(reason(&p.res, LC_JS_MDC_IMPORT, 20), LC_JR_GONE);
    CHECK_INT(reason(&p.res, LC_JS_LLITE_STATS, 0), LC_JR_NOT_READ_AT_END);
    CHECK_INT(reason(&p.res, LC_JS_OSC_STATS, 10), LC_JR_GONE);
    done(&p);
}

/*
 * Rules diff.py has that the agent lacked, found by the differential test
 * (tests/report/test_diff_differential.py): each was a device's values left
 * out, or a histogram counted short, without a word.
 */
static void
test_as_diff_py(void)
{
    struct pair p;
    struct lc_jobdev *d;

    /* listed at begin, its osc stats (a file every layout has) not read then, gone now:
     * 6, as its import (read then) */
    setup(&p);
    unset(get(&p.b, LC_JK_OSC, 11), LC_JS_OSC_STATS);
    get(&p.e, LC_JK_OSC, 11)->inst = 99;
    CHECK_INT(run(&p), 0);
    CHECK_INT(reason(&p.res, LC_JS_OSC_STATS, 11), LC_JR_GONE);
    CHECK_INT(reason(&p.res, LC_JS_OSC_IMPORT, 11), LC_JR_GONE);
    done(&p);

    /* new during the job, its osc stats not read now: 5 (its I/O is not known) */
    setup(&p);
    d = dev(&p.e, LC_JK_OSC, 13, 0, "scratch-OST0002-osc-ffffA");
    fill(d, LC_JS_OSC_IMPORT, 7);
    CHECK_INT(run(&p), 0);
    CHECK_INT(reason(&p.res, LC_JS_OSC_STATS, 13), LC_JR_NOT_READ_AT_END);
    CHECK_INT(reason(&p.res, LC_JS_OSC_IMPORT, 13), 0);
    CHECK_U64(delta(&p.e, &p.res, K_OSC_RC, 13, 0), 7 + K_OSC_RC);
    done(&p);

    /* the fs histogram sums its OSCs': one of scratch's gone now -> 6 on scratch's, not
     * proj's; and one replaced -> 2 */
    setup(&p);
    get(&p.e, LC_JK_OSC, 11)->inst = 99;
    CHECK_INT(run(&p), 0);
    CHECK_INT(reason(&p.res, LC_JS_OSC_RPC, 0), LC_JR_GONE);
    CHECK_INT(counted(&p.e, &p.res, K_RPC_READ, 0, 0), 0);
    CHECK_INT(reason(&p.res, LC_JS_OSC_RPC, 1), 0);
    done(&p);
    setup(&p);
    free(get(&p.e, LC_JK_OSC, 12)->id);
    get(&p.e, LC_JK_OSC, 12)->id = strdup("proj-OST0000-osc-ffffC");
    CHECK_INT(run(&p), 0);
    CHECK_INT(reason(&p.res, LC_JS_OSC_RPC, 1), LC_JR_REPLACED);
    CHECK_INT(reason(&p.res, LC_JS_OSC_RPC, 0), 0);
    done(&p);

}

/*
 * A file not every layout has, read at neither end (1.8 has no import files),
 * is not judged: nothing of it to count, nothing said, remounted or replaced
 * (as in diff.py, which would otherwise need to know whether another host had
 * the file).
 */
static void
test_not_judged(void)
{
    struct pair p;

    setup(&p);
    for (int inst = 10; inst <= 12; inst++) {
	unset(get(&p.b, LC_JK_OSC, inst), LC_JS_OSC_IMPORT);
	unset(get(&p.e, LC_JK_OSC, inst), LC_JS_OSC_IMPORT);
    }
    unset(get(&p.b, LC_JK_MDC, 20), LC_JS_MDC_IMPORT);
    unset(get(&p.e, LC_JK_MDC, 20), LC_JS_MDC_IMPORT);
    free(get(&p.e, LC_JK_FS, 0)->id);
    get(&p.e, LC_JK_FS, 0)->id = strdup("ffffD");	/* scratch remounted */
    free(get(&p.e, LC_JK_OSC, 12)->id);
    get(&p.e, LC_JK_OSC, 12)->id = strdup("proj-OST0000-osc-ffffC");	/* proj's OSC replaced */
    CHECK_INT(run(&p), 0);
    CHECK_INT(reason(&p.res, LC_JS_OSC_STATS, 10), LC_JR_REMOUNTED);
    CHECK_INT(reason(&p.res, LC_JS_OSC_IMPORT, 10), 0);
    CHECK_INT(reason(&p.res, LC_JS_MDC_IMPORT, 20), 0);
    CHECK_INT(reason(&p.res, LC_JS_OSC_STATS, 12), LC_JR_REPLACED);
    CHECK_INT(reason(&p.res, LC_JS_OSC_IMPORT, 12), 0);
    done(&p);
}

/* what lc_job_answer serves, collected */
struct served {
    int		n;
    int		inst[256];
    uint64_t	v[256];
    int		fail_at;	/* fn fails on this value (-1: never) */
};

static int
collect(void *arg, int inst, uint64_t v)
{
    struct served *s = arg;

    if (s->n == s->fail_at)
	return -7;
    if (s->n < 256) {
	s->inst[s->n] = inst;
	s->v[s->n] = v;
    }
    s->n++;
    return 0;
}

static struct served
serve(const struct pair *p, unsigned item)
{
    struct served s;

    memset(&s, 0, sizeof(s));
    s.fail_at = -1;
    CHECK_INT(lc_job_answer(&p->e, &p->res, item, collect, &s), 0);
    CHECK((size_t)s.n <= lc_job_answer_max(&p->e, &p->res, item));
    return s;
}

/* the value served for inst, or 0xdead if none */
static uint64_t
served_at(const struct served *s, int inst)
{
    for (int i = 0; i < s->n && i < 256; i++)
	if (s->inst[i] == inst)
	    return s->v[i];
    return 0xdead;
}

static void
test_answer(void)
{
    struct pair p;
    struct served s;

    setup(&p);
    setv(get(&p.e, LC_JK_OSC, 11), K_OSC_RB, 0, 100 + K_OSC_RB + 5);
    setv(get(&p.e, LC_JK_FS, 0), K_RPC_READ, 2, 100 + K_RPC_READ + 2 + 9);
    setv(get(&p.e, LC_JK_OSC, 10), K_OSC_WB, 0, 1);		/* went back: left out */
    get(&p.e, LC_JK_FS, 1)->pres[lc_job_off(K_LAT_READ)] = 0;	/* not given now: left out */
    get(&p.e, LC_JK_FS, 1)->inst = -1;				/* an fs outside the FS indom */
    CHECK_INT(run(&p), 0);

    /* OSC deltas: only those not zero, of devices counted */
    s = serve(&p, K_OSC_RB);
    CHECK_INT(s.n, 1);
    CHECK_U64(served_at(&s, 11), 5);
    s = serve(&p, K_OSC_WB);
    CHECK_INT(s.n, 0);
    /* a filesystem's zeros are sent; an fs without an instance is not */
    s = serve(&p, K_OPEN);
    CHECK_INT(s.n, 1);
    CHECK_U64(served_at(&s, 0), 0);
    /* buckets under their own instances (fs 1's too: its histogram counts), zeros too */
    s = serve(&p, K_RPC_READ);
    CHECK_INT(s.n, 2 * RPC_HIST_MAX);
    CHECK_U64(served_at(&s, 2), 9);
    CHECK_U64(served_at(&s, 3), 0);
    CHECK_U64(served_at(&s, 102), 0);
    /* left_out.<source>: the reason per device, u32 values of the sources' own items */
    s = serve(&p, LC_JOB_LEFT_OUT_ITEM + LC_JS_OSC_STATS);
    CHECK_INT(s.n, 1);
    CHECK_U64(served_at(&s, 10), LC_JR_CLEARED);
    s = serve(&p, LC_JOB_LEFT_OUT_ITEM + LC_JS_LLITE_STATS);
    CHECK_INT(s.n, 0);		/* fs 1 left out, but it has no instance to name */
    s = serve(&p, LC_JOB_LEFT_OUT_ITEM + LC_JS_MDC_IMPORT);
    CHECK_INT(s.n, 0);
    /* not an item of a slot */
    CHECK_INT(lc_job_answer(&p.e, &p.res, LC_JOB_NMETRICS, collect, &s), -1);
    CHECK_INT(lc_job_answer(&p.e, &p.res, LC_JOB_LEFT_OUT_ITEM + LC_JOB_NSOURCES, collect, &s), -1);
    CHECK_INT(lc_job_answer_max(&p.e, &p.res, LC_JOB_NMETRICS), 0);
    /* the callback's failure stops the answer and is returned */
    memset(&s, 0, sizeof(s));
    s.fail_at = 3;
    CHECK_INT(lc_job_answer(&p.e, &p.res, K_RPC_READ, collect, &s), -7);
    CHECK_INT(s.n, 3);
    done(&p);
}

static void
test_slots(void)
{
    struct lc_jobslot slots[LC_JOB_SLOTS];
    char	id[16];
    int		s, ev, i;

    memset(slots, 0, sizeof(slots));
    for (i = 0; i < LC_JOB_SLOTS; i++) {
	snprintf(id, sizeof(id), "%d", 1000 + i);
	s = lc_job_pick(slots, id, &ev);
	CHECK_INT(s, i);
	CHECK_INT(ev, 0);
	slots[s].used = 1;
	strcpy(slots[s].id, id);
	/* slot 5 began first */
	slots[s].begin_time = i == 5 ? 100.0 : 200.0 + i;
    }
    /* the 9th job evicts the oldest begin */
    s = lc_job_pick(slots, "9999", &ev);
    CHECK_INT(s, 5);
    CHECK_INT(ev, 1);
    CHECK_STR(slots[s].id, "1005");
    strcpy(slots[s].id, "9999");
    slots[s].begin_time = 300.0;
    /* the same id again: its own slot, taken again, nothing evicted */
    s = lc_job_pick(slots, "1003", &ev);
    CHECK_INT(s, 3);
    CHECK_INT(ev, 0);
    s = lc_job_pick(slots, "9999", &ev);
    CHECK_INT(s, 5);
    CHECK_INT(ev, 0);
    CHECK_INT(lc_job_find(slots, "1005"), -1);
    CHECK_INT(lc_job_find(slots, "1007"), 7);
    /* next eviction: slot 0 (200.0) */
    s = lc_job_pick(slots, "x", &ev);
    CHECK_INT(s, 0);
    CHECK_INT(ev, 1);
    /* a freed slot is reused before any eviction */
    slots[6].used = 0;
    s = lc_job_pick(slots, "y", &ev);
    CHECK_INT(s, 6);
    CHECK_INT(ev, 0);

    CHECK(lc_job_id_ok("1234"));
    CHECK(lc_job_id_ok("1234_7"));
    CHECK(lc_job_id_ok("1234+1"));
    CHECK(lc_job_id_ok("1234.server"));
    CHECK(lc_job_id_ok("a:b-c"));
    CHECK(lc_job_id_ok("123456789012345678901234567890123456789012345678901234567890123"));
    CHECK(!lc_job_id_ok("1234567890123456789012345678901234567890123456789012345678901234"));
    CHECK(!lc_job_id_ok(""));
    CHECK(!lc_job_id_ok("12 34"));
    CHECK(!lc_job_id_ok("12/34"));
    CHECK(!lc_job_id_ok("12\n"));
    CHECK(!lc_job_id_ok(NULL));

    CHECK_U64(lc_job_start_us(-1), 0);
    CHECK_U64(lc_job_start_us(1700000000.25), 1700000000250000ull);
}

/*
 * A slot names the job whose values it serves (its job_id item): the job
 * that took it last; a job evicted from it or ended is named by no slot.
 */
static void
test_slot_ids(void)
{
    struct lc_jobslot slots[LC_JOB_SLOTS];
    struct lc_jobrec r;
    char	id[16], evicted[LC_JOB_ID_MAX + 1];
    int		s, ev, i;

    memset(slots, 0, sizeof(slots));
    for (i = 0; i < LC_JOB_SLOTS; i++) {
	snprintf(id, sizeof(id), "%d", 1000 + i);
	memset(&r, 0, sizeof(r));
	fs_dev(&r, "scratch", "A", 0);
	s = lc_job_begin(slots, id, 100.0 + i, &r, evicted);
	CHECK_INT(s, i);
	CHECK_STR(evicted, "");
	CHECK_INT(r.n[LC_JK_FS], 0);			/* moved into the slot */
	CHECK_INT(slots[s].rec.n[LC_JK_FS], 1);
	CHECK_STR(lc_job_slot_id(&slots[s]), id);
    }
    /* a 9th job takes the oldest's slot (0): the slot names it, no slot the old job */
    memset(&r, 0, sizeof(r));
    s = lc_job_begin(slots, "9999", 200.0, &r, evicted);
    CHECK_INT(s, 0);
    CHECK_STR(evicted, "1000");
    CHECK_STR(lc_job_slot_id(&slots[0]), "9999");
    CHECK_INT(slots[0].rec.n[LC_JK_FS], 0);		/* the 9th job's values, not the evicted one's */
    CHECK_INT(lc_job_find(slots, "1000"), -1);
    for (i = 1; i < LC_JOB_SLOTS; i++) {
	snprintf(id, sizeof(id), "%d", 1000 + i);
	CHECK_STR(lc_job_slot_id(&slots[i]), id);
    }
    /* the same id again: its own slot, nothing evicted */
    memset(&r, 0, sizeof(r));
    CHECK_INT(lc_job_begin(slots, "1004", 210.0, &r, evicted), 4);
    CHECK_STR(evicted, "");
    /* the longest id fits whole (slot 1 now the oldest) */
    memset(&r, 0, sizeof(r));
    s = lc_job_begin(slots, "123456789012345678901234567890123456789012345678901234567890123", 300.0, &r, evicted);
    CHECK_INT(s, 1);
    CHECK_STR(evicted, "1001");
    CHECK_STR(lc_job_slot_id(&slots[1]), "123456789012345678901234567890123456789012345678901234567890123");
    /* a job ended: its slot names none, and is the first free one; an unknown id ends none */
    CHECK_INT(lc_job_end(slots, "1003"), 3);
    CHECK(lc_job_slot_id(&slots[3]) == NULL);
    CHECK_INT(slots[3].rec.n[LC_JK_FS], 0);
    CHECK_INT(lc_job_find(slots, "1003"), -1);
    CHECK_INT(lc_job_end(slots, "1003"), -1);
    CHECK_INT(lc_job_pick(slots, "7", &ev), 3);
    CHECK_INT(ev, 0);
    for (i = 0; i < LC_JOB_SLOTS; i++)
	if (slots[i].used)
	    CHECK_INT(lc_job_end(slots, slots[i].id), i);
    for (i = 0; i < LC_JOB_SLOTS; i++)
	CHECK(lc_job_slot_id(&slots[i]) == NULL);

    /* the slot items: deltas, left_out, job_id, and none between (the room each table grows in) */
    CHECK_INT(lc_job_item(0), LC_JI_DELTA);
    CHECK_INT(lc_job_item(LC_JOB_NMETRICS - 1), LC_JI_DELTA);
    for (i = LC_JOB_NMETRICS; i < LC_JOB_LEFT_OUT_ITEM; i++)
	CHECK_INT(lc_job_item((unsigned)i), LC_JI_NONE);
    CHECK_INT(lc_job_item(LC_JOB_LEFT_OUT_ITEM), LC_JI_LEFT_OUT);
    CHECK_INT(lc_job_item(LC_JOB_LEFT_OUT_ITEM + LC_JOB_NSOURCES - 1), LC_JI_LEFT_OUT);
    for (i = LC_JOB_LEFT_OUT_ITEM + LC_JOB_NSOURCES; i < LC_JOB_ID_ITEM; i++)
	CHECK_INT(lc_job_item((unsigned)i), LC_JI_NONE);
    CHECK_INT(lc_job_item(63), LC_JI_JOB_ID);
    CHECK_INT(lc_job_item(64), LC_JI_NONE);
}

static void
test_table(void)
{
    unsigned	k;

    /* the contract: 52 metrics, fs.rpc at 42/43, reconnects last */
    CHECK_STR(lc_job_metrics[0].path, "llite.read_bytes");
    CHECK_STR(lc_job_metrics[28].path, "llite.fallocate");
    CHECK_STR(lc_job_metrics[29].path, "llite.latency.read");
    CHECK_STR(lc_job_metrics[35].path, "llite.hybrid.read_bytes");
    CHECK_STR(lc_job_metrics[42].path, "fs.rpc.read");
    CHECK_STR(lc_job_metrics[50].path, "osc.reconnects");
    CHECK_STR(lc_job_metrics[51].path, "mdc.reconnects");
    CHECK_STR(lc_job_sources[2].name, "osc_rpc_stats");
    for (k = 0; k < LC_JOB_NMETRICS; k++)
	CHECK(lc_job_off(k) + lc_job_nval(k) <= lc_job_kind_nval(lc_job_kind(k)));
    CHECK_INT(lc_job_kind_nval(LC_JK_OSC), 7);
    CHECK_INT(lc_job_kind_nval(LC_JK_MDC), 1);
}

/*
 * The series table: bytes and calls, the 25 metadata operations, the RPC
 * histograms, then the calls' latency sums (appended: a point's values
 * before them keep their places).  Its values as a point lays them out.
 */
static void
test_series_table(void)
{
    static const char *tail[] = { "llite.fallocate", "fs.rpc.read", "fs.rpc.write",
				  "llite.latency.read", "llite.latency.write" };
    unsigned	j, n = 0;

    for (j = 0; j < LC_JOB_NSERIES; j++) {
	CHECK_INT(lc_job_kind(lc_job_series[j]), LC_JK_FS);
	n += lc_job_nval(lc_job_series[j]);
    }
    CHECK_INT(lc_job_series_nval(), n);
    CHECK_INT(n, 4 + 25 + 2 * RPC_HIST_MAX + 2);
    for (j = 0; j < 5; j++)
	CHECK_STR(lc_job_metrics[lc_job_series[LC_JOB_NSERIES - 5 + j]].path, tail[j]);
    CHECK_INT(lc_job_series[LC_JOB_NSERIES - 2], K_LAT_READ);
}

/*
 * The tables a series of nvalues values a point can be of: the first m
 * metrics of this one (an agent's before the table grew), m the count;
 * values that end no metric of the table are of none (0).
 */
static void
test_series_prefixes(void)
{
    unsigned	j, n = 0, of = 0;

    for (j = 0; j < LC_JOB_NSERIES; j++) {
	for (unsigned between = n + 1; between < n + lc_job_nval(lc_job_series[j]); between++)
	    of |= lc_job_series_metrics_of(between);
	n += lc_job_nval(lc_job_series[j]);
	CHECK_INT(lc_job_series_metrics_of(n), j + 1);
    }
    CHECK_INT(of, 0);				/* inside a histogram's buckets */
    CHECK_INT(lc_job_series_metrics_of(0), 0);
    CHECK_INT(lc_job_series_metrics_of(n + 1), 0);	/* a newer agent's table */
    CHECK_INT(lc_job_series_metrics_of(n - 2), LC_JOB_NSERIES - 2);	/* before the latencies */
}

/* a filesystem's values of the series table: the counted deltas, 0 where left out */
static void
test_series_values(void)
{
    struct pair	p;
    uint64_t	v[4 + 25 + 2 * RPC_HIST_MAX + 2];
    unsigned	j, n = 0, rpc_write = 0, lat_read = 0;

    for (j = 0; j < LC_JOB_NSERIES; j++) {
	if (lc_job_series[j] == K_RPC_WRITE)
	    rpc_write = n;
	if (lc_job_series[j] == K_LAT_READ)
	    lat_read = n;
	n += lc_job_nval(lc_job_series[j]);
    }

    setup(&p);
    setv(get(&p.e, LC_JK_FS, 0), K_OPEN, 0, 1);		/* went back: scratch's llite stats cleared */
    setv(get(&p.e, LC_JK_FS, 0), K_RPC_WRITE, 3, 100 + K_RPC_WRITE + 3 + 7);
    setv(get(&p.e, LC_JK_FS, 1), K_READ_BYTES, 0, 100 + K_READ_BYTES + 150);
    setv(get(&p.e, LC_JK_FS, 1), K_LAT_READ, 0, 100 + K_LAT_READ + 9000);
    CHECK_INT(run(&p), 0);
    lc_job_series_values(&p.e, &p.res, 0, v);
    CHECK_U64(v[0], 0);					/* read_bytes: left out */
    CHECK_U64(v[4], 0);					/* open: left out, not 1 - 104 */
    CHECK_U64(v[lat_read], 0);				/* latency.read: left out with them */
    CHECK_U64(v[rpc_write + 3], 7);			/* the histogram still counts */
    lc_job_series_values(&p.e, &p.res, 1, v);
    CHECK_U64(v[0], 150);
    CHECK_U64(v[lat_read], 9000);
    CHECK_U64(v[rpc_write + 3], 0);
    done(&p);
}

/*
 * A reset seen by other means than the values (a restarted agent's
 * timeline, jobs.c): that source of that device is CLEARED though its
 * values grew, the device's other sources and the other devices counted.
 */
static void
test_reset_seen(void)
{
    struct pair p;

    setup(&p);
    setv(get(&p.e, LC_JK_FS, 0), K_READ_BYTES, 0, 100 + K_READ_BYTES + 150);
    get(&p.b, LC_JK_FS, 0)->reset_seen = 1u << LC_JS_LLITE_STATS;
    CHECK_INT(run(&p), 0);
    CHECK_U64(reason(&p.res, LC_JS_LLITE_STATS, 0), LC_JR_CLEARED);
    CHECK_INT(counted(&p.e, &p.res, K_READ_BYTES, 0, 0), 0);
    CHECK_U64(reason(&p.res, LC_JS_OSC_RPC, 0), 0);
    CHECK_INT(counted(&p.e, &p.res, K_RPC_READ, 0, 0), 1);
    CHECK_U64(reason(&p.res, LC_JS_LLITE_STATS, 1), 0);
    CHECK_INT(counted(&p.e, &p.res, K_READ_BYTES, 1, 0), 1);
    done(&p);
}

void
test_jobs(void)
{
    test_table();
    test_series_table();
    test_series_prefixes();
    test_series_values();
    test_growth();
    test_cleared();
    test_reset_seen();
    test_replaced_remounted();
    test_not_read();
    test_as_diff_py();
    test_not_judged();
    test_answer();
    test_slots();
    test_slot_ids();
}
