/*
 * Who each pmcd client is (clients.c): the uid pmcd sent for a context,
 * until its end notice; nothing else makes a client root.  And the limit
 * on refusal log lines: never more than its burst plus one an interval,
 * and every line not logged is counted once.
 */
#include "harness.h"
#include "clients.h"

static struct lc_clients	c;

static enum lc_who
who(int ctx, long *uid)
{
    *uid = -7;
    return lc_clients_who(&c, ctx, uid);
}

static void
set(int ctx, const char *v)
{
    lc_clients_set_uid(&c, ctx, v, strlen(v) + 1);	/* pmcd sends the NUL too */
}

static void
test_uids(void)
{
    long	uid;

    memset(&c, 0, sizeof(c));
    CHECK_INT(who(3, &uid), LC_WHO_UNKNOWN);		/* told nothing: no uid */
    set(3, "0");
    CHECK_INT(who(3, &uid), LC_WHO_ROOT);
    CHECK_INT(uid, 0);
    set(4, "1000");
    CHECK_INT(who(4, &uid), LC_WHO_USER);
    CHECK_INT(uid, 1000);
    lc_clients_set_uid(&c, 5, "0", 1);			/* without the NUL */
    CHECK_INT(who(5, &uid), LC_WHO_ROOT);
    lc_clients_end(&c, 3);				/* the client went: its slot knows no one */
    CHECK_INT(who(3, &uid), LC_WHO_UNKNOWN);
    CHECK_INT(who(4, &uid), LC_WHO_USER);		/* the others stay */
    CHECK_INT(who(5, &uid), LC_WHO_ROOT);

    /* not a uid: the context's uid is forgotten, never taken as 0 */
    static const char *bad[] = { "", "-1", "+0", " 0", "0 ", "0x0", "1e3", "12a", "4294967295",
				 "99999999999", "00000000000" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
	set(5, "0");
	set(5, bad[i]);
	if (who(5, &uid) != LC_WHO_UNKNOWN)
	    fprintf(stderr, "uid \"%s\" taken\n", bad[i]);
	CHECK_INT(who(5, &uid), LC_WHO_UNKNOWN);
    }
    set(5, "0");
    lc_clients_set_uid(&c, 5, NULL, 0);
    CHECK_INT(who(5, &uid), LC_WHO_UNKNOWN);
    lc_clients_set_uid(&c, 5, "0\0" "5", 3);		/* bytes after the NUL: not a uid */
    CHECK_INT(who(5, &uid), LC_WHO_UNKNOWN);
    set(5, "4294967294");
    CHECK_INT(who(5, &uid), LC_WHO_USER);
    CHECK_INT(uid, 4294967294LL);

    /* contexts outside the table are no one, and setting them changes nothing */
    set(-1, "0");
    set(LC_MAX_CONTEXTS, "0");
    CHECK_INT(who(-1, &uid), LC_WHO_BEYOND);
    CHECK_INT(who(LC_MAX_CONTEXTS, &uid), LC_WHO_BEYOND);
    lc_clients_end(&c, LC_MAX_CONTEXTS);
    set(LC_MAX_CONTEXTS - 1, "0");
    CHECK_INT(who(LC_MAX_CONTEXTS - 1, &uid), LC_WHO_ROOT);
}

/* a context near the table's start or its end, in it or not */
static int
pick_ctx(unsigned *seed)
{
    unsigned	r;

    *seed = *seed * 1103515245u + 12345u;
    r = *seed >> 8;
    return (int)(r % 70) - 3 + (r % 7 == 0 ? LC_MAX_CONTEXTS - 30 : 0);
}

/*
 * By property: any sequence of uids and end notices over contexts in and
 * out of the table, against a plain model (an array of "uid or none").
 */
