/*
 * The fetch path.  pmdaFetch() calls back once per value and looks each
 * instance up in the pmdaCache; with 2,048 OSCs a full fetch is over
 * 100,000 values, and that lookup plus a malloc()/free() per 64-bit value
 * cost as much as reading the files.  So the pmResult is built here
 * instead: the active instances of each instance domain are listed once
 * (again only when the domain changed), values come straight from the
 * device structs, and value blocks and value sets are carved from an
 * arena that is reset at the next fetch (the result callback frees
 * nothing).  lc_value() is the single place that maps a metric and an
 * instance to a value; pmdaFetch() with lc_fetchCallBack() gives the same
 * result through libpcp_pmda (option -F, used by the tests to compare).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lustreclient.h"
#include "answer.h"
#include "../domain.h"

/* exported by libpcp (PCP_3.0), declared only in its internal headers */
extern int __pmInProfile(pmInDom, const pmProfile *, int);

struct ilist {
    int		n, cap;
    int		*inst;
    void	**priv;
    /* OSC_BUCKET only: each bucket's OSC and index, side by side, so the
     * 30,000 bucket values of a full fetch do not chase 30,000 pointers */
    struct lc_osc **osc;
    int		*idx;
};
static struct ilist	ilists[LC_NINDOMS];
static int		ilists_dirty = 1;
static pmdaMetric	*by_id[CL_NCLUSTERS][LC_MAXITEM];

void
lc_indoms_changed(void)
{
    ilists_dirty = 1;
}

void
lc_fetch_init(pmdaMetric *metrics, int nmetrics)
{
    int		i;
    unsigned	c, it;

    for (i = 0; i < nmetrics; i++) {
	c = pmID_cluster(metrics[i].m_desc.pmid);
	it = pmID_item(metrics[i].m_desc.pmid);
	if (c < CL_NCLUSTERS && it < LC_MAXITEM)
	    by_id[c][it] = &metrics[i];
    }
}

static int
ilist_add(struct ilist *l, int inst, void *priv)
{
    if (l->n == l->cap) {
	int	ncap = l->cap ? l->cap * 2 : 64;
	int	*ni = realloc(l->inst, ncap * sizeof(*ni));

	if (ni == NULL)
	    return -1;
	l->inst = ni;
	void **np = realloc(l->priv, ncap * sizeof(*np));
	if (np == NULL)
	    return -1;
	l->priv = np;
	struct lc_osc **no = realloc(l->osc, ncap * sizeof(*no));
	if (no == NULL)
	    return -1;
	l->osc = no;
	int *nx = realloc(l->idx, ncap * sizeof(*nx));
	if (nx == NULL)
	    return -1;
	l->idx = nx;
	l->cap = ncap;
    }
    l->inst[l->n] = inst;
    l->priv[l->n] = priv;
    l->osc[l->n] = NULL;
    l->idx[l->n] = 0;
    l->n++;
    return 0;
}

/* the active instances of every instance domain, in pmdaCache walk order */
static void
ilists_rebuild(void)
{
    int		k, inst;
    void	*priv;

    for (k = 0; k < LC_NCACHED; k++) {
	struct ilist *l = &ilists[k];

	l->n = 0;
	pmdaCacheOp(lc.indom[k], PMDA_CACHE_WALK_REWIND);
	while ((inst = pmdaCacheOp(lc.indom[k], PMDA_CACHE_WALK_NEXT)) != -1) {
	    priv = NULL;
	    if (pmdaCacheLookup(lc.indom[k], inst, NULL, &priv) != PMDA_CACHE_ACTIVE ||
		priv == NULL)
		continue;
	    if (ilist_add(l, inst, priv) < 0)
		break;
	    if (k == OSC_BUCKET_INDOM) {
		l->osc[l->n - 1] = ((struct lc_bucket *)priv)->osc;
		l->idx[l->n - 1] = ((struct lc_bucket *)priv)->idx;
	    }
	}
    }
    ilists_dirty = 0;
}

