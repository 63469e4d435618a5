"""A stand-in for pmdalustreclient whose OSC instance domain names one instance twice (ids 0 and
1, both scratch-OST0000), so that the PMAPI and pminfo paths can be fed that answer through a
real pmcd: the real agent cannot make it (pmdaCache keys its instances by name). Run by pmcd
as a pipe agent (DupPmcd)."""

import sys

import cpmapi as c_api
from pcp.pmapi import pmUnits
from pcp.pmda import PMDA, pmdaIndom, pmdaInstid, pmdaMetric

PMNS = ("root {\n    lustreclient\n}\n"
        "lustreclient {\n    version 220:0:0\n    osc\n}\n"
        "lustreclient.osc {\n    read_bytes 220:7:0\n}\n")
VALUES = {0: 5, 1: 900}


class DupAgent(PMDA):
    def __init__(self):
        PMDA.__init__(self, "lustreclient", 220)
        self.connect_pmcd()
        osc = self.indom(1)
        self.add_indom(pmdaIndom(osc, [pmdaInstid(i, "scratch-OST0000") for i in VALUES]))
        self.add_metric("lustreclient.version", pmdaMetric(self.pmid(0, 0), c_api.PM_TYPE_STRING,
                        c_api.PM_INDOM_NULL, c_api.PM_SEM_DISCRETE, pmUnits()))
        self.add_metric("lustreclient.osc.read_bytes", pmdaMetric(self.pmid(7, 0), c_api.PM_TYPE_U64, osc,
                        c_api.PM_SEM_COUNTER, pmUnits(1, 0, 0, c_api.PM_SPACE_BYTE, 0, 0)))
        self.set_fetch_callback(self.fetch)

    def fetch(self, cluster, item, inst):
        if (cluster, item) == (0, 0):
            return ["2.15.4", 1]
        return [VALUES[inst], 1]


def pmcd_class():
    """A private pmcd (tests/kit/privpmcd.py) running this agent under the interpreter of the tests."""
    from kit import privpmcd

    class DupPmcd(privpmcd.Pmcd):
        probe_metric = "lustreclient.version"

        def prepare(self):
            return f"lustreclient\t220\tpipe\tbinary\t{sys.executable} {__file__}", PMNS

    return DupPmcd


if __name__ == "__main__":
    DupAgent().run()
