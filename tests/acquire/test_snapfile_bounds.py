"""Bad snapshot and spool files cost one clear line, bounded memory and time (issue 9 §3)."""

import base64
import json
import subprocess
import sys
import zlib

import pytest

from lustre_jobreport.acquire import snapfile, snapformat
from lustre_jobreport.errors import SnapshotFileError

from kit.packed import zeros, zeros_bomb
from kit.snapshots import node, snap

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
    return "z:" + zeros_bomb(4)   # ~5.6 MB that would inflate to 4 GiB


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


BAD_TIMES = ["NaN", "Infinity", "-Infinity", "1e300", "-5", '"yesterday"', "true", "null"]


@pytest.mark.parametrize("schema", [2, 1])
@pytest.mark.parametrize("taken_at", BAD_TIMES)
def test_a_bad_taken_at_is_one_clear_line(tmp_path, taken_at, schema):
    """The line names the field, whichever schema the file has (schema 1 files are still read:
    the old reader took such a NaN for a time and crashed on it)."""
    path = tmp_path / "t.json"
    doc = _envelope(schema=f"lustre-jobreport/{schema}")
    path.write_text(json.dumps(doc).replace('"taken_at": 1.0', f'"taken_at": {taken_at}'))
    r = subprocess.run([sys.executable, "-m", "lustre_jobreport", "report", str(path), str(path)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
    [line] = r.stderr.strip().splitlines()
    assert f"{path}: not a usable snapshot file: bad taken_at " in line, line


@pytest.mark.parametrize("schema", [2, 1])
@pytest.mark.parametrize("fetched_at", ["NaN", "Infinity", "1e308", "-1", '"noon"'])
def test_a_bad_fetched_at_is_refused(tmp_path, fetched_at, schema):
    path = tmp_path / "f.json"
    doc = _envelope(hosts=[{"name": "n1", "spec": "n1", "ok": True, "fetched_at": 7.5}],
                    schema=f"lustre-jobreport/{schema}")
    path.write_text(json.dumps(doc).replace("7.5", fetched_at))
    with pytest.raises(SnapshotFileError, match="bad fetched_at of host n1 "):
        snapfile.read(path)


def test_a_constant_where_no_number_is_read_is_no_trouble(tmp_path):
    """NaN is refused where a number is read (the line names the field), not by the JSON parser
    wherever it stands: the parser cannot say where it was."""
    path = tmp_path / "x.json"
    path.write_text(json.dumps(_envelope(note=float("nan"))))
    assert snapfile.read(path).taken_at == 1.0


@pytest.mark.parametrize("instances", ["5", "NaN", '"abc"', "{}"])
def test_instances_that_are_no_list_are_one_clear_line(tmp_path, instances):
    path = tmp_path / "i.json"
    metric = {"sem": "counter", "type": "u64", "instances": "@", "values": "z:", "present": "z:"}
    path.write_text(json.dumps(_envelope({"lustreclient.llite.open": metric})).replace('"@"', instances))
    with pytest.raises(SnapshotFileError, match="'instances' must be a list of names"):
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


# A child reading one snapshot file with an address-space budget on top of what it has mapped
# once everything the reading needs is imported: the reading's peak must fit the budget.
READ_WITHIN_BUDGET = """
import resource, sys, time
from lustre_jobreport import cli
from lustre_jobreport.acquire import pminfoparse, snapfile
def mapped():
    for line in open("/proc/self/status"):
        if line.startswith("VmSize:"):
            return int(line.split()[1]) << 10
budget = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (mapped() + budget,) * 2)
t = time.monotonic()
s = snapfile.read(sys.argv[1])
took = time.monotonic() - t
print(len(s.hosts), sum(int(m.present.sum()) for m in s.metrics.values()), f"{took:.2f}")
"""


def _read_within(path, budget):
    """(hosts, values present, seconds) of reading path in a child with `budget` bytes to spare."""
    r = subprocess.run([sys.executable, "-c", READ_WITHIN_BUDGET, str(path), str(budget)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-1500:]
    hosts, values, took = r.stdout.split()
    return int(hosts), int(values), float(took)


def test_packed_values_are_inflated_at_the_cost_of_the_result_not_twice_it(tmp_path):
    """A table of 256 MiB of u64 is inflated into one buffer of its size: the steps and their
    join (twice the result) and a copy into u64 took 768 MiB; 384 MiB to spare is ample now."""
    hosts, width = 512, 65536                       # 32 Mi values, 256 MiB as u64
    metric = {"pmid": "220.3.0", "sem": "counter", "type": "u64",
              "instances": [f"s-OST{j:05x}" for j in range(width)], "values": "z:" + zeros(8 * hosts * width),
              "present": snapfile._pack(snapformat_bits(hosts * width))}
    path = tmp_path / "wide.json"
    path.write_text(json.dumps(_envelope({"lustreclient.osc.read_bytes": metric},
                                         hosts=[{"name": f"n{i}", "spec": "x", "ok": True} for i in range(hosts)])))
    assert _read_within(path, 384 << 20)[:2] == (hosts, hosts * width)


def test_a_file_within_the_caps_that_needs_more_memory_than_allowed_is_one_clear_line(tmp_path, bomb):
    """2,048 hosts x 65,535 instances: just under the cap on values (1 GiB as u64), read under a
    1 GiB address-space limit. It was a 28-line MemoryError traceback; now one line naming the file."""
    hosts, width = 2048, 65535
    assert hosts * width <= snapformat.MAX_TABLE_VALUES
    metric = {"pmid": "220.3.0", "sem": "counter", "type": "u64",
              "instances": [f"s-OST{j:05x}" for j in range(width)], "values": bomb, "present": "z:"}
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(_envelope({"lustreclient.osc.read_bytes": metric},
                                         hosts=[{"name": f"n{i}", "spec": "x", "ok": True} for i in range(hosts)])))
    rc, err, took = _read_in_child(path)
    assert rc == 2 and len(err) == 1 and "Traceback" not in "".join(err), err[-3:]
    assert f"{path}: needs more memory to read than this process may use" in err[0], err
    assert took is not None and took < 5.0


OSC_COUNTERS = ("read_bytes", "write_bytes", "read_rpcs", "write_rpcs", "req_count", "reconnects")


def _pminfo_text(size: int, seed: int) -> bytes:
    """A host's `pminfo -dfm` text of about `size` bytes: the OSC counters of as many OSCs as fit
    (the same OSC names on every host, as a job's hosts have them)."""
    oscs = _oscs_in(size)
    lines = []
    for k, name in enumerate(OSC_COUNTERS):
        lines.append(f"lustreclient.osc.{name} PMID: 220.3.{k}\n"
                     "    Data Type: 64-bit unsigned int  InDom: 220.1 0x37000001\n"
                     "    Semantics: counter  Units: byte\n")
        lines += [f'    inst [{i} or "scratch-OST{i:05x}-osc-ffff88812345"] value {seed * 7919 + i}\n'
                  for i in range(oscs)]
    text = "".join(lines).encode()
    assert len(text) <= size
    return text


def _oscs_in(size: int) -> int:
    """How many OSCs _pminfo_text puts in `size` bytes (its lines are at most 80 bytes long)."""
    return (size - 1000) // (len(OSC_COUNTERS) * 80)


def test_a_raw_file_at_the_caps_is_parsed_one_host_at_a_time_within_memory_and_time(tmp_path):
    """The raw form (pminfo text a host) at its caps: every host's text was inflated before any
    was parsed (8 hosts of 64 MiB: a MemoryError under 2 GiB after 55 s). Now each host is
    inflated, parsed and let go in turn, and hosts listing the same instances share the list."""
    per_host, total = snapformat.MAX_RAW_BYTES_PER_HOST, snapformat.MAX_RAW_BYTES
    n = total // per_host
    hosts = []
    for k in range(n):
        text = _pminfo_text(per_host, k)
        hosts.append({"name": f"n{k}", "spec": f"n{k}", "ok": True, "fetched_at": 1.0,
                      "pminfo_z": base64.b64encode(zlib.compress(text, 1)).decode()})
    path = tmp_path / "raw.json"
    path.write_text(json.dumps(_envelope(hosts=hosts)))
    oscs = _oscs_in(per_host)
    got_hosts, values, took = _read_within(path, 128 << 20)     # 70 MiB measured; 180 MiB before
    assert (got_hosts, values) == (n, n * oscs * len(OSC_COUNTERS))
    assert took < 10


def test_the_raw_form_is_written_as_tables_past_the_caps_it_is_read_with(tmp_path, monkeypatch):
    """A snapshot whose pminfo texts pass the reader's caps (`snapshot --backend pminfo` of many
    hosts) is written as tables, not as a file the reader then refuses."""
    from lustre_jobreport.acquire.hostsnap import HostSnapshot

    texts = [_pminfo_text(4000, k) for k in range(3)]
    monkeypatch.setattr(snapformat, "MAX_RAW_BYTES", 2 * len(texts[0]))
    hosts = [HostSnapshot(f"n{k}", f"n{k}", True, fetched_at=1.0, pminfo=t) for k, t in enumerate(texts)]
    from lustre_jobreport.acquire.snapshot import Fetched
    Fetched(5.0, hosts).write(tmp_path / "s.json")
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["metrics"] and not any("pminfo_z" in h for h in doc["hosts"])
    back = snapfile.read(tmp_path / "s.json")
    assert back.value("lustreclient.osc.read_bytes", "n2", "scratch-OST00003-osc-ffff88812345") == 2 * 7919 + 3


def test_raw_hosts_listing_other_instances_each_are_refused_before_stacking(tmp_path, monkeypatch):
    """Hosts that each list instances no other host has stack into hosts x (all their instances):
    64 hosts of 1 MiB would make a table of 1 G values. Refused, like tables declaring too many."""
    monkeypatch.setattr(snapformat, "MAX_RAW_VALUES", 5 * 3 * len(OSC_COUNTERS) * _oscs_in(4000))
    hosts = [{"name": f"n{k}", "spec": f"n{k}", "ok": True, "fetched_at": 1.0, "pminfo_z": base64.b64encode(
              zlib.compress(_pminfo_text(4000, k).replace(b"scratch", b"fs%d" % k))).decode()} for k in range(5)]
    path = tmp_path / "raw.json"
    path.write_text(json.dumps(_envelope(hosts=hosts)))
    with pytest.raises(SnapshotFileError, match="its pminfo texts make tables of more than the 540 values"):
        snapfile.read(path)
    hosts[3:] = []              # 3 hosts x 3 hosts' instances: within the cap
    path.write_text(json.dumps(_envelope(hosts=hosts)))
    assert len(snapfile.read(path).metrics["lustreclient.osc.read_bytes"].instances) == 3 * _oscs_in(4000)


def test_the_raw_forms_cap_counts_bytes_not_characters(tmp_path, monkeypatch):
    """The file's cap on pminfo text is in bytes, as the writer's (fits_raw): it was counted in
    decoded characters, so text of multibyte UTF-8 passed at up to 4x the cap."""
    text = _pminfo_text(4000, 1).replace(b"scratch", "scr\u00e9\u00e9\u00e9\u00e9".encode())
    monkeypatch.setattr(snapformat, "MAX_RAW_BYTES", len(text) + len(text.decode()))   # 2 hosts' chars, < their bytes
    hosts = [{"name": f"n{k}", "spec": f"n{k}", "ok": True, "fetched_at": 1.0,
              "pminfo_z": base64.b64encode(zlib.compress(text)).decode()} for k in range(2)]
    path = tmp_path / "raw.json"
    path.write_text(json.dumps(_envelope(hosts=hosts)))
    with pytest.raises(SnapshotFileError, match="its pminfo texts inflate past"):
        snapfile.read(path)