/*
 * Arena for value sets and value blocks: chunks that never move (the
 * result points into them) and are reused from the start at each fetch.
 */
struct chunk {
    struct chunk	*next;
    size_t		used, cap;
    char		data[];
};
static struct chunk	*chunks, *cur;

#define CHUNK_SIZE	(1u << 20)

static void *
arena_alloc(size_t n)
{
    struct chunk *c;

    n = (n + 7) & ~(size_t)7;
    while (cur != NULL && cur->used + n > cur->cap)
	cur = cur->next;
    if (cur == NULL) {
	size_t cap = n > CHUNK_SIZE ? n : CHUNK_SIZE;

	if ((c = malloc(sizeof(*c) + cap)) == NULL)
	    return NULL;
	c->used = 0;
	c->cap = cap;
	/* new chunks go to the front of the free run: after the chunks in use */
	c->next = NULL;
	if (chunks == NULL) {
	    chunks = c;
	} else {
	    struct chunk *t = chunks;

	    while (t->next)
		t = t->next;
	    t->next = c;
	}
	cur = c;
    }
    cur->used += n;
    return cur->data + cur->used - n;
}

static void
arena_reset(void)
{
    struct chunk *c;

    for (c = chunks; c; c = c->next)
	c->used = 0;
    cur = chunks;
}

/* one value into a pmValue; the value format of the set, or < 0 */
static int
stuff(pmValue *v, int type, const pmAtomValue *a)
{
    pmValueBlock	*b;
    size_t		len;

    switch (type) {
    case PM_TYPE_32:
    case PM_TYPE_U32:
	v->value.lval = a->l;
	return PM_VAL_INSITU;
    case PM_TYPE_64:
    case PM_TYPE_U64:
    case PM_TYPE_DOUBLE:
	if ((b = arena_alloc(PM_VAL_HDR_SIZE + sizeof(uint64_t))) == NULL)
	    return -ENOMEM;
	b->vtype = type;
	b->vlen = PM_VAL_HDR_SIZE + sizeof(uint64_t);
	memcpy(b->vbuf, &a->ull, sizeof(uint64_t));
	v->value.pval = b;
	return PM_VAL_DPTR;
    case PM_TYPE_STRING:
	len = strlen(a->cp) + 1;
	if ((b = arena_alloc(PM_VAL_HDR_SIZE + len)) == NULL)
	    return -ENOMEM;
	b->vtype = type;
	b->vlen = PM_VAL_HDR_SIZE + len;
	memcpy(b->vbuf, a->cp, len);
	v->value.pval = b;
	return PM_VAL_DPTR;
    }
    return PM_ERR_TYPE;
}

/* job view values (jobs.c) into one value set */
struct emit_arg {
    pmValueSet		*vs;
    int			n, cap, type;
    pmInDom		indom;
    const pmProfile	*prof;
    int			everyone;
};

static int
emit(void *arg, int inst, pmAtomValue *atom)
{
    struct emit_arg	*a = arg;
    int			valfmt;

    if (a->indom != PM_INDOM_NULL && !a->everyone && !__pmInProfile(a->indom, a->prof, inst))
	return 0;
    if (a->n >= a->cap)
	return 0;	/* cannot happen: cap is lc_jobs_nvalues() */
    if ((valfmt = stuff(&a->vs->vlist[a->n], a->type, atom)) < 0)
	return valfmt;
    a->vs->valfmt = valfmt;
    a->vs->vlist[a->n].inst = inst;
    a->n++;
    return 0;
}

static int
all_instances(const pmProfile *prof)
{
    return prof == NULL || (prof->state == PM_PROFILE_INCLUDE && prof->profile_len == 0);
}

