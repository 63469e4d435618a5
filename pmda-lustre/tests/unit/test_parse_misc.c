/*
 * The small parsers: lnet stats, osc_stats (lockless), single-value
 * files, and the complete-lines check.
 */
#include "harness.h"
#include "parse_common.h"
#include "parse_lnet.h"
#include "parse_lockless.h"

static struct lnet_stats ls;
static struct lockless_stats lk;

static int
lnet(const char *text)
{
    size_t	len = strlen(text);
    char	*b = h_exact(text, len);
    int		sts = lnet_stats_parse(b, len, &ls);

    free(b);
    return sts;
}

static int
lockless(const char *text)
{
    size_t	len = strlen(text);
    char	*b = h_exact(text, len);
    int		sts = lockless_parse(b, len, &lk);

    free(b);
    return sts;
}

static int
single(const char *text, uint64_t *v)
{
    size_t	len = strlen(text);
    char	*b = h_exact(text, len);
    int		sts = lc_parse_single_u64(b, len, v);

    free(b);
    return sts;
}

static int
complete(const char *text)
{
    size_t	len = strlen(text);
    char	*b = h_exact(text, len);
    int		sts = lc_complete_lines(b, len);

    free(b);
    return sts;
}

void
test_parse_misc(void)
{
    uint64_t	v = 7;

    /* lnet: 7 x %u then 4 x %llu */
    CHECK_INT(lnet("0 1024 3 4294967295 57 0 2 18446744073709551615 1099511627776 0 9\n"), 0);
    CHECK_U64(ls.v[LNET_MSGS_MAX], 1024);
    CHECK_U64(ls.v[LNET_ERRORS], 3);
    CHECK_U64(ls.v[LNET_SEND_COUNT], 4294967295ULL);
    CHECK_U64(ls.v[LNET_SEND_LENGTH], UINT64_MAX);
    CHECK_U64(ls.v[LNET_RECV_LENGTH], 1099511627776ULL);
    CHECK_U64(ls.v[LNET_DROP_LENGTH], 9);
    CHECK_INT(lnet("\n1 2 3 4 5 6 7 8 9 10 11 12 13\n"), 0);	/* extra fields ignored */
    CHECK_U64(ls.v[LNET_DROP_LENGTH], 11);
    CHECK_INT(lnet("1 2 3 4 5 6 7 8 9 10\n"), -1);		/* too few */
    CHECK_U64(ls.v[0], 0);
    CHECK_INT(lnet("1 2 3 4294967296 5 6 7 8 9 10 11\n"), -1);	/* a %u past 2^32 */
    CHECK_INT(lnet("1 2 3 4 5 6 7 8 9 10 -11\n"), -1);
    CHECK_INT(lnet("msgs_alloc: 0\n"), -1);
    CHECK_INT(lnet(""), -1);
    CHECK_INT(lnet_stats_parse(NULL, 0, &ls), -1);
    CHECK_INT(lnet("1\t2 3 4 5 6 7 8 9 10 11"), 0);		/* tabs, no newline */

    /* osc_stats: 2.10 (with lockless_truncate) and 2.15+ headers */
    CHECK_INT(lockless("snapshot_time:         1510950459.787092770 (secs.nsecs)\n"
		       "lockless_write_bytes\t\t4096\nlockless_read_bytes\t\t8192\n"
		       "lockless_truncate\t\t3\n"), 0);
    CHECK_U64(lk.write_bytes, 4096);
    CHECK_U64(lk.read_bytes, 8192);
    CHECK_U64(lk.truncate, 3);
    CHECK(lk.have == (LOCKLESS_READ | LOCKLESS_WRITE | LOCKLESS_TRUNCATE));
    CHECK_INT(lockless("snapshot_time:            1790277040.614799671 secs.nsecs\n"
		       "start_time:               1790200000.000000000 secs.nsecs\n"
		       "elapsed_time:             77040.614799671 secs.nsecs\n"
		       "lockless_write_bytes\t\t18446744073709551615\n"
		       "lockless_read_bytes\t\t0\n"), 0);
    CHECK_U64(lk.write_bytes, UINT64_MAX);
    CHECK_U64(lk.start.sec, 1790200000);
    CHECK(!(lk.have & LOCKLESS_TRUNCATE));
    CHECK_INT(lockless("lockless_read_bytes\t\t1 2\nlockless_write_bytes x\n"), -1);
    CHECK_INT(lockless("snapshot_time:         1.000000001 (secs.nsecs)\n"), -1);
    CHECK_INT(lockless_parse(NULL, 0, &lk), -1);

    /* single values */
    CHECK_INT(single("256\n", &v), 0);
    CHECK_U64(v, 256);
    CHECK_INT(single("  8\t", &v), 0);
    CHECK_U64(v, 8);
    CHECK_INT(single("18446744073709551615", &v), 0);
    CHECK_U64(v, UINT64_MAX);
    CHECK_INT(single("18446744073709551616\n", &v), -1);
    CHECK_INT(single("1\n2\n", &v), -1);
    CHECK_INT(single("-1\n", &v), -1);
    CHECK_INT(single("\n", &v), -1);
    CHECK_INT(single("", &v), -1);
    CHECK_INT(lc_parse_single_u64(NULL, 0, &v), -1);

    /* complete lines */
    CHECK_INT(complete(""), 1);
    CHECK_INT(complete("a\n"), 1);
    CHECK_INT(complete("a\nb"), 0);
    CHECK_INT(complete("open                      5 samples [regs]"), 0);
    CHECK_INT(lc_complete_lines(NULL, 0), 1);
}
