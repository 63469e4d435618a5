/*
 * jobgen pmns|help|base|py: the job view's part of the PMNS and of the help
 * text, and the reporter's copy of the contract, made from the one job
 * metric table (lc_job_metrics, lc_job_sources, lc_job_reasons: jobdiff.c)
 * and the constants of jobs.h and lustreclient.h.
 * pmns and help hold this output between "BEGIN job view" and "END job
 * view" lines; "py" is the whole of reporter/lustre_jobreport/agentcontract.py.
 * "make jobview" rewrites them, tests/check-pmns.sh checks that they are
 * what this program prints.  "base" prints each job metric's base name and
 * PMID, for check-pmns.sh to compare with the PMNS.
 */
#include <stdio.h>
#include <string.h>
#include "lustreclient.h"
#include "../domain.h"
#include "answer.h"

#define MAXPATHS	(3 + LC_JOB_NMETRICS + LC_JOB_NSOURCES)
#define ANSWER_ITEM	(~0u)	/* the node of the slot's answer: PMID 220.CL_JOB_ANSWER.<slot> */
#define SERIES_ITEM	(~1u)	/* the node of the slot's timeline: PMID 220.CL_JOB_SERIES.<slot> */

struct node {
    char	path[128];	/* below lustreclient.job.slot<S>. */
    unsigned	item;
};
static struct node	nodes[MAXPATHS];
static int		nnodes;

static const char *indom_name[LC_JK_N] = { "FS", "OSC", "MDC" };

static void
paths(void)
{
    unsigned	k;

    nnodes = 0;
    /* first, so that pminfo -f of a slot names its job before its values */
    snprintf(nodes[nnodes].path, sizeof(nodes[nnodes].path), "job_id");
    nodes[nnodes++].item = LC_JOB_ID_ITEM;
    for (k = 0; k < LC_JOB_NMETRICS; k++) {
	snprintf(nodes[nnodes].path, sizeof(nodes[nnodes].path), "%s", lc_job_metrics[k].path);
	nodes[nnodes++].item = k;
    }
    for (k = 0; k < LC_JOB_NSOURCES; k++) {
	snprintf(nodes[nnodes].path, sizeof(nodes[nnodes].path), "left_out.%s", lc_job_sources[k].name);
	nodes[nnodes++].item = LC_JOB_LEFT_OUT_ITEM + k;
    }
    snprintf(nodes[nnodes].path, sizeof(nodes[nnodes].path), "answer");
    nodes[nnodes++].item = ANSWER_ITEM;
    snprintf(nodes[nnodes].path, sizeof(nodes[nnodes].path), "series");
    nodes[nnodes++].item = SERIES_ITEM;
}

/* the PMNS block of prefix (below the slot) and, recursively, its children's */
static void
subtree(int slot, const char *prefix)
{
    char	seen[MAXPATHS][128], kids[MAXPATHS][300];
    int		nseen = 0, nkids = 0, i, j;
    size_t	plen = strlen(prefix);

    printf("lustreclient.job.slot%d%s%s {\n", slot, plen ? "." : "", prefix);
    for (i = 0; i < nnodes; i++) {
	const char *p = nodes[i].path, *rest, *dot;
	char	comp[128];

	if (plen && (strncmp(p, prefix, plen) != 0 || p[plen] != '.'))
	    continue;
	rest = plen ? p + plen + 1 : p;
	dot = strchr(rest, '.');
	snprintf(comp, sizeof(comp), "%.*s", dot ? (int)(dot - rest) : (int)strlen(rest), rest);
	if (dot == NULL) {
	    if (nodes[i].item == ANSWER_ITEM)
		printf("    %s\t\tLUSTRECLIENT:%d:%d\n", comp, CL_JOB_ANSWER, slot);
	    else if (nodes[i].item == SERIES_ITEM)
		printf("    %s\t\tLUSTRECLIENT:%d:%d\n", comp, CL_JOB_SERIES, slot);
	    else
		printf("    %s\t\tLUSTRECLIENT:%d:%u\n", comp, CL_JOB_SLOT0 + slot, nodes[i].item);
	    continue;
	}
	for (j = 0; j < nseen; j++)
	    if (strcmp(seen[j], comp) == 0)
		break;
	if (j < nseen)
	    continue;
	strcpy(seen[nseen++], comp);
	printf("    %s\n", comp);
	snprintf(kids[nkids++], sizeof(kids[0]), "%s%s%s", prefix, plen ? "." : "", comp);
    }
    printf("}\n\n");
    for (i = 0; i < nkids; i++)
	subtree(slot, kids[i]);
}