/* a value set for n values of pmid, values in place until stuff() says otherwise */
static pmValueSet *
vset_new(pmID pmid, int n)
{
    pmValueSet	*vs = arena_alloc(sizeof(pmValueSet) + (n > 1 ? n - 1 : 0) * sizeof(pmValue));

    if (vs == NULL)
	return NULL;
    vs->pmid = pmid;
    vs->valfmt = PM_VAL_INSITU;
    vs->numval = 0;
    return vs;
}

/* the job view: a slot's values, from jobs.c's per-slot lists (zero deltas left out) */
static pmValueSet *
job_vset(const pmdaMetric *m, unsigned c, unsigned it, const pmProfile *prof, int everyone)
{
    size_t		nv = lc_jobs_nvalues(c, it);
    pmValueSet		*vs = vset_new(m->m_desc.pmid, (int)nv);
    struct emit_arg	a;
    int			sts;

    if (vs == NULL)
	return NULL;
    a.vs = vs;
    a.n = 0;
    a.cap = (int)nv;
    a.type = m->m_desc.type;
    a.indom = m->m_desc.indom;
    a.prof = prof;
    a.everyone = everyone;
    sts = lc_jobs_values(c, it, emit, &a);
    vs->numval = sts < 0 ? sts : a.n;
    return vs;
}

/*
 * The per-OSC histograms (lustreclient.osc.rpc.read/write) of every OSC
 * bucket: over half of a full fetch, so a plain loop over the bucket list
 * rather than lc_value() per value.
 */
static int
osc_rpc_values(pmValueSet *vs, const struct ilist *l, unsigned it)
{
    int		j = 0, k;

    for (k = 0; k < l->n; k++) {
	const struct lc_osc *osc = l->osc[k];
	pmValueBlock	*vb;

	if (osc == NULL || !osc->rpc_ok)
	    continue;
	if ((vb = arena_alloc(PM_VAL_HDR_SIZE + sizeof(uint64_t))) == NULL)
	    return -ENOMEM;
	vb->vtype = PM_TYPE_U64;
	vb->vlen = PM_VAL_HDR_SIZE + sizeof(uint64_t);
	memcpy(vb->vbuf, it == 0 ? &osc->rs.ppr_read[l->idx[k]] : &osc->rs.ppr_write[l->idx[k]],
	       sizeof(uint64_t));
	vs->vlist[j].value.pval = vb;
	vs->vlist[j].inst = l->inst[k];
	j++;
    }
    vs->valfmt = PM_VAL_DPTR;
    vs->numval = j;
    return 0;
}

/*
 * Metric m's values through lc_value(), for the instances of list l in the
 * profile (l NULL: the one singular value); numval the count, or the last
 * error when no value was given.
 */
static void
metric_values(pmValueSet *vs, const pmdaMetric *m, unsigned c, unsigned it, const struct ilist *l,
	  const pmProfile *prof, int everyone)
{
    int		n = l == NULL ? 1 : l->n, j = 0, k, sts, valfmt, err = 0;
    pmAtomValue	atom;

    for (k = 0; k < n; k++) {
	int	inst = l ? l->inst[k] : (int)PM_IN_NULL;
	void	*priv = l ? l->priv[k] : NULL;

	if (l && !everyone && !__pmInProfile(m->m_desc.indom, prof, inst))
	    continue;
	sts = lc_value(c, it, priv, &atom);
	if (sts < 0) {
	    err = sts;
	    continue;
	}
	if (sts == 0)
	    continue;
	if ((valfmt = stuff(&vs->vlist[j], m->m_desc.type, &atom)) < 0) {
	    err = valfmt;
	    continue;
	}
	vs->valfmt = valfmt;
	vs->vlist[j].inst = inst;
	j++;
    }
    vs->numval = j ? j : err;
}

