#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "paths.h"

/* lctl's search order for 2.10+ (libcfs/util/param.c), then 1.8-2.9 */
static const char *bases[LC_NBASES] = {
    "sys/fs/lustre",
    "sys/kernel/debug/lustre",
    "proc/fs/lustre",
};

static char	rootdir[PATH_MAX];
static size_t	rootlen;
static char	*rbuf;
static size_t	rcap;

int
lc_paths_init(const char *root)
{
    struct stat	st;

    if (realpath(root, rootdir) == NULL)
	return -1;
    if (stat(rootdir, &st) < 0)
	return -1;
    if (!S_ISDIR(st.st_mode)) {
	errno = ENOTDIR;
	return -1;
    }
    rootlen = strlen(rootdir);
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

ssize_t
lc_read_confined(const char *path, const char **bufp, int *truncated)
{
    char	real[PATH_MAX];
    struct stat	st;
    size_t	len = 0;
    ssize_t	n;
    int		fd, sts;

    *truncated = 0;
    if (realpath(path, real) == NULL)
	return -errno;
    if (!under_root(real))
	return -EXDEV;
    /* O_NONBLOCK: a FIFO planted in a tree must not hang the agent */
    fd = open(real, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
	return -errno;
    if (fstat(fd, &st) < 0) {
	sts = -errno;
	close(fd);
	return sts;
    }
    if (!S_ISREG(st.st_mode)) {
	close(fd);
	return -EINVAL;
    }
    if (!fd_under_root(fd)) {
	close(fd);
	return -EXDEV;
    }
    /* procfs/debugfs report st_size 0: read until EOF, up to the cap + 1 */
    for (;;) {
	if (len == rcap) {
	    size_t	ncap = rcap ? rcap * 2 : 65536;
	    char	*nb;

	    if (ncap > LC_READ_CAP + 1)
		ncap = LC_READ_CAP + 1;
	    if (ncap <= rcap)
		break;
	    if ((nb = realloc(rbuf, ncap)) == NULL) {
		close(fd);
		return -ENOMEM;
	    }
	    rbuf = nb;
	    rcap = ncap;
	}
	n = read(fd, rbuf + len, rcap - len);
	if (n < 0) {
	    if (errno == EINTR)
		continue;
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

ssize_t
lc_read_param(const char *type, const char *dev, const char *file,
	      int *hint, const char **bufp, int *truncated)
{
    char	path[PATH_MAX];
    ssize_t	sts = -ENOENT, s;
    int		i, b, start = (hint && *hint >= 0 && *hint < LC_NBASES) ? *hint : 0;

    for (i = 0; i < LC_NBASES; i++) {
	b = (start + i) % LC_NBASES;
	if (type)
	    s = snprintf(path, sizeof(path), "%s/%s/%s/%s/%s",
			 rootlen == 1 ? "" : rootdir, bases[b], type, dev, file);
	else
	    s = snprintf(path, sizeof(path), "%s/%s/%s",
			 rootlen == 1 ? "" : rootdir, bases[b], file);
	if (s < 0 || (size_t)s >= sizeof(path))
	    return -ENAMETOOLONG;
	s = lc_read_confined(path, bufp, truncated);
	if (s >= 0) {
	    if (hint)
		*hint = b;
	    return s;
	}
	/* a missing file is normal (it lives under another base) */
	if (s != -ENOENT && s != -ENOTDIR)
	    sts = s;
    }
    return sts;
}

static int
cmpstr(const void *a, const void *b)
{
    return strcmp(*(char * const *)a, *(char * const *)b);
}

int
lc_list_devices(const char *type, void (*cb)(const char *name, void *arg),
		void *arg)
{
    char	path[PATH_MAX], real[PATH_MAX], ent[PATH_MAX];
    char	**names = NULL;
    size_t	n = 0, cap = 0, i, k;
    struct dirent *de;
    struct stat	st;
    DIR		*dir;
    int		b;

    for (b = 0; b < LC_NBASES; b++) {
	if ((size_t)snprintf(path, sizeof(path), "%s/%s/%s", rootlen == 1 ? "" : rootdir,
			     bases[b], type) >= sizeof(path))
	    continue;
	if (realpath(path, real) == NULL || !under_root(real))
	    continue;
	if ((dir = opendir(real)) == NULL)
	    continue;
	while ((de = readdir(dir)) != NULL) {
	    if (de->d_name[0] == '.' || strlen(de->d_name) >= 256)
		continue;
	    if (de->d_type != DT_DIR) {
		/* symlinks (e.g. osc -> ../osp/...) must stay inside ROOT */
		if ((size_t)snprintf(ent, sizeof(ent), "%s/%s", real, de->d_name) >= sizeof(ent))
		    continue;
		if (realpath(ent, path) == NULL || !under_root(path) ||
		    stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		    continue;
	    }
	    if (n == cap) {
		size_t	ncap = cap ? cap * 2 : 64;
		char	**nn = realloc(names, ncap * sizeof(*names));

		if (nn == NULL)
		    goto nomem;
		names = nn;
		cap = ncap;
	    }
	    if ((names[n] = strdup(de->d_name)) == NULL)
		goto nomem;
	    n++;
	}
	closedir(dir);
	dir = NULL;
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

nomem:
    if (dir)
	closedir(dir);
    for (i = 0; i < n; i++)
	free(names[i]);
    free(names);
    return -ENOMEM;
}
