"""The rows of a dask collection as a solver's row provider: rows and per-row state kept on
the workers.

A model fitted on a dask array or dataframe is the single-machine model: the same solver
(:mod:`sparsekernel.solvers.newton_ovr`) sees the rows through the provider interface of
:mod:`sparsekernel.solvers._rows`, and :class:`DaskRows` is that interface over the
collection's row chunks. Each chunk's features ``F_p = transform(X_p)`` are computed on
the worker that holds ``X_p`` and stay there, and so do the labels, weights and the
solver's per-row state (:meth:`DaskRows.state`: one state object beside each chunk,
e.g. :class:`~sparsekernel.solvers.newton_ovr.HingeRows` with its targets, weights,
margins and active sets). Every call is a map over the chunks and a sum (a tree of
additions on the workers), so what crosses the network per call is

- ``state(op, ...)``: the op's arguments (iterates or directions, (m + 1) x k) to the
  workers, one sum back: a gradient ((m + 1) x k), counts or line-search terms (k
  values per trial step);
- ``state.gram(H, ...)``: one (m + 1)^2 square back;
- ``state.take(...)``: the rows of a small active set (the row-space system);
- ``every(stride)``: nothing: each chunk's share of a sample is sliced on its worker;
- ``reduce(fn, combine, ...)``: one summary per chunk, folded on the workers (a
  closed-form model's moments).

Never a row of X, of F or of the per-row state otherwise: the client holds O(m^2 k) of
the solver and the landmark sample, whatever n is. (A chunk's own rows, an
:class:`~sparsekernel.solvers._rows.ArrayRows` on its worker, give its state the per-row
products: nothing of size n crosses the network.)

Every function that runs on a worker is module-level and works on one chunk with one
thread (``ArrayRows(F_p, threads=1)``): a worker runs as many chunk tasks at once as it has
threads. A state changed by the solver is a new task's result (:class:`DaskState`), so a
chunk whose worker dies is recomputed from its lineage (the collection's graph, the
iterates sent since), and the sums, and the model, are the same.
"""

from __future__ import annotations

import contextlib
import copy

import numpy as np
import scipy.sparse as sp
from sklearn.base import is_classifier
from sklearn.utils.class_weight import compute_class_weight

from ..solvers._constants import GATHER_BYTES
from ..solvers._rows import ArrayRows, host_square
from ..utils import check_sample_weight, parse_memory_budget, seed_from
from ._cluster import NO_DASHBOARD, gather, import_distributed

