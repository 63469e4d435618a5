/*
 * A slot's answer (answer.c): the members in the order the reporter reads
 * them, and one value block laid out as answer.h says, read back here word
 * by word: numbers widened to 64 bits, strings once among their recent
 * neighbours and indexed after the listed names, value sets the answer
 * cannot carry said as PM_ERR_TYPE, errors kept, and an answer too large
 * for a value block refused rather than cut.
 */
#include "harness.h"
#include "answer.h"
#include "../../domain.h"

/* pmID_build() without libpcp */
#define PMID(c, i)	(((pmID)LUSTRECLIENT << 22) | ((pmID)(c) << 10) | (pmID)(i))

static char	arena[1 << 16];
static size_t	used;

static void *
bump(size_t n)
{
    void *p;

    n = (n + 7) & ~(size_t)7;
    if (used + n > sizeof(arena))
	return NULL;
    p = arena + used;
    used += n;
    return p;
}

static void *
refuse(size_t n)
{
    (void)n;
    return NULL;
}

static uint32_t
word32(const char *base, size_t at)
{
    uint32_t	v;

    memcpy(&v, base + at, sizeof(v));
    return v;
}

static uint64_t
word64(const char *base, size_t at)
{
    uint64_t	v;

    memcpy(&v, base + at, sizeof(v));
    return v;
}

/* the n-th NUL-terminated string of the table at base + at */
static const char *
nth_string(const char *base, size_t at, unsigned n)
{
    const char	*s = base + at;

    while (n--)
	s += strlen(s) + 1;
    return s;
}

/* a value block holding one 64-bit value or one string, as the agent's fetch makes them */
static pmValueBlock *
block64(uint64_t v, int type)
{
    pmValueBlock *b = bump(PM_VAL_HDR_SIZE + sizeof(v));

    b->vtype = type;
    b->vlen = PM_VAL_HDR_SIZE + sizeof(v);
    memcpy(b->vbuf, &v, sizeof(v));
    return b;
}

static pmValueBlock *
block_str(const char *s)
{
    pmValueBlock *b = bump(PM_VAL_HDR_SIZE + strlen(s) + 1);

    b->vtype = PM_TYPE_STRING;
    b->vlen = PM_VAL_HDR_SIZE + strlen(s) + 1;
    strcpy(b->vbuf, s);
    return b;
}

static pmValueSet *
vset(pmID pmid, int numval, int valfmt)
{
    pmValueSet *vs = bump(sizeof(pmValueSet) + (numval > 1 ? numval - 1 : 0) * sizeof(pmValue));

    vs->pmid = pmid;
    vs->numval = numval;
    vs->valfmt = valfmt;
    return vs;
}

static void
test_members(void)
{
    pmID	m[LC_ANSWER_MAX_MEMBERS];
    int		n;

    CHECK_INT(lc_answer_members(3, 0, m), 1);
    CHECK_U64(m[0], PMID(CL_JOB_SLOT0 + 3, LC_JOB_ID_ITEM));
    n = lc_answer_members(3, 1, m);
    CHECK_INT(n, LC_ANSWER_MAX_MEMBERS);
    CHECK_U64(m[0], PMID(CL_JOB_SLOT0 + 3, LC_JOB_ID_ITEM));
    CHECK_U64(m[1], PMID(lc_job_end_metrics[0].cluster, lc_job_end_metrics[0].item));
    CHECK_U64(m[1 + LC_JOB_NEND], PMID(CL_JOB, JOB_BEGIN_TIME));
    CHECK_U64(m[2 + LC_JOB_NEND], PMID(CL_JOB_SLOT0 + 3, 0));
    CHECK_U64(m[n - 2], PMID(CL_JOB_SLOT0 + 3, LC_JOB_LEFT_OUT_ITEM + LC_JOB_NSOURCES - 1));
    CHECK_U64(m[n - 1], PMID(CL_JOB, JOB_RESTARTS));
}

