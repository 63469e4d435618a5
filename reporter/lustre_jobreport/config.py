"""Site configuration: /etc/lustre-jobreport/config.toml over the documented defaults.

Every flag threshold of DESIGN §4 lives here; a site file only needs the values it changes.
The shipped, commented copy of these defaults is packaging/config.toml.
"""

from __future__ import annotations

import copy
import json
import math
import re
from pathlib import Path
from typing import Any, Callable

from .errors import ConfigError

DEFAULT_PATH = Path("/etc/lustre-jobreport/config.toml")

DEFAULTS: dict[str, Any] = {
    "snapshot": {
        "connect_timeout_s": 5.0,   # per host: pmcd connect
        "fetch_timeout_s": 10.0,    # per host: the one fetch
        "parallel": 64,             # hosts fetched at once (per process)
        "processes": 1,             # large fan-outs over this many processes; 0 = one per core, at most 8
        # the same for the epilog of a job read through the job view: the job has ended, so the
        # first node's cores are idle; 0 = one per core it may use, at most 8
        "job_view_processes": 0,
        "host_spec": "{host}",      # PCP host spec of a scheduler node name, e.g. "{host}-ib:44321"
        # Where a node's prolog stores a job's start into its own agent (the job view): a local
        # connection, which pmcd's default access control allows to store ({host}: the node name).
        "local_spec": "local:",
    },
    # Node name -> PCP host spec, for nodes whose pmcd is not at host_spec (free-form keys).
    "hosts": {},
    # Scheduler prolog/epilog (lustre-jobreport prolog|epilog, hooks/): DESIGN §5.
    "hooks": {
        "spool_dir": "/var/spool/lustre-jobreport",        # begin snapshots, root 0700
        "spool_max_age_days": 30.0,                         # begin snapshots of vanished jobs expire
        "records_dir": "/var/lib/lustre-jobreport/records",  # job records; "" = none
        "html": "beside",      # "beside" the job's output (as the job user), "dir" (html_dir), "off"
        "html_dir": "",
        "log": "syslog",       # "syslog" (daemon facility) or a log file path
        "prolog_timeout_s": 5.0,
        "prolog_cli_max_hosts": 16,    # jobs on <= this many nodes: one pminfo per node at start
        # Slurm jobs on at least this many nodes are read through the agents' job view: each
        # node's prolog stores the job's start into its own agent, the epilog reads the deltas
        # (nothing spooled; the way a 12,000-node job fits the bounds). 0 = never.
        "job_view_from_nodes": 1,
        "epilog_timeout_s": 30.0,
        "scheduler_timeout_s": 10.0,   # scontrol show job, squeue; PBS: getent passwd/group
        "check_shared_nodes": True,    # Slurm: ask squeue which other jobs used the job's nodes
        "cluster": "",         # record names; "" = SLURM_CLUSTER_NAME / the PBS server name
    },
    # Job records kept for `compare` (hooks.records_dir holds the JSON records the epilogs write).
    "records": {
        "dataset_dir": "/var/lib/lustre-jobreport/dataset",   # `records compact` writes Parquet here
    },
    # `lustre-jobreport compare`: how jobs are grouped and when a change is a verdict.
    "compare": {
        # A job's signature: its group is the same job name, user and node-count class (1, 2-3,
        # 4-7, 8-15 ... nodes) on the same filesystem. Keys: job_name, user, nodes_class, account,
        # partition, command, cluster (fs is always part of the group).
        "group_by": ["job_name", "user", "nodes_class"],
        # A group with fewer than min_jobs trusted jobs on a side is pooled with the other such
        # groups without the first of these keys, then without the next too, before it is
        # not_enough_data (the pooled node classes or users compared stratum by stratum).
        "coarsen": ["nodes_class", "user"],
        "q": 0.05,              # false discovery rate: of the groups that moved, then of their metrics
        "min_jobs": 5,          # fewer jobs on either side of a group: not_enough_data
        "min_ratio": 1.25,      # and the medians must differ by at least this factor ...
        "min_cliffs_delta": 0.33,   # ... and the effect be at least medium, to be a verdict
        "min_bytes": 64 * 2**20,    # a job's read (write) metrics count when it read (wrote) this much
    },
    "flags": {
        # Per-second rates are not judged for jobs shorter than this (data_quality SHORT_JOB).
        "min_elapsed_s": 60.0,
        "SMALL_RPC": {"max_rpc_bytes": 16384, "min_share": 0.10, "min_rpcs": 1000},
        "OPEN_CLOSE_STORM": {"min_opens": 1000, "opens_per_gib": 20.0, "opens_per_s": 100.0},
        "STAT_STORM": {"min_getattr": 10000, "getattr_per_open": 2.0},
        "STATFS_STORM": {"min_statfs": 1000},
        "METADATA_RATE": {"per_host_per_s": 1000.0, "job_per_s": 10000.0},
        "TINY_CALLS": {"max_mean_bytes": 4096, "min_calls": 100000},
        "UNDER_STRIPED": {"min_bytes": 10 * 2**30, "min_osts": 4, "one_ost_share": 0.80},
        "OVER_STRIPED_SMALL_IO": {"min_osts": 9, "max_mean_rpc_bytes": 65536},
        "RANK0_IO": {"min_hosts": 4, "min_bytes": 2**30, "one_host_share": 0.90},
        "READAHEAD_WASTE": {"ratio": 1.5, "min_bytes": 2**30},
        "FSYNC_STORM": {"min_fsync": 1000, "per_gib_written": 10.0},
        "SLOW_OST": {"times_median": 3.0, "min_wait_us": 10000},
        "FS_TROUBLE": {},
    },
}


