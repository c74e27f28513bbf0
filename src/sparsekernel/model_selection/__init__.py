"""Model selection: the nested uniform-design search for (C, gamma) and its tables, and plots
(matplotlib, the ``plot`` extra, imported only when a plot is drawn)."""

# Exports load on first use (PEP 562; see ``sparsekernel._lazy_exports``).
from .. import _lazy_exports

__all__ = ["NBasisCurveDisplay", "SearchBoundaryWarning", "UD_TABLES", "UniformDesignSearchCV",
           "centered_l2_discrepancy", "check_search_boundary", "gamma_search_range",
           "min_squared_distance", "n_basis_curve", "plot_decision_boundary", "plot_ud_search",
           "ud_points"]

__getattr__, __dir__ = _lazy_exports(globals(), {
    "._plot": ["NBasisCurveDisplay", "n_basis_curve", "plot_decision_boundary",
               "plot_ud_search"],
    "._search": ["UniformDesignSearchCV"],
    "._uniform_design": ["SearchBoundaryWarning", "UD_TABLES", "centered_l2_discrepancy",
                         "check_search_boundary", "gamma_search_range",
                         "min_squared_distance", "ud_points"],
})
