#include "harness.h"
#include "parse_common.h"

static struct lc_slice
S(const char *s)
{
    struct lc_slice x = { s, strlen(s) };
    return x;
}

static int
ptime(const char *s, struct lc_time *t)
{
    return lc_parse_time_value(S(s), t);
}

void
test_common(void)
{
    struct lc_time	t;
    uint64_t		v;

    /* numbers: full u64 range, nothing beyond */
    CHECK(lc_parse_u64(S("0"), &v) == 0 && v == 0);
    CHECK(lc_parse_u64(S("18446744073709551615"), &v) == 0 && v == UINT64_MAX);
    CHECK(lc_parse_u64(S("18446744073709551616"), &v) < 0);
    CHECK(lc_parse_u64(S("99999999999999999999"), &v) < 0);
    CHECK(lc_parse_u64(S(""), &v) < 0);
    CHECK(lc_parse_u64(S("12a"), &v) < 0);
    CHECK(lc_parse_u64(S("-1"), &v) < 0);
    /* %lld-printed sums past 2^63 come back modulo 2^64 */
    CHECK(lc_parse_s64_mod(S("-1"), &v) == 0 && v == UINT64_MAX);
    CHECK(lc_parse_s64_mod(S("-9223372036854775808"), &v) == 0 && v == (uint64_t)1 << 63);
    CHECK(lc_parse_s64_mod(S("-9223372036854775809"), &v) < 0);
    CHECK(lc_parse_s64_mod(S("9223372036854775807"), &v) == 0 && v == INT64_MAX);
    CHECK(lc_parse_s64_mod(S("-"), &v) < 0);

    /* 1.8-2.9: usec NOT zero-padded: .57342 means 0.057342 s */
    CHECK(ptime(" 1420750934.57342 secs.usecs", &t) == 0);
    CHECK_U64(t.sec, 1420750934);
    CHECK_U64(t.nsec, 57342000);
    /* rpc_stats 2.0-2.9 form */
    CHECK(ptime(":         1497642348.919552 (secs.usecs)", &t) == 0 && t.nsec == 919552000);
    /* 2.10+ nsecs */
    CHECK(ptime("             1510950459.787092770 secs.nsecs", &t) == 0);
    CHECK_U64(t.nsec, 787092770);
    /* mdc rpc_stats 2.10-2.14: %9lu, space padded */
    CHECK(ptime(":         1510950459. 83304874 (secs.nsecs)", &t) == 0);
    CHECK_U64(t.sec, 1510950459);
    CHECK_U64(t.nsec, 83304874);
    /* 2.15.0: colon after the padding */
    CHECK(ptime("            : 4711.000000001 secs.nsecs", &t) == 0 && t.sec == 4711 && t.nsec == 1);
    /* very old "secs:usecs" */
    CHECK(ptime(":         1100000000:250 (secs:usecs)", &t) == 0 && t.nsec == 250000);
    CHECK(ptime(" 12.5 secs.usecs", &t) == 0 && t.nsec == 5000);
    CHECK(ptime(" abc secs.nsecs", &t) < 0 && !t.present);
    CHECK(ptime(" 12. secs.nsecs", &t) < 0);
    CHECK(ptime(" 12.1234567890 secs.nsecs", &t) < 0);
    CHECK(ptime(" 12.1234567 secs.usecs", &t) < 0);
    CHECK(ptime("", &t) < 0);

    /* line iteration never needs a NUL and strips \r */
    {
	const char	src[] = "a\r\nbb\n\nccc";
	char		*b = h_exact(src, sizeof(src) - 1);
	const char	*cur = b, *end = b + sizeof(src) - 1;
	struct lc_slice	l;
	int		n = 0;

	while (lc_next_line(&cur, end, &l)) {
	    if (n == 0) CHECK(l.n == 1 && l.p[0] == 'a');
	    if (n == 1) CHECK(l.n == 2);
	    if (n == 2) CHECK(l.n == 0);
	    if (n == 3) CHECK(l.n == 3 && l.p[2] == 'c');
	    n++;
	}
	CHECK_INT(n, 4);
	free(b);
    }
}
