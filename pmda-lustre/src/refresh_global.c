/*
 * The version, lnet and host identity files, and the read/log helpers every refresh uses
 * (lc_read_devfile and the log helpers also run on the reader threads of
 * pool.c: they only touch the device's own fields and atomic counters).
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include "lustreclient.h"
#include "paths.h"
#include "parse_common.h"
#include "parse_lnet.h"
#include "parse_osrelease.h"

/* log-once bits per device (lc_dev.logged[]): read failure, truncation, parse failure */
#define LOG_RD		0
#define LOG_TRUNC	1
#define LOG_PARSE	2
#define BIT(k)		((uint32_t)1 << (k))

/*
 * Kernel seq files always end their last line.  A stats file that does
 * not was cut off (a copy, a capture, a half-written file), and its last
 * number may be short: skip the file rather than report a counter that
 * went down.  Single-value files and the version file are taken as they
 * are (hand-written trees often lack the newline).
 */
static const unsigned char needs_complete[FK_NKINDS] = {
    [FK_LLITE_STATS] = 1, [FK_OSC_RPC] = 1, [FK_OSC_STATS] = 1,
    [FK_OSC_IMPORT] = 1, [FK_OSC_STATE] = 1, [FK_MDC_MD] = 1,
    [FK_MDC_STATS] = 1, [FK_MDC_IMPORT] = 1, [FK_MDC_STATE] = 1,
    [FK_LLITE_RA] = 1, [FK_OSC_LOCKLESS] = 1, [FK_MDC_RPC] = 1,
    [FK_LNET] = 1,
};

static uint64_t
now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void
lc_budget_start(void)
{
    lc.deadline_ns = lc.budget_ns ? now_ns() + lc.budget_ns : 0;
    lc.deadline_hit = 0;
}

#define LC_CAP_TEXT "4 MiB"

static const char *
errtext(ssize_t n)
{
    switch (-n) {
    case EXDEV:
	return "resolves outside the root directory, refused";
    case EINVAL:
	return "not a regular file, refused";
    case EBADMSG:
	return "ends in the middle of a line (cut off), values skipped";
    case ETIME:
	return "not read: the fetch time budget (-b) was used up";
    case EFBIG:
	return "longer than " LC_CAP_TEXT ", values skipped";
    default:
	return strerror((int)-n);
    }
}

void
lc_dev_init(struct lc_dev *d, const char *type)
{
    int		k;

    memset(d, 0, sizeof(*d));
    d->type = type;
    for (k = 0; k < FK_NKINDS; k++)
	d->hint[k] = -1;
}

/* "<type>/<dev>/" of a device, as log lines name its files */
#define DEV_FMT		"%s%s%s%s"
#define DEV_ARGS(d)	(d)->type ? (d)->type : "", (d)->type ? "/" : "", \
			(d)->name, (d)->name[0] ? "/" : ""

ssize_t
lc_read_devfile(struct lc_dev *d, const char *file, int kind, const char **bufp)
{
    ssize_t	n;
    int		truncated = 0;

    static __thread unsigned tick;

    /* the clock every 8 files is plenty (a read takes microseconds) */
    if (lc.deadline_ns && (tick++ & 7) == 0 && now_ns() > lc.deadline_ns)
	lc.deadline_hit = 1;
    if (lc.deadline_ns && lc.deadline_hit) {
	/*
	 * pmcd gives up on an agent that does not answer in time (5 s by
	 * default) and drops it: better to answer with the values read so
	 * far than to keep reading slow debugfs files.
	 */
	lc_count(&lc.self, LC_BUDGET_SKIPS);
	n = -ETIME;
    } else {
	if (kind == FK_LNET)
	    n = lc_read_lnet(file, &d->hint[kind], bufp, &truncated);
	else if (FK_IS_HOST(kind))
	    n = lc_read_confined(file, bufp, &truncated);	/* ROOT-relative path */
	else
	    n = lc_read_param(d->type, d->name[0] ? d->name : NULL, file, &d->hint[kind],
			      bufp, &truncated);
	/* -Dappl0 traces every read: tests count reads per fetch with it */
	if (pmDebugOptions.appl0)
	    pmNotifyErr(LOG_DEBUG, "read " DEV_FMT "%s -> %zd [%s]", DEV_ARGS(d), file, n,
			n >= 0 ? lc_paths_last() : "");
	if (n >= 0 && needs_complete[kind] && truncated) {
	    /* no stats file is that long: whatever it is, its head alone
	     * would give counters that look like a reset */
	    lc_count(&lc.self, LC_PARSE_FAILURES);
	    n = -EFBIG;
	} else if (n >= 0 && needs_complete[kind] && !lc_complete_lines(*bufp, (size_t)n)) {
	    lc_count(&lc.self, LC_PARSE_FAILURES);
	    n = -EBADMSG;
	} else if (n >= 0) {
	    lc_count(&lc.self, LC_FILES_READ);
	} else if (n != -ENOENT) {
	    lc_count(&lc.self, LC_READ_FAILURES);
	}
    }
    if (n < 0) {
	/*
	 * A vanished device or a file this Lustre version does not have
	 * (md_stats on 1.8) is routine: say it once, not every fetch.
	 */
	if (!(d->logged[LOG_RD] & BIT(kind))) {
	    pmNotifyErr(n == -ENOENT || n == -ETIME ? LOG_INFO : LOG_WARNING,
			DEV_FMT "%s: %s", DEV_ARGS(d), file, errtext(n));
	    d->logged[LOG_RD] |= BIT(kind);
	}
	return n;
    }
    d->logged[LOG_RD] &= ~BIT(kind);
    if (truncated && !(d->logged[LOG_TRUNC] & BIT(kind))) {
	pmNotifyErr(LOG_WARNING, DEV_FMT "%s: longer than %u bytes, truncated",
		    DEV_ARGS(d), file, LC_READ_CAP);
	d->logged[LOG_TRUNC] |= BIT(kind);
    }
    return n;
}

