/*
 * The job view, agent side: a job's begin values taken when its id is
 * stored into lustreclient.control.job_begin, and at each fetch of a slot
 * the now values, both read through lc_value() (so each value is there or
 * not exactly as a fetch of the base metric would give it), differenced by
 * jobdiff.c.  And each slot's timeline (series.h): at every sample (the
 * main loop's, pmda.c, and a fetch of the series' own) the filesystems'
 * deltas of the series metrics, as the slot serves them then, into the
 * slot's series.  Each slot in use is kept on disk too (jobstate.c, the
 * layout persist.c's): written at its job_begin, its timeline again at each
 * checkpoint, removed at its job_end; an agent started again takes the
 * files up into their slots and judges their devices against the values
 * now, as a fetch would (lc_jobs_restore).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include "lustreclient.h"
#include "jobs.h"
#include "jobstate.h"
#include "persist.h"
#include "../domain.h"

static struct lc_jobslot slots[LC_JOB_SLOTS];
static char		last_begun[LC_JOB_ID_MAX + 1], last_ended[LC_JOB_ID_MAX + 1];
static pmdaIndom	*job_indom;
static pmdaInstid	job_insts[LC_JOB_SLOTS];

/* per fetch: the now record and each slot's outcome, made when first asked for */
static struct lc_jobrec	now;
static unsigned		gen = 1, now_gen;
static struct lc_jobres	res[LC_JOB_SLOTS];
static unsigned		res_gen[LC_JOB_SLOTS];
static int		res_ok[LC_JOB_SLOTS];

/* each slot's timeline, sampled every interval_ms, and the value block of its last fetch */
static struct lc_series	series[LC_JOB_SLOTS];
static uint32_t		interval_ms = 10000;
static pmValueBlock	*served[LC_JOB_SLOTS];
/* how many times an agent took each slot's job up again from its file */
static unsigned		restarts[LC_JOB_SLOTS];

void
lc_jobs_init(pmdaIndom *idp)
{
    job_indom = idp;
    idp->it_numinst = 0;
    idp->it_set = job_insts;
}

/* the JOB_INDOM instances: the slots in use, named by their job ids */
static void
indom_update(void)
{
    int		s, n = 0;

    for (s = 0; s < LC_JOB_SLOTS; s++) {
	if (!slots[s].used)
	    continue;
	job_insts[n].i_inst = s;
	job_insts[n].i_name = slots[s].id;
	n++;
    }
    job_indom->it_numinst = n;
}

void
lc_jobs_changed(void)
{
    gen++;
}

static int
inst_of(int serial, const char *name, void **priv)
{
    int		inst;

    if (pmdaCacheLookupName(lc.indom[serial], name, &inst, priv) < 0)
	return -1;
    return inst;
}

static void
values(struct lc_jobdev *d, unsigned kind, void *priv)
{
    pmAtomValue	atom;
    unsigned	k;

    for (k = 0; k < LC_JOB_NMETRICS; k++) {
	if (lc_job_kind(k) != kind || lc_job_nval(k) != 1)
	    continue;
	if (lc_value(lc_job_metrics[k].cluster, lc_job_metrics[k].item, priv, &atom) == 1) {
	    d->val[lc_job_off(k)] = atom.ull;
	    d->pres[lc_job_off(k)] = 1;
	}
    }
}

static void
start(struct lc_jobdev *d, int i, unsigned cluster, unsigned item, void *priv)
{
    pmAtomValue	atom;

    if (lc_value(cluster, item, priv, &atom) == 1) {
	d->start_ok[i] = 1;
	d->start[i] = atom.d;
    }
}

