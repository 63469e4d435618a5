"""lustre-jobreport command line: snapshot, report, the scheduler hooks' prolog/epilog, job
records (add, compact) and compare.

Errors the user can act on (bad files, bad config) print one line and exit 2, never a traceback;
so does running out of memory (a snapshot within the caps, read under a ulimit), and so does an
admin-side command (records add and compact, compare) on a node without the admin's libraries
(pyarrow, DuckDB, scipy: it names those missing and what to install). Every line printed to
standard error shows its hidden characters as escapes (textsafe.escaped): they echo names and
texts from files. The snapshot path imports no Jinja2: it runs in job prologs.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from . import __version__
from .errors import JobReportError
from .present.textsafe import escaped

PROG = "lustre-jobreport"

# The admin side's libraries (the `records` extra): the Parquet dataset and compare need them, the
# node side (hooks, snapshot, report, JSON records) never imports them.
ADMIN_INSTALL = "install lustre-jobreport-admin, or pip install 'lustre-jobreport[records]'"
RECORDS = ("pyarrow",)
COMPARE = ("pyarrow", "duckdb", "scipy")


def complain(level: str, message: str) -> None:
    """One line to standard error, whatever the message holds."""
    print(f"{PROG}: {level}: {escaped(message)}", file=sys.stderr)


def require(modules: tuple[str, ...]) -> None:
    """JobReportError naming those of the modules that cannot be imported, and what to install."""
    missing = []
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            plain = isinstance(exc, ModuleNotFoundError) and exc.name == name
            missing.append(name if plain else f"{name} ({exc})")
    if missing:
        raise JobReportError(f"needs {', '.join(missing)}: {ADMIN_INSTALL}")


def _cmd_snapshot(args: argparse.Namespace) -> int:
    from . import config
    from .acquire import snapformat, snapshot

    if args.job_id is not None and not snapformat.is_job_id(args.job_id):
        raise JobReportError(f"--job-id {snapformat.shown(args.job_id)}: a snapshot names a job by "
                             f"{snapformat.JOB_ID_RULE}")
    cfg = config.load(args.config)
    targets = [snapshot.HostTarget.parse(h) for h in args.host or []]
    for nodes in args.nodes or []:
        targets += snapshot.targets_for_nodes(nodes, cfg)
    for f in args.hosts_file or []:
        targets += snapshot.read_hosts_file(f, cfg)
    if not targets:
        targets = [snapshot.HostTarget.parse("local=localhost")]
    s = cfg.snapshot
    fetched = snapshot.fetch_all(targets, connect_timeout_s=args.connect_timeout or s["connect_timeout_s"],
                                 fetch_timeout_s=args.fetch_timeout or s["fetch_timeout_s"],
                                 parallel=int(s["parallel"]), processes=int(s["processes"]), backend=args.backend)
    try:
        fetched.write(args.output, job_id=args.job_id)
    except OSError as exc:
        raise JobReportError(f"cannot write {args.output}: {exc.strerror}") from None
    for h in fetched.failed():   # an unreachable host is recorded in the file, never fatal
        complain("warning", f"{h.host}: {h.error}")
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from . import config
    from .report import view as render, document as report
    from .acquire import snapfile

    cfg = config.load(args.config)
    begin, end = snapfile.read(args.begin), snapfile.read(args.end)
    report.check_pair(begin, end)
    shared = {}
    for item in args.shared_node or []:
        host, _, why = item.partition("=")
        shared[host] = why or "other jobs"
    facts = {"name": args.job_name, "partition": args.partition, "account": args.account}
    job_id = report.job_of(begin, end, args.job_id)
    doc = report.build(begin, end, cfg, job_id=job_id, user=args.user, shared_hosts=shared, facts=facts)
    _write(render.render(doc, args.format), args.output)
    return 0


def _write(text: str, output: str | None) -> None:
    """A rendered report to -o OUT, or standard output."""
    if output in (None, "-"):
        sys.stdout.write(text)
        return
    try:
        Path(output).write_text(text)
    except OSError as exc:
        raise JobReportError(f"cannot write {output}: {exc.strerror}") from None


def _cmd_records_add(args: argparse.Namespace) -> int:
    from . import config
    from .records import add as records_add

    cfg = config.load(args.config)
    path = records_add.add(args.report, records_dir=args.records or cfg.values["hooks"]["records_dir"],
                       cluster=args.cluster or cfg.values["hooks"]["cluster"] or None)
    print(path)
    return 0


def _cmd_records_compact(args: argparse.Namespace) -> int:
    from .records import compact
    from . import config

    cfg = config.load(args.config)
    result = compact.compact(args.records or cfg.values["hooks"]["records_dir"],
                             args.dataset or cfg.values["records"]["dataset_dir"])
    sys.stdout.write(result.summary())
    return result.status()


def _cmd_compare(args: argparse.Namespace) -> int:
    from .compare import command as compare_command
    from . import config

    cfg = config.load(args.config)
    _write(compare_command.main(args, cfg), args.output)
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    from . import config
    from .records import show
    from .report import view as render

    cfg = config.load(args.config)
    doc, note = show.show(args.records or cfg.values["hooks"]["records_dir"], args.job_id,
                          args.cluster or None)
    if note:
        complain("note", note)
    _write(render.render(doc, args.format), args.output)
    return 0


def _cmd_hook(args: argparse.Namespace) -> int:
    from .hooks import entry as hooks  # never raises, always 0: a failing Slurm prolog/epilog drains the node

    if args.limits:
        hooks.exit_now(hooks.limits(args.command, args.scheduler, args.argv, args.config, fallback_log=args.log))
    hooks.exit_now(hooks.run(args.command, args.scheduler, args.argv, args.config, fallback_log=args.log,
                             supervise=True, bound=args.bound))
    return 0  # not reached


HOOKS = ("prolog", "epilog")
HOOK_HELP_WIDTH = 78


class HookHelp(argparse.HelpFormatter):
    """argparse's help, HOOK_HELP_WIDTH wide: argparse makes a formatter for every argument it
    is given, and its default asks shutil for the terminal's width, an import (with bz2 and
    lzma) of ~1.7 ms that every job's start would wait for. A hook runs under the scheduler, with
    no terminal to fit."""

    def __init__(self, prog: str, **kw):
        kw.setdefault("width", HOOK_HELP_WIDTH)
        super().__init__(prog, **kw)


def parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line; only="prolog" or "epilog": that hook's subcommand alone (a job's start
    waits for the hook, and building every subcommand's parser costs it milliseconds)."""
    hook = only in HOOKS
    p = argparse.ArgumentParser(prog=PROG, description="Per-job Lustre client I/O report from PCP.",
                                formatter_class=HookHelp if hook else argparse.HelpFormatter)
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    p.add_argument("--config", help="site config (default /etc/lustre-jobreport/config.toml)")
    sub = p.add_subparsers(dest="command", required=True)
    if hook:
        _hook_parsers(sub, (only,), HookHelp)
        return p

    s = sub.add_parser("snapshot", help="fetch all lustreclient metrics from every host of a job")
    s.add_argument("--host", action="append", metavar="[NAME=]SPEC",
                   help="PCP host spec (node17, node17:44321, unix:/path/pmcd.socket), repeatable")
    s.add_argument("--nodes", action="append", metavar="NODELIST",
                   help="scheduler node list, e.g. 'node[01-04,7]'; each node's pmcd comes from the config")
    s.add_argument("--hosts-file", action="append", metavar="FILE",
                   help="one node name or NAME=SPEC per line (e.g. a PBS node file)")
    s.add_argument("-o", "--output", required=True, metavar="SNAP.json")
    s.add_argument("--job-id", metavar="ID",
                   help="the job the snapshot is of, named in the file: report refuses the begin of one "
                        "job with the end of another (1 to 63 of A-Z a-z 0-9 _ . : + -)")
    s.add_argument("--backend", choices=("auto", "pmapi", "pminfo", "cli"), default="auto",
                   help="PCP Python bindings (pmapi) or one pminfo per host (pminfo, also 'cli'); "
                        "default: the bindings when importable")
    s.add_argument("--connect-timeout", type=float, metavar="S")
    s.add_argument("--fetch-timeout", type=float, metavar="S")
    s.set_defaults(func=_cmd_snapshot)

    r = sub.add_parser("report", help="report the difference between two snapshots")
    r.add_argument("begin", metavar="BEGIN.json")
    r.add_argument("end", metavar="END.json")
    r.add_argument("--format", choices=("text", "json", "html"), default="text")
    r.add_argument("-o", "--output", metavar="OUT", help="default: standard output")
    r.add_argument("--job-id", help="the job's id (default: the job the snapshots name; another is refused)")
    r.add_argument("--user")
    r.add_argument("--job-name", help="the job's name (compare groups jobs by it)")
    r.add_argument("--partition", help="the job's partition or queue")
    r.add_argument("--account", help="the job's account")
    r.add_argument("--shared-node", action="append", metavar="HOST[=WHY]",
                   help="a host that ran other jobs during this one (its counters include theirs)")
    r.set_defaults(func=_cmd_report)

    rec = sub.add_parser("records", help="job records: add a report by hand, compact into Parquet")
    rsub = rec.add_subparsers(dest="records_command", required=True)
    ra = rsub.add_parser("add", help="store a report (report --format json) as a job record")
    ra.add_argument("report", metavar="REPORT.json")
    ra.add_argument("--records", metavar="DIR", help="records directory (default: [hooks] records_dir)")
    ra.add_argument("--cluster", help="cluster name in the record (default: [hooks] cluster)")
    ra.set_defaults(func=_cmd_records_add, needs=RECORDS)   # it checks the record would compact
    rc = rsub.add_parser("compact", help="gather the JSON records into the Parquet dataset")
    rc.add_argument("--records", metavar="DIR", help="records directory (default: [hooks] records_dir)")
    rc.add_argument("--dataset", metavar="DIR", help="dataset directory (default: [records] dataset_dir)")
    rc.set_defaults(func=_cmd_records_compact, needs=RECORDS)

    c = sub.add_parser("compare", help="compare job records before and after a change (e.g. a Lustre upgrade)")
    c.add_argument("--baseline", required=True, metavar="SEL",
                   help="records of the baseline, e.g. 'lustre=2.15.*' or 'until=2026-10-01,cluster=c1'")
    c.add_argument("--candidate", required=True, metavar="SEL", help="records of the candidate, same form")
    c.add_argument("--records", metavar="DIR", help="JSON records (default: [hooks] records_dir)")
    c.add_argument("--dataset", metavar="DIR", help="Parquet dataset (default: [records] dataset_dir)")
    c.add_argument("--by", metavar="KEYS", help="group jobs by these keys, comma-separated "
                   "(default: [compare] group_by; known: job_name,user,nodes_class,account,partition,command,cluster)")
    c.add_argument("--coarsen", metavar="KEYS", help="keys dropped, one more at each level, to pool groups "
                   "too small to judge, comma-separated; '' for none (default: [compare] coarsen)")
    c.add_argument("--format", choices=("text", "json", "html"), default="text")
    c.add_argument("-o", "--output", metavar="OUT", help="default: standard output")
    c.set_defaults(func=_cmd_compare, needs=COMPARE)

    sh = sub.add_parser("show", help="a past job's report, from its record (your own jobs; root: any)")
    sh.add_argument("job_id", metavar="JOBID")
    sh.add_argument("--cluster", help="the cluster the job ran on, where job ids of several are kept")
    sh.add_argument("--records", metavar="DIR", help="records directory (default: [hooks] records_dir)")
    sh.add_argument("--format", choices=("text", "json", "html"), default="text")
    sh.add_argument("-o", "--output", metavar="OUT", help="default: standard output")
    sh.set_defaults(func=_cmd_show)

    _hook_parsers(sub, HOOKS)
    return p


