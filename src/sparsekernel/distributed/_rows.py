"""The rows of a dask collection as a solver's row provider: features kept on the workers.

A model fitted on a dask array or dataframe is the single-machine model: the same solver
(:mod:`sparsekernel.solvers.newton_ovr`) sees the rows through the provider interface of
:mod:`sparsekernel.solvers._rows`, and :class:`DaskRows` is that interface over the
collection's row chunks. Each chunk's features ``F_p = transform(X_p)`` are computed on
the worker that holds ``X_p`` and stay there; every member is a map over the chunks and a
sum (a tree of additions on the workers), so what crosses the network per call is

- ``margins(W)``: W (m x k) to the workers, ``F_p W`` (n_p x k) back;
- ``gradient(V, grams)``: ``V_p`` (n_p x k) and each Gram request's weights and rows to the
  workers, one (m + 1) x k gradient and one (m + 1)^2 square per request back;
- ``add_gram``: the weights and rows out, one (m + 1)^2 square back;
- ``take(rows)``: those rows of F (a small active set);
- ``every(stride)``: nothing: each chunk's share of the sample is sliced on its worker;
- ``reduce(fn, combine, ...)`` (not part of the solvers' interface): one summary per chunk,
  folded on the workers (a closed-form model's moments).

Never a row of X or of F otherwise. The solver's per-row state (margins, residuals,
targets: a few float64 n x k arrays) lives on the client; that, and the m-square systems, are
the client's memory.

Every function that runs on a worker is module-level and works on one chunk with one
thread (``ArrayRows(F_p, threads=1)``): a worker runs as many chunk tasks at once as it has
threads. A chunk whose worker dies is recomputed from its lineage (the collection's graph),
so the sums, and the model, are the same.
"""

from __future__ import annotations

import contextlib

import numpy as np
import scipy.sparse as sp
from sklearn.base import is_classifier

from ..solvers._constants import GATHER_BYTES
from ..solvers._rows import ArrayRows, host_square
from ..utils import check_sample_weight, parse_memory_budget, seed_from
from ._cluster import NO_DASHBOARD, gather, import_distributed

__all__ = ["DASK_SAMPLE", "DaskInput", "DaskRows", "dask_client", "kernel_rows",
           "read_libsvm", "row_chunks", "sample_rows", "scale_gamma"]

#: Rows of a dask collection the landmarks are chosen on (drawn from every chunk): enough
#: for 'auto''s spectrum sample and for k-means or random landmarks up to its cap, and a
#: bounded transfer (DASK_SAMPLE x n_features values) to the client.
DASK_SAMPLE = 50_000
#: Results a tree node sums at once (the fan-in of the reduction on the workers).
_FAN_IN = 8


def dask_client(what):
    """Dask's default client (the user's cluster), or an in-process LocalCluster started for
    the fit: ``(client, close)`` where ``close()`` shuts down what was started here."""
    distributed = import_distributed(what)
    try:
        return distributed.default_client(), lambda: None
    except ValueError:
        cluster = distributed.LocalCluster(n_workers=1, processes=False, **NO_DASHBOARD)
        client = distributed.Client(cluster, set_as_default=False)

        def close():
            client.close()
            cluster.close()

        return client, close


def read_libsvm(paths, n_features=None, dtype=np.float64, zero_based=False):
    """The rows of LIBSVM/SVMlight files as dask arrays, each file read by a worker.

    Every file is one chunk of CSR rows, read once where it will be used (on Dask's default
    client; without one, by this process's threads) and kept there: the client only learns
    each file's row count and width. Fit any estimator that takes dask input on the result
    (``LowRankSVC().fit(*read_libsvm(paths))``); a folder of Parquet files is
    ``dask.dataframe.read_parquet``'s.

    Parameters
    ----------
    paths : sequence of str or os.PathLike
        The files, as the workers see them (a shared file system); compressed files as
        :func:`sparsekernel.datasets.load_svmlight_path` reads them.
    n_features : int, optional
        Width of X; default: the largest feature index of any file.
    dtype : numpy dtype, default=float64
    zero_based : bool, default=False
        Whether feature indices start at 0 (LIBSVM's files start at 1).

    Returns
    -------
    X : dask.array.Array of shape (n_samples, n_features), CSR chunks
    y : dask.array.Array of shape (n_samples,)
    """
    import dask
    import dask.array as da

    paths = [str(p) for p in paths]
    if not paths:
        raise ValueError("read_libsvm needs at least one file; got an empty list.")
    parts = dask.persist(*[dask.delayed(_read_svmlight)(p, dtype, zero_based) for p in paths])
    shapes = dask.compute(*[dask.delayed(_csr_shape)(p) for p in parts])
    width = max(w for _, w in shapes) if n_features is None else int(n_features)
    for path, (_, w) in zip(paths, shapes, strict=True):
        if w > width:
            raise ValueError(f"n_features={width}, but {path!r} has features up to index "
                             f"{w} (pass n_features >= {w}, or None).")
    meta = sp.csr_matrix((0, width), dtype=dtype)
    X = da.concatenate([da.from_delayed(dask.delayed(_widen)(p, width), shape=(n, width),
                                        dtype=dtype, meta=meta)
                        for p, (n, _) in zip(parts, shapes, strict=True)])
    y = da.concatenate([da.from_delayed(dask.delayed(_labels)(p), shape=(n,), dtype=np.float64)
                        for p, (n, _) in zip(parts, shapes, strict=True)])
    return X, y


