/*
 * A job's timeline store (series.c): by example (the bins a sample falls
 * into, gaps, a clock stepped back, the merge of a lone first point, a
 * filesystem that comes and goes), then on random sample sequences against
 * a plain model written here with loops (every sample kept; the level, the
 * first bin and each point recomputed from all of them), and the served
 * value read back byte by byte, by example and on random sparse series.
 */
#include "harness.h"
#include "series.h"

/* ---- by example ---------------------------------------------------------- */

static int64_t
point(const struct lc_series *s, size_t f, size_t i, unsigned v)
{
    return s->fs[f].val[i * s->nvalues + v];
}

static void
sample1(struct lc_series *s, uint64_t t, const char *name, uint64_t cum)
{
    struct lc_series_in in = { name, &cum };

    CHECK_INT(lc_series_sample(s, t, &in, 1), 0);
}

static void
test_bins_and_gaps(void)
{
    struct lc_series	s;

    lc_series_init(&s, 1, 10000);
    sample1(&s, 20000, "scratch", 5);		/* bin 2 */
    sample1(&s, 30004, "scratch", 9);		/* bin 3 */
    sample1(&s, 39999, "scratch", 10);		/* bin 3 again: adds into it */
    sample1(&s, 60001, "scratch", 16);		/* bin 6: bins 4, 5 padded */
    CHECK_U64(s.first, 2);
    CHECK_U64(s.n, 5);
    CHECK_U64(s.level, 0);
    CHECK_INT(point(&s, 0, 0, 0), 5);
    CHECK_INT(point(&s, 0, 1, 0), 5);
    CHECK_INT(point(&s, 0, 2, 0), 0);
    CHECK_INT(point(&s, 0, 3, 0), 0);
    CHECK_INT(point(&s, 0, 4, 0), 6);
    CHECK_U64(s.samples[0], 1);
    CHECK_U64(s.samples[1], 2);
    CHECK_U64(s.samples[2], 0);		/* no sample fell into bins 4 and 5 */
    CHECK_U64(s.samples[3], 0);
    CHECK_U64(s.samples[4], 1);
    /* a clock stepped back: into the last point, nothing lost */
    sample1(&s, 1000, "scratch", 20);
    CHECK_U64(s.n, 5);
    CHECK_INT(point(&s, 0, 4, 0), 10);
    CHECK_U64(s.samples[4], 2);
    lc_series_free(&s);
    CHECK_U64(s.n, 0);
    CHECK_U64(s.nfs, 0);
}

static void
test_merge_lone_first(void)
{
    struct lc_series	s;
    size_t		i;

    lc_series_init(&s, 1, 1000);
    /* bins 3 .. 514: 512 points, the first one at an odd bin */
    for (i = 0; i < LC_SERIES_POINTS; i++)
	sample1(&s, (3 + i) * 1000, "a", i + 1);
    CHECK_U64(s.n, LC_SERIES_POINTS);
    CHECK_U64(s.level, 0);
    sample1(&s, 515 * 1000, "a", 1000);	/* bin 515: no room, merge */
    CHECK_U64(s.level, 1);
    CHECK_U64(s.first, 1);			/* bin 3 alone in bin 1 of level 1 */
    CHECK_U64(s.n, 257);			/* bins 1 .. 257 of level 1 */
    CHECK_INT(point(&s, 0, 0, 0), 1);		/* the lone first point */
    CHECK_INT(point(&s, 0, 1, 0), 2);		/* bins 4, 5: 1 + 1 */
    CHECK_U64(s.samples[0], 1);
    CHECK_U64(s.samples[1], 2);
    CHECK_INT(point(&s, 0, 256, 0), 1 + (1000 - 512));	/* bins 514, 515 */
    lc_series_free(&s);
}

