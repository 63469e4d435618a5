/* single-value files (max_pages_per_rpc ...) and the cut-off check */
#include "fuzz_common.h"
#include "parse_common.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char	*buf = (const char *)data;
    uint64_t	v = 12345;
    int		c;

    if (lc_parse_single_u64(buf, size, &v) == 0)
	FUZZ_ASSERT(size > 0 && memchr(buf, '\n', size - 1) == NULL);
    c = lc_complete_lines(buf, size);
    FUZZ_ASSERT(c == (size == 0 || buf[size - 1] == '\n'));
    return 0;
}
