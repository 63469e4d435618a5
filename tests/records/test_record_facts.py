"""What a job record carries for compare (report schema 3): the scheduler's facts about the job,
each host's client (version, kernel, OS image, settings per filesystem) and, per filesystem, the
latency, read-ahead and hybrid I/O sums — each null, never 0, when some host did not give it."""

import pytest

from lustre_jobreport import REPORT_SCHEMA, config
from lustre_jobreport.hooks import jobenv
from lustre_jobreport.records import jobrow, store as records
from lustre_jobreport.report import document as report

from kit.snapshots import host, snap

SETTINGS_2_15 = {"osc.max_pages_per_rpc": {"scratch-OST0000": 256, "scratch-OST0001": 256},
                 "osc.max_rpcs_in_flight": {"scratch-OST0000": 8, "scratch-OST0001": 8},
                 "osc.max_dirty_mb": {"scratch-OST0000": 2000, "scratch-OST0001": 2000},
                 "osc.checksums": {"scratch-OST0000": 1, "scratch-OST0001": 1},
                 "llite.max_read_ahead_mb": {"scratch": 1024},
                 "llite.max_read_ahead_per_file_mb": {"scratch": 256},
                 "llite.max_read_ahead_whole_mb": {"scratch": 64}}
STRINGS = {"version": "discrete", "kernel": "discrete", "os": "discrete"}


