"""Synthetic benchmark problems: the XOR checkerboard and a noisy sine regression."""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from ..utils import Interval, validate_params

__all__ = ["make_checkerboard", "make_sine_regression"]

_N_SAMPLES = [Interval("int", 1, None, closed="left")]


def make_checkerboard(n_samples=1000, noise=0.0, cells=4, random_state=None, dtype=np.float64):
    """Draw points on a ``cells x cells`` XOR checkerboard (the LLSVM paper's Checkerboard).

    The features are uniform on ``[0, cells)^2`` and the label is ``+1`` where
    ``floor(x1) + floor(x2)`` is even, ``-1`` where it is odd. With ``noise > 0`` exactly
    ``round(noise * n_samples)`` labels, at distinct random positions, are flipped
    (NcheckerBoard of Zhang et al., 2012, uses ``noise=0.2`` for training and the noiseless
    board for testing). ``X`` is drawn before the flips, so for one ``random_state`` it does
    not depend on ``noise``.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of points, at least 1.
    noise : float, default=0.0
        Fraction of labels flipped, in ``[0, 1]``.
    cells : int, default=4
        Number of cells per side, at least 1 (``cells=1`` gives a single class).
    random_state : int, numpy RandomState or None, default=None
        Seed or generator; ``None`` is non-deterministic, an int is reproducible.
    dtype : numpy floating dtype, default=np.float64
        Dtype of ``X``. The labels are computed from ``X`` after the cast, so they are the
        exact parity of the returned points.

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
        Points in ``[0, cells)^2``.
    y : ndarray of shape (n_samples,)
        Labels -1.0 / +1.0 (float64).

    Raises
    ------
    ValueError
        A parameter is out of range or of the wrong type.

    Examples
    --------
    >>> X, y = make_checkerboard(10_000, noise=0.2, random_state=0)
    >>> X.shape, sorted(set(y.tolist()))
    ((10000, 2), [-1.0, 1.0])
    """
    validate_params(
        "make_checkerboard",
        {
            "n_samples": _N_SAMPLES,
            "noise": [Interval("real", 0, 1, closed="both")],
            "cells": [Interval("int", 1, None, closed="left")],
            "random_state": ["random_state"],
        },
        {"n_samples": n_samples, "noise": noise, "cells": cells, "random_state": random_state},
    )
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise ValueError(f"dtype must be a floating dtype. Got {dtype!r} instead.")
    rng = check_random_state(random_state)
    X = rng.uniform(0.0, cells, size=(n_samples, 2)).astype(dtype, copy=False)
    # Rounding (in uniform or in the cast) may reach the right edge; keep X in [0, cells).
    np.minimum(X, np.nextafter(dtype.type(cells), dtype.type(0)), out=X)
    # Truncation == floor as X >= 0; a narrow integer type makes the cast much faster.
    cell = X.astype(np.int8 if cells <= 127 else np.int64)
    y = 1.0 - 2.0 * ((cell[:, 0] ^ cell[:, 1]) & 1)  # parity of floor(x1) + floor(x2)
    n_flip = round(noise * n_samples)
    if n_flip:
        y[rng.choice(n_samples, size=n_flip, replace=False)] *= -1.0
    return X, y


def make_sine_regression(n_samples=100, noise=0.3, random_state=None):
    """Draw a noisy sine: ``y = sin(x) + 0.5 + N(0, noise^2)`` with ``x ~ U(-pi, pi)``.

    This is the one-dimensional regression study of the LS-SVM online pruning paper.

    Parameters
    ----------
    n_samples : int, default=100
        Number of points, at least 1.
    noise : float, default=0.3
        Standard deviation of the Gaussian noise, at least 0.
    random_state : int, numpy RandomState or None, default=None
        Seed or generator; ``None`` is non-deterministic, an int is reproducible. ``x`` is
        drawn first, then the noise.

    Returns
    -------
    X : ndarray of shape (n_samples, 1)
        Inputs in ``[-pi, pi)``.
    y : ndarray of shape (n_samples,)
        Noisy targets.

    Raises
    ------
    ValueError
        A parameter is out of range or of the wrong type.

    Examples
    --------
    >>> X, y = make_sine_regression(200, noise=0.1, random_state=0)
    >>> X.shape, y.shape
    ((200, 1), (200,))
    """
    validate_params(
        "make_sine_regression",
        {
            "n_samples": _N_SAMPLES,
            "noise": [Interval("real", 0, None, closed="left")],
            "random_state": ["random_state"],
        },
        {"n_samples": n_samples, "noise": noise, "random_state": random_state},
    )
    rng = check_random_state(random_state)
    X = rng.uniform(-np.pi, np.pi, size=(n_samples, 1))
    y = np.sin(X[:, 0]) + 0.5 + rng.normal(0.0, noise, size=n_samples)
    return X, y
