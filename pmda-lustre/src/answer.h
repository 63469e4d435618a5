/*
 * A job slot's answer (lustreclient.job.slot<S>.answer, PMID 220.30.S):
 * every value a job's epilog reads of a host, packed into one aggregate,
 * so that the reporter decodes one value per host rather than one value
 * set per metric (docs/design.md §2.4).  The members, in order: the slot's
 * job_id, the job end metrics (lc_job_end_metrics), job.begin_time, the
 * slot's deltas and left_out values, job.restarts; a slot not in use
 * answers its job_id alone (no value).  Each member is the value set a fetch of it alone
 * would give, and the answer lists the instances of each instance domain
 * the members use (FS, OSC, MDC, FS_BUCKET, OSC_BUCKET) as an instance
 * request would, so that the reader needs no listing of its own.
 *
 * The layout, little-endian, every count and index unsigned 32 bits:
 *   header    magic "LCA1", nsets, nvalues, nlistings, nlisted, nstrings,
 *             listed_bytes, 0
 *   sets      nsets x (pmid, numval (signed: < 0 a PCP error), type, indom)
 *   values    nvalues x u64: each set's values in turn; numbers widened
 *             to 64 bits (doubles as their bits), strings as the index of
 *             the string in the string table
 *   insts     nvalues x i32, beside the values
 *   listings  nlistings x (indom, count)
 *   listed    nlisted x i32: the listings' instance ids, one after the other
 *   strings   nstrings NUL-terminated strings, one after the other: first
 *             the names of the listed instances in order (listed_bytes
 *             bytes: hosts of one layout send the same, which a reader
 *             decodes once), then the values' strings
 * This file is pure (no libpcp calls, no files): tests/unit/test_answer.c.
 */
#ifndef LC_ANSWER_H
#define LC_ANSWER_H

#include <pcp/pmapi.h>
#include "jobs.h"

#define LC_ANSWER_MAGIC		0x3141434cu	/* "LCA1" */
#define LC_ANSWER_HEADER	8		/* u32 words */
/* the members of a slot's answer: job_id, end metrics, begin_time, deltas, left_out, restarts */
#define LC_ANSWER_MAX_MEMBERS	(1 + LC_JOB_NEND + 1 + LC_JOB_NMETRICS + LC_JOB_NSOURCES + 1)

struct lc_answer_set {
    const pmValueSet	*vs;	/* numval < 0: the error a fetch of it gives */
    int			type;	/* PM_TYPE_* of its values */
    pmInDom		indom;
};

struct lc_answer_listing {
    pmInDom		indom;
    int			n;
    const int		*inst;
    const char *const	*name;
};

/*
 * The PMIDs of slot s's answer, in order, into out (LC_ANSWER_MAX_MEMBERS
 * room); used: whether the slot holds a job.  Returns their number.
 */
int lc_answer_members(unsigned slot, int used, pmID out[LC_ANSWER_MAX_MEMBERS]);

/*
 * The answer of these sets and listings as one value block from alloc
 * (vtype PM_TYPE_AGGREGATE); NULL when alloc fails or it would not fit a
 * value block (16 MiB).
 */
pmValueBlock *lc_answer_pack(const struct lc_answer_set *sets, int nsets,
			     const struct lc_answer_listing *lists, int nlists,
			     void *(*alloc)(size_t));

#endif /* LC_ANSWER_H */
