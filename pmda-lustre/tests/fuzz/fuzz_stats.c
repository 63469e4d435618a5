/* lprocfs "stats" files: llite/osc/mdc stats, md_stats, read_ahead_stats */
#include "fuzz_common.h"
#include "parse_stats.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct lstats st;	/* reused, as the agent does */
    size_t	i;
    int		sts;

    sts = lstats_parse((const char *)data, size, &st);
    FUZZ_ASSERT(sts == 0 || sts == -1);
    FUZZ_ASSERT(st.n <= st.cap);
    for (i = 0; i < st.n; i++) {
	const struct lstats_counter *c = &st.c[i];

	FUZZ_ASSERT(c->name[0] != '\0' && fuzz_clean_string(c->name, LSTATS_NAME_MAX));
	FUZZ_ASSERT(fuzz_clean_string(c->unit, LSTATS_UNIT_MAX));
	FUZZ_ASSERT(c->nvals == 0 || c->nvals == 3 || c->nvals == 4);
	FUZZ_ASSERT(lstats_find(&st, c->name) != NULL);
    }
    FUZZ_ASSERT(!st.snapshot.present || st.snapshot.nsec < 1000000000u);
    FUZZ_ASSERT(!st.start.present || st.start.nsec < 1000000000u);
    if (sts == -1)
	FUZZ_ASSERT(st.n == 0 && !st.header_seen);

    /* with a filter (as the agent reads osc stats): the same counters, a subset */
    {
	static const char * const want[] = { "read_bytes", "write_bytes", "req_waittime" };
	static struct lstats fst = { .want = want, .nwant = 3 };
	size_t	k, m = 0;

	FUZZ_ASSERT(lstats_parse((const char *)data, size, &fst) == sts);
	FUZZ_ASSERT(fst.lines == st.lines);
	for (i = 0; i < st.n; i++) {
	    for (k = 0; k < 3; k++)
		if (strcmp(st.c[i].name, want[k]) == 0)
		    break;
	    if (k == 3)
		continue;
	    FUZZ_ASSERT(m < fst.n && strcmp(fst.c[m].name, st.c[i].name) == 0 &&
			strcmp(fst.c[m].unit, st.c[i].unit) == 0 &&
			fst.c[m].count == st.c[i].count && fst.c[m].nvals == st.c[i].nvals &&
			fst.c[m].min == st.c[i].min && fst.c[m].max == st.c[i].max &&
			fst.c[m].sum == st.c[i].sum && fst.c[m].sumsq == st.c[i].sumsq);
	    m++;
	}
	FUZZ_ASSERT(m == fst.n);
    }
    return 0;
}
