"""ONNX export: every predictor and transformer as phi(X) W + b in standard operators.

Each fitted model of the library predicts with one block of basis values phi(X) (a kernel
K(X, Z), the learned bases of the low-rank LS-SVM, or X itself) and one affine map. The
whitening of a Nystrom map, the part models of MapReduceSVC and the centring and whitening of
the kernel PCA fold into W and b (:func:`affine_form`), so the graph is a few element-wise
operators around two products and its cost depends on m, not on the training set.

The converters are registered with skl2onnx, so a scikit-learn pipeline or column transformer
around the library's estimators converts with skl2onnx's own converters for its other steps.
Outputs follow skl2onnx: a classifier gives ``label`` then ``probabilities`` (class
probabilities for :class:`~sparsekernel.KernelLogisticRegression`, decision scores for the
others, as skl2onnx gives them for ``LinearSVC``), a regressor or transformer ``variable``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.base import ClassifierMixin, OutlierMixin, RegressorMixin, is_classifier
from sklearn.utils.validation import check_is_fitted

from ..compute import holds_namespace_arrays, model_to_numpy, to_numpy

__all__ = ["AffineForm", "OnnxExportError", "affine_form", "register_onnx_converters",
           "to_onnx"]

#: Learned basis functions of the low-rank LS-SVM: phi_k(x) = f(sum_j s_kj |x_j - z_kj|).
_LEARNED = ("robust_rbf", "sbf")


class OnnxExportError(ValueError):
    """A model, or a step inside it, that cannot be written as ONNX; the message says which
    and why."""


@dataclass
class AffineForm:
    """What a fitted model computes: ``phi(X) @ W + b``.

    Attributes
    ----------
    basis : str
        phi: a kernel name ('rbf', 'laplacian', 'polynomial', 'linear', 'sigmoid'), a
        learned basis function ('robust_rbf', 'sbf'), or 'identity' (phi(X) = X).
    Z : ndarray of shape (m, d) or None
        Centres (None for 'identity').
    scale : float, ndarray of shape (m,) or (m, d), or None
        gamma (one per centre for a per-centre 'rbf'), or the learned bases' shapes.
    degree, coef0 : float
        Of the polynomial and sigmoid kernels.
    W : ndarray of shape (m, k) or None
        None: the output is phi(X) itself.
    b : ndarray of shape (k,) or None
    wide : bool
        The model computes phi and the product in float64 whatever the input's precision
        (the precision policy); the graph then does too.
    """

    basis: str
    Z: np.ndarray | None
    scale: object = None
    degree: float = 3.0
    coef0: float = 0.0
    W: np.ndarray | None = None
    b: np.ndarray | None = None
    wide: bool = False

    @property
    def n_outputs(self):
        if self.W is not None:
            return self.W.shape[1]
        return self.Z.shape[0] if self.Z is not None else None


def _dense(a):
    return np.asarray(a.toarray() if sp.issparse(a) else a, dtype=np.float64)


def _kernel_form(model, W=None, b=None, wide=None):
    """The form of a model on ``model._kernel()`` and ``model.basis_``."""
    if wide is None:
        wide = model._kernel_dtype() == np.float64
    if model.basis_ is None:  # a linear model on X itself
        return AffineForm("identity", None, W=W, b=b, wide=wide)
    kern = model._kernel()
    gamma = kern.gamma if np.isscalar(kern.gamma) else np.asarray(kern.gamma, np.float64)
    return AffineForm(kern.name, _dense(model.basis_), gamma, float(kern.degree),
                      float(kern.coef0), W, b, wide)


def _predictor_form(model):
    W = np.asarray(model._expansion_coef(), dtype=np.float64)
    return _kernel_form(model, W, _intercept(model.intercept_, W.shape[1]))


def _intercept(b, k):
    return np.broadcast_to(np.asarray(b, dtype=np.float64).ravel(), (k,)).copy()


def _mapreduce_form(model):
    # Part scores K(X, Z) P + p, then the final linear model: (K P + p) C^T + c.
    C = np.asarray(model.coef_, dtype=np.float64)
    W = np.asarray(model.part_coef_, dtype=np.float64) @ C.T
    b = np.asarray(model.part_intercept_, dtype=np.float64) @ C.T + model.intercept_
    return _kernel_form(model, W, _intercept(b, W.shape[1]))


def _learned_form(model):
    W = np.asarray(model._expansion_coef(), dtype=np.float64)
    return AffineForm(model.basis_function, _dense(model.basis_),
                      np.asarray(model.shapes_, dtype=np.float64), W=W,
                      b=_intercept(model.intercept_, W.shape[1]), wide=True)


def _nystrom_form(model):
    M = np.asarray(model.normalization_, dtype=np.float64)
    if model.eigenvalues_ is None:  # Cholesky whitening: M = L^(-T), upper triangular
        M = np.triu(M)
    return _kernel_form(model, M, None, wide=True)


def _projection_form(components, mean, wide=False, std=None):
    """(K - mean) components^T, divided by ``std`` when given."""
    W = np.asarray(components, dtype=np.float64).T
    b = -(np.asarray(mean, dtype=np.float64) @ W)
    if std is not None:
        std = np.where(std > 0, std, 1.0)
        W, b = W / std, b / std
    return W, b, wide


def _kpca_form(model):
    std = np.sqrt(np.asarray(model.explained_variance_, np.float64)) if model.whiten else None
    W, b, wide = _projection_form(model.components_, model.mean_, model.method == "nystrom",
                                  std)
    return _kernel_form(model, W, b, wide=wide)


def _forms():
    """(class, form) pairs, most specific first; the last one serves every kernel predictor."""
    from ..base import KernelExpansionMixin
    from ..decomposition import ReducedKernelCCA, ReducedKernelPCA, ReducedKernelSIR
    from ..distributed._mapreduce import MapReduceSVC
    from ..features import NystromFeatures, ReducedFeatures
    from ..lssvm._lowrank import _LowRankBase

    return (
        (MapReduceSVC, _mapreduce_form),
        (_LowRankBase, _learned_form),
        (NystromFeatures, _nystrom_form),
        (ReducedFeatures, lambda m: _kernel_form(m, wide=False)),
        (ReducedKernelPCA, _kpca_form),
        (ReducedKernelSIR, lambda m: _kernel_form(
            m, *_projection_form(m.components_, m.mean_)[:2], wide=False)),
        (ReducedKernelCCA, lambda m: _kernel_form(
            m, *_projection_form(m.x_weights_.T, m.x_mean_)[:2], wide=False)),
        (KernelExpansionMixin, _predictor_form),
    )


def affine_form(model):
    """The :class:`AffineForm` of a fitted estimator of this library.

    Parameters
    ----------
    model : fitted sparsekernel estimator
        Fitted on NumPy, on a Dask collection or on an array-API namespace's device (its
        arrays are read back to NumPy).

    Returns
    -------
    AffineForm

    Raises
    ------
    OnnxExportError
        ``model`` is not one of the library's kernel estimators.
    sklearn.exceptions.NotFittedError
        ``model`` is not fitted.
    """
    check_is_fitted(model)
    if holds_namespace_arrays(model):
        model = model_to_numpy(copy.deepcopy(model))
    for cls, form in _forms():
        if isinstance(model, cls):
            return form(model)
    raise OnnxExportError(
        f"{type(model).__name__} is not a sparsekernel estimator with a kernel expansion; "
        "affine_form reads only those.")


# --- graph -------------------------------------------------------------------------------


class _Graph:
    """Nodes and initializers added to a skl2onnx container, in one compute precision."""

    def __init__(self, scope, container, dtype):
        from onnx import TensorProto

        self.scope, self.container = scope, container
        self.dtype = np.dtype(dtype)
        self.proto = TensorProto.DOUBLE if self.dtype == np.float64 else TensorProto.FLOAT

    def name(self, hint):
        return self.scope.get_unique_variable_name(hint)

    def const(self, value, hint="c", dtype=None):
        from onnx import numpy_helper

        name = self.name(hint)
        array = np.asarray(value, dtype=self.dtype if dtype is None else dtype)
        self.container.add_initializer(name, None, list(array.shape),
                                       numpy_helper.from_array(array, name))
        return name

    def node(self, op, inputs, hint=None, output=None, domain=None, **attrs):
        output = output or self.name(hint or op.lower())
        self.container.add_node(op, list(inputs), [output],
                                name=self.scope.get_unique_operator_name(op),
                                op_domain=domain or "", **attrs)
        return output

    def cast(self, x, proto, output=None):
        return self.node("Cast", [x], "cast", output=output, to=proto)

    def row_sums(self, x, d):
        """Sums over the last axis of length d, as a product with ones (any opset)."""
        return self.node("MatMul", [x, self.const(np.ones((d, 1)), "ones")], "sums")

    def basis(self, form, x):
        """phi(x): (n, m) basis values, or x itself."""
        if form.basis == "identity":
            return x
        Z = form.Z
        m, d = Z.shape
        if form.basis == "rbf":  # max(|x|^2 - 2 x.z + |z|^2, 0), then exp(-gamma .)
            xx = self.row_sums(self.node("Mul", [x, x]), d)
            cross = self.node("MatMul", [x, self.const(-2.0 * Z.T, "Zt")])
            dist = self.node("Add", [self.node("Add", [cross, xx]),
                                     self.const((Z * Z).sum(axis=1)[None], "zz")])
            dist = self.node("Max", [dist, self.const(0.0, "zero")])
            gamma = np.reshape(-np.asarray(form.scale, np.float64), (1, -1))
            return self.node("Exp", [self.node("Mul", [dist, self.const(gamma, "gamma")])])
        if form.basis in ("laplacian", *_LEARNED):  # sum_j s_j |x_j - z_kj|, per centre k
            rows = self.node("Reshape", [x, self.const([-1, 1, d], "shape", np.int64)])
            diff = self.node("Abs", [self.node("Sub", [rows, self.const(Z[None], "Z")])])
            if form.basis == "laplacian":
                dist = self.row_sums(diff, d)
                z = self.node("Mul", [dist, self.const(form.scale, "gamma")])
            else:
                z = self.row_sums(self.node("Mul", [diff, self.const(form.scale[None],
                                                                      "shapes")]), d)
            z = self.node("Reshape", [z, self.const([-1, m], "shape", np.int64)])
            if form.basis == "sbf":  # max(1 - z, 0)
                return self.node("Relu", [self.node("Sub", [self.const(1.0, "one"), z])])
            return self.node("Exp", [self.node("Neg", [z])])
        scale = 1.0 if form.basis == "linear" else float(form.scale)
        dot = self.node("MatMul", [x, self.const(scale * Z.T, "Zt")])
        if form.basis == "linear":
            return dot
        dot = self.node("Add", [dot, self.const(form.coef0, "coef0")])
        if form.basis == "sigmoid":
            return self.node("Tanh", [dot])
        return self.node("Pow", [dot, self.const(form.degree, "degree")])

    def affine(self, form, x):
        """phi(x) W + b."""
        values = self.basis(form, x)
        if form.W is None:
            return values
        out = self.node("MatMul", [values, self.const(form.W, "W")])
        if form.b is not None and np.any(form.b != 0):
            out = self.node("Add", [out, self.const(form.b[None], "b")])
        return out


def _compute_graph(scope, operator, container, form):
    """The graph up to phi(X) W + b in the compute precision; returns (graph, output, out
    proto): the output precision is the input's (float32 or float64)."""
    from onnx import TensorProto

    x = operator.inputs[0].full_name
    in_type = operator.inputs[0].type.to_onnx_type().tensor_type.elem_type
    out_proto = TensorProto.DOUBLE if in_type == TensorProto.DOUBLE else TensorProto.FLOAT
    wide = form.wide or out_proto == TensorProto.DOUBLE
    graph = _Graph(scope, container, np.float64 if wide else np.float32)
    if in_type != graph.proto:
        x = graph.cast(x, graph.proto)
    return graph, graph.affine(form, x), out_proto