/* the fs histogram buckets that exist now, and their values */
static void
buckets(struct lc_jobdev *d, struct lc_fs *fs)
{
    char	name[LC_NAME_MAX + 32], size[32];
    pmAtomValue	atom;
    void	*priv;
    int		idx, inst, dir;

    for (idx = 0; idx <= fs->maxidx && idx < RPC_HIST_MAX && idx < 64; idx++) {
	if ((lc.pagesize << idx) >> idx != lc.pagesize)
	    break;
	lc_size_label(lc.pagesize << idx, size, sizeof(size));
	pmsprintf(name, sizeof(name), "%s:%s", fs->name, size);
	priv = NULL;
	if (pmdaCacheLookupName(lc.indom[FS_BUCKET_INDOM], name, &inst, &priv) != PMDA_CACHE_ACTIVE ||
	    priv == NULL)
	    continue;
	d->binst[idx] = inst;
	for (dir = 0; dir < 2; dir++) {
	    unsigned k = dir == 0 ? LC_JOB_K_RPC_READ : LC_JOB_K_RPC_WRITE, v = lc_job_off(k) + (unsigned)idx;

	    if (lc_value(CL_FS_RPC, (unsigned)dir, priv, &atom) == 1) {
		d->val[v] = atom.ull;
		d->pres[v] = 1;
	    }
	}
    }
}

/* lc.fs's index of a device's filesystem (devices point at theirs), or -1 */
static int
fs_of(const struct lc_fs *fs)
{
    for (size_t f = 0; f < lc.nfs; f++)
	if (lc.fs[f] == fs)
	    return (int)f;
    return -1;
}

/*
 * An OSC or MDC's record, listed, tied to the record of its filesystem
 * (fsidx: lc.fs's index -> record index).
 */
static struct lc_jobdev *
device(struct lc_jobrec *r, unsigned kind, int indom, const char *name, const char *dir,
       const struct lc_fs *fs, const int *fsidx)
{
    struct lc_jobdev	*d;
    int			f;

    if ((d = lc_jobrec_add(r, kind, inst_of(indom, name, NULL), name, dir)) == NULL)
	return NULL;
    d->listed = 1;
    if ((f = fs_of(fs)) >= 0)
	d->fs = fsidx[f];
    return d;
}

/*
 * A record of the values lc_value gives now, for the job metrics: every
 * fs that is mounted or has devices, every OSC and MDC present.
 */
static int
build(struct lc_jobrec *r)
{
    struct lc_jobdev	*d;
    int			*fsidx, f;
    size_t		i;

    if ((fsidx = calloc(lc.nfs ? lc.nfs : 1, sizeof(*fsidx))) == NULL)
	return -1;
    for (i = 0; i < lc.nfs; i++)
	fsidx[i] = -1;
    /* a filesystem with devices present has a record even when not mounted */
    for (i = 0; i < lc.nosc; i++)
	if (lc.osc[i]->present && (f = fs_of(lc.osc[i]->fs)) >= 0)
	    fsidx[f] = 0;
    for (i = 0; i < lc.nmdc; i++)
	if (lc.mdc[i]->present && (f = fs_of(lc.mdc[i]->fs)) >= 0)
	    fsidx[f] = 0;
    for (i = 0; i < lc.nfs; i++) {
	struct lc_fs *fs = lc.fs[i];

	if (!fs->has_llite && fsidx[i] < 0)
	    continue;
	fsidx[i] = (int)r->n[LC_JK_FS];
	if ((d = lc_jobrec_add(r, LC_JK_FS, inst_of(FS_INDOM, fs->name, NULL), fs->name,
			       fs->has_llite ? fs->sbi : "")) == NULL)
	    goto fail;
	d->listed = fs->has_llite;
	if (fs->has_llite) {
	    values(d, LC_JK_FS, fs);
	    start(d, 0, CL_LLITE_STATS, LLITE_STATS_START, fs);
	}
	if (fs->nosc > 0)
	    buckets(d, fs);
    }
    for (i = 0; i < lc.nosc; i++) {
	struct lc_osc *osc = lc.osc[i];

	if (!osc->present)
	    continue;
	if ((d = device(r, LC_JK_OSC, OSC_INDOM, osc->name, osc->d.name, osc->fs, fsidx)) == NULL)
	    goto fail;
	values(d, LC_JK_OSC, osc);
	start(d, 0, CL_OSC_STATS, OSTATS_START, osc);
	start(d, 1, CL_OSC_RPCHDR, RPCHDR_START, osc);
    }
    for (i = 0; i < lc.nmdc; i++) {
	struct lc_mdc *mdc = lc.mdc[i];

	if (!mdc->present)
	    continue;
	if ((d = device(r, LC_JK_MDC, MDC_INDOM, mdc->name, mdc->d.name, mdc->fs, fsidx)) == NULL)
	    goto fail;
	values(d, LC_JK_MDC, mdc);
    }
    free(fsidx);
    lc_jobrec_done(r);
    return 0;
fail:
    free(fsidx);
    lc_jobrec_clear(r);
    return -1;
}

