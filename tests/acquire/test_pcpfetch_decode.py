"""pcpfetch's bulk decoding of a fetch's string values and shared instance names (issue 11):
the same answers as one value at a time, and the slow path whenever the bulk read could touch
memory libpcp did not give (blocks far apart) or the blocks are not strings."""

import ctypes
import struct

import numpy as np
import pytest

pcpfetch = pytest.importorskip("lustre_jobreport.acquire.pcpfetch")
if not pcpfetch.HAVE_PMAPI:
    pytest.skip("PCP's Python bindings are not importable", allow_module_level=True)
from lustre_jobreport.acquire.pcpfetch import Catalog, _strings_in_one_read, c_api   # noqa: E402

STRING = c_api.PM_TYPE_STRING


def blocks(texts, gap=0, vtype=STRING):
    """pmValueBlocks packed in one buffer (header: vtype in the high 8 bits, vlen in the low 24;
    each block padded to 8 bytes, `gap` more bytes between blocks); their addresses."""
    raw, offs = b"", []
    for t in texts:
        body = t.encode() + b"\0"
        vlen = 4 + len(body)
        offs.append(len(raw))
        block = struct.pack("<I", (vtype << 24) | vlen) + body
        raw += block + b"\0" * ((-len(block)) % 8 + gap)
    buf = ctypes.create_string_buffer(raw, len(raw) + 8)
    return buf, np.array([ctypes.addressof(buf) + o for o in offs], dtype=np.uint64)


def test_strings_of_close_blocks_are_read_in_one_go_in_the_results_order():
    names = [f"scratch-OST{i:04x}" for i in range(600)] + ["FULL", "FULL", "DISCONN", "é"]
    buf, ptrs = blocks(names)
    order = np.random.default_rng(1).permutation(len(ptrs))      # the result's order, not memory's
    assert _strings_in_one_read(ptrs[order]) == [names[i] for i in order]


def test_blocks_a_page_or_more_apart_or_not_strings_take_the_slow_path():
    buf, ptrs = blocks(["a", "b", "c"], gap=4096)
    assert _strings_in_one_read(ptrs) is None
    buf, ptrs = blocks(["a", "b", "c"], vtype=c_api.PM_TYPE_U64)
    assert _strings_in_one_read(ptrs) is None
    buf, ptrs = blocks(["only"])
    assert _strings_in_one_read(ptrs) is None                       # one value: nothing to gain


def test_instance_names_are_shared_per_listing_and_order_and_unknown_ids_are_none():
    cat = Catalog()
    a = cat.listing(7, [0, 1, 2], ["x-OST0000", "x-OST0001", "x-OST0002"])
    b = cat.listing(7, [0, 1, 2], ["x-OST0000", "x-OST0001", "x-OST0002"])   # another host, same OSCs
    assert a is b
    first = cat.labels(a, np.array([2, 0, 9], dtype=np.int32))
    assert first == ["x-OST0002", "x-OST0000", None]
    assert cat.labels(b, np.array([2, 0, 9], dtype=np.int32)) is first
    other = cat.listing(7, [0, 1], ["y-OST0000", "y-OST0001"])                # a host with other OSCs
    assert other is not a and cat.labels(other, np.array([1, 0], dtype=np.int32)) == ["y-OST0001", "y-OST0000"]


def test_decoded_strings_are_shared_by_hosts_with_the_same_answer_and_only_those():
    names = [f"scratch-OST{i:04x}-osc-ffff8881" for i in range(600)]
    cache: dict = {}
    buf1, ptrs1 = blocks(names)
    buf2, ptrs2 = blocks(names)                  # another host's answer: other memory, same bytes
    first = _strings_in_one_read(ptrs1, cache)
    assert first == names and _strings_in_one_read(ptrs2, cache) is first
    renamed = names[:-1] + ["scratch-OST0257-osc-ffff8882"]           # one device differs
    buf3, ptrs3 = blocks(renamed)
    assert _strings_in_one_read(ptrs3, cache) == renamed
    order = np.arange(600)[::-1]                                       # same memory, other order
    assert _strings_in_one_read(ptrs1[order], cache) == names[::-1]


@pytest.fixture(scope="module")
def pmcd(tmp_path_factory):
    from lustre_sim import SimClient
    from kit.privpmcd import PrivatePmcd

    tmp = tmp_path_factory.mktemp("decode")
    SimClient.create(tmp / "tree", version="2.15.4", filesystems=[("scratch", 40, 1), ("home", 3, 2)], seed=2)
    with PrivatePmcd(tmp / "pmcd", tmp / "tree") as p:
        yield p


def test_an_instance_listing_read_as_bytes_names_what_the_bindings_name(pmcd):
    from pcp import pmapi
    cat = Catalog()
    ctx = pmapi.pmContext(c_api.PM_CONTEXT_HOST, pmcd.spec)
    for name in ("lustreclient.osc.read_bytes", "lustreclient.llite.read_bytes", "lustreclient.mdc.state"):
        indom = ctx.pmLookupDescs(ctx.pmLookupName([name]))[0].contents.indom
        ids, names = ctx.pmGetInDom(indom=indom)
        got = cat.host_listing(ctx, indom)
        assert got[1] == dict(zip(ids, names)) and len(ids) > 1
        again = cat.host_listing(pmapi.pmContext(c_api.PM_CONTEXT_HOST, pmcd.spec), indom)   # "another host"
        assert again is got
