#include "harness.h"
#include "parse_rpc_stats.h"

static struct rpc_stats rs;

static int
parse(const char *text)
{
    size_t	len = strlen(text);
    char	*b = h_exact(text, len);
    int		sts = rpc_stats_parse(b, len, &rs);

    free(b);
    return sts;
}

#define PPR_HDR "\n\t\t\tread\t\t\twrite\npages per rpc         rpcs   % cum % |       rpcs   % cum %\n"
#define RIF_HDR "\n\t\t\tread\t\t\twrite\nrpcs in flight        rpcs   % cum % |       rpcs   % cum %\n"
#define OFF_HDR "\n\t\t\tread\t\t\twrite\noffset                rpcs   % cum % |       rpcs   % cum %\n"

/* 1.8: 12-space header, dio gauges, values at column 26, 1 MiB max */
static const char v18[] =
"snapshot_time:            1420750934.57342 (secs.usecs)\n"
"read RPCs in flight:      0\n"
"write RPCs in flight:     1\n"
"dio read RPCs in flight:  2\n"
"dio write RPCs in flight: 3\n"
"pending write pages:      256\n"
"pending read pages:       4\n"
PPR_HDR
"1:\t\t       100  11  11   |          0   0   0\n"
"2:\t\t         0   0  11   |          0   0   0\n"
"4:\t\t         0   0  11   |          0   0   0\n"
"8:\t\t         0   0  11   |          0   0   0\n"
"16:\t\t        50   5  16   |          0   0   0\n"
"32:\t\t         0   0  16   |          0   0   0\n"
"64:\t\t         0   0  16   |          0   0   0\n"
"128:\t\t         0   0  16   |          0   0   0\n"
"256:\t\t       750  83 100   |       1024 100 100\n"
RIF_HDR
"0:\t\t       700  77  77   |       1000  97  97\n"
"1:\t\t       200  22 100   |         24   2 100\n"
OFF_HDR
"0:\t\t       900 100 100   |       1024 100 100\n";

/* 2.9: 9-space header, unpadded usec */
static const char v29[] =
"snapshot_time:         1497642348.919552 (secs.usecs)\n"
"read RPCs in flight:  0\n"
"write RPCs in flight: 0\n"
"pending write pages:  0\n"
"pending read pages:   0\n"
PPR_HDR
"1:\t\t         5 100 100   |          7 100 100\n"
RIF_HDR
"0:\t\t         0   0   0   |          0   0   0\n"
"1:\t\t         5 100 100   |          7 100 100\n"
OFF_HDR
"0:\t\t         5 100 100   |          7 100 100\n";

/* 2.10-2.14 nsecs form; a count wider than %10lu */
static const char v212[] =
"snapshot_time:         1651234567.000005000 (secs.nsecs)\n"
"read RPCs in flight:  8\n"
"write RPCs in flight: 3\n"
"pending write pages:  4096\n"
"pending read pages:   1024\n"
PPR_HDR
"1:\t\t         0   0   0   |          0   0   0\n"
"2:\t\t         0   0   0   |          0   0   0\n"
"4:\t\t         0   0   0   |          0   0   0\n"
"8:\t\t         0   0   0   |          0   0   0\n"
"16:\t\t         0   0   0   |          0   0   0\n"
"32:\t\t         0   0   0   |          0   0   0\n"
"64:\t\t         0   0   0   |          0   0   0\n"
"128:\t\t         0   0   0   |          0   0   0\n"
"256:\t\t         0   0   0   | 12345678901 100 100\n"
"512:\t\t         0   0   0   |          0   0 100\n"
"1024:\t\t         0   0   0   |          0   0 100\n"
"2048:\t\t         0   0   0   |          0   0 100\n"
"4096:\t\t     20480 100 100   |          0   0 100\n"
RIF_HDR
"0:\t\t         0   0   0   |          0   0   0\n"
"1:\t\t     20480 100 100   | 12345678901 100 100\n"
OFF_HDR
"0:\t\t     20480 100 100   | 12345678901 100 100\n";

