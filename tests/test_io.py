"""Tests for sparsekernel.io: pickle-free model files and their safety checks."""

import io
import json
import pickle
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal
from sklearn.datasets import make_classification, make_regression
from sklearn.svm import SVC

import sparsekernel
from sparsekernel import ReducedFeatures, ReducedSVC, ReducedSVR, SmoothSVC, SmoothSVR
from sparsekernel.basis import FixedBasis, KMeansBasis, RandomBasis
from sparsekernel.io import FORMAT_VERSION, ModelFormatError, load, save

X_CLF, Y_CLF = make_classification(n_samples=120, n_features=4, random_state=0)
X_REG, Y_REG = make_regression(n_samples=120, n_features=4, noise=0.1, random_state=0)
for _array in (X_CLF, Y_CLF, X_REG, Y_REG):
    _array.flags.writeable = False  # shared across tests


def _round_trip(model, tmp_path):
    path = tmp_path / "model.skm"
    save(model, path)
    return load(path)


def _assert_same_fitted_state(model, loaded):
    assert type(loaded) is type(model)
    assert repr(loaded.get_params()) == repr(model.get_params())
    public = sorted(k for k in vars(model) if k.endswith("_") and not k.startswith("_"))
    assert sorted(k for k in vars(loaded) if k.endswith("_")) == public
    for name in public:
        saved, restored = getattr(model, name), getattr(loaded, name)
        assert type(restored) is type(saved), name
        if sp.issparse(saved):
            assert_array_equal(restored.toarray(), saved.toarray())
        elif isinstance(saved, np.ndarray):
            assert restored.dtype == saved.dtype, name
            assert_array_equal(restored, saved)
        else:
            assert restored == saved, name


@pytest.mark.parametrize(
    "model",
    [ReducedSVC(gamma=0.5, n_basis=15, random_state=0), SmoothSVC(C=2.0, kernel="linear")],
    ids=["reduced", "smooth-linear"],
)
def test_save_load_classifier_same_predictions(model, tmp_path):
    model.fit(X_CLF, Y_CLF)
    loaded = _round_trip(model, tmp_path)
    _assert_same_fitted_state(model, loaded)
    assert_array_equal(loaded.decision_function(X_CLF), model.decision_function(X_CLF))
    assert_array_equal(loaded.predict(X_CLF), model.predict(X_CLF))


@pytest.mark.parametrize("cls", [SmoothSVR, ReducedSVR])
def test_save_load_regressor_same_predictions(cls, tmp_path):
    params = {"n_basis": 20, "random_state": 0} if cls is ReducedSVR else {}
    model = cls(C=10.0, epsilon=0.2, **params).fit(X_REG, Y_REG)
    loaded = _round_trip(model, tmp_path)
    _assert_same_fitted_state(model, loaded)
    assert_array_equal(loaded.predict(X_REG), model.predict(X_REG))
    assert loaded.score(X_REG, Y_REG) == model.score(X_REG, Y_REG)


@pytest.mark.parametrize("dtype", [object, str])
def test_save_load_string_labels(dtype, tmp_path):
    y = np.array(["no", "yes", "maybe"], dtype=dtype)[np.arange(len(Y_CLF)) % 3]
    model = ReducedSVC(n_basis=20, random_state=0).fit(X_CLF, y)
    loaded = _round_trip(model, tmp_path)
    assert loaded.classes_.dtype == model.classes_.dtype
    assert_array_equal(loaded.predict(X_CLF), model.predict(X_CLF))
    assert_array_equal(loaded.decision_function(X_CLF), model.decision_function(X_CLF))


@pytest.mark.parametrize("container", [sp.csr_matrix, sp.csr_array])
def test_save_load_sparse_basis(container, tmp_path):
    X = container(np.where(np.abs(X_CLF) > 0.5, X_CLF, 0.0))
    model = ReducedSVC(n_basis=15, random_state=0).fit(X, Y_CLF)
    assert sp.issparse(model.basis_)
    loaded = _round_trip(model, tmp_path)
    assert type(loaded.basis_) is type(model.basis_)
    assert_array_equal(loaded.basis_.toarray(), model.basis_.toarray())
    assert_array_equal(loaded.decision_function(X), model.decision_function(X))


def test_save_load_array_and_sparse_basis_params(tmp_path):
    centers = X_CLF[:10].copy()
    for basis in (centers, sp.csr_matrix(centers), FixedBasis(centers)):
        model = ReducedSVC(basis=basis, random_state=0).fit(X_CLF, Y_CLF)
        loaded = _round_trip(model, tmp_path)
        restored = loaded.basis.centers if isinstance(basis, FixedBasis) else loaded.basis
        assert type(restored) is type(centers if isinstance(basis, FixedBasis) else basis)
        assert_array_equal(sp.csr_matrix(restored).toarray(), centers)
        assert_array_equal(loaded.decision_function(X_CLF), model.decision_function(X_CLF))


