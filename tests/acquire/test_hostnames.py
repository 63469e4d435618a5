"""Node lists expand the same whether python-hostlist is installed (Debian 12+) or not (Debian
11): hostnames.expand_own against the library on random lists, valid and not; and without the
library, the own expansion is the one the CLI uses."""

import subprocess
import sys

import pytest
from hypothesis import example, given, strategies as st

from kit.blockimport import env_without
from kit.proptest import runs
from lustre_jobreport.acquire import hostnames

try:
    import hostlist
except ImportError:          # as on Debian 11: the own expansion still serves (the last test)
    hostlist = None

# pieces that make valid lists and every way of breaking one
TOKENS = ["n", "gpu", "r", "-ib", ".", "_", "0", "7", "01", "010", "-", ",", "[", "]", "[]", "[,]",
          "[1]", "[007]", "[1-3]", "[01-03]", "[9-11]", "[1-010]", "[3-1]", "[1-3,07-09]", "[2,2]", "[1--2]",
          "[a]", "[1-3", "1-3]", "[[1]]", "[0-99999]", "[0-100000]", "[0-100001]", "[1-400]", "[1-300]",
          "x" * 3, "ä", "[١]"]
NODE_LISTS = st.one_of(
    st.lists(st.sampled_from(TOKENS), max_size=12).map("".join),
    st.text(alphabet="n0123456789[]-,a", max_size=30),
)


def library(nodelist):
    """python-hostlist's answer: its hosts, or None where it rejects the list."""
    try:
        return hostlist.expand_hostlist(nodelist)
    except (hostlist.BadHostlist, ValueError):
        return None


def own(nodelist):
    try:
        return hostnames.expand_own(nodelist)
    except hostnames.BadNodeList:
        return None


@pytest.mark.skipif(hostlist is None, reason="python-hostlist is not installed: nothing to compare with")
@runs(3000)
@given(NODE_LISTS)
@example("node[01-04,7],gpu1")
@example("r[1-2]n[08-11]-ib,r1n08-ib")       # several groups, a host met twice
@example("n[1-400][1-300]")                  # the part's size limit
@example("n[0-100000]")                      # 100,001 hosts in one range
@example("n[1-3],[")
def test_own_expansion_is_python_hostlists(nodelist):
    assert own(nodelist) == library(nodelist)


@pytest.mark.parametrize("nodelist", ["n1 n2", "n[1-2]\n", "n1,\tn2", "n\x1b[1]"])
def test_whitespace_and_controls_are_refused_either_way(nodelist, monkeypatch):
    with pytest.raises(hostnames.BadNodeList):
        hostnames.expand(nodelist)
    monkeypatch.setattr(hostnames, "_library", None)
    with pytest.raises(hostnames.BadNodeList):
        hostnames.expand(nodelist)


def test_without_python_hostlist_the_own_expansion_serves_the_cli(tmp_path):
    env = env_without(tmp_path, "hostlist")
    probe = subprocess.run([sys.executable, "-c", "from lustre_jobreport.acquire import hostnames; "
                            "print(hostnames.using_library(), hostnames.expand('n[09-10],g1'))"],
                           env=env, capture_output=True, text=True, timeout=60)
    assert probe.stdout.split(None, 1) == ["False", "['n09', 'n10', 'g1']\n"], probe.stderr
    cli = subprocess.run([sys.executable, "-m", "lustre_jobreport", "snapshot", "--nodes", "n[01-02",
                          "-o", str(tmp_path / "s.json")], env=env, capture_output=True, text=True, timeout=60)
    assert cli.returncode == 2 and cli.stdout == ""
    assert cli.stderr.splitlines() == ["lustre-jobreport: error: bad node list 'n[01-02': unbalanced brackets"]
    assert not (tmp_path / "s.json").exists()