# The longest any timeout may be: a bound of an hour or more is surely a typo (ms for s), and a
# scheduler hook held that long keeps the node from its next job.
MAX_TIMEOUT_S = 3600.0
# A begin snapshot must outlive the longest job: expiring one sooner than a day removes the
# begin snapshot of a job that is still running.
MIN_SPOOL_AGE_DAYS = 1.0


class Config:
    """The settings in force (DEFAULTS overlaid by the site file) and where they came from. A
    plain class, not a dataclass: every job's prolog reads the config, and `dataclasses` would
    cost its start the import of `inspect`."""
    values: dict[str, Any]
    source: str
    problems: tuple[str, ...]   # load(strict=False): the bad settings replaced by their default

    def __init__(self, values: dict[str, Any] | None = None, source: str = "built-in defaults",
                 problems: tuple[str, ...] = ()):
        self.values = copy.deepcopy(DEFAULTS) if values is None else values
        self.source, self.problems = source, problems

    def __repr__(self) -> str:
        return f"Config(source={self.source!r}, problems={len(self.problems)})"

    def flag(self, flag_id: str) -> dict[str, Any]:
        return self.values["flags"][flag_id]

    @property
    def snapshot(self) -> dict[str, Any]:
        return self.values["snapshot"]

    def local_spec(self, node: str) -> str:
        """Where a node's own pmcd is, for the local store of a job's start (the job view)."""
        return self.values["snapshot"]["local_spec"].format(host=node)

    def host_spec(self, node: str) -> str:
        """Where the pmcd of a scheduler node is: the [hosts] map, else the host_spec pattern."""
        return self.values["hosts"].get(node) or self.values["snapshot"]["host_spec"].format(host=node)


# ---- the rules: each returns what is wrong with a value, or None ----------------------------

def _number(lo: float, hi: float = math.inf, *, above: bool = False, whole: bool = False):
    """A finite number in [lo, hi] ((lo, hi] with above=True); whole: an integer."""
    def check(v: Any) -> str | None:
        if isinstance(v, bool) or not isinstance(v, int if whole else (int, float)):
            return "expected a whole number" if whole else "expected a number"
        if isinstance(v, float) and not math.isfinite(v):
            return "must be a finite number"
        if v < lo or (above and v == lo):
            return f"must be {'above' if above else 'at least'} {lo:g}"
        if v > hi:
            return f"must be at most {hi:g}"
        return None
    return check


def _string(v: Any) -> str | None:
    if not isinstance(v, str):
        return "expected a string"
    if any(ord(c) < 32 or ord(c) == 127 for c in v):
        return "must not contain control characters"
    return None


