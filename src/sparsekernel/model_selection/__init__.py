"""Model selection: the nested uniform-design search for (C, gamma) and its tables."""

# Exports load on first use (PEP 562; see ``sparsekernel._lazy_exports``).
from .. import _lazy_exports

__all__ = ["UD_TABLES", "UniformDesignSearchCV", "centered_l2_discrepancy", "gamma_search_range",
           "min_squared_distance", "plot_ud_search", "ud_points"]

__getattr__, __dir__ = _lazy_exports(globals(), {
    "._plot": ["plot_ud_search"],
    "._search": ["UniformDesignSearchCV"],
    "._uniform_design": ["UD_TABLES", "centered_l2_discrepancy", "gamma_search_range",
                         "min_squared_distance", "ud_points"],
})