static void
pmns(void)
{
    int		s;

    printf("lustreclient.control {\n"
	   "    job_begin\t\tLUSTRECLIENT:%d:%d\n"
	   "    job_end\t\tLUSTRECLIENT:%d:%d\n"
	   "}\n\n", CL_JOB, JOB_CTL_BEGIN, CL_JOB, JOB_CTL_END);
    printf("lustreclient.job {\n"
	   "    begin_time\t\tLUSTRECLIENT:%d:%d\n"
	   "    slots\t\tLUSTRECLIENT:%d:%d\n"
	   "    restarts\t\tLUSTRECLIENT:%d:%d\n", CL_JOB, JOB_BEGIN_TIME, CL_JOB, JOB_NSLOTS,
	   CL_JOB, JOB_RESTARTS);
    for (s = 0; s < LC_JOB_SLOTS; s++)
	printf("    slot%d\n", s);
    printf("}\n\n");
    for (s = 0; s < LC_JOB_SLOTS; s++)
	subtree(s, "");
}

static void
help(void)
{
    static const char *reasons =
	"Reason codes: 1 CLEARED (a counter went back, or the file's start time\n"
	"moved by over 1 ms), 2 REPLACED (the device directory changed), 3\n"
	"REMOUNTED (its filesystem was unmounted or remounted), 4\n"
	"NOT_READ_AT_BEGIN (listed at begin, not (all) read then), 5\n"
	"NOT_READ_AT_END (read at begin, not (all) now; or a new device's\n"
	"required file not read now), 6 GONE (no longer listed: read at begin, or\n"
	"required), 7 NOT_READ (listed at both ends, required, read at neither).\n"
	"Required: llite stats, osc rpc_stats and stats.  The fs histogram is 6\n"
	"or 2 also when one of its OSCs is gone or replaced.  One code per device\n"
	"and source: the first of 3 6 2 1 4 5 7 that applies.\n";
    int		s;
    unsigned	k;

    for (s = 0; s < LC_JOB_SLOTS; s++) {
	printf("@ lustreclient.job.slot%d.job_id the id of the job whose values slot %d serves\n", s, s);
	printf("The job id stored into lustreclient.control.job_begin whose begin\n"
	       "values slot %d keeps: the job that the slot's deltas and left_out values\n"
	       "of the same fetch are of.  No value while the slot is not in use.\n"
	       "A job's slot is found by its id (the instance of lustreclient.job.begin_time\n"
	       "named by it), but between that lookup and a fetch the slot can change\n"
	       "hands: a newer job's job_begin takes the slot of the oldest job when all\n"
	       "%d are in use, job_end frees it, an agent restart that keeps no state\n"
	       "(option -S) forgets it.  So a\n"
	       "reader fetches this metric with the slot's deltas and takes them as the\n"
	       "job's only when it names the job.  Read from memory: no file is read.\n\n",
	       s, LC_JOB_SLOTS);
	printf("@ lustreclient.job.slot%d.answer everything a job's epilog reads of slot %d, in one value\n", s, s);
	printf("Every value the job reporter reads of this host at the end of the\n"
	       "job in slot %d, in one aggregate value: the slot's job_id, the job end\n"
	       "metrics (version, osc.device, osc.state, the OSC and read-ahead\n"
	       "settings ...), job.begin_time, the slot's deltas and left_out values,\n"
	       "job.restarts,\n"
	       "and the instances of the FS, OSC, MDC and bucket domains they use.\n"
	       "Only the job_id while the slot is not in use.  Layout: docs/design.md\n"
	       "section 2.4.  The slot's other metrics give the same numbers one\n"
	       "metric at a time (pmval, pmrep).\n\n", s);
	printf("@ lustreclient.job.slot%d.series the timeline of the job in slot %d, in one value\n", s, s);
	printf("When the job in slot %d did its I/O: per filesystem, the series metrics'\n"
	       "deltas (bytes and calls each way, the metadata operations, the RPC size\n"
	       "histograms, the calls' latency sums where the client has them, 2.14+)\n"
	       "over time, in points of aligned time bins: the agent samples\n"
	       "every interval (option -T, default 10 s) while a slot holds a job, and\n"
	       "a point is the growth of the slot's deltas since the sample before, signed\n"
	       "(a device left out mid-job takes its counts back as a negative point).\n"
	       "The fetch of this metric takes a sample too, so its points sum to the\n"
	       "slot's deltas of the same fetch.  At most %d points: when full, adjacent\n"
	       "bins merge and the bin width doubles.  Layout: docs/design.md section\n"
	       "2.5.  No value while the slot is not in use.\n\n", s, LC_SERIES_POINTS);
	for (k = 0; k < LC_JOB_NMETRICS; k++) {
	    const struct lc_jobmetric *m = &lc_job_metrics[k];
	    const struct lc_jobsource *src = &lc_job_sources[m->src];

	    printf("@ lustreclient.job.slot%d.%s job delta of lustreclient.%s\n", s, m->path, m->path);
	    printf("How much lustreclient.%s grew since the job in slot %d began\n"
		   "(its id stored into lustreclient.control.job_begin; the instance %d\n"
		   "of lustreclient.job.begin_time is named by it), per instance of that\n"
		   "metric, reset-aware: what the job reporter's diff of a snapshot taken at\n"
		   "the begin and one taken at this fetch gives.  %s\n"
		   "file (%s) are left out, which\n"
		   "lustreclient.job.slot%d.left_out.%s then says, with why.\n"
		   "A device that appeared during the job counts from zero.  No values\n"
		   "while the slot is not in use.\n\n",
		   m->path, s, s,
		   lc_job_kind(k) == LC_JK_FS
		   ? "Every value counted is sent,\nzeros too: an instance without a value was not given at both ends (a\ncounter this Lustre does not have), or its device's values of this"
		   : "Zero deltas are not sent:\nan instance without a value grew by 0, or its device's values of this",
		   src->what, s, src->name);
	}
	for (k = 0; k < LC_JOB_NSOURCES; k++) {
	    const struct lc_jobsource *src = &lc_job_sources[k];

	    printf("@ lustreclient.job.slot%d.left_out.%s %s devices left out of the deltas of slot %d\n",
		   s, src->name, indom_name[src->kind], s);
	    printf("One value per %s instance whose %s\n"
		   "values are left out of the deltas of the job in slot %d (their\n"
		   "lustreclient.job.slot%d.* metrics have no value for it), saying why;\n"
		   "an instance not listed here is counted.\n",
		   indom_name[src->kind], src->what, s, s);
	    fputs(reasons, stdout);
	    printf("\n");
	}
    }
}