def _finish(graph, value, out_proto, output):
    if graph.proto == out_proto:
        graph.node("Identity", [value], output=output)
    else:
        graph.cast(value, out_proto, output=output)


def _convert_classifier(scope, operator, container):
    from onnx import TensorProto
    from skl2onnx.common.utils_classifier import get_label_classes

    model = operator.raw_operator
    form = affine_form(model)
    graph, scores, out_proto = _compute_graph(scope, operator, container, form)
    options = container.get_options(model, dict(raw_scores=False, nocl=False))
    if form.n_outputs == 1:  # two classes: the score is that of classes_[1]
        both = graph.node("Concat", [graph.node("Neg", [scores]), scores], axis=1)
    else:
        both = scores
    index = graph.node("ArgMax", [both], "index", axis=1, keepdims=0)
    label = operator.outputs[0].full_name
    if options["nocl"]:
        graph.node("Identity", [index], output=label)
    else:
        classes = get_label_classes(scope, model)
        if classes.dtype.kind in "OUS":
            name = graph.name("classes")
            container.add_initializer(name, TensorProto.STRING, [len(classes)],
                                      [str(c).encode() for c in classes])
        else:
            name = graph.const(classes.astype(np.int64), "classes", np.int64)
        graph.node("Gather", [name, index], output=label, axis=0)
    if hasattr(model, "predict_proba") and not options["raw_scores"]:
        if form.n_outputs == 1:
            p1 = graph.node("Sigmoid", [scores])
            probs = graph.node("Concat", [graph.node("Sub", [graph.const(1.0, "one"), p1]),
                                          p1], axis=1)
        else:
            probs = graph.node("Softmax", [scores], axis=1)
    else:  # decision scores, as skl2onnx's LinearSVC: both columns when raw_scores is set
        probs = both if options["raw_scores"] else scores
    _finish(graph, probs, out_proto, operator.outputs[1].full_name)


