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
#include "parse_rpc_stats.h"
#include "parse_version.h"

enum lc_cluster {
    CL_GLOBAL = 0,	/* version, pagesize */
    CL_LLITE_DEV = 1,	/* llite.mount_id: directory names only */
    CL_LLITE_STATS = 2,	/* llite stats: bytes, calls, op counts */
    CL_LLITE_LAT = 3,	/* llite stats: op latency sums (2.14+) */
    CL_FS_RPC = 4,	/* osc rpc_stats pages per rpc, summed per fs */
    CL_OSC_RPC = 5,	/* osc rpc_stats pages per rpc */
    CL_OSC_RPCHDR = 6,	/* osc rpc_stats header gauges */
    CL_OSC_STATS = 7,	/* osc stats */
    CL_MDC_MD = 8,	/* mdc md_stats */
    CL_MDC_STATS = 9,	/* mdc stats */
    CL_OSC_IMPORT = 10,	/* osc import / state */
    CL_MDC_IMPORT = 11,	/* mdc import / state */
    CL_NCLUSTERS
};

enum lc_indom_serial {
    FS_INDOM = 0,
    OSC_INDOM = 1,
    MDC_INDOM = 2,
    FS_BUCKET_INDOM = 3,
    OSC_BUCKET_INDOM = 4,
    LC_NINDOMS
};

/* what a fetch needs refreshed */
#define NEED_DEVICES	(1u << 0)
#define NEED_VERSION	(1u << 1)
#define NEED_LLITE	(1u << 2)
#define NEED_OSC_RPC	(1u << 3)
#define NEED_OSC_STATS	(1u << 4)
#define NEED_OSC_IMPORT	(1u << 5)
#define NEED_MDC_MD	(1u << 6)
#define NEED_MDC_STATS	(1u << 7)
#define NEED_MDC_IMPORT	(1u << 8)

/* file kinds, for per-device base hints and log-once bits */
enum lc_filekind {
    FK_LLITE_STATS, FK_OSC_RPC, FK_OSC_STATS, FK_OSC_IMPORT, FK_OSC_STATE,
    FK_MDC_MD, FK_MDC_STATS, FK_MDC_IMPORT, FK_MDC_STATE, FK_NKINDS
};

#define LC_MAXITEM	64

/* a counter line name in a stats file -> metric item */
struct lc_op {
    const char	*file_name;
    unsigned	item;
    const char	*metric;	/* last PMNS component */
};
extern const struct lc_op lc_llite_ops[];	/* CL_LLITE_STATS, item >= 10 */
extern const size_t lc_llite_nops;
extern const struct lc_op lc_llite_lat[];	/* CL_LLITE_LAT */
extern const size_t lc_llite_nlat;
extern const struct lc_op lc_mdc_ops[];		/* CL_MDC_MD */
extern const size_t lc_mdc_nops;

/* CL_LLITE_STATS fixed items */
#define LLITE_READ_BYTES	0
#define LLITE_WRITE_BYTES	1
#define LLITE_READ_CALLS	2
#define LLITE_WRITE_CALLS	3

struct lc_fs {
    char	name[LC_NAME_MAX];	/* fsname: FS instance name */
    char	dev[LC_NAME_MAX];	/* llite directory */
    char	sbi[LC_NAME_MAX];
    int		has_llite;		/* in the FS indom now */
    int		nmounts;		/* llite dirs of this fs now */
    int		logged_mounts;
    int		nosc;			/* OSCs present now */
    int		maxidx;			/* highest FS_BUCKET exported */
    int		hint[FK_NKINDS];
    unsigned	logged;
    /* scratch for choosing one mount when an fs is mounted twice */
    int		osc_match, mdc_match;
    char	osc_min[LC_NAME_MAX], mdc_min[LC_NAME_MAX];
    /* llite stats */
    int		ll_ok, bytes_ok, lat_ok;
    uint64_t	ll[LC_MAXITEM];
    uint64_t	lat[LC_MAXITEM];
    uint64_t	lat_valid;		/* bit per item */
    /* fs.rpc: sum over the OSCs */
    int		rpc_ok;
    uint64_t	rpc_read[RPC_HIST_MAX], rpc_write[RPC_HIST_MAX];
};

struct lc_osc {
    char	name[LC_NAME_MAX];	/* <fs>-OSTxxxx */
    char	dev[LC_NAME_MAX];
    struct lc_fs *fs;
    int		present;
    int		maxidx;			/* highest OSC_BUCKET exported */
    int		hint[FK_NKINDS];
    unsigned	logged;
    int		rpc_ok;
    struct rpc_stats rs;
    int		stats_ok;
    uint64_t	read_bytes, write_bytes, read_rpcs, write_rpcs;
    uint64_t	waittime, req_count;
    struct import_info imp;
    int		imp_ok;
};

struct lc_mdc {
    char	name[LC_NAME_MAX];	/* <fs>-MDTxxxx */
    char	dev[LC_NAME_MAX];
    struct lc_fs *fs;
    int		present;
    int		hint[FK_NKINDS];
    unsigned	logged;
    int		md_ok;
    uint64_t	md[LC_MAXITEM];
    int		stats_ok;
    uint64_t	waittime, req_count;
    struct import_info imp;
    int		imp_ok;
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
    int			version_ok, version_hint;
    unsigned		version_logged;
    struct lc_fs	**fs;
    size_t		nfs;
    struct lc_osc	**osc;
    size_t		nosc;
    struct lc_mdc	**mdc;
    size_t		nmdc;
};

extern struct lc_agent lc;

/* devices.c */
void lc_devices_refresh(void);
void lc_buckets_refresh(void);
void lc_cache_save(void);

/* refresh_*.c */
void lc_refresh_version(void);
void lc_refresh_llite(void);
void lc_refresh_osc_rpc(void);
void lc_refresh_osc_stats(void);
void lc_refresh_osc_import(void);
void lc_refresh_mdc_md(void);
void lc_refresh_mdc_stats(void);
void lc_refresh_mdc_import(void);
void lc_refresh_import(const char *type, const char *dev, int *hints,
		       unsigned *logged, int kimport, int kstate,
		       struct import_info *imp, int *ok);

/*
 * Read one parameter file of a device; on failure log once per
 * (device, file kind) until it works again.  Returns the length or < 0.
 */
ssize_t lc_read_devfile(const char *type, const char *dev, const char *file,
			int *hint, unsigned *logged, int kind, const char **bufp);
/* log a parse failure once per (device, kind); lc_log_ok re-arms it */
void lc_log_bad(unsigned *logged, int kind, const char *type,
		const char *dev, const char *file);
void lc_log_ok(unsigned *logged, int kind);

#endif /* LC_LUSTRECLIENT_H */
