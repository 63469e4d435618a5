"""docs/design.md, the project's contracts, names what the code has: every key of a real JSON
report, every data_quality id, every flag id, every instance domain, every metric of the
reporter's catalog (by name or in its family's row), the job view's metrics, sources and reason
codes, and the admin files it points to."""

from __future__ import annotations

import re
from pathlib import Path

from lustre_jobreport import catalog, config
from lustre_jobreport.records import jobrow
from lustre_jobreport.report import document as report
from lustre_jobreport.report.flags import RULES

from kit.snapshots import node, snap

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "design.md").read_text()


def named(word: str, text: str = DOC) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


def a_report() -> dict:
    b = snap(0.0, node("n1", llite={"read_bytes": 0, "open": 0}, osc={3: {"read_bytes": 0, "read_rpcs": 0}},
                       rpc={("read", "4K"): 0}),
             node("n2", llite={"read_bytes": 0, "open": 0}))
    e = snap(100.0, node("n1", llite={"read_bytes": 1 << 30, "open": 5000}, osc={3: {"read_bytes": 1 << 30,
                                                                                   "read_rpcs": 1024}},
                         rpc={("read", "4K"): 2000}),
             node("n2", llite={"read_bytes": 1 << 20, "open": 7}))
    return report.build(b, e, config.Config(), job_id="1", user="u")


def test_every_key_of_a_json_report_is_documented():
    doc = a_report()
    block = re.search(r"### 3\.1 JSON report.*?```(.*?)```", DOC, re.S).group(1)
    keys = set(doc) | set(doc["job"])
    keys |= {k for fs in doc["filesystems"].values() for k in fs}
    keys |= {k for c in doc["clients"].values() for k in c}
    keys |= {k for f in doc["flags"] for k in f} | {k for q in doc["data_quality"] for k in q}
    keys |= {k for fs in doc["filesystems"].values() for ost in fs["osts"].values() for k in ost}
    assert doc["flags"] and doc["filesystems"]["scratch"]["osts"]
    assert [k for k in sorted(keys) if not named(f'"{k}"', block)] == []
    assert named(f'"{doc["schema"]}"', block)


def test_every_data_quality_id_and_flag_id_is_documented():
    ids = set(jobrow.UNTRUSTED) | {"SHORT_JOB"}
    assert [i for i in sorted(ids) if not named(i)] == []
    # a rule per flag setting of the config, SMALL_RPC's two (read, write)
    settings = {k for k in config.DEFAULTS["flags"] if k.isupper()}
    assert len(settings) + 1 == len(RULES)
    flag_ids = (settings - {"SMALL_RPC"}) | {"SMALL_RPC_READ", "SMALL_RPC_WRITE"}
    table = re.search(r"## 4\. Flags.*?(?=\n## )", DOC, re.S).group(0)
    assert [f for f in sorted(flag_ids) if not named(f, table)] == []


def test_every_catalogued_metric_is_in_the_agent_contract():
    section = re.search(r"### 2\.2 Metrics.*?(?=\n### )", DOC, re.S).group(0)
    missing = []
    for m in catalog.METRICS:
        short = m.name.rsplit(".", 1)[1]
        family = m.name.rsplit(".", 1)[0]
        if not (named(m.name, section) or (named(f"`{family}.<op>`", section) and named(short, section))
                or re.search(rf"`{re.escape(family)}\.[\w.]+`[^|]*(?<![\w-])\.{re.escape(short)}(?![\w-])", section)
                or named(f"`{family}.*`", section)):
            missing.append(m.name)
    assert missing == []


def test_the_job_view_and_the_instance_domains_are_documented():
    section = re.search(r"### 2\.4 The job view.*?(?=\n## )", DOC, re.S).group(0)
    for name in (catalog.JOB_BEGIN_CONTROL, catalog.JOB_BEGIN_TIME, "lustreclient.control.job_end"):
        assert named(f"`{name}`", section), name
    assert f"220.{catalog.JOB_CLUSTER}.0" in section and f"220.({catalog.JOB_SLOT_CLUSTER0}+S).k" in section
    for j, js in enumerate(catalog.JOB_SOURCES):
        assert re.search(rf"`{js.key}` {j}\b", section), js.key
    for code, word in ((catalog.CLEARED, "CLEARED"), (catalog.REPLACED, "REPLACED"), (catalog.REMOUNTED, "REMOUNTED"),
                       (catalog.NOT_READ_AT_BEGIN, "NOT_READ_AT_BEGIN"), (catalog.NOT_READ_AT_END, "NOT_READ_AT_END"),
                       (catalog.GONE, "GONE"), (catalog.NOT_READ, "NOT_READ")):
        assert re.search(rf"\b{code} {word}\b", section), word
    assert f"{len(catalog.JOB_METRICS)} counters" in section and f"all {catalog.JOB_SLOTS} in use" in section
    indoms = re.search(r"### 2\.1 Instance domains.*?(?=\n### )", DOC, re.S).group(0)
    for name, serial in (("FS", 0), ("OSC", 1), ("MDC", 2), ("FS_BUCKET", 3), ("OSC_BUCKET", 4),
                         ("JOB", catalog.JOB_INDOM_SERIAL)):
        assert re.search(rf"^\| {name} \| 220\.{serial} \|", indoms, re.M), name


def test_the_admin_files_it_points_to_exist_and_it_is_linked():
    for path in ("packaging/pcp/pmrep/lustreclient.conf", "packaging/pcp/pmlogconf/lustreclient/summary",
                 "packaging/pcp/pmieconf/lustre/small_read_rpcs", "packaging/config.toml",
                 "docs/records.md", "docs/compare.md", "sim/lustre-sim.1"):
        assert (REPO / path).exists(), path
    for view in ("lustre-rpc", "lustre-md", "lustre-ost", "lustre-health"):
        assert named(f":{view}"[1:]) and f"[{view}]" in (REPO / "packaging/pcp/pmrep/lustreclient.conf").read_text()
    assert "docs/design.md" in (REPO / "README.md").read_text()


def test_the_map_names_every_subsystem_and_every_module_in_it():
    """§3.0's table has a row per folder of the package, and the row names exactly the folder's
    modules: the map a newcomer reads is the package as it is."""
    section = DOC[DOC.index("### 3.0"):DOC.index("### 3.1")]
    rows = re.findall(r"^\| `(\w+)/` \| [^|]+ \| ([^|]+) \|$", section, re.M)
    package = REPO / "reporter" / "lustre_jobreport"
    folders = {p.name for p in package.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert {folder for folder, _ in rows} == folders and len(folders) >= 7
    for folder, modules in rows:
        named_there = set(re.findall(r"`(\w+)`", modules))
        on_disk = {p.stem for p in (package / folder).glob("*.py") if p.stem != "__init__"}
        assert named_there == on_disk, folder