/* 2.15.0/2.15.1: colon AFTER the padding, monotonic times */
static const char v2150[] =
"snapshot_time            : 351017.120381222 secs.nsecs\n"
"start_time               : 0.000000000 secs.nsecs\n"
"elapsed_time             : 351017.120381222 secs.nsecs\n"
"read RPCs in flight:  1\n"
"write RPCs in flight: 0\n"
"pending write pages:  0\n"
"pending read pages:   0\n"
PPR_HDR
"1:\t\t         3  60  60   |          0   0   0\n"
"2:\t\t         2  40 100   |          0   0   0\n"
RIF_HDR
"1:\t\t         5 100 100   |          0   0   0\n"
OFF_HDR
"0:\t\t         5 100 100   |          0   0   0\n";

/* 2.15.2+: "snapshot_time:" in 25 columns, no parentheses, 64 MiB rows */
static const char v2154[] =
"snapshot_time:            1715767600.123456789 secs.nsecs\n"
"start_time:               1715700000.000000001 secs.nsecs\n"
"elapsed_time:             67600.123456788 secs.nsecs\n"
"read RPCs in flight:  0\n"
"write RPCs in flight: 2\n"
"pending write pages:  128\n"
"pending read pages:   0\n"
PPR_HDR
"1:\t\t      1000  50  50   |          0   0   0\n"
"2:\t\t         0   0  50   |          0   0   0\n"
"4:\t\t         0   0  50   |          0   0   0\n"
"8:\t\t         0   0  50   |          0   0   0\n"
"16:\t\t         0   0  50   |          0   0   0\n"
"32:\t\t         0   0  50   |          0   0   0\n"
"64:\t\t         0   0  50   |          0   0   0\n"
"128:\t\t         0   0  50   |          0   0   0\n"
"256:\t\t         0   0  50   |          0   0   0\n"
"512:\t\t         0   0  50   |          0   0   0\n"
"1024:\t\t         0   0  50   |       1000 100 100\n"
"2048:\t\t         0   0  50   |          0   0 100\n"
"4096:\t\t         0   0  50   |          0   0 100\n"
"8192:\t\t         0   0  50   |          0   0 100\n"
"16384:\t\t      1000  50 100   |          0   0 100\n"
RIF_HDR
"1:\t\t      1500  75  75   |       1000 100 100\n"
"2:\t\t       500  25 100   |          0   0 100\n"
OFF_HDR
"0:\t\t      2000 100 100   |       1000 100 100\n";

/* 2.16+ mdc rpc_stats: modify section, literal "%%", then osc-style part */
static const char v216mdc[] =
"snapshot_time:            1790277040.614799671 secs.nsecs\n"
"start_time:               1790200000.000000000 secs.nsecs\n"
"elapsed_time:             77040.614799671 secs.nsecs\n"
"modify_RPCs_in_flight:  0\n"
"\n"
"\t\t\tmodify\n"
"rpcs in flight        rpcs   %% cum %%\n"
"0:\t\t         0   0   0\n"
"1:\t\t     29659  99  99\n"
"\n"
"read RPCs in flight:  0\n"
"write RPCs in flight: 0\n"
"pending write pages:  0\n"
"pending read pages:   0\n"
"\n\t\t\tread\t\t\twrite\n"
"pages per rpc         rpcs   %% cum %% |       rpcs   %% cum %%\n"
"1:\t\t         0   0   0   |          0   0   0\n"
"\n\t\t\tread\t\t\twrite\n"
"rpcs in flight        rpcs   %% cum %% |       rpcs   %% cum %%\n"
"1:\t\t         0   0   0   |          0   0   0\n";