def _read_svmlight(path, dtype, zero_based):
    from ..datasets import load_svmlight_path

    return load_svmlight_path(path, dtype=dtype, zero_based=zero_based)


def _csr_shape(part):
    return part[0].shape


def _widen(part, width):
    X = part[0]
    return X if X.shape[1] == width else sp.csr_matrix((X.data, X.indices, X.indptr),
                                                       shape=(X.shape[0], width))


def _labels(part):
    return np.asarray(part[1], dtype=np.float64)


def row_chunks(X):
    """A dask array of X's values, chunked by rows only (a dataframe's partitions)."""
    if hasattr(X, "to_dask_array"):  # a dask DataFrame: its partitions, lengths known
        X = X.to_dask_array(lengths=True)
    if X.ndim != 2:
        raise ValueError(f"Expected a 2-D dask array, got {X.ndim} dimension(s).")
    return X.rechunk({1: -1})


def scale_gamma(X):
    """``gamma='scale'``, 1 / (n_features X.var()) over every entry, by a reduction over the
    chunks (dense or CSR): each chunk's count, mean and centred sum of squares, merged
    pairwise (Chan, Golub & LeVeque), so a large common offset does not cancel."""
    import dask

    parts = dask.compute(*[dask.delayed(_moments)(b) for b in X.to_delayed().ravel()])
    count, mean, m2 = parts[0]
    for c, m, q in parts[1:]:
        total = count + c
        delta = m - mean
        mean, m2 = mean + delta * c / total, m2 + q + delta * delta * count * c / total
        count = total
    var = m2 / count
    return 1.0 / (X.shape[1] * var) if var > 0 else 1.0


def sample_rows(X, size, random_state):
    """About ``size`` rows drawn at random from all the rows (all of them when there are
    fewer), each chunk giving its own: ``(indices, rows)``, the global row numbers (sorted)
    and those rows (an ndarray, or a CSR matrix for CSR chunks)."""
    import dask

    n = X.shape[0]
    rows = np.sort(np.random.default_rng(random_state).choice(n, size=min(size, n),
                                                              replace=False))
    offsets = np.r_[0, np.cumsum(X.chunks[0])]
    picks = []
    for block, lo, hi in zip(X.to_delayed().ravel(), offsets[:-1], offsets[1:], strict=True):
        a, b = np.searchsorted(rows, [lo, hi])
        if b > a:
            picks.append(dask.delayed(_take)(block, rows[a:b] - lo))
    parts = dask.compute(*picks)
    return rows, (sp.vstack(parts, format="csr") if sp.issparse(parts[0])
                  else np.concatenate(parts))