def _convert_single(scope, operator, container):
    graph, value, out_proto = _compute_graph(scope, operator, container,
                                             affine_form(operator.raw_operator))
    _finish(graph, value, out_proto, operator.outputs[0].full_name)


def _convert_outlier(scope, operator, container):
    """A novelty detector: ``scores`` its decision function, ``label`` +1 where it is >= 0
    and -1 below (as ``predict``), both of shape (N, 1) as skl2onnx's ``OneClassSVM``."""
    graph, scores, out_proto = _compute_graph(scope, operator, container,
                                              affine_form(operator.raw_operator))
    outside = graph.node("Less", [scores, graph.const(0.0, "zero")])
    graph.node("Where", [outside, graph.const(np.array([-1], dtype=np.int64), "minus", np.int64),
                         graph.const(np.array([1], dtype=np.int64), "plus", np.int64)],
               output=operator.outputs[0].full_name)
    _finish(graph, scores, out_proto, operator.outputs[1].full_name)


def _outlier_shape(operator):
    from skl2onnx.common.data_types import Int64TensorType

    N = operator.inputs[0].get_first_dimension()
    operator.outputs[0].type = Int64TensorType([N, 1])
    operator.outputs[1].type.shape = [N, 1]


def _transformer_shape(operator):
    from skl2onnx.common.data_types import DoubleTensorType, FloatTensorType

    inp = operator.inputs[0].type
    cls = DoubleTensorType if isinstance(inp, DoubleTensorType) else FloatTensorType
    n_out = operator.raw_operator._n_features_out
    operator.outputs[0].type = cls([inp.shape[0] if inp.shape else None, n_out])


