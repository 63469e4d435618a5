/*
 * "Is this the file I parsed last time?"  Most of a client's thousands of
 * OSCs are idle in any one second, so their files read the same as a
 * second ago except for the clock lines of the header.  Keeping what was
 * parsed and comparing the new text with it (a memcmp) costs a tenth of
 * parsing it again.  The parsers are pure functions of the text, so equal
 * text means equal values: reuse is exact, not an approximation.
 *
 * Ignored in the comparison: "snapshot_time" and "elapsed_time" lines at
 * the top of the file (they move at every read and no metric comes from
 * them).  "start_time" is compared: it changes when counters are cleared.
 */
#ifndef LC_UNCHANGED_H
#define LC_UNCHANGED_H

#include <stddef.h>

struct lc_seen {
    char	*p;		/* the text last parsed, clock lines removed */
    size_t	len, cap;
    int		valid;
};

/* 1 if buf[0..len) is, clock lines aside, the text kept by lc_seen_keep() */
int lc_seen_same(const struct lc_seen *s, const char *buf, size_t len);

/* keep buf as the text whose parse gave the values now held; 0, or -1
 * (out of memory: nothing is kept, the next read is parsed) */
int lc_seen_keep(struct lc_seen *s, const char *buf, size_t len);

/* the values no longer come from the kept text (a failed parse) */
void lc_seen_forget(struct lc_seen *s);

#endif /* LC_UNCHANGED_H */
