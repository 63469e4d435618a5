"""Reset-aware difference of two snapshots (DESIGN §3, "Diff rules").

Counters are compared per (host, metric, instance). Counters come from stats files that are
cleared or restarted as a whole, so resets are judged per *source*: one stats file of one
device on one host (e.g. the rpc_stats of scratch-OST0003 on node7). If any counter of a source
went backwards, the whole source is left out of the totals (COUNTER_RESET); if a filesystem's
mount_id changed, everything of that filesystem on that host is left out (REMOUNT). Instances
that appear only at the end count from zero. The report lists what it left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .snapfile import SINGULAR, HostSnapshot, Snapshot

P = "lustreclient."


@dataclass(frozen=True)
class Issue:
    """One thing the report could not trust (JSON data_quality entry)."""
    id: str
    host: str | None
    fs: str | None
    detail: str

    def to_json(self) -> dict:
        return {"id": self.id, "host": self.host, "fs": self.fs, "detail": self.detail}


@dataclass
class JobDelta:
    begin: float
    end: float
    hosts: list[str]                 # hosts whose deltas are used
    hosts_missing: list[str]         # hosts that could not be read at begin or end
    versions: dict[str, str]         # host -> Lustre version at the end
    counters: pd.DataFrame           # host, fs, source, device, metric, inst, delta (uint64)
    end_values: dict[str, HostSnapshot]
    issues: list[Issue] = field(default_factory=list)

    @property
    def elapsed_s(self) -> float:
        return max(0.0, self.end - self.begin)


def source_of(metric: str) -> str:
    """Which stats file a metric comes from (what a clear or restart resets together)."""
    m = metric[len(P):] if metric.startswith(P) else metric
    if m.startswith("llite."):
        return "llite stats"
    if m.startswith("fs.rpc."):
        return "fs rpc_stats"
    if m.startswith("osc.rpc."):
        return "rpc_stats"
    if m.startswith("osc."):
        return "osc stats"
    if m.startswith("mdc.req_"):
        return "mdc stats"
    if m.startswith("mdc."):
        return "md_stats"
    return "other"


def _frame(snap: Snapshot, hosts: list[str]) -> pd.DataFrame:
    """Long table of every integer counter value of the given hosts."""
    host_col, metric_col, inst_col, value_col = [], [], [], []
    for name in hosts:
        h = snap.hosts[name]
        for metric, insts in h.metrics.items():
            if h.sems.get(metric) != "counter":
                continue
            for inst, value in insts.items():
                if isinstance(value, int):
                    host_col.append(name)
                    metric_col.append(metric)
                    inst_col.append(inst)
                    value_col.append(value)
    return pd.DataFrame({"host": pd.Series(host_col, dtype="str"),
                         "metric": pd.Series(metric_col, dtype="str"),
                         "inst": pd.Series(inst_col, dtype="str"),
                         "value": np.array(value_col, dtype=np.uint64)})


def _device_and_fs(metric: pd.Series, inst: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Device = instance without the ':<size>' bucket; fs = device without -OSTxxxx/-MDTxxxx."""
    device = inst.str.split(":", n=1).str[0]
    fs = device.str.replace(r"-(?:OST|MDT)[0-9a-fA-F]{4,}$", "", regex=True)
    return device, fs


def _summarise(devices: list[str], limit: int = 3) -> str:
    devices = sorted(set(devices))
    shown = ", ".join(devices[:limit])
    return shown + (f" and {len(devices) - limit} more" if len(devices) > limit else "")


def _mount_ids(h: HostSnapshot) -> dict[str, str]:
    return {k: v for k, v in h.metrics.get(P + "llite.mount_id", {}).items() if isinstance(v, str)}


