"""The allow-list of classes a model file may name."""

from __future__ import annotations

from sklearn.base import BaseEstimator

__all__ = ["allowed_classes"]


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