/* the metric a pmid names, NULL for none of ours */
static pmdaMetric *
metric_of(pmID pmid)
{
    unsigned	c = pmID_cluster(pmid), it = pmID_item(pmid);
    pmdaMetric	*m = (c < CL_NCLUSTERS && it < LC_MAXITEM) ? by_id[c][it] : NULL;

    return m != NULL && m->m_desc.pmid == pmid ? m : NULL;
}

static pmValueSet *answer_vset(pmID pmid, unsigned slot);
static pmValueSet *series_vset(pmID pmid, unsigned slot);

/* one pmid's value set; NULL when out of memory */
static pmValueSet *
vset_of(pmID pmid, const pmProfile *prof, int everyone)
{
    unsigned		c = pmID_cluster(pmid), it = pmID_item(pmid);
    const pmdaMetric	*m = metric_of(pmid);
    const struct ilist	*l = NULL;
    pmValueSet		*vs;

    if (m == NULL) {
	if ((vs = vset_new(pmid, 0)) != NULL)
	    vs->numval = PM_ERR_PMID;
	return vs;
    }
    if (c == CL_JOB_ANSWER)
	return answer_vset(pmid, it);
    if (c == CL_JOB_SERIES)
	return series_vset(pmid, it);
    if (lc_is_job_cluster(c))
	return job_vset(m, c, it, prof, everyone);
    if (m->m_desc.indom != PM_INDOM_NULL)
	l = &ilists[pmInDom_serial(m->m_desc.indom)];
    if ((vs = vset_new(pmid, l == NULL ? 1 : l->n)) == NULL)
	return NULL;
    if (c == CL_OSC_RPC && it <= 1 && everyone)
	return osc_rpc_values(vs, l, it) < 0 ? NULL : vs;
    metric_values(vs, m, c, it, l, prof, everyone);
    return vs;
}

/*
 * The instances of indom as an instance request lists them (the active
 * ones), for a slot's answer; 0, or -ENOMEM.
 */
static int
listing_of(pmInDom indom, struct lc_answer_listing *out)
{
    const struct ilist	*l = &ilists[pmInDom_serial(indom)];
    const char		**names = arena_alloc((l->n ? l->n : 1) * sizeof(char *));
    int			k;

    if (names == NULL)
	return -ENOMEM;
    for (k = 0; k < l->n; k++) {
	char	*name = NULL;

	pmdaCacheLookup(indom, l->inst[k], &name, NULL);
	names[k] = name != NULL ? name : "";
    }
    out->indom = indom;
    out->n = l->n;
    out->inst = l->inst;
    out->name = names;
    return 0;
}

/* vs holds one aggregate value, block (PM_IN_NULL: the metric has no instances) */
static pmValueSet *
one_block(pmValueSet *vs, pmValueBlock *block)
{
    vs->numval = 1;
    vs->valfmt = PM_VAL_DPTR;
    vs->vlist[0].inst = PM_IN_NULL;
    vs->vlist[0].value.pval = block;
    return vs;
}

/* slot s's answer (answer.h): its members' value sets and listings in one value */
static pmValueSet *
answer_vset(pmID pmid, unsigned slot)
{
    pmID			members[LC_ANSWER_MAX_MEMBERS];
    struct lc_answer_set	sets[LC_ANSWER_MAX_MEMBERS];
    struct lc_answer_listing	lists[LC_NINDOMS];
    int				listed[LC_NINDOMS] = { 0 };
    int				nsets, nlists = 0, i;
    pmValueBlock		*block;
    pmValueSet			*vs;

    nsets = lc_answer_members(slot, lc_jobs_slot_used((int)slot), members);
    for (i = 0; i < nsets; i++) {
	const pmdaMetric *m = metric_of(members[i]);

	if ((sets[i].vs = vset_of(members[i], NULL, 1)) == NULL)
	    return NULL;
	sets[i].type = m ? m->m_desc.type : PM_TYPE_UNKNOWN;
	sets[i].indom = m ? m->m_desc.indom : PM_INDOM_NULL;
	if (sets[i].indom == PM_INDOM_NULL || sets[i].indom == lc.indom[JOB_INDOM] ||
	    listed[pmInDom_serial(sets[i].indom)]++)
	    continue;
	if (listing_of(sets[i].indom, &lists[nlists++]) < 0)
	    return NULL;
    }
    if ((vs = vset_new(pmid, 1)) == NULL)
	return NULL;
    if ((block = lc_answer_pack(sets, nsets, lists, nlists, arena_alloc)) == NULL) {
	vs->numval = PM_ERR_TOOBIG;
	return vs;
    }
    return one_block(vs, block);
}

