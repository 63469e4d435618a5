#!/usr/bin/env python3
"""Does a new admin's `pip install` of the wheels work on this Python? (docs/admin.md,
"Installing with pip"; make wheel builds the wheels.)

    wheelcheck.py PYTHON WHEELDIR WORKDIR [--records] [--tree DIR]

Run with any Python >= 3.9, standard library only, so that it runs as it is inside a Debian
root on that root's python3. Each venv is made as docs/admin.md tells an admin to:
- the node side: a venv of PYTHON (WORKDIR/node) with the system's site packages, as PCP's
  bindings are the distribution's, and so are numpy, Jinja2 and matplotlib where it has them;
  pip installs WHEELDIR's lustre-jobreport wheel there, with the dependencies it resolves from
  the index it is set up with (PIP_* variables, the CA bundle of PIP_CERT, are passed on). The
  installed `lustre-jobreport report` runs on the snapshots of tests/packages/wheelcheck-data/ (two
  simulated nodes of the Enzo job, as the real agent served them): the text, JSON and HTML
  reports must be made, and the JSON and the text must equal what the source tree's reporter
  (DIR/reporter, default the checkout holding this script) makes of the same snapshots in the
  same venv.
- the admin side (--records): a venv of PYTHON (WORKDIR/admin) of pip's packages alone, as
  pyarrow's wheels need a newer numpy than a distribution's (pip would keep the distribution's
  and pyarrow would not import); pip installs the wheel with its `records` extra, and
  `records add` (a few job records of the node's report), `records compact` and `compare` run;
  compare's JSON must equal the tree's for the same records.

It prints what pip installed (each library's version, and whether it is pip's or the
distribution's) and a line per step; each failure is one line "wheelcheck: STEP: WHY", and the
exit code is 1 (2 for bad arguments). WORKDIR is made anew: an earlier check's is removed,
any other directory that is not empty is refused.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
INPUTS = ("wheelcheck-data/begin.json", "wheelcheck-data/end.json")
FORMATS = ("text", "json", "html")
# The libraries whose origin (pip or the distribution) the summary names.
LIBRARIES = ("numpy", "Jinja2", "MarkupSafe", "matplotlib", "python-hostlist", "toml",
             "pyarrow", "duckdb", "scipy")
MARK = ".wheelcheck"           # in a WORKDIR the check made, which it may remove
RECORDS_PER_SIDE = 5          # compare's default min_jobs: each side is tested
PIP_TIMEOUT_S = 1800
RUN_TIMEOUT_S = 300


class CheckFailed(Exception):
    """One step failed: its name and one line why."""

    def __init__(self, step: str, why: str):
        super().__init__(f"{step}: {why}")


def one_line(text: str, limit: int = 400) -> str:
    """A command's error output on one line: its lines joined, the end kept (a traceback's last
    line, a message that spans lines whole)."""
    joined = " / ".join(line.strip() for line in text.splitlines() if line.strip()) or "(no output)"
    return joined if len(joined) <= limit else "..." + joined[-limit:]


def run(step: str, cmd: list, *, env: dict | None = None, timeout: float = RUN_TIMEOUT_S) -> str:
    """cmd's standard output; CheckFailed with its last line of error if it fails."""
    try:
        proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise CheckFailed(step, f"no answer within {timeout:.0f} s: {' '.join(map(str, cmd))}") from None
    except OSError as exc:
        raise CheckFailed(step, f"cannot run {cmd[0]}: {exc.strerror or exc}") from None
    if proc.returncode != 0:
        raise CheckFailed(step, f"exit {proc.returncode}: {one_line(proc.stderr or proc.stdout)}")
    return proc.stdout


def clean_env() -> dict:
    """This process's environment less what would make the installed package find things
    outside itself: the reporter's own overrides (templates), PYTHON* paths, a venv's marks."""
    drop = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "VIRTUAL_ENV")
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("LUSTRE_JOBREPORT_")}
    env["PYTHONNOUSERSITE"] = "1"
    env["LC_ALL"] = env["LANG"] = "C.UTF-8"
    return env


def the_wheel(wheeldir: Path) -> Path:
    found = sorted(wheeldir.glob("lustre_jobreport-*-py3-none-any.whl"))
    if len(found) != 1:
        raise CheckFailed("wheel", f"expected one lustre_jobreport-*-py3-none-any.whl in {wheeldir}, found {len(found)}"
                                   " (make wheel)")
    return found[0].resolve()