class DaskInput:
    """A fit's dask input, prepared on the client: X by row chunks (:func:`row_chunks`),
    ``y`` and ``sample_weight`` as NumPy arrays (one value per row), ``gamma`` resolved
    from every row when it is 'scale' (else None: the estimator's own), and a sample of
    ``sample_size`` rows drawn uniformly from all rows for the basis (``ids``, ``sample``;
    every row, in order, when there are no more)."""

    def __init__(self, est, X, y, sample_weight, sample_size=None):
        sample_size = DASK_SAMPLE if sample_size is None else sample_size
        self.X = row_chunks(X)
        n = self.X.shape[0]
        self.y, self.sample_weight = _values(y), _values(sample_weight)
        for name, values in (("y", self.y), ("sample_weight", self.sample_weight)):
            if values is not None and values.shape[:1] != (n,):
                raise ValueError(f"X has {n} rows but {name} has {len(values)} values.")
        self.feature_names = (np.asarray(X.columns, dtype=object) if hasattr(X, "columns")
                              else None)
        gamma = getattr(est, "gamma", None)
        self.gamma = scale_gamma(self.X) if isinstance(gamma, str) and gamma == "scale" \
            else None
        self.ids, self.sample = sample_rows(self.X, sample_size,
                                            seed_from(getattr(est, "random_state", None)))

    def targets(self, est):
        """What a fit of ``est`` needs of the labels, as its in-memory ``fit`` derives it:
        ``(Y, sw, y_enc)``, the +-1 one-vs-rest columns, weights times class weights and
        encoded labels of a classifier (``classes_`` set), or a regressor's one target
        column, weights and None. Sets ``n_features_in_`` (:meth:`set_features_in`)."""
        self.set_features_in(est)
        if not is_classifier(est):
            Y = np.asarray(self.y, dtype=np.float64)[:, None]
            return Y, check_sample_weight(self.sample_weight, len(Y)), None
        est._set_classes(self.y)
        y_enc = est._encode(self.y)
        return est._targets(y_enc), est._weights(self.y, self.sample_weight), y_enc

    def set_features_in(self, est):
        """``n_features_in_`` (and ``feature_names_in_`` for a dataframe) on ``est``."""
        est.n_features_in_ = self.X.shape[1]
        if self.feature_names is not None:
            est.feature_names_in_ = self.feature_names

    def basis_from_rows(self, est):
        """``est.basis_indices_``, chosen among the sample's rows, as rows of X."""
        if getattr(est, "basis_indices_", None) is not None:
            est.basis_indices_ = self.ids[est.basis_indices_]

    @contextlib.contextmanager
    def rows(self, est, transform, m, dtype):
        """The :class:`DaskRows` of ``transform``'s features for the fit of ``est``, on
        Dask's default client (or a cluster started here), released when the block ends.
        ``est.memory_budget`` is per worker: the features are kept on the workers when a
        worker's share of them is at most half of it, else recomputed from the X chunks by
        every task."""
        memory_budget = parse_memory_budget(getattr(est, "memory_budget", None))
        client, close = dask_client(type(est).__name__)
        try:
            share = (self.X.shape[0] * float(m) * np.dtype(dtype).itemsize
                     / max(1, len(client.nthreads())))
            store = share <= memory_budget / 2
            rows = DaskRows(client, self.X, transform, m, dtype, store, type(est).__name__)
            try:
                yield rows
            finally:
                rows.close()
        finally:
            close()


def kernel_rows(kernel, Z, X_chunk):
    """K(X_chunk, Z): the reduced features of a chunk (with ``functools.partial``, a
    ``transform`` for :class:`DaskRows`)."""
    return kernel(X_chunk, Z)


def _values(a):
    """A dask array / series (or an array-like, or None) as a NumPy array on the client."""
    if a is None:
        return None
    if hasattr(a, "compute"):
        a = a.compute()
    return np.asarray(a)


