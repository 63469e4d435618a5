/*
 * The job view's pure rules (src/jobdiff.c) behind a flat API for ctypes:
 * tests/report/test_diff_differential.py builds each host's begin and now
 * records from random snapshots, diffs them with lc_job_diff and reads back
 * the deltas, the left-out list and what the slot would serve
 * (lc_job_answer), to hold them against the reporter's diff.py; and the
 * slot table (lc_job_begin, lc_job_end) for tests/report/test_jobview_slots.py.
 *
 * Test-only: built as tests/out/libjobdiff.so by "make test" (target
 * harness), never linked into the agent.  Every call is checked by the
 * caller; nothing here prints or exits.
 */
#include <stdlib.h>
#include <string.h>
#include "jobs.h"

/* ---- the metric table, as the Python side reads it ------------------------ */

const char *
jd_metric_path(unsigned k)
{
    return k < LC_JOB_NMETRICS ? lc_job_metrics[k].path : NULL;
}

unsigned
jd_metric_src(unsigned k)
{
    return lc_job_metrics[k].src;
}

const char *
jd_source_name(unsigned src)
{
    return src < LC_JOB_NSOURCES ? lc_job_sources[src].name : NULL;
}

unsigned
jd_source_kind(unsigned src)
{
    return lc_job_sources[src].kind;
}

/* the values of an fs histogram (its buckets) */
unsigned
jd_hist_max(void)
{
    return RPC_HIST_MAX;
}

/* ---- records ---------------------------------------------------------------- */

struct lc_jobrec *
jd_rec_new(void)
{
    return calloc(1, sizeof(struct lc_jobrec));
}

void
jd_rec_free(struct lc_jobrec *r)
{
    if (r == NULL)
	return;
    lc_jobrec_clear(r);
    free(r);
}

/*
 * n devices of this kind, whole, device i's fields at [i] of each array:
 * inst, name (FS: the fs name; NULL for OSC/MDC, as the agent adds them),
 * id, listed, fs; val/pres lc_job_kind_nval(kind) each, start_ok/start 2
 * each, binst RPC_HIST_MAX each (FS only; NULL for OSC/MDC).  Returns 0, or
 * -1 when out of memory.
 */
int
jd_rec_add(struct lc_jobrec *r, unsigned kind, size_t n, const int *inst, char *const *name,
	   char *const *id, const int *listed, const int *fs, const uint64_t *val,
	   const uint8_t *pres, const int *start_ok, const double *start, const int *binst)
{
    unsigned	nv = lc_job_kind_nval(kind);

    for (size_t i = 0; i < n; i++) {
	struct lc_jobdev *d = lc_jobrec_add(r, kind, inst[i], name ? name[i] : NULL, id[i]);

	if (d == NULL)
	    return -1;
	d->listed = listed[i];
	d->fs = fs[i];
	memcpy(d->val, val + i * nv, nv * sizeof(*d->val));
	memcpy(d->pres, pres + i * nv, nv * sizeof(*d->pres));
	d->start_ok[0] = start_ok[2 * i];
	d->start_ok[1] = start_ok[2 * i + 1];
	d->start[0] = start[2 * i];
	d->start[1] = start[2 * i + 1];
	if (kind == LC_JK_FS && binst != NULL)
	    memcpy(d->binst, binst + i * RPC_HIST_MAX, RPC_HIST_MAX * sizeof(*d->binst));
    }
    return 0;
}

/* after every device is added: OSCs and MDCs in instance order, as the agent keeps them */
void
jd_rec_done(struct lc_jobrec *r)
{
    lc_jobrec_done(r);
}

size_t
jd_rec_n(const struct lc_jobrec *r, unsigned kind)
{
    return r->n[kind];
}

int
jd_rec_inst(const struct lc_jobrec *r, unsigned kind, size_t i)
{
    return r->dev[kind][i].inst;
}

/* ---- the diff ------------------------------------------------------------- */

/* the outcome of begin record b and now record e; NULL when out of memory */
struct lc_jobres *
jd_diff(const struct lc_jobrec *b, const struct lc_jobrec *e)
{
    struct lc_jobres	*res = calloc(1, sizeof(*res));

    if (res != NULL && lc_job_diff(b, e, res) < 0) {
	lc_jobres_free(res);
	free(res);
	return NULL;
    }
    return res;
}

void
jd_res_free(struct lc_jobres *res)
{
    if (res == NULL)
	return;
    lc_jobres_free(res);
    free(res);
}

/* res's deltas and whether each counts, e->n[kind] * lc_job_kind_nval(kind) of each */
const uint64_t *
jd_res_delta(const struct lc_jobres *res, unsigned kind)
{
    return res->delta[kind];
}

