"""Inspection plots built on scikit-learn's displays: decision regions with the basis
points, and error and fit time against ``n_basis``.

matplotlib is optional (the ``plot`` extra): it is imported inside the plotting functions
only, so importing :mod:`sparsekernel` never needs it, and :func:`n_basis_curve` computes
the numbers of the curve without it.
"""

# Exports load on first use (PEP 562; see ``sparsekernel._lazy_exports``).
from .. import _lazy_exports

__all__ = ["NBasisCurveDisplay", "n_basis_curve", "plot_decision_boundary"]

__getattr__, __dir__ = _lazy_exports(globals(), {
    "._decision_boundary": ["plot_decision_boundary"],
    "._n_basis_curve": ["NBasisCurveDisplay", "n_basis_curve"],
})
