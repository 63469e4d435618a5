"""A job slot's file (the agent's -S directory, `slot<S>`; docs/design.md §2.4, the layout of
pmda-lustre/src/persist.h) read plainly with struct, for the agent's tests: the file an older
agent, whose series table was the first metrics of this one's, wrote of the same job.
"""

from __future__ import annotations

import struct
import zlib

HEADER = struct.Struct("<4sIQIIIIIIII")   # magic, version, bytes, slot, restarts, values per FS,
                                            # OSC and MDC device, series values a point, buckets, 0


class _Cursor:
    def __init__(self, raw: bytes):
        self.raw, self.at = raw, 0

    def take(self, fmt: str):
        values = struct.unpack_from("<" + fmt, self.raw, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def skip_str(self) -> None:
        (n,) = self.take("I")
        self.at += n


def with_older_series_table(raw: bytes, nvalues: int) -> bytes:
    """The slot file `raw` as an agent whose series points had their first `nvalues` values
    (its table, this one's first metrics) would have written it: each filesystem's last
    sample and points cut to those values, the header's count, size and CRC made right."""
    magic, version, _, slot, restarts, nv_fs, nv_osc, nv_mdc, series_nv, hist, zero = HEADER.unpack_from(raw)
    assert magic == b"LCP1" and version == 1 and nvalues <= series_nv
    c = _Cursor(raw)
    c.at = HEADER.size
    c.skip_str()                                    # the job id
    c.take("Q")                                     # its begin time
    for nv, kind in ((nv_fs, "fs"), (nv_osc, "osc"), (nv_mdc, "mdc")):
        (count,) = c.take("I")
        for _ in range(count):
            c.take("IiQQ")                          # flags, fs index, start times
            c.skip_str()                            # instance name
            c.skip_str()                            # identity
            c.at += 8 * nv + nv                     # values, presence bytes
            if kind == "fs":
                c.at += 8                           # the buckets that had an instance
    out = bytearray(raw[:c.at])
    _, _, _, npoints, nfs = c.take("IIQII")
    out += raw[c.at - 24:c.at]
    out += raw[c.at:c.at + 4 * npoints]             # samples
    c.at += 4 * npoints
    for _ in range(nfs):
        start = c.at
        c.skip_str()
        out += raw[start:c.at]                      # the filesystem's name
        last = c.take(f"{series_nv}Q")
        out += struct.pack(f"<{nvalues}Q", *last[:nvalues])
        for _ in range(npoints):
            point = c.take(f"{series_nv}q")
            out += struct.pack(f"<{nvalues}q", *point[:nvalues])
    assert c.at == len(raw) - 4, (c.at, len(raw))
    out += bytes(4)
    HEADER.pack_into(out, 0, magic, version, len(out), slot, restarts, nv_fs, nv_osc, nv_mdc, nvalues, hist, zero)
    struct.pack_into("<I", out, len(out) - 4, zlib.crc32(bytes(out[:-4])))
    return bytes(out)
