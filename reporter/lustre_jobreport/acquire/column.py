"""One metric's values on one host, whichever way they were fetched (PCP's bindings, pminfo's
text): the instance names and their values, uint64 for numbers, str for strings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

import numpy as np

SINGULAR = ""          # the instance name of a metric without an instance domain (PM_IN_NULL)

Value = Union[int, str]     # (evaluated at run time: no `|` of types before Python 3.10)


@dataclass
class Column:
    """One metric on one host: instance names and their values (uint64 array, or str list)."""
    instances: list[str]
    values: np.ndarray | list[str]

    @property
    def is_string(self) -> bool:
        return not isinstance(self.values, np.ndarray)

    @classmethod
    def of(cls, instances: list[str], values: list[Value]) -> "Column":
        """Strings if any value is one, else uint64."""
        if any(isinstance(v, str) for v in values):
            return cls(list(instances), [str(v) for v in values])
        return cls(list(instances), np.array(values, dtype=np.uint64))

    @classmethod
    def from_dict(cls, values: dict[str, Value]) -> "Column":
        return cls.of(list(values), list(values.values()))

    def as_dict(self) -> dict[str, Value]:
        values = self.values if self.is_string else [int(v) for v in self.values]
        return dict(zip(self.instances, values))
