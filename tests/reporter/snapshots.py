"""Hand-built snapshots for reporter unit tests (no pmcd): each value is written out here."""

from lustre_jobreport.snapfile import Column, HostSnapshot, Snapshot

P = "lustreclient."
SEMS = {"version": "discrete", "llite.mount_id": "discrete", "osc.rpcs_in_flight.read": "instant",
        "llite.stats_start": "discrete", "osc.stats_start": "discrete", "osc.rpc_stats_start": "discrete",
        "osc.state": "instant"}


def host(name, metrics, ok=True, error=None):
    full = {P + k: Column.from_dict(v) for k, v in metrics.items()}
    sems = {m: SEMS.get(m[len(P):], "counter") for m in full}
    return HostSnapshot(name, f"{name}:44321", ok=ok, error=error, fetched_at=0.0, sems=sems, metrics=full)


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
