/*
 * The floor for bench_agent.py: open, read to EOF and close each file of a
 * list, the least any reader of these files must do.
 *   rawread LIST [PASSES [INTERVAL_MS]]
 * LIST has one path per line.  Each pass reads every file once; the
 * program prints, per pass, the wall time in microseconds, and at the end
 * its own CPU time (user+system, from getrusage) in microseconds.  With an
 * interval it sleeps until the next multiple of it between passes (as a
 * sampler at 1 Hz would).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double
now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int
main(int argc, char **argv)
{
    static char	buf[65536];
    char	**paths = NULL, line[4096];
    size_t	n = 0, cap = 0, i;
    long	passes = argc > 2 ? atol(argv[2]) : 1, interval = argc > 3 ? atol(argv[3]) : 0, p;
    unsigned long long bytes = 0;
    struct rusage ru;
    double	t0, start;
    FILE	*f;

    if (argc < 2 || (f = fopen(argv[1], "r")) == NULL) {
	fprintf(stderr, "usage: %s LIST [PASSES [INTERVAL_MS]]\n", argv[0]);
	return 2;
    }
    while (fgets(line, sizeof(line), f)) {
	line[strcspn(line, "\n")] = '\0';
	if (line[0] == '\0')
	    continue;
	if (n == cap) {
	    cap = cap ? cap * 2 : 1024;
	    paths = realloc(paths, cap * sizeof(*paths));
	}
	paths[n++] = strdup(line);
    }
    fclose(f);
    start = now_us();
    for (p = 0; p < passes; p++) {
	t0 = now_us();
	for (i = 0; i < n; i++) {
	    int		fd = open(paths[i], O_RDONLY);
	    ssize_t	r;

	    if (fd < 0)
		continue;
	    while ((r = read(fd, buf, sizeof(buf))) > 0)
		bytes += (unsigned long long)r;
	    close(fd);
	}
	printf("pass %ld %.0f\n", p, now_us() - t0);
	fflush(stdout);
	if (interval > 0 && p + 1 < passes) {
	    double next = start + (p + 1) * interval * 1e3, wait = next - now_us();

	    if (wait > 0)
		usleep((useconds_t)wait);
	}
    }
    getrusage(RUSAGE_SELF, &ru);
    printf("files %zu bytes %llu cpu_us %ld\n", n, bytes / (unsigned long long)(passes ? passes : 1),
	   (long)(ru.ru_utime.tv_sec * 1000000L + ru.ru_utime.tv_usec +
		  ru.ru_stime.tv_sec * 1000000L + ru.ru_stime.tv_usec));
    return 0;
}