/* NAME = value, and a comment in the column after it */
static void
constant(const char *name, int value, const char *comment)
{
    char	assign[64];

    snprintf(assign, sizeof(assign), "%s = %d", name, value);
    printf("%-28s# %s\n", assign, comment);
}

/* NAME = an aggregate's magic, and the four characters it is on the wire */
static void
magic(const char *name, uint32_t value)
{
    printf("%s = 0x%08x     # its first word: \"%c%c%c%c\"\n", name, value,
	   (char)(value & 0xff), (char)(value >> 8 & 0xff), (char)(value >> 16 & 0xff),
	   (char)(value >> 24));
}

/* reporter/lustre_jobreport/agentcontract.py: plain literals, for catalog.py to build on */
static void
python(void)
{
    unsigned	k, r;

    printf("\"\"\"The job view's contract with the agent, as pmdalustreclient declares it.\n\n"
	   "Generated by jobgen (pmda-lustre/src/jobgen.c) from the job metric, source and reason\n"
	   "tables of pmda-lustre/src/jobdiff.c and the constants of jobs.h: do not edit.\n"
	   "`make -C pmda-lustre jobview` rewrites it; `make -C pmda-lustre test` (tests/jobview.sh\n"
	   "check) fails when it is not what jobgen makes.  catalog.py builds the job view's names from\n"
	   "it.  Items and codes are never moved or reused.\n"
	   "\"\"\"\n\n");
    constant("DOMAIN", LUSTRECLIENT, "pmdalustreclient's PMDA domain");
    constant("JOB_INDOM_SERIAL", JOB_INDOM, "the job slots in use, named by their job ids");
    constant("JOB_SLOTS", LC_JOB_SLOTS, "slots 0 .. JOB_SLOTS-1");
    constant("JOB_CLUSTER", CL_JOB, "control.job_begin/job_end, job.begin_time, job.slots, job.restarts");
    constant("JOB_RESTARTS_ITEM", JOB_RESTARTS, "job.restarts: how often an agent took the job up again");
    constant("JOB_SLOT_CLUSTER0", CL_JOB_SLOT0, "slot S: cluster JOB_SLOT_CLUSTER0 + S");
    printf("\n# item k of a slot's cluster: the deltas of lustreclient.<name>, whose values the\n"
	   "# left_out source <source> leaves out: (name, source)\n"
	   "JOB_METRICS = (\n");
    for (k = 0; k < LC_JOB_NMETRICS; k++)
	printf("    (\"%s\", \"%s\"),\n", lc_job_metrics[k].path, lc_job_sources[lc_job_metrics[k].src].name);
    printf(")\n");
    constant("JOB_LEFT_OUT_ITEM0", LC_JOB_LEFT_OUT_ITEM, "item JOB_LEFT_OUT_ITEM0 + j: left_out.<JOB_SOURCES[j]>");
    printf("JOB_SOURCES = (\n");
    for (k = 0; k < LC_JOB_NSOURCES; k++)
	printf("    \"%s\",\n", lc_job_sources[k].name);
    printf(")\n");
    constant("JOB_ID_ITEM", LC_JOB_ID_ITEM, "job_id: the job whose values the slot serves");
    constant("JOB_ANSWER_CLUSTER", CL_JOB_ANSWER, "item S: slot S's answer, one aggregate");
    magic("JOB_ANSWER_MAGIC", LC_ANSWER_MAGIC);
    constant("JOB_SERIES_CLUSTER", CL_JOB_SERIES, "item S: slot S's timeline, one aggregate");
    magic("JOB_SERIES_MAGIC", LC_SERIES_MAGIC);
    constant("JOB_SERIES_POINTS", LC_SERIES_POINTS, "a timeline's most points");
    printf("# the series table: the job metrics a timeline keeps per filesystem, in a point's order\n"
	   "JOB_SERIES = (\n");
    for (k = 0; k < LC_JOB_NSERIES; k++)
	printf("    \"%s\",\n", lc_job_metrics[lc_job_series[k]].path);
    printf(")\n");
    printf("# the PMIDs a timeline's metric table names them by: their base metrics', (name, cluster, item)\n"
	   "JOB_SERIES_PMIDS = (\n");
    for (k = 0; k < LC_JOB_NSERIES; k++) {
	const struct lc_jobmetric *m = &lc_job_metrics[lc_job_series[k]];

	printf("    (\"%s\", %u, %u),\n", m->path, m->cluster, m->item);
    }
    printf(")\n");
    printf("\n# what a slot's answer holds beside the slot's own metrics, job.begin_time and job.restarts: the\n"
	   "# job end metrics, (name, cluster, item)\n"
	   "JOB_END_METRICS = (\n");
    for (k = 0; k < LC_JOB_NEND; k++)
	printf("    (\"%s\", %u, %u),\n", lc_job_end_metrics[k].path, lc_job_end_metrics[k].cluster,
	       lc_job_end_metrics[k].item);
    printf(")\n");
    printf("\n# why a source of a device is left out (left_out.* values; 0: counted): (name, code)\n"
	   "REASONS = (\n");
    for (r = 0; r < LC_JR_N; r++) {
	char	row[64];

	snprintf(row, sizeof(row), "    (\"%s\", %u),", lc_job_reasons[r].name, r);
	if (lc_job_reasons[r].what[0] != '\0')
	    printf("%-32s# %s\n", row, lc_job_reasons[r].what);
	else
	    printf("%s\n", row);
    }
    printf(")\n");
}

int
main(int argc, char **argv)
{
    unsigned	k;

    paths();
    if (argc == 2 && strcmp(argv[1], "pmns") == 0) {
	pmns();
    } else if (argc == 2 && strcmp(argv[1], "help") == 0) {
	help();
    } else if (argc == 2 && strcmp(argv[1], "base") == 0) {
	for (k = 0; k < LC_JOB_NMETRICS; k++)
	    printf("%u lustreclient.%s %d.%u.%u\n", k, lc_job_metrics[k].path, LUSTRECLIENT,
		   lc_job_metrics[k].cluster, lc_job_metrics[k].item);
	for (k = 0; k < LC_JOB_NEND; k++)
	    printf("end lustreclient.%s %d.%u.%u\n", lc_job_end_metrics[k].path, LUSTRECLIENT,
		   lc_job_end_metrics[k].cluster, lc_job_end_metrics[k].item);
    } else if (argc == 2 && strcmp(argv[1], "py") == 0) {
	python();
    } else {
	fprintf(stderr, "usage: jobgen pmns|help|base|py\n");
	return 2;
    }
    return 0;
}