static void
test_fs_comes_and_goes(void)
{
    struct lc_series	s;
    uint64_t		a[2] = { 10, 1 }, b[2] = { 7, 7 };
    struct lc_series_in	both[2] = { { "home", a }, { "scratch", b } };

    lc_series_init(&s, 2, 1000);
    CHECK_INT(lc_series_sample(&s, 1000, both, 1), 0);		/* home only */
    CHECK_INT(lc_series_sample(&s, 2000, both, 2), 0);		/* scratch appears */
    CHECK_INT(lc_series_sample(&s, 3000, both + 1, 1), 0);	/* home gone: at zero */
    CHECK_U64(s.nfs, 2);
    CHECK_STR(s.fs[0].name, "home");
    CHECK_STR(s.fs[1].name, "scratch");
    CHECK_INT(point(&s, 0, 0, 0), 10);
    CHECK_INT(point(&s, 0, 1, 0), 0);
    CHECK_INT(point(&s, 0, 2, 0), -10);	/* its contribution leaves the totals */
    CHECK_INT(point(&s, 0, 2, 1), -1);
    CHECK_INT(point(&s, 1, 0, 0), 0);		/* before it was seen: zeros */
    CHECK_INT(point(&s, 1, 1, 0), 7);
    CHECK_INT(point(&s, 1, 2, 1), 0);
    lc_series_free(&s);
}

static void
test_clock_jump(void)
{
    struct lc_series	s;

    lc_series_init(&s, 1, 10000);
    sample1(&s, 1700000000000ull, "a", 1);
    sample1(&s, UINT64_MAX - 5, "a", 3);	/* a clock stepped to the end of time */
    CHECK(s.n <= LC_SERIES_POINTS);
    CHECK_INT(point(&s, 0, 0, 0) + (s.n > 1 ? point(&s, 0, s.n - 1, 0) : 0), 3);
    lc_series_free(&s);
    CHECK_U64(lc_series_next(10000, 1700000000001ull), 1700000010000ull);
    CHECK_U64(lc_series_next(10000, 1700000000000ull), 1700000000000ull);
    CHECK_U64(lc_series_next(10000, UINT64_MAX - 1), UINT64_MAX);
    CHECK_U64(lc_series_width(1000, 70), UINT64_MAX);
}

/* ---- against a plain model ---------------------------------------------- */

#define NV	3
#define NFS	3
#define MAXS	4000

static const char *names[NFS] = { "scratch", "home", "work" };

struct smp {
    uint64_t	t;
    int		has[NFS];
    uint64_t	cum[NFS][NV];
};

static uint64_t	rng;
static int	merged_runs, many_merges;	/* runs whose series merged at all, and 4 times or more */

static uint64_t
rnd(void)
{
    return h_rand(&rng);
}

/* the model: every sample kept, the series recomputed from them */
static void
model_check(const struct lc_series *s, const struct smp *smp, int ns, uint32_t iv)
{
    unsigned	level = 0, f, v;
    uint64_t	w, first, last;
    int		k, order[NFS], nseen = 0;
    uint64_t	prev[NFS][NV];
    int64_t	*want = calloc((size_t)LC_SERIES_POINTS * NFS * NV, sizeof(*want));
    uint32_t	cnt[LC_SERIES_POINTS];

    /* the level: the narrowest whose bins span all samples in 512 points */
    for (;;) {
	w = (uint64_t)iv << level;
	if (smp[ns - 1].t / w - smp[0].t / w + 1 <= LC_SERIES_POINTS)
	    break;
	level++;
    }
    first = smp[0].t / w;
    last = smp[ns - 1].t / w;
    CHECK_U64(s->level, level);
    CHECK_U64(s->first, first);
    CHECK_U64(s->n, last - first + 1);
    CHECK(s->n <= LC_SERIES_POINTS);
    if (level > 0)
	CHECK(s->n >= LC_SERIES_POINTS / 2);
    memset(prev, 0, sizeof(prev));
    memset(cnt, 0, sizeof(cnt));
    for (k = 0; k < ns; k++) {
	size_t	i = (size_t)(smp[k].t / w - first);

	cnt[i]++;
	for (f = 0; f < NFS; f++) {
	    int seen = 0;

	    for (int j = 0; j < nseen; j++)
		seen |= order[j] == (int)f;
	    if (!seen && smp[k].has[f])
		order[nseen++] = (int)f;
	    for (v = 0; v < NV; v++) {
		uint64_t now = smp[k].has[f] ? smp[k].cum[f][v] : 0;

		want[(i * NFS + f) * NV + v] += (int64_t)(now - prev[f][v]);
		prev[f][v] = now;
	    }
	}
    }
    CHECK_U64(s->nfs, nseen);
    for (int j = 0; j < nseen && (size_t)j < s->nfs; j++) {
	int64_t	sum[NV] = { 0 };

	f = (unsigned)order[j];
	CHECK_STR(s->fs[j].name, names[f]);
	for (size_t i = 0; i < s->n; i++) {
	    for (v = 0; v < NV; v++) {
		int64_t got = s->fs[j].val[i * NV + v];

		if (got != want[(i * NFS + f) * NV + v]) {
		    CHECK_INT(got, want[(i * NFS + f) * NV + v]);
		    goto done;
		}
		sum[v] += got;
	    }
	}
	/* telescoping: the points sum to the cumulative values at the last sample */
	for (v = 0; v < NV; v++)
	    CHECK_INT(sum[v], (int64_t)prev[f][v]);
    }
    for (size_t i = 0; i < s->n; i++)
	if (s->samples[i] != cnt[i]) {
	    CHECK_U64(s->samples[i], cnt[i]);
	    break;
	}
done:
    free(want);
}