def test_save_load_non_finite_params(tmp_path):
    loaded = _round_trip(SmoothSVC(smoothing=float("inf")), tmp_path)
    assert loaded.smoothing == float("inf")
    loaded = _round_trip(SmoothSVC(smoothing=np.float32(-np.inf), tol=float("nan")), tmp_path)
    assert type(loaded.smoothing) is np.float32 and loaded.smoothing == -np.inf
    assert np.isnan(loaded.tol)


@pytest.mark.parametrize("selector", [KMeansBasis(max_iter=3, init="random"),
                                      RandomBasis(stratify=False)])
def test_save_load_selector_param(selector, tmp_path):
    model = ReducedSVC(basis=selector, n_basis=12, random_state=0).fit(X_CLF, Y_CLF)
    loaded = _round_trip(model, tmp_path)
    assert type(loaded.basis) is type(selector)
    assert loaded.basis.get_params() == selector.get_params()
    assert_array_equal(loaded.decision_function(X_CLF), model.decision_function(X_CLF))


@pytest.mark.parametrize("class_weight", [{0: 1.0, 1: 3.0}, {"a": 2, "b": 1}])
def test_save_load_dict_param_keeps_key_types(class_weight, tmp_path):
    model = ReducedSVC(class_weight=class_weight)
    loaded = _round_trip(model, tmp_path)
    assert loaded.class_weight == class_weight
    assert [type(k) for k in loaded.class_weight] == [type(k) for k in class_weight]


def test_save_load_attribute_value_types(tmp_path):
    model = ReducedSVC(n_basis=10, random_state=0).fit(X_CLF, Y_CLF)
    model.feature_names_in_ = np.array(["a", "b", "c", "d"], dtype=object)
    extras = {"f32_": np.float32(0.25), "i64_": np.int64(-3), "flag_": np.bool_(True),
              "z_": np.complex128(1 - 2j), "pair_": (1, "x", None), "items_": [1.5, [2, 3]],
              "table_": {1: "one", (2, 3): [4.0]}, "empty_": np.empty((0, 3))}
    for name, value in extras.items():
        setattr(model, name, value)
    loaded = _round_trip(model, tmp_path)
    _assert_same_fitted_state(model, loaded)
    assert loaded.feature_names_in_.dtype == object
    assert loaded.z_.dtype == np.complex128


def test_save_load_skips_private_attributes(tmp_path):
    model = ReducedSVC(n_basis=10, random_state=0).fit(X_CLF, Y_CLF)
    model._cache = object()  # private state is documented as not saved
    assert not hasattr(_round_trip(model, tmp_path), "_cache")


def test_save_load_unfitted_model(tmp_path):
    loaded = _round_trip(ReducedSVC(C=3.0, n_basis=0.1, memory_budget="64MB"), tmp_path)
    assert loaded.get_params() == ReducedSVC(C=3.0, n_basis=0.1, memory_budget="64MB").get_params()
    assert not hasattr(loaded, "coef_")


def test_registry_allows_every_exported_estimator(tmp_path):
    from sparsekernel.io._persistence import allowed_classes

    exported = {getattr(sparsekernel, n) for n in sparsekernel.__all__}
    estimators = {c for c in exported if isinstance(c, type) and hasattr(c, "get_params")}
    assert estimators <= set(allowed_classes().values())
    assert {RandomBasis, KMeansBasis, FixedBasis} <= set(allowed_classes().values())


def test_save_rejects_unsupported_param(tmp_path):
    model = ReducedSVC(random_state=np.random.RandomState(0))
    with pytest.raises(ModelFormatError, match=r"parameter 'random_state'.*RandomState"):
        save(model, tmp_path / "m.skm")
    assert list(tmp_path.iterdir()) == []  # no partial or temporary file left behind


@pytest.mark.parametrize(
    "value, match",
    [(object(), "type object"), (np.array([1, "a"], dtype=object), "dtype object"),
     (np.ma.masked_array([1.0]), "MaskedArray"), ([1, {2}], "type set")],
)
def test_save_rejects_unsupported_attribute(value, match, tmp_path):
    model = ReducedSVC(n_basis=10, random_state=0).fit(X_CLF, Y_CLF)
    model.extra_ = value
    with pytest.raises(ModelFormatError, match=rf"attribute 'extra_'.*{match}"):
        save(model, tmp_path / "m.skm")


