"""The ``Kernel`` object: parameters plus dispatch to the pure functions, evaluated in blocks."""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
import scipy.sparse as sp

from ..compute import backend_of, dtype_name, map_threads, max_threads, planned_threads
from ..utils import parse_memory_budget
from . import _functions as F
from ._blocks import iter_row_slices, plan_block_rows

__all__ = ["FEATURE_SCALE_RATIO", "KERNELS", "UNIT_DIAGONAL", "FeatureScaleWarning", "Kernel",
           "resolve_gamma"]

#: Kernel names accepted everywhere a ``kernel=`` parameter appears.
KERNELS = ("rbf", "laplacian", "polynomial", "linear", "sigmoid")
_ALIASES = {"gaussian": "rbf", "poly": "polynomial"}
#: Values held per (row, centre) pair while one block is computed (output + temporaries).
_PER_PAIR = {"rbf": 2.0, "laplacian": 3.0, "polynomial": 2.0, "linear": 1.0, "sigmoid": 2.0}
#: The kernels of a distance, K(x, x) = 1: K(X, X) gets an exact unit diagonal.
UNIT_DIAGONAL = ("rbf", "laplacian")


#: Ratio of the largest to the smallest column scale above which ``gamma='scale'`` warns
#: (:class:`FeatureScaleWarning`). A column's scale (:func:`_column_scales`) is multiplied by
#: its units but not changed by its sparsity; at this ratio the narrowest column weighs about
#: 1e-5 of the widest in the squared distance. Data in one unit stay well below it.
FEATURE_SCALE_RATIO = 300.0


class FeatureScaleWarning(UserWarning):
    """``gamma='scale'`` met features whose scales differ by orders of magnitude.

    ``gamma='scale'`` sets one width from the variance of all of X, so the kernel distance
    is dominated by the widest columns and hardly sees the narrowest ones (column scales
    more than :data:`FEATURE_SCALE_RATIO` times apart). Standardize the
    features (``sklearn.preprocessing.StandardScaler`` in a pipeline) or pass a numeric
    gamma; silence it with ``warnings.filterwarnings("ignore",
    category=FeatureScaleWarning)`` when the scales are intended.

    See Also
    --------
    sparsekernel.kernels.resolve_gamma : Resolves ``gamma='scale'`` (and warns).
    sklearn.preprocessing.StandardScaler : Puts the features on one scale.
    """


#: Bytes of float64 rows per chunk of :func:`_column_stds` (its only temporaries).
_STATS_CHUNK_BYTES = 4 * 2**20


