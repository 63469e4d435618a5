/*
 * The host identity parsers (kernel release, os-release), the MiB tunable
 * files with the fractions of lprocfs_read_frac_helper, and version_code()
 * (which Lustre versions have the hybrid I/O counters).
 */
#include "harness.h"
#include "parse_common.h"
#include "parse_osrelease.h"
#include "parse_version.h"

static char		kern[LC_KERNEL_MAX];
static struct os_release osr;
static char		desc[LC_OS_MAX];

static int
kernel(const char *text)
{
    size_t	len = strlen(text);
    char	*b = h_exact(text, len);
    int		sts = kernel_release_parse(b, len, kern, sizeof(kern));

    free(b);
    return sts;
}

/* parse text, and describe it into desc ("" when the parse fails) */
static int
osrel(const char *text)
{
    size_t	len = strlen(text);
    char	*b = h_exact(text, len);
    int		sts = os_release_parse(b, len, &osr);

    free(b);
    desc[0] = '\0';
    if (sts == 0)
	os_release_describe(&osr, desc, sizeof(desc));
    return sts;
}

static int
mb(const char *text, uint64_t *v)
{
    size_t	len = strlen(text);
    char	*b = h_exact(text, len);
    int		sts = lc_parse_single_mb(b, len, v);

    free(b);
    return sts;
}

static void
test_kernel(void)
{
    CHECK_INT(kernel("6.1.0-18-amd64\n"), 0);
    CHECK_STR(kern, "6.1.0-18-amd64");
    CHECK_INT(kernel("4.18.0-513.24.1.el8_9.x86_64"), 0);	/* no newline */
    CHECK_STR(kern, "4.18.0-513.24.1.el8_9.x86_64");
    CHECK_INT(kernel("  3.10.0-1160.el7.x86_64 \r\n\n"), 0);
    CHECK_STR(kern, "3.10.0-1160.el7.x86_64");
    CHECK_INT(kernel(""), -1);
    CHECK_STR(kern, "");
    CHECK_INT(kernel("\n"), -1);
    CHECK_INT(kernel("6.1.0\nsomething else\n"), -1);	/* not procfs' one line */
    CHECK_INT(kernel("6.1\x01x\n"), -1);
    CHECK_INT(kernel("6.1\xc3\xa9\n"), -1);
    {
	char	big[300];

	memset(big, 'a', sizeof(big) - 2);
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = '\0';
	CHECK_INT(kernel(big), -1);			/* longer than the buffer */
	big[LC_KERNEL_MAX - 1] = '\0';
	CHECK_INT(kernel(big), 0);			/* LC_KERNEL_MAX - 1 fits */
	CHECK_U64(strlen(kern), LC_KERNEL_MAX - 1);
	big[LC_KERNEL_MAX] = '\0';
	big[LC_KERNEL_MAX - 1] = 'a';
	CHECK_INT(kernel(big), -1);			/* LC_KERNEL_MAX does not */
    }
    CHECK_INT(kernel_release_parse(NULL, 0, kern, sizeof(kern)), -1);
    CHECK_INT(kernel_release_parse("x", 1, kern, 0), -1);
}

