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


#: 'auto' keeps the kernel eigenvalues holding this fraction of the trace on a sample ...
AUTO_TRACE = 0.99
#: ... of this many rows ...
AUTO_SAMPLE = 500
#: ... clipped to [max(AUTO_MIN, AUTO_LOW sqrt(n)), AUTO_HIGH sqrt(n)] and n; the lower
#: end at most AUTO_RANK_FACTOR times the sample's rank at 99.9 % of the trace.
AUTO_MIN, AUTO_LOW, AUTO_HIGH = 100, 4.0, 10.0
AUTO_RANK_FACTOR = 20
#: For a classifier, a spectrum the sample resolves (the 99.9 % rank below TAIL_RANK_SHARE
#: of it) lowers the floor further, to AUTO_CLASS_FACTOR times the rank at AUTO_TRACE.
AUTO_CLASS_FACTOR = 1.75
#: A flat spectrum (the sample nearly full rank at AUTO_TRACE) takes AUTO_FLAT sqrt(n) up
#: to the cap of :func:`auto_cap` (never fewer than AUTO_HIGH sqrt(n)); a long tail takes
#: AUTO_HIGH sqrt(n), up to that cap unless 99 % of the trace needs TAIL_RANK_SHARE of the
#: sample too (never fewer than AUTO_LOW sqrt(n)). The cap is AUTO_CAP, raised to
#: sqrt(AUTO_COST n nnz) for rows with nnz nonzeros each.
AUTO_FLAT, AUTO_CAP, AUTO_COST = 18.0, 1800, 4.0
#: Share of the sample that rank marks as full rank: at AUTO_TRACE (flat spectrum), and at
#: 99.9 % of the trace (a spectrum with a long tail the sample cannot resolve).
FULL_RANK_SHARE, TAIL_RANK_SHARE = 0.8, 0.7
#: An estimator that solves the full kernel machine exactly (LowRankSVC) takes every row
#: when 'auto' would take at least this share of them (:func:`fit_kernel_basis`).
AUTO_ALL_ROWS_SHARE = 0.35


def auto_bounds(n_samples):
    """The range ``'auto'`` chooses m in: sqrt(n) scaling, as Nystrom theory allows for
    smooth problems (m ~ sqrt(n) for the statistical rate), with the constant set by data."""
    root = math.sqrt(n_samples)
    low = min(n_samples, max(AUTO_MIN, math.ceil(AUTO_LOW * root)))
    return low, max(low, min(n_samples, math.ceil(AUTO_HIGH * root)))


def auto_cap(n_samples, nnz_per_row=0.0):
    """Most basis functions 'auto' gives a spectrum it cannot resolve: where the fit's
    n m^2 (the Newton Hessians) would pass a fixed share of a kernel SVM's n^2 nnz (its
    solvers evaluate kernel rows of n entries, nnz multiply-adds each, about n times), i.e.
    sqrt(AUTO_COST n nnz), and never below AUTO_CAP (measured on sparse or low-dimensional
    rows, 12-14 nonzeros: a9a, ijcnn1). Dense high-dimensional rows (images) are costly to
    evaluate, for SVC too, and get more: Fashion-MNIST (n = 60,000, 390 nonzeros a row)
    4,410 basis functions (its flat 18 sqrt(n)) instead of 2,450, LowRankSVC's test error
    11.6 -> 10.8 % (10.9-11.0 % for two other landmark draws; oneDAL's SVC: 9.98 %) at
    1.2-1.4x oneDAL's fit instead of 0.4x (benchmarks/results fashion_v5 -> v6)."""
    return max(AUTO_CAP, math.ceil(math.sqrt(AUTO_COST * n_samples * nnz_per_row)))


def auto_flat(n_samples, nnz_per_row=0.0):
    """m for a flat kernel spectrum: AUTO_FLAT sqrt(n) up to :func:`auto_cap`, at least
    the upper end of :func:`auto_bounds`, at most n."""
    root = math.sqrt(n_samples)
    cap = auto_cap(n_samples, nnz_per_row)
    flat = max(auto_bounds(n_samples)[1], min(math.ceil(AUTO_FLAT * root), cap))
    return min(n_samples, flat)


def auto_long_tail(n_samples, nnz_per_row=0.0):
    """m for a spectrum with a long tail: the upper end of :func:`auto_bounds` up to
    :func:`auto_cap`, at least its lower end (never more than :func:`auto_flat`)."""
    low, high = auto_bounds(n_samples)
    return min(high, max(low, auto_cap(n_samples, nnz_per_row)))


def auto_sample_bytes(n_samples):
    """Peak memory of :func:`auto_n_basis` on n rows: the kernel on its s = AUTO_SAMPLE
    sampled rows and its float64 copy for the eigenvalues, with their temporaries: at most
    2.5 float64 s x s arrays; nothing when the range of 'auto' is a single
    count (no sample is taken). It is a phase of its own, freed before the basis is chosen,
    so it is planned on its own."""
    low, high = auto_bounds(n_samples)
    return 0.0 if low == high else 2.5 * 8.0 * min(n_samples, AUTO_SAMPLE) ** 2