static void
random_run(uint64_t seed)
{
    static struct smp	smp[MAXS];
    struct lc_series	s;
    uint32_t		iv = (uint32_t)(1 + (seed % 3 == 0 ? 0 : 9999));
    int			ns, k;
    uint64_t		t;

    rng = seed * 0x9E3779B97F4A7C15ull + 1;
    ns = 1 + (int)(rnd() % MAXS);
    t = 1700000000000ull + rnd() % 100000;
    memset(smp, 0, sizeof(smp));
    lc_series_init(&s, NV, iv);
    for (k = 0; k < ns; k++) {
	struct lc_series_in	in[NFS];
	size_t			nin = 0;
	uint64_t		r = rnd() % 100;

	/* mostly one interval on, sometimes the same bin, sometimes a gap */
	t += r < 80 ? iv + rnd() % (iv / 4 + 1) : r < 90 ? rnd() % (iv / 2 + 1)
	     : r < 98 ? iv * (rnd() % 50) : iv * (rnd() % 5000);
	smp[k].t = t;
	for (unsigned f = 0; f < NFS; f++) {
	    smp[k].has[f] = rnd() % 10 != 0;
	    for (unsigned v = 0; v < NV; v++) {
		uint64_t before = k ? smp[k - 1].cum[f][v] : 0;

		/* counters grow; now and then one is left out, back to zero */
		smp[k].cum[f][v] = rnd() % 50 == 0 ? 0 : before + rnd() % 1000;
	    }
	    if (smp[k].has[f])
		in[nin++] = (struct lc_series_in){ names[f], smp[k].cum[f] };
	}
	if (lc_series_sample(&s, t, in, nin) < 0) {
	    CHECK(!"out of memory");
	    break;
	}
	CHECK(s.n <= LC_SERIES_POINTS);
    }
    model_check(&s, smp, ns, iv);
    merged_runs += s.level > 0;
    many_merges += s.level >= 4;
    lc_series_free(&s);
}

/* ---- the served value ---------------------------------------------------- */