static void
test_os_release(void)
{
    /* Debian 12, byte for byte */
    CHECK_INT(osrel("PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"
		    "NAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nVERSION=\"12 (bookworm)\"\n"
		    "VERSION_CODENAME=bookworm\nID=debian\nHOME_URL=\"https://www.debian.org/\"\n"
		    "SUPPORT_URL=\"https://www.debian.org/support\"\n"
		    "BUG_REPORT_URL=\"https://bugs.debian.org/\"\n"), 0);
    CHECK_INT(osr.nassign, 9);
    CHECK_STR(osr.name, "Debian GNU/Linux");
    CHECK_STR(osr.version_id, "12");
    CHECK_STR(desc, "Debian GNU/Linux 12 (bookworm)");

    /* no PRETTY_NAME: NAME VERSION_ID; image keys, single quotes, unquoted */
    CHECK_INT(osrel("NAME=\"Rocky Linux\"\nVERSION_ID=\"8.9\"\nIMAGE_ID='compute-node'\n"
		    "IMAGE_VERSION=2024.03\n"), 0);
    CHECK_STR(desc, "Rocky Linux 8.9 (compute-node 2024.03)");
    CHECK_INT(osrel("PRETTY_NAME=\"Rocky Linux 8.9 (Green Obsidian)\"\nIMAGE_ID=hpc\n"), 0);
    CHECK_STR(desc, "Rocky Linux 8.9 (Green Obsidian) (hpc)");
    CHECK_INT(osrel("PRETTY_NAME=X\nIMAGE_VERSION=7\n"), 0);
    CHECK_STR(desc, "X (7)");
    CHECK_INT(osrel("NAME=Alpine\n"), 0);			/* no VERSION_ID */
    CHECK_STR(desc, "Alpine");
    /* os-release(5): NAME defaults to "Linux" */
    CHECK_INT(osrel("VERSION_ID=1.0\n"), 0);
    CHECK_STR(desc, "Linux 1.0");
    CHECK_INT(osrel("ID=x\n"), 0);
    CHECK_STR(desc, "Linux");
    /* an empty value is unset */
    CHECK_INT(osrel("PRETTY_NAME=\"\"\nNAME=Fedora\nVERSION_ID=40\nIMAGE_ID=\n"), 0);
    CHECK_STR(desc, "Fedora 40");

    /* shell quoting and escapes */
    CHECK_INT(osrel("PRETTY_NAME=\"a \\\"quoted\\\" \\$HOME \\\\ \\` \\n\"\n"), 0);
    CHECK_STR(osr.pretty_name, "a \"quoted\" $HOME \\ ` \\n");
    CHECK_INT(osrel("PRETTY_NAME='it\\s \"raw\" $x'\n"), 0);
    CHECK_STR(osr.pretty_name, "it\\s \"raw\" $x");
    CHECK_INT(osrel("PRETTY_NAME=Two\\ words\n"), 0);
    CHECK_STR(osr.pretty_name, "Two words");
    CHECK_INT(osrel("PRETTY_NAME=\"a\"'b'c\n"), 0);		/* concatenated words */
    CHECK_STR(osr.pretty_name, "abc");
    CHECK_INT(osrel("PRETTY_NAME=\"Debian\" # trailing comment\n"), 0);
    CHECK_STR(osr.pretty_name, "Debian");
    CHECK_INT(osrel("PRETTY_NAME=Debian\\"), 0);		/* a final backslash */
    CHECK_STR(osr.pretty_name, "Debian");

    /* comments, blanks, CRLF, leading blanks, a later assignment wins */
    CHECK_INT(osrel("# comment\n\n  NAME=First\r\n\tNAME=\"Second\"\r\n#NAME=Third\n"), 0);
    CHECK_STR(osr.name, "Second");
    CHECK_INT(osr.nassign, 2);

    /* lines that are not assignments are skipped */
    CHECK_INT(osrel("NAME = spaced\n=x\n1NAME=x\nNA-ME=x\nexport NAME=x\nNAME=Ok\n"), 0);
    CHECK_STR(osr.name, "Ok");
    CHECK_INT(osr.nassign, 1);
    /* an unclosed quote: the line is skipped, the rest still counts */
    CHECK_INT(osrel("PRETTY_NAME=\"broken\nNAME=Fine\n"), 0);
    CHECK_STR(osr.pretty_name, "");
    CHECK_STR(desc, "Fine");
    CHECK_INT(osrel("PRETTY_NAME='broken\n"), -1);

    /* not an os-release file at all */
    CHECK_INT(osrel(""), -1);
    CHECK_STR(desc, "");
    CHECK_INT(osrel("hello world\n\x01\x02\n"), -1);
    CHECK_INT(osrel("# only a comment\n"), -1);
    CHECK_INT(os_release_parse(NULL, 0, &osr), -1);

    /* control characters become '?', UTF-8 is kept */
    CHECK_INT(osrel("PRETTY_NAME=\"a\tb\x7f\"\nNAME=\"Caf\xc3\xa9 OS\"\n"), 0);
    CHECK_STR(osr.pretty_name, "a?b?");
    CHECK_STR(osr.name, "Caf\xc3\xa9 OS");
    {
	/* a NUL byte inside a value (and after a backslash) */
	static const char nul[] = "NAME=\"a\\\0b\"\nVERSION_ID=\"x\0y\"\n";
	char	*b = h_exact(nul, sizeof(nul) - 1);

	CHECK_INT(os_release_parse(b, sizeof(nul) - 1, &osr), 0);
	CHECK_STR(osr.name, "a\\?b");
	CHECK_STR(osr.version_id, "x?y");
	free(b);
    }

    /* a value too long is cut at a character boundary */
    {
	char	text[1200], *p = text;
	size_t	i;

	p += sprintf(p, "PRETTY_NAME=\"");
	for (i = 0; i < LC_OSVAL_MAX - 2; i++)
	    *p++ = 'x';
	p += sprintf(p, "\xc3\xa9\xc3\xa9\"\n");		/* the é starts at byte 254 */
	CHECK_INT(osrel(text), 0);
	CHECK_U64(strlen(osr.pretty_name), LC_OSVAL_MAX - 2);	/* not half an é */
	CHECK(osr.pretty_name[LC_OSVAL_MAX - 3] == 'x');
	/* exactly LC_OSVAL_MAX - 1 bytes fit */
	p = text;
	p += sprintf(p, "NAME=");
	for (i = 0; i < LC_OSVAL_MAX - 1; i++)
	    *p++ = 'y';
	p += sprintf(p, "\n");
	CHECK_INT(osrel(text), 0);
	CHECK_U64(strlen(osr.name), LC_OSVAL_MAX - 1);
    }
    /* a description longer than its buffer is cut too, at a boundary */
    {
	struct os_release big;
	char	small[8];

	memset(&big, 0, sizeof(big));
	strcpy(big.pretty_name, "abcde\xe2\x82\xac");		/* € is 3 bytes */
	CHECK_U64(os_release_describe(&big, small, sizeof(small)), 5);
	CHECK_STR(small, "abcde");
	CHECK_U64(os_release_describe(&big, small, 0), 0);
	strcpy(big.pretty_name, "abcd\xc3");	/* not cut: not UTF-8 is passed on as it is */
	CHECK_U64(os_release_describe(&big, small, sizeof(small)), 5);
	strcpy(big.pretty_name, "abcdef\xc3\xa9");	/* é cut after its lead byte: dropped */
	CHECK_U64(os_release_describe(&big, small, sizeof(small)), 6);
	big.pretty_name[0] = '\0';
	strcpy(big.name, "N");
	strcpy(big.version_id, "V");
	strcpy(big.image_id, "I");
	strcpy(big.image_version, "W");
	CHECK_U64(os_release_describe(&big, desc, sizeof(desc)), 9);
	CHECK_STR(desc, "N V (I W)");
    }
}

