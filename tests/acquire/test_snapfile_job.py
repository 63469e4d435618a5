"""A snapshot file says which job it is of: an optional "job_id" in its envelope, written by
both forms (tables and raw), read back as written, absent from files written before it (they are
read as naming no job), and refused in one line naming the field when it is anything but a job
id the agents would take (1 to 63 of A-Z a-z 0-9 _ . : + -)."""

from __future__ import annotations

import json
import string

import pytest
from hypothesis import given, strategies as st
from kit.proptest import runs

from lustre_jobreport.acquire import snapfile, snapformat
from lustre_jobreport.errors import SnapshotFileError
from lustre_jobreport.acquire.hostsnap import HostSnapshot
from lustre_jobreport.acquire.snapshot import Fetched

from kit.snapshots import node, snap

ALLOWED = string.ascii_letters + string.digits + "_.:+-"


def is_job_id(value) -> bool:
    """The agent's rule (pmda-lustre/src/jobdiff.c lc_job_id_ok), written out plainly."""
    if not isinstance(value, str) or not 1 <= len(value) <= 63:
        return False
    for c in value:
        if c not in ALLOWED:
            return False
    return True


def tables(job_id=None):
    s = snap(100.0, node("n1", llite={"open": 3}))
    s.job_id = job_id
    return s


def raw_hosts():
    text = (b"lustreclient.llite.open PMID: 220.2.10\n"
            b"    Data Type: 64-bit unsigned int  InDom: 220.0 0x37000000\n"
            b"    Semantics: counter  Units: count\n"
            b'    inst [0 or "scratch"] value 5303\n')
    return [HostSnapshot("n1", "n1", True, fetched_at=1.0, pminfo=text),
            HostSnapshot("n2", "n2", False, error="cannot connect to pmcd: Connection refused")]


def test_the_tables_form_carries_the_job_id_and_reads_it_back(tmp_path):
    snapfile.write(tables("4242.sched-01"), tmp_path / "s.json")
    assert json.loads((tmp_path / "s.json").read_text())["job_id"] == "4242.sched-01"
    back = snapfile.read(tmp_path / "s.json")
    assert back.job_id == "4242.sched-01" and back.value("lustreclient.llite.open", "n1", "scratch") == 3


def test_the_raw_form_carries_the_job_id_and_reads_it_back(tmp_path):
    Fetched(5.0, raw_hosts()).write(tmp_path / "r.json", job_id="77")
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["job_id"] == "77" and doc["metrics"] == {} and "pminfo_z" in doc["hosts"][0]
    back = snapfile.read(tmp_path / "r.json")
    assert back.job_id == "77" and back.value("lustreclient.llite.open", "n1", "scratch") == 5303


def test_a_snapshot_of_no_job_writes_no_field(tmp_path):
    """Older readers ignore the field; a file of no job does not have it at all."""
    snapfile.write(tables(), tmp_path / "s.json")
    Fetched(5.0, raw_hosts()).write(tmp_path / "r.json")
    for name in ("s.json", "r.json"):
        assert "job_id" not in json.loads((tmp_path / name).read_text())
        assert snapfile.read(tmp_path / name).job_id is None


def old_files(tmp_path):
    """Files as written before snapshots named their job: schema 2 (both forms), schema 1 and the
    spool's schema 1 raw documents."""
    snapfile.write(tables(), tmp_path / "v2.json")
    Fetched(5.0, raw_hosts()).write(tmp_path / "v2raw.json")
    doc = json.loads((tmp_path / "v2.json").read_text())
    doc["schema"] = "lustre-jobreport/1"
    for m in doc["metrics"].values():
        m.pop("pmid")
    (tmp_path / "v1.json").write_text(json.dumps(doc))
    raw = json.loads((tmp_path / "v2raw.json").read_text())
    legacy = {"schema": "lustre-jobreport/1", "kind": "begin-pminfo", "taken_at": 10.0,
              "hosts": [{k: v for k, v in h.items() if k != "ok"} for h in raw["hosts"]]}
    (tmp_path / "v1raw.json").write_text(json.dumps(legacy))
    return [tmp_path / n for n in ("v2.json", "v2raw.json", "v1.json", "v1raw.json")]


