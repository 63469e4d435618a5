/*
 * State shared by the pmdalustreclient sources.
 *
 * PMIDs are lustreclient(220):cluster:item.  A cluster groups the metrics
 * that come from one stats file, so a fetch can tell from the clusters in
 * its pmidlist which files it has to read.  Cluster and item numbers are
 * persistent (they end up in archives): only ever append.
 */
#ifndef LC_LUSTRECLIENT_H
#define LC_LUSTRECLIENT_H

#include <stdint.h>
#include <sys/types.h>
#include <pcp/pmapi.h>
#include <pcp/pmda.h>
#include "names.h"
#include "parse_import.h"
#include "parse_osrelease.h"
#include "unchanged.h"
#include "parse_rpc_stats.h"
#include "parse_version.h"
#include "series.h"
#include "selfstats.h"
#include "jobs.h"

enum lc_cluster {
    CL_GLOBAL = 0,	/* version, pagesize, agent self-statistics */
    CL_LLITE_DEV = 1,	/* llite.mount_id: directory names only */
    CL_LLITE_STATS = 2,	/* llite stats: bytes, calls, op counts, start time */
    CL_LLITE_LAT = 3,	/* llite stats: op latency sums (2.14+) */
    CL_FS_RPC = 4,	/* osc rpc_stats pages per rpc, summed per fs */
    CL_OSC_RPC = 5,	/* osc rpc_stats pages per rpc */
    CL_OSC_RPCHDR = 6,	/* osc rpc_stats header gauges, start time */
    CL_OSC_STATS = 7,	/* osc stats */
    CL_MDC_MD = 8,	/* mdc md_stats */
    CL_MDC_STATS = 9,	/* mdc stats */
    CL_OSC_IMPORT = 10,	/* osc import / state */
    CL_MDC_IMPORT = 11,	/* mdc import / state */
    CL_LLITE_RA = 12,	/* llite read_ahead_stats */
    CL_OSC_TUNABLE = 13, /* osc max_pages_per_rpc, max_rpcs_in_flight, max_dirty_mb, checksums */
    CL_OSC_LOCKLESS = 14, /* osc osc_stats (lockless I/O) */
    CL_MDC_RPC = 15,	/* mdc rpc_stats (2.8+) */
    CL_LNET = 16,	/* lnet stats */
    CL_OSC_DEV = 17,	/* osc.device: directory names only */
    CL_MDC_DEV = 18,	/* mdc.device: directory names only */
    CL_LLITE_TUNABLE = 19, /* llite read-ahead, checksum and hybrid I/O settings */
    CL_HOST = 20,	/* kernel release, OS image */
    /* 21: CL_JOB (control.*, job.begin_time, job.slots); 22..29: the job slots,
     * 30: their answers, 31: their timelines (jobs.h) */
    CL_NCLUSTERS = CL_JOB_SERIES + 1
};

enum lc_indom_serial {
    FS_INDOM = 0,
    OSC_INDOM = 1,
    MDC_INDOM = 2,
    FS_BUCKET_INDOM = 3,
    OSC_BUCKET_INDOM = 4,
    LC_NCACHED,			/* the indoms above are pmdaCache ones */
    JOB_INDOM = LC_NCACHED,	/* the job slots in use: a list of its own (jobs.c) */
    LC_NINDOMS
};

/* what a fetch needs refreshed; NEED_DEV_* are also lc_devices_refresh() bits */
#define NEED_DEV_LLITE	(1u << 14)
#define NEED_DEV_OSC	(1u << 15)
#define NEED_DEV_MDC	(1u << 16)
#define NEED_DEVICES	(NEED_DEV_LLITE | NEED_DEV_OSC | NEED_DEV_MDC)
#define NEED_DEV_SHIFT	14
#define NEED_VERSION	(1u << 1)
#define NEED_LLITE	(1u << 2)
#define NEED_OSC_RPC	(1u << 3)
#define NEED_OSC_STATS	(1u << 4)
#define NEED_OSC_IMPORT	(1u << 5)
#define NEED_MDC_MD	(1u << 6)
#define NEED_MDC_STATS	(1u << 7)
#define NEED_MDC_IMPORT	(1u << 8)
#define NEED_LLITE_RA	(1u << 9)
#define NEED_OSC_TUNABLE (1u << 10)
#define NEED_OSC_LOCKLESS (1u << 11)
#define NEED_MDC_RPC	(1u << 12)
#define NEED_LNET	(1u << 13)
#define NEED_LLITE_TUNABLE (1u << 17)
#define NEED_HOST	(1u << 18)
#define NEED_OSC_ALL	(NEED_OSC_RPC | NEED_OSC_STATS | NEED_OSC_IMPORT | NEED_OSC_TUNABLE | \
			 NEED_OSC_LOCKLESS)

