#include "harness.h"
#include "parse_version.h"

static char ver[LC_VERSION_MAX];

static int
parse(const char *text)
{
    size_t	len = strlen(text);
    char	*b = h_exact(text, len);
    int		sts = version_parse(b, len, ver, sizeof(ver));

    free(b);
    return sts;
}

void
test_parse_version(void)
{
    /* 1.8 - 2.8: three lines, two spaces after "build:" */
    CHECK_INT(parse("lustre: 2.7.0\nkernel: patchless_client\nbuild:  2.7.0-RC4--PRISTINE-3.10.0\n"), 0);
    CHECK_STR(ver, "2.7.0");
    CHECK_INT(parse("lustre: 1.8.9-wc1\nkernel: 128\nbuild:  jenkins-wc1--PRISTINE-2.6.18\n"), 0);
    CHECK_STR(ver, "1.8.9-wc1");
    /* 2.9: one line */
    CHECK_INT(parse("lustre: 2.9.0\n"), 0);
    CHECK_STR(ver, "2.9.0");
    /* 2.10+: bare, with vendor suffixes */
    CHECK_INT(parse("2.10.1\n"), 0);
    CHECK_STR(ver, "2.10.1");
    CHECK_INT(parse("2.15.4\n"), 0);
    CHECK_STR(ver, "2.15.4");
    CHECK_INT(parse("2.16.0_ddn56b\n"), 0);
    CHECK_STR(ver, "2.16.0_ddn56b");
    CHECK_INT(parse("2.14.0_ddn133"), 0);		/* no newline */
    CHECK_STR(ver, "2.14.0_ddn133");
    CHECK_INT(parse("2.12\n"), 0);			/* no patch level */
    CHECK_STR(ver, "2.12");
    /* lctl form */
    CHECK_INT(parse("version=2.16.0_ddn56b\n"), 0);
    CHECK_STR(ver, "2.16.0_ddn56b");
    /* leading blank line and spaces */
    CHECK_INT(parse("\n  lustre:   2.5.3 \n"), 0);
    CHECK_STR(ver, "2.5.3");

    /* not versions */
    CHECK_INT(parse(""), -1);
    CHECK_STR(ver, "");
    CHECK_INT(parse("\n"), -1);
    CHECK_INT(parse("kernel: 2.6.32\n"), -1);
    CHECK_INT(parse("lustre: unknown\n"), -1);
    CHECK_INT(parse("2\n"), -1);
    CHECK_INT(parse("2.\n"), -1);
    CHECK_INT(parse(".2.3\n"), -1);
    CHECK_INT(parse("garbage\n2.10.1\n"), -1);	/* bare form only on line 1 */
    CHECK_INT(parse("2.1\x01" "5\n"), -1);
    CHECK_INT(parse("2.15.4-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"), -1);
    CHECK_INT(version_parse(NULL, 0, ver, sizeof(ver)), -1);
    CHECK_INT(version_parse("2.1", 3, ver, 0), -1);
    /* an exactly-sized output buffer */
    {
	char small[7];
	CHECK_INT(version_parse("2.15.4\n", 7, small, sizeof(small)), 0);
	CHECK_STR(small, "2.15.4");
	CHECK_INT(version_parse("2.15.41\n", 8, small, sizeof(small)), -1);
    }
}
