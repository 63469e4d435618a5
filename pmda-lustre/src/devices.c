/*
 * Device discovery and the instance domains.
 *
 * Every instance is backed by a struct that lives for the life of the
 * agent (a name that goes away is usually back after a remount or
 * reconnect, and the set of names is bounded by the site's OSTs), so the
 * pmdaCache private pointers never dangle.  Instances whose directory is
 * gone are marked inactive; pmdaCacheLookupName() doubles as the hash map
 * from name to struct.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lustreclient.h"
#include "paths.h"

struct cand {
    char		dev[LC_NAME_MAX];
    struct lc_devname	dn;
};

struct candlist {
    enum lc_devkind	kind;
    struct cand		*c;
    size_t		n, cap;
};

/*
 * Per device type: the raw listing of the last scan (paths.c), and the
 * candidates parsed from it.  A fetch scans only the types its metrics
 * need, and when a listing is byte for byte the one of last time (the
 * usual case: devices come and go with mounts and OSTs), nothing else is
 * done, which saves parsing every name and touching every instance of a
 * client with thousands of OSCs.
 */
struct typestate {
    const char		*type;
    struct lc_scan	now, last;
    int			scanned;
    struct candlist	cands;
    /* the directories as they looked when last listed, and when that was */
    struct lc_dirsig	sig[LC_NBASES];
    struct timespec	listed_at;
};
static struct typestate	types[3] = {
    { .type = "llite", .cands = { LC_DEV_LLITE, NULL, 0, 0 } },
    { .type = "osc", .cands = { LC_DEV_OSC, NULL, 0, 0 } },
    { .type = "mdc", .cands = { LC_DEV_MDC, NULL, 0, 0 } },
};

/*
 * Directory timestamps come from a coarse clock (a jiffy or so): one that
 * was changed just before the listing might change again in the same tick
 * without its mtime moving (git's "racy" index entries).  Such a
 * signature is not trusted until it is older than this.
 */
#define RACY_NS		100000000LL

