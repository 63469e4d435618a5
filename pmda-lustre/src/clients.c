/* who each pmcd client is, and a limit on log lines (clients.h) */
#include <stdint.h>
#include "clients.h"

static int
in_table(int ctx)
{
    return ctx >= 0 && ctx < LC_MAX_CONTEXTS;
}

/* a decimal uid of at most 10 digits below 2^32 - 1 (which is (uid_t)-1, "none") */
static long
parse_uid(const char *value, size_t len)
{
    unsigned long long	v = 0;
    size_t		i;

    if (len > 0 && value[len - 1] == '\0')
	len--;
    if (len == 0 || len > 10)
	return -1;
    for (i = 0; i < len; i++) {
	if (value[i] < '0' || value[i] > '9')
	    return -1;
	v = v * 10 + (unsigned)(value[i] - '0');
    }
    return v < UINT32_MAX ? (long)v : -1;
}

void
lc_clients_set_uid(struct lc_clients *c, int ctx, const char *value, size_t len)
{
    long	uid;

    if (!in_table(ctx))
	return;
    uid = value != NULL ? parse_uid(value, len) : -1;
    c->uid1[ctx] = uid >= 0 ? uid + 1 : 0;
}

void
lc_clients_end(struct lc_clients *c, int ctx)
{
    if (in_table(ctx))
	c->uid1[ctx] = 0;
}

enum lc_who
lc_clients_who(const struct lc_clients *c, int ctx, long *uid)
{
    if (!in_table(ctx))
	return LC_WHO_BEYOND;
    if (c->uid1[ctx] == 0)
	return LC_WHO_UNKNOWN;
    *uid = c->uid1[ctx] - 1;
    return *uid == 0 ? LC_WHO_ROOT : LC_WHO_USER;
}

int
lc_loglimit_take(struct lc_loglimit *l, double now, unsigned long *held)
{
    if (l->last == 0) {
	l->credit = l->burst;
    } else {
	l->credit += (now - l->last) / l->interval;
	if (l->credit > l->burst)
	    l->credit = l->burst;
    }
    l->last = now;
    if (l->credit < 1) {
	l->held++;
	return 0;
    }
    l->credit -= 1;
    *held = l->held;
    l->held = 0;
    return 1;
}