/* slot s's timeline and the block it was served in, freed */
static void
series_clear(int s)
{
    lc_series_free(&series[s]);
    free(served[s]);
    served[s] = NULL;
}

/* ---- the slots on disk ------------------------------------------------------ */

/* slot s written to its file as it is now; 0, or -1 (logged) */
static int
keep(int s)
{
    struct lc_persist_slot p;
    size_t		size;
    void		*buf;
    int			sts;

    if (!lc_jobstate_enabled() || !slots[s].used)
	return 0;
    memset(&p, 0, sizeof(p));
    p.slot = (unsigned)s;
    p.restarts = restarts[s];
    strcpy(p.id, slots[s].id);
    p.begin_time = slots[s].begin_time;
    p.rec = slots[s].rec;		/* borrowed, not freed here */
    p.series = series[s];
    size = lc_persist_size(&p);
    if ((buf = malloc(size)) == NULL) {
	pmNotifyErr(LOG_ERR, "job %s: out of memory keeping its slot on disk", slots[s].id);
	return -1;
    }
    lc_persist_encode(&p, buf);
    sts = lc_jobstate_write((unsigned)s, buf, size);
    free(buf);
    /* -Dappl3: the benchmark counts the slots kept and their bytes */
    if (pmDebugOptions.appl3)
	pmNotifyErr(LOG_DEBUG, "job %s: slot %d kept, %zu bytes", slots[s].id, s, size);
    return sts;
}

void
lc_jobs_checkpoint(void)
{
    for (int s = 0; s < LC_JOB_SLOTS; s++)
	if (slots[s].used)
	    keep(s);
}

/*
 * The running agent's instance id of a device kept by name: looked up, or
 * when the device is not there now, added as an inactive instance (so that
 * a left_out value of it has a name an instance request gives, as for a
 * device that went away while the agent ran).
 */
static int
inst_by_name(int serial, const char *name)
{
    int		inst;

    if (pmdaCacheLookupName(lc.indom[serial], name, &inst, NULL) >= 0)
	return inst;
    if ((inst = pmdaCacheStore(lc.indom[serial], PMDA_CACHE_ADD, name, NULL)) < 0)
	return -1;
    pmdaCacheStore(lc.indom[serial], PMDA_CACHE_HIDE, name, NULL);
    return inst;
}

/* the instance ids of a record read from a file, by the names it keeps */
static void
instances(struct lc_jobrec *r)
{
    static const int serial[LC_JK_N] = { FS_INDOM, OSC_INDOM, MDC_INDOM };
    char	name[LC_NAME_MAX + 32], size[32];

    for (unsigned kind = 0; kind < LC_JK_N; kind++)
	for (size_t i = 0; i < r->n[kind]; i++) {
	    struct lc_jobdev *d = &r->dev[kind][i];

	    if (d->name[0] != '\0')
		d->inst = inst_by_name(serial[kind], d->name);
	    if (kind != LC_JK_FS)
		continue;
	    for (unsigned b = 0; b < RPC_HIST_MAX; b++) {
		if (d->binst[b] < 0)
		    continue;
		lc_size_label(lc.pagesize << b, size, sizeof(size));
		pmsprintf(name, sizeof(name), "%s:%s", d->name, size);
		d->binst[b] = inst_by_name(FS_BUCKET_INDOM, name);
	    }
	}
    lc_jobrec_done(r);
}