class Venv:
    """A venv of the Python under test, which sees the system's site packages or not."""

    def __init__(self, python: str, where: Path, *, system_site_packages: bool):
        self.where = where
        self.python = where / "bin" / "python"
        self.env = clean_env()
        run("venv", [python, "-m", "venv", *(["--system-site-packages"] if system_site_packages else []), where])

    def pip_install(self, step: str, requirement: str) -> None:
        run(step, [self.python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
                   "--no-warn-script-location", requirement], env=self.env, timeout=PIP_TIMEOUT_S)

    def origins(self) -> str:
        """Each library of LIBRARIES that this venv's Python finds: its version, and whether
        pip put it in the venv or it is the system's (the distribution's)."""
        probe = ("import json, sys\n"
                 "from importlib import metadata\n"
                 "out = {'python': sys.version.split()[0]}\n"
                 "for name in %r:\n"
                 "    try:\n"
                 "        d = metadata.distribution(name)\n"
                 "    except metadata.PackageNotFoundError:\n"
                 "        continue\n"
                 "    where = str(d.locate_file(''))\n"
                 "    out[name] = [d.version, where.startswith(sys.prefix)]\n"
                 "pip = metadata.distribution('pip')\n"
                 "out['pip'] = [pip.version, True]\n"
                 "print(json.dumps(out))\n" % (LIBRARIES,))
        found = json.loads(run("versions", [self.python, "-c", probe], env=self.env))
        shown = [f"Python {found.pop('python')}"]
        for name, (version, in_venv) in found.items():
            shown.append(f"{name} {version} ({'pip' if in_venv else 'distribution'})")
        return ", ".join(shown)


def reporter_of_tree(venv: Venv, tree: Path) -> list:
    """The command that runs the source tree's reporter on the venv's Python and libraries."""
    package = tree / "reporter"
    if not (package / "lustre_jobreport" / "cli.py").is_file():
        raise CheckFailed("tree", f"no reporter source in {package} (--tree: a checkout or a copy of one)")
    # The tree's package, not the installed one beside it in the venv: it comes first on the
    # path, and the run stops if the import found the other all the same.
    code = ("import sys; tree = sys.argv.pop(1); sys.path.insert(0, tree)\n"
            "import lustre_jobreport\n"
            "if not lustre_jobreport.__file__.startswith(tree):\n"
            "    sys.exit('the tree reporter imported ' + lustre_jobreport.__file__)\n"
            "from lustre_jobreport.cli import main; sys.exit(main())")
    return [venv.python, "-c", code, package]


def reports(step: str, reporter: list, env: dict, inputs: list[Path], config: Path, out: Path) -> dict[str, Path]:
    """The three reports of the snapshots, each checked to be there and whole."""
    out.mkdir(parents=True)
    made = {}
    for fmt in FORMATS:
        path = out / f"report.{fmt}"
        run(step, reporter + ["--config", config, "report", *inputs, "--user", "enzo", "--job-id", "wheelcheck-1",
                              "--format", fmt, "-o", path], env=env)
        if not path.is_file() or path.stat().st_size == 0:
            raise CheckFailed(step, f"the {fmt} report {path} was not written")
        made[fmt] = path
    html = made["html"].read_text(encoding="utf-8")
    if "<svg" not in html or "</html>" not in html.rstrip()[-20:]:
        raise CheckFailed(step, f"the HTML report {made['html']} has no chart or is cut short")
    return made


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """Where two JSON values first differ, as a path, or None when they are equal."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            if key not in a or key not in b:
                return f"{path}/{key} (only in {'the installed' if key in a else 'the tree'}'s)"
            found = first_difference(a[key], b[key], f"{path}/{key}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path} ({len(a)} items, the tree's {len(b)})"
        for i, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, f"{path}/{i}")
            if found:
                return found
        return None
    return None if (a == b and type(a) is type(b)) else f"{path}: {a!r}, the tree's {b!r}"


def same_json(step: str, installed: Path, tree: Path) -> None:
    diff = first_difference(json.loads(installed.read_text()), json.loads(tree.read_text()))
    if diff:
        raise CheckFailed(step, f"the installed package's {installed.name} differs from the tree's at {diff}")


def same_text(step: str, installed: Path, tree: Path) -> None:
    a, b = installed.read_text().splitlines(), tree.read_text().splitlines()
    for n, (x, y) in enumerate(zip(a, b), 1):
        if x != y:
            raise CheckFailed(step, f"{installed.name} line {n} is {x.strip()!r}, the tree's {y.strip()!r}")
    if len(a) != len(b):
        raise CheckFailed(step, f"{installed.name} has {len(a)} lines, the tree's {len(b)}")


def records_and_compare(step: str, reporter: list, env: dict, report_json: Path, config: Path, out: Path) -> Path:
    """RECORDS_PER_SIDE job records of each of two clusters from one report (each its own job
    id), compacted into a dataset, and compare's JSON of one cluster against the other."""
    doc = json.loads(report_json.read_text())
    records, dataset, jobs = out / "records", out / "dataset", out / "jobs"
    jobs.mkdir(parents=True)
    for cluster in ("before", "after"):
        for i in range(RECORDS_PER_SIDE):
            doc["job"]["id"] = f"wheelcheck-{i + 1}"
            job = jobs / f"{cluster}-{i + 1}.json"
            job.write_text(json.dumps(doc))
            run(step, reporter + ["--config", config, "records", "add", "--records", records, "--cluster", cluster, job],
                env=env)
    run(step, reporter + ["--config", config, "records", "compact", "--records", records, "--dataset", dataset], env=env)
    compared = out / "compare.json"
    run(step, reporter + ["--config", config, "compare", "--records", records, "--dataset", dataset,
                          "--baseline", "cluster=before", "--candidate", "cluster=after",
                          "--format", "json", "-o", compared], env=env)
    if not compared.is_file() or compared.stat().st_size == 0:
        raise CheckFailed(step, f"compare wrote no {compared}")
    return compared


