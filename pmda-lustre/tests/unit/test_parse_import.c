#include "harness.h"
#include "parse_import.h"

static struct import_info ii;

static int
parse(const char *text)
{
    size_t	len = strlen(text);
    char	*b = h_exact(text, len);
    int		sts = import_parse(b, len, &ii);

    free(b);
    return sts;
}

void
test_parse_import(void)
{
    CHECK_INT(parse("import:\n    name: scratch-OST0000-osc-ffff88105db50000\n"
		    "    target: scratch-OST0000_UUID\n    state: FULL\n"
		    "    connect_flags: [ write_grant, server_lock ]\n"
		    "    connection:\n       failover_nids: [ 192.168.1.10@o2ib ]\n"
		    "       current_connection: 192.168.1.10@o2ib\n"
		    "       connection_attempts: 3\n       generation: 1\n"), 0);
    CHECK_STR(ii.state, "FULL");
    CHECK(ii.have_state && ii.have_attempts);
    CHECK_U64(ii.connection_attempts, 3);
    CHECK(!ii.have_timeouts && !ii.have_inflight);

    /* the rpcs: block of a 2.12+ import */
    CHECK_INT(parse("import:\n    state: FULL\n    connection:\n"
		    "       connection_attempts: 1\n       generation: 1\n"
		    "       in-progress_invalidations: 0\n       idle: 3 sec\n"
		    "    rpcs:\n       inflight: 17\n       unregistering: 0\n"
		    "       timeouts: 4\n       avg_waittime: 950 usecs\n"), 0);
    CHECK(ii.have_timeouts && ii.have_inflight);
    CHECK_U64(ii.timeouts, 4);
    CHECK_U64(ii.inflight, 17);
    CHECK_U64(ii.connection_attempts, 1);
    /* only the values: garbage after them is not a number */
    CHECK_INT(parse("    rpcs:\n       inflight: many\n       timeouts: -1\n"), -1);

    CHECK_INT(parse("current_state: EVICTED\nstate_history:\n - [ 1420750001, CONNECTING ]\n"
		    " - [ 1420750001, FULL ]\n"), 0);
    CHECK_STR(ii.state, "EVICTED");
    CHECK(!ii.have_attempts);
    CHECK_INT(parse("current_state: REPLAY_LOCKS\n"), 0);
    CHECK_STR(ii.state, "REPLAY_LOCKS");

    CHECK_INT(parse("state: full of garbage\n"), -1);
    CHECK_INT(parse("connection_attempts: x\n"), -1);
    CHECK_INT(parse("current_state: AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n"), -1);
    CHECK_INT(parse(""), -1);
    CHECK_INT(parse("current_state:"), -1);
    CHECK_INT(import_parse(NULL, 0, &ii), -1);
}
