#include <string.h>
#include "parse_lockless.h"

int
lockless_parse(const char *buf, size_t len, struct lockless_stats *ls)
{
    static const struct {
	const char	*key;
	unsigned	bit;
	size_t		off;
    } keys[] = {
	{ "lockless_read_bytes", LOCKLESS_READ, offsetof(struct lockless_stats, read_bytes) },
	{ "lockless_write_bytes", LOCKLESS_WRITE, offsetof(struct lockless_stats, write_bytes) },
	{ "lockless_truncate", LOCKLESS_TRUNCATE, offsetof(struct lockless_stats, truncate) },
    };
    const char		*cur = buf, *end = buf + len, *p;
    struct lc_slice	line, name, val, extra;
    uint64_t		v;
    size_t		i;

    memset(ls, 0, sizeof(*ls));
    if (buf == NULL)
	return -1;
    while (lc_next_line(&cur, end, &line)) {
	if (lc_parse_header_time(lc_trim(line), &ls->snapshot, &ls->start, &ls->elapsed) > 0)
	    continue;
	p = line.p;
	if (!lc_next_token(&p, line.p + line.n, &name) ||
	    !lc_next_token(&p, line.p + line.n, &val) ||
	    lc_next_token(&p, line.p + line.n, &extra))
	    continue;
	if (lc_parse_u64(val, &v) < 0)
	    continue;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
	    if (lc_slice_eq(name, keys[i].key) && !(ls->have & keys[i].bit)) {
		*(uint64_t *)((char *)ls + keys[i].off) = v;
		ls->have |= keys[i].bit;
	    }
	}
    }
    return ls->have ? 0 : -1;
}
