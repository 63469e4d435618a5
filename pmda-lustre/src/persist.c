/*
 * A job slot kept on disk: the file's layout (persist.h).  Pure: no
 * libpcp, no files.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "persist.h"
#include "lepack.h"

#define FLAG_LISTED	1u
#define FLAG_START0	2u
#define FLAG_START1	4u
#define FLAG_RESET0	256u	/* FLAG_RESET0 << src: reset_seen */
#define FLAG_KNOWN	(FLAG_LISTED | FLAG_START0 | FLAG_START1 | ((1u << LC_JOB_NSOURCES) - 1) * FLAG_RESET0)
#define HEADER_BYTES	48

/* ---- CRC-32 -------------------------------------------------------------- */

uint32_t
lc_crc32(const void *buf, size_t len)
{
    static uint32_t	table[256];
    const unsigned char	*p = buf;
    uint32_t		crc = 0xffffffffu;

    if (table[1] == 0) {
	for (uint32_t i = 0; i < 256; i++) {
	    uint32_t c = i;

	    for (int k = 0; k < 8; k++)
		c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
	    table[i] = c;
	}
    }
    for (size_t i = 0; i < len; i++)
	crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return crc ^ 0xffffffffu;
}

/* ---- writing --------------------------------------------------------------- */

static size_t
str_bytes(const char *s)
{
    return 4 + strlen(s);
}

static size_t
dev_bytes(unsigned kind, const struct lc_jobdev *d)
{
    size_t nv = lc_job_kind_nval(kind);

    return 4 + 4 + 8 + 8 + str_bytes(d->name) + str_bytes(d->id) + nv * 9 + (kind == LC_JK_FS ? 8 : 0);
}

static size_t
series_bytes(const struct lc_series *s)
{
    size_t	size = 4 + 4 + 8 + 4 + 4 + s->n * 4;

    for (size_t f = 0; f < s->nfs; f++)
	size += str_bytes(s->fs[f].name) + s->nvalues * 8 + s->n * s->nvalues * 8;
    return size;
}

size_t
lc_persist_size(const struct lc_persist_slot *p)
{
    size_t	size = HEADER_BYTES + str_bytes(p->id) + 8;

    for (unsigned kind = 0; kind < LC_JK_N; kind++) {
	size += 4;
	for (size_t i = 0; i < p->rec.n[kind]; i++)
	    size += dev_bytes(kind, &p->rec.dev[kind][i]);
    }
    return size + series_bytes(&p->series) + 4;
}

static unsigned char *
put_str(unsigned char *o, const char *s)
{
    size_t	len = strlen(s);

    o = lc_put32(o, (uint32_t)len);
    memcpy(o, s, len);
    return o + len;
}

static unsigned char *
put_double(unsigned char *o, double d)
{
    uint64_t	bits;

    memcpy(&bits, &d, sizeof(bits));
    return lc_put64(o, bits);
}

static unsigned char *
put_dev(unsigned char *o, unsigned kind, const struct lc_jobdev *d)
{
    unsigned	nv = lc_job_kind_nval(kind);
    uint64_t	mask = 0;

    o = lc_put32(o, (d->listed ? FLAG_LISTED : 0) | (d->start_ok[0] ? FLAG_START0 : 0) |
		 (d->start_ok[1] ? FLAG_START1 : 0) | d->reset_seen * FLAG_RESET0);
    o = lc_put32(o, (uint32_t)d->fs);
    o = put_double(o, d->start[0]);
    o = put_double(o, d->start[1]);
    o = put_str(o, d->name);
    o = put_str(o, d->id);
    for (unsigned v = 0; v < nv; v++)
	o = lc_put64(o, d->val[v]);
    for (unsigned v = 0; v < nv; v++)
	*o++ = d->pres[v] ? 1 : 0;
    if (kind == LC_JK_FS) {
	for (unsigned b = 0; b < RPC_HIST_MAX; b++)
	    if (d->binst[b] >= 0)
		mask |= (uint64_t)1 << b;
	o = lc_put64(o, mask);
    }
    return o;
}

