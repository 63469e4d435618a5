/*
 * All file system access of the agent.  Every path is resolved under ROOT
 * (option -r) and refused if it resolves outside it, so a symlink in a
 * test tree (or a hostile one under /proc) cannot make the agent read an
 * arbitrary file.  The Lustre parameter roots are globbed the way
 * "lctl get_param" does it, so one binary serves the 1.8 .. 2.17 layouts.
 *
 * Confinement: openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS
 * relative to a directory descriptor of ROOT (Linux 5.6+): one system call
 * per file, no window between check and open.  On older kernels each path
 * is realpath()ed, checked against ROOT, opened O_NOFOLLOW and re-checked
 * through /proc/self/fd.
 */
#ifndef LC_PATHS_H
#define LC_PATHS_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#define LC_READ_CAP	(4u << 20)	/* never read more of one file */
#define LC_NBASES	3		/* Lustre parameter roots */
#define LC_NLNET_BASES	2		/* LNet parameter roots */

/* realpath()s root; -1 (errno set) if it is not a usable directory */
int lc_paths_init(const char *root);
const char *lc_paths_root(void);
int lc_paths_root_is_slash(void);
const char *lc_paths_base(int i);	/* "sys/fs/lustre", ... */
int lc_paths_have_openat2(void);
const char *lc_paths_last(void);	/* ROOT-relative path of the last good read */	/* 1 when openat2 confinement is in use */
void lc_paths_force_fallback(void);	/* tests: use the realpath() path */

/* a raw device listing: see lc_scan_devices() */
struct lc_scan {
    char	*p;
    size_t	n, cap;
};
int lc_scan_devices(const char *type, struct lc_scan *sc);

/*
 * What <base>/<type>/ looks like from outside, per base: cheap to take
 * (no readdir), and different once entries come or go.  procfs, sysfs
 * and debugfs count subdirectories in st_nlink; disk and memory file
 * systems (captured or simulated trees) also move mtime/ctime.
 */
struct lc_dirsig {
    int			err;	/* 0, or why the directory could not be opened */
    dev_t		dev;
    ino_t		ino;
    nlink_t		nlink;
    off_t		size;
    struct timespec	mtime, ctime;
};
void lc_scan_signature(const char *type, struct lc_dirsig sig[LC_NBASES]);
int lc_dirsig_equal(const struct lc_dirsig a[LC_NBASES], const struct lc_dirsig b[LC_NBASES]);

/*
 * How many times a file that had been read came back ENOENT from every
 * base: its device may have been replaced since the last listing.
 */
unsigned long lc_paths_vanished(void);
int lc_scan_names(const char *type, const struct lc_scan *sc,
		  void (*cb)(const char *name, void *arg), void *arg);

/*
 * Call cb once per distinct entry name found in <base>/<type>/ across all
 * bases, in sorted order.  Hidden names, names too long and entries that
 * are not directories inside ROOT are skipped.  Returns the number of
 * names or a negative errno on allocation failure.
 */
/*
 * Read <base>/<type>/<dev>/<file> from the first base that has it
 * (<base>/<file> when type is NULL).  *hint remembers which base answered
 * last time so that the common case costs one open.  On success returns
 * the length and sets *bufp to an internal buffer that stays valid until
 * the next read; *truncated is set when the file was longer than
 * LC_READ_CAP (the content then ends at the last complete line).  Returns
 * a negative errno on failure (-ENOENT if no base has the file, -EXDEV if
 * it resolves outside ROOT, -EINVAL if not a regular file).
 */
ssize_t lc_read_param(const char *type, const char *dev, const char *file,
		      int *hint, const char **bufp, int *truncated);

/* The same over the LNet roots: sys/kernel/debug/lnet, proc/sys/lnet. */
ssize_t lc_read_lnet(const char *file, int *hint, const char **bufp, int *truncated);

/*
 * Read a path relative to ROOT (or absolute, then it must lie under ROOT)
 * with the same confinement: symlinks are followed while they stay inside
 * ROOT, one that leads out of it gives -EXDEV.  For files outside the
 * Lustre roots (the host's kernel release and os-release), tests, tooling.
 */
ssize_t lc_read_confined(const char *path, const char **bufp, int *truncated);

#endif /* LC_PATHS_H */
