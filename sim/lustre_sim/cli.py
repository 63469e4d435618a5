"""lustre-sim: command line for the simulated Lustre client.

  lustre-sim create ROOT --version 2.15.4 --fs scratch:8:1 [--fs home:4:1] [--page-size 4096]
                    [--seed 1] [--no-background] [--clock EPOCH] [--server-osp] [--force]
  lustre-sim run ROOT WORKLOAD [--fs scratch] [--param key=value ...]
  lustre-sim fault ROOT {clear,remount,evict,reconnect,add-ost} [--fs scratch] [--param k=v ...]
  lustre-sim set ROOT key=value ... [--fs scratch]   # client settings, node identity, quirks
  lustre-sim show ROOT            # versions, mounts, device names, where each file is
  lustre-sim workloads            # list workloads with a one-line description
  lustre-sim quirks               # list the client quirks and the tickets they follow
"""

from __future__ import annotations

import argparse
import json
import sys

from . import faults, settings as settings_mod, workloads
from .client import SimClient


def _params(items) -> dict:
    """A workload's --param key=value pairs (keys may be spelt with dashes)."""
    return {k.replace("-", "_"): v for k, v in _pairs(items, "--param").items()}


def _pairs(items, what: str) -> dict:
    out = {}
    for it in items or ():
        if "=" not in it:
            raise SystemExit(f"lustre-sim: {what} wants key=value, got {it!r}")
        k, v = it.split("=", 1)
        out[k.strip()] = v
    return out


def parser() -> argparse.ArgumentParser:
    """The command line (sim/lustre-sim.1 documents every subcommand and option of it)."""
    ap = argparse.ArgumentParser(prog="lustre-sim", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)

    c = sub.add_parser("create", help="build a client tree")
    c.add_argument("root")
    c.add_argument("--version", default="2.15.4", help="Lustre version string, e.g. 2.10.8, 2.12.9, 2.15.4")
    c.add_argument("--fs", action="append", metavar="NAME:OSTS:MDTS",
                   help="a mounted filesystem (repeatable; default scratch:8:1)")
    c.add_argument("--page-size", type=int, default=4096)
    c.add_argument("--max-pages-per-rpc", type=int, default=None)
    c.add_argument("--seed", type=int, default=1)
    c.add_argument("--clock", default=None,
                   help="fixed start time (epoch seconds) instead of the wall clock")
    c.add_argument("--no-background", action="store_true",
                   help="no earlier activity: counters only show the mount itself")
    c.add_argument("--server-osp", action="store_true",
                   help="also add a server-side <fs>-OST0000-osc-MDT0000 (symlink to ../osp/)")
    c.add_argument("--force", action="store_true", help="replace an existing simulated client")
    c.add_argument("--set", action="append", metavar="KEY=VALUE", dest="settings",
                   help="a client setting from the start (as `set` takes; repeatable)")
    c.add_argument("--quirk", action="append", metavar="NAME", default=[],
                   help="a client quirk (see `lustre-sim quirks`; repeatable)")

    r = sub.add_parser("run", help="run a workload (advances counters, rewrites the tree)")
    r.add_argument("root")
    r.add_argument("workload")
    r.add_argument("--fs", default=None)
    r.add_argument("--param", action="append", metavar="KEY=VALUE")
    r.add_argument("--json", action="store_true", help="print the run's deltas as JSON")

    f = sub.add_parser("fault", help="inject a fault / admin action")
    f.add_argument("root")
    f.add_argument("kind", choices=sorted(faults.FAULTS))
    f.add_argument("--fs", default=None, help="default: every mounted filesystem")
    f.add_argument("--param", action="append", metavar="KEY=VALUE")
    f.add_argument("--what", default=None, help="clear: all|llite|osc|mdc|rpc_stats")
    f.add_argument("--target", default=None, help="evict/reconnect: OST0003 or MDT0000")

    t = sub.add_parser("set", help="change client settings, node identity or quirks")
    t.add_argument("root")
    t.add_argument("pairs", nargs="+", metavar="KEY=VALUE",
                   help=f"keys: {', '.join(settings_mod.KEYS)}")
    t.add_argument("--fs", default=None, help="llite and osc settings: only this filesystem")

    sub.add_parser("quirks", help="list the client quirks")

    s = sub.add_parser("show", help="describe a simulated client")
    s.add_argument("root")

    sub.add_parser("workloads", help="list workloads")
    return ap