static unsigned char *
put_series(unsigned char *o, const struct lc_series *s)
{
    o = lc_put32(o, s->interval_ms);
    o = lc_put32(o, s->level);
    o = lc_put64(o, s->first);
    o = lc_put32(o, (uint32_t)s->n);
    o = lc_put32(o, (uint32_t)s->nfs);
    for (size_t i = 0; i < s->n; i++)
	o = lc_put32(o, s->samples[i]);
    for (size_t f = 0; f < s->nfs; f++) {
	o = put_str(o, s->fs[f].name);
	for (unsigned v = 0; v < s->nvalues; v++)
	    o = lc_put64(o, s->fs[f].last[v]);
	for (size_t i = 0; i < s->n * s->nvalues; i++)
	    o = lc_put64(o, (uint64_t)s->fs[f].val[i]);
    }
    return o;
}

void
lc_persist_encode(const struct lc_persist_slot *p, void *out)
{
    unsigned char	*o = out;
    size_t		size = lc_persist_size(p);

    o = lc_put32(o, LC_PERSIST_MAGIC);
    o = lc_put32(o, LC_PERSIST_VERSION);
    o = lc_put64(o, size);
    o = lc_put32(o, p->slot);
    o = lc_put32(o, p->restarts);
    for (unsigned kind = 0; kind < LC_JK_N; kind++)
	o = lc_put32(o, lc_job_kind_nval(kind));
    o = lc_put32(o, p->series.nvalues);
    o = lc_put32(o, RPC_HIST_MAX);
    o = lc_put32(o, 0);
    o = put_str(o, p->id);
    o = put_double(o, p->begin_time);
    for (unsigned kind = 0; kind < LC_JK_N; kind++) {
	o = lc_put32(o, (uint32_t)p->rec.n[kind]);
	for (size_t i = 0; i < p->rec.n[kind]; i++)
	    o = put_dev(o, kind, &p->rec.dev[kind][i]);
    }
    o = put_series(o, &p->series);
    lc_put32(o, lc_crc32(out, size - 4));
}

/* ---- reading --------------------------------------------------------------- */

/* a cursor over the bytes, every read checked against their end */
struct in {
    const unsigned char	*p;
    size_t		left;
    const char		*why;	/* the first thing found wrong */
};

static int
bad(struct in *in, const char *why)
{
    if (in->why == NULL)
	in->why = why;
    return -1;
}

static int
get32(struct in *in, uint32_t *v)
{
    if (in->left < 4)
	return bad(in, "truncated");
    *v = 0;
    for (int i = 0; i < 4; i++)
	*v |= (uint32_t)in->p[i] << (8 * i);
    in->p += 4;
    in->left -= 4;
    return 0;
}

static int
get64(struct in *in, uint64_t *v)
{
    if (in->left < 8)
	return bad(in, "truncated");
    *v = 0;
    for (int i = 0; i < 8; i++)
	*v |= (uint64_t)in->p[i] << (8 * i);
    in->p += 8;
    in->left -= 8;
    return 0;
}

static int
get_double(struct in *in, double *d)
{
    uint64_t	bits;

    if (get64(in, &bits) < 0)
	return -1;
    memcpy(d, &bits, sizeof(*d));
    return 0;
}

/* a string of at most LC_PERSIST_NAME_MAX bytes, no NUL in it, into a new allocation */
static char *
get_str(struct in *in)
{
    uint32_t	len;
    char	*s;

    if (get32(in, &len) < 0)
	return NULL;
    if (len > LC_PERSIST_NAME_MAX || len > in->left || memchr(in->p, 0, len) != NULL) {
	bad(in, "a name is too long or not a string");
	return NULL;
    }
    if ((s = malloc(len + 1)) == NULL) {
	bad(in, "out of memory");
	return NULL;
    }
    memcpy(s, in->p, len);
    s[len] = '\0';
    in->p += len;
    in->left -= len;
    return s;
}

/* a count of items of at least min_bytes each: no more than the bytes left can hold */
static int
get_count(struct in *in, size_t min_bytes, size_t *n)
{
    uint32_t	v;

    if (get32(in, &v) < 0)
	return -1;
    if ((size_t)v > in->left / min_bytes)
	return bad(in, "a count larger than the file");
    *n = v;
    return 0;
}

