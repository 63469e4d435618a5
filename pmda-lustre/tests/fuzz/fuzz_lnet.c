/* LNet stats */
#include "fuzz_common.h"
#include "parse_lnet.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct lnet_stats	ls;
    int			i;

    if (lnet_stats_parse((const char *)data, size, &ls) == 0) {
	for (i = 0; i < LNET_SEND_LENGTH; i++)
	    FUZZ_ASSERT(ls.v[i] <= UINT32_MAX);
    } else {
	for (i = 0; i < LNET_STATS_N; i++)
	    FUZZ_ASSERT(ls.v[i] == 0);
    }
    return 0;
}
