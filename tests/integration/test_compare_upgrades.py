"""compare catches a Lustre client regression across an upgrade, through the real path.

A simulated cluster (tests/kit/fleet.py: the real agent in private pmcds on simulator
trees, snapshots over PCP, report.build, records.store) runs six applications, 8 jobs each per
side, before (October) and after (November) a change of its clients. Then, as an admin would:
`lustre-jobreport records compact`, then `lustre-jobreport compare --baseline until=2026-11-01
--candidate since=2026-11-01` over the dataset and the records not compacted yet.

The changes (sim quirks follow the tickets of notes/client-regressions.md):
  ra-regression  2.15.4 -> 2.15.5 with the Pleiades read-ahead regression (8 KiB read RPCs)
  lu15274        2.15.4 -> 2.15.5 with LU-15274 (slow small-file reads, RPCs unchanged)
  tunable        2.15.4 -> 2.15.4 with max_read_ahead_mb = 0 (no Lustre change at all)
  improvement    2.15.4 with LU-8515's poor write aggregation -> 2.15.5 without it
  hybrid         2.15.4 -> 2.17.0 (hybrid I/O on: large buffered I/O goes as direct I/O)
  no-change      2.15.4 -> 2.15.5, nothing else
  few-jobs       the read-ahead regression with 3 jobs per application
Every node runs the same kernel and OS image on both sides (an upgrade that changes them too
is reported with them named: see the tunable case for how a cause is told).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from lustre_jobreport import cli, config
from lustre_jobreport.compare import model as compare
from lustre_jobreport.records import recordset

from kit.fleet import APPS, BASELINE_MONTH, CANDIDATE_MONTH, IMAGE, SPLIT, Client, Fleet

JOBS = 8
KIND = {a.name: a.kind for a in APPS}
SEQUENTIAL_READERS = {a.name for a in APPS if a.kind in ("seq-reader", "small-file-reader")}


def client(version: str, quirks=(), **settings) -> Client:
    return Client(version, tuple(quirks), dict(IMAGE, **settings))


SCENARIOS = {
    "ra-regression": (None, client("2.15.5", ["ra-8k-rpcs"]), JOBS),
    "lu15274": (None, client("2.15.5", ["lu15274"]), JOBS),
    "tunable": (None, client("2.15.4", max_read_ahead_mb=0), JOBS),
    "improvement": (client("2.15.4", ["poor-write-aggregation"]), client("2.15.5"), JOBS),
    "hybrid": (None, client("2.17.0"), JOBS),
    "no-change": (None, client("2.15.5"), JOBS),
    "few-jobs": (None, client("2.15.5", ["ra-8k-rpcs"]), 3),
}


@pytest.fixture(scope="module")
def cluster():
    """The simulated cluster: its trees on tmpfs where there is one (the simulator renames
    every stats file at each run: 10x faster there), one common baseline side."""
    shm = Path("/dev/shm")
    roomy = os.access(shm, os.W_OK) and shutil.disk_usage(shm).free > 512 << 20   # containers: 64 MiB
    base = shm if roomy else None
    work = Path(tempfile.mkdtemp(prefix="ljr-fleet-", dir=base))
    try:
        fleet = Fleet(work / "nodes", work / "baseline")
        (work / "baseline").mkdir()
        fleet.side(client("2.15.4"), BASELINE_MONTH, APPS, JOBS, random.Random(2026))
        yield work, fleet
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _compare(records: Path, dataset: Path, conf: Path, fmt: str = "json") -> str:
    out = records.parent / f"compare.{fmt}"
    rc = cli.main(["--config", str(conf), "compare", "--baseline", f"until={SPLIT}", "--candidate",
                   f"since={SPLIT}", "--records", str(records), "--dataset", str(dataset),
                   "--format", fmt, "-o", str(out)])
    assert rc == 0
    return out.read_text()


@pytest.fixture(scope="module")
def upgrades(cluster):
    """Each scenario's records (the baseline's compacted into the dataset, the candidate's left
    as JSON records) and compare's JSON over them."""
    work, fleet = cluster
    conf = work / "config.toml"
    conf.write_text("")
    out = {}
    for seed, (name, (baseline, candidate, jobs)) in enumerate(SCENARIOS.items()):
        records, dataset = work / name / "records", work / name / "dataset"
        records.parent.mkdir()
        if baseline is None:
            shutil.copytree(work / "baseline", records)
        else:
            records.mkdir()
            fleet.records_dir = records
            fleet.side(baseline, BASELINE_MONTH, APPS, JOBS, random.Random(seed))
        assert cli.main(["--config", str(conf), "records", "compact", "--records", str(records),
                         "--dataset", str(dataset)]) == 0
        fleet.records_dir = records
        fleet.side(candidate, CANDIDATE_MONTH, APPS, jobs, random.Random(100 + seed))
        out[name] = json.loads(_compare(records, dataset, conf))
        out[name]["_paths"] = (records, dataset, conf)
    return out


def verdicts(doc: dict) -> dict[str, str]:
    """application -> its group's verdict (one filesystem, one group per application)."""
    got = {g["key"]["job_name"]: g["verdict"] for g in doc["groups"] if g["fs"] == "scratch"}
    assert sorted(got) == sorted(KIND), f"one group per application: {sorted(got)}"
    return got


def group(doc: dict, app: str) -> dict:
    return next(g for g in doc["groups"] if g["key"]["job_name"] == app and g["fs"] == "scratch")


def metric(g: dict, mid: str) -> dict:
    return next(m for m in g["metrics"] if m["id"] == mid)