def test_save_rejects_nested_estimator_attribute(tmp_path):
    model = ReducedSVC(n_basis=10, random_state=0).fit(X_CLF, Y_CLF)
    model.selector_ = RandomBasis()  # its fitted state would be lost: refuse
    with pytest.raises(ModelFormatError, match="attribute 'selector_'"):
        save(model, tmp_path / "m.skm")


def test_save_rejects_foreign_estimator(tmp_path):
    with pytest.raises(ModelFormatError, match="only the estimators exported by sparsekernel"):
        save(SVC(), tmp_path / "m.skm")
    with pytest.raises(ModelFormatError, match="parameter 'basis'.*SVC"):
        save(ReducedSVC(basis=SVC()), tmp_path / "m.skm")


def test_save_failure_keeps_existing_file(tmp_path):
    path = tmp_path / "m.skm"
    save(ReducedSVC(C=2.0), path)
    with pytest.raises(ModelFormatError):
        save(ReducedSVC(random_state=np.random.RandomState(0)), path)
    assert load(path).C == 2.0
    assert [p.name for p in tmp_path.iterdir()] == ["m.skm"]


# --- rejected files ------------------------------------------------------------------------

@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "good.skm"
    save(ReducedSVC(n_basis=10, random_state=0).fit(X_CLF, Y_CLF), path)
    return path


