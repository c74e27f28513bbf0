"""The basis-selection interface shared by every reduced estimator."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from ..kernels import Kernel, resolve_gamma
from ..utils._progress import fit_note

__all__ = ["BasisResult", "BasisSelector", "default_kernel", "resolve_n_basis", "subsample_rows"]


@dataclass(frozen=True)
class BasisResult:
    """The chosen basis functions.

    Attributes
    ----------
    centers : ndarray or CSR matrix of shape (m, d)
        The basis points Z, in the dtype and storage format of X.
    indices : ndarray of shape (m,) or None
        Rows of X that were taken as centres, or None when the centres are not training
        points (k-means centroids, a user array).
    gamma : ndarray of shape (m,) or None
        Per-centre RBF widths when the selector estimates them, else None.
    info : dict
        Diagnostics of the selection (candidates examined, rounds, ...); empty for the
        simple selectors.

    See Also
    --------
    BasisSelector : What returns it.
    fit_kernel_basis : Chooses the basis of an estimator.
    """

    centers: object
    indices: np.ndarray | None = None
    gamma: np.ndarray | None = None
    info: dict = field(default_factory=dict)

    @property
    def n_basis(self):
        return self.centers.shape[0]


class BasisSelector(BaseEstimator):
    """Base class: choose ``n_basis`` centres from training data.

    Subclasses implement :meth:`select`. Being scikit-learn estimators, selectors clone and
    expose their parameters to ``GridSearchCV`` (``basis__param``) like any nested estimator.

    See Also
    --------
    RandomBasis, KMeansBasis, KMedoidsBasis, SystematicBasis, ClusteringBasis,
    IncrementalBasis, FixedBasis : The selectors of this package.
    BasisResult : What :meth:`select` returns.
    make_basis_selector : The selector of a registered name.
    """

    def select(self, X, y=None, *, n_basis, random_state=None, kernel=None):
        """Return a :class:`BasisResult` with (at most) ``n_basis`` centres.

        Parameters
        ----------
        X : ndarray or CSR matrix of shape (n, d)
            Validated training inputs.
        y : ndarray of shape (n,), optional
            Class labels, passed by classifiers only (regressors pass None), so selectors may
            stratify or work per class.
        n_basis : int
            Number of centres wanted (already validated against n).
        random_state : int, RandomState or None
            Source of randomness (passed through ``check_random_state``).
        kernel : Kernel, optional
            The estimator's kernel, gamma resolved on X. Selectors that look at kernel
            columns (incremental, systematic) or estimate widths (clustering) use it.
            Estimators pass it only to a ``select`` that accepts ``kernel``.
        """
        raise NotImplementedError


def default_kernel(X):
    """The RBF kernel with ``gamma='scale'`` resolved on X, for direct ``select`` calls."""
    return Kernel("rbf", gamma=resolve_gamma("scale", X))


def rows_within(kernel, bytes_per_row, limit):
    """The rows a selector's working arrays may span: ``limit`` (None: all), lowered so that
    ``bytes_per_row`` each fit a quarter of the estimator's ``memory_budget`` (its kernel's;
    the selection runs before the fit's own arrays exist, as k-means' distances do)."""
    budget = getattr(kernel, "memory_budget", None)
    if budget is None or not np.isfinite(float(budget)):
        return limit
    cap = max(1, int(float(budget) / 4 // max(bytes_per_row, 1.0)))
    return cap if limit is None else min(limit, cap)


def row_bytes(X):
    """Bytes a row of X takes on average (a CSR row: its values and column indices)."""
    if sp.issparse(X):
        return (X.dtype.itemsize + X.indices.dtype.itemsize) * X.nnz / max(X.shape[0], 1)
    return float(X.dtype.itemsize * X.shape[1])


def subsample_rows(n, limit, rng, at_least=1):
    """Sorted random rows, ``max(limit, at_least)`` of n; all n when ``limit`` is None."""
    size = n if limit is None else min(n, max(limit, at_least))
    return np.sort(rng.choice(n, size=size, replace=False)) if size < n else np.arange(n)


#: Rows of the sample whose kernel spectrum 'auto' reads: its eigenvalues cost a small share
#: of any fit (s^3 / 3 flops), and resolve the spectrum down to about 1 / s of the trace.
AUTO_SAMPLE = 500
#: Basis functions per effective dimension: Nystrom landmarks drawn without leverage
#: scores need a multiple of d_eff to span its directions (Rudi, Camoriano & Rosasco 2015).
AUTO_OVERSAMPLE = 2.0
#: Fewest basis functions 'auto' takes: below this the kernel rows, not m, set the fit's cost.
AUTO_MIN = 100
#: Most basis functions 'auto' takes (:func:`auto_cap`): AUTO_CAP, raised to
#: sqrt(AUTO_COST n nnz) for rows with nnz nonzeros each.
AUTO_CAP, AUTO_COST = 1800, 4.0
#: An estimator that solves the full kernel machine exactly (LowRankSVC) takes every row
#: when 'auto' would take at least this share of them (:func:`fit_kernel_basis`): the
#: exact solve on n rows then costs about what the reduced one on m would.
AUTO_ALL_ROWS_SHARE = 0.35


def auto_cap(n_samples, nnz_per_row=0.0):
    """Most basis functions 'auto' gives, at most n: sqrt(AUTO_COST n nnz), where the fit's
    n m^2 (the Newton Hessians) reaches AUTO_COST times a kernel SVM's n^2 nnz (kernel rows
    of n entries, nnz multiply-adds each, about n times), and never below AUTO_CAP (with few
    nonzeros a kernel entry costs far more than nnz multiply-adds)."""
    cap = max(AUTO_CAP, math.ceil(math.sqrt(AUTO_COST * n_samples * nnz_per_row)))
    return min(n_samples, cap)


def auto_fallback(n_samples):
    """m for 'auto' without a kernel spectrum (an estimator that chooses m before its
    kernel exists): sqrt(n) log(n), the count with which uniform Nystrom landmarks keep the
    statistical rate of kernel ridge regression without assumptions on the spectrum (Rudi,
    Camoriano & Rosasco 2015), within [AUTO_MIN, :func:`auto_cap`] and at most n."""
    m = math.ceil(math.sqrt(n_samples) * math.log(max(n_samples, 2)))
    return min(n_samples, auto_cap(n_samples), max(AUTO_MIN, m))


def auto_sample_bytes(n_samples):
    """Peak memory of :func:`auto_n_basis` on n rows, a phase planned on its own: at most
    2.5 float64 s x s arrays (the kernel on s = AUTO_SAMPLE rows, its float64 copy and
    their temporaries); nothing when n is at most AUTO_MIN."""
    return 0.0 if n_samples <= AUTO_MIN else 2.5 * 8.0 * min(n_samples, AUTO_SAMPLE) ** 2


def effective_dimension(eigenvalues, ridge):
    """``sum(eigenvalues / (eigenvalues + ridge))``: d_eff = tr K (K + ridge I)^-1, the
    number of the kernel's directions a fit regularised by ``ridge`` resolves."""
    lam = np.clip(np.asarray(eigenvalues, dtype=np.float64), 0.0, None)
    return float(np.sum(lam / (lam + ridge)))


