/* osc/mdc import and state files */
#include "fuzz_common.h"
#include "parse_import.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct import_info	ii;
    int			sts;

    sts = import_parse((const char *)data, size, &ii);
    FUZZ_ASSERT(sts == (ii.have_state || ii.have_attempts ? 0 : -1));
    if (ii.have_state) {
	size_t i, n = strlen(ii.state);

	FUZZ_ASSERT(n > 0 && n < LC_STATE_MAX);
	for (i = 0; i < n; i++)
	    FUZZ_ASSERT((ii.state[i] >= 'A' && ii.state[i] <= 'Z') ||
			(ii.state[i] >= '0' && ii.state[i] <= '9') || ii.state[i] == '_');
    }
    return 0;
}
