"""The model's building blocks against brute force: striping, object sizes, interval sets,
and the kernel's log2 bucket rule."""

from __future__ import annotations

import random

from lustre_sim.counters import tally_log2
from lustre_sim.intervals import IntervalSet
from lustre_sim.model import File


def brute_ranges(ss, sc, a, b):
    per = {}
    for f in range(a, b):
        u = f // ss
        k, off = u % sc, (u // sc) * ss + f % ss
        lo, hi = per.get(k, (off, off))
        per[k] = (min(lo, off), max(hi, off + 1))
    return sorted((k, lo, hi) for k, (lo, hi) in per.items())


def test_striping_matches_brute_force():
    r = random.Random(1)
    for _ in range(300):
        ss = r.choice([4, 8, 16])
        sc = r.randint(1, 5)
        f = File("/x", 0, list(range(sc)), ss, 0)
        a = r.randint(0, 200)
        b = a + r.randint(1, 150)
        assert sorted(f.obj_ranges(a, b)) == brute_ranges(ss, sc, a, b), (ss, sc, a, b)
        f.size = b
        sizes = [0] * sc
        for off in range(b):
            sizes[(off // ss) % sc] += 1
        assert [f.obj_size(k) for k in range(sc)] == sizes


def test_interval_set_against_a_python_set():
    r = random.Random(2)
    s, ref = IntervalSet(), set()
    for _ in range(2000):
        a = r.randint(0, 300)
        b = a + r.randint(0, 40)
        if r.random() < 0.6:
            s.add(a, b)
            ref |= set(range(a, b))
        else:
            s.remove(a, b)
            ref -= set(range(a, b))
        assert s.total() == len(ref)
        lo, hi = sorted((r.randint(0, 340), r.randint(0, 340)))
        cov = set()
        for x, y in s.covered(lo, hi):
            cov |= set(range(x, y))
        assert cov == {i for i in ref if lo <= i < hi}
        miss = set()
        for x, y in s.missing(lo, hi):
            miss |= set(range(x, y))
        assert miss == set(range(lo, hi)) - ref
    # intervals are kept disjoint and non-touching
    items = list(s)
    assert all(items[i][1] < items[i + 1][0] for i in range(len(items) - 1))


def test_log2_bucket_is_ceil_log2():
    # lprocfs_oh_tally_log2(): bucket fls(value - 1): label 4 holds 3 and 4 pages, label 8 holds 5..8
    h = [0] * 32
    for pages in (1, 2, 3, 4, 5, 8, 9, 129, 256, 257):
        tally_log2(h, pages)
    assert h[:10] == [1, 1, 2, 2, 1, 0, 0, 0, 2, 1]