static void
test_uids_model(void)
{
    static long	model[LC_MAX_CONTEXTS];	/* uid, -1 none */
    unsigned	seed = 12345, r;
    int		i, ctx, wrong = 0;
    long	uid;
    char	v[16];

    memset(&c, 0, sizeof(c));
    for (i = 0; i < LC_MAX_CONTEXTS; i++)
	model[i] = -1;
    for (i = 0; i < 200000; i++) {
	ctx = pick_ctx(&seed);
	seed = seed * 1103515245u + 12345u;
	r = seed >> 8;
	switch ((r >> 12) % 4) {
	case 0:						/* root */
	case 1:						/* a user */
	    uid = (r >> 12) % 4 == 0 ? 0 : (long)(r % 70000) + 1;
	    snprintf(v, sizeof(v), "%ld", uid);
	    set(ctx, v);
	    if (ctx >= 0 && ctx < LC_MAX_CONTEXTS)
		model[ctx] = uid;
	    break;
	case 2:						/* not a uid */
	    set(ctx, r & 1 ? "x" : "-0");
	    if (ctx >= 0 && ctx < LC_MAX_CONTEXTS)
		model[ctx] = -1;
	    break;
	default:					/* the client went */
	    lc_clients_end(&c, ctx);
	    if (ctx >= 0 && ctx < LC_MAX_CONTEXTS)
		model[ctx] = -1;
	    break;
	}
	ctx = pick_ctx(&seed);
	{
	    enum lc_who w = who(ctx, &uid), want;

	    if (ctx < 0 || ctx >= LC_MAX_CONTEXTS)
		want = LC_WHO_BEYOND;
	    else if (model[ctx] < 0)
		want = LC_WHO_UNKNOWN;
	    else
		want = model[ctx] == 0 ? LC_WHO_ROOT : LC_WHO_USER;
	    if (w != want || ((w == LC_WHO_ROOT || w == LC_WHO_USER) && uid != model[ctx]))
		wrong++;
	}
    }
    CHECK_INT(wrong, 0);
}

static void
test_loglimit_example(void)
{
    struct lc_loglimit	l = { .interval = 1.0, .burst = 3 };
    unsigned long	held = 99;

    CHECK_INT(lc_loglimit_take(&l, 100.0, &held), 1);
    CHECK_U64(held, 0);
    CHECK_INT(lc_loglimit_take(&l, 100.0, &held), 1);
    CHECK_INT(lc_loglimit_take(&l, 100.0, &held), 1);
    CHECK_INT(lc_loglimit_take(&l, 100.0, &held), 0);	/* the burst is spent */
    CHECK_INT(lc_loglimit_take(&l, 100.5, &held), 0);
    CHECK_INT(lc_loglimit_take(&l, 101.0, &held), 1);	/* a second later: one more, saying 2 */
    CHECK_U64(held, 2);
    CHECK_INT(lc_loglimit_take(&l, 101.0, &held), 0);
    CHECK_INT(lc_loglimit_take(&l, 5000.0, &held), 1);	/* idle: the burst again, not more */
    CHECK_U64(held, 1);
    CHECK_INT(lc_loglimit_take(&l, 5000.0, &held), 1);
    CHECK_INT(lc_loglimit_take(&l, 5000.0, &held), 1);
    CHECK_INT(lc_loglimit_take(&l, 5000.0, &held), 0);
}

/*
 * By property, over random rates of lines: in every window of time the
 * lines logged are at most burst + window / interval, and every line is
 * either logged or counted in the held number of exactly one later line
 * (or still held at the end).
 */
static void
test_loglimit_property(void)
{
    enum { N = 20000 };
    static double	t[N];
    static int		logged[N];
    unsigned		seed = 777;
    int			run, i, j, bad_window = 0, bad_count = 0;

    for (run = 0; run < 20; run++) {
	struct lc_loglimit	l = { .interval = 0.5 + run % 3, .burst = 1 + run % 5 };
	unsigned long		held, said = 0, n_logged = 0;
	double			now = 1000.0;

	for (i = 0; i < N; i++) {
	    seed = seed * 1103515245u + 12345u;
	    now += ((seed >> 8) % 1000) / (run % 2 ? 100.0 : 10000.0);	/* bursts and trickles */
	    t[i] = now;
	    logged[i] = lc_loglimit_take(&l, now, &held);
	    if (logged[i]) {
		said += held;
		n_logged++;
	    }
	}
	if (said + l.held + n_logged != N)
	    bad_count++;
	for (i = 0; i < N; i += 97) {			/* windows starting at every 97th line */
	    unsigned long in = 0;

	    for (j = i; j < N && t[j] - t[i] <= 50 * l.interval; j++) {
		in += (unsigned long)logged[j];
		if (in > l.burst + (t[j] - t[i]) / l.interval + 1e-9) {
		    bad_window++;
		    break;
		}
	    }
	}
    }
    CHECK_INT(bad_count, 0);
    CHECK_INT(bad_window, 0);
}

void
test_clients(void)
{
    test_uids();
    test_uids_model();
    test_loglimit_example();
    test_loglimit_property();
}
