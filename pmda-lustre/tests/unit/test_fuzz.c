/*
 * Deterministic mutation fuzzing of every parser: seeds are real file
 * shapes, mutations flip, cut, insert and splice bytes.  Under ASan/UBSan
 * this catches reads past the buffer and undefined arithmetic; the CHECKs
 * assert the output invariants the agent relies on.
 */
#include "harness.h"
#include "parse_import.h"
#include "parse_lnet.h"
#include "parse_lockless.h"
#include "parse_rpc_stats.h"
#include "parse_stats.h"
#include "parse_version.h"
#include "names.h"

static const char *seeds[] = {
    "snapshot_time             1420750934.57342 secs.usecs\n"
    "read_bytes                2050 samples [bytes] 0 1048576 1879048192\n"
    "open                      10271 samples [regs]\n",
    "snapshot_time             1715767600.123456789 secs.nsecs\n"
    "start_time                1715700000.000000001 secs.nsecs\n"
    "elapsed_time              67600.123456788 secs.nsecs\n"
    "openclosetime             1400 samples [usec] 100 9000000 900000000 18446744073709551615\n"
    "readpage not consecutive  7 samples [pages]\n",
    "snapshot_time:            1715767600.123456789 secs.nsecs\n"
    "read RPCs in flight:  0\nwrite RPCs in flight: 2\n"
    "\n\t\t\tread\t\t\twrite\npages per rpc         rpcs   % cum % |       rpcs   % cum %\n"
    "1:\t\t      1000  50  50   |          0   0   0\n"
    "-2147483648:\t\t      1000  50 100   | 12345678901 100 100\n"
    "\n\t\t\tread\t\t\twrite\nrpcs in flight        rpcs   %% cum %% |       rpcs   %% cum %%\n"
    "1:\t\t      1500  75  75   |       1000 100 100\n",
    "snapshot_time            : 351017.120381222 secs.nsecs\nsnapshot_time:         1510950459. 83304874 (secs.nsecs)\n",
    "lustre: 2.7.0\nkernel: patchless_client\nbuild:  2.7.0-RC4\n",
    "2.16.0_ddn56b\n",
    "import:\n    state: FULL\n       connection_attempts: 3\ncurrent_state: FULL\n"
    "    rpcs:\n       inflight: 0\n       timeouts: 2\n",
    "snapshot_time:         1510950459. 83304874 (secs.nsecs)\nmodify_RPCs_in_flight:  0\n"
    "\n\t\t\tmodify\nrpcs in flight        rpcs   %% cum %%\n0:\t\t         0   0   0\n"
    "1:\t\t     29659  99  99\n",
    "0 1024 3 4294967295 57 0 2 18446744073709551615 1099511627776 0 9\n",
    "snapshot_time:         1510950459.787092770 (secs.nsecs)\n"
    "lockless_write_bytes\t\t4096\nlockless_read_bytes\t\t8192\n",
};

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t
rnd(void)
{
    return h_rand(&rng);
}

static const char alphabet[] = "0123456789 \t\n:|[]-.%samplerc_FULL\r\x00\xff";

static size_t
mutate(const char *seed, char *out, size_t cap)
{
    size_t	len = strlen(seed), i, n, pos;
    int		k, rounds = 1 + (int)(rnd() % 4);

    if (len > cap)
	len = cap;
    memcpy(out, seed, len);
    for (k = 0; k < rounds; k++) {
	switch (rnd() % 5) {
	case 0:		/* overwrite a byte */
	    if (len)
		out[rnd() % len] = alphabet[rnd() % (sizeof(alphabet) - 1)];
	    break;
	case 1:		/* cut */
	    if (len)
		len = rnd() % len;
	    break;
	case 2:		/* insert a few bytes */
	    n = 1 + rnd() % 8;
	    if (len + n > cap)
		break;
	    pos = len ? rnd() % len : 0;
	    memmove(out + pos + n, out + pos, len - pos);
	    for (i = 0; i < n; i++)
		out[pos + i] = alphabet[rnd() % (sizeof(alphabet) - 1)];
	    len += n;
	    break;
	case 3:		/* random byte anywhere in 0..255 */
	    if (len)
		out[rnd() % len] = (char)(rnd() & 0xff);
	    break;
	case 4:		/* splice a chunk of itself */
	    if (len > 2) {
		size_t	from = rnd() % len, cnt = 1 + rnd() % (len - from);

		if (len + cnt > cap)
		    break;
		pos = rnd() % len;
		memmove(out + pos + cnt, out + pos, len - pos);
		memmove(out + pos, out + (from >= pos ? from + cnt : from), cnt > len - from ? len - from : cnt);
		len += cnt;
	    }
	    break;
	}
    }
    return len;
}

void
test_fuzz(void)
{
    static char		work[8192];
    struct lstats	st = { 0 };
    struct rpc_stats	rs;
    struct import_info	ii;
    struct lnet_stats	ls;
    struct lockless_stats lk;
    struct lc_devname	dn;
    uint64_t		v;
    char		ver[LC_VERSION_MAX], name[LC_NAME_MAX];
    size_t		s, i, len;
    int			iter, bad = 0;

    for (iter = 0; iter < 30000; iter++) {
	char *b;

	s = rnd() % (sizeof(seeds) / sizeof(seeds[0]));
	len = mutate(seeds[s], work, sizeof(work));
	b = h_exact(work, len);

	if (lstats_parse(b, len, &st) >= -1) {
	    for (i = 0; i < st.n; i++) {
		if (strlen(st.c[i].name) == 0 || strlen(st.c[i].name) >= LSTATS_NAME_MAX ||
		    strlen(st.c[i].unit) >= LSTATS_UNIT_MAX ||
		    (st.c[i].nvals != 0 && st.c[i].nvals != 3 && st.c[i].nvals != 4))
		    bad++;
	    }
	} else {
	    bad++;
	}
	rpc_stats_parse(b, len, &rs);
	if (rs.ppr_maxidx < -1 || rs.ppr_maxidx >= RPC_HIST_MAX)
	    bad++;
	if (version_parse(b, len, ver, sizeof(ver)) == 0 && (strlen(ver) == 0 || strlen(ver) >= sizeof(ver)))
	    bad++;
	if (import_parse(b, len, &ii) == 0 && ii.have_state && strlen(ii.state) >= LC_STATE_MAX)
	    bad++;
	if (rs.mod_seen == 0 && rs.mod_total != 0)
	    bad++;
	if (lnet_stats_parse(b, len, &ls) == 0 && ls.v[LNET_DROP_COUNT] > UINT32_MAX)
	    bad++;
	if (lockless_parse(b, len, &lk) == 0 && lk.have == 0)
	    bad++;
	lc_parse_single_u64(b, len, &v);
	lc_complete_lines(b, len);
	/* device names: the mutated text up to the first NUL/newline */
	for (i = 0; i < len && i < sizeof(name) - 1 && b[i] != '\0' && b[i] != '\n'; i++)
	    name[i] = b[i];
	name[i] = '\0';
	lc_devname_parse(LC_DEV_LLITE, name, &dn);
	lc_devname_parse(LC_DEV_OSC, name, &dn);
	lc_devname_parse(LC_DEV_MDC, name, &dn);
	free(b);
    }
    CHECK_INT(bad, 0);
    lstats_free(&st);
}
