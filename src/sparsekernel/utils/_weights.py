"""Sample-weight validation shared by the estimators."""

from __future__ import annotations

import numpy as np

__all__ = ["check_sample_weight"]


def check_sample_weight(sample_weight, n_samples):
    """Return sample weights as a float64 array of shape (n_samples,).

    None gives ones; a scalar is broadcast. Weights must be finite and non-negative with a
    positive sum; errors name the problem and the offending value or shape.
    """
    if sample_weight is None:
        return np.ones(n_samples)
    sw = np.asarray(sample_weight, dtype=np.float64)
    if sw.ndim == 0:
        sw = np.full(n_samples, float(sw))
    if sw.shape != (n_samples,):
        raise ValueError(
            f"sample_weight must have shape ({n_samples},), matching X; got shape {sw.shape}."
        )
    if not np.all(np.isfinite(sw)):
        raise ValueError("sample_weight must be finite; it contains NaN or infinity.")
    if np.any(sw < 0):
        raise ValueError(
            f"sample_weight must be non-negative; its minimum is {float(sw.min())!r}."
        )
    if sw.sum() <= 0:
        raise ValueError("sample_weight must have a positive sum; all weights are zero.")
    return sw
