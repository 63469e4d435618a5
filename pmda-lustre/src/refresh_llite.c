/*
 * llite.*.stats            -> CL_LLITE_STATS and CL_LLITE_LAT
 * llite.*.read_ahead_stats -> CL_LLITE_RA
 */
#include <string.h>
#include "lustreclient.h"
#include "parse_stats.h"

static struct lstats	st;	/* reused: keeps its counter array */

static void
fill(struct lc_fs *fs)
{
    const struct lstats_counter *c;
    size_t	i;

    memset(fs->ll, 0, sizeof(fs->ll));
    memset(fs->lat, 0, sizeof(fs->lat));
    fs->lat_valid = 0;
    lc_start_set(&fs->ll_start, &st.start);

    /*
     * read_bytes/write_bytes always print min/max/sum; without a sum the
     * byte count is unknown, not zero.  Absent lines are zero counters.
     */
    fs->bytes_ok = 1;
    if ((c = lstats_find(&st, "read_bytes")) != NULL) {
	fs->ll[LLITE_READ_CALLS] = c->count;
	if (c->nvals >= 3)
	    fs->ll[LLITE_READ_BYTES] = c->sum;
	else
	    fs->bytes_ok = 0;
    }
    if ((c = lstats_find(&st, "write_bytes")) != NULL) {
	fs->ll[LLITE_WRITE_CALLS] = c->count;
	if (c->nvals >= 3)
	    fs->ll[LLITE_WRITE_BYTES] = c->sum;
	else
	    fs->bytes_ok = 0;
    }

    /*
     * Latency exists from 2.14 on.  A file with any [usec]/[usecs]
     * counter is such a version, and there an absent op is a zero
     * counter; before that the metrics have no value.
     */
    fs->lat_ok = 0;
    for (i = 0; i < st.n; i++)
	if (lstats_unit_is_usec(st.c[i].unit)) {
	    fs->lat_ok = 1;
	    break;
	}
    for (i = 0; i < lc_llite_nops; i++) {
	const struct lc_op *op = &lc_llite_ops[i];
	uint64_t	bit = (uint64_t)1 << op->item;

	c = lstats_find(&st, op->file_name);
	if ((op->flags & LC_OP_COUNT) && c != NULL)
	    fs->ll[op->item] = c->count;
	if (!(op->flags & LC_OP_LAT) || !fs->lat_ok)
	    continue;
	if (c == NULL) {
	    fs->lat_valid |= bit;
	} else if (lstats_unit_is_usec(c->unit) && c->nvals >= 3) {
	    fs->lat[op->item] = c->sum;
	    fs->lat_valid |= bit;
	}
    }
}

void
lc_refresh_llite(void)
{
    struct lc_fs	*fs;
    const char		*buf;
    ssize_t		n;
    size_t		i;

    for (i = 0; i < lc.nfs; i++) {
	fs = lc.fs[i];
	fs->ll_ok = 0;
	if (!fs->has_llite)
	    continue;
	n = lc_read_devfile(&fs->d, "stats", FK_LLITE_STATS, &buf);
	if (n < 0 || !lc_parsed(&fs->d, FK_LLITE_STATS, "stats",
				lstats_parse(buf, (size_t)n, &st) == 0))
	    continue;
	fill(fs);
	fs->ll_ok = 1;
    }
}

void
lc_refresh_llite_ra(void)
{
    const struct lstats_counter *c;
    struct lc_fs	*fs;
    const char		*buf;
    ssize_t		n;
    size_t		i, k;

    for (i = 0; i < lc.nfs; i++) {
	fs = lc.fs[i];
	fs->ra_ok = 0;
	if (!fs->has_llite)
	    continue;
	n = lc_read_devfile(&fs->d, "read_ahead_stats", FK_LLITE_RA, &buf);
	if (n < 0 || !lc_parsed(&fs->d, FK_LLITE_RA, "read_ahead_stats",
				lstats_parse(buf, (size_t)n, &st) == 0))
	    continue;
	memset(fs->ra, 0, sizeof(fs->ra));
	/* += : the old and the new name of a counter share an item */
	for (k = 0; k < lc_ra_nops; k++) {
	    if ((c = lstats_find(&st, lc_ra_ops[k].file_name)) == NULL)
		continue;
	    if ((lc_ra_ops[k].flags & LC_OP_SUM) && c->nvals >= 3)
		fs->ra[lc_ra_ops[k].item] += c->sum;
	    else
		fs->ra[lc_ra_ops[k].item] += c->count;
	}
	fs->ra_ok = 1;
    }
}