def _classifier_shape(operator):
    """skl2onnx's classifier outputs; two classes' scores are one column (the score of
    ``classes_[1]``, as ``decision_function`` and skl2onnx's ``LinearSVC``), two with
    ``raw_scores``."""
    from skl2onnx.common.shape_calculator import calculate_linear_classifier_output_shapes

    calculate_linear_classifier_output_shapes(operator)
    model = operator.raw_operator
    options = operator.scope_inst.get_options(model, dict(raw_scores=False))
    if (len(model.classes_) == 2 and not hasattr(model, "predict_proba")
            and not options["raw_scores"]):
        operator.outputs[1].type.shape = [operator.inputs[0].get_first_dimension(), 1]


def _classifier_parser(scope, model, inputs, custom_parsers=None):
    """skl2onnx's classifier parser, without ZipMap where it cannot apply: on scores, which
    are not probabilities (as skl2onnx's ``SVC(probability=False)``), and on a float64
    graph (ZipMap reads float32 only)."""
    from skl2onnx._parse import _parse_sklearn_classifier
    from skl2onnx.common.data_types import DoubleTensorType

    if not hasattr(model, "predict_proba") or isinstance(inputs[0].type, DoubleTensorType):
        scope.add_options(id(model), {"zipmap": False})
    return _parse_sklearn_classifier(scope, model, inputs, custom_parsers=custom_parsers)