const uint8_t *
jd_res_counted(const struct lc_jobres *res, unsigned kind)
{
    return res->counted[kind];
}

size_t
jd_res_nleft(const struct lc_jobres *res)
{
    return res->nleft;
}

void
jd_res_left(const struct lc_jobres *res, size_t i, unsigned *src, int *inst, unsigned *reason)
{
    *src = res->left[i].src;
    *inst = res->left[i].inst;
    *reason = res->left[i].reason;
}

/* ---- what the slot serves ------------------------------------------------------ */

struct collected {
    int		*item, *inst;
    uint64_t	*value;
    size_t	n, cap;
    unsigned	now;		/* the item being answered */
};

static int
collect(void *arg, int inst, uint64_t value)
{
    struct collected *c = arg;

    if (c->n < c->cap) {
	c->item[c->n] = (int)c->now;
	c->inst[c->n] = inst;
	c->value[c->n] = value;
    }
    c->n++;
    return 0;
}

/* the slot's items: the job metrics' deltas, then left_out.<source> */
static unsigned
slot_item(unsigned i)
{
    return i < LC_JOB_NMETRICS ? i : LC_JOB_LEFT_OUT_ITEM + (i - LC_JOB_NMETRICS);
}

#define SLOT_ITEMS	(LC_JOB_NMETRICS + LC_JOB_NSOURCES)

/* room for every value of every slot item: the sum of their lc_job_answer_max */
size_t
jd_answer_cap(const struct lc_jobrec *e, const struct lc_jobres *res)
{
    size_t	cap = 0;

    for (unsigned i = 0; i < SLOT_ITEMS; i++)
	cap += lc_job_answer_max(e, res, slot_item(i));
    return cap;
}

/*
 * Every value the slot serves, item by item, into item[]/inst[]/value[] (cap
 * of each): returns their number; -1 when lc_job_answer refused an item of a
 * slot, -2 when an item served more than its lc_job_answer_max (the fetch
 * makes room for that many: the rest would be lost).
 */
long
jd_answer_all(const struct lc_jobrec *e, const struct lc_jobres *res, int *item, int *inst,
	      uint64_t *value, size_t cap)
{
    struct collected	c = { item, inst, value, 0, cap, 0 };

    for (unsigned i = 0; i < SLOT_ITEMS; i++) {
	size_t	before = c.n;

	c.now = slot_item(i);
	if (lc_job_answer(e, res, c.now, collect, &c) < 0)
	    return -1;
	if (c.n - before > lc_job_answer_max(e, res, c.now))
	    return -2;
    }
    return (long)c.n;
}

/* ---- the slots ---------------------------------------------------------------- */

/* an agent's slot table, as it starts (or restarts): no job in any slot */
struct lc_jobslot *
jd_slots_new(void)
{
    return calloc(LC_JOB_SLOTS, sizeof(struct lc_jobslot));
}

void
jd_slots_free(struct lc_jobslot *slots)
{
    if (slots == NULL)
	return;
    for (int s = 0; s < LC_JOB_SLOTS; s++)
	lc_jobrec_clear(&slots[s].rec);
    free(slots);
}

/*
 * job_begin of id at begin_time, as the agent takes it (lc_job_begin), with
 * begin values that say which begin took them: one filesystem named mark.
 * Returns the slot, -1 when out of memory.
 */
int
jd_slots_begin(struct lc_jobslot *slots, const char *id, double begin_time, const char *mark)
{
    struct lc_jobrec	r;
    char		evicted[LC_JOB_ID_MAX + 1];

    memset(&r, 0, sizeof(r));
    if (lc_jobrec_add(&r, LC_JK_FS, 0, mark, "") == NULL)
	return -1;
    return lc_job_begin(slots, id, begin_time, &r, evicted);
}

int
jd_slots_end(struct lc_jobslot *slots, const char *id)
{
    return lc_job_end(slots, id);
}

int
jd_slots_find(const struct lc_jobslot *slots, const char *id)
{
    return lc_job_find(slots, id);
}

/* the id slot s names (its job_id), NULL none */
const char *
jd_slot_id(const struct lc_jobslot *slots, int s)
{
    return lc_job_slot_id(&slots[s]);
}

/* the mark of the begin whose values slot s holds, NULL none */
const char *
jd_slot_values_of(const struct lc_jobslot *slots, int s)
{
    return slots[s].rec.n[LC_JK_FS] ? slots[s].rec.dev[LC_JK_FS][0].name : NULL;
}