/* 2.17: DIO gauge and an RPC latency section after offset */
static const char v217[] =
"snapshot_time:            1800000000.000000001 secs.nsecs\n"
"start_time:               1799990000.000000000 secs.nsecs\n"
"elapsed_time:             10000.000000001 secs.nsecs\n"
"read RPCs in flight:  0\n"
"write RPCs in flight: 1\n"
"DIO RPCs in flight: 5\n"
"pending write pages:  0\n"
"pending read pages:   0\n"
PPR_HDR
"1:\t\t         0   0   0   |          0   0   0\n"
"2:\t\t         0   0   0   |          4 100 100\n"
RIF_HDR
"1:\t\t         0   0   0   |          4 100 100\n"
OFF_HDR
"0:\t\t         0   0   0   |          4 100 100\n"
"\n\t\t\tread\t\t\twrite\n"
"RPC latency (us)       count   % cum % |       count   % cum %\n"
"0:\t\t         0   0   0   |          0   0   0\n"
"1:\t\t         0   0   0   |          0   0   0\n"
"2:\t\t         0   0   0   |          4 100 100\n";

void
test_parse_rpc_stats(void)
{
    int i;

    CHECK_INT(parse(v18), 0);
    CHECK_U64(rs.snapshot.nsec, 57342000);
    CHECK_U64(rs.write_inflight, 1);
    CHECK_U64(rs.read_inflight, 0);
    CHECK(rs.have & RPCS_READ_INFLIGHT);
    CHECK_U64(rs.dio_read_inflight, 2);
    CHECK_U64(rs.dio_write_inflight, 3);
    CHECK_U64(rs.pending_write_pages, 256);
    CHECK_U64(rs.pending_read_pages, 4);
    CHECK_INT(rs.ppr_maxidx, 8);
    CHECK_U64(rs.ppr_rows, 9);
    CHECK_U64(rs.ppr_read[0], 100);
    CHECK_U64(rs.ppr_read[4], 50);
    CHECK_U64(rs.ppr_read[8], 750);
    CHECK_U64(rs.ppr_write[8], 1024);
    CHECK_U64(rs.ppr_read[9], 0);
    CHECK_INT(rs.garbage, 0);

    CHECK_INT(parse(v29), 0);
    CHECK_U64(rs.snapshot.nsec, 919552000);
    CHECK_INT(rs.ppr_maxidx, 0);
    CHECK_U64(rs.ppr_read[0], 5);
    CHECK_U64(rs.ppr_write[0], 7);
    CHECK(!(rs.have & RPCS_DIO_READ_INFLIGHT));

    CHECK_INT(parse(v212), 0);
    CHECK_U64(rs.read_inflight, 8);
    CHECK_U64(rs.pending_read_pages, 1024);
    CHECK_INT(rs.ppr_maxidx, 12);
    CHECK_U64(rs.ppr_write[8], 12345678901ULL);	/* wider than the column */
    CHECK_U64(rs.ppr_read[12], 20480);
    /* the rpcs-in-flight rows must not land in the histogram */
    CHECK_U64(rs.ppr_read[1], 0);
    CHECK_INT(rs.garbage, 0);

    CHECK_INT(parse(v2150), 0);
    CHECK_U64(rs.snapshot.sec, 351017);
    CHECK(rs.start.present && rs.start.sec == 0);
    CHECK_U64(rs.read_inflight, 1);
    CHECK_U64(rs.ppr_read[1], 2);
    CHECK_INT(rs.garbage, 0);

    CHECK_INT(parse(v2154), 0);
    CHECK_U64(rs.snapshot.nsec, 123456789);
    CHECK_U64(rs.start.nsec, 1);
    CHECK_U64(rs.elapsed.sec, 67600);
    CHECK_INT(rs.ppr_maxidx, 14);
    CHECK_U64(rs.ppr_read[14], 1000);
    CHECK_U64(rs.ppr_write[10], 1000);
    CHECK_U64(rs.write_inflight, 2);
    CHECK_INT(rs.garbage, 0);

    CHECK_INT(parse(v216mdc), 0);
    CHECK_INT(rs.ppr_maxidx, 0);
    CHECK_U64(rs.ppr_read[0], 0);
    CHECK_U64(rs.ppr_read[1], 0);	/* the modify row "1:" is not a bucket */
    CHECK(rs.have & RPCS_WRITE_INFLIGHT);
    CHECK(rs.mod_seen && rs.ppr_seen);
    CHECK_U64(rs.mod_total, 29659);
    CHECK(rs.have & RPCS_MOD_INFLIGHT);
    CHECK_U64(rs.mod_inflight, 0);
    CHECK_U64(rs.start.sec, 1790200000);
    CHECK_INT(rs.garbage, 0);

    /* 2.10-2.14 mdc: space-padded nsec, "%" headers, no DoM block before 2.12 */
    CHECK_INT(parse("snapshot_time:         1510950459. 83304874 (secs.nsecs)\n"
		    "modify_RPCs_in_flight:  3\n\n\t\t\tmodify\n"
		    "rpcs in flight        rpcs   % cum %\n"
		    "0:\t\t         0   0   0\n"
		    "1:\t\t     29659  98  98\n"
		    "2:\t\t       341   1 100\n"), 0);
    CHECK(rs.mod_seen && !rs.ppr_seen);
    CHECK_U64(rs.snapshot.nsec, 83304874);
    CHECK_U64(rs.mod_total, 30000);
    CHECK_U64(rs.mod_inflight, 3);
    CHECK_INT(rs.ppr_maxidx, -1);
    CHECK_INT(rs.garbage, 0);
    /* 2.8-2.9 usecs header; modify rows out of order or garbled are skipped */
    CHECK_INT(parse("snapshot_time:         1497642348.919552 (secs.usecs)\n"
		    "modify_RPCs_in_flight:  0\n\n\t\t\tmodify\n"
		    "rpcs in flight        rpcs   % cum %\n"
		    "0:\t\t         0   0   0\n"
		    "1:\t\t        10 100 100\n"
		    "1:\t\t        99 100 100\n"
		    "2:\t\t         x 100 100\n"
		    "99:\t\t         5 100 100\n"
		    "3:\t\t         5 100 100   |   5 0 0\n"
		    "4:\t\t18446744073709551615 100 100\n"
		    "5:\t\t         1 100 100\n"), 0);
    CHECK_U64(rs.snapshot.nsec, 919552000);
    CHECK_U64(rs.mod_total, UINT64_MAX);	/* saturated, never wrapped */
    CHECK_INT(rs.garbage, 4);
    /* an osc "rpcs in flight" section is not a modify section */
    CHECK_INT(parse(v2154), 0);
    CHECK(!rs.mod_seen);
    CHECK_U64(rs.mod_total, 0);

    CHECK_INT(parse(v217), 0);
    CHECK_U64(rs.dio_inflight, 5);
    CHECK(rs.have & RPCS_DIO_INFLIGHT);
    CHECK_U64(rs.ppr_write[1], 4);
    CHECK_INT(rs.ppr_maxidx, 1);
    CHECK_INT(rs.garbage, 0);

    /* truncated inside a row: the cut row is ignored, earlier rows kept */
    CHECK_INT(parse("snapshot_time:         1.000000001 (secs.nsecs)\n" PPR_HDR
		    "1:\t\t         3 100 100   |          1  50  50\n"
		    "2:\t\t         0   0 100   |          1  5"), 0);
    CHECK_U64(rs.ppr_read[0], 3);
    CHECK_U64(rs.ppr_write[1], 0);
    CHECK_INT(rs.ppr_maxidx, 0);
    CHECK_INT(rs.garbage, 1);
    /* truncated before the histogram */
    CHECK_INT(parse("snapshot_time:         1.000000001 (secs.nsecs)\nread RPCs in flight:  3\n"), -1);
    CHECK_U64(rs.read_inflight, 3);
    CHECK_INT(parse("snapshot_time:         1.000000001 (secs.nsecs)\nread RPCs in fl"), -1);
    CHECK_INT(parse(""), -1);
    CHECK_INT(rpc_stats_parse(NULL, 0, &rs), -1);
    /* a section header with no rows is still the section */
    CHECK_INT(parse(PPR_HDR), 0);
    CHECK_INT(rs.ppr_maxidx, -1);

    /* odd rows: bucket 31 printed as a negative %d, non powers of two,
     * a row repeated, garbage and a negative gauge */
    CHECK_INT(parse("read RPCs in flight:  -1\nwrite RPCs in flight: 99999999999\n" PPR_HDR
		    "1:\t\t         1   0   0   |          0   0   0\n"
		    "3:\t\t         9   0   0   |          9   0   0\n"
		    "garbage line in the middle\n"
		    "2:\t\t         2   0   0   |          0   0   0\n"
		    "2:\t\t        77   0   0   |          0   0   0\n"
		    "-2147483648:\t\t         5   0   0   |          6   0   0\n"
		    "4294967296:\t\t         7   0   0   |          8   0   0\n"
		    "9:\t\t         1   0   0   |\n"
		    "16:\t\t         1   0   0   |          1   0   0   |   1\n"
		    "32:\t\t         x   0   0   |          1   0   0\n"), 0);
    CHECK(!(rs.have & RPCS_READ_INFLIGHT));
    CHECK(!(rs.have & RPCS_WRITE_INFLIGHT));
    CHECK_U64(rs.ppr_read[0], 1);
    CHECK_U64(rs.ppr_read[1], 2);
    CHECK_U64(rs.ppr_read[31], 5);
    CHECK_U64(rs.ppr_write[31], 6);
    CHECK_U64(rs.ppr_read[32], 7);
    CHECK_INT(rs.ppr_maxidx, 32);
    CHECK_U64(rs.ppr_rows, 4);
    for (i = 0; i < RPC_HIST_MAX; i++)
	if (i != 0 && i != 1 && i != 31 && i != 32)
	    CHECK_U64(rs.ppr_read[i], 0);
    /* padding before the colon (found by libFuzzer: the value length was
     * computed from the trimmed key and read past the buffer) */
    CHECK_INT(parse("pending read pages       : 5"), -1);
    CHECK(rs.have & RPCS_PENDING_READ);
    CHECK_U64(rs.pending_read_pages, 5);
    CHECK_INT(parse("snapshot_time  1018.120381222 secs.nsecs\n"
		    "pending read pages       : 0.000000000 secs.nsecs\n"), -1);
    CHECK(!(rs.have & RPCS_PENDING_READ));
    /* '|' glued to the numbers still splits */
    CHECK_INT(parse(PPR_HDR "1:\t\t5 0 0|6 0 0\n"), 0);
    CHECK_U64(rs.ppr_read[0], 5);
    CHECK_U64(rs.ppr_write[0], 6);
    /* a second "pages per rpc" section is ignored (libFuzzer: it used to
     * overwrite the first and push ppr_rows past RPC_HIST_MAX) */
    CHECK_INT(parse(PPR_HDR "1:\t\t         1   0   0   |          2   0   0\n"
		    PPR_HDR "1:\t\t         7   0   0   |          8   0   0\n"
		    "2:\t\t         9   0   0   |          9   0   0\n"), 0);
    CHECK_U64(rs.ppr_read[0], 1);
    CHECK_U64(rs.ppr_write[0], 2);
    CHECK_U64(rs.ppr_read[1], 0);
    CHECK_INT(rs.ppr_maxidx, 0);
    CHECK_U64(rs.ppr_rows, 1);
    /* rows before any section header are not buckets */
    CHECK_INT(parse("1:\t\t         1   0   0   |          0   0   0\n"), -1);
    CHECK_U64(rs.ppr_read[0], 0);
}