def _public_estimators():
    from sklearn.base import BaseEstimator

    import sparsekernel

    for name in sparsekernel.__all__:
        obj = getattr(sparsekernel, name)
        if isinstance(obj, type) and issubclass(obj, BaseEstimator) and (
                hasattr(obj, "predict") or hasattr(obj, "transform")):
            yield obj


_REGISTERED = []


def register_onnx_converters():
    """Register a skl2onnx converter for every public estimator of the library.

    :func:`to_onnx` calls it; call it before ``skl2onnx.to_onnx`` or
    ``skl2onnx.convert_sklearn`` to convert models (or pipelines holding them) with
    skl2onnx directly. Calling it again does nothing.
    """
    if _REGISTERED:
        return
    from skl2onnx import update_registered_converter
    from skl2onnx.common.shape_calculator import calculate_linear_regressor_output_shapes

    for cls in _public_estimators():
        alias = f"Sparsekernel{cls.__name__}"
        if issubclass(cls, ClassifierMixin):
            update_registered_converter(
                cls, alias, _classifier_shape, _convert_classifier,
                parser=_classifier_parser,
                options={"zipmap": [True, False, "columns"], "nocl": [True, False],
                         "raw_scores": [True, False]})
        elif issubclass(cls, OutlierMixin):
            update_registered_converter(cls, alias, _outlier_shape, _convert_outlier)
        elif issubclass(cls, RegressorMixin):
            update_registered_converter(cls, alias, calculate_linear_regressor_output_shapes,
                                        _convert_single)
        else:
            update_registered_converter(cls, alias, _transformer_shape, _convert_single)
        _REGISTERED.append(cls)


def _steps(model):
    """``model`` and the estimators nested in it (pipelines, column transformers, unions)."""
    yield model
    for attr in ("steps", "transformer_list", "transformers_", "transformers"):
        for item in getattr(model, attr, None) or ():
            step = item[1] if isinstance(item, tuple) else item
            if hasattr(step, "get_params"):
                yield from _steps(step)
    inner = getattr(model, "estimator", None)
    if inner is not None and hasattr(inner, "get_params"):
        yield from _steps(inner)


def _options(model, options, zipmap):
    """``options`` with an entry for each classifier step the user gave none: no ZipMap
    unless ``zipmap`` (False on a float64 graph: onnxruntime's ZipMap reads float32 only,
    and skl2onnx would add one, as it does for ``CalibratedClassifierCV``), and an explicit
    empty entry where the step's
    skl2onnx converter takes no ``zipmap`` (skl2onnx's pipeline parser gives every
    classifier step one unless the step has options, and then fails on such a converter:
    a pipeline ending in ``LinearSVC``)."""
    from skl2onnx._supported_operators import sklearn_operator_name_map
    from skl2onnx.common._registration import _converter_pool

    options = dict(options or {})
    for step in _steps(model):
        if not is_classifier(step) or id(step) in options or type(step) in options:
            continue
        converter = _converter_pool.get(sklearn_operator_name_map.get(type(step)))
        allowed = converter.get_allowed_options() if converter is not None else None
        if allowed is not None and "zipmap" not in allowed:
            options[id(step)] = {}
        elif not zipmap:
            options[id(step)] = {"zipmap": False}
    return options