def _column_stds(X):
    """Standard deviation of every column of a dense or CSR X (float64, two passes; dense
    rows in chunks, so no copy of X is made)."""
    n = X.shape[0]
    if not sp.issparse(X):
        X = np.asarray(X)
        step = max(1, _STATS_CHUNK_BYTES // (8 * max(X.shape[1], 1)))
        chunks = [slice(i, i + step) for i in range(0, n, step)]
        mean = sum(X[c].sum(axis=0, dtype=np.float64) for c in chunks) / max(n, 1)
        squares = sum(((X[c] - mean) ** 2).sum(axis=0) for c in chunks)
        return np.sqrt(squares / max(n, 1))
    X = sp.csr_matrix(X)
    mean = np.asarray(X.mean(axis=0, dtype=np.float64)).ravel()
    dev = np.asarray(X.data, dtype=np.float64) - mean[X.indices]
    stored = np.bincount(X.indices, weights=dev * dev, minlength=X.shape[1])
    implicit = (n - np.bincount(X.indices, minlength=X.shape[1])) * mean**2
    return np.sqrt(np.maximum(stored + implicit, 0.0) / max(n, 1))


def _zero_shares(X):
    """Share of exact zeros in every column of a dense or CSR X (dense rows in chunks)."""
    n = X.shape[0]
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        nonzero = np.bincount(X.indices[X.data != 0], minlength=X.shape[1])
        return 1.0 - nonzero / max(n, 1)
    X = np.asarray(X)
    step = max(1, _STATS_CHUNK_BYTES // (8 * max(X.shape[1], 1)))
    zeros = sum(np.count_nonzero(X[i:i + step] == 0, axis=0) for i in range(0, n, step))
    return zeros / max(n, 1)


def _column_scales(X):
    """Every column's scale: its standard deviation over sqrt(1 - z^2), z its share of
    zeros (two rows differ there with probability about 1 - z^2). Units multiply it;
    sparsity leaves it (:data:`FEATURE_SCALE_RATIO`). A dense column's is its standard
    deviation."""
    stds = _column_stds(X)
    z = _zero_shares(X)
    return stds / np.sqrt(np.maximum(1.0 - z * z, np.finfo(float).tiny))


def _warn_feature_scales(X):
    """Warn (:class:`FeatureScaleWarning`) when the scales of X's non-constant columns
    (:func:`_column_scales`) span more than :data:`FEATURE_SCALE_RATIO`."""
    if X.shape[0] < 2 or X.shape[1] < 2:
        return
    with np.errstate(over="ignore", invalid="ignore"):
        scales = _column_scales(X)
    scales = scales[np.isfinite(scales) & (scales > 0)]
    if scales.size < 2:
        return
    ratio = float(scales.max() / scales.min())
    if ratio > FEATURE_SCALE_RATIO:
        # The order of magnitude, not the ratio itself: the message (and so Python's
        # once-per-message filter) stays the same across refits on similar data.
        warnings.warn(
            f"gamma='scale' on features whose scales differ by a factor of more than "
            f"10^{int(math.floor(math.log10(ratio)))} (from {scales.min():.3g} to "
            f"{scales.max():.3g}; a column's scale is its standard deviation over "
            "sqrt(1 - z^2), z its share of zeros): one kernel width for all of them leaves "
            "the narrow columns almost no weight in the distance. Standardize the features "
            "(e.g. make_pipeline(StandardScaler(), estimator)) or pass a numeric gamma.",
            FeatureScaleWarning, stacklevel=2)


def _abs_max(A):
    """max |a_ij| of a dense or CSR array (0 when empty)."""
    values = A.data if sp.issparse(A) else A
    return float(np.abs(values).max()) if values.size else 0.0


def resolve_gamma(gamma, X):
    """Turn ``gamma`` ('scale', 'auto', a float or per-centre array) into numbers.

    ``'scale'`` is ``1 / (n_features * X.var())`` and ``'auto'`` is ``1 / n_features``, exactly
    as in scikit-learn's SVC; a zero variance falls back to 1.0 as there. ``'scale'`` warns
    (:class:`FeatureScaleWarning`) when the columns' scales differ by more than
    :data:`FEATURE_SCALE_RATIO`.
    """
    n_features = X.shape[1]
    if isinstance(gamma, str):
        if gamma == "auto":
            return 1.0 / n_features
        if gamma == "scale":
            g = _scale_gamma(X)
            _warn_feature_scales(X)
            return g
        raise ValueError(f"gamma must be 'scale', 'auto' or a positive float. Got {gamma!r}.")
    if isinstance(gamma, numbers.Real):
        if not gamma > 0:
            raise ValueError(f"gamma must be positive. Got {gamma!r} instead.")
        return float(gamma)
    gamma = np.asarray(gamma, dtype=np.float64)
    if gamma.ndim != 1 or not np.all(gamma > 0) or not np.all(np.isfinite(gamma)):
        raise ValueError(
            f"A per-centre gamma must be a 1-D array of positive finite values; got an array "
            f"of shape {gamma.shape} with min {gamma.min() if gamma.size else 'n/a'}."
        )
    return gamma


def _scale_gamma(X):
    """``gamma='scale'``: 1 / (n_features * X.var()), with a clear error when it overflows."""
    if sp.issparse(X):
        mean = X.mean()
        var = X.multiply(X).mean() - mean**2
    else:
        var = np.asarray(X, dtype=np.float64).var()
    if not np.isfinite(var):
        raise ValueError(
            f"gamma='scale' needs the variance of X, which overflows: the features "
            f"reach |x| = {_abs_max(X):.3g}. Standardize the features (e.g. "
            "sklearn.preprocessing.StandardScaler) or pass a numeric gamma."
        )
    if var <= 0:
        return 1.0
    with np.errstate(over="ignore"):
        g = 1.0 / (X.shape[1] * var)
    if not np.isfinite(g):  # a subnormal variance: features of |x| ~ 1e-160
        raise ValueError(
            f"gamma='scale' needs 1 / (n_features * X.var()), which overflows: X's "
            f"variance is {var:.3g} (the features reach only |x| = {_abs_max(X):.3g}). "
            "Standardize the features (e.g. sklearn.preprocessing.StandardScaler) or "
            "pass a numeric gamma."
        )
    return float(g)


class Kernel:
    """A kernel function with its parameters, evaluated in memory-bounded row blocks.

    Parameters
    ----------
    name : {'rbf', 'laplacian', 'polynomial', 'linear', 'sigmoid'}
        Kernel family (aliases: 'gaussian' for 'rbf', 'poly' for 'polynomial').
    gamma : float or ndarray of shape (m,)
        Width / scale. For 'rbf' an array gives one width per centre (column of K(X, Z)).
        Resolve 'scale'/'auto' first with :func:`resolve_gamma`.
    degree : int
        Degree of the polynomial kernel.
    coef0 : float
        Offset of the polynomial and sigmoid kernels.
    memory_budget : int or str, optional
        Bytes for one block's working memory (default 3 GiB).

    Notes
    -----
    ``K(X, Z)`` is computed ``block_rows`` rows of X at a time, with ``block_rows`` planned from
    ``memory_budget``, the number of centres and the kernel's temporaries. Results are float32
    when X and Z are float32, float64 otherwise; CSR input is never densified as a whole.

    See Also
    --------
    rbf_kernel, laplacian_kernel, polynomial_kernel, linear_kernel, sigmoid_kernel :
        The kernel functions on two arrays.
    plan_block_rows : The rows per block a memory budget allows.
    sklearn.metrics.pairwise.pairwise_kernels : scikit-learn's kernels, all rows at once.
    """

    def __init__(self, name="rbf", gamma=1.0, degree=3, coef0=0.0, memory_budget=None):
        name = _ALIASES.get(name, name)
        if name not in KERNELS:
            raise ValueError(
                f"Unknown kernel {name!r}; expected one of {', '.join(map(repr, KERNELS))}."
            )
        if not np.isscalar(gamma) and name != "rbf":
            raise ValueError(
                f"A per-centre gamma array is only supported for 'rbf', not {name!r}."
            )
        self.name, self.gamma, self.degree, self.coef0 = name, gamma, degree, coef0
        self.memory_budget = parse_memory_budget(memory_budget)

    def __repr__(self):
        g = self.gamma if np.isscalar(self.gamma) else f"array({len(self.gamma)})"
        return f"Kernel({self.name!r}, gamma={g}, degree={self.degree}, coef0={self.coef0})"

    def _compute(self, X, Z, Z_sq_norms=None, out=None, dtype=None):
        """One block K(X, Z), in ``dtype`` when given (else the working dtype)."""
        if self.name == "rbf":
            return F.rbf_kernel(X, Z, self.gamma, Z_sq_norms, out=out, dtype=dtype)
        K = self._compute_other(X, Z, out)
        return K if dtype is None else K.astype(dtype, copy=False)

    def _compute_other(self, X, Z, out):
        if self.name == "laplacian":
            return F.laplacian_kernel(X, Z, self.gamma)
        if self.name == "polynomial":
            return F.polynomial_kernel(X, Z, self.gamma, self.degree, self.coef0, out=out)
        if self.name == "sigmoid":
            return F.sigmoid_kernel(X, Z, self.gamma, self.coef0, out=out)
        return F.linear_kernel(X, Z, out=out)

    def block_rows(self, X, Z):
        """Rows of X per block for this kernel, X and Z under the memory budget."""
        itemsize = F.working_dtype(X, Z).itemsize
        return plan_block_rows(
            X.shape[0], Z.shape[0], X.shape[1], itemsize, self.memory_budget,
            _PER_PAIR[self.name],
        )

    def blocks(self, X, Z, block_rows=None, out=None):
        """Yield ``(rows, K(X[rows], Z))`` for consecutive row slices of X.

        With ``out`` (an (n, m) C-contiguous array of the working dtype) dense blocks are
        computed directly into ``out[rows]``, saving a copy.
        """
        Z = self._landmarks(Z)
        block_rows = block_rows or self.block_rows(X, Z)
        zn = F.squared_norms(Z, F.working_dtype(X, Z)) if self.name == "rbf" else None
        for rows in iter_row_slices(X.shape[0], block_rows):
            yield rows, self._compute(X[rows], Z, zn, None if out is None else out[rows])

    def map_blocks(self, X, Z, work, out=None, block_rows=None, dtype=None):
        """Call ``work(rows, K(X[rows], Z))`` for every row block, blocks side by side.

        The blocks run on the planned threads (:mod:`sparsekernel.compute`), sharing the
        memory budget; they are planned from the CPUs, not the threads in force, so every
        row gets the same rounding at any thread count. With ``out`` (an (n, m) C-contiguous
        array) each block is computed into ``out[rows]``, in ``out``'s dtype. ``dtype`` (or
        ``out``'s) below the working dtype: float32 blocks from float64 data.
        """
        if out is not None:
            dtype = out.dtype
        Z = self._landmarks(Z)
        n_threads, n_cpus = planned_threads(), max_threads()
        if block_rows is None:
            block_rows = plan_block_rows(
                X.shape[0], Z.shape[0], X.shape[1], F.working_dtype(X, Z).itemsize,
                self.memory_budget / n_cpus, _PER_PAIR[self.name])
        block_rows = _balanced(X.shape[0], block_rows, n_cpus)
        zn = F.squared_norms(Z, F.working_dtype(X, Z)) if self.name == "rbf" else None

        def run(rows):
            K = self._compute(X[rows], Z, zn, None if out is None else out[rows], dtype)
            if not np.isfinite(K).all():
                raise ValueError(self._non_finite_message(X[rows], Z))
            work(rows, K)

        map_threads(run, list(iter_row_slices(X.shape[0], block_rows)), n_threads)

    def _landmarks(self, Z):
        """Z dense when it fits the budget, after checking a per-centre gamma against it."""
        if not np.isscalar(self.gamma) and len(self.gamma) != Z.shape[0]:
            raise ValueError(
                f"Per-centre gamma has {len(self.gamma)} entries but Z has {Z.shape[0]} rows."
            )
        return F.dense_landmarks(Z, self.memory_budget)

    def _non_finite_message(self, X, Z):
        """Why K(X, Z) overflowed: the inputs' scale with this kernel's parameters."""
        scale = max(_abs_max(A) for A in (X, Z))
        g = self.gamma if np.isscalar(self.gamma) else f"per-centre (max {np.max(self.gamma):.3g})"
        return (
            f"The {self.name!r} kernel (gamma={g}) gave non-finite values: the features reach "
            f"|x| = {scale:.3g}, too large for {F.working_dtype(X, Z)} arithmetic with this "
            "kernel. Standardize the features (e.g. sklearn.preprocessing.StandardScaler) or "
            "lower gamma."
        )

    def __call__(self, X, Z, block_rows=None):
        """Return the dense ``(n, m)`` matrix K(X, Z), filled block by block.

        ``K(X, X)`` (Z the same object as X, one gamma for all centres) is computed on and
        below the diagonal only and mirrored (:meth:`_gram`), with an exact unit diagonal
        for the distance kernels. X of an array-API namespace: one block on its device, in
        the wider of X's and Z's precisions.
        """
        backend = backend_of(X)
        if not backend.is_numpy:
            return self._on_device(backend, X, Z)
        if Z is X and np.isscalar(self.gamma):
            out = self._gram(X, block_rows)
        else:
            out = np.empty((X.shape[0], Z.shape[0]), dtype=F.working_dtype(X, Z))

            def store(rows, K):
                if K.base is not out:
                    out[rows] = K

            self.map_blocks(X, Z, store, out=out, block_rows=block_rows)
        if Z is X and self.name in UNIT_DIAGONAL:
            np.fill_diagonal(out, 1.0)
        return out

    def _on_device(self, backend, X, Z):
        """K(X, Z) of a namespace's X on its device (:meth:`__call__`)."""
        from ._xp import xp_kernel

        dt = _device_dtype(backend, X, Z)
        return xp_kernel(self, X, backend.asarray(Z, dt), backend, dt)

    def _gram(self, X, block_rows=None):
        """K(X, X), exactly symmetric, from half the products and exponentials: row blocks
        of near-equal area, each computing its rows against the rows up to its last and
        writing that strip's transpose above the diagonal."""
        n = X.shape[0]
        out = np.empty((n, n), dtype=F.working_dtype(X, X))
        Xd = F.dense_landmarks(X, self.memory_budget)
        n_threads, n_cpus = planned_threads(), max_threads()
        if block_rows is None:
            block_rows = plan_block_rows(n, n, X.shape[1], out.itemsize,
                                         self.memory_budget / n_cpus, _PER_PAIR[self.name])
        # Block k ends at n sqrt(k / B): each holds about n^2 / (2 B) pairs, at most the
        # block_rows x n that the plan allows, and the threads get equal shares. Planned
        # from the CPUs, as map_blocks' blocks: the same blocks at any thread count.
        n_blocks = max(-(-n // max(1, block_rows)), 4 * n_cpus if n >= 512 else 1)
        ends = np.unique(np.round(n * np.sqrt(np.arange(n_blocks + 1) / n_blocks)).astype(int))
        zn = F.squared_norms(Xd, out.dtype) if self.name == "rbf" else None

        def run(bounds):
            r0, r1 = bounds
            K = self._compute(X[r0:r1], Xd[:r1], None if zn is None else zn[:r1])
            if not np.isfinite(K).all():
                raise ValueError(self._non_finite_message(X[r0:r1], Xd[:r1]))
            out[r0:r1, :r1] = K
            D = out[r0:r1, r0:r1]  # the diagonal block: its lower triangle mirrored too
            for i in range(r1 - r0 - 1):  # (row slices: cheaper than index arrays)
                D[i, i + 1:] = D[i + 1:, i]
            out[:r0, r0:r1] = K[:, :r0].T

        map_threads(run, list(zip(ends[:-1], ends[1:], strict=True)), n_threads)
        return out

    def apply(self, X, Z, coef, block_rows=None, dtype=None):
        """Return ``K(X, Z) @ coef`` holding one block of K per thread.

        ``coef`` has shape (m,) or (m, k); this is how a fitted model predicts. ``dtype``:
        the precision of K and the product (default the working dtype; a model on a Nystrom
        map predicts in float64, :ref:`precision`). X of an array-API namespace: block by
        block on its device (:func:`~sparsekernel.kernels._xp.xp_apply`), Z and coef moved
        there, the result in that precision.
        """
        backend = backend_of(X)
        if not backend.is_numpy:
            from ._xp import xp_apply

            dt = _device_dtype(backend, X, Z, dtype)
            return xp_apply(self, X, backend.asarray(Z, dt), backend.asarray(coef, dt),
                            backend, dt)
        coef = np.asarray(coef)
        dtype = np.dtype(dtype or F.working_dtype(X, Z))
        out = np.empty((X.shape[0],) + coef.shape[1:], dtype=np.result_type(dtype, coef))
        coef = coef.astype(dtype, copy=False)

        def product(rows, K):
            out[rows] = K @ coef

        self.map_blocks(X, Z, product, block_rows=block_rows, dtype=dtype)
        return out

    def gradient_basis(self, Z, X, G, block_rows=None):
        """Contract dK(Z, X)/dZ with a weight matrix: ``sum_i G[j, i] dK(z_j, x_i)/dz_j``.

        Only for 'rbf'. With ``K_ji = exp(-g_j ||z_j - x_i||^2)`` the derivative is
        ``-2 g_j (z_j - x_i) K_ji``, so with ``P = G * K(Z, X)`` the result is
        ``-2 g_j [ (P 1)_j z_j - (P X)_j ]``, an (m, d) array computed in blocks of X.

        Parameters
        ----------
        Z : ndarray of shape (m, d)
            Dense centres.
        X : ndarray or CSR of shape (n, d)
        G : ndarray of shape (m, n)
            Weights, e.g. dL/dK for a loss L that depends on K(Z, X).

        Returns
        -------
        ndarray of shape (m, d)
        """
        if self.name != "rbf":
            raise NotImplementedError(
                f"gradient_basis is implemented for the 'rbf' kernel only, not {self.name!r}."
            )
        Z = np.asarray(Z, dtype=np.float64)
        row_sum = np.zeros(Z.shape[0])
        PX = np.zeros_like(Z)
        for rows, K in self.blocks(X, Z, block_rows):
            P = G[:, rows] * K.T
            row_sum += P.sum(axis=1)
            PX += np.asarray(P @ X[rows]) if not sp.issparse(X) else (X[rows].T @ P.T).T
        g = np.asarray(self.gamma, dtype=np.float64)
        g = g[:, None] if g.ndim else g
        return -2.0 * g * (row_sum[:, None] * Z - PX)


def _device_dtype(backend, X, Z, dtype=None):
    """The precision of K(X, Z) on a namespace's device: ``dtype`` (float64 asks for the
    device's widest float), default the wider of X's and Z's."""
    name = dtype_name(dtype or np.result_type(dtype_name(X.dtype), dtype_name(Z.dtype)))
    return backend.widest_float() if name == "float64" else backend.xp.float32


def _balanced(n, block_rows, n_threads, min_rows=256):
    """Rows per block, lowered so that the blocks come in a multiple of ``n_threads`` of
    near-equal size (the threads take them round-robin); blocks below ``min_rows`` rows are
    not split further."""
    if n_threads <= 1 or n < 2 * min_rows:
        return block_rows
    n_blocks = -(-n // block_rows)
    n_blocks = -(-n_blocks // n_threads) * n_threads
    return max(min(block_rows, min_rows), -(-n // n_blocks))