/* the instance name of a device of a record, or NULL */
static const char *
name_in(const struct lc_jobrec *r, unsigned kind, int inst)
{
    for (size_t i = 0; i < r->n[kind]; i++)
	if (r->dev[kind][i].inst == inst)
	    return r->dev[kind][i].name;
    return NULL;
}

/* the instance name of a device left out of slot s, for the log: kept at begin, or there now */
static const char *
device_name(int s, unsigned kind, int inst)
{
    const char	*name = name_in(&slots[s].rec, kind, inst);

    if (name == NULL)
	name = name_in(&now, kind, inst);
    return name ? name : "?";
}

static const struct lc_jobres *outcome(int s);

/* the begin record's device of filesystem name, or NULL */
static struct lc_jobdev *
begin_fs(int s, const char *name)
{
    struct lc_jobrec	*r = &slots[s].rec;

    for (size_t i = 0; i < r->n[LC_JK_FS]; i++)
	if (strcmp(r->dev[LC_JK_FS][i].name, name) == 0)
	    return &r->dev[LC_JK_FS][i];
    return NULL;
}

/*
 * The sources of filesystem i of now whose counted deltas are below those
 * of slot s's timeline's last sample: a counter that went back while the
 * agent was down and grew past its begin value again, which the begin
 * values alone cannot show.  A bit per source (enum lc_jobsrc).
 */
static unsigned
below_timeline(int s, const struct lc_jobres *r, size_t i)
{
    const struct lc_series_fs	*fs = NULL;
    unsigned			nvfs = lc_job_kind_nval(LC_JK_FS), v = 0, found = 0;
    /* the timeline's own table: an older agent's kept fewer metrics */
    unsigned			nseries = lc_job_series_metrics_of(series[s].nvalues);

    for (size_t f = 0; f < series[s].nfs; f++)
	if (strcmp(series[s].fs[f].name, now.dev[LC_JK_FS][i].name) == 0)
	    fs = &series[s].fs[f];
    if (fs == NULL)
	return 0;
    for (unsigned j = 0; j < nseries; j++) {
	unsigned k = lc_job_series[j];

	for (unsigned b = 0; b < lc_job_nval(k); b++, v++) {
	    size_t at = i * nvfs + lc_job_off(k) + b;

	    if (r->counted[LC_JK_FS][at] && r->delta[LC_JK_FS][at] < fs->last[v])
		found |= 1u << lc_job_metrics[k].src;
	}
    }
    return found;
}

/*
 * A reset the timeline shows (below_timeline) leaves its source of that
 * filesystem out, CLEARED, as the begin values would had they shown it;
 * kept in the begin record (reset_seen), so in the slot's file too.
 * Returns whether there was one.
 */
static int
timeline_resets(int s)
{
    const struct lc_jobres	*r = outcome(s);
    struct lc_jobdev		*bd;
    unsigned			found;
    int				any = 0;

    if (r == NULL)
	return 0;
    for (size_t i = 0; i < now.n[LC_JK_FS]; i++) {
	if ((found = below_timeline(s, r, i)) == 0 || (bd = begin_fs(s, now.dev[LC_JK_FS][i].name)) == NULL)
	    continue;
	for (unsigned src = 0; src < LC_JOB_NSOURCES; src++)
	    if (found >> src & 1)
		pmNotifyErr(LOG_WARNING, "job %s: taken up again, its %s of %s is below its timeline's "
			    "last sample: reset while the agent was down", slots[s].id,
			    lc_job_sources[src].name, bd->name);
	bd->reset_seen |= found;
	any = 1;
    }
    return any;
}