def test_the_read_ahead_regression_is_flagged_for_sequential_readers_only(upgrades):
    doc = upgrades["ra-regression"]
    v = verdicts(doc)
    assert {a for a, x in v.items() if x == "regression"} == SEQUENTIAL_READERS
    for app in SEQUENTIAL_READERS:
        g = group(doc, app)
        assert g["cause"] == "lustre" and g["n_baseline"] == g["n_candidate"] == JOBS
        small = metric(g, "small_read_rpc_share")
        assert small["verdict"] == "regression" and small["candidate_median"] > 0.9 > 0.1 > small["baseline_median"]
        assert small["q_value"] <= 0.05 and small["effect"] >= 0.9
    # writers and codes whose reads were already small: nothing
    for app in ("checkpoint", "randread", "smallwrite"):
        assert v[app] == "no_change", (app, group(doc, app))
    assert doc["summary"]["regression"] == len(SEQUENTIAL_READERS)


def test_the_lu15274_like_client_is_flagged_through_call_latency_for_small_file_readers(upgrades):
    doc = upgrades["lu15274"]
    v = verdicts(doc)
    assert {a for a, x in v.items() if x == "regression"} == {"smallfiles"}
    g = group(doc, "smallfiles")
    lat = metric(g, "read_latency_us")
    assert lat["verdict"] == "regression" and lat["candidate_median"] > 20 * lat["baseline_median"]
    # the RPC histogram did not move: only the latency says it
    for mid in ("small_read_rpc_share", "mean_read_rpc_bytes", "read_rpcs_per_gib"):
        assert metric(g, mid)["verdict"] == "no_change", mid
    assert g["cause"] == "lustre"


def test_a_tunable_change_alone_is_a_settings_change_not_a_client_regression(upgrades):
    doc = upgrades["tunable"]
    v = verdicts(doc)
    regressed = {a for a, x in v.items() if x == "regression"}
    assert "seqread-64k" in regressed            # read-ahead off: its 64 KiB calls leave as 64 KiB RPCs
    assert regressed <= SEQUENTIAL_READERS
    for g in doc["groups"]:
        assert g["cause"] == "settings", g["key"]
        assert [c["what"] for c in g["changes"]] == ["max_read_ahead_mb"]
        assert g["changes"][0]["baseline"] == [1024] and g["changes"][0]["candidate"] == [0]
    text = _compare(*upgrades["tunable"]["_paths"], fmt="text")
    assert "max_read_ahead_mb" in text and "1024" in text


def test_better_small_write_aggregation_is_an_improvement(upgrades):
    doc = upgrades["improvement"]
    v = verdicts(doc)
    assert v["smallwrite"] == "improvement"
    assert metric(group(doc, "smallwrite"), "full_write_rpc_share")["verdict"] == "improvement"
    assert "regression" not in v.values()


def test_hybrid_io_shifts_are_named_expected_not_regressions(upgrades):
    doc = upgrades["hybrid"]
    v = verdicts(doc)
    assert "regression" not in v.values(), {a: x for a, x in v.items() if x == "regression"}
    ckpt = group(doc, "checkpoint")
    shifted = [m for m in ckpt["metrics"] if m["verdict"] in ("regression", "improvement")]
    assert shifted and all(m.get("expected", "").startswith("hybrid I/O") for m in shifted)


def test_a_no_change_upgrade_gives_no_regression(upgrades):
    doc = upgrades["no-change"]
    assert set(verdicts(doc).values()) == {"no_change"}


def test_too_few_jobs_is_not_enough_data_never_a_verdict(upgrades):
    doc = upgrades["few-jobs"]
    assert set(verdicts(doc).values()) == {"not_enough_data"}
    assert all(g["n_candidate"] == 3 and g["metrics"] == [] for g in doc["groups"])


def test_false_regressions_over_many_random_splits_of_no_change_jobs_stay_under_q(upgrades):
    """The no-change upgrade's 16 jobs per application, split at random into two sides of 8,
    200 times: every verdict of "regression" is a false alarm. Benjamini-Hochberg at q = 0.05
    and the effect-size rules keep their share under q."""
    records, dataset, conf = upgrades["no-change"]["_paths"]
    table, _ = recordset.load("", records, dataset)
    rows = table.to_pylist()
    by_app: dict[str, list] = {}
    for r in rows:
        by_app.setdefault(r["job_name"], []).append(r)
    settings = compare.Settings.of(config.Config().values["compare"])
    false_groups = tests = false_metrics = 0
    rng = random.Random(7)
    for _ in range(200):
        base, cand = [], []
        for jobs in by_app.values():
            jobs = jobs[:]
            rng.shuffle(jobs)
            half = len(jobs) // 2
            base += jobs[:half]
            cand += jobs[half:]
        doc = compare.compare(base, cand, settings).doc
        for g in doc["groups"]:
            false_groups += g["verdict"] == "regression"
            for m in g["metrics"]:
                tests += m["p_value"] is not None
                false_metrics += m["verdict"] == "regression"
    rate = false_groups / (200 * len(by_app))
    print(f"\nno-change splits: {false_groups} false group regressions in {200 * len(by_app)} groups "
          f"({rate:.4f}); {false_metrics} false metric regressions in {tests} tests")
    assert rate <= 0.05


def test_validation_table(upgrades):
    """Application x upgrade -> the group's verdict (printed with -s; the closing table of issue
    10). Every cell is a verdict compare defines, for every application."""
    names = [a.name for a in APPS]
    lines = ["application       " + " ".join(f"{s:>14}" for s in SCENARIOS)]
    for app in names:
        cells = [verdicts(upgrades[s])[app] for s in SCENARIOS]
        assert set(cells) <= set(compare.VERDICTS)
        lines.append(f"{app:<18}" + " ".join(f"{c:>14}" for c in cells))
    print("\n" + "\n".join(lines))
