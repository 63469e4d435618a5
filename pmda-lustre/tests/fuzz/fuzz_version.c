/* the version file, all three formats and lctl's version=, and its version_code() */
#include "fuzz_common.h"
#include "parse_version.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char	ver[LC_VERSION_MAX];

    if (version_parse((const char *)data, size, ver, sizeof(ver)) == 0) {
	FUZZ_ASSERT(ver[0] >= '0' && ver[0] <= '9');
	FUZZ_ASSERT(fuzz_clean_string(ver, sizeof(ver)) && strchr(ver, ' ') == NULL);
	/* what the agent compares to tell which counters a version has */
	long code = version_code(ver);
	FUZZ_ASSERT(code == -1 || (code >= 0 && code <= LC_VERSION(999, 999, 999)));
    } else {
	FUZZ_ASSERT(ver[0] == '\0');
    }
    FUZZ_ASSERT(version_parse((const char *)data, size, ver, 0) == -1);
    return 0;
}