/*
 * A slot taken up again, judged against the values now as a fetch would
 * judge it, its timeline's last sample too (timeline_resets): each device
 * left out said in the log, with why.
 */
static void
check_restored(int s)
{
    const struct lc_jobres	*r;

    if (timeline_resets(s))
	lc_jobs_changed();
    if ((r = outcome(s)) == NULL)
	return;
    for (size_t i = 0; i < r->nleft; i++) {
	const struct lc_jobleft *l = &r->left[i];

	pmNotifyErr(LOG_WARNING, "job %s: taken up again, its %s of %s left out: %s", slots[s].id,
		    lc_job_sources[l->src].name, device_name(s, lc_job_sources[l->src].kind, l->inst),
		    lc_job_reasons[l->reason].name);
    }
}

/*
 * Slot file s read into *p: 1, or 0 (none, or refused: logged, removed).
 * loaded: the slots read before it, so that a job is taken up once.
 */
static int
load(unsigned s, struct lc_persist_slot *p, const struct lc_persist_slot *loaded, const int *ok)
{
    const char	*why = NULL;
    size_t	len = 0;
    void	*buf = lc_jobstate_read(s, &len);
    int		sts;

    if (buf == NULL)
	return 0;
    sts = lc_persist_decode(buf, len, p, &why);
    free(buf);
    if (sts == 0 && p->slot != s)
	why = "of another slot";
    for (unsigned t = 0; sts == 0 && why == NULL && t < s; t++)
	if (ok[t] && strcmp(loaded[t].id, p->id) == 0)
	    why = "a job another slot holds";
    if (sts == 0 && why != NULL) {
	lc_persist_free(p);
	sts = -1;
    }
    if (sts < 0) {
	lc_jobstate_refuse(s, why);
	return 0;
    }
    return 1;
}

/* slot s holds the job read from its file (p's record and series moved into it) */
static void
take_up(unsigned s, struct lc_persist_slot *p)
{
    instances(&p->rec);
    lc_jobrec_move(&slots[s].rec, &p->rec);
    slots[s].used = 1;
    strcpy(slots[s].id, p->id);
    slots[s].begin_time = p->begin_time;
    series_clear((int)s);
    series[s] = p->series;
    restarts[s] = p->restarts + 1;
    pmNotifyErr(LOG_INFO, "job %s: taken up again in slot %u from %s (begun %.3f, restart %u)",
		p->id, s, lc_jobstate_dir(), p->begin_time, restarts[s]);
    if (p->series.nvalues != lc_job_series_nval())
	pmNotifyErr(LOG_INFO, "job %s: its timeline keeps the %u series metrics of the agent that "
		    "began it (this one has %u): the others are not in it", p->id,
		    lc_job_series_metrics_of(p->series.nvalues), LC_JOB_NSERIES);
}

/*
 * The slots' files, each into its slot; the devices are listed and read
 * (as for a job_begin) only when there is one, to find their instance ids
 * and judge them.
 */
void
lc_jobs_restore(void)
{
    struct lc_persist_slot loaded[LC_JOB_SLOTS];
    int			ok[LC_JOB_SLOTS] = { 0 }, any = 0;

    if (!lc_jobstate_enabled())
	return;
    for (unsigned s = 0; s < LC_JOB_SLOTS; s++)
	any |= ok[s] = load(s, &loaded[s], loaded, ok);
    if (!any)
	return;
    lc_refresh_job_files();
    for (unsigned s = 0; s < LC_JOB_SLOTS; s++)
	if (ok[s])
	    take_up(s, &loaded[s]);
    indom_update();
    lc_jobs_changed();
    for (int s = 0; s < LC_JOB_SLOTS; s++)
	if (ok[s]) {
	    check_restored(s);
	    keep(s);	/* the restart counted */
	}
}

