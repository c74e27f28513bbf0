"""What a fit reads of its input, wherever the rows are: one interface, three places.

Every kernel fit needs the same few things of (X, y, sample_weight): validated targets and
weights, rows in this process to choose the basis on (all of them, or a bounded sample),
``gamma='scale'`` over every row, the features' row provider where the rows are, and, at
the end, the fitted arrays where the rows are. :func:`fit_input` returns the object that
gives them for X:

- :class:`ArrayInput`: NumPy or SciPy arrays in this process (``local``: the in-memory
  algorithms, streaming by block minimization and the exact solvers, apply);
- :class:`NamespaceInput`: an array of another array-API namespace under scikit-learn's
  ``array_api_dispatch`` (a GPU's): labels, weights and 'auto' from a host copy, the basis,
  the map and the features on X's device, the fitted arrays moved there;
- :class:`~sparsekernel.distributed._rows.DaskInput`: a dask collection, its rows, labels,
  weights and the solver's per-row state on the workers, the basis on a sample.

So an estimator's ``fit`` is written once::

    data = fit_input(self, X, y, sample_weight)
    Y, sw, y_enc = data.targets(self)
    fmap = self._fit_map(data.sample, data.y_basis(self), ..., **data.basis_args)
    with data.rows(self, fmap.transform, m, dtype) as rows:
        ...  # a solver on the provider, or rows.reduce(...) for a closed form
    return data.finish(self)
"""

from __future__ import annotations

import contextlib

from .compute import NUMPY, backend_of, dtype_name, model_to_namespace, to_numpy
from .solvers._constants import GATHER_BYTES
from .utils import MemoryPlan, check_sample_weight, is_dask_collection, parse_memory_budget

__all__ = ["ArrayInput", "NamespaceInput", "RowBlocks", "fit_data", "fit_input"]


def fit_input(est, X, y=None, sample_weight=None, namespaces=True):
    """The input object of ``est``'s fit on X (module docstring). ``namespaces=False``: an
    estimator that does not fit on a namespace's device, whose input is read as NumPy's
    (scikit-learn's validation converts it or names what it cannot take)."""
    if is_dask_collection(X):
        from .distributed._rows import DaskInput

        return DaskInput(est, X, y, sample_weight)
    backend = backend_of(X)
    if backend.is_numpy or not namespaces:
        return ArrayInput(X, y, sample_weight)
    return NamespaceInput(est, X, y, sample_weight, backend)


def fit_data(est, X, y, sample_weight, classes=None, reset=True):
    """Validated ``(X, Y, sw, y_enc)``: a classifier's +-1 one-vs-rest target columns and
    encoded labels, a regressor's one target column (``y_enc`` None), or, for a
    transformer's ``y`` None, X, None, the checked weights and None.

    ``reset=False`` checks X against the fitted ``n_features_in_`` and y against
    ``classes_`` instead of setting them; ``classes`` are all the labels (else those of y).
    """
    from sklearn.base import is_classifier, is_regressor

    from .base import OneVsRestClassifierMixin

    if y is None and not (is_classifier(est) or is_regressor(est)):
        X = est._validate_X(X, reset=reset)
        return X, None, check_sample_weight(sample_weight, X.shape[0]), None
    if isinstance(est, OneVsRestClassifierMixin):
        X, y_enc, Y, sw = est._classifier_data(X, y, sample_weight, classes=classes,
                                               reset=reset)
        return X, Y, sw, y_enc
    X, y, sw = est._regressor_data(X, y, sample_weight, reset=reset)
    return X, y[:, None], sw, None


