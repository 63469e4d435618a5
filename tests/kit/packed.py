"""Packed data for the bound tests: zlib streams of zeros, base64 as snapshot files carry them."""

import base64
import zlib


def zeros_bomb(gib: int) -> str:
    """zlib of `gib` GiB of zero bytes, base64 (~1.4 MB a GiB). After a full flush the
    compressor's output for the same 64 MiB is the same again: compressed twice, not 16 times a
    GiB (the stream's checksum is then wrong, but nothing reads that far: it is refused first)."""
    c, zeros = zlib.compressobj(9), bytes(64 << 20)
    first = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    again = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    return base64.b64encode(first + again * (gib * 16 - 1) + c.flush()).decode()


def zeros(nbytes: int) -> str:
    """zlib of nbytes zero bytes, base64: a whole, valid stream."""
    c = zlib.compressobj(9)
    return base64.b64encode(c.compress(bytes(nbytes)) + c.flush()).decode()
