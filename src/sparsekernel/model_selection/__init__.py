"""Model selection: the nested uniform-design search for (C, gamma), its tables and its plot
(matplotlib, the ``plot`` extra, imported only when the plot is drawn). The curve of error
and fit time against ``n_basis`` is in :mod:`sparsekernel.inspection`."""

# Exports load on first use (PEP 562; see ``sparsekernel._lazy_exports``).
from .. import _lazy_exports

__all__ = ["SearchBoundaryWarning", "UD_TABLES", "UniformDesignSearchCV",
           "centered_l2_discrepancy", "check_search_boundary", "gamma_search_range",
           "min_squared_distance", "plot_ud_search", "ud_points"]

__getattr__, __dir__ = _lazy_exports(globals(), {
    "._plot": ["plot_ud_search"],
    "._search": ["UniformDesignSearchCV"],
    "._uniform_design": ["SearchBoundaryWarning", "UD_TABLES", "centered_l2_discrepancy",
                         "check_search_boundary", "gamma_search_range",
                         "min_squared_distance", "ud_points"],
})
