/*
 * The job view (lustreclient.job.*, lustreclient.control.*): per job, the
 * deltas of the summed counters since the job's prolog stored its id into
 * lustreclient.control.job_begin, by the reporter's diff rules
 * (reporter/lustre_jobreport/report/diff.py), zero deltas of OSCs and MDCs not
 * sent, with the devices left out and why.
 *
 * This header and jobdiff.c are pure (no libpcp, no files): the metric
 * table, the begin/now records, the delta and left-out computation and the
 * slot table, driven by tests/unit/test_jobs.c.  jobs.c is the agent's side:
 * records from lc_value(), the store callback, the fetch of the slots.
 */
#ifndef LC_JOBS_H
#define LC_JOBS_H

#include <stddef.h>
#include <stdint.h>
#include "parse_rpc_stats.h"	/* RPC_HIST_MAX */

#define LC_JOB_SLOTS	8
#define LC_JOB_ID_MAX	63		/* job id: 1..63 of [A-Za-z0-9_.:+-] */
/*
 * The items of a slot's cluster, a contract with the reporter (catalog.py):
 * numbers are never moved or reused.  0..55 the job metric table (52 now,
 * appended to), 56..62 left_out.<source> (6 now, appended to), 63 job_id,
 * the last item a cluster has (LC_MAXITEM), clear of both tables' growth.
 */
#define LC_JOB_NMETRICS	52		/* slot items 0..51: the job metric table */
#define LC_JOB_NSOURCES	6		/* slot items 56..61: left_out.<source> */
#define LC_JOB_LEFT_OUT_ITEM 56
#define LC_JOB_ID_ITEM	63		/* job_id: the job the slot's values are of */
#define LC_JOB_K_RPC_READ 42		/* fs.rpc.read, fs.rpc.write: RPC_HIST_MAX values */
#define LC_JOB_K_RPC_WRITE 43

/* PMID clusters (lustreclient.h has the base ones, 0..20) */
#define CL_JOB		21		/* control.job_begin/job_end, job.begin_time, job.slots, job.restarts */
#define CL_JOB_SLOT0	22		/* slot s: cluster CL_JOB_SLOT0 + s */
#define JOB_CTL_BEGIN	0
#define JOB_CTL_END	1
#define JOB_BEGIN_TIME	2
/* item s: slot s's answer, every value a job's epilog reads as one aggregate (answer.c) */
#define CL_JOB_ANSWER	(CL_JOB_SLOT0 + LC_JOB_SLOTS)
/* item s: slot s's timeline, one aggregate (series.h) */
#define CL_JOB_SERIES	(CL_JOB_ANSWER + 1)
#define JOB_NSLOTS	3
#define JOB_RESTARTS	4		/* per slot in use: how often an agent took its job up again */

/* the kinds of device a job metric is kept for */
enum lc_jobkind { LC_JK_FS, LC_JK_OSC, LC_JK_MDC, LC_JK_N };

/* what an item of a slot's cluster is (lc_job_item) */
enum lc_jobitem {
    LC_JI_NONE,			/* no metric */
    LC_JI_DELTA,		/* 0..LC_JOB_NMETRICS-1: a job metric's deltas */
    LC_JI_LEFT_OUT,		/* left_out.<source> */
    LC_JI_JOB_ID,		/* job_id */
};
unsigned lc_job_item(unsigned item);

/* the sources (stats files) left_out.<source> tells about: item 56 + j */
enum lc_jobsrc {
    LC_JS_LLITE_STATS,		/* llite stats: clusters 2, 3 (FS) */
    LC_JS_LLITE_RA,		/* llite read_ahead_stats: cluster 12 (FS) */
    LC_JS_OSC_RPC,		/* osc rpc_stats, as the per-fs histogram fs.rpc (FS) */
    LC_JS_OSC_STATS,		/* osc stats: cluster 7 (OSC) */
    LC_JS_OSC_IMPORT,		/* osc import: cluster 10 (OSC) */
    LC_JS_MDC_IMPORT,		/* mdc import: cluster 11 (MDC) */
};

/*
 * Why a source of a device is left out (left_out.* values); 0: counted.
 * A contract with the reporter (catalog.Reason): codes are never moved or
 * reused.  lc_job_reasons names each and says what it means.
 */
enum lc_jobreason {
    LC_JR_COUNTED = 0,
    LC_JR_CLEARED = 1,
    LC_JR_REPLACED = 2,
    LC_JR_REMOUNTED = 3,
    LC_JR_NOT_READ_AT_BEGIN = 4,
    LC_JR_NOT_READ_AT_END = 5,
    LC_JR_GONE = 6,
    LC_JR_NOT_READ = 7,
    LC_JR_N
};

