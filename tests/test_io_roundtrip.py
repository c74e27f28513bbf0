"""A file ``sparsekernel.io.save`` writes must load, and compute exactly what it saved.

Every public estimator (generated from ``sparsekernel.__all__``) over dense and CSR input:
bare (the native layout; float32 and float64, binary and multiclass targets where it takes
them), as a pipeline step and, where it is a classifier, inside ``CalibratedClassifierCV``
(the skops container, which must hold the same estimator as the native layout); and the
composite models the container allows: pipelines of scikit-learn steps with our
estimators, scikit-learn's linear models on our feature maps, calibrated classifiers,
compressed SVCs, column transformers on a frame. Each round trip must give identical
outputs of every prediction and transform method and keep the dtypes of the fitted arrays.
"""

import importlib.util
import json
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal
from sklearn import linear_model as lm
from sklearn.base import BaseEstimator, clone, is_classifier, is_regressor
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import ColumnTransformer
from sklearn.datasets import make_classification
from sklearn.decomposition import PCA, TruncatedSVD
from sklearn.feature_selection import VarianceThreshold
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    Binarizer,
    KBinsDiscretizer,
    MaxAbsScaler,
    MinMaxScaler,
    Normalizer,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
    PowerTransformer,
    QuantileTransformer,
    RobustScaler,
    StandardScaler,
)
from sklearn.svm import SVC, LinearSVC, LinearSVR

import sparsekernel
from sparsekernel.basis import BasisSelector
from sparsekernel.datasets import find_shared_data, load_svmlight_path
from sparsekernel.io import load, save
from sparsekernel.io._sklearn_checks import checks
from sparsekernel.sparse_margin import compress_svc

METHODS = ("decision_function", "predict_proba", "predict", "transform")
N_ROWS = 72


def _data(n_classes, container, dtype):
    X, y = make_classification(n_samples=N_ROWS, n_features=5, n_informative=3,
                               n_redundant=0, n_classes=n_classes, random_state=0)
    X = np.where(np.abs(X) > 0.4, X, 0.0).astype(dtype)
    return (sp.csr_matrix(X) if container == "csr" else X), y


def _fast(cls, **extra):
    """An instance of a public estimator with small, fast settings."""
    params = cls().get_params()
    small = {"n_basis": 10, "max_iter": 20, "random_state": 0}
    return cls(**{k: v for k, v in small.items() if k in params}, **extra)


def _public_estimators():
    """``{name: (estimator, kind)}``: every estimator in ``sparsekernel.__all__``."""
    out = {}
    for name in sparsekernel.__all__:
        cls = getattr(sparsekernel, name)
        if not (isinstance(cls, type) and issubclass(cls, BaseEstimator)):
            continue
        if issubclass(cls, BasisSelector):
            continue  # selectors: stored as parameters (test_io.py)
        kind = ("classifier" if is_classifier(cls()) else "regressor" if is_regressor(cls())
                else "transformer")
        out[name] = (cls, kind)
    return out


PUBLIC = _public_estimators()
#: ``{estimator name: reason}`` for those that refuse CSR input (none does today; a new
#: one states its reason here, and its CSR cases must then fail).
CSR_REFUSED = {}
#: How an estimator is saved: bare (the native layout), as the last step of a pipeline, or
#: calibrated (the skops container); only classifiers are calibrated.
WRAPPERS = ("bare", "pipeline", "calibrated")


def _cases():
    """``(name, wrapper, container, dtype, n_classes)``: every estimator in every wrapper
    over dense and CSR input; bare ones also in float32 and, for classifiers, with two and
    three classes; wrapped classifiers with three (one calibrator per class)."""
    cases = []
    for name, (_, kind) in PUBLIC.items():
        for wrapper in WRAPPERS:
            if wrapper == "calibrated" and kind != "classifier":
                continue
            bare = wrapper == "bare"
            for container in ("dense", "csr"):
                dtypes = (np.float64, np.float32) if bare else (np.float64,)
                classes = ((2, 3) if bare else (3,)) if kind == "classifier" else (2,)
                if name == "MapReduceSVC":  # each fit starts a Dask cluster: one case each
                    dtypes, classes = (np.float64,), (2,)
                cases += [(name, wrapper, container, dtype, n_classes)
                          for dtype in dtypes for n_classes in classes]
    return cases


CASES = _cases()


def _outputs(model, X):
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for method in METHODS:
            if hasattr(model, method):
                value = getattr(model, method)(X)
                out[method] = value.toarray() if sp.issparse(value) else np.asarray(value)
    return out


def _fitted_dtypes(model):
    return {k: getattr(v, "dtype", None) for k, v in vars(model).items()
            if k.endswith("_") and not k.startswith("_")}


