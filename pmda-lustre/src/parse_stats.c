/*
 * lprocfs "stats" parser.  A counter line is
 *	<name><pad> <count> samples [<unit>][ <min> <max> <sum>[ <sumsq>]]
 * where the name may contain spaces (read_ahead_stats <= 2.14) and the
 * padding is to 25 or 35 columns or absent for long names, so the line is
 * anchored on the " samples [" token rather than split on whitespace.
 */
#include <stdlib.h>
#include <string.h>
#include "parse_stats.h"

static const char SAMPLES[] = " samples [";

static int
wanted(const struct lstats *st, struct lc_slice name)
{
    size_t	i;

    if (st->want == NULL)
	return 1;
    for (i = 0; i < st->nwant; i++)
	if (lc_slice_eq(name, st->want[i]))
	    return 1;
    return 0;
}

/* 1 = counter parsed into *c, 2 = a counter line not wanted, 0 = not a counter line */
static int
parse_counter(struct lc_slice line, struct lstats_counter *c, const struct lstats *st)
{
    const char	*base = line.p, *end = line.p + line.n, *hit, *p, *q;
    size_t	off = 0;
    struct lc_slice name, num, unit, tok;
    uint64_t	vals[4];
    int		nv;

    for (;;) {
	if (off >= line.n)
	    return 0;
	/* find the '[' of " samples [" (memchr is much cheaper than memmem) */
	hit = memchr(base + off, '[', line.n - off);
	if (hit == NULL)
	    return 0;
	off = (size_t)(hit - base) + 1;
	if ((size_t)(hit - base) < sizeof(SAMPLES) - 2 ||
	    memcmp(hit - (sizeof(SAMPLES) - 2), SAMPLES, sizeof(SAMPLES) - 2) != 0)
	    continue;
	hit -= sizeof(SAMPLES) - 2;	/* at the space before "samples" */
	/* count: digits right before the token, preceded by whitespace */
	q = hit;
	while (q > base && lc_is_digit(q[-1]))
	    q--;
	if (q == hit || q == base || !lc_is_space(q[-1]))
	    continue;
	num.p = q;
	num.n = (size_t)(hit - q);
	p = q;
	while (p > base && lc_is_space(p[-1]))
	    p--;
	name.p = base;
	name.n = (size_t)(p - base);
	name = lc_trim(name);
	if (name.n == 0 || name.n >= LSTATS_NAME_MAX || !lc_is_printable(name))
	    continue;
	if (lc_parse_u64(num, &c->count) < 0)
	    continue;
	break;
    }
    unit.p = hit + sizeof(SAMPLES) - 1;
    p = memchr(unit.p, ']', (size_t)(end - unit.p));
    if (p == NULL)
	return 0;
    unit.n = (size_t)(p - unit.p);
    if (unit.n >= LSTATS_UNIT_MAX || !lc_is_printable(unit))
	return 0;
    if (!wanted(st, name))
	return 2;
    memcpy(c->name, name.p, name.n);
    c->name[name.n] = '\0';
    memcpy(c->unit, unit.p, unit.n);
    c->unit[unit.n] = '\0';

    /* optional min max sum [sumsq]; stop at the first non-number */
    p++;
    nv = 0;
    while (nv < 4 && lc_next_token(&p, end, &tok)) {
	if (lc_parse_s64_mod(tok, &vals[nv]) < 0)
	    break;
	nv++;
    }
    c->min = c->max = c->sum = c->sumsq = 0;
    c->nvals = 0;
    if (nv >= 3) {
	c->min = vals[0];
	c->max = vals[1];
	c->sum = vals[2];
	c->nvals = 3;
    }
    if (nv == 4) {
	c->sumsq = vals[3];
	c->nvals = 4;
    }
    return 1;
}

int
lstats_parse(const char *buf, size_t len, struct lstats *st)
{
    const char		*cur = buf, *end = buf + len;
    struct lc_slice	line;
    struct lstats_counter tmp;
    int			sts;

    st->n = 0;
    st->lines = 0;
    st->garbage = 0;
    st->header_seen = 0;
    memset(&st->snapshot, 0, sizeof(st->snapshot));
    memset(&st->start, 0, sizeof(st->start));
    memset(&st->elapsed, 0, sizeof(st->elapsed));
    if (buf == NULL)
	return -1;

    while (lc_next_line(&cur, end, &line)) {
	if (lc_is_blank(line))
	    continue;
	/*
	 * Header lines never carry " samples [", so test for a counter
	 * first: that way a header value can never be read as a counter.
	 */
	if ((sts = parse_counter(line, &tmp, st)) != 0) {
	    st->lines++;
	    if (sts == 2)
		continue;
	    if (st->n == st->cap) {
		size_t	ncap = st->cap ? st->cap * 2 : 64;
		void	*np = realloc(st->c, ncap * sizeof(*st->c));

		if (np == NULL)
		    return -2;
		st->c = np;
		st->cap = ncap;
	    }
	    st->c[st->n++] = tmp;
	    continue;
	}
	sts = lc_parse_header_time(line, &st->snapshot, &st->start, &st->elapsed);
	if (sts > 0)
	    st->header_seen = 1;
	else
	    st->garbage++;
    }
    return (st->header_seen || st->lines > 0) ? 0 : -1;
}

void
lstats_free(struct lstats *st)
{
    free(st->c);
    st->c = NULL;
    st->n = st->cap = 0;
}

const struct lstats_counter *
lstats_find(const struct lstats *st, const char *name)
{
    size_t	i;

    for (i = 0; i < st->n; i++)
	if (strcmp(st->c[i].name, name) == 0)
	    return &st->c[i];
    return NULL;
}

int
lstats_unit_is_usec(const char *unit)
{
    return strcmp(unit, "usec") == 0 || strcmp(unit, "usecs") == 0;
}