struct lc_jobmetric {
    const char	*path;		/* the base metric's name without "lustreclient." */
    unsigned	cluster, item;	/* the base metric's PMID */
    unsigned	src;		/* enum lc_jobsrc */
};
/* item k of a slot cluster is lc_job_metrics[k] */
extern const struct lc_jobmetric lc_job_metrics[LC_JOB_NMETRICS];

struct lc_jobsource {
    const char	*name;		/* left_out.<name> */
    unsigned	kind;		/* enum lc_jobkind of its instances */
    int		required;	/* catalog.SOURCES required=True: reason 7 applies */
    const char	*what;		/* for the help text */
};
extern const struct lc_jobsource lc_job_sources[LC_JOB_NSOURCES];

struct lc_jobreasoninfo {
    const char	*name;		/* as the reporter names the code (catalog.Reason) */
    const char	*what;		/* what it means, for the reporter's source */
};
/* code r (enum lc_jobreason) is lc_job_reasons[r] */
extern const struct lc_jobreasoninfo lc_job_reasons[LC_JR_N];

/*
 * What a job's epilog reads beside the slot's deltas: the metrics of the
 * end of the job (catalog.JOB_END_METRICS, the reporter's rule: every
 * metric of an end snapshot but the counters, the start times and the MDC
 * device names).  A slot's answer holds them; append only.
 */
struct lc_jobend {
    const char	*path;		/* the metric's name without "lustreclient." */
    unsigned	cluster, item;
};
#define LC_JOB_NEND	22
extern const struct lc_jobend lc_job_end_metrics[LC_JOB_NEND];

/*
 * The series table: the job metrics (indexes into lc_job_metrics, every one
 * of kind FS) whose values a job's timeline keeps per filesystem, in the
 * order a point holds them (a histogram: its RPC_HIST_MAX buckets in turn).
 * A contract with the reporter, as lc_job_metrics is: append only, so that
 * an older agent's table is this one's first metrics.
 */
#define LC_JOB_NSERIES	33
extern const unsigned lc_job_series[LC_JOB_NSERIES];
/* the values of a point of one filesystem: the series metrics' values summed */
unsigned lc_job_series_nval(void);
/*
 * The series table a point of nvalues values is of: m when the first m
 * metrics of this one have nvalues values (a timeline an older agent kept,
 * whose table had m metrics), 0 when no such table does.
 */
unsigned lc_job_series_metrics_of(unsigned nvalues);

/* the values metric k has per device: 1, or RPC_HIST_MAX (fs.rpc buckets) */
unsigned lc_job_nval(unsigned k);
/* kind of device metric k is kept for */
unsigned lc_job_kind(unsigned k);
/* where metric k's values start in a device's val[]/pres[], and their number per kind */
unsigned lc_job_off(unsigned k);
unsigned lc_job_kind_nval(unsigned kind);

/*
 * One device at one end (begin or now): what the job metrics of its kind
 * gave (pres[v]: lc_value gave a value), its identity, start times.
 */
struct lc_jobdev {
    int		inst;		/* FS, OSC or MDC instance id; -1 none (fs outside FS indom) */
    int		fs;		/* OSC/MDC: index of its fs in the record's fs list, -1 none */
    int		listed;		/* in the device listing (fs: mounted, llite.mount_id) */
    char	*name;		/* fs name (fs are matched by name) */
    char	*id;		/* identity: fs mount sbi, OSC/MDC device directory */
    int		start_ok[2];	/* FS: [0] llite stats; OSC: [0] osc stats, [1] rpc_stats */
    double	start[2];	/* seconds */
    uint64_t	*val;
    uint8_t	*pres;
    int		*binst;		/* FS: FS_BUCKET instance id of each bucket, -1 none */
    unsigned	reset_seen;	/* begin record: bit src, a reset of that source of this
				   device was seen by other means than these values (a
				   restarted agent's timeline): CLEARED from then on */
};

struct lc_jobrec {
    struct lc_jobdev *dev[LC_JK_N];	/* OSC and MDC sorted by inst */
    size_t	n[LC_JK_N], cap[LC_JK_N];
};

/* a new device of this kind at the end of rec (zeroed, no values); NULL: out of memory */
struct lc_jobdev *lc_jobrec_add(struct lc_jobrec *rec, unsigned kind, int inst,
				const char *name, const char *id);
/* sort OSC/MDC by instance id (after adding them all) */
void lc_jobrec_done(struct lc_jobrec *rec);
void lc_jobrec_clear(struct lc_jobrec *rec);	/* free everything, empty */
/* move src into dst (dst cleared first); src is left empty */
void lc_jobrec_move(struct lc_jobrec *dst, struct lc_jobrec *src);