/* file kinds, for per-device base hints and log-once bits (at most 32) */
enum lc_filekind {
    FK_LLITE_STATS, FK_OSC_RPC, FK_OSC_STATS, FK_OSC_IMPORT, FK_OSC_STATE,
    FK_MDC_MD, FK_MDC_STATS, FK_MDC_IMPORT, FK_MDC_STATE, FK_LLITE_RA,
    FK_OSC_MAXPAGES, FK_OSC_MAXRIF, FK_OSC_LOCKLESS, FK_MDC_RPC,
    FK_VERSION, FK_LNET,
    FK_OSC_MAXDIRTY, FK_OSC_CHECKSUMS,
    /* llite tunables: one kind per file (LLTUN_* order), then the pre-2.12 name */
    FK_LLTUN_FIRST, FK_LLTUN_LAST = FK_LLTUN_FIRST + 6, FK_LL_CHECKSUM_PAGES,
    /* host files: ROOT-relative paths, not under the Lustre roots */
    FK_KERNEL, FK_OSREL_ETC, FK_OSREL_LIB,
    FK_NKINDS
};
_Static_assert(FK_NKINDS <= 32, "lc_dev.logged has 32 bits per kind of event");
#define FK_IS_HOST(k)	((k) >= FK_KERNEL && (k) <= FK_OSREL_LIB)

#define LC_MAXITEM	64

/*
 * What reading one device's files takes: its type ("llite", "osc", "mdc",
 * "lnet"; NULL for the version file), its directory name, the base each
 * kind of file was last read from, and the failures already logged.
 */
struct lc_dev {
    const char	*type;
    char	name[LC_NAME_MAX];
    int		hint[FK_NKINDS];
    uint32_t	logged[3];	/* per kind: read failure, truncation, parse failure */
};

/* a counter line name in a stats file -> metric item(s) */
#define LC_OP_COUNT	1u	/* CL_LLITE_STATS / CL_MDC_MD: samples */
#define LC_OP_LAT	2u	/* CL_LLITE_LAT: sum where the unit is usec(s) (2.14+) */
#define LC_OP_SUM	4u	/* CL_LLITE_RA: the sum where the line has one */
struct lc_op {
    const char	*file_name;
    unsigned	item;
    const char	*metric;	/* last PMNS component */
    unsigned	flags;
};
extern const struct lc_op lc_llite_ops[];	/* CL_LLITE_STATS item >= 10, CL_LLITE_LAT */
extern const size_t lc_llite_nops;
extern const struct lc_op lc_mdc_ops[];		/* CL_MDC_MD */
extern const size_t lc_mdc_nops;
extern const struct lc_op lc_ra_ops[];		/* CL_LLITE_RA */
extern const size_t lc_ra_nops;

