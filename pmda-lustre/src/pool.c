/*
 * A small pool of reader threads for the per-OSC work of a fetch.
 *
 * On a client with thousands of OSCs most of a fetch is the kernel
 * producing and copying small files; spreading the devices over a few
 * threads cuts the time pmcd waits, and a debugfs file that is slow to
 * read (a busy client) holds up only the thread reading it.  Each device
 * is handled by exactly one thread and only touches its own struct; the
 * read buffer and parser state are per thread (__thread in paths.c and
 * refresh_*.c), the agent-wide counters are atomic.  Everything else
 * (instance domains, pmdaCache, the fs sums, logging of the agent state)
 * stays on the main thread.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include "lustreclient.h"

static int		nthreads = 1;	/* workers + the main thread */
static pthread_t	*workers;
static pthread_mutex_t	mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	go = PTHREAD_COND_INITIALIZER;
static pthread_cond_t	finished = PTHREAD_COND_INITIALIZER;
static unsigned long	generation;
static int		busy;		/* workers still on the current job */
static void		(*job_fn)(size_t, void *);
static void		*job_arg;
static size_t		job_n, job_next;

static void
run_job(void)
{
    size_t	i;

    while ((i = __atomic_fetch_add(&job_next, 1, __ATOMIC_RELAXED)) < job_n)
	job_fn(i, job_arg);
}

static void *
worker(void *unused)
{
    unsigned long seen = 0;

    (void)unused;
    pthread_mutex_lock(&mu);
    for (;;) {
	while (generation == seen)
	    pthread_cond_wait(&go, &mu);
	seen = generation;
	pthread_mutex_unlock(&mu);
	run_job();
	pthread_mutex_lock(&mu);
	if (--busy == 0)
	    pthread_cond_signal(&finished);
    }
    return NULL;
}

int
lc_pool_init(int threads)
{
    sigset_t	all, old;
    int		i;

    if (threads < 1)
	threads = 1;
    if (threads > 64)
	threads = 64;
    if (threads == 1)
	return 0;
    if ((workers = calloc((size_t)threads - 1, sizeof(*workers))) == NULL)
	return -1;
    /* signals (pmcd's SIGTERM ...) stay with the main thread */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    for (i = 0; i < threads - 1; i++) {
	if (pthread_create(&workers[i], NULL, worker, NULL) != 0)
	    break;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    nthreads = i + 1;
    return nthreads;
}

int
lc_pool_threads(void)
{
    return nthreads;
}

void
lc_parallel_for(size_t n, void (*fn)(size_t i, void *arg), void *arg)
{
    size_t	i;

    /* not worth waking anyone for a few devices */
    if (nthreads == 1 || n < 16) {
	for (i = 0; i < n; i++)
	    fn(i, arg);
	return;
    }
    pthread_mutex_lock(&mu);
    job_fn = fn;
    job_arg = arg;
    job_n = n;
    job_next = 0;
    busy = nthreads - 1;
    generation++;
    pthread_cond_broadcast(&go);
    pthread_mutex_unlock(&mu);
    run_job();
    pthread_mutex_lock(&mu);
    while (busy > 0)
	pthread_cond_wait(&finished, &mu);
    pthread_mutex_unlock(&mu);
}
