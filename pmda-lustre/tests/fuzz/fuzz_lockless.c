/* osc.*.osc_stats (lockless I/O) */
#include "fuzz_common.h"
#include "parse_lockless.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct lockless_stats ls;
    int			sts;

    sts = lockless_parse((const char *)data, size, &ls);
    FUZZ_ASSERT(sts == (ls.have ? 0 : -1));
    FUZZ_ASSERT((ls.have & ~7u) == 0);
    if (!(ls.have & LOCKLESS_READ))
	FUZZ_ASSERT(ls.read_bytes == 0);
    return 0;
}
