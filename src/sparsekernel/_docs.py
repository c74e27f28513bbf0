"""The public contract in words: one description per shared parameter, for every docstring.

A class docstring names a shared parameter by a placeholder line ``{name}`` (indented like a
parameter entry); :func:`fill_doc` replaces it with ``name : <type>, default=<the value in
this class's __init__>`` and the one description below, so every estimator documents
``n_basis``, ``basis``, ``C``, ``verbose``, ... in the same words and its real default.
Parameters that mean something family-specific are written out in the class itself.
"""

from __future__ import annotations

import inspect
import re

__all__ = ["PARAMS", "fill_doc"]

#: name -> (type, description). Descriptions are the contract table of CONTRIBUTING.md.
PARAMS = {
    "kernel": ("{'rbf', 'laplacian', 'polynomial', 'linear', 'sigmoid'}",
               "Kernel function ('gaussian' and 'poly' are aliases)."),
    "gamma": ("'scale', 'auto' or float",
              "Kernel width; 'scale' is 1 / (n_features * X.var()) of the fitting data, as in "
              "scikit-learn's SVC ('auto': 1 / n_features). ``gamma_`` is the value used."),
    "degree": ("int", "Degree of the polynomial kernel."),
    "coef0": ("float", "Offset of the polynomial and sigmoid kernels."),
    "C": ("float",
          "Weight of the summed loss: ``1/2 ||w||^2 [+ 1/2 b^2] + C/2 * sum_i s_i loss_i`` "
          "(each family's objective and loss are stated on its page of the "
          ":doc:`user guide </user_guide/index>`). For a hinge loss, ``C = 2 * C_libsvm``."),
    "epsilon": ("float", "Half-width of the insensitive tube: residuals below it cost nothing."),
    "n_basis": ("'auto', int, float",
                "Number m of basis functions of the fitted model: an int, a fraction of the "
                "training rows in (0, 1], or 'auto': twice the fit's effective dimension "
                "tr K (K + I / C)^-1 at the estimator's own C, estimated on 500 sampled rows "
                "and extrapolated to n, within [100, a cost cap] "
                "(:func:`sparsekernel.basis.auto_n_basis`): more for a larger C and for "
                "rougher data."),
    "basis": ("str, array-like or BasisSelector",
              "How the basis points Z are chosen: 'random' training rows (stratified for "
              "classifiers), 'kmeans' or 'kmedoids' centres of a subsample, 'incremental' "
              "(IRSVM), 'systematic' (classifiers), 'clustering' (class-wise centres with "
              "per-centre widths that replace ``gamma``), an explicit (m, d) array, or a "
              "selector from :mod:`sparsekernel.basis` (which receives this estimator's "
              "kernel)."),
    "memory_budget": ("int, str, float('inf') or None",
                      "Cap on what a fit allocates beyond its input (bytes, or a string such "
                      "as '512MB'; None is 3 GiB, float('inf') no cap): kernel blocks, stored "
                      "features, working vectors and the m x m systems. Every fit plans "
                      "before it allocates: 'auto' lowers m to the largest that fits, and a "
                      "fit that cannot fit is refused before it allocates, with the estimate "
                      "and what to change (``MemoryBudgetError``). The process's one-time "
                      "costs (loaded code, numba's compiler, BLAS thread buffers) are "
                      "outside it."),
    "tol": ("float", "Stopping tolerance of the solver (see the family's objective)."),
    "max_iter": ("int", "Iteration cap of the solver per sub-problem; reaching it warns "
                        "``ConvergenceWarning``."),
    "class_weight": ("dict, 'balanced' or None",
                     "Multiplies the weights of each class's samples ('balanced': "
                     "n / (n_classes * count))."),
    "random_state": ("int, RandomState or None",
                     "Seed of every random choice of the fit (basis selection, coordinate "
                     "order, splits). A numpy Generator is refused: pass an int."),
    "verbose": ("int", "0 silent; 1 a progress bar over the sub-problems (one problem's bar "
                       "counts its iterations) and a line with the m that ``n_basis='auto'`` "
                       "chose; 2 also a line per solver iteration and per solve, on stderr "
                       "(or the 'sparsekernel' logger when configured)."),
    "rcond": ("'auto' or float",
              "Eigenvalue floor of the whitening of K(Z, Z): eigenvalues (pivots) at or below "
              "``rcond * lambda_max`` are dropped; 'auto' is 10 eps of the feature dtype "
              "(:func:`sparsekernel.utils.eigenvalue_floor`)."),
}

#: Added to ``n_basis`` where the constraints admit None (estimators with an exact form).
_EXACT = (" or None", "None is the exact machine: the full kernel on every training row, refused "
          "past ``memory_budget`` with the estimate.")

_PLACEHOLDER = re.compile(r"^( *)\{(\w+)\}$", re.MULTILINE)


def _wrap(text, indent, width=95):
    lines, line = [], indent
    for word in text.split():
        if len(line) + len(word) + 1 > width and line.strip():
            lines.append(line.rstrip())
            line = indent
        line += word + " "
    lines.append(line.rstrip())
    return "\n".join(lines)


def fill_doc(cls):
    """Class decorator: expand the ``{name}`` parameter placeholders of ``cls.__doc__``."""
    if cls.__doc__ is None:  # python -OO strips docstrings
        return cls
    defaults = {name: p.default for name, p in inspect.signature(cls.__init__).parameters.items()
                if p.default is not inspect.Parameter.empty}

    def entry(match):
        indent, name = match.group(1), match.group(2)
        kind, text = PARAMS[name]
        if name == "n_basis" and None in getattr(cls, "_parameter_constraints", {}).get(name, ()):
            kind, text = kind + _EXACT[0], text + " " + _EXACT[1]
        elif name == "n_basis":
            kind = "'auto', int or float"
        default = f", default={defaults[name]!r}" if name in defaults else ""
        return f"{indent}{name} : {kind}{default}\n" + _wrap(text, indent + "    ")

    cls.__doc__ = _PLACEHOLDER.sub(entry, cls.__doc__)
    return cls
