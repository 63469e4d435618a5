/*
 * Per-fetch self-statistics (selfstats.c): what a fetch returns is what
 * was counted between the begin and end of its refresh, from any number
 * of reader threads, both passes of a refresh included, and nothing
 * counted outside a fetch (an instance request) changes it.
 */
#include <pthread.h>
#include "harness.h"
#include "selfstats.h"

#define NTHREADS	4
#define PER_THREAD	20000

static struct lc_selfstats	s;

/* each thread counts i % LC_NCOUNTS for i < PER_THREAD: 5000 of each kind */
static void *
reader(void *arg)
{
    int		i;

    (void)arg;
    for (i = 0; i < PER_THREAD; i++)
	lc_count(&s, (enum lc_count)(i % LC_NCOUNTS));
    return NULL;
}

/* one pass of a refresh on NTHREADS reader threads */
static void
pass(void)
{
    pthread_t	t[NTHREADS];
    int		i;

    for (i = 0; i < NTHREADS; i++)
	CHECK(pthread_create(&t[i], NULL, reader, NULL) == 0);
    for (i = 0; i < NTHREADS; i++)
	pthread_join(t[i], NULL);
}

static void
check_fetch(uint64_t each, const char *what)
{
    int		k;

    for (k = 0; k < LC_NCOUNTS; k++) {
	if (s.fetch.n[k] != each)
	    fprintf(stderr, "selfstats %s: counter %d\n", what, k);
	CHECK_U64(s.fetch.n[k], each);
    }
}

void
test_selfstats(void)
{
    const uint64_t one_pass = (uint64_t)NTHREADS * PER_THREAD / LC_NCOUNTS;
    int		k;

    memset(&s, 0, sizeof(s));

    /* a fetch that reads nothing (agent.fetch.* alone): all 0 */
    lc_selfstats_fetch_begin(&s);
    lc_selfstats_fetch_end(&s);
    check_fetch(0, "empty fetch");

    /* one pass on four threads: every increment is there, once */
    lc_selfstats_fetch_begin(&s);
    pass();
    lc_selfstats_fetch_end(&s);
    check_fetch(one_pass, "one pass");
    for (k = 0; k < LC_NCOUNTS; k++)
	CHECK_U64(s.total.n[k], one_pass);

    /* counting outside a fetch (an instance request refreshes too) does
     * not change what the last fetch returns, nor the next one */
    lc_count(&s, LC_FILES_READ);
    lc_count(&s, LC_BUDGET_SKIPS);
    check_fetch(one_pass, "after an instance request");

    /* the refresh read twice (devices changed under it): both passes */
    lc_selfstats_fetch_begin(&s);
    pass();
    pass();
    lc_selfstats_fetch_end(&s);
    check_fetch(2 * one_pass, "two passes");
    CHECK_U64(s.total.n[LC_FILES_READ], 3 * one_pass + 1);
    CHECK_U64(s.total.n[LC_READ_FAILURES], 3 * one_pass);
    CHECK_U64(s.total.n[LC_BUDGET_SKIPS], 3 * one_pass + 1);

    /* the totals wrapping past 2^64 during a fetch */
    for (k = 0; k < LC_NCOUNTS; k++)
	s.total.n[k] = UINT64_MAX - 1;
    lc_selfstats_fetch_begin(&s);
    lc_count(&s, LC_PARSE_FAILURES);
    lc_count(&s, LC_PARSE_FAILURES);
    lc_count(&s, LC_PARSE_FAILURES);
    lc_selfstats_fetch_end(&s);
    CHECK_U64(s.fetch.n[LC_PARSE_FAILURES], 3);
    CHECK_U64(s.fetch.n[LC_FILES_READ], 0);
    CHECK_U64(s.total.n[LC_PARSE_FAILURES], 1);
}