def _sample(X):
    """A dense NumPy float sample with X's precision (integers: float64): ONNX has no
    sparse tensors, so a model fitted on CSR reads dense rows."""
    if hasattr(X, "iloc") or hasattr(X, "columns"):  # a data frame: skl2onnx reads its columns
        return X
    if sp.issparse(X):
        X = X[:1].toarray()
    X = np.asarray(to_numpy(X))
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    return X


def to_onnx(model, X_sample, *, target_opset=None, options=None, zipmap=True):
    """Write a fitted model, or a scikit-learn pipeline holding one, as an ONNX graph.

    Parameters
    ----------
    model : fitted estimator, Pipeline or ColumnTransformer
        Every public predictor and transformer of the library converts; scikit-learn's
        steps around it convert with skl2onnx's converters.
    X_sample : array-like of shape (n_samples, n_features)
        Rows like the model's input: they fix the input's name, width and precision
        (float32 or float64). A CSR sample gives a dense input; a model fitted on a device
        or a Dask collection exports from its NumPy arrays.
    target_opset : int or dict, optional
        skl2onnx's ``target_opset`` (default: the newest both onnx and skl2onnx support).
    options : dict, optional
        skl2onnx's converter options, keyed by class or by ``id(step)``: the library's
        classifiers take ``zipmap`` (``KernelLogisticRegression`` only: the others give
        scores, without ZipMap), ``nocl`` and ``raw_scores``.
    zipmap : bool, default=True
        Class probabilities of a float32 graph as skl2onnx gives them, through ZipMap (a
        list of ``{class: probability}`` dicts); False: a plain (n, n_classes) tensor, for
        every classifier step without an option of its own. A float64 graph has none
        (onnxruntime's ZipMap reads float32 only).

    Returns
    -------
    onnx.ModelProto
        Outputs as skl2onnx writes them: ``label`` and ``probabilities`` for a classifier
        (decision scores for a classifier without ``predict_proba``), ``variable`` for a
        regressor or transformer.

    Raises
    ------
    OnnxExportError
        A step has no ONNX converter (named in the message).
    ImportError
        The ``onnx`` extra (onnx, skl2onnx) is not installed.

    Examples
    --------
    >>> from sparsekernel import LowRankSVC
    >>> from sparsekernel.datasets import make_checkerboard
    >>> from sparsekernel.io import to_onnx
    >>> X, y = make_checkerboard(500, random_state=0)
    >>> onx = to_onnx(LowRankSVC(random_state=0).fit(X, y), X[:1])  # doctest: +SKIP
    >>> [out.name for out in onx.graph.output]                      # doctest: +SKIP
    ['label', 'probabilities']
    """
    try:
        import skl2onnx
        from skl2onnx.common.exceptions import MissingConverter, MissingShapeCalculator
    except ImportError as exc:
        raise ImportError("sparsekernel.io.to_onnx needs the onnx extra: "
                          "pip install 'sparsekernel[onnx]'") from exc
    check_is_fitted(model)
    register_onnx_converters()
    if holds_namespace_arrays(model):
        model = model_to_numpy(copy.deepcopy(model))
    try:
        X = _sample(X_sample)
        zipmap = zipmap and getattr(X, "dtype", None) != np.float64
        return skl2onnx.to_onnx(model, X, target_opset=target_opset,
                                options=_options(model, options, zipmap))
    except (MissingConverter, MissingShapeCalculator) as exc:
        raise OnnxExportError(
            f"{type(model).__name__} cannot be written as ONNX: a step has no skl2onnx "
            f"converter ({str(exc).splitlines()[0]})") from exc
