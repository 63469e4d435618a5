/*
 * Slice helpers for the parsers: no allocation, no globals, no I/O.
 */
#include <string.h>
#include "parse_common.h"

int
lc_is_blank(struct lc_slice s)
{
    return lc_trim(s).n == 0;
}

int
lc_is_printable(struct lc_slice s)
{
    size_t	i;

    for (i = 0; i < s.n; i++)
	if ((unsigned char)s.p[i] < 0x20 || (unsigned char)s.p[i] > 0x7e)
	    return 0;
    return 1;
}

int
lc_parse_s64_mod(struct lc_slice s, uint64_t *v)
{
    uint64_t	x;
    int		neg = 0;

    if (s.n > 0 && s.p[0] == '-') {
	neg = 1;
	s.p++;
	s.n--;
    }
    if (lc_parse_u64(s, &x) < 0)
	return -1;
    /* a negative %lld can be at most 2^63 in magnitude */
    if (neg && x > (uint64_t)1 << 63)
	return -1;
    *v = neg ? (uint64_t)0 - x : x;
    return 0;
}

int
lc_parse_time_value(struct lc_slice rest, struct lc_time *t)
{
    const char	*p, *end;
    uint64_t	sec = 0, frac = 0;
    size_t	fdigits = 0, fwidth = 0;
    struct lc_slice unit;
    int		usec;

    t->present = 0;
    rest = lc_trim(rest);
    if (rest.n > 0 && rest.p[0] == ':') {
	rest.p++;
	rest.n--;
	rest = lc_trim(rest);
    }
    p = rest.p;
    end = rest.p + rest.n;
    if (p >= end || !lc_is_digit(*p))
	return -1;
    while (p < end && lc_is_digit(*p)) {
	unsigned d = (unsigned)(*p - '0');

	if (sec > UINT64_MAX / 10 || (sec == UINT64_MAX / 10 && d > UINT64_MAX % 10))
	    return -1;
	sec = sec * 10 + d;
	p++;
    }
    if (p >= end || (*p != '.' && *p != ':'))
	return -1;
    p++;
    /* mdc rpc_stats 2.10-2.14 print the nsec part with %9lu */
    while (p < end && *p == ' ') {
	p++;
	fwidth++;
    }
    while (p < end && lc_is_digit(*p)) {
	if (++fdigits > 9)
	    return -1;
	frac = frac * 10 + (unsigned)(*p - '0');
	p++;
    }
    if (fdigits == 0)
	return -1;
    fwidth += fdigits;
    unit.p = p;
    unit.n = (size_t)(end - p);
    unit = lc_trim(unit);
    usec = fwidth <= 6;		/* no unit word: 7+ digits are nanoseconds */
    {
	/* the first "usec"/"nsec" in the unit word (a byte loop: cheaper than memmem) */
	size_t	i;

	for (i = 0; i + 4 <= unit.n; i++) {
	    if ((unit.p[i] == 'u' || unit.p[i] == 'n') && memcmp(unit.p + i + 1, "sec", 3) == 0) {
		usec = unit.p[i] == 'u';
		break;
	    }
	}
    }
    if (usec) {
	if (frac >= 1000000)
	    return -1;
	frac *= 1000;
    }
    t->sec = sec;
    t->nsec = (uint32_t)frac;
    t->present = 1;
    return 0;
}

int
lc_parse_header_time(struct lc_slice line, struct lc_time *snapshot,
		     struct lc_time *start, struct lc_time *elapsed)
{
    struct lc_slice	rest;
    struct lc_time	*dst;
    size_t		n;

    /* three names, told apart by their first letters: most lines are none */
    if (line.n > 13 && memcmp(line.p, "snapshot_time", 13) == 0) {
	n = 13;
	dst = snapshot;
    } else if (line.n > 10 && memcmp(line.p, "start_time", 10) == 0) {
	n = 10;
	dst = start;
    } else if (line.n > 12 && memcmp(line.p, "elapsed_time", 12) == 0) {
	n = 12;
	dst = elapsed;
    } else {
	return 0;
    }
    if (!lc_is_space(line.p[n]) && line.p[n] != ':')
	return 0;
    rest.p = line.p + n;
    rest.n = line.n - n;
    if (lc_parse_time_value(rest, dst) < 0)
	return -1;
    return 1;
}

/* The one value of a single-value file: without its newline and surrounding blanks. */
static int
single_slice(const char *buf, size_t len, struct lc_slice *s)
{
    if (buf == NULL)
	return -1;
    s->p = buf;
    s->n = len;
    if (s->n > 0 && s->p[s->n - 1] == '\n')
	s->n--;
    *s = lc_trim(*s);
    return 0;
}

int
lc_parse_single_u64(const char *buf, size_t len, uint64_t *v)
{
    struct lc_slice s;

    if (single_slice(buf, len, &s) < 0)
	return -1;
    return lc_parse_u64(s, v);
}

int
lc_parse_single_mb(const char *buf, size_t len, uint64_t *v)
{
    struct lc_slice s, frac;
    size_t	i;

    if (single_slice(buf, len, &s) < 0)
	return -1;
    for (i = 0; i < s.n && s.p[i] != '.'; i++)
	;
    if (i < s.n) {
	frac.p = s.p + i + 1;
	frac.n = s.n - i - 1;
	if (frac.n == 0 || frac.n > 9)
	    return -1;
	for (i = 0; i < frac.n; i++)
	    if (!lc_is_digit(frac.p[i]))
		return -1;
	s.n = (size_t)(frac.p - 1 - s.p);
    }
    return lc_parse_u64(s, v);
}

int
lc_complete_lines(const char *buf, size_t len)
{
    return len == 0 || (buf != NULL && buf[len - 1] == '\n');
}
