/*
 * Parser for the Lustre version file, all three formats
 * (notes/lustre-formats.md section 1):
 *	1.8-2.8  "lustre: 2.7.0\nkernel: patchless_client\nbuild:  ...\n"
 *	2.9      "lustre: 2.9.0\n"
 *	2.10+    "2.10.1\n" (vendor suffixes such as "2.16.0_ddn56b")
 * and, for convenience, the "version=2.16.0_ddn56b" form lctl prints.
 */
#ifndef LC_PARSE_VERSION_H
#define LC_PARSE_VERSION_H

#include <stddef.h>

#define LC_VERSION_MAX	64

/*
 * Copy the version token (e.g. "2.15.4") NUL terminated into out[outsz].
 * Returns 0 on success, -1 if no version could be found (out = "").
 */
int version_parse(const char *buf, size_t len, char *out, size_t outsz);

/*
 * A version token as version_parse() gives it ("2.16.0_ddn56b",
 * "1.8.9-wc1", "2.15") as one comparable number, major * 1000000 +
 * minor * 1000 + patch (a missing patch is 0), or -1 if it does not start
 * with major.minor or a part is over 999.  LC_VERSION(2, 16, 52) makes the
 * same number from its parts.
 */
long version_code(const char *v);
#define LC_VERSION(maj, min, patch)	((long)(maj) * 1000000L + (long)(min) * 1000L + (long)(patch))

#endif /* LC_PARSE_VERSION_H */
