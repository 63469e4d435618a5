/*
 * Corpus replay without libFuzzer (make test): every fuzz target is linked
 * in under the name lcfuzz_<target>.  Each regular file is handed to a
 * target in an exactly sized heap buffer (no NUL), so ASan sees any
 * over-read.  Symlinks are not followed.
 *
 *   fuzz_replay CORPUS		files under CORPUS/<target>/ go to <target>
 *   fuzz_replay --all DIR...	every file under DIR goes to every target
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TARGETS(X) X(stats) X(rpc_stats) X(version) X(import) X(names) \
		   X(lnet) X(lockless) X(value) X(unchanged) X(osrelease) X(persist)
#define DECL(t) int lcfuzz_##t(const uint8_t *data, size_t size);
TARGETS(DECL)

typedef int (*target_fn)(const uint8_t *, size_t);
static const struct {
    const char	*name;
    target_fn	fn;
} targets[] = {
#define ROW(t) { #t, lcfuzz_##t },
    TARGETS(ROW)
};
#define NTARGETS (sizeof(targets) / sizeof(targets[0]))

static int	nruns, nfiles;

static void
run_file(const char *path, int which)
{
    struct stat	st;
    uint8_t	*buf;
    ssize_t	n;
    size_t	t;
    int		fd;

    if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)) < 0)
	return;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (16 << 20)) {
	close(fd);
	return;
    }
    buf = malloc(st.st_size ? (size_t)st.st_size : 1);
    n = buf ? read(fd, buf, (size_t)st.st_size) : -1;
    close(fd);
    if (n >= 0) {
	for (t = 0; t < NTARGETS; t++) {
	    if (which >= 0 && (size_t)which != t)
		continue;
	    /* a fresh exact copy per target: no target sees another's writes */
	    uint8_t *copy = malloc(n ? (size_t)n : 1);

	    if (copy == NULL)
		break;
	    memcpy(copy, buf, (size_t)n);
	    targets[t].fn(copy, (size_t)n);
	    free(copy);
	    nruns++;
	}
	nfiles++;
    }
    free(buf);
}

static void
walk(const char *dir, int which)
{
    char		path[4096];
    struct dirent	*de;
    DIR			*d = opendir(dir);

    if (d == NULL) {
	run_file(dir, which);
	return;
    }
    while ((de = readdir(d)) != NULL) {
	if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
	    continue;
	snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
	if (de->d_type == DT_DIR)
	    walk(path, which);
	else if (de->d_type == DT_REG || de->d_type == DT_UNKNOWN)
	    run_file(path, which);
    }
    closedir(d);
}

int
main(int argc, char **argv)
{
    char	path[4096];
    size_t	t;
    int		i, per[NTARGETS] = { 0 };

    if (argc >= 2 && strcmp(argv[1], "--all") == 0) {
	for (i = 2; i < argc; i++)
	    walk(argv[i], -1);
	printf("fuzz replay: %d files x %zu targets, no crash\n", nfiles, NTARGETS);
	return nfiles > 0 ? 0 : 1;
    }
    if (argc != 2) {
	fprintf(stderr, "usage: %s CORPUS | --all DIR...\n", argv[0]);
	return 2;
    }
    for (t = 0; t < NTARGETS; t++) {
	int before = nfiles;

	snprintf(path, sizeof(path), "%s/%s", argv[1], targets[t].name);
	walk(path, (int)t);
	per[t] = nfiles - before;
    }
    printf("fuzz replay:");
    for (t = 0; t < NTARGETS; t++) {
	printf(" %s %d", targets[t].name, per[t]);
	if (per[t] == 0) {
	    printf("\nfuzz replay: no corpus for target %s\n", targets[t].name);
	    return 1;
	}
    }
    printf(" inputs, no crash\n");
    return 0;
}
