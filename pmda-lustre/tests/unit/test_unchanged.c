/* unchanged.c: which differences count, and that nothing is read past a buffer's end */
#include "harness.h"
#include "unchanged.h"

static struct lc_seen seen;

static int
same(const char *s)
{
    char	*p = h_exact(s, strlen(s));
    int		r = lc_seen_same(&seen, p, strlen(s));

    free(p);
    return r;
}

static void
keep(const char *s)
{
    char	*p = h_exact(s, strlen(s));

    CHECK_INT(lc_seen_keep(&seen, p, strlen(s)), 0);
    free(p);
}

#define HDR215(snap, start, el) \
    "snapshot_time:            " snap " secs.nsecs\n" \
    "start_time:               " start " secs.nsecs\n" \
    "elapsed_time:             " el " secs.nsecs\n"
#define BODY "req_waittime              101 samples [usec] 50 1316 10532 2616916\n" \
	     "write_bytes               1 samples [bytes] 19790 19790 19790 391644100\n"

void
test_unchanged(void)
{
    memset(&seen, 0, sizeof(seen));
    /* nothing kept yet: never the same, not even an empty text */
    CHECK_INT(same(""), 0);
    CHECK_INT(same(BODY), 0);

    /* 2.15+: the clock lines move at every read, the rest counts */
    keep(HDR215("1795325688.670854680", "1795325687.000082399", "1.670772281") BODY);
    CHECK_INT(same(HDR215("1795325689.670854681", "1795325687.000082399", "2.670772282") BODY), 1);
    CHECK_INT(same(HDR215("1795325689.670854681", "1795325699.000082399", "2.670772282") BODY), 0);
    CHECK_INT(same(HDR215("1795325689.670854681", "1795325687.000082399", "2.670772282")
		   "req_waittime              102 samples [usec] 50 1316 10532 2616916\n"
		   "write_bytes               1 samples [bytes] 19790 19790 19790 391644100\n"), 0);
    /* a prefix, a longer text, a lost last newline: all differ */
    CHECK_INT(same(HDR215("1", "1795325687.000082399", "1")
		   "req_waittime              101 samples [usec] 50 1316 10532 2616916\n"), 0);
    CHECK_INT(same(HDR215("1", "1795325687.000082399", "1") BODY "ost_read 1 samples [usec] 1 1 1 1\n"), 0);
    CHECK_INT(same(HDR215("1", "1795325687.000082399", "1")
		   "req_waittime              101 samples [usec] 50 1316 10532 2616916\n"
		   "write_bytes               1 samples [bytes] 19790 19790 19790 391644100"), 0);
    /* a clock line is only ignored in the header, at the top */
    keep("snapshot_time             1420750934.57342 secs.usecs\n" BODY);
    CHECK_INT(same("snapshot_time             1420751000.1 secs.usecs\n" BODY), 1);
    CHECK_INT(same("snapshot_time             1420751000.1 secs.usecs\n" BODY
		   "elapsed_time 5\n"), 0);
    /* the 2.15.0 form, colon after the padding */
    keep("snapshot_time            : 351017.120381222 secs.nsecs\n"
	 "start_time               : 0.000000000 secs.nsecs\n"
	 "elapsed_time             : 351017.120381222 secs.nsecs\n" BODY);
    CHECK_INT(same("snapshot_time            : 351018.1 secs.nsecs\n"
		   "start_time               : 0.000000000 secs.nsecs\n"
		   "elapsed_time             : 351018.1 secs.nsecs\n" BODY), 1);
    /* no header at all (import): the whole text counts */
    keep("import:\n    name: fs0-OST0001-osc-ffff8e34dbe10000\n    state: FULL\n");
    CHECK_INT(same("import:\n    name: fs0-OST0001-osc-ffff8e34dbe10000\n    state: FULL\n"), 1);
    CHECK_INT(same("import:\n    name: fs0-OST0001-osc-ffff8e34dbe10000\n    state: EVICTED\n"), 0);
    /* an empty text kept is the same as an empty text only */
    keep("");
    CHECK_INT(same(""), 1);
    CHECK_INT(same("\n"), 0);
    /* forgotten: parse again */
    keep(BODY);
    CHECK_INT(same(BODY), 1);
    lc_seen_forget(&seen);
    CHECK_INT(same(BODY), 0);
    CHECK_INT(lc_seen_same(&seen, NULL, 0), 0);
    free(seen.p);
}
