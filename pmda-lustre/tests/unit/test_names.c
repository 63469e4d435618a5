#include "harness.h"
#include "names.h"

static struct lc_devname dn;

void
test_names(void)
{
    char buf[32];

    CHECK_INT(lc_devname_parse(LC_DEV_LLITE, "scratch-ffff88105db50000", &dn), 0);
    CHECK_STR(dn.fsname, "scratch");
    CHECK_STR(dn.sbi, "ffff88105db50000");
    CHECK_STR(dn.inst, "scratch");
    CHECK_INT(lc_devname_parse(LC_DEV_LLITE, "my-fs-ffff88105db50000", &dn), 0);
    CHECK_STR(dn.fsname, "my-fs");
    CHECK_INT(lc_devname_parse(LC_DEV_LLITE, "scratch", &dn), -1);
    CHECK_INT(lc_devname_parse(LC_DEV_LLITE, "-ffff88105db50000", &dn), -1);
    CHECK_INT(lc_devname_parse(LC_DEV_LLITE, "scratch-", &dn), -1);
    CHECK_INT(lc_devname_parse(LC_DEV_LLITE, "scratch-xyz", &dn), -1);
    CHECK_INT(lc_devname_parse(LC_DEV_LLITE, "scr:atch-ffff", &dn), -1);
    CHECK_INT(lc_devname_parse(LC_DEV_LLITE, "scr atch-ffff", &dn), -1);
    CHECK_INT(lc_devname_parse(LC_DEV_LLITE, "", &dn), -1);
    CHECK_INT(lc_devname_parse(LC_DEV_LLITE, NULL, &dn), -1);

    CHECK_INT(lc_devname_parse(LC_DEV_OSC, "scratch-OST0003-osc-ffff88105db50000", &dn), 0);
    CHECK_STR(dn.fsname, "scratch");
    CHECK_STR(dn.target, "OST0003");
    CHECK_STR(dn.sbi, "ffff88105db50000");
    CHECK_STR(dn.inst, "scratch-OST0003");
    CHECK_INT(lc_devname_parse(LC_DEV_OSC, "proj-OST000a-osc-ffff8c2a4f1c3000", &dn), 0);
    CHECK_STR(dn.inst, "proj-OST000a");
    CHECK_INT(lc_devname_parse(LC_DEV_OSC, "big-OST1a2b3-osc-ffff8c2a4f1c3000", &dn), 0);
    CHECK_STR(dn.target, "OST1a2b3");
    CHECK_INT(lc_devname_parse(LC_DEV_OSC, "my-fs-OST0000-osc-ffff8c2a4f1c3000", &dn), 0);
    CHECK_STR(dn.fsname, "my-fs");
    /* server-side OSP links and other non-client names */
    CHECK_INT(lc_devname_parse(LC_DEV_OSC, "scratch-OST0000-osc-MDT0000", &dn), -1);
    CHECK_INT(lc_devname_parse(LC_DEV_OSC, "scratch-OST0000-osc-MDT0001", &dn), -1);
    CHECK_INT(lc_devname_parse(LC_DEV_OSC, "scratch-OST0000-osc", &dn), -1);
    CHECK_INT(lc_devname_parse(LC_DEV_OSC, "scratch-OST03-osc-ffff", &dn), -1);
    CHECK_INT(lc_devname_parse(LC_DEV_OSC, "scratch-MDT0000-osc-ffff", &dn), -1);
    CHECK_INT(lc_devname_parse(LC_DEV_OSC, "OST0000-osc-ffff", &dn), -1);
    CHECK_INT(lc_devname_parse(LC_DEV_OSC, "scratch-OST0000-mdc-ffff", &dn), -1);
    CHECK_INT(lc_devname_parse(LC_DEV_OSC, "scratch-OSTzzzz-osc-ffff", &dn), -1);

    CHECK_INT(lc_devname_parse(LC_DEV_MDC, "scratch-MDT0000-mdc-ffff88105db50000", &dn), 0);
    CHECK_STR(dn.inst, "scratch-MDT0000");
    CHECK_STR(dn.target, "MDT0000");
    CHECK_INT(lc_devname_parse(LC_DEV_MDC, "scratch-OST0000-mdc-ffff88105db50000", &dn), -1);
    CHECK_INT(lc_devname_parse(LC_DEV_MDC, "scratch-MDT0000-osc-ffff88105db50000", &dn), -1);

    lc_size_label(4096, buf, sizeof(buf));
    CHECK_STR(buf, "4K");
    lc_size_label(512 * 1024, buf, sizeof(buf));
    CHECK_STR(buf, "512K");
    lc_size_label(1 << 20, buf, sizeof(buf));
    CHECK_STR(buf, "1M");
    lc_size_label(64ULL << 20, buf, sizeof(buf));
    CHECK_STR(buf, "64M");
    lc_size_label(2ULL << 30, buf, sizeof(buf));
    CHECK_STR(buf, "2G");
    lc_size_label(8192ULL << 30, buf, sizeof(buf));
    CHECK_STR(buf, "8192G");
    lc_size_label(512, buf, sizeof(buf));
    CHECK_STR(buf, "512");
    lc_size_label(65536, buf, sizeof(buf));
    CHECK_STR(buf, "64K");

    CHECK_INT(lc_bucket_default_maxidx(4096), 14);	/* 4K .. 64M */
    CHECK_INT(lc_bucket_default_maxidx(16384), 12);
    CHECK_INT(lc_bucket_default_maxidx(65536), 10);	/* 64K .. 64M */
    CHECK_INT(lc_bucket_default_maxidx(64 << 20), 0);
    CHECK_INT(lc_bucket_default_maxidx(1ULL << 30), 0);
    CHECK_INT(lc_bucket_default_maxidx(0), 0);
}