def _round_trip(model, X, tmp_path):
    save(model, tmp_path / "model.skm")
    loaded = load(tmp_path / "model.skm")
    assert type(loaded) is type(model)
    expected, got = _outputs(model, X), _outputs(loaded, X)
    assert set(got) == set(expected) and got
    for method in expected:
        assert got[method].dtype == expected[method].dtype, method
        assert_array_equal(got[method], expected[method], err_msg=method)
    return loaded


def _wrap(model, wrapper, container):
    if wrapper == "pipeline":
        return make_pipeline(StandardScaler(with_mean=container == "dense"), model)
    if wrapper == "calibrated":
        return CalibratedClassifierCV(model, cv=3)
    return model


def _fit(name, X, y, n_classes, wrapper="bare", container="dense"):
    cls, kind = PUBLIC[name]
    model = _wrap(_fast(cls), wrapper, container)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "ReducedKernelCCA":
            return model.fit(X, np.column_stack([y, -y]).astype(float))
        if kind == "regressor" or name == "ReducedKernelSIR":
            return model.fit(X, y + 0.5 * np.arange(len(y)) % 3)
        if kind == "classifier":
            return model.fit(X, y)
        return model.fit(X)


@pytest.mark.parametrize(
    "name, wrapper, container, dtype, n_classes",
    [pytest.param(*case, marks=pytest.mark.xfail(reason=CSR_REFUSED[case[0]], strict=True))
     if case[2] == "csr" and case[0] in CSR_REFUSED else case for case in CASES],
    ids=[f"{n}-{w}-{c}-{np.dtype(d).name}-{k}" for n, w, c, d, k in CASES])
def test_every_public_estimator_round_trips(name, wrapper, container, dtype, n_classes,
                                            tmp_path):
    if name == "MapReduceSVC" and importlib.util.find_spec("distributed") is None:
        pytest.skip("MapReduceSVC needs the distributed extra (dask)")
    X, y = _data(n_classes, container, dtype)
    model = _fit(name, X, y, n_classes, wrapper, container)
    loaded = _round_trip(model, X, tmp_path)
    assert _container(tmp_path / "model.skm") == ("native" if wrapper == "bare" else "skops")
    if wrapper == "bare":
        assert _fitted_dtypes(loaded) == _fitted_dtypes(model)
        return
    for step, saved in zip(_ours(loaded), _ours(model), strict=True):
        _assert_same_as_native(step, saved, tmp_path)


def _container(path):
    with zipfile.ZipFile(path) as zf:
        return json.loads(zf.read("metadata.json")).get("container", "native")


def _ours(model):
    """The sparsekernel estimators a pipeline or a calibrated classifier holds, in order."""
    if hasattr(model, "steps"):
        return [model.steps[-1][1]]
    return [piece.estimator for piece in model.calibrated_classifiers_]


def _assert_same_as_native(step, saved, tmp_path):
    """A sparsekernel estimator loaded from the skops container holds what the native
    layout stores of it (its parameters and public fitted attributes), nothing more."""
    save(saved, tmp_path / "native.skm")
    native = load(tmp_path / "native.skm")
    assert sorted(vars(step)) == sorted(vars(native))
    for name, value in vars(native).items():
        if isinstance(value, np.ndarray) or sp.issparse(value):
            got = getattr(step, name)
            assert type(got) is type(value) and got.dtype == value.dtype, name
            assert_array_equal(got.toarray() if sp.issparse(got) else got,
                               value.toarray() if sp.issparse(value) else value, err_msg=name)
        elif not isinstance(value, BaseEstimator):
            assert repr(getattr(step, name)) == repr(value), name


# --- composite models ----------------------------------------------------------------------

def _nystrom(model):
    return make_pipeline(_fast(sparsekernel.NystromFeatures), model)


LINEAR = {
    "logistic": lm.LogisticRegression(),
    "linear-svc": LinearSVC(),
    "ridge-classifier": lm.RidgeClassifier(),
    "sgd-classifier": lm.SGDClassifier(random_state=0),
    "sgd-log-averaged": lm.SGDClassifier(loss="log_loss", average=True, random_state=0),
    "linear-svr": LinearSVR(),
    "ridge": lm.Ridge(),
    "sgd-regressor": lm.SGDRegressor(random_state=0),
    "sgd-regressor-averaged": lm.SGDRegressor(average=True, random_state=0),
    "linear-regression": lm.LinearRegression(),
    "lasso": lm.Lasso(alpha=0.01),
    "elastic-net": lm.ElasticNet(alpha=0.01),
}
# Every loss an SGD model may hold (its loss object is part of the file).
SGD_LOSSES = sorted(lm.SGDClassifier.loss_functions)