class ArrayInput:
    """NumPy or SciPy input in this process: the basis is chosen on every row, and the
    provider of the features is the stored array itself.

    ``X`` and ``sample`` are the validated rows once :meth:`targets` has run.
    """

    #: The rows are NumPy/SciPy arrays here: every in-memory algorithm applies.
    local = True
    #: The basis is chosen among all the rows (a dask collection's: among a sample).
    sampled = False
    #: Nothing to resolve beyond the rows at hand (``_fit_kernel_basis`` takes them all).
    basis_args = {}

    def __init__(self, X, y=None, sample_weight=None):
        self.X, self._y, self._sample_weight = X, y, sample_weight
        self._y_enc = None

    def on_host(self, max_rows):
        """Itself: the rows are in this process already (:meth:`NamespaceInput.on_host`)."""
        return self

    @property
    def n_rows(self):
        return self.X.shape[0]

    @property
    def sample(self):
        return self.X

    def targets(self, est):
        """``(Y, sw, y_enc)`` as :func:`fit_data` gives them; validates X."""
        self.X, Y, sw, self._y_enc = fit_data(est, self.X, self._y, self._sample_weight)
        return Y, sw, self._y_enc

    def y_basis(self, est):
        """The encoded labels of the rows the basis is chosen on (None for a regressor)."""
        return self._y_enc

    def to_rows(self, a):
        """A host array where the rows are (itself here; a namespace's: on its device)."""
        return a

    @contextlib.contextmanager
    def rows(self, est, transform, m, dtype, squares=0.0, gather=GATHER_BYTES, store=True,
             block_rows=None):
        """The stored features ``transform(X)`` (the caller planned their memory), or with
        ``store=False``, for a closed form's one pass, only ``reduce`` over features
        computed ``block_rows`` rows (default ``gather`` bytes) at a time
        (:class:`RowBlocks`)."""
        if store:
            yield transform(self.X)
        else:
            yield RowBlocks(self.X, transform, m, NUMPY, gather, block_rows)

    def finish(self, est):
        return est


class NamespaceInput(ArrayInput):
    """An array of another array-API namespace (``array_api_dispatch``): labels, weights,
    gamma and 'auto' from a host copy (as for a dask collection), k-means landmarks, the
    map and the features on X's device, where the solver's products and squares run
    (:class:`~sparsekernel.solvers._rows.NamespaceRows`); the fitted arrays are moved
    there by :meth:`finish`."""

    local = False

    def __init__(self, est, X, y, sample_weight, backend):
        self.backend = backend
        self.device_X = est._validate_X(X, reset=True)
        super().__init__(to_numpy(self.device_X), to_numpy(y), to_numpy(sample_weight))
        self.basis_args = {"X_device": self.device_X}

    def on_host(self, max_rows):
        """This input as host arrays (an :class:`ArrayInput` whose :meth:`finish` moves the
        model to X's device) when it has at most ``max_rows`` rows, else itself: a fit small
        enough for the exact in-memory solvers runs them on the host."""
        if self.n_rows > max_rows:
            return self
        host = ArrayInput(self.X, self._y, self._sample_weight)
        host.finish = self.finish
        return host

    @contextlib.contextmanager
    def rows(self, est, transform, m, dtype, squares=0.0, gather=GATHER_BYTES, store=True,
             block_rows=None):
        """The :class:`~sparsekernel.solvers._rows.NamespaceRows` of ``transform``'s
        features of X, stored on its device. ``memory_budget`` caps the device's memory as
        the host's: the features (``dtype``) and the solver's ``squares`` bytes (its
        Hessians and their factors) are planned against it. ``store=False``: as
        :meth:`ArrayInput.rows`, on the device."""
        from .solvers._rows import NamespaceRows

        if not store:
            yield RowBlocks(self.device_X, transform, m, self.backend, gather, block_rows)
            return
        itemsize = 4 if dtype_name(dtype) == "float32" else 8
        MemoryPlan(type(est).__name__, parse_memory_budget(est.memory_budget),
                   features=float(self.n_rows) * m * itemsize, solver_squares=squares).require(
            f"on {self.backend!r} the n x m features and the solver's squares are on the "
            "device: lower n_basis or raise memory_budget (the device's memory)")
        yield NamespaceRows(transform(self.device_X), self.backend, gather)

    def to_rows(self, a):
        return self.backend.asarray(a)

    def finish(self, est):
        return model_to_namespace(est, self.device_X)


class RowBlocks:
    """Features of rows in this process or on a device, computed a block at a time for
    one reduction (a closed form's moments): the ``reduce`` of a row provider."""

    def __init__(self, X, transform, m, backend, gather, block_rows=None):
        self.X, self.transform, self.backend = X, transform, backend
        self.step = block_rows or max(1, int(gather // (8 * max(m, 1))))

    def reduce(self, fn, combine, *row_arrays):
        """``combine`` of ``fn(F_block, *arrays_block)`` over the row blocks in order (None
        results left out; None without any); the host ``row_arrays`` go where the rows
        are, in its widest float."""
        wide = self.backend.widest_float()
        arrays = [self.backend.asarray(a, wide) for a in row_arrays]
        out = None
        n = self.X.shape[0]
        for start in range(0, n, self.step):
            rows = slice(start, min(n, start + self.step))
            part = fn(self.transform(self.X[rows, :]), *(a[rows, ...] for a in arrays))
            if part is not None:
                out = part if out is None else combine(out, part)
        return out