/* one left-out source of one device */
struct lc_jobleft {
    unsigned	src;		/* enum lc_jobsrc */
    int		inst;		/* instance of lc_job_sources[src].kind */
    unsigned	reason;		/* enum lc_jobreason, > 0 */
};

/* the outcome of one slot at one fetch */
struct lc_jobres {
    uint64_t	*delta[LC_JK_N];	/* per now device, lc_job_kind_nval(kind) each */
    uint8_t	*counted[LC_JK_N];	/* beside delta: the value counts (0: left out, or not
					   given at the end, or not at the begin of a device
					   that existed then) */
    size_t	cap[LC_JK_N];
    struct lc_jobleft *left;
    size_t	nleft, capleft;
};

/*
 * The job's deltas from begin record b to now record e, as diff.py's
 * diff() of a snapshot taken at b and one taken at e: res->delta aligned
 * with e's devices, res->counted whether each counts; res->left the sources
 * of devices left out, each with one reason (precedence: REMOUNTED, GONE,
 * REPLACED, CLEARED, NOT_READ_AT_BEGIN, NOT_READ_AT_END, NOT_READ).
 * Returns 0, or -1 when out of memory.
 */
int lc_job_diff(const struct lc_jobrec *b, const struct lc_jobrec *e, struct lc_jobres *res);
void lc_jobres_free(struct lc_jobres *res);

/*
 * What a slot serves at a fetch, from the outcome res of now record e: for
 * slot item `item`, fn(arg, inst, value) for each value.  Items 0..51, the
 * deltas: every counted value of a device with an instance, zeros too for a
 * filesystem and its buckets, none for OSCs and MDCs; items 56..61,
 * left_out.<source>: the reason of each device left out.  Returns 0, fn's
 * first negative return, or -1 for an item that is neither.
 * lc_job_answer_max: an upper bound of the number of values.
 */
typedef int (*lc_job_value_fn)(void *arg, int inst, uint64_t value);
int lc_job_answer(const struct lc_jobrec *e, const struct lc_jobres *res, unsigned item,
		  lc_job_value_fn fn, void *arg);
size_t lc_job_answer_max(const struct lc_jobrec *e, const struct lc_jobres *res, unsigned item);

/*
 * The series values of filesystem i of now record e, from the outcome res:
 * each series metric's counted deltas, 0 where not counted (left out, not
 * given), into out (lc_job_series_nval() values).
 */
void lc_job_series_values(const struct lc_jobrec *e, const struct lc_jobres *res, size_t i,
			  uint64_t *out);

/* a start time as the reporter keeps it: whole microseconds, 0 = not a time */
uint64_t lc_job_start_us(double sec);

/* whether s is an acceptable job id */
int lc_job_id_ok(const char *s);

struct lc_jobslot {
    int		used;
    char	id[LC_JOB_ID_MAX + 1];
    double	begin_time;	/* seconds since the epoch */
    struct lc_jobrec rec;	/* values at begin */
};

/*
 * The slot a job_begin of id takes: the slot holding id already (taken
 * again), else a free one, else the one with the oldest begin_time (*evicted
 * set to 1; its id is still in the slot).  lc_job_begin fills it.
 */
int lc_job_pick(const struct lc_jobslot slots[LC_JOB_SLOTS], const char *id, int *evicted);
/* the slot holding id, or -1 */
int lc_job_find(const struct lc_jobslot slots[LC_JOB_SLOTS], const char *id);
/*
 * job_begin of id: the slot lc_job_pick gives is job id's from now, its
 * begin values rec (moved into the slot, rec left empty) taken at
 * begin_time; the job it held is forgotten, its id copied to evicted
 * ("" when none was evicted).  Returns the slot.
 */
int lc_job_begin(struct lc_jobslot slots[LC_JOB_SLOTS], const char *id, double begin_time,
		 struct lc_jobrec *rec, char evicted[LC_JOB_ID_MAX + 1]);
/* job_end of id: the slot holding it holds no job; that slot, or -1 (none held it) */
int lc_job_end(struct lc_jobslot slots[LC_JOB_SLOTS], const char *id);
/*
 * The id of the job whose values the slot serves (its job_id item), NULL
 * while it holds none.  A fetch gives it beside the slot's deltas, so that
 * the reader knows whose they are: the slot it looked a job up in may have
 * been taken by another job since.
 */
const char *lc_job_slot_id(const struct lc_jobslot *slot);

#endif /* LC_JOBS_H */