static uint32_t
le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t
le64(const unsigned char *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static void
test_pack(void)
{
    struct lc_series	s;
    uint64_t		a[3] = { 5, 0, 7 }, b[3] = { 1, 0, 0 }, a2[3] = { 4, 0, 9 };
    struct lc_series_in	in[2] = { { "scratch", a }, { "longername", b } };
    const uint32_t	pmids[2] = { 0x37000800u, 0x37001000u }, nvals[2] = { 1, 2 };
    unsigned char	*buf;
    size_t		size, at;

    lc_series_init(&s, 3, 10000);
    CHECK_INT(lc_series_sample(&s, 100000, in, 2), 0);
    in[0].cum = a2;
    CHECK_INT(lc_series_sample(&s, 120000, in, 1), 0);	/* bin 12: bin 11 padded */
    size = lc_series_packed_size(&s, 2);
    /* scratch sends values 0 and 2, longername value 0 alone: 3 points of each */
    CHECK_U64(size, 40 + 16 + 16 + (16 + 8 + 2 * 24) + (16 + 8 + 1 * 24));
    buf = malloc(size);
    lc_series_pack(&s, pmids, nvals, 2, buf);
    CHECK_U64(le32(buf), LC_SERIES_MAGIC);
    CHECK(memcmp(buf, "LCS2", 4) == 0);
    CHECK_U64(le32(buf + 4), 0);		/* level */
    CHECK_U64(le32(buf + 8), 10000);		/* interval ms */
    CHECK_U64(le32(buf + 12), 3);		/* points */
    CHECK_U64(le64(buf + 16), 10);		/* first bin */
    CHECK_U64(le32(buf + 24), 2);		/* filesystems */
    CHECK_U64(le32(buf + 28), 3);		/* values a point */
    CHECK_U64(le32(buf + 32), 2);		/* metrics */
    CHECK_U64(le32(buf + 36), 0);
    CHECK_U64(le32(buf + 40), pmids[0]);
    CHECK_U64(le32(buf + 44), 1);
    CHECK_U64(le32(buf + 48), pmids[1]);
    CHECK_U64(le32(buf + 52), 2);
    CHECK_U64(le32(buf + 56), 1);		/* samples: 1, 0, 1, and 4 bytes of padding */
    CHECK_U64(le32(buf + 60), 0);
    CHECK_U64(le32(buf + 64), 1);
    CHECK_U64(le32(buf + 68), 0);
    at = 72;
    CHECK_U64(le32(buf + at), 7);
    CHECK(memcmp(buf + at + 4, "scratch", 7) == 0 && buf[at + 11] == 0 && buf[at + 12] == 0);
    at += 16;					/* 4 + 7 rounded up to 16 */
    CHECK_U64(le64(buf + at), 0x5);		/* values 0 and 2 are sent, 1 is zero throughout */
    at += 8;
    CHECK_INT((int64_t)le64(buf + at), 5);	/* value 0, point after point */
    CHECK_INT((int64_t)le64(buf + at + 8), 0);	/* the padded bin */
    CHECK_INT((int64_t)le64(buf + at + 16), -1);	/* 4 - 5 */
    CHECK_INT((int64_t)le64(buf + at + 24), 7);	/* then value 2 */
    CHECK_INT((int64_t)le64(buf + at + 40), 2);
    at += 48;
    CHECK_U64(le32(buf + at), 10);
    CHECK(memcmp(buf + at + 4, "longername", 10) == 0 && buf[at + 14] == 0);
    at += 16;
    CHECK_U64(le64(buf + at), 0x1);
    at += 8;
    CHECK_INT((int64_t)le64(buf + at), 1);
    CHECK_INT((int64_t)le64(buf + at + 8), 0);
    CHECK_INT((int64_t)le64(buf + at + 16), -1);	/* gone: at zero */
    CHECK_U64(at + 24, size);
    free(buf);
    lc_series_free(&s);
}

/*
 * A random series (values per point across one to four bitmap words, few of
 * them touched, counters that go back to zero, filesystems that come and
 * go) packed and read back byte by byte against the store: header, table,
 * samples, and per filesystem its name, a bit for exactly the values not
 * zero at some point, and those values' points column after column.
 */
static void
random_pack(uint64_t seed)
{
    struct lc_series	s;
    unsigned		nv, nm, v, f;
    uint32_t		pmids[256], nvals[256];
    uint64_t		cum[NFS][256] = { { 0 } };
    int			touched[NFS][256];
    unsigned char	*buf, *p;
    size_t		size, i;

    rng = seed * 0x9E3779B97F4A7C15ull + 7;
    nv = 1 + (unsigned)(rnd() % 256);
    lc_series_init(&s, nv, 1000);
    for (f = 0; f < NFS; f++)
	for (v = 0; v < nv; v++)
	    touched[f][v] = rnd() % 8 == 0;
    for (int k = 0, ns = 1 + (int)(rnd() % 40); k < ns; k++) {
	struct lc_series_in	in[NFS];
	size_t			nin = 0;

	for (f = 0; f < NFS; f++) {
	    for (v = 0; v < nv; v++)
		if (touched[f][v])
		    cum[f][v] = rnd() % 30 == 0 ? 0 : cum[f][v] + rnd() % 3;
	    if (rnd() % 5 != 0)
		in[nin++] = (struct lc_series_in){ names[f], cum[f] };
	}
	CHECK_INT(lc_series_sample(&s, 5000000 + (uint64_t)k * 1000 * (1 + rnd() % 3), in, nin), 0);
    }
    /* the table: metrics of 1 to 8 values, adding up to nv */
    for (nm = 0, v = 0; v < nv; nm++) {
	nvals[nm] = (uint32_t)(1 + rnd() % 8);
	if (nvals[nm] > nv - v)
	    nvals[nm] = nv - v;
	pmids[nm] = (uint32_t)rnd();
	v += nvals[nm];
    }
    size = lc_series_packed_size(&s, nm);
    buf = malloc(size);
    lc_series_pack(&s, pmids, nvals, nm, buf);
    CHECK(memcmp(buf, "LCS2", 4) == 0);
    CHECK_U64(le32(buf + 4), s.level);
    CHECK_U64(le32(buf + 12), s.n);
    CHECK_U64(le64(buf + 16), s.first);
    CHECK_U64(le32(buf + 24), s.nfs);
    CHECK_U64(le32(buf + 28), nv);
    CHECK_U64(le32(buf + 32), nm);
    p = buf + 40;
    for (i = 0; i < nm; i++, p += 8)
	if (le32(p) != pmids[i] || le32(p + 4) != nvals[i])
	    CHECK(!"the metric table read back");
    for (i = 0; i < s.n; i++, p += 4)
	if (le32(p) != s.samples[i])
	    CHECK_U64(le32(p), s.samples[i]);
    p += s.n % 2 * 4;
    for (f = 0; f < s.nfs; f++) {
	size_t	len = le32(p), words = (nv + 63) / 64;

	CHECK_U64(len, strlen(s.fs[f].name));
	CHECK(memcmp(p + 4, s.fs[f].name, len) == 0);
	p += (4 + len + 7) / 8 * 8;
	const unsigned char *bitmap = p, *col = p + words * 8;

	for (v = 0; v < words * 64; v++) {
	    int	set = (int)(le64(bitmap + v / 64 * 8) >> (v % 64) & 1), nonzero = 0;

	    for (i = 0; v < nv && i < s.n; i++)
		nonzero |= s.fs[f].val[i * nv + v] != 0;
	    if (set != nonzero) {
		CHECK_INT(set, nonzero);	/* and no bit past nvalues */
		break;
	    }
	    if (!set)
		continue;
	    for (i = 0; i < s.n; i++, col += 8)
		if ((int64_t)le64(col) != s.fs[f].val[i * nv + v]) {
		    CHECK_INT((int64_t)le64(col), s.fs[f].val[i * nv + v]);
		    break;
		}
	}
	p = (unsigned char *)col;
    }
    CHECK_U64((size_t)(p - buf), size);
    free(buf);
    lc_series_free(&s);
}

void
test_series(void)
{
    test_bins_and_gaps();
    test_merge_lone_first();
    test_fs_comes_and_goes();
    test_clock_jump();
    for (uint64_t seed = 1; seed <= 300; seed++)
	random_run(seed);
    /* the runs did merge, often and deep */
    CHECK(merged_runs > 100);
    CHECK(many_merges > 10);
    test_pack();
    for (uint64_t seed = 1; seed <= 300; seed++)
	random_pack(seed);
}