def main(argv=None) -> int:
    a = parser().parse_args(argv)
    try:
        if a.cmd == "create":
            fss = a.fs or ["scratch:8:1"]
            cl = SimClient.create(a.root, version=a.version, filesystems=fss, page_size=a.page_size,
                                  seed=a.seed, background=not a.no_background, clock=a.clock,
                                  max_pages_per_rpc=a.max_pages_per_rpc, server_osp=a.server_osp,
                                  force=a.force, settings=_pairs(a.settings, "--set"),
                                  quirks=a.quirk)
            print(f"lustre-sim: Lustre {cl.version} client in {a.root}: "
                  + ", ".join(f"{n} ({cl.mount_id(n)})" for n in cl.filesystems))
        elif a.cmd == "run":
            cl = SimClient.load(a.root)
            summ = cl.run(a.workload, fs=a.fs, **_params(a.param))
            if a.json:
                print(json.dumps(summ, indent=1))
            else:
                print(f"lustre-sim: {summ['workload']} on {summ['fs']}: read {summ['read_bytes']:,} B "
                      f"in {summ['read_calls']:,} calls, wrote {summ['write_bytes']:,} B in "
                      f"{summ['write_calls']:,} calls, "
                      + ", ".join(f"{k} {v:,}" for k, v in summ["ops"].items()))
        elif a.cmd == "fault":
            cl = SimClient.load(a.root)
            p = _params(a.param)
            if a.what:
                p["what"] = a.what
            if a.target:
                p["target"] = a.target
            cl.fault(a.kind, fs=a.fs, **p)
        elif a.cmd == "set":
            cl = SimClient.load(a.root)
            done = cl.set(fs=a.fs, **_pairs(a.pairs, "set"))
            print("lustre-sim: set " + ", ".join(f"{k}={v}" for k, v in done.items()))
        elif a.cmd == "quirks":
            for name, (ticket, what) in settings_mod.QUIRKS.items():
                print(f"{name:<24} {ticket}\n{'':<24} {what}")
        elif a.cmd == "show":
            cl = SimClient.load(a.root)
            cfg = cl.settings()
            print(f"Lustre {cl.version}, page size {cl.page_size}, kernel {cfg['kernel']}, "
                  f"quirks: {', '.join(cfg['quirks']) or 'none'}")
            for n in cl.filesystems:
                d = cl.device_dirs(n)
                print(f"{n}: llite {d['llite']}, {len(d['osc'])} OSC, {len(d['mdc'])} MDC, "
                      f"resident handles {cl.st['mounts'][n]['resident']}")
                print("  " + ", ".join(f"{k}={v}" for k, v in cfg["fs"][n].items()))
            for pth in cl.paths():
                if "OST0000" in pth or "-OST" not in pth:
                    print("  " + pth)
        elif a.cmd == "workloads":
            for name in sorted(workloads.REGISTRY):
                w = workloads.REGISTRY[name]
                print(f"{name:<12} {w.summary}")
                if w.params:
                    print(f"{'':<12} params: " + ", ".join(f"{k}={v}" for k, v in w.params.items()))
    except (KeyError, ValueError, FileExistsError, FileNotFoundError, RuntimeError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f"lustre-sim: {msg}", file=sys.stderr)
        return 2
    except BrokenPipeError:                      # lustre-sim workloads | head
        try:
            sys.stdout.close()
        except BrokenPipeError:
            pass
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