def client(name, *, read=0, latency=None, ra_hits=None, settings=None, kernel="4.18.0-477.27.1.el8_8.x86_64",
           version="2.15.4"):
    m = {"version": {"": version}, "kernel": {"": kernel}, "os": {"": "Rocky Linux 8.8 (Green Obsidian)"},
         "pagesize": {"": 4096}, "llite.mount_id": {"scratch": "ffff0001"},
         "llite.read_bytes": {"scratch": read}, "llite.read_calls": {"scratch": read // 4096}}
    if latency is not None:
        m["llite.latency.read"] = {"scratch": latency}
    if ra_hits is not None:
        m["llite.readahead.hits"] = {"scratch": ra_hits}
    m.update(settings if settings is not None else SETTINGS_2_15)
    sems = dict(STRINGS, **{k: "discrete" for k in m if "max_" in k or "checksums" in k or k == "pagesize"})
    return host(name, m, sems=sems)


def build(begin_hosts, end_hosts, **kw):
    return report.build(snap(0.0, *begin_hosts), snap(600.0, *end_hosts), config.Config(), **kw)


def test_the_report_carries_the_jobs_facts_and_each_hosts_client():
    doc = build([client("n1"), client("n2")], [client("n1", read=1 << 30), client("n2", read=1 << 30)],
                job_id="7", user="ann", facts={"name": "wrf", "partition": "batch", "account": "climate",
                                               "num_nodes": 2, "num_tasks": 64})
    assert doc["schema"] == REPORT_SCHEMA == "lustre-jobreport/3"
    job = doc["job"]
    assert (job["name"], job["partition"], job["account"], job["num_nodes"], job["num_tasks"], job["command"]) == \
        ("wrf", "batch", "climate", 2, 64, None)
    c = doc["clients"]["n1"]
    assert (c["lustre"], c["kernel"], c["os"], c["pagesize"]) == \
        ("2.15.4", "4.18.0-477.27.1.el8_8.x86_64", "Rocky Linux 8.8 (Green Obsidian)", 4096)
    s = c["settings"]["scratch"]
    assert (s["max_pages_per_rpc"], s["max_rpcs_in_flight"], s["max_dirty_mb"], s["checksums"]) == (256, 8, 2000, 1)
    assert (s["max_read_ahead_mb"], s["max_read_ahead_per_file_mb"], s["max_read_ahead_whole_mb"]) == (1024, 256, 64)
    assert s["hybrid_io"] is None and "mixed" not in s      # a 2.15 client has no hybrid I/O tunables
    rows = jobrow.rows(doc)
    assert [(r["fs"], r["job_name"], r["lustre"], r["kernel"], r["max_read_ahead_mb"], r["settings_mixed"])
            for r in rows] == [("scratch", "wrf", "2.15.4", "4.18.0-477.27.1.el8_8.x86_64", 1024, "")]


def test_osc_settings_that_disagree_are_named_mixed_with_the_most_common_value():
    odd = dict(SETTINGS_2_15, **{"osc.max_pages_per_rpc": {"scratch-OST0000": 256, "scratch-OST0001": 1024,
                                                           "scratch-OST0002": 1024}})
    doc = build([client("n1", settings=odd)], [client("n1", settings=odd)])
    s = doc["clients"]["n1"]["settings"]["scratch"]
    assert s["max_pages_per_rpc"] == 1024 and s["mixed"] == ["max_pages_per_rpc"]
    assert jobrow.rows(doc)[0]["settings_mixed"] == "max_pages_per_rpc"


def test_hosts_with_different_kernels_are_all_kept():
    doc = build([client("n1"), client("n2", kernel="5.14.0-362.el9.x86_64")],
                [client("n1"), client("n2", kernel="5.14.0-362.el9.x86_64")])
    assert jobrow.rows(doc)[0]["kernel"] == "4.18.0-477.27.1.el8_8.x86_64;5.14.0-362.el9.x86_64"


def test_latency_and_read_ahead_sums_are_null_unless_every_host_gave_them():
    both = build([client("n1", latency=100, ra_hits=10), client("n2", latency=50, ra_hits=5)],
                 [client("n1", latency=1100, ra_hits=30), client("n2", latency=350, ra_hits=9)])
    fs = both["filesystems"]["scratch"]
    assert fs["latency_us"] == {"read": 1300, "write": None}   # no write latency anywhere: unknown
    assert fs["readahead"]["hits"] == 24
    # a 2.12 host (no latency in its llite stats) beside a 2.15 one: the job's latency is unknown
    mixed = build([client("n1", latency=100), client("n2", version="2.12.9")],
                  [client("n1", latency=1100), client("n2", version="2.12.9")])
    assert mixed["filesystems"]["scratch"]["latency_us"]["read"] is None
    assert jobrow.rows(mixed)[0]["latency_read_us"] is None
    assert jobrow.rows(both)[0]["latency_read_us"] == 1300


def test_slurm_facts_come_from_scontrol_then_the_epilog_environment():
    job = jobenv.Job("slurm", "7", "ann", 1001, 1001, ["n1", "n2"], "n1", "c1")
    fields = jobenv.parse_scontrol("JobId=7 JobName=my job x Command=/home/ann/run.sh arg Partition=batch "
                                   "Account=(null) NumNodes=2-2 NumTasks=64 StdOut=/home/ann/o.txt")
    facts = jobenv.slurm_facts(fields, {"SLURM_JOB_ACCOUNT": "climate"}, job)
    assert facts == {"name": "my job x", "command": "/home/ann/run.sh arg", "partition": "batch",
                     "account": "climate", "num_nodes": 2, "num_tasks": 64}
    # scontrol unreachable: what the Epilog's environment says, and the node count from the node list
    assert jobenv.slurm_facts(None, {"SLURM_JOB_PARTITION": "debug"}, job) == \
        {"name": None, "command": None, "partition": "debug", "account": None, "num_nodes": 2, "num_tasks": None}


def test_pbs_facts_come_from_the_epilogue_arguments():
    job = jobenv.Job("pbs", "12.srv", "ann", None, None, ["n1", "n2", "n3"], "n1", "srv")
    argv = ["12.srv", "ann", "users", "cfd-run", "4242", "select=3", "walltime=00:10:00", "workq", "null", "0"]
    assert jobenv.pbs_epilogue_facts(argv, job) == {"name": "cfd-run", "command": None, "partition": "workq",
                                                    "account": None, "num_nodes": 3, "num_tasks": None}
    assert jobenv.pbs_epilogue_facts(["12.srv", "ann"], job)["name"] is None


def test_records_of_older_schemas_still_give_rows_with_what_they_had():
    old = {"schema": "lustre-jobreport/2", "job": {"id": "3", "user": "bob", "hosts": ["n1"],
           "end": "2026-03-09T23:59:59Z", "begin": "2026-03-09T23:00:00Z", "elapsed_s": 3599.0},
           "lustre_versions": {"n1": "2.12.9"},
           "filesystems": {"scratch": {"read_bytes": 5, "write_bytes": 0, "read_calls": 1, "write_calls": 0,
                                       "ops": {"open": 1}, "rpc": {"read": {"4K": 1}, "write": {}}, "osts": {}}},
           "flags": [], "data_quality": []}
    [row] = jobrow.rows(old)
    assert (row["lustre"], row["job_name"], row["kernel"], row["max_pages_per_rpc"], row["latency_read_us"],
            row["rpc_read_4K"], row["trusted"]) == ("2.12.9", None, None, None, None, 1, True)


def test_a_count_too_large_for_its_column_is_null_and_untrusted_not_a_lost_record():
    doc = build([client("n1")], [client("n1", read=1 << 30)], job_id="9",
                facts={"name": "x", "num_nodes": 1 << 40, "num_tasks": 64})
    doc["filesystems"]["scratch"]["write_bytes"] = 1 << 64
    [row] = jobrow.rows(doc)
    assert (row["num_nodes"], row["num_tasks"], row["write_bytes"], row["read_bytes"]) == (None, 64, None, 1 << 30)
    assert "VALUE_TOO_LARGE" in row["data_quality"].split(",") and row["trusted"] is False


@pytest.mark.parametrize("spoil", [
    lambda fs: fs.update(read_bytes=1.5e9),                       # a count that is not whole
    lambda fs: fs["ops"].update(open="12"),
    lambda fs: fs["rpc"]["read"].update({"1M": 3.0}),
    lambda fs: fs.update(osts={"OST0000": 7}),
])
def test_a_count_of_the_wrong_type_is_a_malformed_record_never_a_silent_null(spoil):
    doc = build([client("n1")], [client("n1", read=1 << 30)], job_id="9")
    spoil(doc["filesystems"]["scratch"])
    with pytest.raises(jobrow.RecordError):
        jobrow.rows(doc)


def test_nan_and_infinity_in_a_record_file_are_refused(tmp_path):
    path = tmp_path / "r.json"
    path.write_text('{"schema": "lustre-jobreport/3", "job": {"elapsed_s": NaN}}')
    with pytest.raises(records.RecordFileError, match="NaN is not a number JSON allows"):
        records.parse(path.read_bytes(), path)


def test_a_host_that_unmounted_the_filesystem_during_the_job_leaves_its_sums_unknown():
    """n2's latency and read bytes of scratch are left out (REMOUNT): the job's latency is not
    n1's alone, and the row's read bytes are not either."""
    gone = client("n2", latency=50)
    gone.metrics.pop("lustreclient.llite.mount_id")
    doc = build([client("n1", latency=100), client("n2", latency=50)], [client("n1", read=1 << 30, latency=1100), gone])
    assert [(q["id"], q["host"]) for q in doc["data_quality"]] == [("REMOUNT", "n2"), ("NO_LUSTRE", "n2")]
    fs = doc["filesystems"]["scratch"]
    assert fs["latency_us"]["read"] is None and fs["read_bytes"] == 1 << 30 and fs["left_out"]["read_bytes"] == 1
    [row] = jobrow.rows(doc)
    assert row["latency_read_us"] is None and row["read_bytes"] is None
