/*
 * Corpus replay without libFuzzer: feed every regular file found under the
 * given directories to LLVMFuzzerTestOneInput, in an exactly sized heap
 * buffer (no NUL) so ASan sees any over-read.  Symlinks are not followed.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int	nfiles;

static void
run_file(const char *path)
{
    struct stat	st;
    uint8_t	*buf;
    ssize_t	n;
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
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	nfiles++;
    }
    free(buf);
}

static void
walk(const char *dir)
{
    char		path[4096];
    struct dirent	*de;
    DIR			*d = opendir(dir);

    if (d == NULL) {
	run_file(dir);
	return;
    }
    while ((de = readdir(d)) != NULL) {
	if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
	    continue;
	snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
	if (de->d_type == DT_DIR)
	    walk(path);
	else if (de->d_type == DT_REG || de->d_type == DT_UNKNOWN)
	    run_file(path);
    }
    closedir(d);
}

int
main(int argc, char **argv)
{
    int	i;

    for (i = 1; i < argc; i++)
	walk(argv[i]);
    printf("fuzz replay: %d inputs, no crash\n", nfiles);
    return nfiles > 0 ? 0 : 1;
}
