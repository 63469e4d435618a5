"""The snapshot file format's envelope, and reading it within bounds (standard library only).

A snapshot file (also the spool's begin snapshot) is one JSON object:
  {"schema": "lustre-jobreport/2", "kind": "snapshot", "taken_at": EPOCH, ["job_id": ID,]
   "hosts": [{"name", "spec", "ok", "error", "fetched_at", ["pminfo_z"]}, ...],
   "metrics": {NAME: {"pmid", "sem", "type", "instances", ...packed tables}}}
"job_id" is the job the snapshot was taken for (the hooks', `snapshot --job-id`), so that a
report refuses the begin of one job with the end of another; a job id as the agents take it
(1 to 63 of A-Z a-z 0-9 _ . : + -). A file without it, or with null, names no job: files
written before it was added, and snapshots taken for no job in particular.
Why no schema bump: the field is optional and changes the meaning of nothing else in the file.
Readers of schema 2 ignore keys they do not know, so files naming their job are still read by
older lustre-jobreports (which only cannot check the job), and this reader reads every older
file as naming none. A bump would make older readers refuse the new files outright (a report
command on a login node older than the compute nodes' hooks), for no number read differently;
the schema number marks changes an older reader would misread (2: start times in microseconds).
The file is in one of two forms:
- tables: "metrics" holds one hosts x instances table per metric (snapfile.py packs them);
- raw: "metrics" is empty and every host that was read carries "pminfo_z", the zlib-compressed
  base64 text of its `pminfo -dfm` answer, parsed when the file is read. The prolog of a small
  job writes this form: it needs neither numpy nor PCP's bindings, so the job starts sooner.
Older files are read too: schema 1 (no PMIDs, start times in whole seconds) and the spool's
"begin-pminfo" documents of schema 1 (raw pminfo text without PMIDs).

Reading is bounded, so a damaged or hostile file costs a clear error, never unbounded memory or
time: the file's size, the values its tables may declare, and what packed data may inflate to
are capped, and inflating is done in steps short enough for the hooks' watchdog to run between.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
import re
import zlib
from pathlib import Path
from typing import Any, BinaryIO

from .. import SCHEMA
from ..safeio.atomicfile import replacing
from ..errors import SnapshotFileError

SCHEMA_PREFIX = "lustre-jobreport/"
SCHEMA_VERSION = int(SCHEMA.rsplit("/", 1)[1])
KIND = "snapshot"
LEGACY_RAW_KIND = "begin-pminfo"      # schema 1 spool documents of small jobs

# Bounds. A job of 12,000 nodes with 600 OSCs each (the largest the project aims at) has
# ~85 M table values (~7,000 a host): as busy counters hardly compress, ~0.9 GB of packed
# base64 in today's format. The caps leave room above that and stop what is far beyond. What a
# file at the caps costs to read (measured, peak): its bytes and then its parsed JSON (~2x the
# file while json.loads runs), then the JSON (~1x) and the tables, each inflated into one buffer
# of its declared size: 9 bytes a declared value (u64 + present), 1.1 GiB at MAX_TABLE_VALUES,
# plus one table's packed bytes. So ~2 GiB for a 1 GiB file; 1.2 GiB for a small file that
# declares the most values.
MAX_FILE_BYTES = 1 << 30
MAX_TABLE_VALUES = 1 << 27            # all tables of one file together (1 GiB as u64)
# The raw form: a real host's `pminfo -dfm` text is ~0.7 MiB (600 OSCs, ~9,000 values), and
# the prolog writes this form for jobs of up to prolog_cli_max_hosts (16) nodes. Each host's
# text is inflated, parsed and let go in turn (~17-35 MiB of text a second); the tables it
# stacks into are capped apart from the text, as hosts that each list other instances would
# make them hosts x hosts large. Measured at these caps: 8 hosts of 8 MiB listing the same OSCs,
# 1.7 s and +70 MiB; the worst, 4 hosts of 8 MiB of short lines naming instances no other host
# lists (3.8 M values), 2.6 s and +210 MiB. A larger raw snapshot is written as tables
# (snapshot.Fetched.write).
MAX_RAW_BYTES_PER_HOST = 8 << 20      # one host's pminfo text, inflated
MAX_RAW_BYTES = 64 << 20              # all hosts' pminfo text of one file, inflated
MAX_RAW_VALUES = 1 << 22              # hosts x instances of the tables the raw form stacks into
INFLATE_STEP = 8 << 20                # bytes inflated per step (each step is a short C call)
READ_STEP = 8 << 20                   # bytes read per step (a read reserves its whole size first)
# Times: seconds since the epoch, between 1970 and 9999 (what datetime can show).
MAX_EPOCH = 253402300799.0
# The job a snapshot is of: a job id as the agents take one (pmda-lustre's lc_job_id_ok), so that
# one id names a job the same way in a file and in an agent's job view. The ASCII classes are
# spelled out (\w and \d take other scripts' letters and digits) and the whole id is matched
# (fullmatch: $ lets a final newline through).
JOB_ID = re.compile(r"[A-Za-z0-9_.:+-]{1,63}")
JOB_ID_RULE = "1 to 63 of A-Z a-z 0-9 _ . : + -"
JOB_ID_SHOWN = 40                     # characters of a bad job id an error line shows


def fail(path: Path | str, why: str) -> SnapshotFileError:
    return SnapshotFileError(f"{path}: not a usable snapshot file: {why}")


def no_constants(name: str) -> float:
    """json.loads(parse_constant=...): NaN and Infinity are not JSON numbers; refuse them."""
    raise ValueError(f"{name} is not a number JSON allows")


class TooLargeForMemory(MemoryError):
    """A snapshot file within the caps that this process has not the memory to read (ulimit -v,
    a cgroup): one line naming it, not a traceback."""


def load_json(path: Path, opened: BinaryIO | None = None) -> Any:
    """The file's JSON (from `opened` if given, else from path), refused past MAX_FILE_BYTES;
    NaN/Infinity literals are floats that epoch(), where a number is read, refuses by name."""
    try:
        with (opened if opened is not None else open(path, "rb")) as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_FILE_BYTES:
                raise fail(path, f"{size:,} bytes, more than the {MAX_FILE_BYTES >> 20} MiB a snapshot may have")
            data = _read_at_most(f, MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise SnapshotFileError(f"{path}: no such snapshot file") from None
    except IsADirectoryError:
        raise SnapshotFileError(f"{path}: is a directory, not a snapshot file") from None
    except OSError as exc:
        raise SnapshotFileError(f"{path}: cannot read snapshot file: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise fail(path, f"more than the {MAX_FILE_BYTES >> 20} MiB a snapshot may have")
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        raise fail(path, f"invalid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except UnicodeDecodeError:
        raise fail(path, "not UTF-8 text") from None
    except ValueError as exc:
        raise fail(path, f"invalid JSON ({exc})") from None
    except RecursionError:
        raise fail(path, "invalid JSON (nested too deeply)") from None


def _read_at_most(f: BinaryIO, limit: int) -> bytearray:
    """Up to `limit` bytes, in chunks into one growing buffer: read(limit) would reserve the
    whole limit at once, and a pipe or a growing file has no size to trust."""
    buf = bytearray()
    while len(buf) < limit:
        chunk = f.read(min(limit - len(buf), READ_STEP))
        if not chunk:
            break
        buf += chunk
    return buf


class InflatesPast(ValueError):
    """Packed data that inflates past what the caller allows."""


def inflate(data: bytes, limit: int, where: str, *, preallocate: bool = False) -> bytearray:
    """zlib-inflate data to at most `limit` bytes (InflatesPast beyond), into one buffer, in
    steps of INFLATE_STEP: each a short C call, so the hooks' watchdog runs between them.
    preallocate: the caller needs `limit` bytes exactly (a table's values): the buffer is made
    that size at once and filled, so the peak is the result and a step. (Steps joined at the end
    cost twice the result: a file declaring 1 GiB of values needed 2 GiB.)"""
    d = zlib.decompressobj()
    out, size = bytearray(limit if preallocate else 0), 0
    try:
        chunk = d.decompress(data, INFLATE_STEP)
        while True:
            if size + len(chunk) > limit:
                raise InflatesPast(f"{where}: packed data inflates past {limit:,} bytes")
            out[size:size + len(chunk)] = chunk
            size += len(chunk)
            if not d.unconsumed_tail:
                break
            chunk = d.decompress(d.unconsumed_tail, INFLATE_STEP)
        if not d.eof:
            raise ValueError(f"{where}: packed data is damaged (cut short)")
    except zlib.error as exc:
        raise ValueError(f"{where}: packed data is damaged ({exc})") from None
    del out[size:]          # short of the limit: the caller says what is missing
    return out


def b64decode(text: Any, where: str) -> bytes:
    if not isinstance(text, str):
        raise ValueError(f"{where}: packed data must be a string")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"{where}: packed data is damaged ({exc})") from None


def epoch(value: Any, what: str) -> float:
    """A time in the file: a finite number of seconds between 1970 and 9999."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or not 0 <= value <= MAX_EPOCH:
        raise ValueError(f"bad {what} {value!r}: expected seconds since 1970")
    return float(value)


def is_job_id(value: Any) -> bool:
    """Whether value is a job id a snapshot file can name (JOB_ID)."""
    return isinstance(value, str) and JOB_ID.fullmatch(value) is not None


def file_job_id(job_id: str | None) -> str | None:
    """The job id a snapshot of this job names, or None for one a file cannot hold: a PBS array
    job's "123[4].server", an id past 63 characters. Such a snapshot names no job (the hooks'
    spool still keys it by the id, in its file name)."""
    return job_id if is_job_id(job_id) else None


def shown(value: Any) -> str:
    """A bad job id for an error line, short whatever it is (a string of a GiB, an array):
    strings as Python writes them (control characters escaped), other JSON values as JSON."""
    if isinstance(value, str):
        return repr(value[:JOB_ID_SHOWN]) + ("..." if len(value) > JOB_ID_SHOWN else "")
    if isinstance(value, (list, dict)):
        return f"(a JSON {'array' if isinstance(value, list) else 'object'})"
    text = json.dumps(value)
    return text[:JOB_ID_SHOWN] + ("..." if len(text) > JOB_ID_SHOWN else "")


def job_id_of(doc: dict) -> str | None:
    """The job the file names (its "job_id"), None if it names none; ValueError naming the field
    for anything but a job id."""
    value = doc.get("job_id")
    if value is None:
        return None
    if not is_job_id(value):
        raise ValueError(f"bad job_id {shown(value)}: expected {JOB_ID_RULE}")
    return value


def writable_job_id(job_id: str | None) -> str | None:
    """job_id, if a file may name it (None: no job); ValueError for one the reader would refuse:
    no file is written that cannot be read back."""
    if job_id is not None and not is_job_id(job_id):
        raise ValueError(f"job_id {shown(job_id)} cannot be written: a snapshot names a job by {JOB_ID_RULE}")
    return job_id


def envelope(taken_at: float, job_id: str | None) -> dict[str, Any]:
    """What both forms begin with: schema, kind, time and, if it names one, the job."""
    doc: dict[str, Any] = {"schema": SCHEMA, "kind": KIND, "taken_at": taken_at}
    if writable_job_id(job_id) is not None:
        doc["job_id"] = job_id
    return doc


def check_header(path: Path | str, doc: Any) -> int:
    """The file's schema version, after checking it is a snapshot this reader can read."""
    if not isinstance(doc, dict):
        raise fail(path, "top level is not a JSON object")
    schema = doc.get("schema")
    if not isinstance(schema, str) or not schema.startswith(SCHEMA_PREFIX):
        raise fail(path, f"missing or foreign schema {schema!r}")
    try:
        version = int(schema[len(SCHEMA_PREFIX):])
    except ValueError:
        raise fail(path, f"bad schema {schema!r}") from None
    if version > SCHEMA_VERSION:
        raise fail(path, f"schema {schema} is newer than this reader ({SCHEMA}); upgrade lustre-jobreport")
    if doc.get("kind") not in (KIND, LEGACY_RAW_KIND):
        raise fail(path, f"kind is {doc.get('kind')!r}, expected {KIND!r}")
    return version


def host_to_json(h) -> dict[str, Any]:
    doc = {"name": h.host, "spec": h.spec, "ok": h.ok, "error": h.error, "fetched_at": h.fetched_at}
    if h.pminfo is not None:
        doc["pminfo_z"] = base64.b64encode(zlib.compress(h.pminfo, 1)).decode("ascii")
    return doc


def fits_raw(hosts: list) -> bool:
    """Whether the hosts' pminfo texts are within the caps the raw form is read with."""
    sizes = [len(h.pminfo) for h in hosts if h.pminfo is not None]
    return sum(sizes) <= MAX_RAW_BYTES and all(n <= MAX_RAW_BYTES_PER_HOST for n in sizes)


def write_raw(taken_at: float, hosts: list, path: Path, job_id: str | None = None) -> None:
    """Write the raw form (no numpy needed): every host read carries its pminfo text, within
    the caps it is read with (fits_raw). job_id: the job it names (None: no job)."""
    if any(h.ok and h.pminfo is None for h in hosts):
        raise ValueError("the raw form needs every host that was read to carry its pminfo text")
    doc = {**envelope(taken_at, job_id), "hosts": [host_to_json(h) for h in hosts], "metrics": {}}
    with replacing(Path(path)) as out:
        json.dump(doc, out, separators=(",", ":"), allow_nan=False)
        out.write("\n")
