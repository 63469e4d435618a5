/*
 * A job slot's file (persist.c): a slot written and read back is the slot
 * (every field, and its bytes written again are the same bytes); every
 * truncation of a file and every single bit flipped in it is refused; a
 * file of another layout version or job metric table, and files whose CRC
 * holds but whose content does not (counts beyond the file, a device's
 * filesystem not in it, a presence byte of 2, a slot that does not exist,
 * not a job id, bins that are not bins) are refused with a reason.
 */
#include <math.h>
#include "harness.h"
#include "persist.h"

/*
 * A slot of a job on one filesystem with two OSCs and an MDC, values from a
 * xorshift, its timeline of `series_nval` values a point (this agent's
 * lc_job_series_nval(), or fewer: an older agent's table).
 */
static void
make_slot_of(struct lc_persist_slot *p, uint64_t seed, unsigned series_nval)
{
    static const char *osc[2] = { "scratch-OST0000-osc-ffff8a01", "scratch-OST0001-osc-ffff8a01" };
    uint64_t		r = seed;
    struct lc_jobdev	*d;
    unsigned		nv;

    memset(p, 0, sizeof(*p));
    p->slot = 3;
    p->restarts = 2;
    strcpy(p->id, "4242.batch");
    p->begin_time = 1764000000.25;
    d = lc_jobrec_add(&p->rec, LC_JK_FS, 0, "scratch", "ffff8a01");
    d->listed = 1;
    d->start_ok[0] = 1;
    d->start[0] = 1763990000.5;
    d->reset_seen = 1u << LC_JS_OSC_RPC;
    nv = lc_job_kind_nval(LC_JK_FS);
    for (unsigned v = 0; v < nv; v++) {
	d->val[v] = h_rand(&r);
	d->pres[v] = h_rand(&r) & 1;
    }
    for (unsigned b = 0; b < 12; b++)
	d->binst[b] = (int)b;
    for (int i = 0; i < 2; i++) {
	d = lc_jobrec_add(&p->rec, LC_JK_OSC, i, osc[i], osc[i]);
	d->listed = 1;
	d->fs = 0;
	d->start_ok[0] = d->start_ok[1] = 1;
	d->start[0] = d->start[1] = 1763990001.0 + i;
	for (unsigned v = 0; v < lc_job_kind_nval(LC_JK_OSC); v++) {
	    d->val[v] = h_rand(&r) >> 20;
	    d->pres[v] = 1;
	}
    }
    d = lc_jobrec_add(&p->rec, LC_JK_MDC, 0, "scratch-MDT0000-mdc-ffff8a01", "scratch-MDT0000-mdc-ffff8a01");
    d->fs = 0;
    lc_series_init(&p->series, series_nval, 10000);
    for (uint64_t t = 0; t < 2; t++) {
	uint64_t cum[1024];
	struct lc_series_in in = { "scratch", cum };

	for (unsigned v = 0; v < series_nval; v++)
	    cum[v] = (t + 1) * (h_rand(&r) >> 40);
	lc_series_sample(&p->series, 1764000010000 + t * 10000, &in, 1);
    }
}

static void
make_slot(struct lc_persist_slot *p, uint64_t seed)
{
    make_slot_of(p, seed, lc_job_series_nval());
}

static void *
encoded(const struct lc_persist_slot *p, size_t *len)
{
    void *buf;

    *len = lc_persist_size(p);
    if ((buf = malloc(*len)) == NULL)
	exit(2);
    lc_persist_encode(p, buf);
    return buf;
}

static int
same_dev(unsigned kind, const struct lc_jobdev *a, const struct lc_jobdev *b)
{
    unsigned	nv = lc_job_kind_nval(kind);

    if (strcmp(a->name, b->name) || strcmp(a->id, b->id) || a->listed != b->listed || a->fs != b->fs ||
	a->start_ok[0] != b->start_ok[0] || a->start_ok[1] != b->start_ok[1] ||
	a->start[0] != b->start[0] || a->start[1] != b->start[1] || a->reset_seen != b->reset_seen ||
	memcmp(a->val, b->val, nv * sizeof(*a->val)) || memcmp(a->pres, b->pres, nv))
	return 0;
    if (kind == LC_JK_FS)
	for (unsigned k = 0; k < RPC_HIST_MAX; k++)
	    if ((a->binst[k] >= 0) != (b->binst[k] >= 0))
		return 0;
    return b->inst == -1;	/* instance ids are not kept: the agent's of the time */
}

