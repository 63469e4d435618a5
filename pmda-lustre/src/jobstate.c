/*
 * Where the job slots are kept on disk (docs/admin.md, "Where the agent
 * keeps its jobs"): one file per slot in use, slot<S>, in a directory the
 * agent owns and no one else can write, each written whole (a temporary
 * file, fsync, rename, fsync of the directory), so that a crash leaves the
 * old file or the new one, never half of one.  The directory is opened once
 * (not through a symlink) and every file is reached from that descriptor.
 * The layout of a file is persist.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "lustreclient.h"
#include "jobstate.h"
#include "persist.h"

static int	dirfd_ = -1;
static char	dirpath[MAXPATHLEN];
static int	write_failing;		/* a failed write was logged: the next is not, until one succeeds */

/* the directory is ours alone: a directory, not a link, owned by us, no access for others */
static int
dir_ok(int fd, const char *path)
{
    struct stat	st;

    if (fstat(fd, &st) < 0) {
	pmNotifyErr(LOG_ERR, "job state directory %s: %s; running jobs are not kept across a restart",
		    path, strerror(errno));
	return 0;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
	pmNotifyErr(LOG_ERR, "job state directory %s: not a directory of uid %d with mode 0700 "
		    "(uid %d, mode %04o); running jobs are not kept across a restart",
		    path, (int)geteuid(), (int)st.st_uid, (unsigned)(st.st_mode & 07777));
	return 0;
    }
    return 1;
}

int
lc_jobstate_open(const char *path)
{
    int		fd;

    if (mkdir(path, 0700) < 0 && errno != EEXIST) {
	pmNotifyErr(LOG_ERR, "job state directory %s: %s; running jobs are not kept across a restart",
		    path, strerror(errno));
	return -1;
    }
    if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
	pmNotifyErr(LOG_ERR, "job state directory %s: %s; running jobs are not kept across a restart",
		    path, errno == ELOOP || errno == ENOTDIR ? "a symbolic link or not a directory" : strerror(errno));
	return -1;
    }
    if (!dir_ok(fd, path)) {
	close(fd);
	return -1;
    }
    dirfd_ = fd;
    pmsprintf(dirpath, sizeof(dirpath), "%s", path);
    return 0;
}

int
lc_jobstate_enabled(void)
{
    return dirfd_ >= 0;
}

const char *
lc_jobstate_dir(void)
{
    return dirfd_ >= 0 ? dirpath : NULL;
}

static void
name_of(unsigned slot, char *name, size_t size, int tmp)
{
    pmsprintf(name, size, "slot%u%s", slot, tmp ? ".tmp" : "");
}

/* all of buf to fd */
static int
write_all(int fd, const unsigned char *buf, size_t len)
{
    while (len > 0) {
	ssize_t n = write(fd, buf, len);

	if (n < 0 && errno == EINTR)
	    continue;
	if (n <= 0)
	    return -1;
	buf += n;
	len -= (size_t)n;
    }
    return 0;
}

int
lc_jobstate_write(unsigned slot, const void *buf, size_t len)
{
    char	tmp[32], name[32];
    int		fd, sts = -1;

    if (dirfd_ < 0)
	return 0;
    name_of(slot, tmp, sizeof(tmp), 1);
    name_of(slot, name, sizeof(name), 0);
    unlinkat(dirfd_, tmp, 0);	/* a temporary file a crash left, or anything else by that name */
    if ((fd = openat(dirfd_, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) >= 0) {
	if (write_all(fd, buf, len) == 0 && fsync(fd) == 0)
	    sts = 0;
	if (close(fd) < 0)
	    sts = -1;
    }
    if (sts == 0 && renameat(dirfd_, tmp, dirfd_, name) == 0 && fsync(dirfd_) == 0) {
	write_failing = 0;
	return 0;
    }
    if (!write_failing)
	pmNotifyErr(LOG_ERR, "job slot %u: cannot keep it in %s/%s: %s", slot, dirpath, name, strerror(errno));
    write_failing = 1;
    unlinkat(dirfd_, tmp, 0);
    return -1;
}

void
lc_jobstate_remove(unsigned slot)
{
    char	tmp[32], name[32];

    if (dirfd_ < 0)
	return;
    name_of(slot, tmp, sizeof(tmp), 1);
    name_of(slot, name, sizeof(name), 0);
    unlinkat(dirfd_, tmp, 0);
    if (unlinkat(dirfd_, name, 0) == 0)
	fsync(dirfd_);
}

/* all of a regular file of ours no larger than max, from fd; NULL with *why */
static void *
read_all(int fd, size_t max, size_t *len, const char **why)
{
    struct stat		st;
    unsigned char	*buf;
    size_t		got = 0;

    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
	*why = "not a regular file of the agent's";
	return NULL;
    }
    if ((uint64_t)st.st_size > max) {
	*why = "too large";
	return NULL;
    }
    if ((buf = malloc(st.st_size ? (size_t)st.st_size : 1)) == NULL) {
	*why = "out of memory";
	return NULL;
    }
    while (got < (size_t)st.st_size) {
	ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

	if (n < 0 && errno == EINTR)
	    continue;
	if (n <= 0)
	    break;	/* shorter than it was: decoded as it is, and found truncated */
	got += (size_t)n;
    }
    *len = got;
    return buf;
}

void *
lc_jobstate_read(unsigned slot, size_t *len)
{
    char	name[32];
    const char	*why = NULL;
    void	*buf;
    int		fd;

    if (dirfd_ < 0)
	return NULL;
    name_of(slot, name, sizeof(name), 0);
    if ((fd = openat(dirfd_, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0) {
	if (errno != ENOENT) {
	    pmNotifyErr(LOG_WARNING, "job slot file %s/%s: %s; removed", dirpath, name, strerror(errno));
	    unlinkat(dirfd_, name, 0);
	}
	return NULL;
    }
    buf = read_all(fd, LC_PERSIST_MAX_BYTES, len, &why);
    close(fd);
    if (buf == NULL) {
	pmNotifyErr(LOG_WARNING, "job slot file %s/%s: %s; removed", dirpath, name, why);
	unlinkat(dirfd_, name, 0);
    }
    return buf;
}

void
lc_jobstate_refuse(unsigned slot, const char *why)
{
    char	name[32];

    name_of(slot, name, sizeof(name), 0);
    pmNotifyErr(LOG_WARNING, "job slot file %s/%s: %s; not taken up, removed", dirpath, name, why);
    unlinkat(dirfd_, name, 0);
}