static void
test_pack(void)
{
    static const int	  osc_inst[] = { 7, 9 };
    static const char	 *osc_name[] = { "scratch-OST0007", "scratch-OST0009" };
    struct lc_answer_listing lists[1] = { { 0x37000001, 2, osc_inst, osc_name } };
    struct lc_answer_set sets[5];
    pmValueSet	*id, *bytes, *state, *u32, *gone;
    pmValueBlock *b;
    const char	*base;
    size_t	values, insts, strings;

    used = 0;
    id = vset(1, 1, PM_VAL_DPTR);
    id->vlist[0].inst = PM_IN_NULL;
    id->vlist[0].value.pval = block_str("4242");
    bytes = vset(2, 2, PM_VAL_DPTR);
    bytes->vlist[0].inst = 7;
    bytes->vlist[0].value.pval = block64(1ull << 40, PM_TYPE_U64);
    bytes->vlist[1].inst = 9;
    bytes->vlist[1].value.pval = block64(5, PM_TYPE_U64);
    state = vset(3, 2, PM_VAL_DPTR);
    state->vlist[0].inst = 7;
    state->vlist[0].value.pval = block_str("FULL");
    state->vlist[1].inst = 9;
    state->vlist[1].value.pval = block_str("FULL");
    u32 = vset(4, 1, PM_VAL_INSITU);
    u32->vlist[0].inst = 9;
    u32->vlist[0].value.lval = (int)0xfffffffe;
    gone = vset(5, PM_ERR_PMID, PM_VAL_INSITU);
    sets[0] = (struct lc_answer_set){ id, PM_TYPE_STRING, PM_INDOM_NULL };
    sets[1] = (struct lc_answer_set){ bytes, PM_TYPE_U64, 0x37000001 };
    sets[2] = (struct lc_answer_set){ state, PM_TYPE_STRING, 0x37000001 };
    sets[3] = (struct lc_answer_set){ u32, PM_TYPE_U32, 0x37000001 };
    sets[4] = (struct lc_answer_set){ gone, PM_TYPE_U64, 0x37000001 };

    b = lc_answer_pack(sets, 5, lists, 1, bump);
    CHECK(b != NULL);
    if (b == NULL)
	return;
    CHECK_INT(b->vtype, PM_TYPE_AGGREGATE);
    base = b->vbuf;
    CHECK_U64(word32(base, 0), LC_ANSWER_MAGIC);
    CHECK_U64(word32(base, 4), 5);		/* sets */
    CHECK_U64(word32(base, 8), 6);		/* values: 1 + 2 + 2 + 1 */
    CHECK_U64(word32(base, 12), 1);		/* listings */
    CHECK_U64(word32(base, 16), 2);		/* listed instances */
    CHECK_U64(word32(base, 20), 4);		/* strings: 2 names, "4242", "FULL" once */
    CHECK_U64(word32(base, 24), sizeof("scratch-OST0007") * 2);
    /* sets: (pmid, numval, type, indom) */
    CHECK_U64(word32(base, 32 + 16 * 4), 5);
    CHECK_INT((int32_t)word32(base, 32 + 16 * 4 + 4), PM_ERR_PMID);
    CHECK_U64(word32(base, 32 + 16 * 1 + 12), 0x37000001);
    values = 32 + 16 * 5;
    insts = values + 8 * 6;
    CHECK_U64(word64(base, values + 8 * 0), 2);			/* "4242": string 2 */
    CHECK_U64(word64(base, values + 8 * 1), 1ull << 40);
    CHECK_U64(word64(base, values + 8 * 2), 5);
    CHECK_U64(word64(base, values + 8 * 3), 3);			/* "FULL" */
    CHECK_U64(word64(base, values + 8 * 4), 3);			/* the same "FULL" */
    CHECK_U64(word64(base, values + 8 * 5), 0xfffffffeull);	/* u32: not sign-extended */
    CHECK_INT((int32_t)word32(base, insts + 4 * 0), (int32_t)PM_IN_NULL);
    CHECK_INT((int32_t)word32(base, insts + 4 * 5), 9);
    CHECK_U64(word32(base, insts + 4 * 6), 0x37000001);		/* the listing */
    CHECK_U64(word32(base, insts + 4 * 6 + 4), 2);
    CHECK_INT((int32_t)word32(base, insts + 4 * 6 + 8 + 4), 9);	/* listed ids */
    strings = insts + 4 * 6 + 8 + 4 * 2;
    CHECK_STR(nth_string(base, strings, 1), "scratch-OST0009");
    CHECK_STR(nth_string(base, strings, 2), "4242");
    CHECK_STR(nth_string(base, strings, 3), "FULL");
    CHECK_U64(b->vlen, PM_VAL_HDR_SIZE + strings + (sizeof("scratch-OST0007") * 2 + 5 + 5));

    /* a set with a value the answer cannot carry is an error, its values left out */
    u32->valfmt = PM_VAL_DPTR;
    u32->vlist[0].value.pval = block64(1, PM_TYPE_U64);
    b = lc_answer_pack(sets, 5, lists, 1, bump);
    CHECK(b != NULL);
    if (b != NULL) {
	CHECK_INT((int32_t)word32(b->vbuf, 32 + 16 * 3 + 4), PM_ERR_TYPE);
	CHECK_U64(word32(b->vbuf, 8), 5);
    }
    /* no memory, or more than a value block holds: no answer, never a cut one */
    CHECK(lc_answer_pack(sets, 5, lists, 1, refuse) == NULL);
}

void
test_slot_answer(void)
{
    test_members();
    test_pack();
}