def _host_issues(begin: Snapshot, end: Snapshot) -> tuple[list[str], list[str], list[Issue]]:
    used, missing, issues = [], [], []
    for name in sorted(set(begin.hosts) | set(end.hosts)):
        b, e = begin.hosts.get(name), end.hosts.get(name)
        if b is None or e is None:
            when = "start" if b is None else "end"
            issues.append(Issue("HOST_UNREACHABLE", name, None, f"{name} was not in the {when} snapshot"))
        elif not b.ok or not e.ok:
            bad = b if not b.ok else e
            when = "start" if not b.ok else "end"
            issues.append(Issue("HOST_UNREACHABLE", name, None,
                                f"{name} could not be read at job {when}: {bad.error}"))
        else:
            used.append(name)
            continue
        missing.append(name)
    return used, missing, issues


def diff(begin: Snapshot, end: Snapshot) -> JobDelta:
    hosts, missing, issues = _host_issues(begin, end)

    b, e = _frame(begin, hosts), _frame(end, hosts)
    keys = ["host", "metric", "inst"]
    merged = e.merge(b, on=keys, how="left", suffixes=("", "_begin"), indicator=True)
    new = merged["_merge"] == "left_only"     # instance appeared during the job: counts from 0
    begin_vals = merged["value_begin"].where(~new, 0).astype(np.uint64)
    end_vals = merged["value"].astype(np.uint64)
    counters = merged[keys].copy()
    counters["device"], counters["fs"] = _device_and_fs(counters["metric"], counters["inst"])
    counters["source"] = counters["metric"].map(source_of)
    decreased = (end_vals < begin_vals).to_numpy()
    counters["delta"] = np.where(decreased, np.uint64(0), end_vals.to_numpy() - begin_vals.to_numpy())

    # REMOUNT: a filesystem whose mount_id changed (or vanished) on a host.
    remounted: set[tuple[str, str]] = set()
    for name in hosts:
        before, after = _mount_ids(begin.hosts[name]), _mount_ids(end.hosts[name])
        for fs in sorted(before):
            if fs not in after:
                issues.append(Issue("REMOUNT", name, fs, f"{fs} was unmounted on {name} during the job; "
                                    f"its counters on {name} are left out"))
                remounted.add((name, fs))
            elif after[fs] != before[fs]:
                issues.append(Issue("REMOUNT", name, fs, f"{fs} was remounted on {name} during the job "
                                    f"(mount {before[fs]} -> {after[fs]}); its counters on {name} are left out"))
                remounted.add((name, fs))
    drop = np.zeros(len(counters), dtype=bool)
    if remounted:
        pairs = pd.MultiIndex.from_tuples(sorted(remounted), names=["host", "fs"])
        drop |= pd.MultiIndex.from_frame(counters[["host", "fs"]]).isin(pairs)

    # COUNTER_RESET: any decrease resets its whole source (one file of one device on one host).
    counters["_dec"] = decreased & ~drop
    src_keys = ["host", "source", "device"]
    reset_src = counters.groupby(src_keys, sort=False)["_dec"].transform("any").to_numpy()
    if reset_src.any():
        reset = counters.loc[reset_src & counters["_dec"].to_numpy(), ["host", "fs", "source", "device"]]
        for (host, fs, source), grp in reset.groupby(["host", "fs", "source"], sort=True):
            issues.append(Issue("COUNTER_RESET", host, fs,
                                f"{source} of {_summarise(grp['device'].tolist())} on {host} went backwards "
                                f"(cleared during the job); left out of the totals, which come from the rest"))
    drop |= reset_src
    counters = counters.loc[~drop, ["host", "fs", "source", "device", "metric", "inst", "delta"]]
    counters = counters.reset_index(drop=True)

    versions = {}
    for name in hosts:
        v = end.hosts[name].metrics.get(P + "version", {}).get(SINGULAR)
        if isinstance(v, str):
            versions[name] = v
        if not _mount_ids(end.hosts[name]):
            issues.append(Issue("NO_LUSTRE", name, None, f"no Lustre filesystem is mounted on {name}"))

    return JobDelta(begin=begin.taken_at, end=end.taken_at, hosts=hosts, hosts_missing=missing,
                    versions=versions, counters=counters,
                    end_values={n: end.hosts[n] for n in hosts}, issues=issues)
