/* the host identity files: /proc/sys/kernel/osrelease and os-release(5) */
#include "fuzz_common.h"
#include "parse_osrelease.h"

/* NUL terminated inside cap, no control character (the agent's strings) */
static int
no_controls(const char *s, size_t cap)
{
    size_t	i;

    for (i = 0; i < cap; i++) {
	if (s[i] == '\0')
	    return 1;
	if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] == 0x7f)
	    return 0;
    }
    return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char		*buf = (const char *)data;
    char		kern[LC_KERNEL_MAX], desc[LC_OS_MAX], tiny[5];
    struct os_release	osr;
    size_t		n;

    if (kernel_release_parse(buf, size, kern, sizeof(kern)) == 0) {
	FUZZ_ASSERT(kern[0] != '\0' && kern[0] != ' ' && fuzz_clean_string(kern, sizeof(kern)));
	FUZZ_ASSERT(kern[strlen(kern) - 1] != ' ');
    } else {
	FUZZ_ASSERT(kern[0] == '\0');
    }
    FUZZ_ASSERT(kernel_release_parse(buf, size, kern, 0) == -1);

    if (os_release_parse(buf, size, &osr) == 0) {
	FUZZ_ASSERT(osr.nassign > 0);
	FUZZ_ASSERT(no_controls(osr.pretty_name, sizeof(osr.pretty_name)) &&
		    no_controls(osr.name, sizeof(osr.name)) &&
		    no_controls(osr.version_id, sizeof(osr.version_id)) &&
		    no_controls(osr.image_id, sizeof(osr.image_id)) &&
		    no_controls(osr.image_version, sizeof(osr.image_version)));
	n = os_release_describe(&osr, desc, sizeof(desc));
	FUZZ_ASSERT(n > 0 && n == strlen(desc) && n < sizeof(desc));
	FUZZ_ASSERT(no_controls(desc, sizeof(desc)));
	/* a description that does not fit is cut, never overrun */
	n = os_release_describe(&osr, tiny, sizeof(tiny));
	FUZZ_ASSERT(n == strlen(tiny) && n < sizeof(tiny));
    } else {
	FUZZ_ASSERT(osr.nassign == 0 && osr.pretty_name[0] == '\0' && osr.name[0] == '\0');
    }
    return 0;
}
