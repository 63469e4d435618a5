#include <stdio.h>
#include <string.h>
#include "names.h"

static int
all_hex(const char *p, size_t n)
{
    size_t	i;

    if (n == 0)
	return 0;
    for (i = 0; i < n; i++) {
	char c = p[i];

	if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	      (c >= 'A' && c <= 'F')))
	    return 0;
    }
    return 1;
}

/*
 * Filesystem names are short [A-Za-z0-9_-] strings; refusing anything
 * else keeps ':' (the bucket separator), spaces (PCP instance short-name
 * matching) and control characters out of the instance names.
 */
static int
good_fsname(const char *p, size_t n)
{
    size_t	i;

    if (n == 0)
	return 0;
    for (i = 0; i < n; i++) {
	char c = p[i];

	if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	      (c >= 'A' && c <= 'Z') || c == '_' || c == '-' || c == '.'))
	    return 0;
    }
    return 1;
}

static void
copy(char *dst, const char *src, size_t n)
{
    memcpy(dst, src, n);
    dst[n] = '\0';
}

int
lc_devname_parse(enum lc_devkind kind, const char *name, struct lc_devname *out)
{
    const char	*marker, *sep, *dash, *p;
    const char	*tprefix;
    size_t	len, prefixlen;

    memset(out, 0, sizeof(*out));
    if (name == NULL)
	return -1;
    len = strlen(name);
    if (len == 0 || len >= LC_NAME_MAX)
	return -1;

    if (kind == LC_DEV_LLITE) {
	dash = strrchr(name, '-');
	if (dash == NULL || !all_hex(dash + 1, strlen(dash + 1)) ||
	    !good_fsname(name, (size_t)(dash - name)))
	    return -1;
	copy(out->fsname, name, (size_t)(dash - name));
	copy(out->sbi, dash + 1, strlen(dash + 1));
	copy(out->inst, out->fsname, strlen(out->fsname));
	return 0;
    }

    marker = kind == LC_DEV_OSC ? "-osc-" : "-mdc-";
    tprefix = kind == LC_DEV_OSC ? "OST" : "MDT";
    /* the last marker: an fsname could itself contain "-osc-" */
    sep = NULL;
    for (p = name; (p = strstr(p, marker)) != NULL; p++)
	sep = p;
    if (sep == NULL)
	return -1;
    /* <sbi> must be the client pointer: "...-osc-MDT0000" is an OSP link */
    if (!all_hex(sep + 5, strlen(sep + 5)))
	return -1;
    prefixlen = (size_t)(sep - name);
    dash = NULL;
    for (p = name; p < sep; p++)
	if (*p == '-')
	    dash = p;
    if (dash == NULL || !good_fsname(name, (size_t)(dash - name)))
	return -1;
    /* target: OSTxxxx / MDTxxxx with at least 4 hex digits */
    if ((size_t)(sep - dash - 1) < 7 || strncmp(dash + 1, tprefix, 3) != 0 ||
	!all_hex(dash + 4, (size_t)(sep - dash - 4)))
	return -1;
    copy(out->fsname, name, (size_t)(dash - name));
    copy(out->target, dash + 1, (size_t)(sep - dash - 1));
    copy(out->sbi, sep + 5, strlen(sep + 5));
    copy(out->inst, name, prefixlen);
    return 0;
}

void
lc_size_label(uint64_t bytes, char *buf, size_t bufsz)
{
    static const struct { uint64_t unit; char suffix; } units[] = {
	{ (uint64_t)1 << 30, 'G' }, { (uint64_t)1 << 20, 'M' }, { (uint64_t)1 << 10, 'K' },
    };
    size_t	i;

    for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
	if (bytes >= units[i].unit && bytes % units[i].unit == 0) {
	    snprintf(buf, bufsz, "%llu%c",
		     (unsigned long long)(bytes / units[i].unit), units[i].suffix);
	    return;
	}
    }
    snprintf(buf, bufsz, "%llu", (unsigned long long)bytes);
}

int
lc_bucket_default_maxidx(uint64_t pagesize)
{
    const uint64_t	max = (uint64_t)64 << 20;
    int			i = 0;

    if (pagesize == 0 || pagesize > max)
	return 0;
    while (i < 63 && (pagesize << (i + 1)) <= max)
	i++;
    return i;
}
