/*
 * Parser for osc/mdc "import" (YAML-ish, 2.x) and "state" files:
 *	import:\n    name: ...\n    state: FULL\n ... connection_attempts: 3
 *	current_state: FULL\nstate_history:\n - [ 1510950459, CONNECTING ]
 * Of the import file: state, connection_attempts, and the rpcs: block's
 * inflight and timeouts.
 */
#ifndef LC_PARSE_IMPORT_H
#define LC_PARSE_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#define LC_STATE_MAX	32

struct import_info {
    int		have_state;
    char	state[LC_STATE_MAX];	/* FULL, DISCONN, EVICTED, ... */
    int		have_attempts;
    uint64_t	connection_attempts;	/* connection: connection_attempts */
    int		have_timeouts;
    uint64_t	timeouts;		/* rpcs: timeouts */
    int		have_inflight;
    uint64_t	inflight;		/* rpcs: inflight */
};

/* 0 if at least a state or a connection count was found, -1 otherwise. */
int import_parse(const char *buf, size_t len, struct import_info *out);

#endif /* LC_PARSE_IMPORT_H */