/* CL_GLOBAL items */
#define GLOBAL_VERSION		0
#define GLOBAL_PAGESIZE		1
#define GLOBAL_FILES_READ	2
#define GLOBAL_READ_FAILURES	3
#define GLOBAL_PARSE_FAILURES	4
#define GLOBAL_BUDGET_SKIPS	5
/* the same four for the fetch that returns them (agent.fetch.*) */
#define GLOBAL_FETCH_FILES_READ	6
#define GLOBAL_FETCH_READ_FAILURES 7
#define GLOBAL_FETCH_PARSE_FAILURES 8
#define GLOBAL_FETCH_BUDGET_SKIPS 9
/* lc_value() maps both groups of four onto enum lc_count in this order */
_Static_assert(GLOBAL_READ_FAILURES - GLOBAL_FILES_READ == LC_READ_FAILURES &&
	       GLOBAL_PARSE_FAILURES - GLOBAL_FILES_READ == LC_PARSE_FAILURES &&
	       GLOBAL_BUDGET_SKIPS - GLOBAL_FILES_READ == LC_BUDGET_SKIPS &&
	       GLOBAL_FETCH_BUDGET_SKIPS - GLOBAL_FETCH_FILES_READ == LC_BUDGET_SKIPS &&
	       GLOBAL_FETCH_READ_FAILURES - GLOBAL_FETCH_FILES_READ == LC_READ_FAILURES &&
	       GLOBAL_FETCH_PARSE_FAILURES - GLOBAL_FETCH_FILES_READ == LC_PARSE_FAILURES &&
	       LC_FILES_READ == 0 && LC_NCOUNTS == 4, "agent item order != enum lc_count");

/* CL_LLITE_STATS fixed items */
#define LLITE_READ_BYTES	0
#define LLITE_WRITE_BYTES	1
#define LLITE_READ_CALLS	2
#define LLITE_WRITE_CALLS	3
#define LLITE_STATS_START	4
/* hybrid I/O (lustreclient.llite.hybrid.*): the bytes lines are 2.16.52+
 * (LU-18432), the switch counts (lc_llite_ops) 2.15.64+ (LU-13802) */
#define LLITE_HYB_READ_BYTES	48
#define LLITE_HYB_WRITE_BYTES	49
#define LLITE_HYB_READ_CALLS	50
#define LLITE_HYB_WRITE_CALLS	51
#define LLITE_HYB_NOSWITCH	52
#define LLITE_HYB_READSIZE_SWITCH 53
#define LLITE_HYB_WRITESIZE_SWITCH 54
#define LLITE_HYB_FIRST		LLITE_HYB_READ_BYTES
#define LLITE_HYB_LAST		LLITE_HYB_WRITESIZE_SWITCH
#define LC_VERSION_HYB_SWITCH	LC_VERSION(2, 15, 64)
#define LC_VERSION_HYB_BYTES	LC_VERSION(2, 16, 52)
/* llite stats ops carry their latency ([usec]) from 2.14 (LU-12631) */
#define LC_VERSION_LAT		LC_VERSION(2, 14, 0)

/* CL_LLITE_TUNABLE items, each one file of the llite device directory */
#define LLTUN_RA_MB		0	/* max_read_ahead_mb */
#define LLTUN_RA_FILE_MB	1	/* max_read_ahead_per_file_mb */
#define LLTUN_RA_WHOLE_MB	2	/* max_read_ahead_whole_mb */
#define LLTUN_CHECKSUMS		3	/* checksums (2.12+), checksum_pages before */
#define LLTUN_HYBRID_IO		4	/* hybrid_io (2.16+) */
#define LLTUN_HYB_READ_THRESH	5	/* hybrid_io_read_threshold_bytes (2.16+) */
#define LLTUN_HYB_WRITE_THRESH	6	/* hybrid_io_write_threshold_bytes (2.16+) */
#define LLTUN_N			7
_Static_assert(FK_LLTUN_LAST - FK_LLTUN_FIRST + 1 == LLTUN_N, "a file kind per llite tunable");

/* CL_OSC_TUNABLE items */
#define OTUN_MAXPAGES		0
#define OTUN_MAXRIF		1
#define OTUN_MAXDIRTY		2
#define OTUN_CHECKSUMS		3
#define OTUN_N			4

/* CL_HOST items */
#define HOST_KERNEL		0
#define HOST_OS			1

/* CL_OSC_RPCHDR items */
#define RPCHDR_READ_INFLIGHT	0
#define RPCHDR_WRITE_INFLIGHT	1
#define RPCHDR_PENDING_READ	2
#define RPCHDR_PENDING_WRITE	3
#define RPCHDR_DIO_INFLIGHT	4
#define RPCHDR_START		5