def _composites(dense):
    """``{name: (unfitted model, supervised)}`` for dense or CSR input."""
    reduced = _fast(sparsekernel.ReducedSVC)
    models = {
        "scaled": (make_pipeline(StandardScaler(with_mean=dense), reduced), True),
        "maxabs-lowrank": (make_pipeline(MaxAbsScaler(), _fast(sparsekernel.LowRankSVC)), True),
        "calibrated-sigmoid": (CalibratedClassifierCV(reduced, cv=3), True),
        "calibrated-isotonic": (CalibratedClassifierCV(reduced, method="isotonic", cv=3), True),
        "calibrated-temperature": (CalibratedClassifierCV(reduced, method="temperature", cv=3),
                                   True),
        "calibrated-no-ensemble": (CalibratedClassifierCV(reduced, cv=3, ensemble=False), True),
        "svc": (make_pipeline(StandardScaler(with_mean=dense), SVC(C=2.0)), True),
        "svc-probability": (make_pipeline(Normalizer(), SVC(probability=True, random_state=0)),
                            True),
        "nystrom-features": (make_pipeline(sparsekernel.NystromFeatures(
            n_basis=10, random_state=0), PCA(n_components=3)), False),
        "truncated-svd": (make_pipeline(TruncatedSVD(n_components=3), VarianceThreshold(),
                                        reduced), True),
        "polynomial": (make_pipeline(PolynomialFeatures(2), MaxAbsScaler(), reduced), True),
        "binarized": (make_pipeline(Binarizer(threshold=0.1), reduced), True),
        "imputed": (make_pipeline(SimpleImputer(), reduced), True),
        **{f"nystrom-{k}": (_nystrom(clone(m)), True) for k, m in LINEAR.items()},
    }
    if dense:
        models.update({
            "minmax-robust": (make_pipeline(MinMaxScaler(), RobustScaler(), reduced), True),
            "quantile": (make_pipeline(QuantileTransformer(n_quantiles=20), reduced), True),
            "power": (make_pipeline(PowerTransformer(), reduced), True),
            "bins-onehot": (make_pipeline(KBinsDiscretizer(n_bins=3), reduced), True),
            "bins-ordinal": (make_pipeline(KBinsDiscretizer(n_bins=3, encode="ordinal"),
                                           reduced), True),
        })
    return models


COMPOSITE_CASES = [(container, dtype, n_classes)
                   for container in ("dense", "csr")
                   for dtype in (np.float64, np.float32)
                   for n_classes in (2, 3)]


def _fit_composite(model, X, y, supervised):
    regressor = getattr(model, "_estimator_type", None) == "regressor"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if not supervised:
            return model.fit(X)
        return model.fit(X, y + 0.1 * np.arange(len(y)) if regressor else y)


@pytest.mark.parametrize("container, dtype, n_classes", COMPOSITE_CASES,
                         ids=[f"{c}-{np.dtype(d).name}-{k}" for c, d, k in COMPOSITE_CASES])
def test_composites_round_trip(container, dtype, n_classes, tmp_path):
    X, y = _data(n_classes, container, dtype)
    for name, (model, supervised) in _composites(container == "dense").items():
        model = _fit_composite(model, X, y, supervised)
        try:
            _round_trip(model, X, tmp_path)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from None


@pytest.mark.parametrize("loss", SGD_LOSSES)
def test_every_sgd_loss_round_trips(loss, tmp_path):
    X, y = _data(3, "dense", np.float64)
    _round_trip(lm.SGDClassifier(loss=loss, random_state=0).fit(X, y), X, tmp_path)


def _frame_model(encoder):
    X, y = _data(2, "dense", np.float64)
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2],
                          "colour": np.where(X[:, 3] > 0, "red", "blue"),
                          "size": np.where(X[:, 4] > 0, 1.0, 2.0)})
    frame.loc[[3, 7], "a"] = np.nan
    columns = ColumnTransformer([
        ("cat", encoder, ["colour", "size"]),
        ("num", make_pipeline(SimpleImputer(), StandardScaler()), ["a", "b"]),
    ], remainder="passthrough")
    return make_pipeline(columns, _fast(sparsekernel.ReducedSVC)), frame, y


@pytest.mark.parametrize("encoder", [
    OneHotEncoder(handle_unknown="ignore"),
    OneHotEncoder(drop="first", sparse_output=False),
    OneHotEncoder(drop="if_binary", min_frequency=5, handle_unknown="infrequent_if_exist"),
    OrdinalEncoder(),
    OrdinalEncoder(max_categories=2),
], ids=["onehot", "onehot-drop", "onehot-infrequent", "ordinal", "ordinal-infrequent"])
def test_column_transformer_on_a_frame_round_trips(encoder, tmp_path):
    model, frame, y = _frame_model(encoder)
    _round_trip(model.fit(frame, y), frame, tmp_path)


