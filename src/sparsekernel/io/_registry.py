"""The classes a model file may instantiate, and the parameter check every load runs.

Shared by the native format (``_persistence``) and the skops container (``_nested``), which
otherwise do not import each other's internals.
"""

from __future__ import annotations

from sklearn.base import BaseEstimator

from ._codec import ModelFormatError

__all__ = ["allowed_classes", "check_params"]


def allowed_classes():
    """Return ``{class name: class}`` for every estimator the model format may instantiate.

    These are the estimators exported by ``sparsekernel.__all__`` (the models) and by
    ``sparsekernel.basis.__all__`` (selectors, which appear as nested parameters).
    """
    # Imported here, not at module level: the top-level package may import sparsekernel.io.
    import sparsekernel
    import sparsekernel.basis

    classes = {}
    for module in (sparsekernel, sparsekernel.basis):
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            if isinstance(obj, type) and issubclass(obj, BaseEstimator):
                classes.setdefault(obj.__name__, obj)
    return classes


def check_params(model):
    """The constructor stores parameters unchecked: check them as ``fit`` would."""
    if getattr(type(model), "_parameter_constraints", None) is None:
        return
    try:
        model._validate_params()
    except (ValueError, TypeError) as exc:
        raise ModelFormatError(f"invalid parameter: {exc}") from None