def _path(empty_ok: bool, also: str = ""):
    """An absolute path without '..' (or "" when empty_ok; or the word `also`)."""
    words = ['""'] * empty_ok + [f'"{also}"'] * bool(also) + ["an absolute path without '..'"]

    def check(v: Any) -> str | None:
        if (bad := _string(v)) is not None:
            return bad
        if (v == "" and empty_ok) or (also and v == also) or (v.startswith("/") and ".." not in v.split("/")):
            return None
        return "must be " + " or ".join(words)
    return check


def _choice(*allowed: str):
    def check(v: Any) -> str | None:
        return None if v in allowed else "must be " + " or ".join(f'"{a}"' for a in allowed)
    return check


def _bool(v: Any) -> str | None:
    return None if isinstance(v, bool) else "expected true or false"


def _host_spec(v: Any) -> str | None:
    return _string(v) or (None if v else "expected a PCP host spec")


def _host_pattern(v: Any) -> str | None:
    if (bad := _host_spec(v)) is not None:
        return bad
    try:
        v.format(host="node1")
    except (KeyError, IndexError, ValueError) as exc:
        return f"must be a pattern with {{host}} only ({type(exc).__name__}: {exc})"
    return None


def _cluster(v: Any) -> str | None:
    if (bad := _string(v)) is not None or re.fullmatch(r"(|[A-Za-z0-9][A-Za-z0-9._-]{0,63})", v):
        return bad
    return "must be \"\" or a name of letters, digits, '.', '_', '-' (it starts record file names)"


_TIMEOUT = _number(0, MAX_TIMEOUT_S, above=True)
_HOOK_TIMEOUT = _number(1, MAX_TIMEOUT_S)    # under a second the wrapper would kill Python as it starts
_COUNT = _number(0)                         # flag thresholds: counts, bytes, rates

RULES: dict[str, Callable[[Any], str | None]] = {
    "snapshot.connect_timeout_s": _TIMEOUT,
    "snapshot.fetch_timeout_s": _TIMEOUT,
    "snapshot.parallel": _number(1, whole=True),
    "snapshot.processes": _number(0, 64, whole=True),
    "snapshot.job_view_processes": _number(0, 64, whole=True),
    "snapshot.host_spec": _host_pattern,
    "snapshot.local_spec": _host_pattern,
    "hooks.spool_dir": _path(False),
    "hooks.spool_max_age_days": _number(MIN_SPOOL_AGE_DAYS),
    "hooks.records_dir": _path(True),
    "hooks.html": _choice("beside", "dir", "off"),
    "hooks.html_dir": _path(True),
    "hooks.log": _path(False, also="syslog"),
    "hooks.prolog_timeout_s": _HOOK_TIMEOUT,
    "hooks.prolog_cli_max_hosts": _number(0, whole=True),
    "hooks.job_view_from_nodes": _number(0, whole=True),
    "hooks.epilog_timeout_s": _HOOK_TIMEOUT,
    "hooks.scheduler_timeout_s": _TIMEOUT,
    "hooks.check_shared_nodes": _bool,
    "hooks.cluster": _cluster,
    "flags.min_elapsed_s": _COUNT,
    "records.dataset_dir": _path(False),
    "compare.group_by": lambda v: _group_by(v),
    "compare.coarsen": lambda v: _group_by(v),
    "compare.q": _number(0, 1, above=True),
    "compare.min_jobs": _number(2, whole=True),
    "compare.min_ratio": _number(1),
    "compare.min_cliffs_delta": _number(0, 1),
    "compare.min_bytes": _number(0),
}
GROUP_KEYS = ("job_name", "user", "nodes_class", "account", "partition", "command", "cluster")


def _group_by(v: Any) -> str | None:
    if not isinstance(v, list) or not all(isinstance(k, str) for k in v):
        return "expected a list of names"
    bad = [k for k in v if k not in GROUP_KEYS]
    if bad:
        return f"unknown key {bad[0]!r} (known: {', '.join(GROUP_KEYS)})"
    if len(set(v)) != len(v):
        return "lists a key twice"
    return None
# flag settings by name: a share of something is in (0, 1]; a ratio or "times the median" at least 1
_SHARE, _RATIO = _number(0, 1, above=True), _number(1)


