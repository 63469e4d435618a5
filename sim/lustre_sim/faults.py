"""Faults and admin actions that change the tree the way a real client would.

clear      lctl set_param {llite,osc,mdc}.*.stats=clear, osc.*.rpc_stats=clear, mdc.*.md_stats=clear:
           counters zeroed (so their lines vanish), histograms zeroed, start_time = now (2.15.2+,
           rpc_stats 2.15+). In-flight/pending gauges are live values and stay.
remount    umount + mount: a new <sbi> (new device names), every counter from zero (plus the
           connect RPCs the mount itself costs), page cache and open handles gone.
evict      the OST (or MDT) evicts the client: import EVICTED, then (unless hold=1) the client
           reconnects: RECOVER/FULL, connection_attempts and generation go up.
reconnect  bring an EVICTED/DISCONN import back to FULL.
add-ost    a new OST joins the filesystem: a new osc device with empty counters, used by new files.
"""

from __future__ import annotations

from .counters import new_hist
from .model import Client, mount_rpcs, rpc
from .state import NS, new_mount, new_osc, now_ns

OSC_SETTINGS = ("max_pages_per_rpc", "max_rpcs_in_flight", "max_dirty_mb", "checksums")

FAULTS = {
    "clear": "zero the counters (lctl set_param ...=clear); params: what=all|llite|osc|mdc|rpc_stats",
    "remount": "unmount and mount again: new sbi, counters from zero",
    "evict": "an OST/MDT evicts the client, which then reconnects; params: target=OST0000, hold=0",
    "reconnect": "reconnect an evicted/disconnected import; params: target=OST0000",
    "add-ost": "add an OST to the filesystem; params: count=1",
}


def _mounts(st: dict, fs: str | None):
    if fs is None:
        return list(st["mounts"].values())
    if fs not in st["mounts"]:
        raise KeyError(f"no filesystem {fs!r} mounted")
    return [st["mounts"][fs]]


def clear(st: dict, fs: str | None, what: str = "all") -> None:
    t = now_ns(st)
    kinds = {"all": {"llite", "osc", "mdc", "rpc_stats"}, "llite": {"llite"}, "osc": {"osc"},
             "mdc": {"mdc"}, "rpc_stats": {"rpc_stats"}, "stats": {"llite", "osc", "mdc"}}
    if what not in kinds:
        raise ValueError(f"clear: what must be one of {', '.join(kinds)}")
    k = kinds[what]
    for m in _mounts(st, fs):
        if "llite" in k:
            m["llite"]["stats"] = {}
            m["llite"]["ra"] = {}
            m["llite"]["init_ns"] = t
        for osc in m["osc"]:
            if "osc" in k:
                osc["stats"] = {}
                osc["stats_init_ns"] = t
                osc["lockless"] = {"read": 0, "write": 0, "truncate": 0}
                osc["lockless_init_ns"] = t
            if "rpc_stats" in k:
                osc["hist"] = {n: new_hist() for n in osc["hist"]}
                osc["rpc_init_ns"] = t
        for mdc in m["mdc"]:
            if "mdc" in k:
                mdc["stats"] = {}
                mdc["stats_init_ns"] = t
                mdc["md"] = {}
                mdc["md_init_ns"] = t


def remount(cl: Client, fs: str | None) -> None:
    st = cl.st
    t = now_ns(st)
    for m in _mounts(st, fs):
        name = m["fs"]
        nm = new_mount(st, name, len(m["osc"]), len(m["mdc"]), m["mount_seq"] + 1, t)
        nm["stripe_count"], nm["stripe_size"] = m["stripe_count"], m["stripe_size"]
        # settings survive the remount, as `lctl set_param -P` ones do
        nm["llite"]["tun"] = dict(m["llite"]["tun"])
        for new, old in zip(nm["osc"], m["osc"]):
            for k in OSC_SETTINGS:
                new[k] = old[k]
        st["mounts"][name] = nm
        mount_rpcs(cl, nm)


def _find_dev(m: dict, target: str) -> dict:
    t = target.upper()
    for kind in ("osc", "mdc"):
        for dev in m[kind]:
            tag = f"{'OST' if kind == 'osc' else 'MDT'}{dev['index']:04X}"
            if t in (tag, f"{m['fs'].upper()}-{tag}", str(dev["index"]) if kind == "osc" else ""):
                return dev
    raise KeyError(f"{m['fs']}: no target {target!r} (use e.g. OST0003 or MDT0000)")


def evict(cl: Client, fs: str | None, target: str = "OST0000", hold: bool = False) -> None:
    st = cl.st
    t = now_ns(st) // NS
    for m in _mounts(st, fs):
        dev = _find_dev(m, target)
        imp = dev["imp"]
        imp["history"] += [[t, "DISCONN"], [t, "CONNECTING"], [t, "EVICTED"]]
        imp["state"] = "EVICTED"
        imp["conn_attempts"] += 1
        imp["timeouts"] = imp.get("timeouts", 0) + 1
        if not hold:
            _reconnect(cl, dev, t + 1)


def _reconnect(cl: Client, dev: dict, t: int) -> None:
    imp = dev["imp"]
    if imp["state"] == "FULL":
        return
    imp["history"] += [[t, "RECOVER"], [t, "FULL"]]
    imp["state"] = "FULL"
    imp["generation"] += 1
    op = "ost_connect" if "hist" in dev else "mds_connect"
    rpc(dev, op, cl.lat.connect())


def reconnect(cl: Client, fs: str | None, target: str = "OST0000") -> None:
    t = now_ns(cl.st) // NS
    for m in _mounts(cl.st, fs):
        dev = _find_dev(m, target)
        if dev["imp"]["state"] != "FULL":
            dev["imp"]["history"].append([t, "CONNECTING"])
            dev["imp"]["conn_attempts"] += 1
        _reconnect(cl, dev, t)


def add_ost(cl: Client, fs: str | None, count: int = 1) -> None:
    st = cl.st
    t = now_ns(st)
    for m in _mounts(st, fs):
        for _ in range(count):
            idx = len(m["osc"])
            osc = new_osc(m["fs"], idx, m["sbi"], t, st)
            for k in OSC_SETTINGS:            # the filesystem's settings (set_param -P)
                osc[k] = m["osc"][0][k]
            m["osc"].append(osc)
            m["n_ost"] = len(m["osc"])
            rpc(osc, "ost_connect", cl.lat.connect())
