"""Model selection: the nested uniform-design search for (C, gamma) and its tables."""

from ._plot import plot_ud_search
from ._search import UniformDesignSearchCV
from ._uniform_design import (
    UD_TABLES,
    centered_l2_discrepancy,
    gamma_search_range,
    min_squared_distance,
    ud_points,
)

__all__ = ["UD_TABLES", "UniformDesignSearchCV", "centered_l2_discrepancy", "gamma_search_range",
           "min_squared_distance", "plot_ud_search", "ud_points"]
