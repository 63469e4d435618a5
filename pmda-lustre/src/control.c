/*
 * Job control: who may store into lustreclient.control.job_begin and
 * job_end, and what such a store does.
 *
 * A job's begin values are root's word only (the prolog runs as root): a
 * user who could take a running job's slot again, end it or evict it would
 * make its deltas wrong, and pmcd's shipped [access] section lets every
 * local user store.  So each store is judged by the identity of the client
 * that sent it, as pmcd knows it, and that is exact in every PCP from 4.3
 * to 7.2 (pmcd: dostore.c, client.c, config.c; libpcp_pmda: mainloop.c):
 *
 *  - pmcd forwards a client's store as a PDU whose header names the
 *    client's context (its client slot: __pmSendResult(fd, cp - client, ...)),
 *    and libpcp_pmda puts that header's context in pmda->e_context before
 *    it calls the store callback.
 *  - To an agent with PMDA_FLAG_AUTHORIZE pmcd sends, in PDUs headed with
 *    the same context, the uid it has of the client: the unix socket's peer
 *    credentials, read when the client connected (a TCP client has none).
 *    It sends them when the client's first PDU (its credentials) arrives,
 *    so before any store of that client, on the same pipe.
 *  - When the client goes, pmcd sends the context's end notice before the
 *    slot can be given to another client.  It skips an agent that is busy
 *    or not ready; this agent never says it is not ready, and pmcd is busy
 *    with it only while it waits for its answer to a request, after which
 *    it has the answer or has stopped the agent (whose successor starts
 *    knowing no client).
 *
 * pmdaGetContext() is not the store's context: libpcp_pmda sets it only
 * when it runs pmdaFetch, pmdaDesc, pmdaInstance, pmdaText and the like,
 * for whichever client asked last, so a store judged by it went through
 * for a user whenever a root client had just asked for something, and was
 * refused to root after a user's request.
 *
 * Rejected: moving job control off pmcd, to a root-owned directory of
 * request files the agent reads when woken by an unprivileged store or
 * fetch.  It would add a second channel (files to check for owner and mode,
 * symlinks, their number and size to bound) to learn an identity pmcd
 * already gives each request, and the prolog would still go through pmcd
 * to learn that the agent took the job.
 *
 * Memory: libpcp_pmda 6.0 to 7.2 never release the buffer a store's values
 * were decoded into (release_store_buffer): ~100 bytes a store, whoever
 * sent it and whether or not it is refused.  The agent releases it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "lustreclient.h"
#include "clients.h"

static struct lc_clients	clients;
/* refusals for who the client is (anyone can send those in a loop), and of root's own stores */
static struct lc_loglimit	identity_log = { .interval = 1.0, .burst = 10 };
static struct lc_loglimit	request_log = { .interval = 1.0, .burst = 10 };

static int
lc_attribute(int ctx, int attr, const char *value, int length, pmdaExt *pmda)
{
    if (attr == PMDA_ATTR_USERID)
	lc_clients_set_uid(&clients, ctx, value, length > 0 ? (size_t)length : 0);
    return pmdaAttribute(ctx, attr, value, length, pmda);
}

static void
lc_end_context(int ctx)
{
    lc_clients_end(&clients, ctx);
}

/* the string a value set stores, for a log line: printable ASCII, at most 63 characters */
static void
shown_value(const pmValueSet *vs, char *out, size_t size)
{
    const pmValueBlock	*vb;
    size_t		len, i, n = 0;

    out[0] = '\0';
    if (vs->numval != 1 || vs->valfmt == PM_VAL_INSITU ||
	(vb = vs->vlist[0].value.pval) == NULL || vb->vlen < PM_VAL_HDR_SIZE)
	return;
    len = vb->vlen - PM_VAL_HDR_SIZE;
    for (i = 0; i < len && vb->vbuf[i] != '\0' && n + 4 < size && i < LC_JOB_ID_MAX; i++)
	out[n++] = (vb->vbuf[i] > ' ' && vb->vbuf[i] < 127) ? vb->vbuf[i] : '?';
    if (i < len && vb->vbuf[i] != '\0')
	n += (size_t)pmsprintf(out + n, size - n, "...");
    out[n] = '\0';
}

static int
is_control(pmID pmid)
{
    return pmID_cluster(pmid) == CL_JOB &&
	   (pmID_item(pmid) == JOB_CTL_BEGIN || pmID_item(pmid) == JOB_CTL_END);
}

/* what a store asks for, for a log line: 'job_begin "1234"', or the PMID it stores into */
static void
describe(const pmResult *result, char *out, size_t size)
{
    const pmValueSet	*vs;
    char		shown[LC_JOB_ID_MAX + 8];
    int			n;

    if (result->numpmid < 1) {
	pmsprintf(out, size, "an empty store");
	return;
    }
    vs = result->vset[0];
    if (is_control(vs->pmid)) {
	shown_value(vs, shown, sizeof(shown));
	n = pmsprintf(out, size, "%s \"%s\"",
		      pmID_item(vs->pmid) == JOB_CTL_BEGIN ? "job_begin" : "job_end", shown);
    } else {
	n = pmsprintf(out, size, "a store into %s", pmIDStr(vs->pmid));
    }
    if (result->numpmid > 1 && n > 0 && (size_t)n < size)
	pmsprintf(out + n, size - (size_t)n, " and %d more metrics", result->numpmid - 1);
}

