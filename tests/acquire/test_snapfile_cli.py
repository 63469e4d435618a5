import json
import subprocess
import sys

import numpy as np
import pytest

from lustre_jobreport.acquire import snapfile
from lustre_jobreport.errors import SnapshotFileError

from kit.snapshots import host, node, snap


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "lustre_jobreport", *args], capture_output=True, text=True)


def test_roundtrip(tmp_path):
    s = snap(12.5, node("n1", llite={"open": 2**64 - 1}, osc={3: {"read_bytes": 7}}),
             node("n2", version="2.12.9", osc={9: {"read_bytes": 1}}),
             host("n3", {}, ok=False, error="refused"))
    snapfile.write(s, tmp_path / "a.json")
    back = snapfile.read(tmp_path / "a.json")
    assert back.taken_at == 12.5 and back.hosts == s.hosts
    for h in ("n1", "n2", "n3"):
        for m in s.metrics:
            assert back.instance_values(m, h) == s.instance_values(m, h)
    assert back.value("lustreclient.llite.open", "n1", "scratch") == 2**64 - 1
    assert back.instance_values("lustreclient.osc.read_bytes", "n2") == {"scratch-OST0009": 1}
    assert back.value("lustreclient.version", "n2") == "2.12.9" and back.value("lustreclient.version", "n3") is None
    assert list(tmp_path.iterdir()) == [tmp_path / "a.json"]   # no temp file left


def _doc(metric):
    return json.dumps({"schema": "lustre-jobreport/1", "kind": "snapshot", "taken_at": 1,
                       "hosts": [{"name": "n", "spec": "n", "ok": True}], "metrics": {"m": metric}})


@pytest.mark.parametrize("content, why", [
    ("{not json", "invalid JSON"),
    ("", "invalid JSON"),
    ('{"schema": "other/1"}', "foreign schema"),
    ('{"schema": "lustre-jobreport/99", "kind": "snapshot"}', "newer than this reader"),
    (_doc({"sem": "counter", "type": "u64", "instances": ["i"], "values": "z:!!", "present": ""}), "damaged"),
    (_doc({"sem": "counter", "type": "u64", "instances": ["i"], "values": "z:AAAA", "present": ""}), "damaged"),
    (_doc({"sem": "counter", "type": "u64", "instances": ["i"], "values": "x:AAAA", "present": ""}), "'z:' or 'r:'"),
    (_doc({"sem": "counter", "type": "u64", "instances": ["i", "j"],
           "values": snapfile._pack(np.array([1], "<u8")), "present": snapfile._pack(np.packbits([1, 1]))}),
     "1 packed values, expected 2"),
    (_doc({"sem": "rate", "type": "u64", "instances": []}), "bad sem"),
    (_doc({"sem": "discrete", "type": "string", "instances": ["i"], "levels": [5], "values": ""}), "list of strings"),
    (_doc({"sem": "discrete", "type": "string", "instances": ["i"], "levels": ["a"],
           "values": snapfile._pack(np.array([2], "<u4"))}), "missing level"),
])
def test_corrupt_snapshot_is_a_clear_error(tmp_path, content, why):
    p = tmp_path / "bad.json"
    p.write_text(content)
    with pytest.raises(SnapshotFileError, match=why):
        snapfile.read(p)


def test_cli_corrupt_snapshot_one_line_exit_2(tmp_path):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    snapfile.write(snap(0.0, node("n1")), good)
    bad.write_bytes(b'{"schema": "lustre-jobreport/1", "kind": "snapshot", "hosts": ')  # cut short
    r = run_cli("report", str(good), str(bad))
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lustre-jobreport: error: ") and "bad.json" in lines[0]
    assert "Traceback" not in r.stderr


def test_cli_missing_file_exit_2(tmp_path):
    r = run_cli("report", str(tmp_path / "nope.json"), str(tmp_path / "nope2.json"))
    assert r.returncode == 2 and "no such snapshot file" in r.stderr


def test_cli_report_json_from_files(tmp_path):
    snapfile.write(snap(0.0, node("n1", llite={"open": 1})), tmp_path / "b.json")
    snapfile.write(snap(5.0, node("n1", llite={"open": 4})), tmp_path / "e.json")
    r = run_cli("report", str(tmp_path / "b.json"), str(tmp_path / "e.json"), "--format", "json",
                "--job-id", "77", "--user", "ann")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["job"]["id"] == "77" and doc["filesystems"]["scratch"]["ops"]["open"] == 3


def test_node_lists_and_host_map(tmp_path):
    from lustre_jobreport import config
    from lustre_jobreport.acquire import snapshot

    p = tmp_path / "c.toml"
    p.write_text('[snapshot]\nhost_spec = "{host}-ib:44321"\n[hosts]\nnode02 = "localhost:4431"\n')
    cfg = config.load(p)
    got = [(t.name, t.spec) for t in snapshot.targets_for_nodes("node[01-02],gpu7", cfg)]
    assert got == [("node01", "node01-ib:44321"), ("node02", "localhost:4431"), ("gpu7", "gpu7-ib:44321")]
    nodefile = tmp_path / "nodes"
    nodefile.write_text("n1\nn1\nn2\n# comment\n\nn3=unix:/x/pmcd.socket\n")    # PBS: once per core
    got = [(t.name, t.spec) for t in snapshot.read_hosts_file(nodefile, cfg)]
    assert got == [("n1", "n1-ib:44321"), ("n2", "n2-ib:44321"), ("n3", "unix:/x/pmcd.socket")]
    with pytest.raises(Exception, match="bad node list"):
        snapshot.targets_for_nodes("node[01-", cfg)


def test_cli_shared_node_is_reported(tmp_path):
    snapfile.write(snap(0.0, node("n1", llite={"open": 1})), tmp_path / "b.json")
    snapfile.write(snap(5.0, node("n1", llite={"open": 4})), tmp_path / "e.json")
    r = run_cli("report", str(tmp_path / "b.json"), str(tmp_path / "e.json"), "--format", "json",
                "--shared-node", "n1=job 99", "--shared-node", "n7")
    doc = json.loads(r.stdout)
    shared = [q for q in doc["data_quality"] if q["id"] == "SHARED_NODE"]
    assert [(q["host"], "job 99" in q["detail"]) for q in shared] == [("n1", True)]   # n7 is not in the job
