#include <string.h>
#include "parse_common.h"
#include "parse_version.h"

/* token at the start of s must look like ^[0-9]+\.[0-9]+ */
static int
take_version(struct lc_slice s, char *out, size_t outsz)
{
    size_t	i = 0, n;

    s = lc_trim(s);
    while (i < s.n && lc_is_digit(s.p[i]))
	i++;
    if (i == 0 || i + 1 >= s.n || s.p[i] != '.' || !lc_is_digit(s.p[i + 1]))
	return -1;
    for (n = 0; n < s.n; n++) {
	unsigned char c = (unsigned char)s.p[n];

	if (c == ' ' || c == '\t')
	    break;
	if (c < 0x21 || c > 0x7e)
	    return -1;
    }
    if (n >= outsz)
	return -1;
    memcpy(out, s.p, n);
    out[n] = '\0';
    return 0;
}

int
version_parse(const char *buf, size_t len, char *out, size_t outsz)
{
    const char		*cur = buf, *end = buf + len;
    struct lc_slice	line, t, rest;
    int			first = 1;

    if (lc_string_answer_start(buf, out, outsz) < 0)
	return -1;
    while (lc_next_line(&cur, end, &line)) {
	t = lc_trim(line);
	if (t.n == 0)
	    continue;
	if (lc_slice_startswith(t, "lustre:") || lc_slice_startswith(t, "version=")) {
	    rest.p = t.p + (t.p[0] == 'l' ? 7 : 8);
	    rest.n = t.n - (size_t)(rest.p - t.p);
	    if (take_version(rest, out, outsz) == 0)
		return 0;
	} else if (first && take_version(t, out, outsz) == 0) {
	    return 0;
	}
	first = 0;
    }
    out[0] = '\0';
    return -1;
}

/* digits at *s, at most 999, advancing *s; -1 if none */
static long
part(const char **s)
{
    long	x = 0;
    int		n = 0;

    while (lc_is_digit(**s)) {
	x = x * 10 + (**s - '0');
	if (++n > 3)
	    return -1;
	(*s)++;
    }
    return n ? x : -1;
}

long
version_code(const char *v)
{
    long	maj, min, patch = 0;

    if (v == NULL || (maj = part(&v)) < 0 || *v++ != '.' || (min = part(&v)) < 0)
	return -1;
    if (*v == '.' && lc_is_digit(v[1])) {
	v++;
	if ((patch = part(&v)) < 0)
	    return -1;
    }
    return LC_VERSION(maj, min, patch);
}