static double
now_s(void)
{
    struct timespec	ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* one log line saying why a store was refused, as often as the limit allows */
static void
refused(struct lc_loglimit *limit, const pmResult *result, const char *fmt, ...)
{
    char		what[160], why[160], held[80] = "";
    unsigned long	n;
    va_list		ap;

    if (!lc_loglimit_take(limit, now_s(), &n))
	return;
    describe(result, what, sizeof(what));
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    if (n > 0)
	pmsprintf(held, sizeof(held), " (and %lu refused before this one, not logged)", n);
    pmNotifyErr(LOG_WARNING, "%s: refused: %s%s", what, why, held);
}

/* 0 if the client that sent the store (its pmcd context) is root, else PM_ERR_PERMISSION */
static int
judge_client(const pmResult *result, int ctx)
{
    long	uid = -1;

    switch (lc_clients_who(&clients, ctx, &uid)) {
    case LC_WHO_ROOT:
	return 0;
    case LC_WHO_USER:
	refused(&identity_log, result, "the client (pmcd context %d) is uid %ld, not root", ctx, uid);
	break;
    case LC_WHO_UNKNOWN:
	refused(&identity_log, result, "pmcd has no uid for the client (context %d): "
		"not on pmcd's unix socket", ctx);
	break;
    case LC_WHO_BEYOND:
	refused(&identity_log, result, "pmcd context %d is past the %d the agent keeps", ctx,
		LC_MAX_CONTEXTS);
	break;
    }
    return PM_ERR_PERMISSION;
}

/*
 * The job id a value set of job_begin or job_end stores: 0 with id set, or
 * PM_ERR_BADSTORE with *why saying what is wrong.
 */
static int
job_id_of(const pmValueSet *vs, char id[LC_JOB_ID_MAX + 1], const char **why)
{
    const pmValueBlock	*vb;
    size_t		len, i;

    if (vs->numval != 1 || vs->valfmt == PM_VAL_INSITU ||
	(vb = vs->vlist[0].value.pval) == NULL || vb->vtype != PM_TYPE_STRING ||
	vb->vlen < PM_VAL_HDR_SIZE) {
	*why = "not one string value";
	return PM_ERR_BADSTORE;
    }
    len = vb->vlen - PM_VAL_HDR_SIZE;
    for (i = 0; i < len && vb->vbuf[i] != '\0'; i++) {
	if (i == LC_JOB_ID_MAX) {
	    *why = "not a job id (1 to 63 of [A-Za-z0-9_.:+-])";
	    return PM_ERR_BADSTORE;
	}
	id[i] = vb->vbuf[i];
    }
    id[i] = '\0';
    if (!lc_job_id_ok(id)) {
	*why = "not a job id (1 to 63 of [A-Za-z0-9_.:+-])";
	return PM_ERR_BADSTORE;
    }
    return 0;
}

/* root's store: job_begin and job_end of good job ids only, checked all before any is done */
static int
check_request(const pmResult *result)
{
    char	id[LC_JOB_ID_MAX + 1];
    const char	*why;
    int		i;

    for (i = 0; i < result->numpmid; i++) {
	if (!is_control(result->vset[i]->pmid)) {
	    refused(&request_log, result, "only lustreclient.control.job_begin and job_end take stores");
	    return PM_ERR_PERMISSION;
	}
	if (job_id_of(result->vset[i], id, &why) < 0) {
	    refused(&request_log, result, "%s", why);
	    return PM_ERR_BADSTORE;
	}
    }
    return 0;
}

static int
act(const pmResult *result)
{
    char	id[LC_JOB_ID_MAX + 1];
    const char	*why;
    int		i, sts;

    for (i = 0; i < result->numpmid; i++) {
	job_id_of(result->vset[i], id, &why);
	if (pmID_item(result->vset[i]->pmid) == JOB_CTL_END) {
	    lc_jobs_end(id);
	    continue;
	}
	/* the begin values: what a fetch of every job metric would read now */
	lc_refresh_job_files();
	if ((sts = lc_jobs_begin(id)) < 0)
	    return sts;
    }
    return 0;
}

/*
 * libpcp_pmda 6.0 to 7.2 decode a store's PDU into value sets that keep a
 * pin on the buffer holding them (the PDU's own, or on 64-bit hosts a copy),
 * and free the decoded result as if it had no value sets (mainloop.c,
 * PDU_RESULT: rp->numpmid = 0), so that pin is never dropped and each store
 * keeps its buffer for good.  Drop it once the values are no longer needed.
 * Only on those versions: the others drop it themselves, and a second drop
 * would free a buffer still in use.
 */
extern int __pmUnpinPDUBuf(void *);	/* libpcp's; not in its public headers */
static int	store_pin_kept;

static void
release_store_buffer(pmResult *result)
{
    if (store_pin_kept && result->numpmid > 0)
	__pmUnpinPDUBuf(result->vset[0]);
}

static int
lc_store(pmResult *result, pmdaExt *pmda)
{
    int		sts;

    /* pmda->e_context: the client that sent this store (not pmdaGetContext()) */
    if ((sts = judge_client(result, pmda->e_context)) == 0 &&
	(sts = check_request(result)) == 0)
	sts = act(result);
    release_store_buffer(result);
    return sts;
}

void
lc_control_init(pmdaInterface *dispatch)
{
    int		v = pmGetVersion();

    dispatch->version.seven.store = lc_store;
    dispatch->version.seven.attribute = lc_attribute;
    dispatch->comm.flags |= PMDA_FLAG_AUTHORIZE;	/* pmcd tells each client's uid */
    pmdaSetEndContextCallBack(dispatch, lc_end_context);
    store_pin_kept = v >= PM_VERSION(6, 0, 0) && v < PM_VERSION(7, 3, 0);
    if (v >= PM_VERSION(7, 3, 0))
	pmNotifyErr(LOG_INFO, "PCP %d.%d.%d is newer than the 7.2 this agent was checked "
		    "against: each store may keep ~100 bytes (src/control.c, release_store_buffer)",
		    v >> 16, (v >> 8) & 0xff, v & 0xff);
}
