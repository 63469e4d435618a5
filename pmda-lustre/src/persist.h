/*
 * A job slot kept on disk (docs/design.md §2.4, "A restart keeps the
 * jobs"): what the slot's diff needs at the job's end (its id, begin time
 * and begin values, each device with its instance name and identity) and
 * its timeline, so that an agent started again takes the job up where it
 * was.  The agent writes one file per slot in use (jobstate.c); this file
 * is the layout alone.  Pure: no libpcp, no files (tests/unit/test_persist.c).
 *
 * The layout, little-endian, version LC_PERSIST_VERSION:
 *   header   magic "LCP1" u32, version u32, total bytes u64, slot u32,
 *            restarts u32, values per FS, OSC and MDC device u32 x 3,
 *            series values per point u32, histogram buckets u32
 *   job      id (string), begin_time (a double's bits, u64)
 *   devices  per kind (FS, OSC, MDC): count u32, then per device
 *            flags u32 (1 listed, 2 start[0] given, 4 start[1] given,
 *            256 << src a reset of source src seen: reset_seen),
 *            fs index i32 (-1 none), start[0], start[1] (doubles' bits),
 *            instance name (string), identity (string), values u64 each,
 *            presence one byte each (0 or 1); an FS device then its
 *            buckets that had an instance, a u64 mask
 *   series   interval_ms u32, level u32, first bin u64, points u32,
 *            filesystems u32, samples u32 each point, then per filesystem
 *            its name (string), its cumulative values at the last sample
 *            (u64 each), its points (i64 each value of each point)
 *   crc      CRC-32 (IEEE, zlib's) of every byte before it, u32
 * A string is its length u32 (at most LC_PERSIST_NAME_MAX) and its bytes.
 *
 * The values per device are the agent's job metric table's (jobs.h): a
 * file written by an agent whose table differs (another version of it) is
 * refused, as is one of another layout version.  The values per point are
 * those of the series table or of its first metrics: the table is append
 * only, so a file of an agent from before it grew is taken up whole, its
 * timeline keeping the older table (lc_job_series_metrics_of) to the job's
 * end; a file of a newer agent's, longer table is refused.
 */
#ifndef LC_PERSIST_H
#define LC_PERSIST_H

#include <stddef.h>
#include <stdint.h>
#include "jobs.h"
#include "series.h"

#define LC_PERSIST_MAGIC	0x3150434cu	/* "LCP1", little-endian */
#define LC_PERSIST_VERSION	1
#define LC_PERSIST_NAME_MAX	1024		/* bytes of an instance name or identity */
/*
 * The largest file a slot can have: its timeline at its most (512 points of
 * the series values) for 64 filesystems and 65,536 devices' begin values
 * take less; a larger file is not read.
 */
#define LC_PERSIST_MAX_BYTES	((size_t)64 << 20)

/*
 * A slot as kept: the devices' inst fields are not kept (instance ids are
 * the running agent's); a decoded record has inst -1 everywhere and binst[b]
 * 0 where bucket b had an instance, -1 where not, for the agent to look
 * the names up (jobs.c).
 */
struct lc_persist_slot {
    unsigned		slot;
    unsigned		restarts;	/* how many times the agent took the slot up again */
    char		id[LC_JOB_ID_MAX + 1];
    double		begin_time;
    struct lc_jobrec	rec;		/* begin values; OSC and MDC names are instance names */
    struct lc_series	series;
};

/* the bytes of p's file */
size_t lc_persist_size(const struct lc_persist_slot *p);
/* p's file into out (lc_persist_size(p) bytes) */
void lc_persist_encode(const struct lc_persist_slot *p, void *out);
/*
 * The slot of the len bytes at buf into *p (its record and series allocated;
 * lc_persist_free frees them).  Returns 0, or -1 with *why saying in a few
 * words what is wrong (p then holds nothing to free).  Never reads outside
 * buf[0..len), allocates no more than a small multiple of len.
 */
int lc_persist_decode(const void *buf, size_t len, struct lc_persist_slot *p, const char **why);
void lc_persist_free(struct lc_persist_slot *p);

/* CRC-32 as zlib's crc32(0, buf, len) */
uint32_t lc_crc32(const void *buf, size_t len);

#endif /* LC_PERSIST_H */