static long long
ts_ns(struct timespec t)
{
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* the listing of last time still holds: the directories look the same */
static int
unchanged(const struct typestate *t, const struct lc_dirsig now[LC_NBASES])
{
    long long	settled = ts_ns(t->listed_at) - RACY_NS;
    int		b;

    if (!lc_dirsig_equal(now, t->sig))
	return 0;
    for (b = 0; b < LC_NBASES; b++)
	if (!now[b].err && (ts_ns(now[b].mtime) >= settled || ts_ns(now[b].ctime) >= settled))
	    return 0;
    return 1;
}

static void
collect(const char *name, void *arg)
{
    struct candlist	*cl = arg;
    struct lc_devname	dn;

    if (lc_devname_parse(cl->kind, name, &dn) < 0)
	return;		/* not a client device: e.g. "-osc-MDT0000" (OSP) */
    if (cl->n == cl->cap) {
	size_t	ncap = cl->cap ? cl->cap * 2 : 32;
	void	*p = realloc(cl->c, ncap * sizeof(*cl->c));

	if (p == NULL)
	    return;
	cl->c = p;
	cl->cap = ncap;
    }
    strcpy(cl->c[cl->n].dev, name);	/* < LC_NAME_MAX, checked by the parser */
    cl->c[cl->n].dn = dn;
    cl->n++;
}

static void *
grow(void *arr, size_t n, size_t elem)
{
    return realloc(arr, (n + 1) * elem);
}

static struct lc_fs *
fs_get(const char *name)
{
    struct lc_fs	*fs, **nf;
    size_t		i;

    /* few filesystems per client: a linear search is fine */
    for (i = 0; i < lc.nfs; i++)
	if (strcmp(lc.fs[i]->name, name) == 0)
	    return lc.fs[i];
    if ((fs = calloc(1, sizeof(*fs))) == NULL)
	return NULL;
    if ((nf = grow(lc.fs, lc.nfs, sizeof(*nf))) == NULL) {
	free(fs);
	return NULL;
    }
    lc.fs = nf;
    strcpy(fs->name, name);
    fs->maxidx = lc_bucket_default_maxidx(lc.pagesize);
    lc_dev_init(&fs->d, "llite");
    lc.fs[lc.nfs++] = fs;
    return fs;
}

static void *
cache_priv(pmInDom indom, const char *name)
{
    void	*priv = NULL;

    if (pmdaCacheLookupName(indom, name, NULL, &priv) < 0)
	return NULL;
    return priv;	/* NULL for entries loaded from a saved cache */
}

static struct lc_osc *
osc_get(const char *name)
{
    struct lc_osc	*osc, **no;

    if ((osc = cache_priv(lc.indom[OSC_INDOM], name)) != NULL)
	return osc;
    if ((osc = calloc(1, sizeof(*osc))) == NULL)
	return NULL;
    if ((no = grow(lc.osc, lc.nosc, sizeof(*no))) == NULL) {
	free(osc);
	return NULL;
    }
    lc.osc = no;
    strcpy(osc->name, name);
    osc->maxidx = lc_bucket_default_maxidx(lc.pagesize);
    lc_dev_init(&osc->d, "osc");
    lc.osc[lc.nosc++] = osc;
    /* registering it now makes later lookups by name find it */
    pmdaCacheStore(lc.indom[OSC_INDOM], PMDA_CACHE_ADD, name, osc);
    return osc;
}

static struct lc_mdc *
mdc_get(const char *name)
{
    struct lc_mdc	*mdc, **nm;

    if ((mdc = cache_priv(lc.indom[MDC_INDOM], name)) != NULL)
	return mdc;
    if ((mdc = calloc(1, sizeof(*mdc))) == NULL)
	return NULL;
    if ((nm = grow(lc.mdc, lc.nmdc, sizeof(*nm))) == NULL) {
	free(mdc);
	return NULL;
    }
    lc.mdc = nm;
    strcpy(mdc->name, name);
    lc_dev_init(&mdc->d, "mdc");
    lc.mdc[lc.nmdc++] = mdc;
    pmdaCacheStore(lc.indom[MDC_INDOM], PMDA_CACHE_ADD, name, mdc);
    return mdc;
}

/*
 * An fs mounted twice has two <sbi>s but instance names carry only the
 * fsname, so one mount is chosen: the llite one with the smallest <sbi>,
 * and for OSCs/MDCs the same <sbi> if they have it (they normally do:
 * both are the superblock pointer), else their smallest <sbi>.
 */
static struct lc_sbichoice *
sbi_choice(struct lc_fs *fs, enum lc_devkind kind)
{
    return kind == LC_DEV_OSC ? &fs->osc_sbi : &fs->mdc_sbi;
}

static const char *
chosen_sbi(const struct lc_fs *fs, const struct lc_sbichoice *ch)
{
    return (fs->has_llite && ch->match) ? fs->sbi : ch->min;
}

static void assign(struct candlist ll, struct candlist oc, struct candlist md);

/*
 * which: bits 0, 1, 2 = list llite, osc, mdc (DEV_* in lustreclient.h);
 * a type never listed yet is listed whatever which says.  A type is only
 * listed again when its directories changed (lc_scan_signature) or when
 * force is set.  Returns 1 if the devices changed.
 */
int
lc_devices_refresh(unsigned which, int force)
{
    struct candlist	*lists[3];
    struct lc_dirsig	sig[LC_NBASES];
    int			k, changed = 0;

    for (k = 0; k < 3; k++) {
	struct typestate *t = &types[k];

	lists[k] = &t->cands;
	if (t->scanned && !(which & (1u << k)))
	    continue;		/* not needed by this fetch: as last seen */
	/* the signature before the listing: a change in between shows next time */
	lc_scan_signature(t->type, sig);
	if (t->scanned && !force && unchanged(t, sig))
	    continue;
	clock_gettime(CLOCK_REALTIME, &t->listed_at);
	if (lc_scan_devices(t->type, &t->now) < 0) {
	    t->listed_at.tv_sec = 0;	/* out of memory: keep the last listing */
	    continue;
	}
	memcpy(t->sig, sig, sizeof(sig));
	/* -Dappl0: tests see when a type is listed (and why) */
	if (pmDebugOptions.appl0)
	    pmNotifyErr(LOG_DEBUG, "list %s%s", t->type, force ? " (a file read before is gone)" : "");
	if (t->scanned && t->now.n == t->last.n && memcmp(t->now.p, t->last.p, t->now.n) == 0)
	    continue;
	/* a change: parse this type's names again */
	t->cands.n = 0;
	lc_scan_names(t->type, &t->now, collect, &t->cands);
	{
	    struct lc_scan x = t->last;

	    t->last = t->now;
	    t->now = x;
	}
	t->scanned = 1;
	changed = 1;
    }
    if (changed)
	assign(*lists[0], *lists[1], *lists[2]);
    return changed;
}

/* every device as not there, before the candidates say which are */
static void
forget_devices(void)
{
    struct lc_fs	*fs;
    size_t		i;

    for (i = 0; i < lc.nfs; i++) {
	fs = lc.fs[i];
	fs->has_llite = 0;
	fs->nmounts = 0;
	fs->nosc = 0;
	memset(&fs->osc_sbi, 0, sizeof(fs->osc_sbi));
	memset(&fs->mdc_sbi, 0, sizeof(fs->mdc_sbi));
    }
    for (i = 0; i < lc.nosc; i++)
	lc.osc[i]->present = 0;
    for (i = 0; i < lc.nmdc; i++)
	lc.mdc[i]->present = 0;
}

/* each fs's mount: the llite directory with the smallest <sbi>; a second mount logged once */
static void
take_mounts(const struct candlist *ll)
{
    struct lc_fs	*fs;
    size_t		i;

    for (i = 0; i < ll->n; i++) {
	if ((fs = fs_get(ll->c[i].dn.fsname)) == NULL)
	    continue;
	fs->nmounts++;
	if (fs->has_llite && strcmp(ll->c[i].dn.sbi, fs->sbi) >= 0)
	    continue;
	fs->has_llite = 1;
	strcpy(fs->d.name, ll->c[i].dev);
	strcpy(fs->sbi, ll->c[i].dn.sbi);
    }
    for (i = 0; i < lc.nfs; i++) {
	fs = lc.fs[i];
	if (fs->nmounts > 1 && !fs->logged_mounts) {
	    pmNotifyErr(LOG_INFO, "%s is mounted %d times, reporting the mount %s only",
			fs->name, fs->nmounts, fs->sbi);
	    fs->logged_mounts = 1;
	} else if (fs->nmounts <= 1) {
	    fs->logged_mounts = 0;
	}
    }
}

/* the <sbi>s the OSCs (or MDCs) of cl carry, per fs (chosen_sbi picks from them) */
static void
note_sbis(const struct candlist *cl)
{
    struct lc_fs	*fs;
    struct lc_sbichoice	*ch;
    size_t		i;

    for (i = 0; i < cl->n; i++) {
	if ((fs = fs_get(cl->c[i].dn.fsname)) == NULL)
	    continue;
	ch = sbi_choice(fs, cl->kind);
	if (fs->has_llite && strcmp(cl->c[i].dn.sbi, fs->sbi) == 0)
	    ch->match = 1;
	if (ch->min[0] == '\0' || strcmp(cl->c[i].dn.sbi, ch->min) < 0)
	    strcpy(ch->min, cl->c[i].dn.sbi);
    }
}

static void
take_osc(struct lc_fs *fs, const struct cand *c)
{
    struct lc_osc	*osc;

    if ((osc = osc_get(c->dn.inst)) == NULL)
	return;
    osc->present = 1;
    osc->fs = fs;
    strcpy(osc->d.name, c->dev);
    fs->nosc++;
}

static void
take_mdc(struct lc_fs *fs, const struct cand *c)
{
    struct lc_mdc	*mdc;

    if ((mdc = mdc_get(c->dn.inst)) == NULL)
	return;
    mdc->present = 1;
    mdc->fs = fs;
    strcpy(mdc->d.name, c->dev);
}

/* take each OSC (or MDC) of cl that is of its fs's chosen mount */
static void
take_chosen(const struct candlist *cl, void (*take)(struct lc_fs *, const struct cand *))
{
    struct lc_fs	*fs;
    size_t		i;

    for (i = 0; i < cl->n; i++) {
	if ((fs = fs_get(cl->c[i].dn.fsname)) == NULL)
	    continue;
	if (strcmp(cl->c[i].dn.sbi, chosen_sbi(fs, sbi_choice(fs, cl->kind))) == 0)
	    take(fs, &cl->c[i]);
    }
}

/* the instance domains as the devices now are: everything inactive, then what is there active */
static void
publish(void)
{
    size_t	i;

    lc_indoms_changed();
    pmdaCacheOp(lc.indom[FS_INDOM], PMDA_CACHE_INACTIVE);
    pmdaCacheOp(lc.indom[OSC_INDOM], PMDA_CACHE_INACTIVE);
    pmdaCacheOp(lc.indom[MDC_INDOM], PMDA_CACHE_INACTIVE);
    for (i = 0; i < lc.nfs; i++)
	if (lc.fs[i]->has_llite)
	    pmdaCacheStore(lc.indom[FS_INDOM], PMDA_CACHE_ADD, lc.fs[i]->name, lc.fs[i]);
    for (i = 0; i < lc.nosc; i++)
	if (lc.osc[i]->present)
	    pmdaCacheStore(lc.indom[OSC_INDOM], PMDA_CACHE_ADD, lc.osc[i]->name, lc.osc[i]);
    for (i = 0; i < lc.nmdc; i++)
	if (lc.mdc[i]->present)
	    pmdaCacheStore(lc.indom[MDC_INDOM], PMDA_CACHE_ADD, lc.mdc[i]->name, lc.mdc[i]);
    lc_buckets_refresh();
}

/* the instance domains from the candidates of the three device types */
static void
assign(struct candlist ll, struct candlist oc, struct candlist md)
{
    forget_devices();
    take_mounts(&ll);
    note_sbis(&oc);
    note_sbis(&md);
    take_chosen(&oc, take_osc);
    take_chosen(&md, take_mdc);
    publish();
}

static void
bucket_add(int serial, const char *owner, int idx, struct lc_fs *fs,
	   struct lc_osc *osc)
{
    pmInDom		indom = lc.indom[serial];
    struct lc_bucket	*b;
    char		name[LC_NAME_MAX + 32], size[32];

    lc_size_label(lc.pagesize << idx, size, sizeof(size));
    pmsprintf(name, sizeof(name), "%s:%s", owner, size);
    if ((b = cache_priv(indom, name)) == NULL) {
	if ((b = calloc(1, sizeof(*b))) == NULL)
	    return;
	b->fs = fs;
	b->osc = osc;
	b->idx = idx;
    }
    pmdaCacheStore(indom, PMDA_CACHE_ADD, name, b);
}

/* highest bucket index whose size still fits in 64 bits of bytes */
static int
idx_limit(void)
{
    int		i = 0;

    while (i < RPC_HIST_MAX - 1 && (lc.pagesize << (i + 1)) >> (i + 1) == lc.pagesize)
	i++;
    return i;
}

/*
 * Buckets run from 1 page to 64 MiB (or the biggest label ever seen), so
 * the instance set does not shrink and grow with the histogram rows the
 * kernel happens to print.
 */
void
lc_buckets_refresh(void)
{
    struct lc_osc	*osc;
    size_t		i;
    int			idx, lim = idx_limit();

    lc_indoms_changed();
    pmdaCacheOp(lc.indom[FS_BUCKET_INDOM], PMDA_CACHE_INACTIVE);
    pmdaCacheOp(lc.indom[OSC_BUCKET_INDOM], PMDA_CACHE_INACTIVE);
    for (i = 0; i < lc.nosc; i++) {
	osc = lc.osc[i];
	if (!osc->present)
	    continue;
	if (osc->fs->maxidx < osc->maxidx)
	    osc->fs->maxidx = osc->maxidx;
	for (idx = 0; idx <= osc->maxidx && idx <= lim; idx++)
	    bucket_add(OSC_BUCKET_INDOM, osc->name, idx, NULL, osc);
    }
    for (i = 0; i < lc.nfs; i++) {
	if (lc.fs[i]->nosc == 0)
	    continue;
	for (idx = 0; idx <= lc.fs[i]->maxidx && idx <= lim; idx++)
	    bucket_add(FS_BUCKET_INDOM, lc.fs[i]->name, idx, lc.fs[i], NULL);
    }
}

void
lc_cache_save(void)
{
    static int	logged;
    int		i, sts;

    if (!lc.persist)
	return;
    for (i = 0; i < LC_NCACHED; i++) {
	if ((sts = pmdaCacheOp(lc.indom[i], PMDA_CACHE_SAVE)) < 0 && !logged) {
	    pmNotifyErr(LOG_WARNING, "cannot save instance cache %s: %s",
			pmInDomStr(lc.indom[i]), pmErrStr(sts));
	    logged = 1;
	}
    }
}
