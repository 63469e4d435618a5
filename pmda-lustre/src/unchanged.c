/*
 * See unchanged.h.  Pure: buffers in, no I/O, no globals.
 */
#include <stdlib.h>
#include <string.h>
#include "unchanged.h"

#define MAX_SPANS	4	/* at most 3 header lines are skipped: 4 spans remain */

struct span {
    const char	*p;
    size_t	n;
};

static int
clock_line(const char *p, size_t n)
{
    return (n >= 13 && memcmp(p, "snapshot_time", 13) == 0) ||
	   (n >= 12 && memcmp(p, "elapsed_time", 12) == 0);
}

/*
 * buf as the spans that are compared: the header lines at the top that are
 * not clock lines, then everything from the first non-header line on.
 */
static int
spans(const char *buf, size_t len, struct span out[MAX_SPANS])
{
    const char	*p = buf, *end = buf + len, *nl;
    size_t	n;
    int		k = 0;

    while (p < end && k < MAX_SPANS - 1) {
	nl = memchr(p, '\n', (size_t)(end - p));
	n = (size_t)((nl ? nl + 1 : end) - p);
	if (clock_line(p, n)) {
	    p += n;
	    continue;
	}
	if (!(n >= 10 && memcmp(p, "start_time", 10) == 0))
	    break;		/* the end of the header */
	out[k].p = p;
	out[k].n = n;
	k++;
	p += n;
    }
    out[k].p = p;
    out[k].n = (size_t)(end - p);
    return k + 1;
}

int
lc_seen_same(const struct lc_seen *s, const char *buf, size_t len)
{
    struct span	sp[MAX_SPANS];
    size_t	off = 0;
    int		i, n;

    if (!s->valid || buf == NULL)
	return 0;
    n = spans(buf, len, sp);
    for (i = 0; i < n; i++) {
	if (sp[i].n > s->len - off || memcmp(s->p + off, sp[i].p, sp[i].n) != 0)
	    return 0;
	off += sp[i].n;
    }
    return off == s->len;
}

int
lc_seen_keep(struct lc_seen *s, const char *buf, size_t len)
{
    struct span	sp[MAX_SPANS];
    size_t	need = 0, off = 0;
    int		i, n;

    s->valid = 0;
    if (buf == NULL)
	return -1;
    n = spans(buf, len, sp);
    for (i = 0; i < n; i++)
	need += sp[i].n;
    if (need > s->cap || s->p == NULL) {
	char	*np = realloc(s->p, need ? need : 1);

	if (np == NULL)
	    return -1;
	s->p = np;
	s->cap = need;
    }
    for (i = 0; i < n; i++) {
	memcpy(s->p + off, sp[i].p, sp[i].n);
	off += sp[i].n;
    }
    s->len = need;
    s->valid = 1;
    return 0;
}

void
lc_seen_forget(struct lc_seen *s)
{
    s->valid = 0;
}