def _rule(key: str) -> Callable[[Any], str | None]:
    if key in RULES:
        return RULES[key]
    if key.startswith("hosts."):
        return _host_spec
    name = key.rsplit(".", 1)[-1]
    return _SHARE if name.endswith("share") else _RATIO if name in ("ratio", "times_median") else _COUNT


def _cross_checks(values: dict[str, Any]) -> list[tuple[str, str]]:
    """Settings that are only wrong together: (key blamed, why)."""
    hk = values["hooks"]
    if hk["html"] == "dir" and not hk["html_dir"]:
        return [("hooks.html", 'is "dir" but hooks.html_dir is not set')]
    return []


# ---- reading ----------------------------------------------------------------------------------

Problem = tuple[str, str]   # (dotted key, what is wrong: one line naming it)


def _overlay(base: dict[str, Any], override: dict[str, Any], where: str, problems: list[Problem]) -> None:
    """Set each good value of override into base (defaults); each bad one is a problem."""
    for key, value in override.items():
        name = f"{where}.{key}" if where else key
        if where != "hosts" and key not in base:
            problems.append((name, f"{where + ': ' if where else ''}unknown setting '{key}'"))
        elif isinstance(base.get(key), dict):         # a table ([hosts] too: free-form keys)
            if not isinstance(value, dict):
                problems.append((name, f"{name}: expected a table, got {value!r}"))
            else:
                _overlay(base[key], value, name, problems)
        elif (why := _rule(name)(value)) is not None:
            problems.append((name, f"{name} = {value!r}: {why}"))
        else:
            base[key] = value


def check(values: dict[str, Any]) -> list[str]:
    """What is wrong with a complete set of values (e.g. the defaults): one line per setting."""
    problems: list[Problem] = []
    _overlay(copy.deepcopy(DEFAULTS), values, "", problems)
    return [text for _, text in problems] + [f"{key}: {why}" for key, why in _cross_checks(values)]


def _default(key: str) -> tuple[bool, Any]:
    """(known, built-in value) of a dotted key."""
    value: Any = DEFAULTS
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return False, None
        value = value[part]
    return True, value


def _fallback(key: str) -> str:
    """What the hooks do instead of a bad setting (load(strict=False))."""
    known, value = _default(key)
    if not known:
        return "ignored"
    return "its defaults are used" if isinstance(value, dict) else f"the default ({json.dumps(value)}) is used"


def _parsed(text: str, path: Path) -> dict[str, Any]:
    """The TOML of a config file; ConfigError if it is not TOML. The reader is imported here,
    only where there is a file to read (~3.5 ms of every job's start, which a node without a
    config file does not pay)."""
    try:                        # Python 3.11+
        from tomllib import TOMLDecodeError, loads
    except ImportError:         # the node side on older Pythons: their distributions' TOML reader
        from toml import TomlDecodeError as TOMLDecodeError, loads
    try:
        return loads(text)
    except TOMLDecodeError as exc:
        raise ConfigError(f"config file {path}: {exc}") from None


def load(path: str | Path | None = None, *, strict: bool = True) -> Config:
    """Defaults, overlaid by the site file. An explicit path must exist; the default may not.

    strict (the CLI): a bad setting raises ConfigError naming it. strict=False (the scheduler
    hooks): each bad setting keeps its built-in default and is listed in Config.problems (one line
    each, saying so), so the rest of the site's settings still hold. A file that cannot be read or
    parsed raises in both."""
    explicit = path is not None
    path = Path(path) if path is not None else DEFAULT_PATH
    values = copy.deepcopy(DEFAULTS)
    try:
        text = path.read_text()
    except FileNotFoundError:
        if explicit:
            raise ConfigError(f"config file {path} does not exist") from None
        return Config(values)
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    override = _parsed(text, path)
    problems: list[Problem] = []
    _overlay(values, override, "", problems)
    for key, why in _cross_checks(values):
        problems.append((key, f"{key}: {why}"))
        table, name = key.split(".")
        values[table][name] = DEFAULTS[table][name]
    if strict and problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ConfigError(f"{path}: {problems[0][1]}{more}")
    return Config(values, str(path), tuple(f"{path}: {text}; {_fallback(key)}" for key, text in problems))
