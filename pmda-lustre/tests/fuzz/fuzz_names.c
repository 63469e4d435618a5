/* device directory names -> instance names; bucket size labels */
#include <stdio.h>
#include "fuzz_common.h"
#include "names.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct lc_devname	dn;
    char		name[LC_NAME_MAX + 8], label[32];
    uint64_t		v = 0;
    size_t		n = size < sizeof(name) - 1 ? size : sizeof(name) - 1;
    int			k;

    memcpy(name, data, n);
    name[n] = '\0';			/* a name as readdir gives it */
    for (k = LC_DEV_LLITE; k <= LC_DEV_MDC; k++) {
	if (lc_devname_parse((enum lc_devkind)k, name, &dn) < 0)
	    continue;
	/* instance names never hold ':' (bucket separator) or spaces */
	FUZZ_ASSERT(dn.inst[0] != '\0' && strpbrk(dn.inst, ": \t\n") == NULL);
	FUZZ_ASSERT(fuzz_clean_string(dn.inst, LC_NAME_MAX));
	FUZZ_ASSERT(strlen(dn.fsname) > 0 && strlen(dn.sbi) > 0);
	/* server-side OSP links are never client devices */
	FUZZ_ASSERT(strstr(dn.sbi, "MDT") == NULL);
    }
    if (size >= 8)
	memcpy(&v, data, 8);
    lc_size_label(v, label, sizeof(label));
    FUZZ_ASSERT(strlen(label) > 0 && strlen(label) < sizeof(label));
    k = lc_bucket_default_maxidx(v);
    FUZZ_ASSERT(k >= 0 && k < 64);
    return 0;
}
