"""The hooks' code, one job per module: logging (hooklog), time (budget), which snapshots and
how (hooksnap: the one place that calls the acquisition modules and the spool), where the
report goes (delivery), the last-resort stop (watchdog), prolog and epilog doing the work, and
entry tying them together.
Every share and margin of the hooks' time has a name that says why (no bare 0.4 in the code)."""

import ast
import dataclasses
import io
from pathlib import Path

import lustre_jobreport

PKG = Path(lustre_jobreport.__file__).parent / "hooks"
MODULES = ["entry", "prolog", "epilog", "steps", "hooklog", "budget", "hooksnap", "delivery", "watchdog"]
# ... and the modules whose steps the hooks time: their figures are budget's, by name
TIMED = MODULES + ["jobenv"]


def test_one_module_per_job_and_the_entry_points_stay():
    from lustre_jobreport.hooks import budget, delivery, hooklog, entry as hooks, hooksnap, watchdog
    assert hooks.exit_now is watchdog.exit_now and callable(hooks.run) and callable(hooks.limits)
    assert hooklog.HookLog and budget.Budget and watchdog.Watchdog and hooksnap.begin and hooksnap.end


def test_acquisition_is_called_from_one_module_only():
    """snapshot/spool: only hooksnap talks to them, so re-wiring them is one place."""
    for name in MODULES:
        if name == "hooksnap":
            continue
        tree = ast.parse((PKG / f"{name}.py").read_text())
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        assert not imported & {"snapshot", "spool"}, (name, imported)


def named_constants(tree):
    """Constant nodes inside module-level NAME = ... assignments (UPPER_CASE names)."""
    ids = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id.isupper() for t in targets):
            ids |= {id(n) for n in ast.walk(node)}
    return ids


def test_no_bare_fractions_or_margins_of_time():
    for name in TIMED:
        tree = ast.parse((PKG / f"{name}.py").read_text())
        named = named_constants(tree)
        bare = [(n.lineno, n.value) for n in ast.walk(tree)
                if isinstance(n, ast.Constant) and isinstance(n.value, float) and id(n) not in named]
        assert bare == [], f"{name}.py: unnamed time figures at {bare}"


def test_delivery_says_where_in_a_typed_record():
    from lustre_jobreport.hooks import delivery
    out = io.StringIO()
    got = delivery.to_pbs("the report\n", out)
    assert dataclasses.is_dataclass(got) and isinstance(got, delivery.Delivered)
    assert [f.name for f in dataclasses.fields(got)] == ["where", "mode", "uid", "gid"]
    assert got.where == "standard output" and out.getvalue() == "\nthe report\n"


def test_the_end_snapshot_the_epilog_builds_names_the_job():
    """As the begin snapshot does (the spool's); a job id a snapshot file cannot hold (a PBS array
    job's) is left out, as there. Of a node whose pmcd is down: quick."""
    import time
    from types import SimpleNamespace

    from kit.hookkit import dead_spec
    from lustre_jobreport.hooks import budget, hooksnap
    from lustre_jobreport import config
    from lustre_jobreport.acquire.hostsnap import HostSnapshot
    from lustre_jobreport.acquire.snapfile import Snapshot

    begin = Snapshot.from_hosts(1.0, [HostSnapshot("vm", dead_spec(), ok=True, fetched_at=1.0)])
    for job_id, named in (("7", "7"), ("123[4].pbs01", None)):
        job = SimpleNamespace(job_id=job_id)
        end = hooksnap.end(begin, job, config.Config(), budget.Budget(10.0, time.monotonic()))
        assert end.snap.job_id == named and not end.snap.hosts["vm"].ok
