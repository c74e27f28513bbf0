"""The one basis -> kernel path shared by every estimator that takes ``basis``."""

from __future__ import annotations

import inspect

import numpy as np
from sklearn.utils import check_random_state

from ..kernels import Kernel, resolve_gamma
from ..utils._progress import fit_note, fit_step
from ._base import AUTO_ALL_ROWS_SHARE, BasisResult, auto_n_basis, resolve_n_basis

__all__ = ["fit_kernel_basis", "make_kernel"]

#: Selectors whose n basis functions out of n rows are the rows themselves (k-means with a
#: cluster per row: its points); 'clustering' also sets per-centre widths, so it is not one.
_ROW_SELECTORS = ("random", "kmeans", "kmedoids", "incremental", "systematic")


def _accepts_kernel(selector):
    try:
        params = inspect.signature(selector.select).parameters
    except (TypeError, ValueError):
        return False
    return "kernel" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def fit_kernel_basis(X, y=None, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                     memory_budget=None, n_basis="auto", basis="random", random_state=None,
                     max_n_basis=None, C=1.0, all_rows_up_to=None, n_rows=None,
                     X_device=None):
    """Resolve the kernel on X, choose Z with it, finish the kernel.

    A selector thus always receives the estimator's own kernel (kind, degree, coef0, gamma
    resolved on X), and per-centre widths it returns (clustering) replace gamma.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n, d)
        Validated training inputs.
    y : ndarray of shape (n,), optional
        Encoded class labels (classifiers), for selectors that stratify or work per class.
    kernel, gamma, degree, coef0, memory_budget
        The estimator's kernel parameters (``gamma`` may be 'scale' or 'auto').
    n_basis : 'auto', int or float
        See :func:`sparsekernel.basis.resolve_n_basis`; ignored for an explicit array.
    basis : str, array-like or BasisSelector
    random_state : int, RandomState or None
    max_n_basis : int, optional
        Cap on 'auto' (the largest m the memory plan allows). Where it lowers 'auto', the
        count 'auto' chose is ``result.info['n_basis_wanted']``.
    C : float, default=1.0
        The estimator's regularisation parameter, which ``n_basis='auto'`` sizes the basis
        for (:func:`auto_n_basis`).
    all_rows_up_to : int, optional
        For an estimator that solves the kernel machine on all its rows exactly: with
        ``n_basis='auto'``, a named basis other than 'clustering', and at most this many
        rows, the basis is every row (``info['all_rows']``) when 'auto' would take at least
        ``AUTO_ALL_ROWS_SHARE`` of them (the exact solve then costs about what the reduced
        one would).
    n_rows : int, optional
        The fit's rows when X is a sample of them (a dask collection's): 'auto' and a
        fractional ``n_basis`` are sized for n_rows (at most X's rows are chosen).
    X_device : array of shape (n, d), optional
        X's rows on an array-API namespace's device (a fit under ``array_api_dispatch``):
        a selector that computes on the rows and supports it (``supports_array_api``:
        k-means) chooses there, and its centres are arrays of that namespace. The kernel's
        gamma and 'auto' are resolved on X.

    Returns
    -------
    kernel : Kernel
        With gamma resolved (a float, or the selector's per-centre widths).
    result : BasisResult
    """
    with fit_step("basis-selection"):  # a step of the running fit, for its callbacks
        return _fit_kernel_basis(X, y, kernel, gamma, degree, coef0, memory_budget, n_basis,
                                 basis, random_state, max_n_basis, C, all_rows_up_to, n_rows,
                                 X_device)


def _fit_kernel_basis(X, y, kernel, gamma, degree, coef0, memory_budget, n_basis, basis,
                      random_state, max_n_basis=None, C=1.0, all_rows_up_to=None,
                      n_rows=None, X_device=None):
    from ._registry import make_basis_selector  # (every selector: loaded at the first fit)

    kern = make_kernel(kernel, gamma, degree, coef0, memory_budget, X)
    selector = make_basis_selector(basis)
    rng = check_random_state(random_state)
    m = note = auto = None
    if not hasattr(selector, "centers"):
        if isinstance(n_basis, str) and n_basis == "auto":
            auto = auto_n_basis(X, kern, rng, C=C, n_rows=n_rows)
        n = X.shape[0]
        if (auto is not None and all_rows_up_to is not None and isinstance(basis, str)
                and basis in _ROW_SELECTORS and n <= all_rows_up_to
                and auto >= AUTO_ALL_ROWS_SHARE * n):
            fit_note("n_basis='auto' chose", {"m": n, "n_samples": n, "all_rows": True})
            return kern, BasisResult(X, np.arange(n), info={"all_rows": True})
        if auto is not None and max_n_basis is not None and max_n_basis < auto:
            note = {"memory_budget_lowered_it_from": auto}  # the memory plan's cap
            auto = max_n_basis
        m = min(resolve_n_basis(n_basis, n if n_rows is None else n_rows, auto, note), n)
    extra = {"kernel": kern} if _accepts_kernel(selector) else {}
    on_device = X_device is not None and getattr(selector, "supports_array_api", False)
    res = selector.select(X_device if on_device else X, y, n_basis=m, random_state=rng,
                          **extra)
    if auto is not None:  # the count is 'auto''s (for a fit that sizes it by precision)
        res.info["auto"] = True
    if note is not None:  # for the caller's MemoryBudgetWarning
        res.info["n_basis_wanted"] = note["memory_budget_lowered_it_from"]
    if res.gamma is not None:  # per-centre widths from the selector replace gamma
        kern = make_kernel(kernel, gamma, degree, coef0, memory_budget, X, res.gamma)
    return kern, res


def make_kernel(kernel, gamma, degree, coef0, memory_budget, X, basis_gamma=None):
    """Build the Kernel with gamma resolved on X; per-centre widths from the basis win."""
    g = basis_gamma if basis_gamma is not None else resolve_gamma(gamma, X)
    return Kernel(kernel, gamma=g, degree=degree, coef0=coef0, memory_budget=memory_budget)