static void
test_round_trip(void)
{
    struct lc_persist_slot p, q;
    const char		*why = NULL;
    size_t		len, len2;
    unsigned char	*buf, *again;

    make_slot(&p, 0x9e3779b97f4a7c15ull);
    buf = encoded(&p, &len);
    CHECK_INT(lc_persist_decode(buf, len, &q, &why), 0);
    CHECK_U64(q.slot, 3);
    CHECK_U64(q.restarts, 2);
    CHECK_STR(q.id, "4242.batch");
    CHECK(q.begin_time == p.begin_time);
    for (unsigned kind = 0; kind < LC_JK_N; kind++) {
	CHECK_U64(q.rec.n[kind], p.rec.n[kind]);
	for (size_t i = 0; i < p.rec.n[kind] && i < q.rec.n[kind]; i++)
	    CHECK(same_dev(kind, &p.rec.dev[kind][i], &q.rec.dev[kind][i]));
    }
    CHECK_U64(q.series.n, p.series.n);
    CHECK_U64(q.series.nfs, 1);
    CHECK_U64(q.series.first, p.series.first);
    CHECK_U64(q.series.level, p.series.level);
    CHECK_U64(q.series.interval_ms, 10000);
    CHECK(memcmp(q.series.samples, p.series.samples, p.series.n * 4) == 0);
    CHECK_STR(q.series.fs[0].name, "scratch");
    CHECK(memcmp(q.series.fs[0].last, p.series.fs[0].last, p.series.nvalues * 8) == 0);
    CHECK(memcmp(q.series.fs[0].val, p.series.fs[0].val, p.series.n * p.series.nvalues * 8) == 0);
    again = encoded(&q, &len2);
    CHECK(len2 == len && memcmp(again, buf, len) == 0);

    /* a series taken up again keeps growing as the one it was */
    {
	uint64_t cum[1024];
	struct lc_series_in in = { "scratch", cum };

	for (unsigned v = 0; v < lc_job_series_nval(); v++)
	    cum[v] = p.series.fs[0].last[v] + v;
	CHECK_INT(lc_series_sample(&p.series, 1764000040000, &in, 1), 0);
	CHECK_INT(lc_series_sample(&q.series, 1764000040000, &in, 1), 0);
	CHECK_U64(q.series.n, p.series.n);
	CHECK(memcmp(q.series.fs[0].val, p.series.fs[0].val, p.series.n * p.series.nvalues * 8) == 0);
    }
    free(again);
    free(buf);
    lc_persist_free(&q);
    lc_persist_free(&p);
}

/*
 * A slot kept by an agent whose series table was this one's first metrics
 * (before the calls' latencies were appended): taken up whole, its begin
 * values and its timeline as they were, the timeline keeping that table
 * (its values a point) as it grows; written again, the same bytes.
 */
