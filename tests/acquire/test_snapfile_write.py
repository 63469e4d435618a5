"""Writing a snapshot file at scale (issue 11): streamed one metric at a time, string tables
factorized in one pass, a host's values let go as they are stacked. Each must leave the file and
the tables exactly what they were."""

from __future__ import annotations

import json

import numpy as np

from lustre_jobreport.acquire import snapfile
from kit.snapshots import host, node, snap


def hosts():
    odd = {"scratch": "ffff0001", "work": 'a"quote\\back\u00e9\u65e5', "empty": ""}
    return [node("n1", osc={0: {"read_bytes": 5, "write_bytes": 2**64 - 1}, 1: {"read_bytes": 0}}),
            node("n2", mount="ffff0002", version="2.16.0", osc={1: {"read_bytes": 7}}, rpc={("read", "4K"): 3}),
            host("n3", {"llite.mount_id": odd, "version": {"": "2.15.4"}}),
            host("down", {}, ok=False, error="cannot connect to pmcd: Connection refused")]


def test_the_streamed_file_is_the_documented_json(tmp_path):
    s = snap(100.0, *hosts())
    snapfile.write(s, tmp_path / "s.json")
    assert json.loads((tmp_path / "s.json").read_text()) == json.loads(json.dumps(snapfile.to_json(s)))
    back = snapfile.read(tmp_path / "s.json")
    assert back.metrics.keys() == s.metrics.keys() and list(back.hosts) == list(s.hosts)
    for name, t in s.metrics.items():
        b = back.metrics[name]
        assert (b.instances, b.is_string, b.pmid) == (t.instances, t.is_string, t.pmid)
        assert np.array_equal(b.present, t.present)
        assert np.array_equal(b.values[b.present], t.values[t.present]), name


def test_factorized_strings_come_back_as_written():
    values = np.array(["FULL", "DISCONN", "FULL", "", "EVICTED", "FULL"], dtype=object)
    levels, codes = snapfile._factorize(values)
    assert levels == ["FULL", "DISCONN", "", "EVICTED"] and [levels[c] for c in codes] == list(values)
    assert snapfile._factorize(np.array([], dtype=object))[0] == []


def test_consuming_stacks_the_same_tables_and_lets_the_hosts_values_go():
    kept = snapfile.Snapshot.from_hosts(1.0, hosts())
    given = hosts()
    consumed = snapfile.Snapshot.from_hosts(1.0, given, consume=True)
    assert all(h.metrics == {} for h in given)
    assert consumed.metrics.keys() == kept.metrics.keys()
    for name, t in kept.metrics.items():
        c = consumed.metrics[name]
        assert c.instances == t.instances and np.array_equal(c.present, t.present)
        assert np.array_equal(c.values, t.values)