__all__ = ["DASK_SAMPLE", "DaskInput", "DaskRows", "DaskState", "dask_client",
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


def sample_rows(X, size, random_state, y=None):
    """About ``size`` rows drawn at random from all the rows (all of them when there are
    fewer), each chunk giving its own: ``(indices, rows, labels)``, the global row numbers
    (sorted), those rows (an ndarray, or a CSR matrix for CSR chunks) and their values of
    ``y`` (a dask array chunked as X's rows; None without it)."""
    import dask

    n = X.shape[0]
    rows = np.sort(np.random.default_rng(random_state).choice(n, size=min(size, n),
                                                              replace=False))
    offsets = np.r_[0, np.cumsum(X.chunks[0])]
    blocks = X.to_delayed().ravel()
    labels = [None] * len(blocks) if y is None else y.to_delayed().ravel()
    picks = []
    for block, lab, lo, hi in zip(blocks, labels, offsets[:-1], offsets[1:], strict=True):
        a, b = np.searchsorted(rows, [lo, hi])
        if b > a:
            picks.append(dask.delayed(_take_both)(block, lab, rows[a:b] - lo))
    parts = dask.compute(*picks)
    Xs = [p[0] for p in parts]
    return rows, (sp.vstack(Xs, format="csr") if sp.issparse(Xs[0]) else np.concatenate(Xs)), \
        (None if y is None else np.concatenate([p[1] for p in parts]))


class DaskInput:
    """A fit's dask input, prepared on the client (the interface of
    :mod:`sparsekernel._input`): X by row chunks (:func:`row_chunks`), ``y`` and
    ``sample_weight`` as dask arrays chunked as X's rows (never brought to the client),
    ``gamma`` resolved from every row when it is 'scale' (else None: the estimator's own),
    and a sample of ``sample_size`` rows drawn uniformly from all rows for the basis
    (``ids``, ``sample``, their labels ``sample_y``; every row, in order, when there are no
    more)."""

    #: The rows are on the workers: only the solvers on a row provider apply.
    local = False
    #: The basis is chosen on a sample of the rows.
    sampled = True

    def __init__(self, est, X, y, sample_weight, sample_size=None):
        sample_size = DASK_SAMPLE if sample_size is None else sample_size
        self.X = row_chunks(X)
        self.y, self.sample_weight = (_along(a, self.X, name) for a, name in
                                      ((y, "y"), (sample_weight, "sample_weight")))
        self.feature_names = (np.asarray(X.columns, dtype=object) if hasattr(X, "columns")
                              else None)
        gamma = getattr(est, "gamma", None)
        self.gamma = scale_gamma(self.X) if isinstance(gamma, str) and gamma == "scale" \
            else None
        self.ids, self.sample, self.sample_y = sample_rows(
            self.X, sample_size, seed_from(getattr(est, "random_state", None)), self.y)
        # The basis is chosen on the sample, sized for all the rows.
        self.basis_args = {"gamma": self.gamma, "n_rows": self.X.shape[0]}

    @property
    def n_rows(self):
        return self.X.shape[0]

    def on_host(self, max_rows):
        """Itself: a cluster's rows stay on the workers, however few."""
        return self

    def to_rows(self, a):
        """Itself: the client's arrays go to the workers with the tasks."""
        return a

    def y_basis(self, est):
        """The encoded labels of the sample (None for a regressor or a transformer; after
        :meth:`targets`, which sets ``classes_``)."""
        return None if self.sample_y is None or not is_classifier(est) \
            else est._encode(self.sample_y)

    def finish(self, est):
        """``est`` with its basis rows numbered as rows of X (:meth:`basis_from_rows`)."""
        self.basis_from_rows(est)
        return est

    def targets(self, est):
        """What a fit of ``est`` needs of the labels, as its in-memory ``fit`` derives it,
        as dask arrays chunked as X's rows: ``(Y, sw, y_enc)``, the +-1 one-vs-rest columns,
        weights times class weights and encoded labels of a classifier (``classes_`` set
        from a reduction over the chunks), a regressor's one target column, weights and
        None, or (without y) None, the weights and None. Sets ``n_features_in_``
        (:meth:`set_features_in`)."""
        self.set_features_in(est)
        if self.y is None:
            return None, self.weights(), None
        if not is_classifier(est):
            Y = self.y.astype(np.float64)[:, None]
            return Y, self.weights(), None
        import dask.array as da

        est._set_classes(da.unique(self.y).compute())
        k = len(est.classes_)
        y_enc = self.y.map_blocks(_encode, est.classes_, dtype=np.intp)
        Y = y_enc.map_blocks(_one_vs_rest, k, dtype=np.float64, new_axis=1,
                             chunks=(y_enc.chunks[0], (est._n_problems,)))
        class_weight = getattr(est, "class_weight", None)
        weights = None
        if class_weight is not None:
            counts = da.bincount(y_enc, minlength=k).compute()
            weights = (len(self.y) / (k * counts) if class_weight == "balanced"
                       else compute_class_weight(class_weight, classes=est.classes_,
                                                 y=est.classes_))
        return Y, self.weights(y_enc, weights), y_enc

    def weights(self, y_enc=None, class_weights=None):
        """``sample_weight`` (validated chunk by chunk on the workers; 1 without it) times
        the ``class_weights`` of ``y_enc``, a dask array chunked as X's rows."""
        import dask.array as da

        sw = self.sample_weight
        if sw is None and class_weights is None:
            return da.ones(self.X.shape[0], chunks=self.X.chunks[0])
        if sw is None:
            return y_enc.map_blocks(_class_weights, class_weights, dtype=np.float64)
        if class_weights is None:
            return sw.map_blocks(_checked_weights, dtype=np.float64)
        return sw.map_blocks(_checked_weights, y_enc, class_weights, dtype=np.float64)

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
    def rows(self, est, transform, m, dtype, squares=0.0, gather=GATHER_BYTES, store=True,
             block_rows=None):
        """The :class:`DaskRows` of ``transform``'s features for the fit of ``est``, on
        Dask's default client (or a cluster started here), released when the block ends.
        ``est.memory_budget`` is per worker: the features are kept on the workers when a
        worker's share of them is at most half of it, else recomputed from the X chunks by
        every task, and always recomputed with ``store=False`` (a closed form's one
        pass). (``squares``, ``gather`` and ``block_rows``: planned by the caller for rows in
        one process; a chunk is a worker's block.)"""
        memory_budget = parse_memory_budget(getattr(est, "memory_budget", None))
        client, close = dask_client(type(est).__name__)
        try:
            workers = max(1, len(client.nthreads()))
            share = self.X.shape[0] * float(m) * np.dtype(dtype).itemsize / workers
            store = store and share <= memory_budget / 2
            rows = DaskRows(client, self.X, transform, m, dtype, store, type(est).__name__,
                            keep=memory_budget / 2 * workers)
            try:
                yield rows
            finally:
                rows.close()
        finally:
            close()


def _along(a, X, name):
    """``a`` (a dask array or series, an array-like or None) as a dask array chunked as
    X's rows."""
    if a is None:
        return None
    import dask.array as da

    if hasattr(a, "to_dask_array"):  # a dask Series: its partitions, lengths known
        a = a.to_dask_array(lengths=True)
    elif not hasattr(a, "dask"):
        a = np.asarray(a)
    n = X.shape[0]
    if a.shape[:1] != (n,):
        raise ValueError(f"X has {n} rows but {name} has {len(np.ravel(a))} values.")
    if not hasattr(a, "dask"):
        return da.from_array(a, chunks=(X.chunks[0],) + a.shape[1:])
    return a.rechunk({0: X.chunks[0]})


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
    keep : float, default=0.0
        Bytes of features the workers may keep in all: a sample of recomputed rows
        (:meth:`every`) whose features fit is kept, so that a solver's passes over it
        compute them once.
    """

    def __init__(self, client, X, transform, m, dtype, store=True, what="DaskRows",
                 keep=0.0):
        self.client, self.what, self.keep = client, what, float(keep)
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

    @property
    def keep_rows(self):
        """The most rows of a sample (:meth:`every`) whose features the workers keep
        (inf: the features are stored)."""
        if self._fmap is None:
            return np.inf
        return self.keep / (self._shape[1] * self._dtype.itemsize)

    def _slices(self):
        return [slice(int(a), int(b)) for a, b in zip(self.offsets[:-1], self.offsets[1:],
                                                      strict=True)]

    def every(self, stride):
        """The rows 0, stride, 2 stride, ... as a provider on the same workers: each
        chunk's share sliced where the chunk is (stored features, or the X rows to
        recompute them from, or their features when they fit ``keep``)."""
        starts = [(-int(a)) % stride for a in self.offsets[:-1]]
        sizes = [max(0, -(-(int(b - a) - i0) // stride))
                 for a, b, i0 in zip(self.offsets[:-1], self.offsets[1:], starts, strict=True)]
        sub = object.__new__(DaskRows)
        sub.client, sub._dtype, sub.gather_bytes = self.client, self._dtype, self.gather_bytes
        sub.what = self.what
        sub.offsets = np.r_[0, np.cumsum(sizes)]
        sub._shape = (int(sub.offsets[-1]), self._shape[1])
        sub.F = self.client.map(_slice, self.F, starts, stride=stride, pure=False)
        sub._fmap, sub.keep = self._fmap, 0.0
        if self._fmap is not None and sub._shape[0] * float(sub._shape[1]) * \
                self._dtype.itemsize <= self.keep:  # (the sample's features fit: kept)
            sub.F = self.client.map(_features, sub.F, fmap=self._fmap, pure=False)
            sub._fmap = None
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

    def state(self, cls, Y, s=None):
        """The solver's per-row state ``cls(Y_p, s_p)`` beside each chunk, on its worker
        (:class:`DaskState`); ``Y`` and ``s`` dask arrays chunked as the rows (or arrays,
        sliced here; ``s`` None: weights 1)."""
        return DaskState(self, self.client.map(_new_state, self.chunks_of(Y),
                                               self.chunks_of(s), cls=cls, pure=False),
                         cls.UPDATES)

    def chunks_of(self, a):
        """Per chunk of the rows, ``a``'s rows there: futures of a dask array's blocks
        (chunked as the rows), slices of an array, or None throughout for None."""
        if a is None:
            return [None] * len(self.F)
        if hasattr(a, "dask"):
            sizes = tuple(int(b - a_) for a_, b in zip(self.offsets[:-1], self.offsets[1:],
                                                       strict=True))
            a = a.rechunk({0: sizes, **{d: -1 for d in range(1, a.ndim)}})
            return self.client.compute(list(a.to_delayed().ravel()))
        return [a[s] for s in self._slices()]

    def reduce(self, fn, combine, *row_arrays):
        """``combine`` over the chunks of ``fn(F_p, *(a[rows of p] for a in row_arrays))``,
        folded on the workers in a tree (None results left out): a one-pass summary of
        the rows, such as the reduced LS-SVM's moments. ``row_arrays``: dask arrays
        chunked as the rows, or arrays (sliced here)."""
        parts = [self.chunks_of(a) for a in row_arrays]
        tasks = [self.client.submit(_apply, fn, F, self._fmap, *(a[p] for a in parts),
                                    pure=False)
                 for p, F in enumerate(self.F)]
        while len(tasks) > 1:
            tasks = [self.client.submit(_fold, combine, *tasks[i:i + _FAN_IN], pure=False)
                     for i in range(0, len(tasks), _FAN_IN)]
        return self._gather(tasks)[0]

    def _gather(self, futures):
        return gather(self.client, futures, self.what)

    def _sum(self, tasks, first=None):
        """The elementwise sum of the tasks' results (:func:`_plus`; ``first`` for the
        tree's first level, which reads the tasks' results), added up on the workers in a
        tree; gathered once."""
        if first is not None:
            tasks = [self.client.submit(first, *tasks[i:i + _FAN_IN], pure=False)
                     for i in range(0, len(tasks), _FAN_IN)]
        while len(tasks) > 1:
            tasks = [self.client.submit(_plus, *tasks[i:i + _FAN_IN], pure=False)
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


class DaskState:
    """A solver's per-row state on a cluster: one state object beside each chunk of a
    :class:`DaskRows`, on its worker (the per-row state of
    :class:`~sparsekernel.solvers._rows.LocalState`, in parts).

    A call maps the op over the chunks and sums the results on the workers; an op that
    changes the state (named in the state class's ``UPDATES``) makes each chunk's new state
    a new task's result from the previous one, so a lost chunk is recomputed along its
    lineage. Only arguments and sums cross the network.
    """

    def __init__(self, rows, parts, updates, own_rows=False):
        self.rows, self.parts, self.updates = rows, parts, updates
        self.own_rows = own_rows  # (a sample's rows, released with the state)
        self.rereads = True  # (every pass is a map over the chunks)
        self.shape, self.dtype, self.keep_rows = rows.shape, rows.dtype, rows.keep_rows
        self.gather_bytes, self.square = rows.gather_bytes, rows.square

    def _map(self, op, args, update=False):
        """The op on every chunk; its arguments sent once (a task the chunks' tasks read,
        so the scheduler holds one copy, recomputable as the map is)."""
        rows = self.rows
        args = rows.client.submit(_identity, args, pure=False) if args else args
        return rows.client.map(_state_op, rows.F, self.parts, fmap=rows._fmap, op=op,
                               args=args, update=update, m=self.shape[1], pure=False)

    def __call__(self, op, *args):
        rows = self.rows
        if op not in self.updates:
            return rows._sum(self._map(op, args))
        self.parts = self._map(op, args, update=True)  # (the previous states: released)
        return rows._sum(self.parts, _plus_results)

    def gram(self, H, col, j, C, threads=None, dtype=None):
        """``H +=`` the chunks' (m + 1)^2 squares of the op ``gram``, each summed on its
        worker's one thread."""
        H += self.rows._sum(self._map("gram", (None, col, j, C, 1, dtype)))
        return H

    def take(self, *args):
        """The chunks' rows of the op ``take``, stacked in row order."""
        parts = self.rows._gather(self._map("take", args))
        return np.vstack(parts)

    def every(self, stride):
        sub = self.rows.every(stride)
        starts = [(-int(a)) % stride for a in self.rows.offsets[:-1]]
        parts = self.rows.client.map(_every_state, self.parts, starts, stride=stride,
                                     pure=False)
        return DaskState(sub, parts, self.updates, own_rows=True)

    def close(self):
        """Release the state held on the workers (and the rows of a sample's state)."""
        for future in self.parts:
            future.release()
        self.parts = []
        if self.own_rows:
            self.rows.close()


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


def _new_state(Y, s, cls):
    return cls(_aligned(Y), None if s is None else _aligned(s))


class _ChunkRows:
    """One chunk's rows for a state op, as an :class:`ArrayRows` on one thread whose
    features are computed at their first use: an op that reads only the state (counts,
    line-search terms) computes none."""

    def __init__(self, F, fmap, m):
        self._F, self._fmap, self.shape = F, fmap, (F.shape[0], m)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if "_rows" not in self.__dict__:
            self._rows = ArrayRows(_features(self._F, self._fmap), threads=1)
            self._F = None
        return getattr(self._rows, name)


def _state_op(F, state, fmap, op, args, update, m):
    """One chunk's part of a state op; an update returns the new state, its result kept
    as ``state.result`` (the previous state is left as it was)."""
    rows = _ChunkRows(F, fmap, m)
    if update:
        state = copy.copy(state)
    out = getattr(state, op)(rows, *(_aligned(a) for a in args))
    if not update:
        return out
    state.result = out
    return state


def _plus_results(*states):
    return _plus(*(state.result for state in states))


def _every_state(state, start, stride):
    return state.every(start, stride)


def _encode(y, classes):
    return np.searchsorted(classes, y)


def _one_vs_rest(y_enc, k):
    if k == 2:
        return np.where(y_enc == 1, 1.0, -1.0)[:, None]
    return np.where(y_enc[:, None] == np.arange(k), 1.0, -1.0)


def _class_weights(y_enc, weights):
    return np.asarray(weights, dtype=np.float64)[y_enc]


def _checked_weights(sw, y_enc=None, weights=None):
    sw = check_sample_weight(sw, len(sw))
    return sw if weights is None else sw * _class_weights(y_enc, weights)


def _take_both(X_chunk, y_chunk, local):
    return X_chunk[local], None if y_chunk is None else np.asarray(y_chunk)[local]


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


def _plus(*parts):
    """The elementwise sum of arrays, or of tuples or lists of them (None left out)."""
    parts = [p for p in parts if p is not None]
    if parts and isinstance(parts[0], (tuple, list)):
        return type(parts[0])(_plus(*column) for column in zip(*parts, strict=True))
    return sum(parts[1:], parts[0].copy()) if parts else None

