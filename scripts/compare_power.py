#!/usr/bin/env python3
"""How much `compare` finds, and how often it cries wolf: a power table from the site generator.

The jobs come from tests/kit/sitefleet.py, through the real path (the real agent in private
pmcds on simulator trees, snapshots over PCP, report.build, records.store, `records compact`,
rows read back from the dataset). Per CV (0.3, 0.6) ten sample-reading applications (1 node,
job-to-job CV of the mean read RPC size as given, measured and printed) are run POOL jobs each
on the baseline client (Lustre 2.15.4) and on each regressed one (2.15.5 with the simulator's
quirk ra-split-rpcs=F: read-ahead RPCs F times as many, the mean read RPC F times smaller, spec
for spec; or ra-8k-rpcs: read-ahead in 8 KiB RPCs). The site's applications no read-ahead quirk
touches (random reads, writers) are run on every client too, as the unchanged part of a fleet.

A cell (shift, jobs a side n) is FLEETS fleets, each the ten applications at n jobs a side (2n
distinct specs: n from the baseline pool, n from the shifted one) beside the unchanged
applications; compare judges each fleet in-process (compare.model.compare, default Settings);
the cell is the share of the ten groups called a regression. The "none" row draws both sides
from the baseline pool: its cell is the share of groups called anything (a false alarm rate per
group). Last, NO_CHANGE site fleets (sitefleet.SITE_APPS, 1 to 64 nodes, both sides from one
pool): the share with any regression or improvement, and of tested metrics called.

compare is whatever `lustre_jobreport` this Python imports, so the same cached jobs can be
judged before and after a change of the statistics:

    .venv/bin/python scripts/compare_power.py --cache /var/tmp/power-pools > before.md
    (change compare)
    .venv/bin/python scripts/compare_power.py --cache /var/tmp/power-pools > after.md

The first run builds the pools (10,260 jobs, 12,301 job-nodes: 10 minutes on this 2-core
machine, busy), later ones read them from the cache and judge the 920 fleets in about 20
seconds. A cache holds the records, the dataset and which job is which; delete it after
changing the generator. Private pmcds only, stopped by PID.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))                # the tests' kit (sitefleet, privpmcd)

import numpy as np  # noqa: E402

import lustre_jobreport  # noqa: E402
from lustre_jobreport.compare import model  # noqa: E402

from kit import sitefleet as sf  # noqa: E402

CVS = (0.3, 0.6)
JOBS = (5, 6, 8, 12, 20, 40)
GROUPS = 10
ROWS = ("none", "split1.25", "split1.5", "split2", "split4", "ra8k")
ROW_NAMES = {"none": "none (both sides unchanged: groups called)", **sf.SHIFTS}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def table_apps(cv: float) -> tuple[sf.SiteApp, ...]:
    return sf.shift_apps(cv, GROUPS, prefix="power", nodes=((1,),))


def pools(pool: int) -> list[sf.Pool]:
    when = sf.month(2026, 9)
    tags = [t for t in ROWS if t != "none"]
    return [*(sf.Pool(a, "base", 2 * a.jobs[1], when) for a in sf.SITE_APPS),
            *(sf.Pool(a, t, 2 * a.jobs[1], when) for a in sf.INERT_APPS for t in tags),
            *(sf.Pool(a, t, pool, when) for cv in CVS for a in table_apps(cv) for t in ("base", *tags))]


def cell(jobs: sf.Jobs, apps, tag: str, n: int, fleets: int, rng: random.Random) -> float:
    """The share of the applications' groups called a regression (for "none": called anything)
    over `fleets` fleets of n jobs a side."""
    cand = "base" if tag == "none" else tag
    hits = 0
    for _ in range(fleets):
        plan = [sf.Draw(a.name, "base", cand, n) for a in apps]
        plan += sf.site_plan(rng, sf.INERT_APPS, "base", cand)
        doc = model.compare(*sf.draw(jobs, plan, rng), model.Settings()).doc
        for a in apps:
            got = sf.verdicts_of(doc, a.name)
            hits += any(v in sf.ALARMS for v in got) if tag == "none" else "regression" in got
    return hits / (fleets * len(apps))


def no_change(jobs: sf.Jobs, fleets: int, rng: random.Random) -> tuple[int, int, int, int]:
    """(fleets with a false alarm, groups, metrics called, metrics tested) over site fleets."""
    alarmed = groups = called = tested = 0
    for _ in range(fleets):
        doc = model.compare(*sf.draw(jobs, sf.site_plan(rng), rng), model.Settings()).doc
        alarmed += sf.alarms(doc) > 0
        c, t = sf.metric_calls(doc)
        groups, called, tested = groups + len(doc["groups"]), called + c, tested + t
    return alarmed, groups, called, tested


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", type=Path, required=True, help="the pools' directory (made, or reused)")
    ap.add_argument("--fleets", type=int, default=10, help="fleets per cell (default 10: 100 groups)")
    ap.add_argument("--no-change", type=int, default=200, help="no-change site fleets (default 200)")
    ap.add_argument("--jobs", default=",".join(map(str, JOBS)), help="jobs a side, comma-separated")
    ap.add_argument("--seed", type=int, default=23)
    ap.add_argument("-o", "--output", type=Path, help="write the table here (default: stdout)")
    a = ap.parse_args(argv)
    sides = [int(x) for x in a.jobs.split(",")]
    pool = 2 * max(sides)

    started = time.monotonic()
    history = sf.SiteHistory(a.cache)
    ran = history.build(pools(pool), log=log)
    if ran:
        history.compact()
        log(f"built {ran} jobs ({history.job_nodes} job-nodes, {history.cost * 1000:.0f} ms each) "
            f"in {(time.monotonic() - started) / 60:.1f} min")
    jobs = history.load()
    built = time.monotonic()

    rng = random.Random(a.seed)
    lines = ["## compare's power on simulated site fleets",
             "",
             f"compare: `{Path(lustre_jobreport.__file__).parent}`; jobs: {a.cache} "
             f"({jobs.table.num_rows} rows); cell = share of {GROUPS} groups x {a.fleets} fleets "
             "called a regression (row \"none\": called anything)",
             ""]
    for cv in CVS:
        apps = table_apps(cv)
        realised = np.mean([jobs.realised_cv(x.name) for x in apps])
        lines += [f"### job-to-job CV {cv} (realised {realised:.2f}: mean_read_rpc_bytes over each pool)", "",
                  "| shift \\ jobs a side | " + " | ".join(map(str, sides)) + " |",
                  "|---|" + "---:|" * len(sides)]
        for tag in ROWS:
            shares = []
            for n in sides:
                shares.append(cell(jobs, apps, tag, n, a.fleets, rng))
                log(f"CV {cv} {tag} n={n}: {shares[-1]:.2f}")
            lines.append(f"| {ROW_NAMES[tag]} | " + " | ".join(f"{s:.0%}" for s in shares) + " |")
        ratios = {t: np.median(np.concatenate([jobs.mean_read_rpc_bytes(x.name, "base")
                                               / jobs.mean_read_rpc_bytes(x.name, t) for x in apps]))
                  for t in ROWS if t != "none"}
        lines += ["", "realised shift (median over specs of baseline / shifted mean read RPC, the same job): "
                  + ", ".join(f"{t} {r:.2f}x" for t, r in ratios.items()), ""]
    alarmed, groups, called, tested = no_change(jobs, a.no_change, rng)
    lines += [f"### false alarms: {a.no_change} no-change site fleets (8 applications, 1-64 nodes, 5-40 jobs a side)", "",
              f"{alarmed} of {a.no_change} fleets with a regression or improvement ({alarmed / a.no_change:.1%}); "
              f"{called} of {tested} tested metrics called ({called / max(1, tested):.2%}); {groups} groups", "",
              f"(pools {'built' if ran else 'read from the cache'} in {(built - started) / 60:.1f} min, "
              f"fleets judged in {(time.monotonic() - built) / 60:.1f} min)"]
    text = "\n".join(lines) + "\n"
    if a.output:
        a.output.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