static int
get_dev(struct in *in, struct lc_jobrec *rec, unsigned kind)
{
    struct lc_jobdev	*d;
    unsigned		nv = lc_job_kind_nval(kind);
    uint32_t		flags, fs;
    uint64_t		mask;
    double		start[2];
    char		*name, *id = NULL;
    int			sts = -1;

    if (get32(in, &flags) < 0 || get32(in, &fs) < 0 || get_double(in, &start[0]) < 0 ||
	get_double(in, &start[1]) < 0 || (name = get_str(in)) == NULL)
	return -1;
    if ((id = get_str(in)) == NULL)
	goto out;
    if (flags & ~FLAG_KNOWN) {
	bad(in, "unknown device flags");
	goto out;
    }
    if ((d = lc_jobrec_add(rec, kind, -1, name, id)) == NULL) {
	bad(in, "out of memory");
	goto out;
    }
    d->listed = (flags & FLAG_LISTED) != 0;
    d->start_ok[0] = (flags & FLAG_START0) != 0;
    d->start_ok[1] = (flags & FLAG_START1) != 0;
    d->reset_seen = flags / FLAG_RESET0;
    d->start[0] = start[0];
    d->start[1] = start[1];
    d->fs = (int32_t)fs;
    for (unsigned v = 0; v < nv; v++)
	if (get64(in, &d->val[v]) < 0)
	    goto out;
    if (in->left < nv) {
	bad(in, "truncated");
	goto out;
    }
    for (unsigned v = 0; v < nv; v++) {
	if (in->p[v] > 1) {
	    bad(in, "a presence byte is neither 0 nor 1");
	    goto out;
	}
	d->pres[v] = in->p[v];
    }
    in->p += nv;
    in->left -= nv;
    if (kind == LC_JK_FS) {
	if (get64(in, &mask) < 0)
	    goto out;
	for (unsigned b = 0; b < RPC_HIST_MAX; b++)
	    d->binst[b] = mask >> b & 1 ? 0 : -1;
    }
    sts = 0;
out:
    free(name);
    free(id);
    return sts;
}

/* each OSC and MDC's fs index is one of the record's filesystems, or -1 */
static int
check_fs_index(struct in *in, const struct lc_jobrec *rec)
{
    for (unsigned kind = 0; kind < LC_JK_N; kind++)
	for (size_t i = 0; i < rec->n[kind]; i++) {
	    int fs = rec->dev[kind][i].fs;

	    if (fs < -1 || (kind != LC_JK_FS && fs >= (int)rec->n[LC_JK_FS]) || (kind == LC_JK_FS && fs != -1))
		return bad(in, "a device's filesystem is not in the file");
	}
    return 0;
}

static int
get_rec(struct in *in, struct lc_jobrec *rec)
{
    size_t	n;

    for (unsigned kind = 0; kind < LC_JK_N; kind++) {
	if (get_count(in, 4 + 4 + 8 + 8 + 4 + 4 + lc_job_kind_nval(kind) * 9, &n) < 0)
	    return -1;
	for (size_t i = 0; i < n; i++)
	    if (get_dev(in, rec, kind) < 0)
		return -1;
    }
    return check_fs_index(in, rec);
}

static int
get_series_fs(struct in *in, struct lc_series *s)
{
    struct lc_series_fs	*fs = &s->fs[s->nfs];

    memset(fs, 0, sizeof(*fs));
    if ((fs->name = get_str(in)) == NULL)
	return -1;
    fs->val = calloc(s->cap ? s->cap * s->nvalues : 1, sizeof(*fs->val));
    fs->last = calloc(s->nvalues ? s->nvalues : 1, sizeof(*fs->last));
    s->nfs++;	/* freed with the series from here on */
    if (fs->val == NULL || fs->last == NULL)
	return bad(in, "out of memory");
    if (fs->name[0] == '\0')
	return bad(in, "a filesystem without a name");
    for (unsigned v = 0; v < s->nvalues; v++)
	if (get64(in, &fs->last[v]) < 0)
	    return -1;
    for (size_t i = 0; i < s->n * s->nvalues; i++)
	if (get64(in, (uint64_t *)&fs->val[i]) < 0)
	    return -1;
    return 0;
}

