"""Phase detection (report/phases.py) held to workloads of known phases and to steady I/O."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kit import timelines
from lustre_jobreport.report import phases

WIDTH = 10.0


def _cuts(found: phases.Phases) -> set[int]:
    return {p.first for p in found.phases[1:]}


def _near(cut: int, cuts: set[int], slack: int = 1) -> bool:
    return any(abs(cut - c) <= slack for c in cuts)


def _segmentation_cost(z: np.ndarray, starts: list[int], penalty: float) -> float:
    bounds = [0, *starts, len(z)]
    return sum(((z[a:b] - z[a:b].mean(axis=0)) ** 2).sum() + penalty for a, b in zip(bounds[:-1], bounds[1:]))


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 8), st.integers(1, 3), st.floats(0.0, 20.0), st.integers(0, 2**32 - 1))
def test_change_points_are_the_optimal_segmentation(n, c, penalty, seed):
    """Against every segmentation of a short series, tried one by one."""
    rng = np.random.default_rng(seed)
    z = rng.normal(0, 1, (n, c)) + np.repeat(rng.normal(0, 3, (3, c)), [n // 3, n // 3, n - 2 * (n // 3)], axis=0)
    got = phases.change_points(z, penalty)
    best = min(_segmentation_cost(z, list(cut), penalty)
               for k in range(n) for cut in itertools.combinations(range(1, n), k))
    assert _segmentation_cost(z, got, penalty) == pytest.approx(best, rel=1e-9, abs=1e-9)


@settings(max_examples=300, deadline=None)
@given(st.integers(phases.MIN_BINS, 512), st.floats(0.0, 0.5), st.floats(1.0, 1e10), st.floats(0.0, 1e4),
       st.integers(0, 2**32 - 1))
def test_steady_io_is_one_steady_phase(bins, noise, bytes_per_bin, ops_per_bin, seed):
    """However long, however noisy (a lognormal factor up to sigma 0.5 a bin) and at whatever
    level, steady I/O has no phase but one steady one and nothing periodic."""
    rng = np.random.default_rng(seed)
    w = timelines.Workload(bins, {"read": bytes_per_bin, "write": bytes_per_bin / 7, "metadata": ops_per_bin})
    found = phases.find(w.series(rng, noise), WIDTH)
    assert [p.kind for p in found.phases] == ["steady"], [(p.kind, p.first, p.end) for p in found.phases]
    assert found.periodic == ()


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["startup_storm", "checkpoints", "read_then_write", "final_flush", "idle_gap"]),
       st.integers(0, 2**32 - 1))
def test_phases_cover_the_series_and_add_up(name, seed):
    series = getattr(timelines, name)().series(np.random.default_rng(seed))
    found = phases.find(series, WIDTH)
    assert found.phases[0].first == 0 and found.phases[-1].end == found.bins
    assert all(a.end == b.first for a, b in zip(found.phases, found.phases[1:]))
    for c, values in series.items():
        assert sum(p.sums[c] for p in found.phases) == pytest.approx(values.sum())


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["startup_storm", "checkpoints", "read_then_write", "final_flush", "idle_gap"]),
       st.integers(0, 2**32 - 1), st.data())
def test_a_count_taken_back_is_no_io_seen(name, seed, data):
    """A source left out mid-job takes its earlier counts back as a negative point: the phases
    are those of the same series with that bin at 0 (no warning: warnings are errors here), and
    their sums add up to the series' totals, the negative point included."""
    series = getattr(timelines, name)().series(np.random.default_rng(seed))
    channel = data.draw(st.sampled_from(sorted(series)))
    at = data.draw(st.integers(0, len(series[channel]) - 1))
    taken_back = {c: v.copy() for c, v in series.items()}
    taken_back[channel][at] = -data.draw(st.floats(1.0, 1e12)) - float(series[channel].sum())
    zeroed = {c: v.copy() for c, v in series.items()}
    zeroed[channel][at] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = phases.find(taken_back, WIDTH)
    want = phases.find(zeroed, WIDTH)
    assert [(p.kind, p.first, p.end, p.channel) for p in found.phases] == \
        [(p.kind, p.first, p.end, p.channel) for p in want.phases]
    assert [(r.channel, r.period_bins, r.count, r.starts) for r in found.periodic] == \
        [(r.channel, r.period_bins, r.count, r.starts) for r in want.periodic]
    for c, values in taken_back.items():
        assert sum(p.sums[c] for p in found.phases) == pytest.approx(values.sum())


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("name", ["startup_storm", "checkpoints", "read_then_write", "final_flush", "idle_gap"])
def test_every_known_phase_is_found_within_one_bin(name, seed):
    """Each change of the workload's schedule is a phase boundary within one bin, and there is
    no boundary the schedule does not have."""
    w = getattr(timelines, name)()
    found = phases.find(w.series(np.random.default_rng(seed)), WIDTH)
    cuts, known = _cuts(found), w.boundaries()
    assert all(_near(b, cuts) for b in known), (sorted(known), sorted(cuts))
    assert all(_near(c, known) for c in cuts), (sorted(known), sorted(cuts))


@pytest.mark.parametrize("seed", range(20))
def test_start_up_storm_said(seed):
    found = phases.find(timelines.startup_storm().series(np.random.default_rng(seed)), WIDTH)
    first = found.phases[0]
    assert (first.kind, first.channel, first.end) == ("start-up burst", "metadata", 12)
    assert [p.kind for p in found.phases[1:]] == ["steady"]


@pytest.mark.parametrize("seed", range(20))
def test_checkpoints_are_periodic(seed):
    w = timelines.checkpoints()
    found = phases.find(w.series(np.random.default_rng(seed)), WIDTH)
    (p,) = found.periodic
    assert p.channel == "write" and abs(p.period_bins - 120) <= 1 and p.count == len(w.pieces)
    assert p.mean_amount == pytest.approx(2 * 26 * 1024 * timelines.MIB, rel=0.3)


@pytest.mark.parametrize("period", [5, 6, 12])
@pytest.mark.parametrize("seed", range(10))
def test_checkpoints_every_few_bins_are_periodic(period, seed):
    """Bursts every few bins make up to 40 % of the bin-to-bin differences: level changes, not
    noise (a 2-day job at 640 s bins checkpointing every hour; a 10-minute job every minute)."""
    w = timelines.checkpoints(bins=60, period=period, length=1, first=3)
    found = phases.find(w.series(np.random.default_rng(seed)), WIDTH)
    (p,) = found.periodic
    assert p.channel == "write" and abs(p.period_bins - period) <= 1 and p.count == len(w.pieces)


@pytest.mark.parametrize("seed", range(20))
def test_read_then_write_final_flush_and_idle_said(seed):
    rng = np.random.default_rng(seed)
    rw = phases.find(timelines.read_then_write().series(rng), WIDTH)
    assert [(p.kind, p.channel) for p in rw.phases] == [("steady", "read"), ("steady", "write")]
    flush = phases.find(timelines.final_flush().series(rng), WIDTH)
    assert [p.kind for p in flush.phases] == ["steady", "final flush"]
    gap = phases.find(timelines.idle_gap().series(rng), WIDTH)
    assert [p.kind for p in gap.phases] == ["steady", "idle", "steady"]


def test_too_short_a_series_has_no_phases():
    found = phases.find({"read": np.ones(phases.MIN_BINS - 1)}, WIDTH)
    assert found.too_short and found.phases == ()