@pytest.mark.parametrize("container", ["dense", "csr"])
def test_compressed_svc_round_trips(container, tmp_path):
    X, y = _data(2, container, np.float64)
    model = compress_svc(SVC(gamma=0.5).fit(X, y), X, y, n_basis=8)
    loaded = _round_trip(model, X, tmp_path)
    assert_array_equal(loaded.svc.decision_function(X), model.svc.decision_function(X))


def test_unfitted_composite_round_trips(tmp_path):
    model = make_pipeline(StandardScaler(), _fast(sparsekernel.ReducedSVC))
    save(model, tmp_path / "model.skm")
    loaded = load(tmp_path / "model.skm")
    assert repr(loaded.get_params(deep=True)) == repr(model.get_params(deep=True))


def test_every_allowed_class_is_covered():
    """Each scikit-learn class the container allows has a structural check (the table is
    the allow-list) and is met, fitted, by a model above, so its check sees an honest
    state."""
    from sklearn.preprocessing import LabelEncoder

    from sparsekernel.io._nested import allowed_types

    sklearn_types = {cls for cls in allowed_types().values()
                     if cls.__module__.startswith("sklearn.")}
    assert sklearn_types == set(checks())
    X, y = _data(3, "dense", np.float64)
    fitted = [_fit_composite(model, X, y, supervised)
              for model, supervised in _composites(dense=True).values()]
    fitted += [lm.SGDClassifier(loss=loss).fit(X, y) for loss in SGD_LOSSES]
    fitted += [model.fit(frame, target) for model, frame, target in
               (_frame_model(OneHotEncoder()), _frame_model(OrdinalEncoder()))]
    seen = set().union(*(_types_in(model) for model in fitted))
    missing = set(checks()) - seen - {LabelEncoder}  # held by no model we allow
    assert not missing, sorted(c.__name__ for c in missing)


def _types_in(model, depth=0):
    found = {type(model)}
    values = list(vars(model).values()) if hasattr(model, "__dict__") else []
    while values and depth < 50:
        value = values.pop()
        if isinstance(value, list | tuple):
            values.extend(value)
        elif isinstance(value, dict):
            values.extend(value.values())
        elif hasattr(value, "__dict__") or type(value).__module__.startswith("sklearn."):
            found |= _types_in(value, depth + 1)
    return found


# --- the issue's snippet: a pipeline fitted on sparse input ---------------------------------

def _sparse_binary(n_rows, n_features, seed=0):
    """LIBSVM-like data: binary features, about 11 of 123 set per row (as a9a)."""
    rng = np.random.default_rng(seed)
    X = sp.random(n_rows, n_features, density=11 / n_features, format="csr", random_state=seed,
                  dtype=np.float64)
    X.data[:] = 1.0
    y = np.where(X[:, :8].sum(axis=1).A1 + rng.normal(size=n_rows) > 1, 1, -1)
    return X, y


def test_sparse_pipeline_with_large_inner_arrays_loads(tmp_path):
    # The CSR basis' arrays inside the .npz member decompress to more than the member's
    # own size; the budget is max_bytes, not that size.
    X, y = _sparse_binary(2000, 123)
    model = make_pipeline(sparsekernel.LowRankSVC(n_basis=150, random_state=0)).fit(X, y)
    save(model, tmp_path / "p.skm")
    loaded = load(tmp_path / "p.skm")
    assert_array_equal(loaded.predict(X), model.predict(X))
    assert_array_equal(loaded.decision_function(X), model.decision_function(X))


def test_issue_snippet_a9a_pipeline_loads(tmp_path):
    folder = find_shared_data("a9a")
    if folder is None or not (folder / "a9a.xz").exists():
        pytest.skip("shared data a9a not available")
    X, y = load_svmlight_path(folder / "a9a.xz", n_features=123)
    X, y = X[:8000], y[:8000]
    model = make_pipeline(sparsekernel.LowRankSVC(n_basis=200, random_state=0)).fit(X, y)
    save(model, tmp_path / "p.skm")
    loaded = load(tmp_path / "p.skm")
    assert_array_equal(loaded.predict(X), model.predict(X))
    assert_array_equal(loaded.decision_function(X), model.decision_function(X))
    loaded = load(tmp_path / "p.skm", max_bytes=1e10)
    assert_array_equal(loaded.predict(X[:100]), model.predict(X[:100]))