/*
 * Slot s's answer for pmdaFetch() (option -F): the same value block, made
 * in the arena (which only lc_fast_fetch otherwise uses) and copied out by
 * libpcp_pmda.  1 (the value, not to be freed), or an error.
 */
int
lc_answer_atom(unsigned slot, pmAtomValue *atom)
{
    pmValueSet	*vs;

    if (slot >= LC_JOB_SLOTS)
	return PM_ERR_PMID;
    if (ilists_dirty)
	ilists_rebuild();
    arena_reset();
    if ((vs = answer_vset(pmID_build(LUSTRECLIENT, CL_JOB_ANSWER, slot), slot)) == NULL)
	return -ENOMEM;
    if (vs->numval < 0)
	return vs->numval;
    atom->vbp = vs->vlist[0].value.pval;
    return 1;
}

/*
 * Slot s's timeline (series.h) as one aggregate value, in a block of its
 * own until the result is sent (jobs.c); no value while the slot holds no job.  Made only when
 * asked for: its sample and its packing cost a fetch of anything else
 * nothing.
 */
static pmValueSet *
series_vset(pmID pmid, unsigned slot)
{
    pmValueSet		*vs = vset_new(pmid, 1);
    pmValueBlock	*block;
    int			sts;

    if (vs == NULL)
	return NULL;
    if ((sts = lc_jobs_series(slot, &block)) <= 0) {
	vs->numval = sts;	/* 0: no value */
	return vs;
    }
    return one_block(vs, block);
}

/* slot s's timeline for pmdaFetch() (option -F): 1 (the block, freed by jobs.c), 0, or an error */
int
lc_series_atom(unsigned slot, pmAtomValue *atom)
{
    pmValueBlock	*block;
    int			sts;

    if (slot >= LC_JOB_SLOTS)
	return PM_ERR_PMID;
    if ((sts = lc_jobs_series(slot, &block)) > 0)
	atom->vbp = block;
    return sts;
}

/* the result of the last fetch, grown to hold numpmid value sets */
static pmResult *
result_for(int numpmid)
{
    static pmResult	*res;
    static int		rescap;

    if (numpmid > rescap) {
	pmResult *nr = realloc(res, sizeof(pmResult) + (numpmid - 1) * sizeof(pmValueSet *));

	if (nr == NULL)
	    return NULL;
	res = nr;
	rescap = numpmid;
    }
    memset(&res->timestamp, 0, sizeof(res->timestamp));
    res->numpmid = numpmid;
    return res;
}

int
lc_fast_fetch(int numpmid, pmID pmidlist[], pmResult **resp, pmdaExt *pmda)
{
    const pmProfile	*prof = pmda->e_prof;
    int			i, everyone = all_instances(prof);
    pmResult		*res;

    if (ilists_dirty)
	ilists_rebuild();
    arena_reset();
    if ((res = result_for(numpmid)) == NULL)
	return -ENOMEM;
    for (i = 0; i < numpmid; i++)
	if ((res->vset[i] = vset_of(pmidlist[i], prof, everyone)) == NULL)
	    return -ENOMEM;
    *resp = res;
    return 0;
}

/* the result lives in the arena until the next fetch, but for the slots' series blocks */
void
lc_fast_fetch_done(pmResult *result)
{
    (void)result;
    lc_jobs_series_sent();
}
