"""One memory budget: given in bytes or as a human-readable string, displayed, and planned
(what a fit allocates beyond its input, checked before it allocates)."""

from __future__ import annotations

import math
import numbers
import re

__all__ = ["DEFAULT_MEMORY_BUDGET", "UNLIMITED_MEMORY_BUDGET", "MemoryBudgetError",
           "MemoryBudgetWarning", "MemoryPlan", "format_bytes", "largest_within",
           "parse_memory_budget"]

#: Default cap on what a fit allocates beyond its input: 3 GiB, a small share of a laptop's memory.
DEFAULT_MEMORY_BUDGET = 3 * 2**30
#: What ``memory_budget=float('inf')`` means: 4 EiB, more than any machine holds. An int, so
#: callers that divide (``budget // row_bytes``) or compare need no special case.
UNLIMITED_MEMORY_BUDGET = 2**62

_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40, "P": 2**50}
# "512MB", "512 MiB", "0.5G", "1e9" and "100B" all parse; units are binary (1 KB = 1024 B).
_PATTERN = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*(?:([KMGTP])I?)?B?\s*$",
                      re.IGNORECASE)
_DISPLAY_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def parse_memory_budget(value, name="memory_budget"):
    """Return a memory budget in bytes.

    Parameters
    ----------
    value : int, float, str or None
        Bytes as a number, or a string such as ``"512MB"``, ``"512 MiB"`` or ``"2 GB"``
        (binary units either way). ``None`` gives :data:`DEFAULT_MEMORY_BUDGET`;
        ``float('inf')`` means no cap and gives :data:`UNLIMITED_MEMORY_BUDGET`, as does any
        larger value.
    name : str
        Parameter name used in error messages.

    Returns
    -------
    int
        The budget in bytes, between 1 and :data:`UNLIMITED_MEMORY_BUDGET`.

    Raises
    ------
    ValueError
        If ``value`` is below one byte, NaN, a bool or an unreadable string.
    """
    if value is None:
        return DEFAULT_MEMORY_BUDGET
    nbytes = None
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        nbytes = float(value) if math.isinf(value) else value
    elif isinstance(value, str):
        match = _PATTERN.match(value)
        if match:
            nbytes = float(match.group(1)) * _UNITS[(match.group(2) or "").upper()]
    if nbytes is not None and nbytes >= 1:  # False for NaN
        return UNLIMITED_MEMORY_BUDGET if nbytes >= UNLIMITED_MEMORY_BUDGET else int(nbytes)
    raise ValueError(
        f"The {name!r} parameter must be a number of bytes >= 1 (float('inf') for no cap) or "
        f"a string such as '512MB' or '2GB'. Got {value!r} instead."
    )


def format_bytes(nbytes):
    """Return a byte count as a short string in binary units, e.g. ``'1.5 GiB'``.

    Parameters
    ----------
    nbytes : int or float
        A number of bytes; ``inf`` and :data:`UNLIMITED_MEMORY_BUDGET` or more read
        ``'unlimited'``.

    Returns
    -------
    str
        Three significant digits and the largest unit that keeps the number at least 1:
        ``format_bytes(100) == '100 B'``, ``format_bytes(3 * 2**19) == '1.5 MiB'``.
    """
    value = float(nbytes)
    if value >= UNLIMITED_MEMORY_BUDGET:
        return "unlimited"
    if math.isnan(value) or value < 0:
        raise ValueError(f"A byte count must be a non-negative number. Got {nbytes!r}.")
    exponent = min(int(math.log(value, 1024)) if value >= 1 else 0, len(_DISPLAY_UNITS) - 1)
    scaled = value / 1024**exponent
    if scaled >= 1023.5 and exponent < len(_DISPLAY_UNITS) - 1:  # log() rounding at 1024^k
        scaled, exponent = scaled / 1024, exponent + 1
    text = f"{scaled:.0f}" if exponent == 0 or scaled >= 999.5 else f"{scaled:.3g}"
    return f"{text} {_DISPLAY_UNITS[exponent]}"


class MemoryBudgetError(ValueError):
    """A fit would allocate more than its ``memory_budget``; raised before it allocates.

    A ValueError: the parameters (``n_basis``, ``memory_budget``, ``chunk_size``) ask for
    more than they allow together, as scikit-learn's other parameter errors.

    See Also
    --------
    parse_memory_budget : The budget in bytes of a ``memory_budget`` value.
    InvalidParameterError : A parameter of the wrong type or value.
    """


class MemoryBudgetWarning(UserWarning):
    """``memory_budget``, not the problem, set the number of basis functions.

    ``n_basis='auto'`` sizes the basis from the data; when the budget cannot hold that
    many, the fit uses fewer and warns with both numbers and the budget that would hold
    them. Raise ``memory_budget`` (or pass ``n_basis``) to fit the basis the problem asks
    for; silence it with :func:`warnings.filterwarnings` to keep the smaller model.

    Attributes
    ----------
    n_basis_wanted : int
        The number of basis functions ``n_basis='auto'`` chose for the data.
    n_basis : int
        The number the fit used.
    memory_budget_needed : float
        Bytes of a budget that holds ``n_basis_wanted``.

    See Also
    --------
    MemoryBudgetError : Raised instead when no basis at all fits the budget.
    parse_memory_budget : The budget in bytes of a ``memory_budget`` value.
    """

    def __init__(self, message, n_basis_wanted=None, n_basis=None, memory_budget_needed=None):
        super().__init__(message)
        self.n_basis_wanted, self.n_basis = n_basis_wanted, n_basis
        self.memory_budget_needed = memory_budget_needed


class MemoryPlan:
    """What one fit allocates beyond its input, in named parts, against one budget.

    Parameters
    ----------
    owner : str
        Who fits (the estimator's class name), for messages.
    budget : int
        Bytes (:func:`parse_memory_budget`).
    **parts : int or float
        Bytes per part, e.g. ``features=n * m * 8``.
    """

    def __init__(self, owner, budget, **parts):
        self.owner, self.budget = owner, budget
        self.parts = {name: float(nbytes) for name, nbytes in parts.items()}

    @property
    def total(self):
        """Bytes of every part together."""
        return sum(self.parts.values())

    def fits(self):
        """Whether the parts fit the budget."""
        return self.total <= self.budget

    def describe(self):
        """``'2.1 GiB (features 1.9 GiB, m x m matrices 190 MiB)'``: total and parts."""
        parts = ", ".join(f"{name.replace('_', ' ')} {format_bytes(nbytes)}"
                          for name, nbytes in self.parts.items() if nbytes > 0)
        return f"{format_bytes(self.total)} ({parts})"

    def require(self, knob):
        """Raise :class:`MemoryBudgetError` with the estimate unless the plan fits.

        Parameters
        ----------
        knob : str
            What the user can change, e.g. ``"lower n_basis or raise memory_budget"``.
        """
        if not self.fits():
            raise MemoryBudgetError(
                f"{self.owner} needs about {self.describe()} beyond its input, above "
                f"memory_budget={format_bytes(self.budget)}; {knob}."
            )
        return self


def largest_within(cost, budget, low, high):
    """The largest integer x in [low, high] with ``cost(x) <= budget`` (cost increasing in x),
    or None when even ``low`` does not fit. Bisection: O(log(high - low)) calls of ``cost``."""
    if cost(low) > budget:
        return None
    while low < high:
        mid = (low + high + 1) // 2
        if cost(mid) <= budget:
            low = mid
        else:
            high = mid - 1
    return low