def fresh_workdir(work: Path) -> None:
    """WORKDIR made anew: removed first only if it is absent, empty or an earlier check's (it
    holds MARK), never a directory of other files given by mistake."""
    if work.is_dir() and any(work.iterdir()) and not (work / MARK).is_file():
        raise CheckFailed("workdir", f"{work} holds other files: give a new or empty directory")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    (work / MARK).write_text("made by wheelcheck.py\n")


def node_side(python: str, wheel: Path, tree: Path, inputs: list, config: Path, work: Path, say) -> Path:
    """pip install of the wheel beside the distribution's packages; its reports of the inputs
    against the tree's. The installed JSON report."""
    started = time.monotonic()
    node = Venv(python, work / "node", system_site_packages=True)
    node.pip_install("pip install (node)", str(wheel))
    say(f"node: pip installed {wheel.name} in {time.monotonic() - started:.0f} s: {node.origins()}")
    installed = reports("report (installed)", [node.where / "bin" / "lustre-jobreport"], node.env, inputs, config,
                        work / "installed")
    reference = reports("report (tree)", reporter_of_tree(node, tree), dict(node.env, PYTHONDONTWRITEBYTECODE="1"),
                        inputs, config, work / "tree")
    same_json("report", installed["json"], reference["json"])
    same_text("report", installed["text"], reference["text"])
    say("node: the installed lustre-jobreport made the text, JSON and HTML reports; JSON and text equal the tree's")
    return installed["json"]


def admin_side(python: str, wheel: Path, tree: Path, report_json: Path, config: Path, work: Path, say) -> None:
    """pip install of the wheel with its records extra in a venv of pip's packages; records,
    compaction and compare against the tree's."""
    started = time.monotonic()
    admin = Venv(python, work / "admin", system_site_packages=False)
    admin.pip_install("pip install (admin)", f"{wheel}[records]")
    say(f"admin: pip installed {wheel.name}[records] in {time.monotonic() - started:.0f} s: {admin.origins()}")
    ours = records_and_compare("records (installed)", [admin.where / "bin" / "lustre-jobreport"], admin.env,
                               report_json, config, work / "installed")
    theirs = records_and_compare("records (tree)", reporter_of_tree(admin, tree),
                                 dict(admin.env, PYTHONDONTWRITEBYTECODE="1"), report_json, config, work / "tree")
    same_json("compare", ours, theirs)
    say(f"admin: records add ({2 * RECORDS_PER_SIDE} jobs), records compact and compare ran; "
        "compare's JSON equals the tree's")


def check(args: argparse.Namespace, say) -> None:
    work, tree = Path(args.workdir).resolve(), Path(args.tree).resolve()
    wheel = the_wheel(Path(args.wheeldir))
    inputs = [tree / "tests" / "packages" / name for name in INPUTS]
    for path in inputs:
        if not path.is_file():
            raise CheckFailed("inputs", f"no snapshot {path} (--tree: a checkout or a copy of one)")
    fresh_workdir(work)
    config = work / "config.toml"          # the shipped defaults, whatever /etc holds
    config.write_text("")
    report_json = node_side(args.python, wheel, tree, inputs, config, work, say)
    if args.records:
        admin_side(args.python, wheel, tree, report_json, config, work, say)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="wheelcheck.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("python", help="the Python to make the venv of (e.g. python3)")
    parser.add_argument("wheeldir", help="where make wheel put the wheels (build/wheels)")
    parser.add_argument("workdir", help="a directory of the check's own (made anew)")
    parser.add_argument("--records", action="store_true", help="also the records extra: records add, compact, compare")
    parser.add_argument("--tree", default=str(HERE.parents[1]),
                        help="the source tree (its reporter and the snapshots; default: %(default)s)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    started = time.monotonic()
    try:
        check(args, lambda line: print(f"wheelcheck: {line}", flush=True))
    except CheckFailed as exc:
        print(f"wheelcheck: {exc}", file=sys.stderr)
        return 1
    print(f"wheelcheck: passed in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