def auto_n_basis(X, kernel, random_state=None, C=1.0, n_rows=None):
    """``n_basis='auto'``: as many basis functions as the fit's effective dimension needs.

    A kernel machine with regularisation parameter C (the loss weighted by C against
    ||f||^2 / 2) resolves the directions of its kernel matrix K whose eigenvalues exceed
    about 1 / C: its effective dimension d_eff = tr K (K + I / C)^-1, which grows as C
    grows and with the number of rows n. It is estimated on ``AUTO_SAMPLE`` random rows
    (the eigenvalues of K on s rows, scaled by n / s, approximate those of K) and on the
    first half of them; the growth between the two, d ~ s^a (a in [0, 1]: 0 when the
    sample resolves the spectrum, 1 when the spectrum is flat), extrapolates it to n rows.
    m is ``AUTO_OVERSAMPLE`` times that, within [``AUTO_MIN``, :func:`auto_cap`] (the
    cost cap) and at most n; the estimator's memory plan may lower it further.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n, d)
    kernel : Kernel
        The estimator's kernel, gamma resolved.
    random_state : int, RandomState, Generator or None
        Draws the sampled rows.
    C : float, default=1.0
        The estimator's regularisation parameter (its ``C``; estimators without one, the
        transformers, pass the default 1.0 of the estimators they feed).
    n_rows : int, optional
        The rows the fit has when X is a sample of them (a dask collection's): the
        spectrum is extrapolated to n_rows. Default: X's rows.

    Returns
    -------
    int
        The number of basis functions, in [1, n], and at most X's rows.
    """
    n_x = X.shape[0]
    n = n_x if n_rows is None else max(int(n_rows), n_x)
    if n_x <= AUTO_MIN:
        return n_x
    rng = np.random.default_rng(random_state.randint(2**31) if hasattr(random_state, "randint")
                                else random_state)
    s = min(n_x, AUTO_SAMPLE)
    rows = rng.permutation(n_x)[:s] if s < n_x else np.arange(n_x)
    Xs = X[rows]
    K = kernel(Xs, Xs).astype(np.float64)
    half = s // 2
    # the eigenvalues of K on s rows approximate those of the full K times s / n, so the
    # ridge 1 / C on the full K is s / (n C) on the sample's
    d = effective_dimension(np.linalg.eigvalsh(K), s / (n * C))
    d_half = effective_dimension(np.linalg.eigvalsh(K[:half, :half]), half / (n * C))
    growth = float(np.clip(np.log(d / max(d_half, 1e-12)) / np.log(s / half), 0.0, 1.0))
    d_full = d * (n / s) ** growth
    nnz = (Xs.nnz if sp.issparse(Xs) else np.count_nonzero(Xs)) / s
    m = math.ceil(AUTO_OVERSAMPLE * d_full)
    return int(min(n_x, auto_cap(n, nnz), max(AUTO_MIN, m)))


