/*
 * persist.c: the input is a job slot's file, read as it is and again with
 * its size field and CRC made right (so that the checks beneath the CRC are
 * reached).  A file taken is the one its slot writes, byte for byte; one
 * refused says why.
 */
#include "fuzz_common.h"
#include "persist.h"

static void
one(const uint8_t *data, size_t size)
{
    struct lc_persist_slot p;
    const char		*why = NULL;
    unsigned char	*again;

    if (lc_persist_decode(data, size, &p, &why) < 0) {
	FUZZ_ASSERT(why != NULL);
	return;
    }
    FUZZ_ASSERT(lc_persist_size(&p) == size);
    again = malloc(size);
    FUZZ_ASSERT(again != NULL);
    lc_persist_encode(&p, again);
    FUZZ_ASSERT(memcmp(again, data, size) == 0);
    free(again);
    lc_persist_free(&p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t	*fixed;
    uint32_t	crc;

    one(data, size);
    if (size < 20 || size > LC_PERSIST_MAX_BYTES)
	return 0;
    if ((fixed = malloc(size)) == NULL)
	return 0;
    memcpy(fixed, data, size);
    for (int i = 0; i < 8; i++)
	fixed[8 + i] = (uint8_t)((uint64_t)size >> (8 * i));
    crc = lc_crc32(fixed, size - 4);
    for (int i = 0; i < 4; i++)
	fixed[size - 4 + i] = (uint8_t)(crc >> (8 * i));
    one(fixed, size);
    free(fixed);
    return 0;
}
