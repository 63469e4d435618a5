/*
 * osc rpc_stats parser.  A histogram row is
 *	<label>:\t\t<rcount> <r%> <rcum%>   | <wcount> <w%> <wcum%>
 * with %10lu counts that simply push the columns right when wider, so
 * rows are tokenised on whitespace and '|' instead of by column.
 */
#include <string.h>
#include "parse_rpc_stats.h"

enum section { SEC_NONE, SEC_PPR, SEC_MODIFY, SEC_OTHER };

static const struct {
    const char	*key;
    unsigned	bit;
    size_t	off;
} gauges[] = {
    { "read RPCs in flight", RPCS_READ_INFLIGHT,
      offsetof(struct rpc_stats, read_inflight) },
    { "write RPCs in flight", RPCS_WRITE_INFLIGHT,
      offsetof(struct rpc_stats, write_inflight) },
    { "pending write pages", RPCS_PENDING_WRITE,
      offsetof(struct rpc_stats, pending_write_pages) },
    { "pending read pages", RPCS_PENDING_READ,
      offsetof(struct rpc_stats, pending_read_pages) },
    { "DIO RPCs in flight", RPCS_DIO_INFLIGHT,
      offsetof(struct rpc_stats, dio_inflight) },
    { "dio read RPCs in flight", RPCS_DIO_READ_INFLIGHT,
      offsetof(struct rpc_stats, dio_read_inflight) },
    { "dio write RPCs in flight", RPCS_DIO_WRITE_INFLIGHT,
      offsetof(struct rpc_stats, dio_write_inflight) },
    { "modify_RPCs_in_flight", RPCS_MOD_INFLIGHT,
      offsetof(struct rpc_stats, mod_inflight) },
};

/* "<key>:<spaces><int>"; 1 if the line was a known gauge */
static int
parse_gauge(struct lc_slice line, struct rpc_stats *rs)
{
    const char	*colon = memchr(line.p, ':', line.n);
    struct lc_slice key, val;
    uint64_t	v;
    size_t	i;

    if (colon == NULL)
	return 0;
    key.p = line.p;
    key.n = (size_t)(colon - line.p);
    key = lc_trim(key);
    for (i = 0; i < sizeof(gauges) / sizeof(gauges[0]); i++) {
	if (!lc_slice_eq(key, gauges[i].key))
	    continue;
	val.p = colon + 1;
	val.n = (size_t)(line.p + line.n - val.p);
	val = lc_trim(val);
	/* printed with %d: a negative or huge value is not a gauge */
	if (lc_parse_u64(val, &v) < 0 || v > INT32_MAX)
	    return 1;
	*(uint32_t *)((char *)rs + gauges[i].off) = (uint32_t)v;
	rs->have |= gauges[i].bit;
	return 1;
    }
    return 0;
}

/* whitespace-separated tokens, with '|' always a token of its own */
static int
row_tokens(const char *p, const char *end, struct lc_slice *tok, int max)
{
    int		n = 0;

    while (p < end) {
	if (*p == ' ' || *p == '\t') {
	    p++;
	    continue;
	}
	if (n == max)
	    return -1;
	tok[n].p = p;
	if (*p == '|') {
	    p++;
	} else {
	    while (p < end && *p != ' ' && *p != '\t' && *p != '|')
		p++;
	}
	tok[n].n = (size_t)(p - tok[n].p);
	n++;
    }
    return n;
}

/*
 * Label of a "pages per rpc" row as a bucket index.  The kernel prints
 * 1<<i with %d, so bucket 31 appears as -2147483648.
 */
static int
label_index(struct lc_slice lab)
{
    uint64_t	v;
    int		i;

    if (lc_slice_eq(lab, "-2147483648"))
	return 31;
    if (lc_parse_u64(lab, &v) < 0 || v == 0 || (v & (v - 1)) != 0)
	return -1;
    for (i = 0; i < RPC_HIST_MAX; i++)
	if (v == (uint64_t)1 << i)
	    return i;
    return -1;
}

/*
 * A row of the mdc "modify" section: "<i>:\t\t<count> <pct> <cum%>", labels
 * 0, 1, 2 ... in order.  1 if it was one (and is summed), 0 if not.
 */
static int
parse_mod_row(struct lc_slice t, struct lc_slice lab, const char *colon,
	      int *last, struct rpc_stats *rs)
{
    struct lc_slice tok[4];
    uint64_t	v[3], label;
    int		n, i;

    n = row_tokens(colon + 1, t.p + t.n, tok, 4);
    if (n != 3)
	return 0;
    for (i = 0; i < 3; i++)
	if (lc_parse_u64(tok[i], &v[i]) < 0)
	    return 0;
    if (lc_parse_u64(lab, &label) < 0 || label >= RPC_HIST_MAX || (int)label <= *last)
	return 0;
    *last = (int)label;
    /* a corrupt count must not wrap the sum: saturate */
    rs->mod_total = (rs->mod_total + v[0] < rs->mod_total) ? UINT64_MAX : rs->mod_total + v[0];
    return 1;
}

