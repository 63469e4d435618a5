/*
 * A job's timeline (docs/design.md §2.5): per job slot, per filesystem, the
 * values of the series table's metrics (lc_job_series) over time, as a
 * series of points in aligned time bins.
 *
 * A sample at time t gives each filesystem's cumulative job deltas (what
 * the slot serves at t); the point of the sample is their difference from
 * the previous sample's, signed, so the points of a filesystem telescope:
 * their sum is exactly its cumulative deltas at the last sample.  A
 * filesystem absent from a sample counts as zero then (its earlier
 * contribution leaves the totals as a negative point), one seen for the
 * first time starts from zero.
 *
 * Bins: point i is bin first + i of width interval_ms x 2^level, a sample
 * at t (ms since the epoch) falls into bin t / width, so the nodes of a job
 * share bins.  A point holds the samples that fell into its bin (the I/O
 * since the sample before them); a bin no sample fell into is a point of
 * zeros with no sample (its I/O is in the next point that has one).  A
 * sample whose bin is not after the last point's (a second sample in the
 * bin, a clock stepped back) adds into the last point.  When a sample's bin
 * would be point LC_SERIES_POINTS or later, adjacent points merge: bins 2j
 * and 2j+1 of level L make bin j of level L+1, their values summed, until
 * it fits, so a series never has more than LC_SERIES_POINTS points and,
 * once merged, at least half of them.
 *
 * Pure (no libpcp, no files): tests/unit/test_series.c.
 */
#ifndef LC_SERIES_H
#define LC_SERIES_H

#include <stddef.h>
#include <stdint.h>

#define LC_SERIES_POINTS	512
#define LC_SERIES_MAGIC		0x3253434cu	/* "LCS2", little-endian */
#define LC_SERIES_HEADER	40		/* bytes */

/* one filesystem's points and its cumulative values at the last sample */
struct lc_series_fs {
    char	*name;
    int64_t	*val;		/* cap x nvalues: point i's values at val + i * nvalues */
    uint64_t	*last;		/* nvalues: the cumulative values at the last sample */
};

struct lc_series {
    unsigned		nvalues;	/* values per point and filesystem */
    uint32_t		interval_ms;
    unsigned		level;		/* bins are interval_ms << level wide */
    uint64_t		first;		/* bin of point 0 */
    size_t		n, cap;		/* points; room for cap points */
    uint32_t		*samples;	/* samples that fell into each point */
    struct lc_series_fs	*fs;		/* in the order first seen */
    size_t		nfs, capfs;
};

/* one filesystem in a sample: its name and nvalues cumulative values */
struct lc_series_in {
    const char		*name;
    const uint64_t	*cum;
};

/* an empty series of points of nvalues values, sampled every interval_ms (> 0) */
void lc_series_init(struct lc_series *s, unsigned nvalues, uint32_t interval_ms);
/* free everything; s is then empty, as lc_series_init left it */
void lc_series_free(struct lc_series *s);

/* the width of a bin at this level, in ms (UINT64_MAX when it would not fit) */
uint64_t lc_series_width(uint32_t interval_ms, unsigned level);

/*
 * A sample at t_ms: the filesystems in[0..nin) with their cumulative
 * values; a filesystem of the series not among them is at zero now.
 * Returns 0, or -1 when out of memory (the series is then as before).
 */
int lc_series_sample(struct lc_series *s, uint64_t t_ms, const struct lc_series_in *in, size_t nin);

/* the first sample time at or after t_ms: the next multiple of interval_ms */
uint64_t lc_series_next(uint32_t interval_ms, uint64_t t_ms);

/*
 * The served value (lustreclient.job.slot<S>.series), little-endian:
 *   header   magic "LCS2" u32, level u32, interval_ms u32, npoints u32,
 *            first bin u64, nfs u32, nvalues u32, nmetrics u32, 0 u32
 *   metrics  nmetrics x (pmid u32, values u32): the series table, each
 *            metric's PMID and how many of a point's values are its (1, or
 *            a histogram's buckets), in the order a point holds them
 *   samples  npoints x u32, then 4 zero bytes when npoints is odd
 *   per fs   name length u32, the name, zeros to a multiple of 8 bytes
 *            (with the length word); the presence bitmap, (nvalues + 63) / 64
 *            u64 words, bit v % 64 of word v / 64 set when value v is not
 *            zero at some point; then the values set there, column after
 *            column: value v's npoints i64, then the next one set's.
 * A job touches few of the values (its bytes and calls, some metadata
 * operations, a few RPC sizes): the values zero at every point are not
 * sent, and the columns are what a reader sums.  The store stays point
 * after point; the pack transposes.
 * lc_series_packed_size: the bytes; lc_series_pack writes them to out.
 * The sum of the metrics' values must be s->nvalues.
 */
size_t lc_series_packed_size(const struct lc_series *s, unsigned nmetrics);
void lc_series_pack(const struct lc_series *s, const uint32_t *pmids, const uint32_t *nvals,
		    unsigned nmetrics, void *out);

#endif /* LC_SERIES_H */
