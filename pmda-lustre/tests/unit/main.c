#include "harness.h"

int h_pass, h_fail;

int
main(void)
{
    test_common();
    test_parse_stats();
    test_parse_rpc_stats();
    test_parse_version();
    test_parse_import();
    test_names();
    test_parse_misc();
    test_fuzz();
    test_unchanged();
    test_selfstats();
    test_parse_osrelease();
    test_jobs();
    test_clients();
    test_slot_answer();
    test_series();
    test_persist();
    printf("%d passed, %d failed\n", h_pass, h_fail);
    return h_fail ? 1 : 0;
}
