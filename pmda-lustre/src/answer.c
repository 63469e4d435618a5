/*
 * A job slot's answer: the members' value sets and the instance listings
 * they use, packed into one aggregate value (layout: answer.h).
 */
#include <stdint.h>
#include <string.h>
#include "answer.h"
#include "lepack.h"
#include "../domain.h"

#define ANSWER_MAX_BYTES	((1u << 24) - 1 - PM_VAL_HDR_SIZE)	/* a value block's vlen */
#define RECENT			8	/* strings a new one is compared with */

/* a PMID of ours, as pmID_build() makes it (no libpcp call: this file is pure) */
static pmID
pmid_of(unsigned cluster, unsigned item)
{
    return ((pmID)LUSTRECLIENT << 22) | (cluster << 10) | item;
}

int
lc_answer_members(unsigned slot, int used, pmID out[LC_ANSWER_MAX_MEMBERS])
{
    unsigned	cluster = CL_JOB_SLOT0 + slot, k;
    int		n = 0;

    out[n++] = pmid_of(cluster, LC_JOB_ID_ITEM);
    if (!used)
	return n;
    for (k = 0; k < LC_JOB_NEND; k++)
	out[n++] = pmid_of(lc_job_end_metrics[k].cluster, lc_job_end_metrics[k].item);
    out[n++] = pmid_of(CL_JOB, JOB_BEGIN_TIME);
    for (k = 0; k < LC_JOB_NMETRICS; k++)
	out[n++] = pmid_of(cluster, k);
    for (k = 0; k < LC_JOB_NSOURCES; k++)
	out[n++] = pmid_of(cluster, LC_JOB_LEFT_OUT_ITEM + k);
    out[n++] = pmid_of(CL_JOB, JOB_RESTARTS);
    return n;
}

/*
 * The string table: each string once among the last RECENT added (a
 * host's OSC states are mostly the same word), else appended.  With
 * out NULL only the sizes are counted: the first of the two passes.
 */
struct strtab {
    char	*out;
    size_t	bytes;
    uint32_t	n;
    const char	*recent[RECENT];
    uint32_t	recent_index[RECENT];
    unsigned	next;
};

static uint32_t
strtab_add(struct strtab *t, const char *s, int dedupe)
{
    size_t	len = strlen(s) + 1;
    unsigned	i;

    if (dedupe)
	for (i = 0; i < RECENT; i++)
	    if (t->recent[i] != NULL && strcmp(t->recent[i], s) == 0)
		return t->recent_index[i];
    if (t->out != NULL)
	memcpy(t->out + t->bytes, s, len);
    t->bytes += len;
    if (dedupe) {
	t->recent[t->next] = s;
	t->recent_index[t->next] = t->n;
	t->next = (t->next + 1) % RECENT;
    }
    return t->n++;
}

/* whether the answer carries value j of the set as a 64-bit word */
static int
carried(const pmValueSet *vs, int j, int type)
{
    const pmValue	*v = &vs->vlist[j];

    switch (type) {
    case PM_TYPE_32:
    case PM_TYPE_U32:
	return vs->valfmt == PM_VAL_INSITU;
    case PM_TYPE_64:
    case PM_TYPE_U64:
    case PM_TYPE_DOUBLE:
	return vs->valfmt != PM_VAL_INSITU && v->value.pval->vlen == PM_VAL_HDR_SIZE + sizeof(uint64_t);
    case PM_TYPE_STRING:
	return vs->valfmt != PM_VAL_INSITU && v->value.pval->vlen > PM_VAL_HDR_SIZE;
    }
    return 0;
}

/* value j of the set (carried) as its 64-bit word; a string goes into t */
static uint64_t
word_of(const pmValueSet *vs, int j, int type, struct strtab *t)
{
    const pmValue	*v = &vs->vlist[j];
    uint64_t		word;

    switch (type) {
    case PM_TYPE_32:
	return (uint64_t)(int64_t)v->value.lval;
    case PM_TYPE_U32:
	return (uint32_t)v->value.lval;
    case PM_TYPE_STRING:
	return strtab_add(t, v->value.pval->vbuf, 1);
    }
    memcpy(&word, v->value.pval->vbuf, sizeof(word));
    return word;
}

