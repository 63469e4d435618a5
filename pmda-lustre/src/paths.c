#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/openat2.h>
#endif
#include <pcp/pmapi.h>
#include "paths.h"

/* lctl's search order for 2.10+ (libcfs/util/param.c), then 1.8-2.9 */
static const char *bases[LC_NBASES] = {
    "sys/fs/lustre",
    "sys/kernel/debug/lustre",
    "proc/fs/lustre",
};
static const char *lnet_bases[LC_NLNET_BASES] = {
    "sys/kernel/debug/lnet",
    "proc/sys/lnet",
};

static char	rootdir[PATH_MAX];
static size_t	rootlen;
static int	rootfd = -1;
static int	use_openat2;
static unsigned long vanished;	/* lc_paths_vanished() */
/* per reader thread (pool.c): the read buffer and the last path read */
static __thread char	*rbuf;
static __thread size_t	rcap;
static __thread char	lastrel[PATH_MAX];	/* ROOT-relative path of the last good read */

#if defined(__linux__) && defined(SYS_openat2) && defined(RESOLVE_BENEATH)
#define OPENAT2_TRIES	16	/* EAGAIN below: a rename raced the lookup */

static int
sys_openat2(int dirfd, const char *path, int flags)
{
    struct open_how how;
    int		fd = -1, tries;

    memset(&how, 0, sizeof(how));
    how.flags = (unsigned long long)flags;
    /*
     * BENEATH: absolute symlinks and ".." that leave ROOT fail with EXDEV;
     * relative symlinks inside ROOT (osc -> ../osp/...) are followed.
     * With ROOT "/" nothing can leave it, and absolute symlinks are fine.
     */
    if (rootlen > 1)
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    else
	how.resolve = RESOLVE_NO_MAGICLINKS;
    /*
     * With BENEATH, a ".." on the way (osc -> ../osp/...) fails with EAGAIN
     * when any rename on the machine races the lookup: the kernel cannot
     * tell that it stayed beneath, and asks to be called again (openat2(2)).
     */
    for (tries = 0; tries < OPENAT2_TRIES; tries++) {
	fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	if (fd >= 0 || errno != EAGAIN)
	    break;
    }
    return fd;
}
#else
static int
sys_openat2(int dirfd, const char *path, int flags)
{
    (void)dirfd; (void)path; (void)flags;
    errno = ENOSYS;
    return -1;
}
#endif

