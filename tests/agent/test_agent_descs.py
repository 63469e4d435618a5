"""Metric descriptors: every metric has help, counters are counters and gauges are instant, the
units are right, and pmval converts the counters to rates."""

from __future__ import annotations

import re
import subprocess

import cpmapi as c_api
from lustre_sim import SimClient
from pcp import pmapi
from kit.privpmcd import PrivatePmcd

INSTANT = re.compile(r"\.(rpcs_in_flight\.\w+|pending_pages\.\w+|state|lnet\.msgs_(alloc|max)|agent\.fetch\.\w+"
                     r"|left_out\.\w+|job\.slot\d+\.series)$")
# settings (tunables) and identity strings are discrete
DISCRETE = re.compile(r"(\.version|\.pagesize|\.mount_id|\.device|_start|\.max_pages_per_rpc|\.max_rpcs_in_flight"
                      r"|\.max_dirty_mb|\.checksums|\.max_read_ahead\w*_mb|\.hybrid_io\w*|^lustreclient\.kernel"
                      r"|^lustreclient\.os|^lustreclient\.control\.job_\w+|^lustreclient\.job\.(begin_time|slots|restarts)"
                      r"|^lustreclient\.job\.slot\d+\.(job_id|answer))$")
BYTES = re.compile(r"(_bytes|_length|\.pagesize)$")
USEC = re.compile(r"(\.latency\.\w+|\.req_waittime)$")
STRING = re.compile(r"(\.version|\.mount_id|\.device|\.state|^lustreclient\.kernel|^lustreclient\.os"
                    r"|^lustreclient\.control\.job_\w+|^lustreclient\.job\.slot\d+\.job_id)$")
MIB = re.compile(r"_mb$")


def test_descriptors_help_and_rates(tmp_path):
    c = SimClient.create(tmp_path / "tree", version="2.16.0", filesystems=[("scratch", 2, 1)], seed=1)
    with PrivatePmcd(tmp_path / "pmcd", c.root) as pmcd:
        ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, pmcd.spec)
        names: list[str] = []
        ctx.pmTraversePMNS("lustreclient", names.append)
        descs = ctx.pmLookupDescs(ctx.pmLookupName(names))
        bad = []
        for name, d in zip(names, descs):
            dd = d.contents
            want_sem = (c_api.PM_SEM_DISCRETE if DISCRETE.search(name) else
                        c_api.PM_SEM_INSTANT if INSTANT.search(name) else c_api.PM_SEM_COUNTER)
            if dd.sem != want_sem:
                bad.append(f"{name}: sem {dd.sem}, want {want_sem}")
            if bool(STRING.search(name)) != (dd.type == c_api.PM_TYPE_STRING):
                bad.append(f"{name}: type {dd.type}")
            u = dd.units
            if BYTES.search(name) and not (u.dimSpace == 1 and u.scaleSpace == c_api.PM_SPACE_BYTE):
                bad.append(f"{name}: not bytes")
            if USEC.search(name) and not (u.dimTime == 1 and u.scaleTime == c_api.PM_TIME_USEC):
                bad.append(f"{name}: not usec")
            if MIB.search(name) and not (u.dimSpace == 1 and u.scaleSpace == c_api.PM_SPACE_MBYTE):
                bad.append(f"{name}: not MiB")
            if name.endswith(("_start", "job.begin_time")) and not (u.dimTime == 1 and u.scaleTime == c_api.PM_TIME_SEC
                                                 and dd.type == c_api.PM_TYPE_DOUBLE):
                bad.append(f"{name}: not a double in seconds")
            if dd.sem == c_api.PM_SEM_COUNTER and dd.type not in (c_api.PM_TYPE_U64, c_api.PM_TYPE_U32):
                bad.append(f"{name}: counter of type {dd.type}")
            try:
                one = ctx.pmLookupText(ctx.pmLookupName([name])[0], c_api.PM_TEXT_ONELINE)
                full = ctx.pmLookupText(ctx.pmLookupName([name])[0], c_api.PM_TEXT_HELP)
                if not one.strip() or not full.strip():
                    bad.append(f"{name}: empty help")
            except pmapi.pmErr as e:
                bad.append(f"{name}: no help ({e})")
        assert not bad, "\n".join(bad)
        # 188 of the client, 5 of the job view's control, slots and restarts, 8 job slots of 52
        # deltas, 6 left_out, a job id, an answer and a series each
        assert len(names) == 188 + 5 + 8 * (52 + 6 + 1 + 1 + 1)
        # pmval turns a counter into a rate, and shows a gauge as it is
        out = subprocess.run(["pmval", "-h", pmcd.spec, "-s", "2", "-t", "0.2",
                              "lustreclient.osc.write_bytes"], capture_output=True, text=True).stdout
        assert "converting to rate" in out and "byte / sec" in out, out
        out = subprocess.run(["pmval", "-h", pmcd.spec, "-s", "1", "lustreclient.osc.rpcs_in_flight.write"],
                             capture_output=True, text=True).stdout
        assert "instantaneous value" in out, out
