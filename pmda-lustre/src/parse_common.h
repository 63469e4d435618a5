/*
 * Helpers shared by the stats-file parsers.  Everything here works on
 * (pointer, length) slices: procfs/debugfs buffers are not NUL terminated
 * and a parser must never look past the end of what was read.
 */
#ifndef LC_PARSE_COMMON_H
#define LC_PARSE_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct lc_slice {
    const char	*p;
    size_t	n;
};

/* the only whitespace the kernel's seq_printf formats produce inside a line */
static inline int
lc_is_space(char c)
{
    return c == ' ' || c == '\t';
}

static inline int
lc_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* A timestamp line from a stats header; nsec is always nanoseconds. */
struct lc_time {
    int		present;
    uint64_t	sec;
    uint32_t	nsec;
};

/*
 * The helpers every parser calls for every line or token are inline: a
 * full fetch of a 2,048-OSC client runs them about a million times, and
 * as calls into another file they cost as much as the parsing itself.
 */

/*
 * Return the next line (without '\n', without a trailing '\r') and advance
 * *cur.  The final line need not be newline terminated.  Returns 0 at end.
 */
static inline int
lc_next_line(const char **cur, const char *end, struct lc_slice *line)
{
    const char	*p = *cur, *nl;

    if (p == NULL || p >= end)
	return 0;
    nl = memchr(p, '\n', (size_t)(end - p));
    line->p = p;
    line->n = (size_t)((nl ? nl : end) - p);
    *cur = nl ? nl + 1 : end;
    if (line->n > 0 && line->p[line->n - 1] == '\r')
	line->n--;
    return 1;
}

/* Next whitespace (space/tab) separated token; returns 0 when none left. */
static inline int
lc_next_token(const char **cur, const char *end, struct lc_slice *tok)
{
    const char	*p = *cur;

    while (p < end && lc_is_space(*p))
	p++;
    if (p >= end) {
	*cur = end;
	return 0;
    }
    tok->p = p;
    while (p < end && !lc_is_space(*p))
	p++;
    tok->n = (size_t)(p - tok->p);
    *cur = p;
    return 1;
}

/* Trim spaces and tabs on both sides. */
static inline struct lc_slice
lc_trim(struct lc_slice s)
{
    while (s.n > 0 && lc_is_space(s.p[0])) {
	s.p++;
	s.n--;
    }
    while (s.n > 0 && lc_is_space(s.p[s.n - 1]))
	s.n--;
    return s;
}

/* inline, so that strlen() of a literal is folded at compile time */
static inline int
lc_slice_eq(struct lc_slice s, const char *lit)
{
    size_t	n = strlen(lit);

    return s.n == n && memcmp(s.p, lit, n) == 0;
}

static inline int
lc_slice_startswith(struct lc_slice s, const char *lit)
{
    size_t	n = strlen(lit);

    return s.n >= n && memcmp(s.p, lit, n) == 0;
}

int lc_is_blank(struct lc_slice s);

/*
 * The first step of a parser whose answer is one string in out[outsz]: out
 * is "" from here on, so a failed parse leaves no half answer.  -1 when
 * out has no room even for that or there is no input, else 0.
 */
static inline int
lc_string_answer_start(const char *buf, char *out, size_t outsz)
{
    if (outsz == 0)
	return -1;
    out[0] = '\0';
    return buf == NULL ? -1 : 0;
}

/* 1 if s is printable ASCII only (spaces included): safe to hand out as a string */
int lc_is_printable(struct lc_slice s);

/*
 * Whole-token unsigned decimal, no sign, no overflow (values up to
 * 2^64-1 are accepted).  Returns 0 on success, -1 otherwise.
 */
static inline int
lc_parse_u64(struct lc_slice s, uint64_t *v)
{
    uint64_t	x = 0;
    size_t	i;

    if (s.n == 0)
	return -1;
    for (i = 0; i < s.n; i++) {
	unsigned d;

	if (!lc_is_digit(s.p[i]))
	    return -1;
	d = (unsigned)(s.p[i] - '0');
	/* UINT64_MAX is 18446744073709551615 */
	if (x > UINT64_MAX / 10 || (x == UINT64_MAX / 10 && d > UINT64_MAX % 10))
	    return -1;
	x = x * 10 + d;
    }
    *v = x;
    return 0;
}

/*
 * Decimal with an optional '-', returned modulo 2^64: the kernel prints
 * some u64 sums with %lld, so a sum past 2^63 shows up negative and the
 * two's-complement value is the real one.
 */
int lc_parse_s64_mod(struct lc_slice s, uint64_t *v);

/*
 * Parse the value part of a "snapshot_time"/"start_time"/"elapsed_time"
 * header line: everything after the name.  Accepts an optional ':' before
 * or after the padding, "S.U" (unpadded usec), "S.NNNNNNNNN", "S. NNNNNNNN"
 * (space-padded nsec) and "S:U" (very old osc rpc_stats); the unit word
 * (secs.usecs, (secs.nsecs), ...) decides usec versus nsec, and without it
 * a fraction of more than 6 digits is taken as nanoseconds.
 */
int lc_parse_time_value(struct lc_slice rest, struct lc_time *t);

/*
 * If the line is a header time line ("snapshot_time", "start_time" or
 * "elapsed_time", with or without ':'), fill the matching lc_time and
 * return 1; return 0 otherwise.
 */
int lc_parse_header_time(struct lc_slice line, struct lc_time *snapshot,
			 struct lc_time *start, struct lc_time *elapsed);

/*
 * A file holding one unsigned decimal (max_pages_per_rpc, max_rpcs_in_flight,
 * enable_stats_header ...): optional surrounding spaces/tabs and one trailing
 * newline, nothing else.  Returns 0 and sets *v, or -1.
 */
int lc_parse_single_u64(const char *buf, size_t len, uint64_t *v);

/*
 * A file holding a size in MiB (max_dirty_mb, max_read_ahead_mb, ...):
 * as lc_parse_single_u64, but up to 2.13 the kernel printed a setting that
 * is not a whole number of MiB with lprocfs_read_frac_helper ("40.25",
 * ".5" for .05 in its seq_file variant), so a fraction of up to 9 digits
 * is accepted and dropped: *v is the whole MiB below, as 2.14+ prints it
 * (PAGES_TO_MiB).  Returns 0 and sets *v, or -1.
 */
int lc_parse_single_mb(const char *buf, size_t len, uint64_t *v);

/* 1 if buf[0..len) is empty or ends with a newline (the kernel always ends
 * its lines; a last line without one was cut off). */
int lc_complete_lines(const char *buf, size_t len);

#endif /* LC_PARSE_COMMON_H */
