#include <string.h>
#include "parse_common.h"
#include "parse_import.h"

/* Import state names are upper-case words such as FULL or REPLAY_LOCKS. */
static int
take_state(struct lc_slice v, struct import_info *out)
{
    size_t	i;

    v = lc_trim(v);
    if (v.n == 0 || v.n >= LC_STATE_MAX)
	return -1;
    for (i = 0; i < v.n; i++) {
	char c = v.p[i];

	if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
	    return -1;
    }
    memcpy(out->state, v.p, v.n);
    out->state[v.n] = '\0';
    out->have_state = 1;
    return 0;
}

int
import_parse(const char *buf, size_t len, struct import_info *out)
{
    const char		*cur = buf, *end = buf + len, *colon;
    struct lc_slice	line, key, val;
    int			cur_state_seen = 0;

    memset(out, 0, sizeof(*out));
    if (buf == NULL)
	return -1;
    while (lc_next_line(&cur, end, &line)) {
	colon = memchr(line.p, ':', line.n);
	if (colon == NULL)
	    continue;
	key.p = line.p;
	key.n = (size_t)(colon - line.p);
	key = lc_trim(key);
	val.p = colon + 1;
	val.n = (size_t)(line.p + line.n - val.p);
	/* "current_state:" (state file) wins over "state:" (import file) */
	if (lc_slice_eq(key, "current_state")) {
	    if (take_state(val, out) == 0)
		cur_state_seen = 1;
	} else if (lc_slice_eq(key, "state") && !cur_state_seen && !out->have_state) {
	    take_state(val, out);
	} else if (lc_slice_eq(key, "connection_attempts") && !out->have_attempts) {
	    if (lc_parse_u64(lc_trim(val), &out->connection_attempts) == 0)
		out->have_attempts = 1;
	} else if (lc_slice_eq(key, "timeouts") && !out->have_timeouts) {
	    if (lc_parse_u64(lc_trim(val), &out->timeouts) == 0)
		out->have_timeouts = 1;
	} else if (lc_slice_eq(key, "inflight") && !out->have_inflight) {
	    if (lc_parse_u64(lc_trim(val), &out->inflight) == 0)
		out->have_inflight = 1;
	}
	/* all found: the rest (service estimates, averages ...) is not used */
	if (out->have_state && out->have_attempts && out->have_timeouts && out->have_inflight)
	    break;
    }
    return (out->have_state || out->have_attempts) ? 0 : -1;
}