/*
 * job_begin of id, after the refresh of every job file (pmda.c): the
 * values now become the slot's begin values.
 */
int
lc_jobs_begin(const char *id)
{
    struct lc_jobrec	r;
    struct timeval	tv;
    char		evicted[LC_JOB_ID_MAX + 1];
    int			s;

    memset(&r, 0, sizeof(r));
    if (build(&r) < 0) {
	pmNotifyErr(LOG_ERR, "job %s: out of memory taking its begin values", id);
	return -ENOMEM;
    }
    gettimeofday(&tv, NULL);
    s = lc_job_begin(slots, id, tv.tv_sec + tv.tv_usec / 1e6, &r, evicted);
    /* a job's timeline starts with its begin values: the deltas are all 0 then */
    series_clear(s);
    lc_series_init(&series[s], lc_job_series_nval(), interval_ms);
    restarts[s] = 0;
    /* not kept: no file of the slot may stay, not even the evicted job's, or a restart
     * would take that job up in this one's place */
    if (keep(s) < 0)
	lc_jobstate_remove((unsigned)s);
    if (evicted[0])
	pmNotifyErr(LOG_INFO, "job %s: no free slot, evicting job %s (the oldest, slot %d)",
		    id, evicted, s);
    strcpy(last_begun, id);
    indom_update();
    lc_jobs_changed();
    return 0;
}

void
lc_jobs_end(const char *id)
{
    int		s = lc_job_end(slots, id);

    if (s >= 0) {
	lc_jobstate_remove((unsigned)s);
	restarts[s] = 0;
	series_clear(s);
	lc_jobres_free(&res[s]);
	res_gen[s] = 0;
	indom_update();
	lc_jobs_changed();
    }
    strcpy(last_ended, id);
}

int
lc_jobs_slot_used(int slot)
{
    return slot >= 0 && slot < LC_JOB_SLOTS && slots[slot].used;
}

static const struct lc_jobres *
outcome(int s)
{
    if (!slots[s].used)
	return NULL;
    if (now_gen != gen) {
	lc_jobrec_clear(&now);
	if (build(&now) < 0)
	    return NULL;
	now_gen = gen;
    }
    if (res_gen[s] != gen) {
	res_ok[s] = lc_job_diff(&slots[s].rec, &now, &res[s]) == 0;
	res_gen[s] = gen;
	if (!res_ok[s])
	    pmNotifyErr(LOG_ERR, "job %s: out of memory computing its deltas", slots[s].id);
    }
    return res_ok[s] ? &res[s] : NULL;
}

/* ---- the timeline ---------------------------------------------------------- */

void
lc_jobs_set_interval(uint32_t ms)
{
    interval_ms = ms ? ms : 1;
}

uint32_t
lc_jobs_interval(void)
{
    return interval_ms;
}

int
lc_jobs_in_use(void)
{
    for (int s = 0; s < LC_JOB_SLOTS; s++)
	if (slots[s].used)
	    return 1;
    return 0;
}

/*
 * slot s's sample at t: the deltas it serves now, per filesystem, into its
 * series (the first of each filesystem's values, for a series of an older
 * agent's table: lc_series_sample takes the series' nvalues)
 */
static void
sample_slot(int s, uint64_t t_ms)
{
    const struct lc_jobres *r = outcome(s);
    struct lc_series_in	*in;
    uint64_t		*cum;
    unsigned		nv = lc_job_series_nval();
    size_t		i, n = now.n[LC_JK_FS];

    if (r == NULL)
	return;		/* out of memory: said by outcome(); the next sample covers this one */
    in = calloc(n ? n : 1, sizeof(*in));
    cum = calloc(n ? n * nv : 1, sizeof(*cum));
    if (in == NULL || cum == NULL) {
	pmNotifyErr(LOG_ERR, "job %s: out of memory taking a sample of its timeline", slots[s].id);
    } else {
	for (i = 0; i < n; i++) {
	    in[i].name = now.dev[LC_JK_FS][i].name;
	    in[i].cum = cum + i * nv;
	    lc_job_series_values(&now, r, i, cum + i * nv);
	}
	if (lc_series_sample(&series[s], t_ms, in, n) < 0)
	    pmNotifyErr(LOG_ERR, "job %s: out of memory keeping its timeline", slots[s].id);
    }
    free(in);
    free(cum);
}