static void
test_an_older_tables_slot_is_taken_up(void)
{
    struct lc_persist_slot p, q;
    const char		*why = NULL;
    unsigned		older = lc_job_series_nval() - 2;	/* without latency.read, .write */
    size_t		len, len2;
    unsigned char	*buf, *again;

    make_slot_of(&p, 0x5eed, older);
    buf = encoded(&p, &len);
    CHECK_INT(lc_persist_decode(buf, len, &q, &why), 0);
    CHECK_U64(q.series.nvalues, older);
    CHECK_U64(lc_job_series_metrics_of(q.series.nvalues), LC_JOB_NSERIES - 2);
    for (unsigned kind = 0; kind < LC_JK_N; kind++) {
	CHECK_U64(q.rec.n[kind], p.rec.n[kind]);
	for (size_t i = 0; i < p.rec.n[kind] && i < q.rec.n[kind]; i++)
	    CHECK(same_dev(kind, &p.rec.dev[kind][i], &q.rec.dev[kind][i]));
    }
    CHECK_U64(q.series.n, p.series.n);
    CHECK(memcmp(q.series.fs[0].last, p.series.fs[0].last, older * 8) == 0);
    CHECK(memcmp(q.series.fs[0].val, p.series.fs[0].val, p.series.n * older * 8) == 0);
    again = encoded(&q, &len2);
    CHECK(len2 == len && memcmp(again, buf, len) == 0);
    /* a sample of this agent's values (every metric's) adds the table's first ones */
    {
	uint64_t cum[1024];
	struct lc_series_in in = { "scratch", cum };

	for (unsigned v = 0; v < lc_job_series_nval(); v++)
	    cum[v] = (v < older ? q.series.fs[0].last[v] : 0) + 10 + v;
	CHECK_INT(lc_series_sample(&q.series, 1764000040000, &in, 1), 0);
	CHECK_U64(q.series.nvalues, older);
	CHECK(q.series.fs[0].val[(q.series.n - 1) * older + older - 1] == 10 + older - 1);
    }
    free(again);
    free(buf);
    lc_persist_free(&q);
    lc_persist_free(&p);
}

static void
test_truncations_and_bit_flips(void)
{
    struct lc_persist_slot p, q;
    const char		*why;
    size_t		len, cut, bit, refused = 0, tried = 0;
    unsigned char	*buf, *copy;

    make_slot(&p, 77);
    buf = encoded(&p, &len);
    for (cut = 0; cut < len; cut++) {
	copy = (unsigned char *)h_exact((const char *)buf, cut);	/* ASan: nothing read past cut */
	why = NULL;
	refused += lc_persist_decode(copy, cut, &q, &why) < 0 && why != NULL;
	free(copy);
    }
    CHECK_U64(refused, len);
    refused = 0;
    copy = malloc(len);
    for (bit = 0; bit < len * 8; bit++, tried++) {
	memcpy(copy, buf, len);
	copy[bit / 8] ^= (unsigned char)(1u << (bit % 8));
	why = NULL;
	if (lc_persist_decode(copy, len, &q, &why) < 0 && why != NULL)
	    refused++;
	else
	    lc_persist_free(&q);
    }
    CHECK_U64(refused, tried);
    free(copy);
    free(buf);
    lc_persist_free(&p);
}

/* the bytes with a u32 at off set to v and the CRC made right again */
static void
patch32(unsigned char *buf, size_t len, size_t off, uint32_t v)
{
    uint32_t	crc;

    for (int i = 0; i < 4; i++)
	buf[off + i] = (unsigned char)(v >> (8 * i));
    crc = lc_crc32(buf, len - 4);
    for (int i = 0; i < 4; i++)
	buf[len - 4 + i] = (unsigned char)(crc >> (8 * i));
}

static const char *
refusal(const unsigned char *orig, size_t len, size_t off, uint32_t v)
{
    struct lc_persist_slot q;
    unsigned char	*buf = (unsigned char *)h_exact((const char *)orig, len);
    const char		*why = NULL;

    patch32(buf, len, off, v);
    if (lc_persist_decode(buf, len, &q, &why) == 0) {
	lc_persist_free(&q);
	why = "(taken)";
    }
    free(buf);
    return why;
}

