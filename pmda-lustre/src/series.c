/*
 * A job's timeline: the series store (series.h).  Pure: no libpcp, no files.
 */
#include <stdlib.h>
#include <string.h>
#include "series.h"
#include "lepack.h"

void
lc_series_init(struct lc_series *s, unsigned nvalues, uint32_t interval_ms)
{
    memset(s, 0, sizeof(*s));
    s->nvalues = nvalues;
    s->interval_ms = interval_ms ? interval_ms : 1;
}

void
lc_series_free(struct lc_series *s)
{
    unsigned	nvalues = s->nvalues;
    uint32_t	interval_ms = s->interval_ms;

    for (size_t f = 0; f < s->nfs; f++) {
	free(s->fs[f].name);
	free(s->fs[f].val);
	free(s->fs[f].last);
    }
    free(s->fs);
    free(s->samples);
    lc_series_init(s, nvalues, interval_ms);
}

uint64_t
lc_series_width(uint32_t interval_ms, unsigned level)
{
    if (level >= 64 || (uint64_t)interval_ms > UINT64_MAX >> level)
	return UINT64_MAX;
    return (uint64_t)interval_ms << level;
}

uint64_t
lc_series_next(uint32_t interval_ms, uint64_t t_ms)
{
    uint64_t	i = interval_ms ? interval_ms : 1;
    uint64_t	up = t_ms + i - 1;

    if (up < t_ms)
	return UINT64_MAX;	/* no multiple of the interval left */
    return up / i * i;
}

/* ---- where a sample goes -------------------------------------------------- */

/* the points this series has once its bins are made one level wider */
static size_t
merged_n(uint64_t first, size_t n)
{
    return n ? (size_t)(((first + n - 1) >> 1) - (first >> 1) + 1) : 0;
}

/*
 * Where a sample at t goes: the level the series must be at (*level) and
 * the point's index there (*idx, possibly == the points it has then: a
 * new point, bins between padded).
 */
static void
place(const struct lc_series *s, uint64_t t_ms, unsigned *level, size_t *idx)
{
    uint64_t	first = s->first;
    size_t	n = s->n;
    unsigned	l = s->level;

    if (n == 0) {
	*level = l;
	*idx = 0;
	return;
    }
    for (;;) {
	uint64_t b = t_ms / lc_series_width(s->interval_ms, l);

	if (b <= first + n - 1) {	/* the last point's bin, or before it */
	    *level = l;
	    *idx = n - 1;
	    return;
	}
	if (b - first < LC_SERIES_POINTS) {
	    *level = l;
	    *idx = (size_t)(b - first);
	    return;
	}
	n = merged_n(first, n);
	first >>= 1;
	l++;
    }
}

/* bins 2j and 2j+1 become bin j of the next level, their values summed */
static void
merge(struct lc_series *s)
{
    size_t	n = merged_n(s->first, s->n), nv = s->nvalues;
    uint64_t	base = s->first >> 1;

    for (size_t i = 0; i < s->n; i++) {
	size_t	j = (size_t)(((s->first + i) >> 1) - base);
	int	lead = i == 0 || j != (size_t)(((s->first + i - 1) >> 1) - base);

	s->samples[j] = lead ? s->samples[i] : s->samples[j] + s->samples[i];
	for (size_t f = 0; f < s->nfs; f++) {
	    int64_t	*to = s->fs[f].val + j * nv, *from = s->fs[f].val + i * nv;

	    for (size_t v = 0; v < nv; v++)
		to[v] = lead ? from[v] : (int64_t)((uint64_t)to[v] + (uint64_t)from[v]);
	}
    }
    s->n = n;
    s->first = base;
    s->level++;
}

/* room for need points in every array; 0, or -1 (nothing lost) */
static int
grow(struct lc_series *s, size_t need)
{
    size_t	cap = s->cap ? s->cap : 16;

    if (need <= s->cap)
	return 0;
    while (cap < need)
	cap *= 2;
    if (cap > LC_SERIES_POINTS)
	cap = LC_SERIES_POINTS;
    uint32_t *smp = realloc(s->samples, cap * sizeof(*smp));
    if (smp == NULL)
	return -1;
    s->samples = smp;
    for (size_t f = 0; f < s->nfs; f++) {
	int64_t *val = realloc(s->fs[f].val, cap * s->nvalues * sizeof(*val));

	if (val == NULL)
	    return -1;	/* the arrays grown so far keep their larger room: harmless */
	s->fs[f].val = val;
    }
    s->cap = cap;
    return 0;
}

/* the filesystem named name, added (all points zero, at zero) when new; NULL: out of memory */
static struct lc_series_fs *
fs_of(struct lc_series *s, const char *name)
{
    struct lc_series_fs	*fs;

    for (size_t f = 0; f < s->nfs; f++)
	if (strcmp(s->fs[f].name, name) == 0)
	    return &s->fs[f];
    if (s->nfs == s->capfs) {
	size_t	ncap = s->capfs ? s->capfs * 2 : 4;
	void	*p = realloc(s->fs, ncap * sizeof(*s->fs));

	if (p == NULL)
	    return NULL;
	s->fs = p;
	s->capfs = ncap;
    }
    fs = &s->fs[s->nfs];
    fs->name = strdup(name);
    fs->val = calloc(s->cap ? s->cap * s->nvalues : 1, sizeof(*fs->val));
    fs->last = calloc(s->nvalues ? s->nvalues : 1, sizeof(*fs->last));
    if (fs->name == NULL || fs->val == NULL || fs->last == NULL) {
	free(fs->name);
	free(fs->val);
	free(fs->last);
	return NULL;
    }
    s->nfs++;
    return fs;
}

/* ---- a sample -------------------------------------------------------------- */

