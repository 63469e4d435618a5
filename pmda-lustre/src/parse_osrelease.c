#include <string.h>
#include "parse_common.h"
#include "parse_osrelease.h"

int
kernel_release_parse(const char *buf, size_t len, char *out, size_t outsz)
{
    const char		*cur = buf, *end = buf + len;
    struct lc_slice	line, first = { NULL, 0 };
    int			n = 0;

    if (lc_string_answer_start(buf, out, outsz) < 0)
	return -1;
    while (lc_next_line(&cur, end, &line)) {
	line = lc_trim(line);
	if (n++ == 0)
	    first = line;
	else if (line.n != 0)
	    return -1;	/* procfs gives one line: this is something else */
    }
    if (first.n == 0 || first.n >= outsz || !lc_is_printable(first))
	return -1;
    memcpy(out, first.p, first.n);
    out[first.n] = '\0';
    return 0;
}

/*
 * The length of s[0..len) without a UTF-8 sequence cut short at its end
 * (a value or description cut to fit must not end in half a character).
 */
static size_t
utf8_whole(const char *s, size_t len)
{
    size_t	k = len, need;
    unsigned char c;

    /* back over at most three continuation bytes to the lead byte */
    while (k > 0 && len - k < 3 && ((unsigned char)s[k - 1] & 0xC0) == 0x80)
	k--;
    if (k == 0)
	return len;
    c = (unsigned char)s[k - 1];
    if ((c & 0xE0) == 0xC0)
	need = 2;
    else if ((c & 0xF0) == 0xE0)
	need = 3;
    else if ((c & 0xF8) == 0xF0)
	need = 4;
    else
	return len;	/* ASCII or not UTF-8: nothing to mend */
    return len - (k - 1) < need ? k - 1 : len;
}

struct val {
    char	*p;
    size_t	n, cap;		/* cap includes the NUL */
    int		cut;
};

static void
put(struct val *v, char c)
{
    unsigned char u = (unsigned char)c;

    if (u < 0x20 || u == 0x7f)
	c = '?';
    if (v->n + 1 < v->cap)
	v->p[v->n++] = c;
    else
	v->cut = 1;
}

/* one shell word from s: 0 and the value in v, or -1 (an unclosed quote) */
static int
shell_word(struct lc_slice s, struct val *v)
{
    size_t	i = 0;
    char	c;

    while (i < s.n) {
	c = s.p[i];
	if (lc_is_space(c))
	    break;		/* the value ends at a blank outside quotes */
	if (c == '"') {
	    for (i++; ; i++) {
		if (i >= s.n)
		    return -1;
		c = s.p[i];
		if (c == '"')
		    break;
		if (c == '\\' && i + 1 < s.n && s.p[i + 1] != '\0' &&
		    strchr("$\"\\`", s.p[i + 1]) != NULL)
		    c = s.p[++i];
		put(v, c);
	    }
	    i++;
	} else if (c == '\'') {
	    for (i++; ; i++) {
		if (i >= s.n)
		    return -1;
		if (s.p[i] == '\'')
		    break;
		put(v, s.p[i]);
	    }
	    i++;
	} else if (c == '\\') {
	    if (i + 1 < s.n)
		put(v, s.p[i + 1]);
	    i += 2;		/* a backslash at the end of a line is dropped */
	} else {
	    put(v, c);
	    i++;
	}
    }
    if (v->cut)
	v->n = utf8_whole(v->p, v->n);
    v->p[v->n] = '\0';
    return 0;
}

static int
key_char(char c, int first)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
	   (!first && lc_is_digit(c));
}

int
os_release_parse(const char *buf, size_t len, struct os_release *osr)
{
    const char		*cur = buf, *end = buf + len;
    struct lc_slice	line, key, rest;
    char		tmp[LC_OSVAL_MAX];
    struct val		v;
    size_t		i;
    char		*dst;

    memset(osr, 0, sizeof(*osr));
    if (buf == NULL)
	return -1;
    while (lc_next_line(&cur, end, &line)) {
	line = lc_trim(line);
	if (line.n == 0 || line.p[0] == '#')
	    continue;
	for (i = 0; i < line.n && key_char(line.p[i], i == 0); i++)
	    ;
	if (i == 0 || i >= line.n || line.p[i] != '=')
	    continue;		/* not an assignment */
	key.p = line.p;
	key.n = i;
	rest.p = line.p + i + 1;
	rest.n = line.n - i - 1;
	v.p = tmp;
	v.n = 0;
	v.cap = sizeof(tmp);
	v.cut = 0;
	if (shell_word(rest, &v) < 0)
	    continue;		/* unclosed quote: not a value we can trust */
	osr->nassign++;
	if (lc_slice_eq(key, "PRETTY_NAME"))
	    dst = osr->pretty_name;
	else if (lc_slice_eq(key, "NAME"))
	    dst = osr->name;
	else if (lc_slice_eq(key, "VERSION_ID"))
	    dst = osr->version_id;
	else if (lc_slice_eq(key, "IMAGE_ID"))
	    dst = osr->image_id;
	else if (lc_slice_eq(key, "IMAGE_VERSION"))
	    dst = osr->image_version;
	else
	    continue;
	/* a later assignment wins, as when the shell sources the file */
	memcpy(dst, tmp, v.n + 1);
    }
    return osr->nassign > 0 ? 0 : -1;
}

static void
cat(struct val *o, const char *s)
{
    for (; *s; s++)
	put(o, *s);
}

size_t
os_release_describe(const struct os_release *osr, char *out, size_t outsz)
{
    struct val	o = { out, 0, outsz, 0 };

    if (outsz == 0)
	return 0;
    if (osr->pretty_name[0]) {
	cat(&o, osr->pretty_name);
    } else {
	/* os-release(5): NAME defaults to "Linux" */
	cat(&o, osr->name[0] ? osr->name : "Linux");
	if (osr->version_id[0]) {
	    put(&o, ' ');
	    cat(&o, osr->version_id);
	}
    }
    if (osr->image_id[0] || osr->image_version[0]) {
	cat(&o, " (");
	cat(&o, osr->image_id);
	if (osr->image_id[0] && osr->image_version[0])
	    put(&o, ' ');
	cat(&o, osr->image_version);
	put(&o, ')');
    }
    if (o.cut)
	o.n = utf8_whole(out, o.n);
    out[o.n] = '\0';
    return o.n;
}