class DaskRows:
    """The provider interface over a dask array's row chunks (module docstring).

    Parameters
    ----------
    client : distributed.Client
    X : dask.array.Array of shape (n, d)
        Chunked by rows only (:func:`row_chunks`).
    transform : callable
        ``transform(X_chunk) -> F_chunk`` (n_p, m), sent once to the workers (the fitted
        feature map).
    m : int
    dtype : numpy dtype
        The features' precision.
    store : bool, default=True
        Keep each chunk's features on its worker (computed once), or keep the X chunks
        and recompute the features in every task (a pass costs a kernel evaluation; a
        worker holds no n_p x m array between tasks).
    what : str, default='DaskRows'
        Who fits (the estimator's name), for the errors of a cluster that cannot run the
        tasks: no worker for ``NO_WORKER_GRACE`` seconds, or the scheduler gone
        (:func:`~sparsekernel.distributed._cluster.gather`).
    """

    def __init__(self, client, X, transform, m, dtype, store=True, what="DaskRows"):
        self.client, self.what = client, what
        sizes = np.asarray(X.chunks[0], dtype=np.int64)
        self.offsets = np.r_[0, np.cumsum(sizes)]
        self._shape = (int(self.offsets[-1]), int(m))
        self._dtype = np.dtype(dtype)
        self.gather_bytes = GATHER_BYTES  # (rows a solver may gather on the client at once)
        chunks = client.compute(list(X.to_delayed().ravel()))
        # A task, not scattered data: a worker that dies with it can recompute it.
        fmap = client.submit(_identity, transform, pure=False)
        if store:  # F_p kept; the X chunks' lineage stays with F's tasks
            self.F, self._fmap = client.map(_features, chunks, fmap=fmap, pure=False), None
        else:  # X_p kept; every task recomputes F_p
            self.F, self._fmap = chunks, fmap

    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    def _slices(self):
        return [slice(int(a), int(b)) for a, b in zip(self.offsets[:-1], self.offsets[1:],
                                                      strict=True)]

    def margins(self, W, exact=False):
        W = np.asarray(W, dtype=np.float64)  # (m x k: sent with each task)
        parts = self._gather(self.client.map(_margins, self.F, fmap=self._fmap, W=W,
                                             exact=exact, pure=False))
        return np.concatenate(parts, axis=0)

    def gradient(self, V, grams=(), exact=False):
        V = np.asarray(V, dtype=np.float64)
        requests = list(grams)
        tasks = [self.client.submit(_pass, F, self._fmap, V[s], _local(requests, s),
                                    exact, pure=False)
                 for F, s in zip(self.F, self._slices(), strict=True)]
        grad, squares = self._sum(tasks)
        for (H, *_), square in zip(requests, squares, strict=True):
            H += square
        grad = np.vstack([grad, V.sum(axis=0)])
        return grad

    def add_gram(self, H, weights, rows, sign=1.0, threads=None, dtype=None):
        if len(rows):
            request = [(H, weights, rows, sign, threads, dtype)]
            tasks = [self.client.submit(_pass, F, self._fmap, None, _local(request, s),
                                        pure=False)
                     for F, s in zip(self.F, self._slices(), strict=True)
                     if _any_in(rows, s)]
            if tasks:
                H += self._sum(tasks)[1][0]
        return H

    def every(self, stride):
        """The rows 0, stride, 2 stride, ... as a provider on the same workers: each
        chunk's share sliced where the chunk is (stored features, or the X rows to
        recompute them from)."""
        starts = [(-int(a)) % stride for a in self.offsets[:-1]]
        sizes = [max(0, -(-(int(b - a) - i0) // stride))
                 for a, b, i0 in zip(self.offsets[:-1], self.offsets[1:], starts, strict=True)]
        sub = object.__new__(DaskRows)
        sub.client, sub._dtype, sub.gather_bytes = self.client, self._dtype, self.gather_bytes
        sub.what = self.what
        sub.offsets = np.r_[0, np.cumsum(sizes)]
        sub._shape = (int(sub.offsets[-1]), self._shape[1])
        sub.F = self.client.map(_slice, self.F, starts, stride=stride, pure=False)
        sub._fmap = self._fmap
        return sub

    square = staticmethod(host_square)  # (each worker's Gram sums come to the host)

    def take(self, rows):
        rows = np.asarray(rows)
        order = np.argsort(rows, kind="stable")
        ordered = rows[order]
        tasks, where = [], []
        for F, s in zip(self.F, self._slices(), strict=True):
            lo, hi = np.searchsorted(ordered, [s.start, s.stop])
            if hi > lo:
                tasks.append(self.client.submit(_take, F, ordered[lo:hi] - s.start,
                                                self._fmap, pure=False))
                where.append(order[lo:hi])
        taken = np.empty((len(rows), self.shape[1]), dtype=self.dtype)
        for idx, part in zip(where, self._gather(tasks), strict=True):
            taken[idx] = part
        return taken

    def reduce(self, fn, combine, *row_arrays):
        """``combine`` over the chunks of ``fn(F_p, *(a[rows of p] for a in row_arrays))``,
        folded on the workers in a tree (None results left out): a one-pass summary of
        the rows, such as the reduced LS-SVM's moments."""
        tasks = [self.client.submit(_apply, fn, F, self._fmap, *(a[s] for a in row_arrays),
                                    pure=False)
                 for F, s in zip(self.F, self._slices(), strict=True)]
        while len(tasks) > 1:
            tasks = [self.client.submit(_fold, combine, *tasks[i:i + _FAN_IN], pure=False)
                     for i in range(0, len(tasks), _FAN_IN)]
        return self._gather(tasks)[0]

    def _gather(self, futures):
        return gather(self.client, futures, self.what)

    def _sum(self, tasks):
        """The elementwise sum of the tasks' results, added up on the workers in a tree;
        gathered once."""
        while len(tasks) > 1:
            tasks = [self.client.submit(_add, *tasks[i:i + _FAN_IN], pure=False)
                     for i in range(0, len(tasks), _FAN_IN)]
        return self._gather(tasks)[0]

    def close(self):
        """Release the features (or chunks) held on the workers for this provider: the
        scheduler forgets them, and any task still running for them, once no one else
        wants them. (Not ``client.cancel``, which also cancels the tasks that depended on
        them, and which the scheduler could not always do for tasks already released.)"""
        for future in self.F:  # (the map's future may be shared with every(): dropped)
            future.release()
        self.F, self._fmap = [], None


def _any_in(rows, s):
    lo, hi = np.searchsorted(rows, [s.start, s.stop])
    return hi > lo


def _local(requests, s):
    """Each Gram request restricted to the chunk ``s``: (weights, local rows, sign, dtype)."""
    out = []
    for _, weights, rows, sign, _, dtype in requests:
        rows = np.asarray(rows)
        lo, hi = np.searchsorted(rows, [s.start, s.stop])
        local = rows[lo:hi] - s.start
        out.append((np.asarray(weights[s], dtype=np.float64), local, sign, dtype))
    return out


# ---------------------------------------------------------------- on the workers
def _identity(value):
    return value


def _aligned(a):
    """``a``, copied when its data is not aligned to its itemsize.

    An array received from another worker or the client may start anywhere in a message
    frame; NumPy multiplies unaligned arrays with its own loops instead of BLAS, far more
    slowly and with other rounding, so a sum would depend on where a chunk had travelled.
    """
    if isinstance(a, np.ndarray) and not a.flags.aligned:
        return a.copy()
    if sp.issparse(a) and not a.data.flags.aligned:
        return a.copy()
    return a


def _features(X_chunk, fmap):
    """A chunk's features; ``fmap`` None: the chunk is its stored features."""
    X_chunk = _aligned(X_chunk)
    return X_chunk if fmap is None else np.ascontiguousarray(fmap(X_chunk))


def _margins(F, fmap, W, exact=False):
    return ArrayRows(_features(F, fmap), threads=1).margins(_aligned(W), exact)


def _pass(F, fmap, V, requests, exact=False):
    """One chunk's part of ``F^T V`` (None without V) and of each Gram request."""
    F = _features(F, fmap)
    rows = ArrayRows(F, threads=1)
    grad = None if V is None else rows.gradient(_aligned(V), exact=exact)[:-1]
    squares = []
    for weights, local, sign, dtype in requests:
        H = np.zeros((F.shape[1] + 1,) * 2)
        rows.add_gram(H, _aligned(weights), local, sign, 1, dtype)
        squares.append(H)
    return grad, squares


def _slice(chunk, start, stride):
    return chunk[start::stride].copy()


def _take(X_chunk, local, fmap=None):
    """Rows ``local`` of a chunk (of its features, with ``fmap``)."""
    return _features(X_chunk[local], fmap)


def _moments(X_chunk):
    """(count, mean, centred sum of squares) of a chunk's entries."""
    size = float(X_chunk.shape[0]) * X_chunk.shape[1]
    if sp.issparse(X_chunk):
        mean = float(X_chunk.sum()) / size
        stored = X_chunk.data - mean
        return size, mean, float(stored @ stored) + (size - X_chunk.nnz) * mean * mean
    X_chunk = np.asarray(X_chunk, dtype=np.float64)
    mean = float(X_chunk.mean())
    return size, mean, float(np.square(X_chunk - mean).sum())


def _apply(fn, F, fmap, *row_arrays):
    return fn(_features(F, fmap), *map(_aligned, row_arrays))


def _fold(combine, *parts):
    parts = [p for p in parts if p is not None]
    out = parts[0] if parts else None
    for part in parts[1:]:
        out = combine(out, part)
    return out


def _add(*parts):
    grads = [g for g, _ in parts if g is not None]
    grad = sum(grads[1:], grads[0].copy()) if grads else None
    squares = [sum(s[1:], s[0].copy()) for s in zip(*(q for _, q in parts), strict=True)]
    return grad, squares
