#include "harness.h"
#include "parse_stats.h"

static struct lstats st;

static int
parse(const char *text)
{
    size_t	len = strlen(text);
    char	*b = h_exact(text, len);
    int		sts = lstats_parse(b, len, &st);

    free(b);
    return sts;
}

static uint64_t
count(const char *name)
{
    const struct lstats_counter *c = lstats_find(&st, name);
    return c ? c->count : (uint64_t)-12345;
}

static uint64_t
sum(const char *name)
{
    const struct lstats_counter *c = lstats_find(&st, name);
    return (c && c->nvals >= 3) ? c->sum : (uint64_t)-12345;
}

static int
nvals(const char *name)
{
    const struct lstats_counter *c = lstats_find(&st, name);
    return c ? c->nvals : -1;
}

static const char *
unit(const char *name)
{
    const struct lstats_counter *c = lstats_find(&st, name);
    return c ? c->unit : "(missing)";
}

/* 1.8 llite: usec unpadded, [regs], read/write_bytes min max sum, no sumsq */
static const char v18[] =
"snapshot_time             1420750934.57342 secs.usecs\n"
"dirty_pages_hits          1038 samples [regs]\n"
"read_bytes                2050 samples [bytes] 0 1048576 1879048192\n"
"write_bytes               4096 samples [bytes] 1 1048576 2147483648\n"
"brw_read                  1800 samples [pages] 1 256 458752\n"
"open                      10271 samples [regs]\n"
"lockless_truncate         2 samples [regs]\n";

/* 2.9 osc stats: same header form */
static const char v29[] =
"snapshot_time             1497642348.919552 secs.usecs\n"
"req_waittime              2087 samples [usec] 54 193874 1830277 57151542913\n"
"ldlm_cancel               4 samples [usec] 123 456 1000 300000\n";

/* 2.10.1 osc stats (HPE fixture in the notes) */
static const char v210[] =
"snapshot_time             1510950459.787092770 secs.nsecs\n"
"req_waittime              18215581 samples [usec] 69 1348857 110282569237 8342874290406023\n"
"req_active                18215582 samples [reqs] 1 17 83626277 470089669\n"
"write_bytes               18210280 samples [bytes] 4096 4194304 65298098221056 10009909738331963392\n"
"ost_write                 18210286 samples [usec] 119 1348857 110277857878 8341476394008222\n";

/* 2.12 llite: [regs] plus byte counters */
static const char v212[] =
"snapshot_time             1651234567.000005000 secs.nsecs\n"
"read_bytes                81920 samples [bytes] 4096 16777216 343597383680\n"
"open                      5000 samples [regs]\n"
"getxattr_hits             50 samples [regs]\n";

/* 2.15.0/2.15.1: monotonic snapshot, start 0, elapsed == snapshot (LU-16231) */
static const char v2150[] =
"snapshot_time             351017.120381222 secs.nsecs\n"
"start_time                0.000000000 secs.nsecs\n"
"elapsed_time              351017.120381222 secs.nsecs\n"
"open                      12 samples [usec] 10 90 300 9000\n";

/* 2.15.2+: wall clock, llite latency in [usec], sumsq hitting 2^64-1 */
static const char v2154[] =
"snapshot_time             1715767600.123456789 secs.nsecs\n"
"start_time                1715700000.000000001 secs.nsecs\n"
"elapsed_time              67600.123456788 secs.nsecs\n"
"read_bytes                4000 samples [bytes] 4096 4194304 4294967296 4611686018427387904\n"
"read                      4000 samples [usec] 2 90000 1200000 9000000000\n"
"opencount                 1500 samples [reqs] 1 3 1600 1800\n"
"openclosetime             1400 samples [usec] 100 9000000 900000000 18446744073709551615\n";

/* 2.16: [usecs]/[secs], the INT64_MAX sumsq of the DDN sample */
static const char v216[] =
"snapshot_time             1790277040.614799671 secs.nsecs\n"
"start_time                1790200000.000000000 secs.nsecs\n"
"elapsed_time              77040.614799671 secs.nsecs\n"
"req_waittime              900 samples [usecs] 30 80000 540000 90000000000\n"
"req_timeout               900 samples [secs] 1 10 900 1000\n"
"open                      33538615 samples [usecs] 0 36643 3420852446 695595244118\n"
"openclosetime             33538600 samples [usecs] 1 86400000000 9000000000000000 9223372036854775807\n";

/* 2.16 with enable_stats_header=0: only snapshot_time */
static const char v216nohdr[] =
"snapshot_time             1790277040.614799671 secs.nsecs\n"
"open                      4 samples [usecs] 30 60 180 8500\n";

/* master after 2.17.54: 35-column names */
static const char v35[] =
"snapshot_time                       1800000000.000000001 secs.nsecs\n"
"start_time                          1799999000.000000000 secs.nsecs\n"
"elapsed_time                        1000.000000001 secs.nsecs\n"
"req_waittime                        77 samples [usecs] 10 20 1000 20000\n"
"write_bytes                         3 samples [bytes] 4096 4096 12288 50331648\n";