static void
test_refused_with_a_reason(void)
{
    struct lc_persist_slot p;
    size_t		len, dev0;
    unsigned char	*buf;
    unsigned		nv = lc_job_kind_nval(LC_JK_FS);

    make_slot(&p, 5);
    buf = encoded(&p, &len);
    CHECK_STR(refusal(buf, len, 0, 0x3150434d), "not a job slot file");
    CHECK_STR(refusal(buf, len, 4, 2), "another layout version");
    CHECK_STR(refusal(buf, len, 16, LC_JOB_SLOTS), "no such slot");
    CHECK_STR(refusal(buf, len, 24, nv + 1), "written by an agent of another job metric table");
    /* a series table this one does not begin with: a newer agent's, or values ending no metric */
    CHECK_STR(refusal(buf, len, 36, lc_job_series_nval() + 1), "written by an agent of another job metric table");
    CHECK_STR(refusal(buf, len, 36, lc_job_series_nval() - 2 - 1), "written by an agent of another job metric table");
    CHECK_STR(refusal(buf, len, 36, 0), "written by an agent of another job metric table");
    CHECK_STR(refusal(buf, len, 40, 32), "written by an agent of another job metric table");
    /* the job id "4242.batch" at 48: its first byte a space */
    CHECK_STR(refusal(buf, len, 52, 0x32343220), "not a job id");
    /* the FS count, after the id and begin time; the FS device's fs index after its flags */
    dev0 = 48 + 4 + strlen(p.id) + 8;
    CHECK_STR(refusal(buf, len, dev0, 0xffffffffu), "a count larger than the file");
    CHECK_STR(refusal(buf, len, dev0 + 4, 8), "unknown device flags");
    CHECK_STR(refusal(buf, len, dev0 + 8, 0), "a device's filesystem is not in the file");
    /* the name length of the FS device, too long */
    CHECK_STR(refusal(buf, len, dev0 + 28, LC_PERSIST_NAME_MAX + 1), "a name is too long or not a string");
    /* a presence byte of 2: the first of the FS device's, after its name, id and values */
    {
	size_t pres = dev0 + 28 + 4 + strlen("scratch") + 4 + strlen("ffff8a01") + (size_t)nv * 8;
	unsigned char *b = (unsigned char *)h_exact((const char *)buf, len);
	uint32_t w = b[pres] | (uint32_t)b[pres + 1] << 8 | (uint32_t)b[pres + 2] << 16 | (uint32_t)b[pres + 3] << 24;

	CHECK_STR(refusal(b, len, pres, (w & ~0xffu) | 2), "a presence byte is neither 0 nor 1");
	free(b);
    }
    /* the series (from the end: its filesystem, samples, header): interval 0, level 64, 513 points */
    {
	size_t	s = len - 4;		/* the CRC */

	s -= p.series.nfs * (4 + strlen("scratch") + (size_t)p.series.nvalues * 8 * (1 + p.series.n));
	s -= p.series.n * 4 + 4 + 4 + 8 + 4 + 4;	/* samples, nfs, n, first, level, interval */
	CHECK_STR(refusal(buf, len, s, 0), "the timeline's bins are not bins");
	CHECK_STR(refusal(buf, len, s + 4, 64), "the timeline's bins are not bins");
	CHECK_STR(refusal(buf, len, s + 16, LC_SERIES_POINTS + 1), "the timeline's bins are not bins");
	CHECK(strcmp(refusal(buf, len, s + 16, (uint32_t)p.series.n), "(taken)") == 0);
    }
    /* size says more or less than there is */
    {
	struct lc_persist_slot q;
	const char *why = NULL;
	unsigned char *b = malloc(len + 8);

	memcpy(b, buf, len);
	memset(b + len, 0, 8);
	CHECK_INT(lc_persist_decode(b, len + 8, &q, &why), -1);
	CHECK_STR(why, "bytes beyond its end");
	CHECK_INT(lc_persist_decode(b, LC_PERSIST_MAX_BYTES + 1, &q, &why), -1);
	CHECK_STR(why, "too large");
	free(b);
    }
    free(buf);
    lc_persist_free(&p);
}

static void
test_crc32(void)
{
    CHECK_U64(lc_crc32("123456789", 9), 0xcbf43926u);	/* the CRC-32 check value */
    CHECK_U64(lc_crc32("", 0), 0);
}

void
test_persist(void)
{
    test_crc32();
    test_round_trip();
    test_an_older_tables_slot_is_taken_up();
    test_truncations_and_bit_flips();
    test_refused_with_a_reason();
}
