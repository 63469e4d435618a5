/*
 * Client device directory names -> instance names, and RPC-size bucket
 * labels.  Pure functions (no I/O), unit tested.
 *
 *	llite	<fs>-<sbi>			-> "<fs>"
 *	osc	<fs>-OSTxxxx-osc-<sbi>		-> "<fs>-OSTxxxx"
 *	mdc	<fs>-MDTxxxx-mdc-<sbi>		-> "<fs>-MDTxxxx"
 * <sbi> is the client superblock pointer in hex; server-side OSP links
 * (<fs>-OSTxxxx-osc-MDTxxxx) are rejected.
 */
#ifndef LC_NAMES_H
#define LC_NAMES_H

#include <stddef.h>
#include <stdint.h>

#define LC_NAME_MAX	256

enum lc_devkind { LC_DEV_LLITE, LC_DEV_OSC, LC_DEV_MDC };

struct lc_devname {
    char	fsname[LC_NAME_MAX];
    char	target[LC_NAME_MAX];	/* "OST0003"/"MDT0000"; "" for llite */
    char	sbi[LC_NAME_MAX];
    char	inst[LC_NAME_MAX];	/* external instance name */
};

/* 0 if name is a client device of that kind, -1 otherwise (skip it). */
int lc_devname_parse(enum lc_devkind kind, const char *name, struct lc_devname *out);

/* "4K", "16M", "2G" for a power-of-two byte count (plain digits if < 1K). */
void lc_size_label(uint64_t bytes, char *buf, size_t bufsz);

/* Highest bucket index i with pagesize << i <= 64 MiB (the largest
 * PTLRPC_MAX_BRW_SIZE of any release); 0 if the page is bigger. */
int lc_bucket_default_maxidx(uint64_t pagesize);

#endif /* LC_NAMES_H */
