/*
 * The version file, and the read/log helpers every refresh uses.
 */
#include <errno.h>
#include <string.h>
#include "lustreclient.h"
#include "paths.h"

/* log-once bits per device: read failure, truncation, parse failure */
#define BIT_READ(k)	(1u << (k))
#define BIT_TRUNC(k)	(1u << ((k) + 10))
#define BIT_PARSE(k)	(1u << ((k) + 20))

static const char *
errtext(ssize_t n)
{
    switch (-n) {
    case EXDEV:
	return "resolves outside the root directory, refused";
    case EINVAL:
	return "not a regular file, refused";
    default:
	return strerror((int)-n);
    }
}

ssize_t
lc_read_devfile(const char *type, const char *dev, const char *file,
		int *hint, unsigned *logged, int kind, const char **bufp)
{
    ssize_t	n;
    int		truncated = 0;

    n = lc_read_param(type, dev, file, hint, bufp, &truncated);
    /* -Dappl0 traces every read: tests count reads per fetch with it */
    if (pmDebugOptions.appl0)
	pmNotifyErr(LOG_DEBUG, "read %s%s%s%s%s -> %zd", type ? type : "",
		    type ? "/" : "", dev ? dev : "", dev ? "/" : "", file, n);
    if (n < 0) {
	/*
	 * A vanished device or a file this Lustre version does not have
	 * (md_stats on 1.8) is routine: say it once, not every fetch.
	 */
	if (!(*logged & BIT_READ(kind))) {
	    pmNotifyErr(n == -ENOENT ? LOG_INFO : LOG_WARNING,
			"%s%s%s%s%s: %s", type ? type : "", type ? "/" : "",
			dev ? dev : "", dev ? "/" : "", file, errtext(n));
	    *logged |= BIT_READ(kind);
	}
	return n;
    }
    *logged &= ~BIT_READ(kind);
    if (truncated && !(*logged & BIT_TRUNC(kind))) {
	pmNotifyErr(LOG_WARNING, "%s/%s/%s: longer than %u bytes, truncated",
		    type ? type : "", dev ? dev : "", file, LC_READ_CAP);
	*logged |= BIT_TRUNC(kind);
    }
    return n;
}

void
lc_log_bad(unsigned *logged, int kind, const char *type, const char *dev,
	   const char *file)
{
    if (*logged & BIT_PARSE(kind))
	return;
    pmNotifyErr(LOG_WARNING, "%s%s%s%s%s: unrecognised format, values skipped",
		type ? type : "", type ? "/" : "", dev ? dev : "", dev ? "/" : "", file);
    *logged |= BIT_PARSE(kind);
}

void
lc_log_ok(unsigned *logged, int kind)
{
    *logged &= ~BIT_PARSE(kind);
}

void
lc_refresh_version(void)
{
    const char	*buf;
    ssize_t	n;

    lc.version_ok = 0;
    n = lc_read_devfile(NULL, NULL, "version", &lc.version_hint,
			&lc.version_logged, 0, &buf);
    if (n < 0)
	return;
    if (version_parse(buf, (size_t)n, lc.version, sizeof(lc.version)) < 0) {
	lc_log_bad(&lc.version_logged, 0, NULL, NULL, "version");
	return;
    }
    lc_log_ok(&lc.version_logged, 0);
    lc.version_ok = 1;
}
