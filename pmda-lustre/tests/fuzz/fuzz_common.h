/*
 * Shared by the libFuzzer targets, one per parser (tests/fuzz/fuzz_*.c).
 * Built two ways:
 *   make fuzz    clang -fsanitize=fuzzer,address,undefined: real fuzzing,
 *                one binary per target (tests/out/fuzz/<target>)
 *   make test    gcc + ASan/UBSan, every target renamed with
 *                -DLLVMFuzzerTestOneInput=lcfuzz_<target> and linked with
 *                replay.c: runs each target's corpus once
 * An invariant the agent relies on that does not hold aborts (a finding).
 */
#ifndef LC_FUZZ_COMMON_H
#define LC_FUZZ_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ASSERT(c) do { if (!(c)) abort(); } while (0)

/* a C string of printable ASCII shorter than cap */
static inline int
fuzz_clean_string(const char *s, size_t cap)
{
    size_t	i;

    for (i = 0; i < cap; i++) {
	if (s[i] == '\0')
	    return 1;
	if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
	    return 0;
    }
    return 0;
}

#endif
