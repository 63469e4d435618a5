/*
 * Who each pmcd client is, as pmcd told the agent, and how often the agent
 * may say that it refused one.  Pure (no libpcp): unit tested; control.c
 * feeds them from pmcd's PDUs.
 *
 * pmcd numbers its clients by the slot it keeps them in (the "context" of
 * every PDU it sends the agent for them; a slot is reused once its client
 * has gone).  For an agent that asks (PMDA_FLAG_AUTHORIZE) it sends each
 * client's uid when the client connects, if it has one (from a unix
 * socket's peer credentials; a TCP connection has none), and an end notice
 * when the client goes.  A context the agent was told no uid for has none.
 */
#ifndef LC_CLIENTS_H
#define LC_CLIENTS_H

#include <stddef.h>

#define LC_MAX_CONTEXTS	4096	/* pmcd reuses the lowest free slot: its clients at once */

enum lc_who {
    LC_WHO_ROOT,		/* uid 0 */
    LC_WHO_USER,		/* another uid */
    LC_WHO_UNKNOWN,		/* pmcd gave no uid (TCP, or not told yet) */
    LC_WHO_BEYOND,		/* a context number past the table (or negative) */
};

struct lc_clients {
    long	uid1[LC_MAX_CONTEXTS];	/* uid + 1; 0: none */
};

/*
 * pmcd's PMDA_ATTR_USERID for ctx: value, len bytes (a decimal uid, maybe
 * NUL-terminated).  Anything else than a uid in 0 .. 2^32-2 forgets ctx's uid.
 */
void lc_clients_set_uid(struct lc_clients *c, int ctx, const char *value, size_t len);
/* pmcd's end notice for ctx: its client has gone */
void lc_clients_end(struct lc_clients *c, int ctx);
/* who ctx is; *uid set for LC_WHO_ROOT and LC_WHO_USER */
enum lc_who lc_clients_who(const struct lc_clients *c, int ctx, long *uid);

/*
 * At most burst lines at once, then one every interval seconds on average
 * (a token bucket): a client storing in a loop cannot fill the disk with
 * the agent's log.  The lines not logged are counted, and said with the
 * next line that is.
 */
struct lc_loglimit {
    double		interval;	/* seconds a line */
    unsigned		burst;
    double		credit;		/* lines that may be logged now */
    double		last;		/* when credit was last worked out; 0: never */
    unsigned long	held;		/* lines not logged since the last one that was */
};

/*
 * A line to log at time now (seconds): 1 to log it, with *held the lines
 * not logged before it (then 0 again); 0 to count it and log nothing.
 */
int lc_loglimit_take(struct lc_loglimit *l, double now, unsigned long *held);

#endif /* LC_CLIENTS_H */