/* CL_OSC_STATS / CL_MDC_STATS items */
#define OSTATS_READ_BYTES	0
#define OSTATS_WRITE_BYTES	1
#define OSTATS_READ_RPCS	2
#define OSTATS_WRITE_RPCS	3
#define OSTATS_WAITTIME		4
#define OSTATS_REQ_COUNT	5
#define OSTATS_START		6
#define MSTATS_WAITTIME		0
#define MSTATS_REQ_COUNT	1
#define MSTATS_START		2

/* CL_MDC_MD: the start time, beside the op items of lc_mdc_ops */
#define MDMD_START		30

/* CL_OSC_IMPORT / CL_MDC_IMPORT items */
#define IMP_STATE		0
#define IMP_CONNECT_COUNT	1
#define IMP_RECONNECTS		2
#define IMP_TIMEOUTS		3
#define IMP_INFLIGHT		4

/* CL_MDC_RPC items */
#define MRPC_MOD_INFLIGHT	0
#define MRPC_MOD_RPCS		1
#define MRPC_READ_INFLIGHT	2
#define MRPC_WRITE_INFLIGHT	3
#define MRPC_START		4

#define LNET_NVALS		11

/* a start_time header line: when the counters were allocated or cleared */
struct lc_start {
    int		ok;
    double	sec;
};

/* the <sbi>s an fs's OSCs (or MDCs) carry: one is its llite mount's, the smallest */
struct lc_sbichoice {
    int		match;
    char	min[LC_NAME_MAX];
};

struct lc_fs {
    char	name[LC_NAME_MAX];	/* fsname: FS instance name */
    struct lc_dev d;			/* the llite directory */
    char	sbi[LC_NAME_MAX];
    int		has_llite;		/* in the FS indom now */
    int		nmounts;		/* llite dirs of this fs now */
    int		logged_mounts;
    int		nosc;			/* OSCs present now */
    int		maxidx;			/* highest FS_BUCKET exported */
    /* scratch for choosing one mount when an fs is mounted twice (devices.c) */
    struct lc_sbichoice osc_sbi, mdc_sbi;
    /* llite stats */
    int		ll_ok, bytes_ok, lat_ok;
    int		hyb_switch_ok;		/* hybrid switch counts: this version has them */
    int		hyb_bytes_ok;		/* hybrid bytes/calls: this version has them */
    int		hyb_sum_ok;		/* no hybrid bytes line without its sum */
    uint64_t	ll[LC_MAXITEM];
    uint64_t	lat[LC_MAXITEM];
    uint64_t	lat_valid;		/* bit per item */
    struct lc_start ll_start;
    /* llite read_ahead_stats */
    int		ra_ok;
    uint64_t	ra[LC_MAXITEM];
    /* llite tunables: tun_ok has a bit per LLTUN_* item read this fetch */
    unsigned	tun_ok;
    uint32_t	tun[LLTUN_N];
    int		ck_old;			/* checksum_pages answered, checksums did not */
    /* fs.rpc: sum over the OSCs */
    int		rpc_ok;
    uint64_t	rpc_read[RPC_HIST_MAX], rpc_write[RPC_HIST_MAX];
};

struct lc_osc {
    char	name[LC_NAME_MAX];	/* <fs>-OSTxxxx */
    struct lc_dev d;
    struct lc_fs *fs;
    int		present;
    int		maxidx;			/* highest OSC_BUCKET exported */
    int		grew;			/* maxidx went up in this fetch */
    int		rpc_ok;
    struct rpc_stats rs;
    int		stats_ok;
    uint64_t	read_bytes, write_bytes, read_rpcs, write_rpcs;
    uint64_t	waittime, req_count;
    struct lc_start stats_start;
    struct import_info imp;
    int		imp_ok;
    unsigned	tun_ok;			/* bit per OTUN_* item read this fetch */
    uint32_t	tun[OTUN_N];
    int		lockless_ok;
    uint64_t	lockless_read, lockless_write;
    /* the text behind the values above, per file (unchanged.h) */
    struct lc_seen seen_rpc, seen_stats, seen_import, seen_lockless;
};

