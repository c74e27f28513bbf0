"""The array namespace a computation runs in: NumPy, or any array-API namespace on its device.

NumPy is the default backend, with the CPU thread plan and LAPACK of the rest of this
package. Under scikit-learn's ``array_api_dispatch=True`` an input of another namespace
(CuPy, PyTorch, ``array_api_strict``; found through ``array-api-compat``, as scikit-learn
does) selects that namespace and its device, and the code written against :class:`Backend`
computes there: the arrays never leave the device, except where a step says so.
Without dispatch, or for NumPy and SciPy sparse input, behaviour is NumPy's.

scikit-learn's dispatch needs SciPy's own array-API support, switched on by the environment
variable ``SCIPY_ARRAY_API=1`` before SciPy is first imported (scikit-learn says so when it
is missing).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["Backend", "NUMPY", "backend_of", "copy_array", "dtype_name",
           "holds_namespace_arrays", "model_to_namespace", "model_to_numpy", "namespace_of",
           "sign_columns", "to_numpy"]


def _dispatch_on():
    from sklearn import get_config

    return bool(get_config().get("array_api_dispatch", False))


class Backend:
    """An array namespace and the device its arrays live on.

    Parameters
    ----------
    xp : module
        The namespace (``array_api_compat``'s wrapper for NumPy, CuPy and PyTorch).
    device : object or None
        The device of the inputs (None for NumPy).

    See Also
    --------
    backend_of : The backend of an input array.
    to_numpy : An array of any namespace as a NumPy array.
    """

    def __init__(self, xp, device=None):
        self.xp, self.device = xp, device

    @property
    def is_numpy(self):
        """True for NumPy: the thread plan, BLAS and LAPACK of the rest of the package."""
        return self.xp is np

    def asarray(self, a, dtype=None):
        """``a`` (an array of any namespace, or a scalar) as this backend's array on its
        device."""
        if self.is_numpy:
            return np.asarray(to_numpy(a), dtype=dtype)
        if not _is_array(a) or _namespace_of(a) is not self.xp:
            # Python numbers and NumPy arrays through NumPy: a Python float is float64 there
            # (PyTorch would make it float32).
            a = np.asarray(to_numpy(a))
        return self.xp.asarray(a, dtype=dtype, device=self.device)

    def float_dtypes(self):
        """The floating dtypes this device computes in, widest first (no float64 on some
        GPUs: Apple's MPS)."""
        xp = self.xp
        if self.is_numpy:
            return [np.float64, np.float32]
        try:
            kinds = xp.__array_namespace_info__().dtypes(device=self.device, kind="real floating")
            names = [name for name in ("float64", "float32") if name in kinds]
            return [getattr(xp, name) for name in names]
        except AttributeError:  # an older namespace: assume both
            return [xp.float64, xp.float32]

    def widest_float(self):
        """float64 where the device has it (the Nystrom factor's precision), else float32."""
        return self.float_dtypes()[0]

    def __repr__(self):
        name = getattr(self.xp, "__name__", type(self.xp).__name__)
        return f"Backend({name}, device={self.device!r})"


#: The NumPy backend: every computation of the package outside array-API dispatch.
NUMPY = Backend(np)


def sign_columns(xp, V):
    """V with each column's sign set so that its largest-magnitude entry is positive (the
    deterministic eigenvectors of :mod:`sparsekernel.solvers.eigen`), in V's namespace."""
    peak = xp.max(xp.abs(V), axis=0, keepdims=True)
    sign = xp.sign(xp.sum(xp.where(xp.abs(V) == peak, V, xp.zeros_like(V)), axis=0))
    return V * xp.where(sign == 0, xp.ones_like(sign), sign)


def astype(a, dtype):
    """``a`` in ``dtype`` (one of its namespace's), not copied when it is in it already:
    ``ndarray.astype`` on NumPy (whose namespace has no ``astype`` before 2.1)."""
    if isinstance(a, np.ndarray):
        return a.astype(dtype, copy=False)
    return _namespace_of(a).astype(a, dtype, copy=False)


def dtype_name(dtype):
    """``'float32'``, ``'float64'``, ... for a dtype of any namespace (their dtype objects do
    not compare equal across namespaces) or a NumPy scalar type."""
    if isinstance(dtype, np.dtype) or (isinstance(dtype, type) and issubclass(dtype, np.generic)):
        return np.dtype(dtype).name
    return str(dtype).rsplit(".", 1)[-1]


def _namespace_of(a):
    import array_api_compat

    return array_api_compat.array_namespace(a)


def namespace_of(a):
    """The namespace of an array that is already there (a fitted model's), dispatch or not:
    NumPy for NumPy arrays and for anything that is no array-API array (lists, scalars)."""
    if isinstance(a, (np.ndarray, np.generic)) or not _is_array(a):
        return np
    return _namespace_of(a)


def copy_array(a):
    """A copy of an array of any namespace, on its device."""
    if isinstance(a, np.ndarray):
        return a.copy()
    return _namespace_of(a).asarray(a, copy=True)


def backend_of(*arrays):
    """The :class:`Backend` the arrays ask for: NumPy unless scikit-learn's
    ``array_api_dispatch`` is on and they are arrays of another namespace (all of one
    namespace and device; None and sparse matrices are ignored)."""
    arrays = [a for a in arrays if a is not None and not sp.issparse(a)
              and not isinstance(a, (np.ndarray, np.generic, list, tuple, int, float))]
    if not arrays or not _dispatch_on():
        return NUMPY
    try:
        import array_api_compat
    except ImportError as exc:
        raise ImportError(
            "array_api_dispatch=True with arrays other than NumPy's needs array-api-compat: "
            "pip install 'sparsekernel[array-api]'") from exc
    # Dask collections have their own path (the rows stay on the workers); data frames and
    # other array-likes are converted as without dispatch.
    arrays = [a for a in arrays if array_api_compat.is_array_api_obj(a)
              and not array_api_compat.is_dask_array(a)]
    if not arrays:
        return NUMPY
    xp = array_api_compat.array_namespace(*arrays)
    if array_api_compat.is_numpy_namespace(xp):
        return NUMPY
    devices = {str(array_api_compat.device(a)) for a in arrays}
    if len(devices) > 1:
        raise ValueError(f"The inputs live on different devices: {sorted(devices)}.")
    return Backend(xp, array_api_compat.device(arrays[0]))


def to_numpy(a):
    """``a`` as a NumPy array (copied from its device when it is elsewhere); NumPy arrays,
    sparse matrices, scalars and None pass through."""
    if a is None or sp.issparse(a) or isinstance(a, (np.ndarray, np.generic)):
        return a
    if isinstance(a, (int, float, bool, str, list, tuple)):
        return a
    import array_api_compat

    if array_api_compat.is_torch_array(a):
        return a.detach().cpu().numpy()
    if array_api_compat.is_cupy_array(a):
        return a.get()
    if hasattr(a, "__array_namespace__"):  # array_api_strict and other namespaces
        try:
            return np.from_dlpack(a)
        except (TypeError, ValueError, AttributeError, RuntimeError, BufferError):
            pass
        try:  # an array on another of the namespace's devices: to its default device first
            a = a.to_device(a.__array_namespace__().__array_namespace_info__().default_device())
        except (TypeError, ValueError, AttributeError, RuntimeError):
            pass
    return np.asarray(a)


def _is_array(value):
    """An array of NumPy or of an array-API namespace (PyTorch tensors included)."""
    if isinstance(value, np.ndarray):
        return True
    if isinstance(value, (np.generic, int, float, complex, bool, str, list, tuple)) or (
            value is None or sp.issparse(value)):
        return False
    try:
        import array_api_compat
    except ImportError:  # then no namespace other than NumPy's can have made it
        return False
    return array_api_compat.is_array_api_obj(value)


def _fitted_arrays(estimator):
    return {name: value for name, value in vars(estimator).items()
            if name.endswith("_") and not name.startswith("__") and _is_array(value)}


def _estimators_in(model):
    """The model and every estimator nested in it (a pipeline's steps, a meta-estimator's
    fitted estimators: attributes holding estimators, or lists and tuples of them, such as
    ``steps``' (name, estimator) pairs), each once."""
    from sklearn.base import BaseEstimator

    seen, stack, found = set(), [model], []
    while stack:
        obj = stack.pop()
        if isinstance(obj, (list, tuple)):
            stack.extend(obj)
            continue
        if not isinstance(obj, BaseEstimator) or id(obj) in seen:
            continue
        seen.add(id(obj))
        found.append(obj)
        stack.extend(value for value in vars(obj).values()
                     if isinstance(value, (BaseEstimator, list, tuple)))
    return found


def holds_namespace_arrays(model):
    """Whether the model or an estimator nested in it has fitted arrays of a namespace
    other than NumPy's (on a device)."""
    return any(not isinstance(value, np.ndarray)
               for est in _estimators_in(model) for value in _fitted_arrays(est).values())


def model_to_numpy(estimator):
    """Move a fitted estimator's arrays to NumPy, in place, and return it.

    A model fitted on an array-API namespace (a GPU's) keeps its fitted arrays there; this
    brings them to the host, to predict on NumPy input or to compare. The estimators
    nested in it (a pipeline's steps, fitted under dispatch too) move with it.
    :func:`model_to_namespace` moves them back. (:func:`sparsekernel.io.save` saves such
    a model from a host copy by itself.)

    Parameters
    ----------
    estimator : fitted estimator or Pipeline

    Returns
    -------
    estimator
        The same object, its fitted arrays (and its nested estimators') NumPy arrays.
    """
    for est in _estimators_in(estimator):
        for name, value in _fitted_arrays(est).items():
            setattr(est, name, to_numpy(value))
        est.__dict__.pop("_expansion", None)  # a cache formed from the old arrays
    return estimator


def model_to_namespace(estimator, like):
    """Move a fitted estimator's arrays, in place, to the namespace and device of ``like``
    (an array of that namespace), and return it. The inverse of :func:`model_to_numpy`.

    Parameters
    ----------
    estimator : fitted estimator or Pipeline
    like : array
        Any array of the target namespace, on the target device.

    Returns
    -------
    estimator
        The same object, its fitted numeric arrays (floats, integers such as indices,
        numeric class labels) and its nested estimators' in ``like``'s namespace; string
        labels stay NumPy arrays.
    """
    import array_api_compat

    xp = array_api_compat.array_namespace(like)
    backend = Backend(xp, array_api_compat.device(like))
    for est in _estimators_in(estimator):
        for name, value in _fitted_arrays(est).items():
            host = to_numpy(value)
            if host.dtype.kind in "biuf":  # numbers (strings cannot live on a device)
                setattr(est, name, backend.asarray(host))
        est.__dict__.pop("_expansion", None)
    return estimator