static int
get_series(struct in *in, struct lc_series *s, unsigned nvalues)
{
    uint32_t	interval_ms, level;
    uint64_t	first;
    size_t	n, nfs;

    if (get32(in, &interval_ms) < 0 || get32(in, &level) < 0 || get64(in, &first) < 0 ||
	get_count(in, 4, &n) < 0)
	return -1;
    if (interval_ms == 0 || level >= 64 || n > LC_SERIES_POINTS ||
	lc_series_width(interval_ms, level) == UINT64_MAX || first > UINT64_MAX - LC_SERIES_POINTS)
	return bad(in, "the timeline's bins are not bins");
    lc_series_init(s, nvalues, interval_ms);
    s->level = level;
    s->first = first;
    if (get_count(in, 4 + 8 * (size_t)nvalues, &nfs) < 0)
	return -1;
    s->cap = n;
    if (n && (s->samples = calloc(n, sizeof(*s->samples))) == NULL)
	return bad(in, "out of memory");
    s->n = n;
    for (size_t i = 0; i < n; i++)
	if (get32(in, &s->samples[i]) < 0)
	    return -1;
    if (nfs && (s->fs = calloc(nfs, sizeof(*s->fs))) == NULL)
	return bad(in, "out of memory");
    s->capfs = nfs;
    for (size_t f = 0; f < nfs; f++)
	if (get_series_fs(in, s) < 0)
	    return -1;
    return 0;
}

/* the CRC the last 4 bytes hold is that of the bytes before them */
static int
crc_ok(const unsigned char *buf, size_t len)
{
    const unsigned char	*c = buf + len - 4;

    return lc_crc32(buf, len - 4) == (c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24);
}

/*
 * the header: this layout, the size it says, the CRC, this agent's job
 * metric table, and a series table that is this agent's or its first
 * metrics
 */
static int
get_header(struct in *in, const unsigned char *buf, size_t len, struct lc_persist_slot *p,
	   uint32_t *nvalues)
{
    uint32_t	magic, version, slot, nv, hist, zero;
    uint64_t	size;

    if (get32(in, &magic) < 0 || get32(in, &version) < 0 || get64(in, &size) < 0)
	return -1;
    if (magic != LC_PERSIST_MAGIC)
	return bad(in, "not a job slot file");
    if (version != LC_PERSIST_VERSION)
	return bad(in, "another layout version");
    if (size != len)
	return bad(in, size > len ? "truncated" : "bytes beyond its end");
    if (!crc_ok(buf, len))
	return bad(in, "its CRC does not match");
    if (get32(in, &slot) < 0 || get32(in, &p->restarts) < 0)
	return -1;
    if (slot >= LC_JOB_SLOTS)
	return bad(in, "no such slot");
    p->slot = slot;
    for (unsigned kind = 0; kind < LC_JK_N; kind++) {
	if (get32(in, &nv) < 0)
	    return -1;
	if (nv != lc_job_kind_nval(kind))
	    return bad(in, "written by an agent of another job metric table");
    }
    if (get32(in, nvalues) < 0 || get32(in, &hist) < 0 || get32(in, &zero) < 0)
	return -1;
    /* a timeline of an older series table (this one's first metrics) is taken up as it is */
    if (lc_job_series_metrics_of(*nvalues) == 0 || hist != RPC_HIST_MAX || zero != 0)
	return bad(in, "written by an agent of another job metric table");
    return 0;
}

int
lc_persist_decode(const void *buf, size_t len, struct lc_persist_slot *p, const char **why)
{
    struct in	in;
    uint32_t	nvalues;
    char	*id = NULL;

    memset(p, 0, sizeof(*p));
    lc_series_init(&p->series, lc_job_series_nval(), 1);
    if (len < HEADER_BYTES + 4 + 8 + 4 || len > LC_PERSIST_MAX_BYTES) {
	*why = len > LC_PERSIST_MAX_BYTES ? "too large" : "truncated";
	return -1;
    }
    in.p = buf;
    in.left = len - 4;		/* the CRC aside: checked whole */
    in.why = NULL;
    if (get_header(&in, buf, len, p, &nvalues) < 0 || (id = get_str(&in)) == NULL)
	goto fail;
    if (!lc_job_id_ok(id)) {
	bad(&in, "not a job id");
	goto fail;
    }
    strcpy(p->id, id);
    if (get_double(&in, &p->begin_time) < 0)
	goto fail;
    if (!isfinite(p->begin_time) || p->begin_time < 0) {
	bad(&in, "not a begin time");
	goto fail;
    }
    if (get_rec(&in, &p->rec) < 0 || get_series(&in, &p->series, nvalues) < 0)
	goto fail;
    if (in.left != 0) {
	bad(&in, "bytes beyond its end");
	goto fail;
    }
    free(id);
    return 0;
fail:
    free(id);
    *why = in.why ? in.why : "unreadable";
    lc_persist_free(p);
    return -1;
}

void
lc_persist_free(struct lc_persist_slot *p)
{
    lc_jobrec_clear(&p->rec);
    lc_series_free(&p->series);
}
