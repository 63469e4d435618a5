/*
 * llite.*.stats            -> CL_LLITE_STATS and CL_LLITE_LAT
 * llite.*.read_ahead_stats -> CL_LLITE_RA
 * llite.*.max_read_ahead_mb ... hybrid_io_write_threshold_bytes -> CL_LLITE_TUNABLE
 */
#include <errno.h>
#include <string.h>
#include "lustreclient.h"
#include "parse_stats.h"

static struct lstats	st;	/* reused: keeps its counter array */

/*
 * A *_bytes line of the stats file: its count to ll[calls], its sum to
 * ll[bytes] (a line without a sum clears *sum_ok).  1 if the line is there.
 */
static int
bytes_line(struct lc_fs *fs, const char *name, int calls, int bytes, int *sum_ok)
{
    const struct lstats_counter *c = lstats_find(&st, name);

    if (c == NULL)
	return 0;
    fs->ll[calls] = c->count;
    if (c->nvals >= 3)
	fs->ll[bytes] = c->sum;
    else
	*sum_ok = 0;
    return 1;
}

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
    bytes_line(fs, "read_bytes", LLITE_READ_CALLS, LLITE_READ_BYTES, &fs->bytes_ok);
    bytes_line(fs, "write_bytes", LLITE_WRITE_CALLS, LLITE_WRITE_BYTES, &fs->bytes_ok);

    /*
     * Hybrid I/O counters exist from 2.15.64 (the three switch counts,
     * 2.16.0) and 2.16.52 (hybrid_read_bytes/hybrid_write_bytes, 2.17).
     * Where the version has them an absent line is a zero counter; before
     * it they have no value.  The version file tells (needs() in pmda.c
     * reads it with these metrics); a line of the kind in the file tells
     * too (a vendor backport: the switch counts in the op loop below), and
     * so does a file of the other kind's later version.
     */
    fs->hyb_bytes_ok = lc.version_code >= LC_VERSION_HYB_BYTES;
    fs->hyb_switch_ok = lc.version_code >= LC_VERSION_HYB_SWITCH;
    fs->hyb_sum_ok = 1;	/* as bytes_ok: a bytes line without its sum */
    if (bytes_line(fs, "hybrid_read_bytes", LLITE_HYB_READ_CALLS, LLITE_HYB_READ_BYTES,
		   &fs->hyb_sum_ok))
	fs->hyb_bytes_ok = 1;
    if (bytes_line(fs, "hybrid_write_bytes", LLITE_HYB_WRITE_CALLS, LLITE_HYB_WRITE_BYTES,
		   &fs->hyb_sum_ok))
	fs->hyb_bytes_ok = 1;
    if (fs->hyb_bytes_ok)
	fs->hyb_switch_ok = 1;

    /*
     * Latency exists from 2.14 on.  The version file tells (needs() in
     * pmda.c reads it with these metrics), and so does a file with any
     * [usec]/[usecs] counter (a version file unread, or a vendor's); there
     * an absent op is a zero counter, before that the metrics have no
     * value.  A file just cleared has no op line left: only the version
     * tells it from an older Lustre's.
     */
    fs->lat_ok = lc.version_code >= LC_VERSION_LAT;
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
	if (c != NULL && op->item >= LLITE_HYB_NOSWITCH && op->item <= LLITE_HYB_LAST)
	    fs->hyb_switch_ok = 1;
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

/* the file of each LLTUN_* item (kind FK_LLTUN_FIRST + item), its bound, MiB or not */
static const struct {
    const char	*file;
    uint32_t	max;
    int		mb;	/* up to 2.13 a fraction of a MiB can be printed ("40.25") */
} tun[LLTUN_N] = {
    [LLTUN_RA_MB] = { "max_read_ahead_mb", UINT32_MAX, 1 },
    [LLTUN_RA_FILE_MB] = { "max_read_ahead_per_file_mb", UINT32_MAX, 1 },
    [LLTUN_RA_WHOLE_MB] = { "max_read_ahead_whole_mb", UINT32_MAX, 1 },
    [LLTUN_CHECKSUMS] = { "checksums", 1, 0 },
    [LLTUN_HYBRID_IO] = { "hybrid_io", 1, 0 },
    [LLTUN_HYB_READ_THRESH] = { "hybrid_io_read_threshold_bytes", UINT32_MAX, 0 },
    [LLTUN_HYB_WRITE_THRESH] = { "hybrid_io_write_threshold_bytes", UINT32_MAX, 0 },
};

/*
 * llite checksums: "checksums" from 2.12 (LU-10906), "checksum_pages"
 * before (and still, as an alias).  The name that answered last is tried
 * first, so a 1.8-2.11 client costs no failed lookup per fetch.
 */
static int
read_checksums(struct lc_fs *fs, uint32_t *out)
{
    static const char * const name[2] = { "checksums", "checksum_pages" };
    static const int kind[2] = { FK_LLTUN_FIRST + LLTUN_CHECKSUMS, FK_LL_CHECKSUM_PAGES };
    int		k = fs->ck_old ? 1 : 0;
    int		r;

    if ((r = lc_read_u32(&fs->d, name[k], kind[k], out, 1, 0)) != -ENOENT)
	return r > 0;
    if (lc_read_u32(&fs->d, name[1 - k], kind[1 - k], out, 1, 0) <= 0)
	return 0;
    fs->ck_old = 1 - k;
    return 1;
}

/*
 * The llite settings that shape RPCs and I/O paths, each a single number
 * in the llite device directory: /proc up to 2.11, then sysfs (checksums
 * from 2.12; the read-ahead ones were in debugfs in 2.12-2.13 and moved to
 * sysfs in 2.14, LU-12043), found through the roots like every file.  A
 * file this version does not have (hybrid_io* before 2.16) leaves its
 * metric without a value.  Only the files of the items asked for are read.
 */
void
lc_refresh_llite_tunables(void)
{
    struct lc_fs *fs;
    size_t	i;
    unsigned	item;
    int		ok;

    for (i = 0; i < lc.nfs; i++) {
	fs = lc.fs[i];
	fs->tun_ok = 0;
	if (!fs->has_llite)
	    continue;
	for (item = 0; item < LLTUN_N; item++) {
	    if (!lc_wanted(CL_LLITE_TUNABLE, item))
		continue;
	    if (item == LLTUN_CHECKSUMS)
		ok = read_checksums(fs, &fs->tun[item]);
	    else
		ok = lc_read_u32(&fs->d, tun[item].file, FK_LLTUN_FIRST + (int)item,
				 &fs->tun[item], tun[item].max, tun[item].mb) > 0;
	    if (ok)
		fs->tun_ok |= 1u << item;
	}
    }
}
