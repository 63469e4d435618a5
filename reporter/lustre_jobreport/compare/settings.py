"""compare's settings ([compare] of the config, --by, --coarsen) and its errors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import config
from ..errors import JobReportError


class CompareError(JobReportError):
    """Bad compare input: no matching records, a bad --by, unreadable records."""


class NoRecordsError(CompareError):
    """A side's selection matched no job records."""


@dataclass(frozen=True)
class Settings:
    group_by: tuple[str, ...] = tuple(config.DEFAULTS["compare"]["group_by"])
    q: float = config.DEFAULTS["compare"]["q"]
    min_jobs: int = config.DEFAULTS["compare"]["min_jobs"]
    min_ratio: float = config.DEFAULTS["compare"]["min_ratio"]
    min_cliffs_delta: float = config.DEFAULTS["compare"]["min_cliffs_delta"]
    min_bytes: float = config.DEFAULTS["compare"]["min_bytes"]
    coarsen: tuple[str, ...] = tuple(config.DEFAULTS["compare"]["coarsen"])

    @classmethod
    def of(cls, values: dict[str, Any], by: str | None = None, coarsen: str | None = None) -> "Settings":
        """[compare] values, group keys overridden by --by and the pooling keys by --coarsen
        (comma-separated)."""
        keys = list(values["group_by"]) if by is None else _key_list("--by", by)
        pool = list(values.get("coarsen", cls.coarsen)) if coarsen is None else _key_list("--coarsen", coarsen)
        return cls(tuple(keys), float(values["q"]), int(values["min_jobs"]), float(values["min_ratio"]),
                   float(values["min_cliffs_delta"]), float(values["min_bytes"]), tuple(pool))


def _key_list(option: str, text: str) -> list[str]:
    keys = [k.strip() for k in text.split(",") if k.strip()]
    bad = [k for k in keys if k not in config.GROUP_KEYS]
    if bad:
        raise CompareError(f"{option}: unknown key {bad[0]!r} (known: {', '.join(config.GROUP_KEYS)})")
    if len(set(keys)) != len(keys):
        raise CompareError(f"{option}: a key is listed twice")
    return keys
