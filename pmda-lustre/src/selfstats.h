/*
 * The agent's self-statistics: what the refreshes did with the files they
 * were to read.  One set of counters runs for the life of the agent
 * (lustreclient.agent.*, PM_SEM_COUNTER).  The counts of one fetch
 * (lustreclient.agent.fetch.*) are the difference of two snapshots of
 * those counters, taken when the fetch's refresh starts and when it ends:
 * so reader threads add to one place only (atomically), a refresh that
 * reads in two passes counts both, and nothing that runs outside a fetch
 * (an instance request, which refreshes the device listings) can change
 * what the last fetch returned.  Pure (no libpcp): unit tested.
 */
#ifndef LC_SELFSTATS_H
#define LC_SELFSTATS_H

#include <stdint.h>

enum lc_count {
    LC_FILES_READ,	/* read whole */
    LC_READ_FAILURES,	/* could not be read (not: the file does not exist) */
    LC_PARSE_FAILURES,	/* read but not understood, cut off, over the size cap */
    LC_BUDGET_SKIPS,	/* not read: the fetch time budget was used up */
    LC_NCOUNTS
};

struct lc_counts {
    uint64_t	n[LC_NCOUNTS];
};

struct lc_selfstats {
    struct lc_counts	total;		/* since the agent started */
    struct lc_counts	fetch;		/* the last fetch's refresh */
    struct lc_counts	at_start;	/* total when that refresh began */
};

/* one more of k; safe on any thread */
static inline void
lc_count(struct lc_selfstats *s, enum lc_count k)
{
    __atomic_fetch_add(&s->total.n[k], 1, __ATOMIC_RELAXED);
}

/* around the refresh of a fetch (on the main thread, reader threads idle) */
void lc_selfstats_fetch_begin(struct lc_selfstats *s);
void lc_selfstats_fetch_end(struct lc_selfstats *s);

#endif /* LC_SELFSTATS_H */
