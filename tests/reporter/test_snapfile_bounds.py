"""Bad snapshot and spool files cost one clear line, bounded memory and time (issue 9 §3)."""

import base64
import json
import subprocess
import sys
import zlib

import pytest

from lustre_jobreport import snapfile, snapformat
from lustre_jobreport.errors import SnapshotFileError

from snapshots import node, snap

# A child reading the file under an address-space limit: what inflates to GiBs must be refused
# long before, as one error line and exit 2.
READ_UNDER_LIMIT = """
import resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from lustre_jobreport.cli import main
t = time.monotonic()
rc = main(["report", sys.argv[1], sys.argv[1]])
print(f"{time.monotonic() - t:.2f}", file=sys.stderr)
sys.exit(rc)
"""


def _bomb(gib: int) -> str:
    """zlib of `gib` GiB of zero bytes, base64, as a packed value ("z:")."""
    c, zeros = zlib.compressobj(9), bytes(64 << 20)
    parts = [c.compress(zeros) for _ in range(gib * 16)] + [c.flush()]
    return "z:" + base64.b64encode(b"".join(parts)).decode()


def _envelope(metrics=None, hosts=None, taken_at=1.0, **extra):
    doc = {"schema": "lustre-jobreport/2", "kind": "snapshot", "taken_at": taken_at,
           "hosts": hosts if hosts is not None else [{"name": "n1", "spec": "n1", "ok": True}],
           "metrics": metrics or {}}
    doc.update(extra)
    return doc


def _read_in_child(path):
    r = subprocess.run([sys.executable, "-c", READ_UNDER_LIMIT, str(path)], capture_output=True, text=True,
                       timeout=60)
    lines = r.stderr.strip().splitlines()
    return r.returncode, lines[:-1], float(lines[-1]) if lines and lines[-1][0].isdigit() else None


@pytest.fixture(scope="module")
def bomb():
    return _bomb(4)   # ~4 MB that would inflate to 4 GiB


def test_packed_values_that_inflate_to_gibs_are_refused_within_bounds(tmp_path, bomb):
    metric = {"pmid": "220.2.10", "sem": "counter", "type": "u64", "instances": ["scratch"],
              "values": bomb, "present": snapfile._pack(snapformat_bits(1))}
    path = tmp_path / "bomb.json"
    path.write_text(json.dumps(_envelope({"lustreclient.llite.open": metric})))
    assert path.stat().st_size < 8 << 20
    rc, err, took = _read_in_child(path)
    assert rc == 2 and len(err) == 1 and "Traceback" not in "".join(err), err
    assert "inflates past 8 bytes" in err[0] and "bomb.json" in err[0]
    assert took is not None and took < 2.0


def test_pminfo_text_that_inflates_to_gibs_is_refused_within_bounds(tmp_path, bomb):
    hosts = [{"name": "n1", "spec": "n1", "ok": True, "error": None, "fetched_at": 1.0,
              "pminfo_z": bomb[2:]}]
    path = tmp_path / "spool.json"
    path.write_text(json.dumps(_envelope(hosts=hosts)))
    rc, err, took = _read_in_child(path)
    assert rc == 2 and len(err) == 1 and "pminfo text of n1" in err[0] and "inflates past" in err[0], err
    assert took is not None and took < 2.0


def snapformat_bits(n):
    import numpy as np
    return np.packbits(np.ones(n, dtype=bool))


def test_tables_declaring_too_many_values_are_refused(tmp_path):
    hosts = [{"name": f"n{i}", "spec": "x", "ok": True} for i in range(2000)]
    metric = {"sem": "counter", "type": "u64", "instances": [f"i{j}" for j in range(70_000)],
              "values": "z:", "present": "z:"}
    path = tmp_path / "wide.json"
    path.write_text(json.dumps(_envelope({"lustreclient.osc.read_bytes": metric}, hosts=hosts)))
    with pytest.raises(SnapshotFileError, match="declare more than"):
        snapfile.read(path)


def test_a_file_over_the_size_cap_is_refused_without_reading_it(tmp_path, monkeypatch):
    monkeypatch.setattr(snapformat, "MAX_FILE_BYTES", 1000)
    path = tmp_path / "big.json"
    path.write_text(json.dumps(_envelope()) + " " * 2000)
    with pytest.raises(SnapshotFileError, match="more than"):
        snapfile.read(path)


@pytest.mark.parametrize("taken_at", ["NaN", "Infinity", "-Infinity", "1e300", "-5", '"yesterday"', "true", "null"])
def test_a_bad_taken_at_is_one_clear_line(tmp_path, taken_at):
    path = tmp_path / "t.json"
    text = json.dumps(_envelope()).replace('"taken_at": 1.0', f'"taken_at": {taken_at}')
    path.write_text(text)
    r = subprocess.run([sys.executable, "-m", "lustre_jobreport", "report", str(path), str(path)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "t.json" in r.stderr


@pytest.mark.parametrize("fetched_at", ["NaN", "1e308", "-1"])
def test_a_bad_fetched_at_is_refused(tmp_path, fetched_at):
    path = tmp_path / "f.json"
    doc = _envelope(hosts=[{"name": "n1", "spec": "n1", "ok": True, "fetched_at": 7.5}])
    path.write_text(json.dumps(doc).replace("7.5", fetched_at))
    with pytest.raises(SnapshotFileError):
        snapfile.read(path)


def test_deeply_nested_json_is_refused(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"schema": "lustre-jobreport/2", "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(SnapshotFileError, match="nested too deeply|invalid JSON"):
        snapfile.read(path)


def test_a_schema_1_file_is_still_read_with_its_start_times_in_seconds(tmp_path):
    s = snap(5.0, node("n1", llite={"open": 3, "stats_start": 1700000000}))
    doc = snapfile.to_json(s)
    doc["schema"] = "lustre-jobreport/1"
    for m in doc["metrics"].values():
        m.pop("pmid")
    (tmp_path / "v1.json").write_text(json.dumps(doc))
    back = snapfile.read(tmp_path / "v1.json")
    assert back.value("lustreclient.llite.stats_start", "n1", "scratch") == 1700000000 * 1_000_000
    assert back.value("lustreclient.llite.open", "n1", "scratch") == 3
    assert back.cluster("lustreclient.llite.open") == 2    # from the catalog, the file has no PMIDs


def test_a_schema_1_spool_document_of_pminfo_text_is_still_read(tmp_path):
    text = ('lustreclient.llite.open\n'
            '    Data Type: 64-bit unsigned int  InDom: 220.0 0x37000000\n'
            '    Semantics: counter  Units: count\n'
            '    inst [0 or "scratch"] value 5303\n')
    doc = {"schema": "lustre-jobreport/1", "kind": "begin-pminfo", "taken_at": 10.0,
           "hosts": [{"name": "n1", "spec": "n1", "fetched_at": 10.5, "error": None,
                      "pminfo_z": base64.b64encode(zlib.compress(text.encode())).decode()},
                     {"name": "n2", "spec": "n2", "fetched_at": None, "error": "no answer within 2 s",
                      "pminfo_z": None}]}
    (tmp_path / "old.begin.json").write_text(json.dumps(doc))
    s = snapfile.read(tmp_path / "old.begin.json")
    assert s.value("lustreclient.llite.open", "n1", "scratch") == 5303
    assert not s.hosts["n2"].ok and s.hosts["n2"].error == "no answer within 2 s"