/* point idx of fs gets cum - last, and last becomes cum (NULL: zero) */
static void
difference(struct lc_series_fs *fs, size_t idx, unsigned nvalues, const uint64_t *cum)
{
    int64_t	*p = fs->val + idx * nvalues;

    for (unsigned v = 0; v < nvalues; v++) {
	uint64_t now = cum ? cum[v] : 0;

	p[v] = (int64_t)((uint64_t)p[v] + (now - fs->last[v]));
	fs->last[v] = now;
    }
}

int
lc_series_sample(struct lc_series *s, uint64_t t_ms, const struct lc_series_in *in, size_t nin)
{
    unsigned	level;
    size_t	idx, f, i;

    place(s, t_ms, &level, &idx);
    if (grow(s, (idx + 1 > s->n ? idx + 1 : s->n)) < 0)
	return -1;
    for (i = 0; i < nin; i++)
	if (fs_of(s, in[i].name) == NULL)
	    return -1;
    /* nothing is allocated from here on */
    if (s->n == 0)
	s->first = t_ms / lc_series_width(s->interval_ms, level);
    while (s->level < level)
	merge(s);
    for (; s->n <= idx; s->n++) {
	s->samples[s->n] = 0;
	for (f = 0; f < s->nfs; f++)
	    memset(s->fs[f].val + s->n * s->nvalues, 0, s->nvalues * sizeof(int64_t));
    }
    s->samples[idx]++;
    for (f = 0; f < s->nfs; f++) {
	const uint64_t *cum = NULL;

	for (i = 0; i < nin; i++)
	    if (strcmp(in[i].name, s->fs[f].name) == 0)
		cum = in[i].cum;
	difference(&s->fs[f], idx, s->nvalues, cum);
    }
    return 0;
}

/* ---- the served value ------------------------------------------------------ */

static size_t
name_bytes(const char *name)
{
    return (4 + strlen(name) + 7) & ~(size_t)7;
}

/* the u64 words of a filesystem's presence bitmap */
static size_t
bitmap_words(unsigned nvalues)
{
    return ((size_t)nvalues + 63) / 64;
}

/*
 * Word w of fs's presence bitmap: bit b set when value 64w + b is not zero
 * at some point.  Read point after point, as the store lies.
 */
static uint64_t
presence_word(const struct lc_series *s, const struct lc_series_fs *fs, size_t w)
{
    size_t	lo = w * 64, hi = lo + 64 < s->nvalues ? lo + 64 : s->nvalues;
    uint64_t	bits = 0;

    for (size_t i = 0; i < s->n; i++) {
	const int64_t *row = fs->val + i * s->nvalues;

	for (size_t v = lo; v < hi; v++)
	    bits |= (uint64_t)(row[v] != 0) << (v - lo);
    }
    return bits;
}

/* the columns of fs that are sent */
static size_t
columns_sent(const struct lc_series *s, const struct lc_series_fs *fs)
{
    size_t	k = 0;

    for (size_t w = 0; w < bitmap_words(s->nvalues); w++)
	for (uint64_t bits = presence_word(s, fs, w); bits; bits &= bits - 1)
	    k++;
    return k;
}

size_t
lc_series_packed_size(const struct lc_series *s, unsigned nmetrics)
{
    size_t	size = LC_SERIES_HEADER + (size_t)nmetrics * 8 + ((s->n * 4 + 7) & ~(size_t)7);

    for (size_t f = 0; f < s->nfs; f++)
	size += name_bytes(s->fs[f].name) + bitmap_words(s->nvalues) * 8
		+ columns_sent(s, &s->fs[f]) * s->n * 8;
    return size;
}

/* fs's name, its presence bitmap and its columns sent, at p; returns p past them */
static unsigned char *
pack_fs(const struct lc_series *s, const struct lc_series_fs *fs, unsigned char *p)
{
    size_t	len = strlen(fs->name), pad = name_bytes(fs->name) - 4 - len;
    unsigned	nv = s->nvalues, v;

    p = lc_put32(p, (uint32_t)len);
    memcpy(p, fs->name, len);
    memset(p + len, 0, pad);
    p += len + pad;
    for (size_t w = 0; w < bitmap_words(nv); w++)
	p = lc_put64(p, presence_word(s, fs, w));
    /* column-major: value v at every point, then the next value sent */
    for (size_t w = 0; w < bitmap_words(nv); w++) {
	uint64_t	bits = presence_word(s, fs, w);

	for (v = (unsigned)(w * 64); bits; v++, bits >>= 1) {
	    if (!(bits & 1))
		continue;
	    for (size_t i = 0; i < s->n; i++)
		p = lc_put64(p, (uint64_t)fs->val[i * nv + v]);
	}
    }
    return p;
}

void
lc_series_pack(const struct lc_series *s, const uint32_t *pmids, const uint32_t *nvals,
	       unsigned nmetrics, void *out)
{
    unsigned char	*p = out;
    size_t		i, f;

    p = lc_put32(p, LC_SERIES_MAGIC);
    p = lc_put32(p, s->level);
    p = lc_put32(p, s->interval_ms);
    p = lc_put32(p, (uint32_t)s->n);
    p = lc_put64(p, s->first);
    p = lc_put32(p, (uint32_t)s->nfs);
    p = lc_put32(p, s->nvalues);
    p = lc_put32(p, nmetrics);
    p = lc_put32(p, 0);
    for (i = 0; i < nmetrics; i++) {
	p = lc_put32(p, pmids[i]);
	p = lc_put32(p, nvals[i]);
    }
    for (i = 0; i < s->n; i++)
	p = lc_put32(p, s->samples[i]);
    if (s->n % 2)
	p = lc_put32(p, 0);
    for (f = 0; f < s->nfs; f++)
	p = pack_fs(s, &s->fs[f], p);
}