int
lc_paths_init(const char *root)
{
    struct stat	st;
    int		fd;

    if (realpath(root, rootdir) == NULL)
	return -1;
    if (stat(rootdir, &st) < 0)
	return -1;
    if (!S_ISDIR(st.st_mode)) {
	errno = ENOTDIR;
	return -1;
    }
    rootlen = strlen(rootdir);
    if (rootfd >= 0)
	close(rootfd);
    rootfd = open(rootdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    use_openat2 = 0;
    if (rootfd >= 0) {
	/* probe: the root itself, relative to its own descriptor */
	fd = sys_openat2(rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
	    close(fd);
	    use_openat2 = 1;
	}
    }
    return 0;
}

const char *
lc_paths_root(void)
{
    return rootdir;
}

int
lc_paths_root_is_slash(void)
{
    return strcmp(rootdir, "/") == 0;
}

const char *
lc_paths_base(int i)
{
    return (i >= 0 && i < LC_NBASES) ? bases[i] : NULL;
}

const char *
lc_paths_last(void)
{
    return lastrel;
}

int
lc_paths_have_openat2(void)
{
    return use_openat2;
}

void
lc_paths_force_fallback(void)
{
    use_openat2 = 0;
}

static int
under_root(const char *real)
{
    if (rootlen == 1)			/* ROOT is "/" */
	return real[0] == '/';
    return strncmp(real, rootdir, rootlen) == 0 &&
	   (real[rootlen] == '/' || real[rootlen] == '\0');
}

/*
 * Confirm what was actually opened, closing the window between
 * realpath() and open() in which a path component could be swapped for a
 * symlink.  Without /proc (unusual) the realpath() check has to do.
 */
static int
fd_under_root(int fd)
{
    char	link[64], target[PATH_MAX];
    ssize_t	n;

    if (rootlen == 1)
	return 1;
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    n = readlink(link, target, sizeof(target) - 1);
    if (n < 0)
	return 1;
    target[n] = '\0';
    return under_root(target);
}

/* fallback open: rel is relative to ROOT */
static int
open_checked(const char *rel, int flags)
{
    char	path[PATH_MAX], real[PATH_MAX];
    int		fd, sts;

    if ((size_t)snprintf(path, sizeof(path), "%s/%s", rootlen == 1 ? "" : rootdir, rel)
	>= sizeof(path)) {
	errno = ENAMETOOLONG;
	return -1;
    }
    if (realpath(path, real) == NULL)
	return -1;
    if (!under_root(real)) {
	errno = EXDEV;
	return -1;
    }
    if ((fd = open(real, flags | O_NOFOLLOW)) < 0)
	return -1;
    if (!fd_under_root(fd)) {
	sts = EXDEV;
	close(fd);
	errno = sts;
	return -1;
    }
    return fd;
}

static int
open_rel(const char *rel, int flags)
{
    if (use_openat2)
	return sys_openat2(rootfd, rel, flags);
    return open_checked(rel, flags);
}

/* make rbuf hold at least want bytes (capped at LC_READ_CAP + 1) */
static int
grow_rbuf(size_t want)
{
    size_t	ncap = rcap ? rcap : 65536;
    char	*nb;

    if (want > LC_READ_CAP + 1)
	want = LC_READ_CAP + 1;
    while (ncap < want)
	ncap *= 2;
    if (ncap > LC_READ_CAP + 1)
	ncap = LC_READ_CAP + 1;
    if (ncap <= rcap)
	return 0;
    if ((nb = realloc(rbuf, ncap)) == NULL)
	return -ENOMEM;
    rbuf = nb;
    rcap = ncap;
    return 0;
}

/*
 * Read an open descriptor into rbuf, up to the cap; closes fd.
 *
 * With check set the descriptor is first confirmed to be a regular file
 * (procfs, sysfs and debugfs files all are).  That fstat() is a fifth of
 * the system calls of a read, so it is done once per file: the caller
 * skips it while the file keeps answering at the base where it was last
 * checked.  Should the file be swapped for something else in between,
 * O_NONBLOCK and the read cap still hold (nothing can make the agent wait
 * or read without bound), and an empty read is checked after the fact, so
 * a FIFO is still refused as one.
 * Files are read until EOF: procfs and debugfs report st_size 0, and
 * seq_file hands out about a page per read(2).
 */
static ssize_t
read_fd(int fd, int check, const char **bufp, int *truncated)
{
    struct stat	st;
    size_t	len = 0;
    ssize_t	n;
    int		sts;

    *truncated = 0;
    if (check) {
	if (fstat(fd, &st) < 0) {
	    sts = -errno;
	    close(fd);
	    return sts;
	}
	if (!S_ISREG(st.st_mode)) {
	    close(fd);
	    return -EINVAL;
	}
    }
    if (rcap == 0 && (sts = grow_rbuf(1)) < 0) {
	close(fd);
	return sts;
    }
    for (;;) {
	if (len == rcap) {
	    if (rcap >= LC_READ_CAP + 1)
		break;
	    if ((sts = grow_rbuf(rcap * 2)) < 0) {
		close(fd);
		return sts;
	    }
	}
	n = read(fd, rbuf + len, rcap - len);
	if (n < 0) {
	    if (errno == EINTR)
		continue;
	    /* e.g. EAGAIN: never wait for data */
	    sts = -errno;
	    close(fd);
	    return sts;
	}
	if (n == 0)
	    break;
	len += (size_t)n;
	if (len > LC_READ_CAP)
	    break;
    }
    /* nothing read unchecked: a FIFO swapped in says so, not "empty" */
    if (len == 0 && !check && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
	close(fd);
	return -EINVAL;
    }
    close(fd);
    if (len > LC_READ_CAP) {
	/* keep whole lines only, so no value is read from a cut number */
	*truncated = 1;
	len = LC_READ_CAP;
	while (len > 0 && rbuf[len - 1] != '\n')
	    len--;
    }
    *bufp = rbuf;
    return (ssize_t)len;
}

#define RD_FLAGS (O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)

ssize_t
lc_read_confined(const char *path, const char **bufp, int *truncated)
{
    const char	*rel = path;
    ssize_t	n;
    int		fd;

    *truncated = 0;
    if (path[0] == '/') {
	if (rootlen == 1)
	    rel = path + 1;
	else if (strncmp(path, rootdir, rootlen) == 0 && path[rootlen] == '/')
	    rel = path + rootlen + 1;
	else
	    return -EXDEV;
    }
    /* O_NONBLOCK: a FIFO planted in a tree must not hang the agent */
    if ((fd = open_rel(rel, RD_FLAGS)) < 0)
	return -errno;
    if ((n = read_fd(fd, 1, bufp, truncated)) >= 0 && pmDebugOptions.appl0 &&
	strlen(rel) < sizeof(lastrel))
	strcpy(lastrel, rel);	/* for the -Dappl0 trace, as read_from_bases */
    return n;
}

static ssize_t
read_from_bases(const char **bl, int nb, const char *type, const char *dev,
		const char *file, int *hint, const char **bufp, int *truncated)
{
    char	rel[PATH_MAX];
    size_t	len = 0, tail, pl[4];
    ssize_t	sts = -ENOENT, s;
    int		i, k, b, fd, verified, start = (hint && *hint >= 0 && *hint < nb) ? *hint : 0;
    const char	*part[4] = { NULL, type, type ? dev : NULL, file };

    *truncated = 0;
    /* "<type>/<dev>/<file>" (or "<file>") once, after "<base>/" per base */
    for (k = 1, tail = 0; k < 4; k++) {
	pl[k] = part[k] ? strlen(part[k]) : 0;
	tail += part[k] ? pl[k] + 1 : 0;
    }
    for (i = 0; i < nb; i++) {
	b = (start + i) % nb;
	pl[0] = strlen(bl[b]);
	if (pl[0] + tail + 1 > sizeof(rel))
	    return -ENAMETOOLONG;
	memcpy(rel, bl[b], pl[0]);
	len = pl[0];
	for (k = 1; k < 4; k++) {
	    if (part[k] == NULL)
		continue;
	    rel[len++] = '/';
	    memcpy(rel + len, part[k], pl[k]);
	    len += pl[k];
	}
	rel[len] = '\0';
	if ((fd = open_rel(rel, RD_FLAGS)) < 0) {
	    s = -errno;
	    /* a missing file is normal (it lives under another base) */
	    if (s != -ENOENT && s != -ENOTDIR)
		sts = s;
	    continue;
	}
	/* the hint names the base where this file was read, and checked, last */
	verified = hint && *hint == b;
	s = read_fd(fd, !verified, bufp, truncated);
	if (s >= 0) {
	    if (hint)
		*hint = b;
	    if (pmDebugOptions.appl0)	/* only the -Dappl0 trace shows it */
		memcpy(lastrel, rel, len + 1);
	    return s;
	}
	if (verified)
	    *hint = -1;		/* check it again once it reads */
	sts = s;
    }
    if (sts == -ENOENT && hint && *hint >= 0) {
	/* it was there last time: tell the device listing to look again */
	__atomic_fetch_add(&vanished, 1, __ATOMIC_RELAXED);
	*hint = -1;
    }
    return sts;
}

unsigned long
lc_paths_vanished(void)
{
    return __atomic_load_n(&vanished, __ATOMIC_RELAXED);
}

ssize_t
lc_read_param(const char *type, const char *dev, const char *file,
	      int *hint, const char **bufp, int *truncated)
{
    return read_from_bases(bases, LC_NBASES, type, dev, file, hint, bufp, truncated);
}

ssize_t
lc_read_lnet(const char *file, int *hint, const char **bufp, int *truncated)
{
    return read_from_bases(lnet_bases, LC_NLNET_BASES, NULL, NULL, file, hint,
			   bufp, truncated);
}


/* stat <rel> with the confinement of a read (symlinks followed inside ROOT); 0 or -errno */
static int
stat_rel(const char *rel, int flags, struct stat *st)
{
    int		fd, sts = 0;

    if ((fd = open_rel(rel, O_PATH | O_CLOEXEC | flags)) < 0)
	return -errno;
    if (fstat(fd, st) < 0)
	sts = -errno;
    close(fd);
    return sts;
}

/* is <rel> a directory inside ROOT (following symlinks that stay inside)? */
static int
dir_inside(const char *rel)
{
    struct stat	st;

    return stat_rel(rel, 0, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * The raw listing of <base>/<type>/ over all bases, in readdir order: per
 * base a line "#<base index>", then one line per entry, "d<name>" for a
 * directory and "?<name>" for anything else (a symlink to be checked).
 * Cheap enough to do at every fetch; the caller compares it with the last
 * one and only works through the names (lc_scan_names) when it changed.
 */
/* append tag, name and a newline to sc */
static int
scan_put(struct lc_scan *sc, char tag, const char *name, size_t len)
{
    if (sc->n + len + 2 > sc->cap) {
	size_t	ncap = sc->cap ? sc->cap * 2 : 65536;
	char	*np;

	while (ncap < sc->n + len + 2)
	    ncap *= 2;
	if ((np = realloc(sc->p, ncap)) == NULL)
	    return -ENOMEM;
	sc->p = np;
	sc->cap = ncap;
    }
    sc->p[sc->n++] = tag;
    memcpy(sc->p + sc->n, name, len);
    sc->n += len;
    sc->p[sc->n++] = '\n';
    return 0;
}

int
lc_scan_devices(const char *type, struct lc_scan *sc)
{
    char	rel[PATH_MAX], mark[2] = { 0, 0 };
    struct dirent *de;
    DIR		*dir;
    size_t	len;
    int		b, fd, n = 0;

    sc->n = 0;
    for (b = 0; b < LC_NBASES; b++) {
	if ((size_t)snprintf(rel, sizeof(rel), "%s/%s", bases[b], type) >= sizeof(rel))
	    continue;
	if ((fd = open_rel(rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK)) < 0)
	    continue;
	if ((dir = fdopendir(fd)) == NULL) {
	    close(fd);
	    continue;
	}
	mark[0] = (char)('0' + b);
	if (scan_put(sc, '#', mark, 1) < 0)
	    goto nomem;
	while ((de = readdir(dir)) != NULL) {
	    if (de->d_name[0] == '.' || (len = strlen(de->d_name)) >= 256)
		continue;
	    if (scan_put(sc, de->d_type == DT_DIR ? 'd' : '?', de->d_name, len) < 0)
		goto nomem;
	    n++;
	}
	closedir(dir);
    }
    return n;

nomem:
    closedir(dir);
    return -ENOMEM;
}

void
lc_scan_signature(const char *type, struct lc_dirsig sig[LC_NBASES])
{
    char	rel[PATH_MAX];
    struct stat	st;
    int		b, sts;

    for (b = 0; b < LC_NBASES; b++) {
	memset(&sig[b], 0, sizeof(sig[b]));
	if ((size_t)snprintf(rel, sizeof(rel), "%s/%s", bases[b], type) >= sizeof(rel)) {
	    sig[b].err = ENAMETOOLONG;
	    continue;
	}
	if ((sts = stat_rel(rel, O_DIRECTORY, &st)) < 0) {
	    sig[b].err = -sts;
	} else {
	    sig[b].dev = st.st_dev;
	    sig[b].ino = st.st_ino;
	    sig[b].nlink = st.st_nlink;
	    /*
	     * -Dappl1 (tests): the link count alone, as procfs and debugfs
	     * give it, whose directory times do not move with their entries
	     */
	    if (!pmDebugOptions.appl1) {
		sig[b].size = st.st_size;
		sig[b].mtime = st.st_mtim;
		sig[b].ctime = st.st_ctim;
	    }
	}
    }
}

int
lc_dirsig_equal(const struct lc_dirsig a[LC_NBASES], const struct lc_dirsig b[LC_NBASES])
{
    int		i;

    for (i = 0; i < LC_NBASES; i++) {
	if (a[i].err != b[i].err || a[i].dev != b[i].dev || a[i].ino != b[i].ino ||
	    a[i].nlink != b[i].nlink || a[i].size != b[i].size ||
	    a[i].mtime.tv_sec != b[i].mtime.tv_sec || a[i].mtime.tv_nsec != b[i].mtime.tv_nsec ||
	    a[i].ctime.tv_sec != b[i].ctime.tv_sec || a[i].ctime.tv_nsec != b[i].ctime.tv_nsec)
	    return 0;
    }
    return 1;
}

static int
cmpstr(const void *a, const void *b)
{
    return strcmp(*(char * const *)a, *(char * const *)b);
}

int
lc_scan_names(const char *type, const struct lc_scan *sc,
	      void (*cb)(const char *name, void *arg), void *arg)
{
    char	rel[PATH_MAX], name[256];
    char	**names = NULL;
    const char	*p = sc->p, *end = sc->p + sc->n, *nl;
    size_t	n = 0, cap = 0, i, k, len;
    int		b = 0;

    for (; p < end; p = nl + 1) {
	if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
	    break;
	len = (size_t)(nl - p);
	if (len < 1)
	    continue;
	if (p[0] == '#') {
	    b = len >= 2 ? p[1] - '0' : 0;
	    continue;
	}
	if (len - 1 >= sizeof(name))
	    continue;
	memcpy(name, p + 1, len - 1);
	name[len - 1] = '\0';
	if (p[0] != 'd') {
	    /* symlinks (e.g. osc -> ../osp/...) must be directories inside ROOT */
	    if (b < 0 || b >= LC_NBASES ||
		(size_t)snprintf(rel, sizeof(rel), "%s/%s/%s", bases[b], type, name) >= sizeof(rel) ||
		!dir_inside(rel))
		continue;
	}
	if (n == cap) {
	    size_t	ncap = cap ? cap * 2 : 64;
	    char	**nn = realloc(names, ncap * sizeof(*names));

	    if (nn == NULL)
		break;
	    names = nn;
	    cap = ncap;
	}
	if ((names[n] = strdup(name)) == NULL)
	    break;
	n++;
    }
    if (n)
	qsort(names, n, sizeof(*names), cmpstr);
    for (i = 0, k = 0; i < n; i++) {
	if (i > 0 && strcmp(names[i], names[i - 1]) == 0)
	    continue;
	cb(names[i], arg);
	k++;
    }
    for (i = 0; i < n; i++)
	free(names[i]);
    free(names);
    return (int)k;
}