/* the numval a set is answered with: its own, or PM_ERR_TYPE for values the answer cannot carry */
static int
numval_of(const struct lc_answer_set *s)
{
    int		j;

    for (j = 0; j < s->vs->numval; j++)
	if (!carried(s->vs, j, s->type))
	    return PM_ERR_TYPE;
    return s->vs->numval;
}

struct layout {
    uint32_t	nvalues, nlisted;
    size_t	sets, values, insts, listings, listed, strings, end, listed_bytes;
};

static void
layout_of(struct layout *l, int nsets, int nlists, size_t string_bytes)
{
    l->sets = LC_ANSWER_HEADER * sizeof(uint32_t);
    l->values = l->sets + (size_t)nsets * 4 * sizeof(uint32_t);
    l->insts = l->values + (size_t)l->nvalues * sizeof(uint64_t);
    l->listings = l->insts + (size_t)l->nvalues * sizeof(int32_t);
    l->listed = l->listings + (size_t)nlists * 2 * sizeof(uint32_t);
    l->strings = l->listed + (size_t)l->nlisted * sizeof(int32_t);
    l->end = l->strings + string_bytes;
}

pmValueBlock *
lc_answer_pack(const struct lc_answer_set *sets, int nsets,
	       const struct lc_answer_listing *lists, int nlists, void *(*alloc)(size_t))
{
    struct strtab	count = { 0 }, fill = { 0 };
    struct layout	l = { 0 };
    pmValueBlock	*b;
    char		*base;
    uint64_t		word;
    uint32_t		header[LC_ANSWER_HEADER], at;
    int			i, j, numval;

    /* first pass: sizes (the string table as the second pass will make it) */
    for (i = 0; i < nlists; i++) {
	l.nlisted += (uint32_t)lists[i].n;
	for (j = 0; j < lists[i].n; j++)
	    strtab_add(&count, lists[i].name[j], 0);
    }
    l.listed_bytes = count.bytes;
    for (i = 0; i < nsets; i++)
	for (j = 0, numval = numval_of(&sets[i]); j < numval; j++, l.nvalues++)
	    word_of(sets[i].vs, j, sets[i].type, &count);
    layout_of(&l, nsets, nlists, count.bytes);
    if (l.end > ANSWER_MAX_BYTES || (b = alloc(PM_VAL_HDR_SIZE + l.end)) == NULL)
	return NULL;
    b->vtype = PM_TYPE_AGGREGATE;
    b->vlen = PM_VAL_HDR_SIZE + l.end;
    base = b->vbuf;
    fill.out = base + l.strings;

    for (i = 0, at = 0; i < nlists; i++) {
	lc_put32((unsigned char *)base + l.listings + (size_t)i * 2 * sizeof(uint32_t), lists[i].indom);
	lc_put32((unsigned char *)base + l.listings + (size_t)i * 2 * sizeof(uint32_t) + 4, (uint32_t)lists[i].n);
	for (j = 0; j < lists[i].n; j++, at++) {
	    int32_t inst = lists[i].inst[j];

	    memcpy(base + l.listed + (size_t)at * sizeof(int32_t), &inst, sizeof(inst));
	    strtab_add(&fill, lists[i].name[j], 0);
	}
    }
    for (i = 0, at = 0; i < nsets; i++) {
	const struct lc_answer_set *s = &sets[i];
	char	*set = base + l.sets + (size_t)i * 4 * sizeof(uint32_t);

	numval = numval_of(s);
	lc_put32((unsigned char *)set, s->vs->pmid);
	lc_put32((unsigned char *)set + 4, (uint32_t)numval);
	lc_put32((unsigned char *)set + 8, (uint32_t)s->type);
	lc_put32((unsigned char *)set + 12, s->indom);
	for (j = 0; j < numval; j++, at++) {
	    int32_t inst = s->vs->vlist[j].inst;

	    word = word_of(s->vs, j, s->type, &fill);
	    memcpy(base + l.values + (size_t)at * sizeof(uint64_t), &word, sizeof(word));
	    memcpy(base + l.insts + (size_t)at * sizeof(int32_t), &inst, sizeof(inst));
	}
    }
    header[0] = LC_ANSWER_MAGIC;
    header[1] = (uint32_t)nsets;
    header[2] = l.nvalues;
    header[3] = (uint32_t)nlists;
    header[4] = l.nlisted;
    header[5] = fill.n;
    header[6] = (uint32_t)l.listed_bytes;
    header[7] = 0;
    memcpy(base, header, sizeof(header));
    return b;
}
