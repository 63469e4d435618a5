#include <string.h>
#include "parse_common.h"
#include "parse_lnet.h"

int
lnet_stats_parse(const char *buf, size_t len, struct lnet_stats *ls)
{
    const char		*cur = buf, *end = buf + len, *p;
    struct lc_slice	line, tok;
    int			i;

    memset(ls, 0, sizeof(*ls));
    if (buf == NULL)
	return -1;
    while (lc_next_line(&cur, end, &line)) {
	if (lc_is_blank(line))
	    continue;
	p = line.p;
	for (i = 0; i < LNET_STATS_N; i++) {
	    if (!lc_next_token(&p, line.p + line.n, &tok) ||
		lc_parse_u64(tok, &ls->v[i]) < 0 ||
		(i < LNET_SEND_LENGTH && ls->v[i] > UINT32_MAX)) {
		memset(ls, 0, sizeof(*ls));
		return -1;
	    }
	}
	return 0;
    }
    return -1;
}