def _hook_parsers(sub, names: tuple[str, ...], formatter=argparse.HelpFormatter) -> None:
    for name, what in (("prolog", "job start (scheduler hook): snapshot all the job's hosts into the spool"),
                       ("epilog", "job end (scheduler hook): snapshot again, append the report to the "
                                  "job's output, store the record")):
        if name not in names:
            continue
        h = sub.add_parser(name, help=what, formatter_class=formatter)
        schedulers = ("slurm", "pbs", "pbs-hook", "torque-sister") if name == "prolog" else ("slurm", "pbs")
        h.add_argument("--scheduler", choices=schedulers,
                       default="slurm",
                       help="slurm: job from the Prolog/Epilog environment; pbs: from ARG..." +
                            ("; pbs-hook: PBS's execjob_begin hook on every host, ARG... its job id, host, "
                             "primary|sister, exec_host; torque-sister: Torque's prologue.parallel on a "
                             "sister host, ARG... the prologue's" if name == "prolog" else ""))
        h.add_argument("--log", default="syslog", metavar="syslog|FILE",
                       help="where errors go if the config cannot be read (else [hooks] log)")
        h.add_argument("--limits", action="store_true", help="only print the wrappers' TERM KILL BOUND LOG")
        h.add_argument("--bound", type=float, metavar="S",
                       help="the wrapper's: the bound it holds; first say the config's limits on standard "
                            "error, and where the config's bound is another, do nothing and exit 75")
        h.add_argument("argv", nargs="*", metavar="ARG",
                       help="pbs: the prologue/epilogue arguments (job id, user, group, ...)")
        h.set_defaults(func=_cmd_hook)


def _command_of(argv: list[str]) -> str | None:
    """The subcommand named in argv (the first word that is not an option or --config's value)."""
    words = iter(argv)
    for word in words:
        if word == "--config":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parser(_command_of(argv)).parse_args(argv)
    try:
        require(getattr(args, "needs", ()))
        return args.func(args)
    except JobReportError as exc:
        complain("error", str(exc))
        return 2
    except MemoryError as exc:   # what failed was one large allocation: a line still fits
        complain("error", str(exc) or f"out of memory: {args.command} needs more than this process may use")
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
