/* per-fetch self-statistics as the difference of two snapshots (selfstats.h) */
#include "selfstats.h"

static void
snapshot(struct lc_counts *out, const struct lc_counts *c)
{
    int		k;

    for (k = 0; k < LC_NCOUNTS; k++)
	out->n[k] = __atomic_load_n(&c->n[k], __ATOMIC_RELAXED);
}

void
lc_selfstats_fetch_begin(struct lc_selfstats *s)
{
    snapshot(&s->at_start, &s->total);
}

void
lc_selfstats_fetch_end(struct lc_selfstats *s)
{
    struct lc_counts	now;
    int			k;

    snapshot(&now, &s->total);
    /* unsigned: right across a wrap of the 64-bit totals too */
    for (k = 0; k < LC_NCOUNTS; k++)
	s->fetch.n[k] = now.n[k] - s->at_start.n[k];
}