/* read_ahead_stats <= 2.14: names with spaces, one longer than 25 */
static const char vra[] =
"snapshot_time             1510950459.787092770 secs.nsecs\n"
"hits                      1234 samples [pages]\n"
"misses                    56 samples [pages]\n"
"readpage not consecutive  7 samples [pages]\n"
"miss inside window        2 samples [pages]\n"
"failed grab_cache_page    1 samples [pages]\n"
"read-ahead to EOF         4 samples [pages]\n"
"hit max r-a issue         5 samples [pages]\n"
"wrong page from grab_cache_page 6 samples [pages]\n"
"failed to reach end       8 samples [pages]\n";

void
test_parse_stats(void)
{
    /* 1.8 */
    CHECK_INT(parse(v18), 0);
    CHECK(st.header_seen && st.snapshot.present);
    CHECK_U64(st.snapshot.sec, 1420750934);
    CHECK_U64(st.snapshot.nsec, 57342000);
    CHECK(!st.start.present);
    CHECK_U64(st.n, 6);
    CHECK_U64(count("read_bytes"), 2050);
    CHECK_U64(sum("read_bytes"), 1879048192);
    CHECK_INT(nvals("read_bytes"), 3);
    CHECK_U64(sum("write_bytes"), 2147483648ULL);
    CHECK_STR(unit("dirty_pages_hits"), "regs");
    CHECK_INT(nvals("open"), 0);
    CHECK_U64(count("open"), 10271);
    CHECK(lstats_find(&st, "close") == NULL);	/* omitted zero counter */
    CHECK_INT(st.garbage, 0);

    /* 2.9 */
    CHECK_INT(parse(v29), 0);
    CHECK_U64(st.snapshot.nsec, 919552000);
    CHECK_U64(sum("req_waittime"), 1830277);
    CHECK_INT(nvals("req_waittime"), 4);
    CHECK(lstats_unit_is_usec(unit("req_waittime")));

    /* 2.10 */
    CHECK_INT(parse(v210), 0);
    CHECK_U64(st.snapshot.nsec, 787092770);
    CHECK_U64(count("req_waittime"), 18215581);
    CHECK_U64(sum("write_bytes"), 65298098221056ULL);
    CHECK_U64(lstats_find(&st, "write_bytes")->sumsq, 10009909738331963392ULL);
    CHECK_U64(lstats_find(&st, "write_bytes")->min, 4096);
    CHECK_U64(lstats_find(&st, "write_bytes")->max, 4194304);

    /* 2.12 */
    CHECK_INT(parse(v212), 0);
    CHECK_U64(sum("read_bytes"), 343597383680ULL);
    CHECK_U64(count("getxattr_hits"), 50);

    /* 2.15.0: the monotonic header is still just a header */
    CHECK_INT(parse(v2150), 0);
    CHECK_U64(st.n, 1);
    CHECK_U64(st.snapshot.sec, 351017);
    CHECK(st.start.present && st.start.sec == 0 && st.start.nsec == 0);
    CHECK_U64(st.elapsed.sec, 351017);
    CHECK(lstats_find(&st, "start_time") == NULL);
    CHECK(lstats_find(&st, "elapsed_time") == NULL);

    /* 2.15.4 */
    CHECK_INT(parse(v2154), 0);
    CHECK_U64(st.n, 4);
    CHECK_U64(st.start.nsec, 1);
    CHECK_U64(sum("read"), 1200000);
    CHECK_U64(lstats_find(&st, "openclosetime")->sumsq, UINT64_MAX);
    CHECK_STR(unit("read"), "usec");
    CHECK(!lstats_unit_is_usec(unit("opencount")));

    /* 2.16 */
    CHECK_INT(parse(v216), 0);
    CHECK_STR(unit("req_waittime"), "usecs");
    CHECK(lstats_unit_is_usec(unit("req_waittime")));
    CHECK(!lstats_unit_is_usec(unit("req_timeout")));
    CHECK_U64(count("open"), 33538615);
    CHECK_U64(sum("open"), 3420852446ULL);
    CHECK_U64(lstats_find(&st, "openclosetime")->sumsq, INT64_MAX);
    CHECK_INT(parse(v216nohdr), 0);
    CHECK(st.snapshot.present && !st.start.present && !st.elapsed.present);
    CHECK_U64(count("open"), 4);

    /* 35 columns */
    CHECK_INT(parse(v35), 0);
    CHECK_U64(st.n, 2);
    CHECK_U64(st.snapshot.sec, 1800000000);
    CHECK_U64(st.elapsed.sec, 1000);
    CHECK_U64(sum("write_bytes"), 12288);
    CHECK_INT(st.garbage, 0);

    /* names with spaces */
    CHECK_INT(parse(vra), 0);
    CHECK_U64(st.n, 9);
    CHECK_U64(count("readpage not consecutive"), 7);
    CHECK_U64(count("miss inside window"), 2);
    CHECK_U64(count("hit max r-a issue"), 5);
    CHECK_U64(count("wrong page from grab_cache_page"), 6);
    CHECK_U64(count("failed to reach end"), 8);
    CHECK(lstats_find(&st, "readpage") == NULL);

    /* u64 extremes and %lld wrap-around */
    CHECK_INT(parse("x  18446744073709551615 samples [bytes] 0 18446744073709551615 18446744073709551615 18446744073709551615\n"), 0);
    CHECK_U64(count("x"), UINT64_MAX);
    CHECK_U64(sum("x"), UINT64_MAX);
    CHECK_INT(parse("x  3 samples [bytes] 1 2 -9223372036854775808 5\n"), 0);
    CHECK_U64(sum("x"), (uint64_t)1 << 63);
    CHECK_INT(parse("x  3 samples [bytes] 1 2 -2\n"), 0);
    CHECK_U64(sum("x"), UINT64_MAX - 1);
    /* a count past 2^64 is not a number: the line is garbage */
    CHECK_INT(parse("snapshot_time 1.000000001 secs.nsecs\nx  18446744073709551616 samples [reqs]\n"), 0);
    CHECK_U64(st.n, 0);
    CHECK_INT(st.garbage, 1);
    /* a sumsq past 2^64 leaves min max sum */
    CHECK_INT(parse("x  3 samples [bytes] 1 2 3 18446744073709551616\n"), 0);
    CHECK_INT(nvals("x"), 3);
    CHECK_U64(sum("x"), 3);

    /* count wider than the padding, no padding at all */
    CHECK_INT(parse("a_very_long_counter_name_over_25 123456789012345 samples [reqs]\n"), 0);
    CHECK_U64(count("a_very_long_counter_name_over_25"), 123456789012345ULL);
    /* tabs as separators */
    CHECK_INT(parse("open\t\t7 samples [regs]\n"), 0);
    CHECK_U64(count("open"), 7);
    /* CRLF */
    CHECK_INT(parse("snapshot_time 1.2 secs.usecs\r\nopen 7 samples [regs]\r\n"), 0);
    CHECK_U64(count("open"), 7);
    CHECK_STR(unit("open"), "regs");
    /* no trailing newline */
    CHECK_INT(parse("open                      9 samples [regs]"), 0);
    CHECK_U64(count("open"), 9);

    /* truncated lines: cut before the unit closes, or in the values */
    CHECK_INT(parse("snapshot_time 1.2 secs.usecs\nread_bytes 12 samples [byt"), 0);
    CHECK(lstats_find(&st, "read_bytes") == NULL);
    CHECK_INT(st.garbage, 1);
    CHECK_INT(parse("read_bytes 12 samples [bytes] 4096 8192"), 0);
    CHECK_INT(nvals("read_bytes"), 0);		/* sum unknown, count known */
    CHECK_U64(count("read_bytes"), 12);
    CHECK_INT(parse("open 12 sampl"), -1);

    /* garbage is ignored, header-like counters are not counters */
    CHECK_INT(parse("hello world\n\n   \nsnapshot_time junk\nstart_time 1715767600 secs\n"
		    "open 5 samples [regs]\n12 samples [regs]\n samples [regs]\n"
		    "bad 5samples [regs]\nbad2 x5 samples [regs]\n"), 0);
    CHECK_U64(st.n, 1);
    CHECK_U64(count("open"), 5);
    CHECK(lstats_find(&st, "start_time") == NULL);
    CHECK_INT(st.garbage, 7);
    /* a control character in a name makes the line garbage */
    CHECK_INT(parse("op\x01n 5 samples [regs]\n"), -1);
    /* a unit too long to be real */
    CHECK_INT(parse("open 5 samples [abcdefghijklmnopqrstuvwxyz]\n"), -1);

    /* empty / not a stats file */
    CHECK_INT(parse(""), -1);
    CHECK_INT(parse("\n\n"), -1);
    CHECK_INT(parse("disabled\n write anything to this file to activate\n"), -1);
    CHECK_INT(lstats_parse(NULL, 0, &st), -1);
    /* embedded NULs do not stop or confuse the parser */
    {
	static const char nul[] = "open 5 samples [regs]\n\0\0garbage\nclose 6 samples [regs]\n";
	char	*b = h_exact(nul, sizeof(nul) - 1);

	CHECK_INT(lstats_parse(b, sizeof(nul) - 1, &st), 0);
	CHECK_U64(count("close"), 6);
	free(b);
    }
    /* many counters grow the array */
    {
	char	big[64 * 200], *p = big;
	int	i;

	for (i = 0; i < 200; i++)
	    p += sprintf(p, "c%03d %d samples [reqs]\n", i, i + 1);
	CHECK_INT(parse(big), 0);
	CHECK_U64(st.n, 200);
	CHECK_U64(count("c199"), 200);
    }
    lstats_free(&st);
}