struct lc_mdc {
    char	name[LC_NAME_MAX];	/* <fs>-MDTxxxx */
    struct lc_dev d;
    struct lc_fs *fs;
    int		present;
    int		md_ok;
    uint64_t	md[LC_MAXITEM];
    struct lc_start md_start;
    int		stats_ok;
    uint64_t	waittime, req_count;
    struct lc_start stats_start;
    struct import_info imp;
    int		imp_ok;
    int		rpc_ok;
    struct rpc_stats rs;
};

struct lc_bucket {
    struct lc_fs	*fs;	/* FS_BUCKET */
    struct lc_osc	*osc;	/* OSC_BUCKET */
    int			idx;	/* log2 of the pages per RPC */
};

struct lc_agent {
    pmInDom		indom[LC_NINDOMS];
    uint64_t		pagesize;
    int			persist;	/* pmdaCache LOAD/SAVE */
    char		version[LC_VERSION_MAX];
    int			version_ok;
    long		version_code;	/* version_code() of version, -1 unknown */
    struct lc_dev	top, lnetdev;	/* the version file; LNet stats */
    struct lc_dev	host;		/* kernel release, os-release */
    int			kernel_ok, os_ok;
    char		kernel[LC_KERNEL_MAX];
    char		os[LC_OS_MAX];
    /* the items of each cluster the fetch asks for (bit per item < 64) */
    uint64_t		items[CL_NCLUSTERS];
    struct lc_fs	**fs;
    size_t		nfs;
    struct lc_osc	**osc;
    size_t		nosc;
    struct lc_mdc	**mdc;
    size_t		nmdc;
    int			lnet_ok;
    uint64_t		lnet[LNET_NVALS];
    /* fetch time budget: files not yet read when it runs out are skipped */
    uint64_t		budget_ns;	/* 0 = none */
    uint64_t		deadline_ns;	/* CLOCK_MONOTONIC */
    volatile int	deadline_hit;	/* set once the deadline has passed */
    /* self statistics: since start (agent.*) and of the last fetch (agent.fetch.*) */
    struct lc_selfstats	self;
};

extern struct lc_agent lc;

/* whether this fetch asks for item of cluster (lc.items, set by lc_fetch) */
static inline int
lc_wanted(unsigned cluster, unsigned item)
{
    return (lc.items[cluster] >> item) & 1;
}

/* devices.c */
int lc_devices_refresh(unsigned which, int force);	/* 1 llite, 2 osc, 4 mdc */
void lc_buckets_refresh(void);
void lc_cache_save(void);

/* refresh_*.c */
void lc_refresh_version(void);
void lc_refresh_lnet(void);
void lc_refresh_host(void);		/* the lc.items[CL_HOST] files */
void lc_refresh_llite(void);
void lc_refresh_llite_ra(void);
void lc_refresh_llite_tunables(void);	/* the lc.items[CL_LLITE_TUNABLE] files */
void lc_refresh_osc(unsigned need);	/* the NEED_OSC_* files, on the reader threads */
void lc_refresh_mdc_md(void);
void lc_refresh_mdc_stats(void);
void lc_refresh_mdc_import(void);
void lc_refresh_mdc_rpc(void);
void lc_refresh_import(struct lc_dev *d, int kimport, int kstate,
		       struct import_info *imp, int *ok, struct lc_seen *seen);

/* pool.c: reader threads */
int lc_pool_init(int threads);
int lc_pool_threads(void);
void lc_parallel_for(size_t n, void (*fn)(size_t i, void *arg), void *arg);

/* fetch.c */
int lc_value(unsigned cluster, unsigned item, void *priv, pmAtomValue *atom);
void lc_fetch_init(pmdaMetric *metrics, int nmetrics);
void lc_indoms_changed(void);
int lc_answer_atom(unsigned slot, pmAtomValue *atom);
int lc_fast_fetch(int numpmid, pmID pmidlist[], pmResult **resp, pmdaExt *pmda);
void lc_fast_fetch_done(pmResult *result);