def _rewrite(src, dst, edit_metadata=None, drop=(), replace=None):
    """Copy a model file, optionally editing metadata.json and dropping/replacing members."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for name in zin.namelist():
            data = zin.read(name)
            if name in drop:
                continue
            if name == "metadata.json" and edit_metadata is not None:
                metadata = json.loads(data)
                edit_metadata(metadata)
                data = json.dumps(metadata)
            zout.writestr(name, (replace or {}).get(name, data))
    return dst


def test_load_missing_file_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "absent.skm")


def test_load_rejects_non_zip(tmp_path):
    path = tmp_path / "model.skm"
    path.write_text("1 1:0.5 2:0.25\n")
    with pytest.raises(ModelFormatError, match="not a zip archive"):
        load(path)


def test_load_rejects_zip_without_metadata(model_file, tmp_path):
    bad = _rewrite(model_file, tmp_path / "bad.skm", drop=("metadata.json",))
    with pytest.raises(ModelFormatError, match="no metadata.json"):
        load(bad)


@pytest.mark.parametrize("content", [b"{not json", b"\xff\xfe", b"[1, 2]"])
def test_load_rejects_malformed_metadata(content, model_file, tmp_path):
    bad = _rewrite(model_file, tmp_path / "bad.skm", replace={"metadata.json": content})
    with pytest.raises(ModelFormatError, match="metadata.json"):
        load(bad)


def test_load_rejects_wrong_format_name(model_file, tmp_path):
    bad = _rewrite(model_file, tmp_path / "bad.skm",
                   edit_metadata=lambda m: m.update(format="other-model"))
    with pytest.raises(ModelFormatError, match="expected format 'sparsekernel-model'.*other"):
        load(bad)


def test_load_rejects_newer_format_version(model_file, tmp_path):
    newer = FORMAT_VERSION + 1
    bad = _rewrite(model_file, tmp_path / "bad.skm",
                   edit_metadata=lambda m: m.update(format_version=newer))
    with pytest.raises(ModelFormatError, match=rf"version {newer}.*up to {FORMAT_VERSION}"):
        load(bad)


@pytest.mark.parametrize("version", [0, "1", None, True, 1.0])
def test_load_rejects_unknown_format_version(version, model_file, tmp_path):
    bad = _rewrite(model_file, tmp_path / "bad.skm",
                   edit_metadata=lambda m: m.update(format_version=version))
    with pytest.raises(ModelFormatError, match="Unknown model format version"):
        load(bad)


@pytest.mark.parametrize("name", ["Pipeline", "os.system", "BasisSelector_", 3])
def test_load_rejects_unknown_class(name, model_file, tmp_path):
    bad = _rewrite(model_file, tmp_path / "bad.skm", edit_metadata=lambda m: m.update({
        "class": name}))
    with pytest.raises(ModelFormatError, match="Unknown model class"):
        load(bad)


def test_load_rejects_unknown_nested_class(model_file, tmp_path):
    def edit(metadata):
        metadata["params"]["basis"] = {"__estimator__": "SVC", "params": {}}

    with pytest.raises(ModelFormatError, match="unknown estimator class 'SVC'"):
        load(_rewrite(model_file, tmp_path / "bad.skm", edit_metadata=edit))


def test_load_rejects_missing_array_member(model_file, tmp_path):
    bad = _rewrite(model_file, tmp_path / "bad.skm", drop=("attributes/coef_.npy",))
    with pytest.raises(ModelFormatError, match="lacks the array member 'attributes/coef_.npy'"):
        load(bad)


def test_load_rejects_array_not_in_index(model_file, tmp_path):
    bad = _rewrite(model_file, tmp_path / "bad.skm",
                   edit_metadata=lambda m: m["arrays"].pop("attributes/coef_"))
    with pytest.raises(ModelFormatError, match="array 'attributes/coef_' is not listed"):
        load(bad)


def test_load_rejects_array_not_matching_index(model_file, tmp_path):
    buffer = io.BytesIO()
    np.save(buffer, np.zeros(3), allow_pickle=False)  # valid .npy, shape not as listed
    bad = _rewrite(model_file, tmp_path / "bad.skm",
                   replace={"attributes/coef_.npy": buffer.getvalue()})
    with pytest.raises(ModelFormatError, match="but metadata.json lists"):
        load(bad)


def test_load_refuses_object_array_member(model_file, tmp_path, monkeypatch):
    # A pickled payload inside a .npy member must never be unpickled.
    buffer = io.BytesIO()
    np.save(buffer, np.array([{"evil": 1}, None], dtype=object), allow_pickle=True)

    def edit(metadata):
        metadata["arrays"]["attributes/coef_"] = {"dtype": "|O", "shape": [2]}

    bad = _rewrite(model_file, tmp_path / "bad.skm", edit_metadata=edit,
                   replace={"attributes/coef_.npy": buffer.getvalue()})
    monkeypatch.setattr(pickle, "load", _forbidden)
    monkeypatch.setattr(pickle, "loads", _forbidden)
    with pytest.raises(ModelFormatError, match="Object arrays cannot be loaded"):
        load(bad)


def _forbidden(*args, **kwargs):
    raise AssertionError("pickle must not be used by sparsekernel.io")


def test_save_load_never_use_pickle(tmp_path, monkeypatch):
    for name in ("dump", "dumps", "load", "loads"):
        monkeypatch.setattr(pickle, name, _forbidden)
    monkeypatch.setattr(pickle, "Unpickler", _forbidden)
    y = np.array(["a", "b"], dtype=object)[Y_CLF]
    model = ReducedSVC(n_basis=10, basis=KMeansBasis(), random_state=0).fit(X_CLF, y)
    assert_array_equal(_round_trip(model, tmp_path).predict(X_CLF), model.predict(X_CLF))


@pytest.mark.parametrize("name", ["predict", "__class__", "_private_", "not-an-identifier_",
                                  "coef"])
def test_load_rejects_unsafe_attribute_name(name, model_file, tmp_path):
    bad = _rewrite(model_file, tmp_path / "bad.skm",
                   edit_metadata=lambda m: m["attributes"].update({name: 1}))
    with pytest.raises(ModelFormatError, match="not a valid fitted attribute"):
        load(bad)


@pytest.mark.parametrize("node", [{"__pickle__": "x"}, {"plain": "dict"},
                                  {"__float__": "big"}, {"__numpy__": "object", "value": 1},
                                  {"__dict__": [[[1], 2]]}])
def test_load_rejects_malformed_values(node, model_file, tmp_path):
    bad = _rewrite(model_file, tmp_path / "bad.skm",
                   edit_metadata=lambda m: m["attributes"].update(extra_=node))
    with pytest.raises(ModelFormatError, match="metadata.json"):
        load(bad)


def test_load_rejects_unknown_parameter(model_file, tmp_path):
    bad = _rewrite(model_file, tmp_path / "bad.skm",
                   edit_metadata=lambda m: m["params"].update(n_trees=3))
    with pytest.raises(ModelFormatError, match="do not match ReducedSVC"):
        load(bad)


def test_load_refuses_to_overwrite_class_attribute(model_file, tmp_path, monkeypatch):
    monkeypatch.setattr(ReducedSVC, "n_support_", property(lambda self: 0), raising=False)
    bad = _rewrite(model_file, tmp_path / "bad.skm",
                   edit_metadata=lambda m: m["attributes"].update(n_support_=5))
    with pytest.raises(ModelFormatError, match="'n_support_' is not a valid fitted attribute"):
        load(bad)


def test_save_gives_file_usual_permissions(tmp_path):
    reference = tmp_path / "reference"
    reference.write_bytes(b"")
    save(ReducedSVC(), tmp_path / "m.skm")
    assert (tmp_path / "m.skm").stat().st_mode == reference.stat().st_mode


def test_save_load_reduced_features_same_transform(tmp_path):
    features = ReducedFeatures(n_basis=12, gamma=0.3, random_state=0).fit(X_CLF)
    loaded = _round_trip(features, tmp_path)
    _assert_same_fitted_state(features, loaded)
    assert_array_equal(loaded.transform(X_CLF), features.transform(X_CLF))
