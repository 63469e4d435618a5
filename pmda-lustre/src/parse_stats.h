/*
 * Parser for the lprocfs "stats" format (llite.*.stats, osc.*.stats,
 * mdc.*.stats, mdc.*.md_stats, llite.*.read_ahead_stats), Lustre 1.8 to
 * 2.17/master.  See notes/lustre-formats.md section 2.
 */
#ifndef LC_PARSE_STATS_H
#define LC_PARSE_STATS_H

#include <stddef.h>
#include <stdint.h>
#include "parse_common.h"

#define LSTATS_NAME_MAX	64	/* incl. NUL; longest real name is 31 chars */
#define LSTATS_UNIT_MAX	16

struct lstats_counter {
    char	name[LSTATS_NAME_MAX];
    char	unit[LSTATS_UNIT_MAX];	/* text between [ and ] */
    uint64_t	count;			/* "samples" */
    int		nvals;			/* 0, 3 (min max sum) or 4 (+ sumsq) */
    uint64_t	min, max, sum, sumsq;	/* modulo 2^64, see lc_parse_s64_mod */
};

struct lstats {
    struct lc_time	snapshot, start, elapsed;
    int			header_seen;
    unsigned		garbage;	/* lines that were neither */
    size_t		lines;		/* counter lines, kept or not */
    size_t		n, cap;
    struct lstats_counter *c;
    /*
     * Optional: keep only the counters named here (NULL = all).  The
     * other counter lines are recognised but their values not parsed,
     * which is most of the work for a 40-line osc stats file of which
     * the agent uses 3 counters.
     */
    const char * const	*want;
    size_t		nwant;
};

/*
 * Parse buf[0..len).  *st must be zeroed before the first call (then set
 * want/nwant if wanted); it can be reused (the counter array is kept).  Returns 0 when the buffer
 * looks like a stats file (a header or at least one counter line), -1 when
 * it does not, -2 when out of memory.  Unrecognised lines are counted in
 * st->garbage and otherwise ignored.
 */
int lstats_parse(const char *buf, size_t len, struct lstats *st);
void lstats_free(struct lstats *st);

const struct lstats_counter *lstats_find(const struct lstats *st, const char *name);

/* Unit is microseconds: "usec" (<= 2.15) or "usecs" (2.16+ and DDN 2.14). */
int lstats_unit_is_usec(const char *unit);

#endif /* LC_PARSE_STATS_H */
