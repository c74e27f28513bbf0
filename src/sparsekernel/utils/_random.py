"""Seeding helpers: one way to turn ``random_state`` into the generators the code needs."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["check_random_state", "seed_from"]


def check_random_state(random_state):
    """scikit-learn's ``check_random_state`` (imported on use: utils is the ground floor that
    the solvers import, and solvers must not import scikit-learn)."""
    from sklearn.utils import check_random_state as _check

    return _check(random_state)


def seed_from(random_state):
    """An int seed (for ``np.random.default_rng`` and numba loops) from ``random_state``.

    An int is used as is; a RandomState draws one (so successive calls differ, as
    scikit-learn's estimators do); None draws from NumPy's global RandomState, which
    ``np.random.seed`` controls.
    """
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))
