/*
 * Little-endian writers for the aggregates the agent packs (answer.c,
 * series.c): their layouts are little-endian whatever the host's order.
 */
#ifndef LC_LEPACK_H
#define LC_LEPACK_H

#include <stdint.h>

/* v at p, little-endian; returns p past it */
static inline unsigned char *
lc_put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
	p[i] = (unsigned char)(v >> (8 * i));
    return p + 4;
}

static inline unsigned char *
lc_put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
	p[i] = (unsigned char)(v >> (8 * i));
    return p + 8;
}

#endif /* LC_LEPACK_H */