def resolve_n_basis(n_basis, n_samples, auto=None, note=None):
    """Turn ``n_basis`` ('auto', an int or a fraction) into a count in [1, n_samples].

    ``'auto'`` is ``auto`` when given (the count :func:`auto_n_basis` chose), else
    :func:`auto_fallback`; a float in (0, 1] is a fraction of n_samples (rounded
    up); an int must not exceed n_samples. The count 'auto' gives is reported to the
    running fit at ``verbose >= 1`` (:func:`~sparsekernel.utils.fit_note`), with the
    numbers of ``note`` (a dict, e.g. the count before the memory plan's cap).
    """
    if isinstance(n_basis, str) and n_basis == "auto":
        m = auto if auto is not None else auto_fallback(n_samples)
        fit_note("n_basis='auto' chose", {"m": m, "n_samples": n_samples, **(note or {})})
        return m
    if isinstance(n_basis, numbers.Integral) and not isinstance(n_basis, bool):
        if 1 <= n_basis <= n_samples:
            return int(n_basis)
        raise ValueError(
            f"n_basis={n_basis} must be between 1 and the number of training samples "
            f"(n_samples={n_samples}); pass a float in (0, 1] for a fraction of the samples."
        )
    if isinstance(n_basis, numbers.Real) and not isinstance(n_basis, bool) and 0 < n_basis <= 1:
        return max(1, math.ceil(n_basis * n_samples))
    raise ValueError(
        f"n_basis must be 'auto', an int in [1, n_samples] or a float in (0, 1]. "
        f"Got {n_basis!r} instead."
    )
