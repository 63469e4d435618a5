"""A small reader of Lustre client trees, written from notes/lustre-formats.md alone.

Independent of lustre_sim on purpose: the sim tests read the tree back through this, the way
the agent would (glob every root like lctl, skip *-osc-MDT* devices, regexes of LF §2 and §3).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOTS = ("proc/fs/lustre", "sys/fs/lustre", "sys/kernel/debug/lustre")
# LF §2: name count "samples" [unit] [min max sum [sumsq]]
COUNTER = re.compile(r"^(.+?)\s+(\d+) samples \[([^\]]*)\](?: (-?\d+) (-?\d+) (-?\d+)(?: (\d+))?)?$")
# LF §3: "<bucket>:<TAB><TAB><count> <pct> <cum>   | <count> <pct> <cum>"
ROW = re.compile(r"^(\d+):\t\t\s*(\d+)\s+(\d+)\s+(\d+)\s+\|\s+(\d+)\s+(\d+)\s+(\d+)$")
SECTIONS = {"pages per rpc": "pages", "rpcs in flight": "rif", "offset": "offset"}


def glob(root: Path, pattern: str) -> list[Path]:
    """lctl get_param style: the same relative pattern under every root."""
    out = []
    for r in ROOTS:
        out += sorted((Path(root) / r).glob(pattern))
    return out


def parse_stats(text: str) -> dict:
    """{name: {"count", "unit", "min", "max", "sum", "sumsq"}}; header lines are skipped."""
    out = {}
    for line in text.splitlines():
        m = COUNTER.match(line)
        if not m:
            continue
        name, count, unit, mn, mx, sm, sq = m.groups()
        out[name] = {"count": int(count), "unit": unit,
                     "min": int(mn) if mn is not None else None,
                     "max": int(mx) if mx is not None else None,
                     "sum": int(sm) if sm is not None else None,
                     "sumsq": int(sq) if sq is not None else None}
    return out


def parse_rpc_stats(text: str) -> dict:
    """{"pages": {"read": {label: n}, "write": {...}}, "rif": ..., "offset": ..., "gauges": {...}}"""
    out = {"gauges": {}}
    sect = None
    for line in text.splitlines():
        m = re.match(r"^(read|write) RPCs in flight:\s+(\d+)$", line)
        if m:
            out["gauges"][f"{m.group(1)}_rif"] = int(m.group(2))
            continue
        m = re.match(r"^pending (read|write) pages:\s+(\d+)$", line)
        if m:
            out["gauges"][f"pending_{m.group(1)}"] = int(m.group(2))
            continue
        for title, key in SECTIONS.items():
            if line.startswith(title + " "):
                sect = key
                out[sect] = {"read": {}, "write": {}}
        m = ROW.match(line)
        if m and sect:
            label, r, _, _, w, _, _ = (int(x) for x in m.groups())
            out[sect]["read"][label] = r
            out[sect]["write"][label] = w
    return out


def device_fs(name: str) -> str:
    return name.split("-")[0]


def snapshot(root: Path) -> dict:
    """Everything a job report needs, keyed like the agent's instances."""
    snap = {"llite": {}, "osc": {}, "osc_stats": {}, "mdc_md": {}, "mdc_stats": {}, "state": {}}
    for p in glob(root, "llite/*/stats"):
        fs, _, sbi = p.parent.name.rpartition("-")
        snap["llite"][fs] = {"mount_id": sbi, **parse_stats(p.read_text())}
    for p in glob(root, "osc/*/rpc_stats"):
        dev = p.parent.name
        if "-osc-MDT" in dev:
            continue
        inst = dev.rsplit("-osc-", 1)[0]
        snap["osc"][inst] = parse_rpc_stats(p.read_text())
    for p in glob(root, "osc/*/stats"):
        dev = p.parent.name
        if "-osc-MDT" in dev:
            continue
        snap["osc_stats"][dev.rsplit("-osc-", 1)[0]] = parse_stats(p.read_text())
    for p in glob(root, "osc/*/state"):
        dev = p.parent.name
        if "-osc-MDT" not in dev:
            first = p.read_text().splitlines()[0]
            snap["state"][dev.rsplit("-osc-", 1)[0]] = first.split(":", 1)[1].strip()
    for p in glob(root, "mdc/*/md_stats"):
        snap["mdc_md"][p.parent.name.rsplit("-mdc-", 1)[0]] = parse_stats(p.read_text())
    for p in glob(root, "mdc/*/stats"):
        snap["mdc_stats"][p.parent.name.rsplit("-mdc-", 1)[0]] = parse_stats(p.read_text())
    return snap


def count(stats: dict, name: str) -> int:
    return stats[name]["count"] if name in stats else 0


def total(stats: dict, name: str) -> int:
    return stats[name]["sum"] if name in stats else 0


def fs_hist(snap: dict, fs: str, direction: str, section: str = "pages") -> dict[int, int]:
    """A histogram summed over the fs's OSCs (agent metric lustreclient.fs.rpc.*)."""
    out: dict[int, int] = {}
    for inst, h in snap["osc"].items():
        if device_fs(inst) != fs:
            continue
        for label, n in h[section][direction].items():
            out[label] = out.get(label, 0) + n
    return out


def hist_delta(a: dict, b: dict) -> dict[int, int]:
    keys = set(a) | set(b)
    return {k: b.get(k, 0) - a.get(k, 0) for k in sorted(keys)}