def auto_n_basis(X, kernel, random_state=None, classifier=False):
    """``n_basis='auto'``: as many basis functions as the kernel's spectrum needs.

    The eigenvalues of K on ``AUTO_SAMPLE`` random rows say how many directions hold
    ``AUTO_TRACE`` of the kernel's trace: few for smooth, low-dimensional data (pendigits:
    ~140), nearly all for high-dimensional data. Three cases, measured on the benchmark
    suite's data at C from {1, 10, 100}:

    * Flat spectrum (that count is ``FULL_RANK_SHARE`` of the sample or more: dna, MNIST,
      a9a, Fashion-MNIST): :func:`auto_flat`, 18 sqrt(n) up to :func:`auto_cap` (1800 for
      rows with few nonzeros, more for dense high-dimensional rows). dna (n = 2000) went
      from 5.1 % test error at 448 basis functions to 4.6 % at 800 (SVC: 4.4 %), MNIST 5k
      from 4.7 % at 592 to 3.9 % at 1065, each within 2x SVC's fit.
    * Long tail (the rank at 99.9 % of the trace is ``TAIL_RANK_SHARE`` of the sample or
      more: letter, ijcnn1, w8a): the upper end of :func:`auto_bounds`, 10 sqrt(n). The
      sample cannot resolve such a spectrum, and the lower end lost 0.5-0.7 points to SVC on
      letter and w8a; on ijcnn1 it also made cross-validation pick an overfitting C. Up to
      :func:`auto_cap` (:func:`auto_long_tail`) when 99 % of the trace is resolved (below
      TAIL_RANK_SHARE of the sample): ijcnn1 (~290 of 500; n = 50,000) went from 2236 to
      1800 basis functions, LowRankSVC's refit at its cross-validated C 3.80 -> 2.67 s
      (SVC: 5.4-5.5 s), test error 1.30 -> 1.40 % (SVC: 1.49 %; benchmarks/results
      suite_search_v5 -> v6); past the cap n m^2 outgrows SVC's cost. A nearly flat
      spectrum (w8a: ~385 of 500) keeps 10 sqrt(n): at 1800 its error rose from 0.93 to
      1.02 % (C = 100, mean of 4 landmark draws; SVC: 0.72 %).
    * Otherwise the count, clipped to :func:`auto_bounds`; the lower bound guards against a
      sample that misses structure the whole data has, and is lowered (not below AUTO_MIN)
      to AUTO_RANK_FACTOR times the rank at 99.9 % of the trace when the spectrum is that
      concentrated: on shuttle (9 features, 7 classes) 15 of 500 directions hold 99.9 %, and
      300 basis functions gave the test error of the 835 the sqrt(n) bound asked for
      (0.28 %) in a third of the fit time.
    * A classifier (``classifier=True``) in that last case goes lower still, to
      AUTO_CLASS_FACTOR times the count (not below AUTO_MIN): only the sign of its decision
      function must be right, and the directions past 99 % of the trace rarely move it.
      pendigits (10 classes, count ~150): 347 -> ~260 basis functions, test error 1.57 ->
      1.78 % (SVC: 1.74 %; means of 4-6 landmark draws at C = 10), fit 0.21 -> 0.14 s;
      shuttle: 300 -> 100, 0.25 -> 0.26 % at C = 100, fit 0.45 -> 0.18 s. Regressors and
      transformers keep the sqrt(n) floor: on california_housing the count (91) times 1.75
      cost 0.01-0.03 in R^2.

    Costs one AUTO_SAMPLE-square kernel and its eigenvalues (~0.03 s).

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n, d)
    kernel : Kernel
        The estimator's kernel, gamma resolved.
    random_state : int, RandomState, Generator or None
        Draws the sampled rows.
    classifier : bool, default=False
        Count for a classifier (the last case above).

    Returns
    -------
    int
        The number of basis functions, in [1, n].
    """
    n = X.shape[0]
    low, high = auto_bounds(n)
    if low == high:
        return low
    rng = np.random.default_rng(random_state.randint(2**31) if hasattr(random_state, "randint")
                                else random_state)
    rows = subsample_rows(n, AUTO_SAMPLE, rng)
    Xs = X[rows]
    lam = np.clip(np.linalg.eigvalsh(kernel(Xs, Xs).astype(np.float64)), 0.0, None)[::-1]
    share = np.cumsum(lam) / max(lam.sum(), np.finfo(float).tiny)
    rank = int(np.searchsorted(share, AUTO_TRACE)) + 1
    tail_rank = int(np.searchsorted(share, 0.999)) + 1
    nnz = (Xs.nnz if sp.issparse(Xs) else np.count_nonzero(Xs)) / len(rows)
    if rank >= FULL_RANK_SHARE * len(rows):
        return auto_flat(n, nnz)
    if tail_rank >= TAIL_RANK_SHARE * len(rows):
        nearly_flat = rank >= TAIL_RANK_SHARE * len(rows)
        return high if nearly_flat else auto_long_tail(n, nnz)
    low = min(low, AUTO_RANK_FACTOR * tail_rank)
    if classifier:
        low = min(low, math.ceil(AUTO_CLASS_FACTOR * rank))
    low = max(min(AUTO_MIN, n), low)
    return int(np.clip(rank, low, high))


def resolve_n_basis(n_basis, n_samples, auto=None, note=None):
    """Turn ``n_basis`` ('auto', an int or a fraction) into a count in [1, n_samples].

    ``'auto'`` is ``auto`` when given (the count :func:`auto_n_basis` chose), else the
    middle of :func:`auto_bounds`; a float in (0, 1] is a fraction of n_samples (rounded
    up); an int must not exceed n_samples. The count 'auto' gives is reported to the
    running fit at ``verbose >= 1`` (:func:`~sparsekernel.utils.fit_note`), with the
    numbers of ``note`` (a dict, e.g. the count before the memory plan's cap).
    """
    if isinstance(n_basis, str) and n_basis == "auto":
        m = auto if auto is not None else sum(auto_bounds(n_samples)) // 2
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
