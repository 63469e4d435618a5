/*
 * libFuzzer entry point for every parser (stats, rpc_stats, version,
 * import/state, device names).  Built two ways:
 *   make fuzz             clang -fsanitize=fuzzer,address,undefined: real fuzzing
 *   make test-fuzz-replay gcc + ASan/UBSan with replay.c as main(): runs the
 *                         corpus (the fixture trees and tests/fuzz/corpus) once
 * The first byte picks nothing: every input goes through every parser, so
 * one corpus serves them all.  Invariants the agent relies on abort.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "names.h"
#include "parse_import.h"
#include "parse_rpc_stats.h"
#include "parse_stats.h"
#include "parse_version.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct lstats st;
    struct rpc_stats	rs;
    struct import_info	ii;
    struct lc_devname	dn;
    char		ver[LC_VERSION_MAX], name[LC_NAME_MAX];
    const char		*buf = (const char *)data;
    size_t		i;

    if (lstats_parse(buf, size, &st) == -2)
	abort();
    for (i = 0; i < st.n; i++)
	if (st.c[i].name[0] == '\0' || strlen(st.c[i].name) >= LSTATS_NAME_MAX ||
	    (st.c[i].nvals != 0 && st.c[i].nvals != 3 && st.c[i].nvals != 4))
	    abort();
    rpc_stats_parse(buf, size, &rs);
    if (rs.ppr_maxidx < -1 || rs.ppr_maxidx >= RPC_HIST_MAX)
	abort();
    if (version_parse(buf, size, ver, sizeof(ver)) == 0 && ver[0] == '\0')
	abort();
    if (import_parse(buf, size, &ii) == 0 && !ii.have_state && !ii.have_attempts)
	abort();
    for (i = 0; i < size && i < sizeof(name) - 1 && buf[i] != '\0' && buf[i] != '\n'; i++)
	name[i] = buf[i];
    name[i] = '\0';
    if (lc_devname_parse(LC_DEV_OSC, name, &dn) == 0 && strchr(dn.inst, ':'))
	abort();
    lc_devname_parse(LC_DEV_LLITE, name, &dn);
    lc_devname_parse(LC_DEV_MDC, name, &dn);
    return 0;
}