/* 1 = a histogram row (stored if in the pages-per-rpc section), 0 = not */
static int
parse_row(struct lc_slice line, enum section sec, int *last, struct rpc_stats *rs)
{
    struct lc_slice t = lc_trim(line), lab, tok[8];
    const char	*colon;
    uint64_t	v[6];
    int		n, idx, i, k;

    if (t.n == 0 || !((t.p[0] >= '0' && t.p[0] <= '9') || t.p[0] == '-'))
	return 0;
    colon = memchr(t.p, ':', t.n);
    if (colon == NULL)
	return 0;
    lab.p = t.p;
    lab.n = (size_t)(colon - t.p);
    if (sec == SEC_MODIFY)
	return parse_mod_row(t, lab, colon, last, rs);
    if (sec == SEC_OTHER)
	return 1;	/* rpcs in flight, offset, latency rows: not exported */
    n = row_tokens(colon + 1, t.p + t.n, tok, 8);
    if (n != 7 || !lc_slice_eq(tok[3], "|"))
	return 0;
    for (i = 0, k = 0; i < 7; i++) {
	if (i == 3)
	    continue;
	if (lc_parse_u64(tok[i], &v[k++]) < 0)
	    return 0;
    }
    if (sec != SEC_PPR)
	return 1;
    idx = label_index(lab);
    /* labels only grow within a section; anything else is not a real row */
    if (idx < 0 || idx <= *last)
	return 0;
    *last = idx;
    rs->ppr_read[idx] = v[0];
    rs->ppr_write[idx] = v[3];
    rs->ppr_rows++;
    if (idx > rs->ppr_maxidx)
	rs->ppr_maxidx = idx;
    return 1;
}

int
rpc_stats_parse(const char *buf, size_t len, struct rpc_stats *rs)
{
    const char		*cur = buf, *end = buf + len;
    struct lc_slice	line, t;
    enum section	sec = SEC_NONE;
    int			last = -1, modify_title = 0, ppr_closed = 0;

    memset(rs, 0, sizeof(*rs));
    rs->ppr_maxidx = -1;
    if (buf == NULL)
	return -1;

    while (lc_next_line(&cur, end, &line)) {
	t = lc_trim(line);
	if (t.n == 0) {
	    if (sec == SEC_PPR)
		ppr_closed = 1;
	    sec = SEC_NONE;
	    modify_title = 0;
	    continue;
	}
	/*
	 * Everything the agent uses (header, gauges, mdc modify section)
	 * comes before the end of the pages-per-rpc section: the rpcs in
	 * flight, offset and latency sections after it are not parsed.
	 */
	if (ppr_closed && line.n > 0 && line.p[0] == '\t')
	    break;
	/* section headers; the 2.16+ mdc file prints "%%" literally */
	if (lc_slice_startswith(t, "pages per rpc")) {
	    /*
	     * One such section per file (osc, and the mdc DoM block).  A
	     * second one is not from the kernel: ignore it rather than let
	     * it overwrite the first (found by libFuzzer).
	     */
	    sec = rs->ppr_seen ? SEC_OTHER : SEC_PPR;
	    last = -1;
	    rs->ppr_seen = 1;
	    continue;
	}
	if (lc_slice_startswith(t, "rpcs in flight") && modify_title) {
	    /* "\t\t\tmodify" then "rpcs in flight        rpcs   % cum %" */
	    sec = SEC_MODIFY;
	    last = -1;
	    rs->mod_seen = 1;
	    modify_title = 0;
	    continue;
	}
	if (lc_slice_startswith(t, "rpcs in flight") ||
	    lc_slice_startswith(t, "offset") ||
	    lc_slice_startswith(t, "RPC latency")) {
	    sec = SEC_OTHER;
	    continue;
	}
	if (parse_row(line, sec, &last, rs))
	    continue;
	if (lc_parse_header_time(t, &rs->snapshot, &rs->start, &rs->elapsed) > 0)
	    continue;
	if (parse_gauge(t, rs))
	    continue;
	/* "\t\t\tread\t\t\twrite" and "\t\t\tmodify" column titles */
	if (lc_slice_eq(t, "modify")) {
	    sec = SEC_NONE;
	    modify_title = 1;
	    continue;
	}
	if (lc_slice_startswith(t, "read") && t.n >= 5 &&
	    memcmp(t.p + t.n - 5, "write", 5) == 0) {
	    sec = SEC_NONE;
	    modify_title = 0;
	    continue;
	}
	/* a stray line does not end a section: only a blank line does */
	rs->garbage++;
    }
    return (rs->ppr_seen || rs->mod_seen) ? 0 : -1;
}