/* jobs.c: the job view */
typedef int (*lc_jobs_fn)(void *arg, int inst, pmAtomValue *atom);
void lc_jobs_init(pmdaIndom *idp);
void lc_jobs_changed(void);		/* a fetch's refresh: now values to be read again */
int lc_jobs_begin(const char *id);	/* after a refresh of every job file */
void lc_jobs_end(const char *id);
int lc_jobs_slot_used(int slot);
size_t lc_jobs_nvalues(unsigned cluster, unsigned item);
int lc_jobs_values(unsigned cluster, unsigned item, lc_jobs_fn fn, void *arg);
int lc_jobs_value(unsigned cluster, unsigned item, int inst, pmAtomValue *atom);
/* the job's timeline (series.h) */
void lc_jobs_set_interval(uint32_t interval_ms);
uint32_t lc_jobs_interval(void);
int lc_jobs_in_use(void);		/* some slot holds a job: samples are due */
void lc_jobs_sample(uint64_t t_ms);	/* after a refresh of the series files (lc_refresh_series_files) */
/*
 * slot's series after a sample now (a fetch's own), packed into *block
 * (valid until lc_jobs_series_sent, or the slot's next fetch): 1, 0 when
 * the slot holds no job, or an error
 */
int lc_jobs_series(unsigned slot, pmValueBlock **block);
void lc_jobs_series_sent(void);		/* the fetch's result is sent: its series blocks freed */
uint64_t lc_jobs_clock_ms(void);	/* the time samples are binned by: ms since the epoch */
/* the series table's base PMIDs and their values a point, once */
void lc_jobs_series_metrics(const uint32_t **pmids, const uint32_t **nvals);
/*
 * The slots kept on disk (jobstate.h): each slot in use written again, its
 * timeline as it is now (the checkpoint, and the agent's last act); the
 * files there taken up at start, after the device listings are read.
 */
void lc_jobs_checkpoint(void);
void lc_jobs_restore(void);
static inline int
lc_is_job_cluster(unsigned cluster)
{
    return cluster >= CL_JOB && cluster < CL_JOB_SLOT0 + LC_JOB_SLOTS;
}

/* control.c: the stores into control.job_begin and job_end, from root only */
void lc_control_init(pmdaInterface *dispatch);
/* pmda.c: read every file of the job metrics (job_begin takes its values after this) */
void lc_refresh_job_files(void);
/* pmda.c: read the files a timeline's sample needs (the series metrics' sources) */
void lc_refresh_series_files(void);
/* fetch.c: slot's series as a value (option -F): 1, or an error */
int lc_series_atom(unsigned slot, pmAtomValue *atom);

/* start the fetch time budget (lc.budget_ns from now) */
void lc_budget_start(void);

/*
 * Read one parameter file of a device; on failure log once per
 * (device, file kind) until it works again.  Returns the length or < 0:
 * -ETIME when the fetch budget is used up (nothing read), -EBADMSG when
 * the file ends in the middle of a line (kernel seq files never do: it was
 * cut off), else the read error.
 */
ssize_t lc_read_devfile(struct lc_dev *d, const char *file, int kind, const char **bufp);
/* a device of this type, not yet named, nothing read or logged */
void lc_dev_init(struct lc_dev *d, const char *type);
/*
 * After parsing a file that lc_read_devfile gave: ok 0 counts a parse
 * failure and logs it once per (device, kind) until a parse succeeds
 * again.  Returns ok.
 */
int lc_parsed(struct lc_dev *d, int kind, const char *file, int ok);
/*
 * A file holding one number that fits in 32 bits, at most max; mb: a size
 * in MiB, which up to 2.13 may be printed with a fraction (lc_parse_single_mb).
 * Returns 1 and sets *out; 0 when read but not understood (lc_parsed); or
 * lc_read_devfile's negative errno when not read.
 */
int lc_read_u32(struct lc_dev *d, const char *file, int kind, uint32_t *out, uint32_t max, int mb);
/* a parsed start_time header line as a struct lc_start */
void lc_start_set(struct lc_start *s, const struct lc_time *t);

#endif /* LC_LUSTRECLIENT_H */
