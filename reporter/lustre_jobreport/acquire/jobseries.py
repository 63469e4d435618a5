"""A job slot's timeline (`lustreclient.job.slot<S>.series`, docs/design.md §2.5), decoded.

The agent serves, per filesystem, the growth of the slot's deltas in epoch-aligned bins. This
module turns one host's aggregate into a `Series`: its bins and, per filesystem, the values
the agent sent (the columns not all zero), laid out by the reporter's own table `VALUES`
(the series metrics of agentcontract.JOB_SERIES, a histogram metric one value per bucket), so
that a series of an older or newer agent with another table is read by PMID, not by position.

Standard library and numpy only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import agentcontract

BUCKETS = 64    # a histogram metric's values in a point: bucket i the RPCs of 2^i pages


def _values() -> tuple[tuple[str, int | None], ...]:
    out: list[tuple[str, int | None]] = []
    for name in agentcontract.JOB_SERIES:
        if name.startswith("fs.rpc."):
            out.extend((name, b) for b in range(BUCKETS))
        else:
            out.append((name, None))
    return tuple(out)


# The reporter's layout of a point: (metric, bucket), bucket None for a metric of one value.
VALUES: tuple[tuple[str, int | None], ...] = _values()
VALUE_INDEX: dict[tuple[str, int | None], int] = {v: i for i, v in enumerate(VALUES)}


class SeriesError(ValueError):
    """An aggregate that is not a timeline this reader can take (one line: what is wrong)."""


@dataclass(frozen=True)
class FsColumns:
    """One filesystem's points: `data[:, k]` is the value `VALUES[index[k]]` at each point
    (signed: a device left out mid-job takes its earlier counts back as a negative point). A
    value not in `index` is zero at every point."""
    index: np.ndarray       # intp [k], increasing, into VALUES
    data: np.ndarray        # int64 [npoints, k]


@dataclass(frozen=True)
class Series:
    """One host's timeline of one job: point i is bin `first_bin + i` of width `width_ms`
    (ms since the epoch), holding the I/O that ended in that bin; `samples[i]` is how many of
    the agent's samples fell into it (0: none, its I/O is in the next point that has one)."""
    level: int
    interval_ms: int
    first_bin: int
    samples: np.ndarray                 # uint32 [npoints]
    filesystems: dict[str, FsColumns]   # in the order the agent first saw them

    @property
    def width_ms(self) -> int:
        return self.interval_ms << self.level

    @property
    def npoints(self) -> int:
        return len(self.samples)


def decode(raw: bytes | memoryview) -> Series:
    """The Series of one aggregate's bytes (after PCP's 4-byte value header). SeriesError on
    anything this reader cannot take."""
    raise NotImplementedError("decode: the wire format is being settled")
