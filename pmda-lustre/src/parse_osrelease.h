/*
 * Parsers for the host identity files (pure: no I/O):
 *	ROOT/proc/sys/kernel/osrelease	the running kernel's release, one line
 *	ROOT/etc/os-release		(else ROOT/usr/lib/os-release) the OS
 *					image, os-release(5): KEY=VALUE lines
 */
#ifndef LC_PARSE_OSRELEASE_H
#define LC_PARSE_OSRELEASE_H

#include <stddef.h>

#define LC_KERNEL_MAX	128	/* utsname.release is 65 bytes */
#define LC_OS_MAX	512	/* the description built from os-release */
#define LC_OSVAL_MAX	256	/* one os-release value */

/*
 * The first line of /proc/sys/kernel/osrelease ("6.1.0-18-amd64\n"),
 * surrounding blanks and the newline stripped, NUL terminated in
 * out[outsz].  Only printable ASCII; lines after the first must be empty.
 * Returns 0, or -1 (out = "") for an empty, binary or too long release.
 */
int kernel_release_parse(const char *buf, size_t len, char *out, size_t outsz);

/* the os-release keys the agent uses; a key absent or empty is "" */
struct os_release {
    int		nassign;	/* KEY=VALUE lines understood */
    char	pretty_name[LC_OSVAL_MAX];
    char	name[LC_OSVAL_MAX];
    char	version_id[LC_OSVAL_MAX];
    char	image_id[LC_OSVAL_MAX];
    char	image_version[LC_OSVAL_MAX];
};

/*
 * os-release(5): lines KEY=VALUE, blank lines and '#' comments ignored.
 * A value is unquoted or quoted with "..." or '...' (shell style: inside
 * double quotes a backslash escapes $ " \ and `; outside quotes it escapes
 * any character; inside single quotes nothing is special), and ends at
 * the first blank outside quotes.  A line that is not an assignment, or
 * whose quote is not closed, is skipped.  Control characters in a value
 * become '?'; a value longer than LC_OSVAL_MAX - 1 bytes is cut at a
 * character boundary.  Returns 0 when at least one assignment was
 * understood, -1 otherwise (not an os-release file).
 */
int os_release_parse(const char *buf, size_t len, struct os_release *osr);

/*
 * The OS image in one string: PRETTY_NAME, else NAME followed by " " and
 * VERSION_ID (os-release(5)'s default NAME "Linux" when NAME is unset),
 * then " (" IMAGE_ID " " IMAGE_VERSION ")" for whichever of the two are
 * set.  NUL terminated in out[outsz], cut at a character boundary if
 * longer.  Returns the length.
 */
size_t os_release_describe(const struct os_release *osr, char *out, size_t outsz);

#endif /* LC_PARSE_OSRELEASE_H */
