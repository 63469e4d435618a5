"""Hand-built snapshots for reporter unit tests (no pmcd): each value is written out here.

Catalogued metrics get the PMID cluster the agent gives them (as a fetch would carry it);
pmids= overrides or adds PMIDs per metric (short name -> "220.C.I")."""

from lustre_jobreport import catalog
from lustre_jobreport.acquire.column import Column
from lustre_jobreport.acquire.hostsnap import HostSnapshot
from lustre_jobreport.acquire.snapfile import Snapshot

P = "lustreclient."
SEMS = {"version": "discrete", "llite.mount_id": "discrete", "osc.rpcs_in_flight.read": "instant",
        "llite.stats_start": "discrete", "osc.stats_start": "discrete", "osc.rpc_stats_start": "discrete",
        "osc.state": "instant"}


# What the agent gives wherever it read the file: every volume and operation of a filesystem's
# llite stats (a line the file omits reads 0), every figure of an OSC's osc stats.
LLITE_STATS = [m.name[len(P):] for m in catalog.with_role(catalog.VOLUME, catalog.OP)]
OSC_STATS = [m.name[len(P):] for m in catalog.with_role(catalog.OST_VOLUME, catalog.OST_WAIT)]


def _fill(metrics: dict, names: list[str], instances) -> None:
    """Zeros for these metrics' instances not given."""
    for short in names:
        given = metrics.get(short, {})
        metrics[short] = dict(dict.fromkeys(instances, 0), **given)


def host(name, metrics, ok=True, error=None, pmids=None, sems=None, llite_stats=True, rpc_stats=True,
         no_value=()):
    """A host read by the agent: as a real agent's, it has every llite stats counter and an RPC
    histogram (zeros unless given) for every filesystem it mounts, unless told its files could
    not be read (llite_stats=False, rpc_stats=False), and every osc stats figure of each OSC one
    of them is given for; no_value: metrics the agent gave no value for all the same (a bytes
    line without its sum)."""
    metrics = dict(metrics)
    mounted = metrics.get("llite.mount_id", {})
    if llite_stats and mounted:
        _fill(metrics, LLITE_STATS, mounted)
    oscs = {i: None for k in OSC_STATS for i in metrics.get(k, {})}
    if oscs:
        _fill(metrics, OSC_STATS, oscs)
    if rpc_stats and mounted:
        for direction in ("read", "write"):
            buckets = dict(metrics.get(f"fs.rpc.{direction}", {}))
            for fs in mounted:
                if not any(b.startswith(fs + ":") for b in buckets):
                    buckets[f"{fs}:4K"] = 0
            metrics[f"fs.rpc.{direction}"] = buckets
    full = {P + k: Column.from_dict(v) for k, v in metrics.items() if k not in no_value}
    sem_of = {m: (sems or {}).get(m[len(P):], SEMS.get(m[len(P):], "counter")) for m in full}
    ids = {m: f"220.{catalog.get(m).cluster}.0" for m in full if catalog.get(m)}
    ids.update({P + k: v for k, v in (pmids or {}).items()})
    return HostSnapshot(name, f"{name}:44321", ok=ok, error=error, fetched_at=0.0, sems=sem_of, metrics=full,
                        pmids=ids)


def node(name, *, mount="ffff0001", version="2.15.4", llite=None, osc=None, rpc=None):
    """llite: {op: n} for fs scratch; osc: {OSTidx: {read_bytes..}}; rpc: {(direction, size): n}."""
    m = {"version": {"": version}, "llite.mount_id": {"scratch": mount}}
    for op, n in (llite or {}).items():
        m.setdefault(f"llite.{op}", {})["scratch"] = n
    for idx, vals in (osc or {}).items():
        for k, n in vals.items():
            m.setdefault(f"osc.{k}", {})[f"scratch-OST{idx:04x}"] = n
    for (direction, size), n in (rpc or {}).items():
        m.setdefault(f"fs.rpc.{direction}", {})[f"scratch:{size}"] = n
    return host(name, m)


def snap(t, *hosts):
    return Snapshot.from_hosts(t, hosts)
