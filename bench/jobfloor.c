/*
 * The floor for bench_jobview.py: what any reader of a job's end through
 * the agents' job view pays per host, from C.
 *   jobfloor JOBID SPEC...
 * For each SPEC in turn: pmNewContext, pmLookupInDom of the job's slot
 * (lustreclient.job.begin_time's instance domain), one pmFetch of the
 * slot's answer (lustreclient.job.slot<S>.answer), pmFreeResult,
 * pmDestroyContext; nothing decoded.  Prints the hosts read, its own CPU
 * time (user+system, getrusage) in microseconds and the wall time in
 * microseconds.  Exit 1 when a host could not be read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <pcp/pmapi.h>

#define DOMAIN		220
#define JOB_INDOM	5
#define ANSWER_CLUSTER	30

static double
now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int
one(const char *spec, char *job)
{
    pmID	pmid;
    pmResult	*res;
    int		ctx, slot, sts;

    if ((ctx = pmNewContext(PM_CONTEXT_HOST, spec)) < 0)
	return ctx;
    if ((slot = pmLookupInDom(pmInDom_build(DOMAIN, JOB_INDOM), job)) < 0) {
	pmDestroyContext(ctx);
	return slot;
    }
    pmid = pmID_build(DOMAIN, ANSWER_CLUSTER, (unsigned)slot);
    if ((sts = pmFetch(1, &pmid, &res)) >= 0) {
	if (res->numpmid != 1 || res->vset[0]->numval != 1)
	    sts = PM_ERR_VALUE;
	pmFreeResult(res);
    }
    pmDestroyContext(ctx);
    return sts;
}

int
main(int argc, char **argv)
{
    struct rusage	ru;
    double		t0 = now_us(), wall;
    int			i, read = 0, sts;

    if (argc < 3) {
	fprintf(stderr, "usage: jobfloor JOBID SPEC...\n");
	return 2;
    }
    for (i = 2; i < argc; i++) {
	if ((sts = one(argv[i], argv[1])) < 0)
	    fprintf(stderr, "jobfloor: %s: %s\n", argv[i], pmErrStr(sts));
	else
	    read++;
    }
    wall = now_us() - t0;
    getrusage(RUSAGE_SELF, &ru);
    printf("%d %.0f %.0f\n", read,
	   ru.ru_utime.tv_sec * 1e6 + ru.ru_utime.tv_usec + ru.ru_stime.tv_sec * 1e6 + ru.ru_stime.tv_usec, wall);
    return read == argc - 2 ? 0 : 1;
}
