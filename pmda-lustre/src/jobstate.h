/*
 * The job slots' files (jobstate.c): one per slot in use, in a directory
 * of the agent's own; their layout is persist.h's.
 */
#ifndef LC_JOBSTATE_H
#define LC_JOBSTATE_H

#include <stddef.h>

/*
 * Use the directory at path, created 0700 when missing.  Refused (one log
 * line, -1, slots then kept in memory only) when it is a symbolic link, not
 * a directory, not the agent's user's, or open to others.
 */
int lc_jobstate_open(const char *path);
int lc_jobstate_enabled(void);
const char *lc_jobstate_dir(void);	/* NULL when not enabled */

/* slot's file, replaced whole (temporary file, fsync, rename); 0, or -1 (logged once) */
int lc_jobstate_write(unsigned slot, const void *buf, size_t len);
void lc_jobstate_remove(unsigned slot);
/*
 * slot's file, malloc'd, its bytes in *len; NULL when there is none, or
 * when it cannot be read or is larger than a slot's file can be (then
 * logged in one line and removed).
 */
void *lc_jobstate_read(unsigned slot, size_t *len);
/* slot's file is not taken up, for why: one log line, and removed */
void lc_jobstate_refuse(unsigned slot, const char *why);

#endif /* LC_JOBSTATE_H */
