"""Validation corpus (issue 5, item 5): every reference workload of notes/io-findings.md §3 as a
simulated job on real parts -- lustre-sim trees, one private pmcd with the real
pmdalustreclient per simulated node, snapshot.take, report.build -- with the flags it must fire
and must not fire. The cases and their key numbers are in tests/kit/corpus_cases.py; the table of
tests/corpus/README.md is generated from them (and checked here).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from kit import corpuskit
from kit.corpus_cases import CASES, CLUSTERS

README = Path(__file__).resolve().parent / "README.md"
BEGIN, END = "<!-- corpus table: begin -->", "<!-- corpus table: end -->"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """The sim trees are rewritten (file + rename) hundreds of times per case: on tmpfs when
    there is one (a third of the time on a virtual disk), else under pytest's tmp dir."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        d = Path(tempfile.mkdtemp(prefix="lustre-jobreport-corpus-", dir=shm))
        yield d
        shutil.rmtree(d, ignore_errors=True)
    else:
        yield tmp_path_factory.mktemp("corpus")


@pytest.fixture(scope="module")
def reports(workdir):
    """cluster id -> {case id: report}, each cluster run once, on first use."""
    done: dict[str, dict | Exception] = {}

    def get(cluster) -> dict:
        if cluster.id not in done:
            try:
                done[cluster.id] = corpuskit.run_cluster(cluster, workdir / cluster.id)
            except Exception as exc:           # once per cluster, not once per case
                done[cluster.id] = exc
                raise
        if isinstance(done[cluster.id], Exception):
            raise RuntimeError(f"cluster {cluster.id} failed to run (see its first case)") from done[cluster.id]
        return done[cluster.id]
    return get


@pytest.mark.parametrize("case_id", list(CASES))
def test_case(case_id, reports):
    cluster, case = CASES[case_id]
    doc = reports(cluster)[case_id]
    assert doc["job"]["hosts"] == [f"node{i}" for i in range(cluster.nodes)]
    assert doc["job"]["hosts_missing"] == []
    corpuskit.verify(case, doc)


def test_every_flag_is_exercised():
    """Each flag of DESIGN §4 that a reference workload can raise fires in some case, and each
    case names what must stay quiet."""
    fired = {f for _, c in CASES.values() for f in c.fires}
    untouched = set(corpuskit.FLAGS) - fired
    # no reference workload of io-findings §3 is a statfs, fsync or pure-metadata-rate storm
    assert untouched == {"STATFS_STORM", "FSYNC_STORM", "METADATA_RATE"}, untouched
    assert all(c.must_not for _, c in CASES.values())
    quiet = [c.id for _, c in CASES.values() if not c.fires]
    assert {"overflow", "cart3d", "usm3d", "madbench-unique", "ior-fpp", "ior-fpp-4nodes"} <= set(quiet)


def test_multi_node_cases_use_several_pmcds():
    assert {cl.id for cl in CLUSTERS if cl.nodes > 1} == {"boito-smp", "madbench", "rank0", "eviction"}


def test_readme_table_is_the_case_table():
    text = README.read_text()
    assert BEGIN in text and END in text, "README.md lost its table markers"
    table = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    assert table == corpuskit.table(CLUSTERS).strip(), \
        "tests/corpus/README.md is out of date: regenerate the table with PYTHONPATH=tests .venv/bin/python -m kit.corpuskit"