def test_files_written_before_are_read_as_naming_no_job(tmp_path):
    for path in old_files(tmp_path):
        assert "job_id" not in json.loads(path.read_text()), path
        s = snapfile.read(path)
        assert s.job_id is None and s.hosts["n1"].ok, path


def test_a_null_job_id_names_no_job(tmp_path):
    doc = snapfile.to_json(tables())
    doc["job_id"] = None
    (tmp_path / "n.json").write_text(json.dumps(doc))
    assert snapfile.read(tmp_path / "n.json").job_id is None


BAD = ["", "a" * 64, "12 34", "12/34", "123[4].pbs", "..\u2028", "\u00e9t\u00e9", "\uff11\uff12", "7\n",
       "\x1b[2J", 5, 5.5, True, ["7"], {"id": "7"}]


@pytest.mark.parametrize("value", BAD, ids=[repr(v)[:20] for v in BAD])
@pytest.mark.parametrize("form", ["tables", "raw"])
def test_a_bad_job_id_is_one_clear_error_naming_the_field(tmp_path, value, form):
    path = tmp_path / "bad.json"
    if form == "tables":
        snapfile.write(tables(), path)
    else:
        Fetched(5.0, raw_hosts()).write(path)
    doc = json.loads(path.read_text())
    doc["job_id"] = value
    path.write_text(json.dumps(doc))
    with pytest.raises(SnapshotFileError, match=r"not a usable snapshot file: bad job_id ") as err:
        snapfile.read(path)
    assert "\n" not in str(err.value) and str(path) in str(err.value)


def test_a_huge_job_id_is_refused_in_a_short_line(tmp_path):
    doc = snapfile.to_json(tables())
    doc["job_id"] = "x" * (8 << 20)
    (tmp_path / "huge.json").write_text(json.dumps(doc))
    with pytest.raises(SnapshotFileError, match="bad job_id") as err:
        snapfile.read(tmp_path / "huge.json")
    assert len(str(err.value)) < 300


@runs(300)
@given(st.one_of(st.text(alphabet=ALLOWED + " /[]\n\x00\u00e9\uff11\u0663\u212a", max_size=70),
                 st.text(alphabet=ALLOWED, min_size=60, max_size=66),    # about the longest
                 st.text(max_size=70)))
def test_the_reader_takes_exactly_the_agents_job_ids(value):
    """Against the plain rule: a regular expression's \\d, \\w or $ (which passes a final newline),
    str.isalnum (which passes Unicode digits and letters) or a bound off by one would take ids
    the agent refuses."""
    doc = {"job_id": value}
    if is_job_id(value):
        assert snapformat.job_id_of(doc) == value
    else:
        with pytest.raises(ValueError, match="bad job_id"):
            snapformat.job_id_of(doc)


@pytest.mark.parametrize("value", ["", "a" * 64, "123[4].pbs", "7\n"])
def test_no_file_is_written_with_a_job_id_the_reader_would_refuse(tmp_path, value):
    with pytest.raises(ValueError, match="job_id"):
        snapfile.write(tables(value), tmp_path / "s.json")
    with pytest.raises(ValueError, match="job_id"):
        Fetched(5.0, raw_hosts()).write(tmp_path / "r.json", job_id=value)
    assert list(tmp_path.iterdir()) == []


def test_the_hooks_id_of_a_job_the_file_cannot_name_is_left_out():
    """A PBS array job's id ('123[4].server') or one past 63 characters: the hooks' snapshots of
    it name no job (the spool's file name still keys it), rather than failing."""
    assert snapformat.file_job_id("4242") == "4242"
    assert snapformat.file_job_id("123[4].pbs01") is None and snapformat.file_job_id("9" * 64) is None
    assert snapformat.file_job_id(None) is None
