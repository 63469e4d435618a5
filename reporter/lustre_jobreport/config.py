"""Site configuration: /etc/lustre-jobreport/config.toml over the documented defaults.

Every flag threshold of DESIGN §4 lives here; a site file only needs the values it changes.
The shipped, commented copy of these defaults is packaging/config.toml.
"""

from __future__ import annotations

import copy
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigError

DEFAULT_PATH = Path("/etc/lustre-jobreport/config.toml")

DEFAULTS: dict[str, Any] = {
    "snapshot": {
        "connect_timeout_s": 5.0,   # per host: pmcd connect
        "fetch_timeout_s": 10.0,    # per host: the one fetch
        "parallel": 64,             # hosts fetched at once
        "host_spec": "{host}",      # PCP host spec of a scheduler node name, e.g. "{host}-ib:44321"
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
        "epilog_timeout_s": 30.0,
        "scheduler_timeout_s": 10.0,   # scontrol show job, squeue
        "check_shared_nodes": True,    # Slurm: ask squeue which other jobs used the job's nodes
        "cluster": "",         # record names; "" = SLURM_CLUSTER_NAME / the PBS server name
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


@dataclass(frozen=True)
class Config:
    values: dict[str, Any] = field(default_factory=lambda: copy.deepcopy(DEFAULTS))
    source: str = "built-in defaults"

    def flag(self, flag_id: str) -> dict[str, Any]:
        return self.values["flags"][flag_id]

    @property
    def snapshot(self) -> dict[str, Any]:
        return self.values["snapshot"]

    def host_spec(self, node: str) -> str:
        """Where the pmcd of a scheduler node is: the [hosts] map, else the host_spec pattern."""
        return self.values["hosts"].get(node) or self.values["snapshot"]["host_spec"].format(host=node)


def _merge(base: dict[str, Any], override: dict[str, Any], where: str) -> None:
    if where.endswith(".hosts"):  # a free-form map of node name -> host spec
        for key, value in override.items():
            if not isinstance(value, str) or not value:
                raise ConfigError(f"{where}.{key}: expected a PCP host spec string, got {value!r}")
            base[key] = value
        return
    for key, value in override.items():
        if key not in base:
            raise ConfigError(f"{where}: unknown setting '{key}'")
        if isinstance(base[key], dict):
            if not isinstance(value, dict):
                raise ConfigError(f"{where}.{key}: expected a table")
            _merge(base[key], value, f"{where}.{key}")
        elif isinstance(base[key], (int, float)) and not isinstance(base[key], bool):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"{where}.{key}: expected a number, got {value!r}")
            base[key] = value
        elif isinstance(base[key], str):
            if not isinstance(value, str):
                raise ConfigError(f"{where}.{key}: expected a string, got {value!r}")
            base[key] = value
        else:
            base[key] = value


def load(path: str | Path | None = None) -> Config:
    """Defaults, overlaid by the site file. An explicit path must exist; the default may not."""
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
    try:
        override = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path}: {exc}") from None
    _merge(values, override, path.name)
    return Config(values, str(path))
