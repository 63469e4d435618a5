/* single-value files (max_pages_per_rpc ..., the MiB ones with fractions) and the cut-off check */
#include "fuzz_common.h"
#include "parse_common.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char	*buf = (const char *)data;
    uint64_t	v = 12345, m = 54321;
    int		c;

    if (lc_parse_single_u64(buf, size, &v) == 0)
	FUZZ_ASSERT(size > 0 && memchr(buf, '\n', size - 1) == NULL);
    /* a MiB file: a whole number reads the same as the plain parse, a
     * fraction is dropped (never rounded up); nothing else is accepted */
    if (lc_parse_single_mb(buf, size, &m) == 0) {
	FUZZ_ASSERT(size > 0 && memchr(buf, '\n', size - 1) == NULL);
	if (memchr(buf, '.', size) == NULL)
	    FUZZ_ASSERT(lc_parse_single_u64(buf, size, &v) == 0 && v == m);
    } else {
	FUZZ_ASSERT(m == 54321);
    }
    c = lc_complete_lines(buf, size);
    FUZZ_ASSERT(c == (size == 0 || buf[size - 1] == '\n'));
    return 0;
}
