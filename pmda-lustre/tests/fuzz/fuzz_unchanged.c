/*
 * unchanged.c: the input is two texts split at the first NUL, the one kept
 * and the one compared with it.  A kept text always reads as the same, a
 * forgotten one never, and equal texts are the same text.
 */
#include "fuzz_common.h"
#include "unchanged.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char		*a = (const char *)data, *b;
    const uint8_t	*nul = memchr(data, 0, size);
    size_t		na = nul ? (size_t)(nul - data) : size, nb;
    struct lc_seen	seen;
    int			same;

    b = nul ? (const char *)nul + 1 : a + size;
    nb = nul ? size - na - 1 : 0;
    memset(&seen, 0, sizeof(seen));
    FUZZ_ASSERT(lc_seen_same(&seen, a, na) == 0);
    if (lc_seen_keep(&seen, a, na) == 0) {
	FUZZ_ASSERT(seen.len <= na);
	FUZZ_ASSERT(lc_seen_same(&seen, a, na) == 1);
	same = lc_seen_same(&seen, b, nb);
	if (na == nb && memcmp(a, b, na) == 0)
	    FUZZ_ASSERT(same == 1);
	/* "the same" is symmetric */
	if (lc_seen_keep(&seen, b, nb) == 0)
	    FUZZ_ASSERT(lc_seen_same(&seen, a, na) == same);
	lc_seen_forget(&seen);
	FUZZ_ASSERT(lc_seen_same(&seen, a, na) == 0);
    }
    free(seen.p);
    return 0;
}
