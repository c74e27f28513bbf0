"""One memory budget, given in bytes or as a human-readable string."""

from __future__ import annotations

import numbers
import re

__all__ = ["DEFAULT_MEMORY_BUDGET", "parse_memory_budget"]

#: Default working-memory budget for kernel blocks and stored features: 1 GiB.
DEFAULT_MEMORY_BUDGET = 2**30

_UNITS = {"": 1, "B": 1, "KB": 2**10, "MB": 2**20, "GB": 2**30, "TB": 2**40}
_PATTERN = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([KMGT]?B?)\s*$", re.IGNORECASE)


def parse_memory_budget(value, name="memory_budget"):
    """Return a memory budget in bytes.

    Parameters
    ----------
    value : int, float, str or None
        Bytes as a number, or a string such as ``"512MB"`` or ``"2 GB"`` (binary units).
        ``None`` gives :data:`DEFAULT_MEMORY_BUDGET`.
    name : str
        Parameter name used in error messages.

    Returns
    -------
    int
        The budget in bytes (at least 1).
    """
    if value is None:
        return DEFAULT_MEMORY_BUDGET
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        if value >= 1:
            return int(value)
    elif isinstance(value, str):
        match = _PATTERN.match(value)
        if match:
            unit = match.group(2).upper()
            unit = unit if unit.endswith("B") or unit == "" else unit + "B"
            nbytes = int(float(match.group(1)) * _UNITS[unit])
            if nbytes >= 1:
                return nbytes
    raise ValueError(
        f"The {name!r} parameter must be a number of bytes >= 1 or a string such as "
        f"'512MB' or '2GB'. Got {value!r} instead."
    )