static void
test_mb(void)
{
    uint64_t	v = 7;

    CHECK_INT(mb("40\n", &v), 0);
    CHECK_U64(v, 40);
    /* lprocfs_read_frac_helper / lprocfs_seq_read_frac_helper (<= 2.13) */
    CHECK_INT(mb("40.25\n", &v), 0);
    CHECK_U64(v, 40);
    CHECK_INT(mb("0.5\n", &v), 0);
    CHECK_U64(v, 0);
    CHECK_INT(mb("1.05\n", &v), 0);
    CHECK_U64(v, 1);
    CHECK_INT(mb("  2000 \n", &v), 0);
    CHECK_U64(v, 2000);
    CHECK_INT(mb("18446744073709551615.999999999", &v), 0);
    CHECK_U64(v, UINT64_MAX);
    v = 7;
    CHECK_INT(mb("", &v), -1);
    CHECK_INT(mb(".5\n", &v), -1);
    CHECK_INT(mb("5.\n", &v), -1);
    CHECK_INT(mb("5.1234567890\n", &v), -1);		/* more than 9 digits */
    CHECK_INT(mb("1.2.3\n", &v), -1);
    CHECK_INT(mb("-1\n", &v), -1);
    CHECK_INT(mb("5 MiB\n", &v), -1);
    CHECK_INT(mb("5\n\n", &v), -1);
    CHECK_INT(mb("18446744073709551616\n", &v), -1);
    CHECK_U64(v, 7);
    CHECK_INT(lc_parse_single_mb(NULL, 0, &v), -1);
}

static void
test_version_code(void)
{
    CHECK_INT(version_code("2.16.0_ddn56b"), LC_VERSION(2, 16, 0));
    CHECK_INT(version_code("2.15.64"), 2015064);
    CHECK_INT(version_code("1.8.9-wc1"), LC_VERSION(1, 8, 9));
    CHECK_INT(version_code("2.15"), LC_VERSION(2, 15, 0));
    CHECK_INT(version_code("2.15."), LC_VERSION(2, 15, 0));
    CHECK_INT(version_code("2.17.55"), LC_VERSION(2, 17, 55));
    CHECK(version_code("2.16.0") < LC_VERSION(2, 16, 52));
    CHECK(version_code("2.16.1") >= LC_VERSION(2, 15, 64));
    CHECK(version_code("2.14.0_ddn133") < LC_VERSION(2, 15, 64));
    CHECK_INT(version_code(""), -1);
    CHECK_INT(version_code("2"), -1);
    CHECK_INT(version_code("2."), -1);
    CHECK_INT(version_code("x2.16"), -1);
    CHECK_INT(version_code("2.1000.0"), -1);
    CHECK_INT(version_code("2.16.1000"), -1);
    CHECK_INT(version_code(NULL), -1);
}

void
test_parse_osrelease(void)
{
    test_kernel();
    test_os_release();
    test_mb();
    test_version_code();
}