int
lc_parsed(struct lc_dev *d, int kind, const char *file, int ok)
{
    if (ok) {
	d->logged[LOG_PARSE] &= ~BIT(kind);
	return 1;
    }
    lc_count(&lc.self, LC_PARSE_FAILURES);
    if (!(d->logged[LOG_PARSE] & BIT(kind))) {
	pmNotifyErr(LOG_WARNING, DEV_FMT "%s: unrecognised format, values skipped",
		    DEV_ARGS(d), file);
	d->logged[LOG_PARSE] |= BIT(kind);
    }
    return 0;
}

int
lc_read_u32(struct lc_dev *d, const char *file, int kind, uint32_t *out, uint32_t max, int mb)
{
    const char	*buf;
    uint64_t	v;
    ssize_t	n;

    if ((n = lc_read_devfile(d, file, kind, &buf)) < 0)
	return (int)n;
    if (!lc_parsed(d, kind, file,
		   (mb ? lc_parse_single_mb(buf, (size_t)n, &v)
		       : lc_parse_single_u64(buf, (size_t)n, &v)) == 0 && v <= max))
	return 0;
    *out = (uint32_t)v;
    return 1;
}

void
lc_start_set(struct lc_start *s, const struct lc_time *t)
{
    s->ok = t->present;
    s->sec = t->present ? (double)t->sec + (double)t->nsec / 1e9 : 0.0;
}

void
lc_refresh_version(void)
{
    const char	*buf;
    ssize_t	n;

    n = lc_read_devfile(&lc.top, "version", FK_VERSION, &buf);
    lc.version_ok = n >= 0 &&
		    lc_parsed(&lc.top, FK_VERSION, "version",
			      version_parse(buf, (size_t)n, lc.version, sizeof(lc.version)) == 0);
    lc.version_code = lc.version_ok ? version_code(lc.version) : -1;
}

void
lc_refresh_lnet(void)
{
    struct lnet_stats	ls;
    const char		*buf;
    ssize_t		n;

    lc.lnet_ok = 0;
    n = lc_read_devfile(&lc.lnetdev, "stats", FK_LNET, &buf);
    if (n < 0 || !lc_parsed(&lc.lnetdev, FK_LNET, "stats", lnet_stats_parse(buf, (size_t)n, &ls) == 0))
	return;
    memcpy(lc.lnet, ls.v, sizeof(lc.lnet));
    lc.lnet_ok = 1;
}

/*
 * The host's identity: what a job record needs to tell a kernel or OS
 * image change from a Lustre client change.  Read at each fetch that asks
 * for them rather than cached: two small files, only when asked for (a
 * snapshot asks once per job end), and a cache would need invalidating
 * anyway, since os-release changes under a running agent when the OS is
 * upgraded in place (and a -r tree can change at any time).
 */
void
lc_refresh_host(void)
{
    struct os_release	osr;
    const char		*buf;
    ssize_t		n;

    if (lc_wanted(CL_HOST, HOST_KERNEL)) {
	n = lc_read_devfile(&lc.host, "proc/sys/kernel/osrelease", FK_KERNEL, &buf);
	lc.kernel_ok = n >= 0 &&
		       lc_parsed(&lc.host, FK_KERNEL, "proc/sys/kernel/osrelease",
				 kernel_release_parse(buf, (size_t)n, lc.kernel,
						      sizeof(lc.kernel)) == 0);
    }
    if (lc_wanted(CL_HOST, HOST_OS)) {
	const char *file = "etc/os-release";
	int	    kind = FK_OSREL_ETC;

	/*
	 * os-release(5): /etc/os-release, else /usr/lib/os-release.  The
	 * first is usually a relative symlink to ../usr/lib/os-release,
	 * followed as long as it stays inside ROOT; one that leaves ROOT
	 * (an absolute link in a captured tree: -EXDEV), or none at all,
	 * sends the agent to ROOT/usr/lib/os-release instead.
	 */
	n = lc_read_devfile(&lc.host, file, kind, &buf);
	if (n < 0 && n != -ETIME) {
	    file = "usr/lib/os-release";
	    kind = FK_OSREL_LIB;
	    n = lc_read_devfile(&lc.host, file, kind, &buf);
	}
	lc.os_ok = n >= 0 &&
		   lc_parsed(&lc.host, kind, file, os_release_parse(buf, (size_t)n, &osr) == 0);
	if (lc.os_ok)
	    os_release_describe(&osr, lc.os, sizeof(lc.os));
    }
}