void
lc_jobs_sample(uint64_t t_ms)
{
    for (int s = 0; s < LC_JOB_SLOTS; s++)
	if (slots[s].used)
	    sample_slot(s, t_ms);
}

uint64_t
lc_jobs_clock_ms(void)
{
    struct timespec	ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/*
 * The series a fetch gives takes a sample of its own, from the values of
 * that fetch: so it sums to the deltas the same fetch serves, to the last
 * byte, however long ago the last timed sample was.  It is packed into a
 * block of its own, freed once the result is sent (lc_jobs_series_sent):
 * not the fetch arena, whose chunks are never given back (a series fetched
 * as it grows would leave a chunk a size), and not kept between fetches,
 * so that between them a job costs the agent its series store alone.
 */
int
lc_jobs_series(unsigned slot, pmValueBlock **block)
{
    const uint32_t	*pmids, *nvals;
    unsigned		nmetrics;
    size_t		size;

    *block = NULL;
    if (slot >= LC_JOB_SLOTS || !slots[slot].used)
	return 0;
    sample_slot((int)slot, lc_jobs_clock_ms());
    nmetrics = lc_job_series_metrics_of(series[slot].nvalues);	/* an older agent's table: fewer */
    size = PM_VAL_HDR_SIZE + lc_series_packed_size(&series[slot], nmetrics);
    if (size >= 1u << 24)
	return PM_ERR_TOOBIG;	/* a value block's length has 24 bits */
    free(served[slot]);		/* a fetch through pmdaFetch (-F) frees it here, at the next */
    if ((served[slot] = malloc(size)) == NULL)
	return -ENOMEM;
    lc_jobs_series_metrics(&pmids, &nvals);
    served[slot]->vtype = PM_TYPE_AGGREGATE;
    served[slot]->vlen = (unsigned)size;
    lc_series_pack(&series[slot], pmids, nvals, nmetrics, served[slot]->vbuf);
    *block = served[slot];
    return 1;
}

void
lc_jobs_series_sent(void)
{
    for (int s = 0; s < LC_JOB_SLOTS; s++) {
	free(served[s]);
	served[s] = NULL;
    }
}

void
lc_jobs_series_metrics(const uint32_t **pmids, const uint32_t **nvals)
{
    static uint32_t	ids[LC_JOB_NSERIES], nv[LC_JOB_NSERIES];

    if (ids[0] == 0) {
	for (unsigned j = 0; j < LC_JOB_NSERIES; j++) {
	    const struct lc_jobmetric *m = &lc_job_metrics[lc_job_series[j]];

	    ids[j] = pmID_build(LUSTRECLIENT, m->cluster, m->item);
	    nv[j] = lc_job_nval(lc_job_series[j]);
	}
    }
    *pmids = ids;
    *nvals = nv;
}

/* an upper bound of the number of values of job metric (cluster, item) */
size_t
lc_jobs_nvalues(unsigned cluster, unsigned item)
{
    const struct lc_jobres *r;
    int		s;

    if (cluster == CL_JOB)
	return item == JOB_BEGIN_TIME || item == JOB_RESTARTS ? LC_JOB_SLOTS : 1;
    s = (int)cluster - CL_JOB_SLOT0;
    if (s < 0 || s >= LC_JOB_SLOTS)
	return 0;
    if (lc_job_item(item) == LC_JI_JOB_ID)
	return 1;
    if ((r = outcome(s)) == NULL)
	return 0;
    return lc_job_answer_max(&now, r, item);
}

/* a slot's values (lc_job_answer) as the atoms of their metric's type */
struct answer_arg {
    lc_jobs_fn	fn;
    void	*arg;
    int		left_out;	/* u32 reasons, else u64 deltas */
};

static int
answer_cb(void *arg, int inst, uint64_t value)
{
    struct answer_arg *a = arg;
    pmAtomValue	atom;

    if (a->left_out)
	atom.ul = (uint32_t)value;
    else
	atom.ull = value;
    return a->fn(a->arg, inst, &atom) < 0 ? -ENOMEM : 0;
}

/*
 * Every value of job metric (cluster, item), to fn(arg, inst, atom);
 * PM_ERR_PMID for an item that is not one.  Zero deltas are not given.
 * A slot's job_id is its job's id, from memory: no file is read for it, and
 * in one fetch it is of the job the slot's deltas are of (the agent serves
 * one request at a time: no store comes between).
 */
int
lc_jobs_values(unsigned cluster, unsigned item, lc_jobs_fn fn, void *arg)
{
    const struct lc_jobres *r;
    unsigned	what = lc_job_item(item);
    struct answer_arg a = { fn, arg, what == LC_JI_LEFT_OUT };
    pmAtomValue	atom;
    const char	*id;
    int		s;

    if (cluster == CL_JOB) {
	switch (item) {
	case JOB_CTL_BEGIN:
	    atom.cp = last_begun;
	    return fn(arg, PM_IN_NULL, &atom);
	case JOB_CTL_END:
	    atom.cp = last_ended;
	    return fn(arg, PM_IN_NULL, &atom);
	case JOB_NSLOTS:
	    atom.ul = LC_JOB_SLOTS;
	    return fn(arg, PM_IN_NULL, &atom);
	case JOB_BEGIN_TIME:
	    for (s = 0; s < LC_JOB_SLOTS; s++) {
		if (!slots[s].used)
		    continue;
		atom.d = slots[s].begin_time;
		if (fn(arg, s, &atom) < 0)
		    return -ENOMEM;
	    }
	    return 0;
	case JOB_RESTARTS:
	    for (s = 0; s < LC_JOB_SLOTS; s++) {
		if (!slots[s].used)
		    continue;
		atom.ul = restarts[s];
		if (fn(arg, s, &atom) < 0)
		    return -ENOMEM;
	    }
	    return 0;
	}
	return PM_ERR_PMID;
    }
    s = (int)cluster - CL_JOB_SLOT0;
    if (s < 0 || s >= LC_JOB_SLOTS || what == LC_JI_NONE)
	return PM_ERR_PMID;
    if (what == LC_JI_JOB_ID) {
	if ((id = lc_job_slot_id(&slots[s])) == NULL)
	    return 0;	/* a slot not in use: no value */
	atom.cp = (char *)id;
	return fn(arg, PM_IN_NULL, &atom) < 0 ? -ENOMEM : 0;
    }
    if ((r = outcome(s)) == NULL)
	return 0;	/* a slot not in use: no values */
    return lc_job_answer(&now, r, item, answer_cb, &a);
}

struct one_arg {
    int		inst;
    int		found;
    pmAtomValue	*atom;
};

static int
one_cb(void *arg, int inst, pmAtomValue *atom)
{
    struct one_arg *a = arg;

    if (inst == a->inst && !a->found) {
	*a->atom = *atom;
	a->found = 1;
    }
    return 0;
}

/* the value of one instance (pmdaFetch() callback, -F): 1, 0 none, or < 0 */
int
lc_jobs_value(unsigned cluster, unsigned item, int inst, pmAtomValue *atom)
{
    struct one_arg a = { inst, 0, atom };
    int		sts = lc_jobs_values(cluster, item, one_cb, &a);

    return sts < 0 ? sts : a.found;
}
