/*
 * Minimal assert harness: every CHECK counts as one passed or failed
 * assertion; main() prints "N passed, N failed" and exits non-zero on any
 * failure.  Inputs are handed to the parsers in exactly-sized heap copies
 * without a NUL, so ASan reports any read past the end.
 */
#ifndef LC_HARNESS_H
#define LC_HARNESS_H

#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern int h_pass, h_fail;

#define CHECK(cond) do { \
    if (cond) h_pass++; \
    else { h_fail++; fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); } \
} while (0)

#define CHECK_U64(got, want) do { \
    unsigned long long g_ = (unsigned long long)(got), w_ = (unsigned long long)(want); \
    if (g_ == w_) h_pass++; \
    else { h_fail++; fprintf(stderr, "%s:%d: %s = %llu, want %llu\n", __FILE__, __LINE__, #got, g_, w_); } \
} while (0)

#define CHECK_INT(got, want) do { \
    long long g_ = (long long)(got), w_ = (long long)(want); \
    if (g_ == w_) h_pass++; \
    else { h_fail++; fprintf(stderr, "%s:%d: %s = %lld, want %lld\n", __FILE__, __LINE__, #got, g_, w_); } \
} while (0)

#define CHECK_STR(got, want) do { \
    const char *g_ = (got), *w_ = (want); \
    if (g_ && strcmp(g_, w_) == 0) h_pass++; \
    else { h_fail++; fprintf(stderr, "%s:%d: %s = \"%s\", want \"%s\"\n", __FILE__, __LINE__, #got, g_ ? g_ : "(null)", w_); } \
} while (0)

/* heap copy of s without the terminating NUL (len 0 gives a 1-byte block) */
static inline char *
h_exact(const char *s, size_t len)
{
    char *p = malloc(len ? len : 1);

    if (p == NULL) {
	perror("malloc");
	exit(2);
    }
    memcpy(p, s, len);
    return p;
}

/* xorshift64: the next number of a reproducible pseudo-random sequence kept in *state (not 0) */
static inline uint64_t
h_rand(uint64_t *state)
{
    uint64_t	x = *state;

    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

void test_clients(void);
void test_slot_answer(void);
void test_common(void);
void test_parse_stats(void);
void test_parse_rpc_stats(void);
void test_parse_version(void);
void test_parse_import(void);
void test_names(void);
void test_parse_misc(void);
void test_fuzz(void);
void test_unchanged(void);
void test_selfstats(void);
void test_parse_osrelease(void);
void test_jobs(void);
void test_series(void);
void test_persist(void);

#endif
