"""Tests for sparsekernel.io: pickle-free model files and their safety checks."""

import io
import json
import pickle
import struct
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.neighbors import KNeighborsClassifier
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
        elif isinstance(saved, dict):  # e.g. pruning_path_: a dict of arrays
            assert repr(restored) == repr(saved), name
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
    loaded = _round_trip(SmoothSVC(smoothing=np.float32(np.inf)), tmp_path)
    assert type(loaded.smoothing) is np.float32 and loaded.smoothing == np.inf


def test_save_refuses_parameters_fit_would_refuse(tmp_path):
    # What save writes, load reads: load checks parameters as fit does, so save does too.
    with pytest.raises(ModelFormatError, match="invalid parameter.*'tol'.*nan"):
        save(SmoothSVC(tol=float("nan")), tmp_path / "m.skm")


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


def test_save_load_feature_names(tmp_path):
    model = ReducedSVC(n_basis=10, random_state=0).fit(X_CLF, Y_CLF)
    model.feature_names_in_ = np.array(["a", "b", "c", "d"], dtype=object)
    loaded = _round_trip(model, tmp_path)
    _assert_same_fitted_state(model, loaded)
    assert loaded.feature_names_in_.dtype == object


def test_codec_round_trips_every_value_type():
    from sparsekernel.io._codec import decode, encode

    values = {"f32": np.float32(0.25), "i64": np.int64(-3), "flag": np.bool_(True),
              "z": np.complex128(1 - 2j), "pair": (1, "x", None), "items": [1.5, [2, 3]],
              "table": {1: "one", (2, 3): [4.0]}, "empty": np.empty((0, 3)),
              "nan": float("nan"), "csr": sp.csr_array(np.eye(3)[:2])}
    arrays = {}
    tree = encode(values, "v", arrays)
    restored = decode(json.loads(json.dumps(tree)), arrays.__getitem__, {})
    assert repr(restored["table"]) == repr(values["table"])
    assert np.isnan(restored["nan"]) and restored["pair"] == values["pair"]
    for key in ("f32", "i64", "flag", "z"):
        assert type(restored[key]) is type(values[key]) and restored[key] == values[key]
    assert type(restored["csr"]) is sp.csr_array
    assert_array_equal(restored["csr"].toarray(), values["csr"].toarray())


def test_save_load_skips_private_attributes(tmp_path):
    model = ReducedSVC(n_basis=10, random_state=0).fit(X_CLF, Y_CLF)
    model._cache = object()  # private state is documented as not saved
    assert not hasattr(_round_trip(model, tmp_path), "_cache")


def test_save_load_unfitted_model(tmp_path):
    loaded = _round_trip(ReducedSVC(C=3.0, n_basis=0.1, memory_budget="64MB"), tmp_path)
    assert loaded.get_params() == ReducedSVC(C=3.0, n_basis=0.1, memory_budget="64MB").get_params()
    assert not hasattr(loaded, "coef_")


def test_registry_allows_every_exported_estimator(tmp_path):
    from sparsekernel.io._registry import allowed_classes

    exported = {getattr(sparsekernel, n) for n in sparsekernel.__all__}
    estimators = {c for c in exported if isinstance(c, type) and hasattr(c, "get_params")}
    assert estimators <= set(allowed_classes().values())
    assert {RandomBasis, KMeansBasis, FixedBasis} <= set(allowed_classes().values())


def test_every_estimator_states_its_fitted_attributes_beside_its_class():
    """Each exported estimator class defines ``_fitted_spec`` in its own body (as it does
    ``_parameter_constraints``), so changing an estimator never means editing ``io/``."""
    from sparsekernel.basis import BasisSelector
    from sparsekernel.io._spec import spec_of
    from sparsekernel.utils.fitted_spec import ClassSpec

    exported = [getattr(sparsekernel, n) for n in sparsekernel.__all__]
    estimators = [c for c in exported if isinstance(c, type) and hasattr(c, "get_params")
                  and not issubclass(c, BasisSelector)]  # selectors are never fitted in a file
    assert len(estimators) >= 22
    for cls in estimators:
        assert isinstance(cls.__dict__.get("_fitted_spec"), ClassSpec), cls.__name__
        assert spec_of(cls) is cls._fitted_spec


def test_save_rejects_unsupported_param(tmp_path):
    model = ReducedSVC(random_state=np.random.RandomState(0))
    with pytest.raises(ModelFormatError, match=r"parameter 'random_state'.*RandomState"):
        save(model, tmp_path / "m.skm")
    assert list(tmp_path.iterdir()) == []  # no partial or temporary file left behind


@pytest.mark.parametrize(
    "params, match",
    [({"class_weight": {0: object()}}, "'class_weight'.*type object"),
     ({"basis": np.array([[1, "a"]], dtype=object)}, "'basis'.*dtype object"),
     ({"basis": np.ma.masked_array([[1.0]])}, "'basis'.*MaskedArray"),
     ({"class_weight": {0: {2}}}, "'class_weight'.*type set")],
)
def test_save_rejects_unsupported_param_value(params, match, tmp_path):
    with pytest.raises(ModelFormatError, match=rf"parameter {match}"):
        save(ReducedSVC(**params), tmp_path / "m.skm")


@pytest.mark.parametrize("name, value", [("extra_", 1.0), ("selector_", RandomBasis())])
def test_save_rejects_attribute_the_class_does_not_fit(name, value, tmp_path):
    # load accepts exactly the fitted state fit produces, so save refuses anything else.
    model = ReducedSVC(n_basis=10, random_state=0).fit(X_CLF, Y_CLF)
    setattr(model, name, value)
    with pytest.raises(ModelFormatError, match=f"'{name}' is not a fitted attribute"):
        save(model, tmp_path / "m.skm")


def test_save_rejects_inconsistent_fitted_state(tmp_path):
    model = ReducedSVC(n_basis=10, random_state=0).fit(X_CLF, Y_CLF)
    model.coef_ = model.coef_.T
    with pytest.raises(ModelFormatError, match=r"'coef_' has shape \(10, 1\), expected \(1, 10\)"):
        save(model, tmp_path / "m.skm")
    assert list(tmp_path.iterdir()) == []


def test_save_rejects_foreign_estimator(tmp_path):
    # scikit-learn classes outside the allow-list of composite files (test_io_pipeline.py)
    with pytest.raises(ModelFormatError, match="KNeighborsClassifier, which model files may not"):
        save(KNeighborsClassifier(), tmp_path / "m.skm")
    with pytest.raises(ModelFormatError, match="'basis' parameter.*SVC"):
        save(ReducedSVC(basis=SVC()), tmp_path / "m.skm")  # refused as fit refuses it


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


def _rewrite(src, dst, edit_metadata=None, drop=(), replace=None,
             compression=zipfile.ZIP_STORED):
    """Copy a model file, optionally editing metadata.json and dropping/replacing members."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", compression) as zout:
        for name in zin.namelist():
            data = zin.read(name)
            if name in drop:
                continue
            if name == "metadata.json" and edit_metadata is not None:
                metadata = json.loads(data)
                edit_metadata(metadata)
                data = json.dumps(metadata)
            zout.writestr(name, (replace or {}).get(name, data))
        for name, data in (replace or {}).items():  # new members
            if name not in zin.namelist():
                zout.writestr(name, data)
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
    with pytest.raises(ModelFormatError, match="'attributes/coef_.npy' is not listed"):
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
    with pytest.raises(ModelFormatError, match="never objects"):
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


# --- untrusted files: one reproducer per failure seen on crafted files ----------------------

def _npy(array):
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def _with_array(src, dst, key, array):
    """Copy a model file with the array member ``key`` (and its index entry) replaced."""
    def edit(metadata):
        metadata["arrays"][key] = {"dtype": array.dtype.str, "shape": list(array.shape)}

    return _rewrite(src, dst, edit_metadata=edit, replace={f"{key}.npy": _npy(array)})


def _read_array(path, key):
    with zipfile.ZipFile(path) as zf:
        return np.load(io.BytesIO(zf.read(f"{key}.npy")))


@pytest.fixture
def sparse_model_file(tmp_path):
    X = sp.csr_matrix(np.where(np.abs(X_CLF) > 0.5, X_CLF, 0.0))
    path = tmp_path / "sparse.skm"
    save(ReducedSVC(n_basis=10, random_state=0).fit(X, Y_CLF), path)
    return path


@pytest.mark.parametrize("index", [10**9, -1, 2**62, 4])
def test_load_rejects_csr_column_index_out_of_range(index, sparse_model_file, tmp_path):
    # 10**9 used to load and then crash predict inside scipy; -1 and 2**62 changed decisions.
    indices = _read_array(sparse_model_file, "attributes/basis_/indices").astype(np.int64)
    indices[3] = index
    bad = _with_array(sparse_model_file, tmp_path / "bad.skm", "attributes/basis_/indices",
                      indices)
    with pytest.raises(ModelFormatError,
                       match=rf"basis_/indices.npy'.*column index {index} is outside 0..3"):
        load(bad)


@pytest.mark.parametrize("edit, match", [
    (lambda p: p[::-1].copy(), "indptr runs from"),
    (lambda p: np.r_[p[:2], p[3], p[2], p[4:]], "indptr decreases"),
    (lambda p: p[:-1], "indptr has 10 entries for 10 rows"),
])
def test_load_rejects_broken_csr_indptr(edit, match, sparse_model_file, tmp_path):
    indptr = edit(_read_array(sparse_model_file, "attributes/basis_/indptr"))
    bad = _with_array(sparse_model_file, tmp_path / "bad.skm", "attributes/basis_/indptr",
                      indptr)
    with pytest.raises(ModelFormatError, match=match):
        load(bad)


def test_load_rejects_duplicate_members(model_file, tmp_path):
    # zipfile lets the last of two same-named members win; a model file must be unambiguous.
    with zipfile.ZipFile(model_file) as zf:
        members = [(n, zf.read(n)) for n in zf.namelist()]
    other = json.loads(dict(members)["metadata.json"])
    other["params"]["C"] = 1e6
    bad = tmp_path / "bad.skm"
    with zipfile.ZipFile(bad, "w") as zf, pytest.warns(UserWarning, match="Duplicate"):
        for name, data in [*members, ("metadata.json", json.dumps(other))]:
            zf.writestr(name, data)
    with pytest.raises(ModelFormatError, match="'metadata.json' appears twice"):
        load(bad)


def _patch_central_directory(path, name, offset, fmt, value):
    """Overwrite one field of ``name``'s central-directory header in place."""
    data = bytearray(path.read_bytes())
    pos = data.find(b"PK\x01\x02" + b"", data.find(b"PK\x01\x02"))
    while data[pos + 46:pos + 46 + len(name)] != name.encode():
        pos = data.find(b"PK\x01\x02", pos + 4)
    struct.pack_into(fmt, data, pos + offset, value)
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("member, offset, fmt, value, match", [
    ("attributes/coef_.npy", 10, "<H", 14, "compression method 14"),  # NotImplementedError
    ("attributes/coef_.npy", 10, "<H", 99, "compression method 99"),
    ("attributes/coef_.npy", 8, "<H", 1, "encrypted"),  # RuntimeError before
    ("metadata.json", 24, "<I", 2**31, r"declares 2 GiB decompressed, above .* 8 MiB"),
    ("attributes/coef_.npy", 24, "<I", 2**31, r"80 B of data .* holds 2 GiB"),
    ("attributes/coef_.npy", 42, "<I", 7, "coef_.npy"),  # local header offset into garbage
])
def test_load_rejects_damaged_zip_headers(member, offset, fmt, value, match, model_file):
    _patch_central_directory(model_file, member, offset, fmt, value)
    with pytest.raises(ModelFormatError, match=match):
        load(model_file)


def test_load_rejects_corrupt_compressed_data(model_file, tmp_path):
    # zlib.error or BadZipFile (CRC) escaped before.
    data = bytearray(model_file.read_bytes())
    with zipfile.ZipFile(model_file) as zf:
        info = zf.getinfo("attributes/basis_.npy")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    for pos in range(start, start + info.compress_size, 7):
        data[pos] ^= 0x55
    (tmp_path / "bad.skm").write_bytes(bytes(data))
    with pytest.raises(ModelFormatError, match="basis_.npy"):
        load(tmp_path / "bad.skm")


@pytest.mark.parametrize("cut", [0.2, 0.5, 0.9, 0.999])
def test_load_rejects_truncated_file(cut, model_file, tmp_path):
    data = model_file.read_bytes()
    (tmp_path / "bad.skm").write_bytes(data[:int(len(data) * cut)])
    with pytest.raises(ModelFormatError):
        load(tmp_path / "bad.skm")


def test_load_rejects_deeply_nested_json(model_file, tmp_path):
    # 1000-deep JSON raised RecursionError.
    with zipfile.ZipFile(model_file) as zf:
        text = zf.read("metadata.json").decode()
    deep = text.replace('"attributes": {', '"attributes": {"extra_": ' + "[" * 1000 + "]" * 1000
                        + ", ", 1)
    bad = _rewrite(model_file, tmp_path / "bad.skm", replace={"metadata.json": deep})
    with pytest.raises(ModelFormatError, match=r"nests 10\d\d levels deep, more than 64"):
        load(bad)


@pytest.mark.parametrize("content, match", [
    (b'{"format": NaN}', "NaN is not JSON"),
    (b'{"format": "sparsekernel-model", "format": "other"}', "'format' appears twice"),
    (b"[" + b"0," * 600_000 + b"0]", "more than 500000"),
], ids=["nan", "duplicate-key", "too-many-values"])
def test_load_rejects_hostile_json(content, match, model_file, tmp_path):
    bad = _rewrite(model_file, tmp_path / "bad.skm", replace={"metadata.json": content})
    with pytest.raises(ModelFormatError, match=match):
        load(bad)


def test_load_rejects_padded_metadata_before_reading_it(model_file, tmp_path):
    # A 2 MB file whose metadata.json inflated to 2 GiB of whitespace took 20 s and 4.4 GB;
    # the size in the zip directory now refuses it before a byte is decompressed.
    with zipfile.ZipFile(model_file) as zf:
        padded = zf.read("metadata.json") + b" " * (16 * 2**20)
    bad = _rewrite(model_file, tmp_path / "bad.skm", replace={"metadata.json": padded},
                   compression=zipfile.ZIP_DEFLATED)
    assert bad.stat().st_size < 2**20
    with pytest.raises(ModelFormatError, match=r"'metadata.json' declares 16 MiB.*8 MiB"):
        load(bad)


def test_load_rejects_npy_header_declaring_huge_array(model_file, tmp_path):
    # A header declaring 10**11 elements raised MemoryError from numpy's reader.
    header = repr({"descr": "<f8", "fortran_order": False, "shape": (10**11,)}).encode()
    header += b" " * (63 - (len(header) + 10) % 64) + b"\n"
    member = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + b"\0" * 64

    def edit(metadata):
        metadata["arrays"]["attributes/coef_"] = {"dtype": "<f8", "shape": [10**11]}

    bad = _rewrite(model_file, tmp_path / "bad.skm", edit_metadata=edit,
                   replace={"attributes/coef_.npy": member})
    with pytest.raises(ModelFormatError, match=r"coef_.npy' is listed with 745 GiB"):
        load(bad)


def test_load_max_bytes(model_file):
    with pytest.raises(ModelFormatError, match="above max_bytes=1000 B"):
        load(model_file, max_bytes=1000)
    assert load(model_file, max_bytes=float("inf")).n_features_in_ == 4
    assert load(model_file, max_bytes="1MB").n_features_in_ == 4


def _replace_attribute(src, dst, name, value):
    """Copy a model file with the fitted attribute ``name`` set to an array or JSON value."""
    key = f"attributes/{name}"

    def edit(metadata):
        metadata["arrays"].pop(key, None)
        if isinstance(value, np.ndarray):
            metadata["arrays"][key] = {"dtype": value.dtype.str, "shape": list(value.shape)}
            metadata["attributes"][name] = {"__array__": key}
        elif value is _MISSING:
            del metadata["attributes"][name]
        else:
            metadata["attributes"][name] = value

    replace = {f"{key}.npy": _npy(value)} if isinstance(value, np.ndarray) else {}
    drop = () if isinstance(value, np.ndarray) else (f"{key}.npy",)
    return _rewrite(src, dst, edit_metadata=edit, replace=replace, drop=drop)


_MISSING = object()
_COEF = ReducedSVC(n_basis=10, random_state=0).fit(X_CLF, Y_CLF).coef_


@pytest.mark.parametrize("name, value, match", [
    ("coef_", _MISSING, r"\['coef_'\].*missing"),
    ("coef_", _COEF.T.copy(), r"'coef_' has shape \(10, 1\), expected \(1, 10\).*coef_.npy"),
    ("coef_", np.where(np.arange(10) == 3, np.nan, _COEF), "'coef_' holds NaN.*coef_.npy"),
    ("coef_", _COEF > 0, "'coef_' must be float32 or float64, got dtype bool"),
    ("coef_", _COEF.astype(np.complex128), "'coef_' must be float32 or float64"),
    ("coef_", _COEF.astype(np.float16), "'coef_' must be float32 or float64"),
    ("intercept_", 0.5, r"'intercept_' must be a numpy array.*stored in metadata.json"),
    ("classes_", np.zeros(2, dtype=[("a", "<i8")]), "records"),
    ("classes_", np.array([1, 0]), "sorted and unique"),
    ("classes_", np.array([0, 1, 2]), r"'coef_' has shape \(1, 10\), expected \(3, 10\)"),
    ("basis_indices_", -np.ones(10, dtype=np.int64), "negative indices"),
    ("n_features_in_", 5, r"'basis_' has shape \(10, 4\), expected \(m, 5\)"),
    ("gamma_", -1.0, "'gamma_' must be a finite positive number"),
])
def test_load_rejects_inconsistent_fitted_state(name, value, match, model_file, tmp_path):
    # Each of these loaded before and failed (or returned garbage) only at predict time.
    with pytest.raises(ModelFormatError, match=match):
        load(_replace_attribute(model_file, tmp_path / "bad.skm", name, value))


def test_load_rejects_model_failing_on_a_zero_row(tmp_path):
    # Per-centre widths are consistent in shape but only valid for the RBF kernel: the
    # final evaluation on a zero row catches what the attribute table cannot express.
    model = ReducedSVC(kernel="poly", n_basis=10, random_state=0).fit(X_CLF, Y_CLF)
    path = tmp_path / "m.skm"
    save(model, path)
    bad = _replace_attribute(path, tmp_path / "bad.skm", "gamma_", np.ones(10))
    with pytest.raises(ModelFormatError, match="fails on a zero input row.*per-centre gamma"):
        load(bad)


def test_load_rejects_parameters_fit_would_refuse(model_file, tmp_path):
    bad = _rewrite(model_file, tmp_path / "bad.skm",
                   edit_metadata=lambda m: m["params"].update(kernel="evil"))
    with pytest.raises(ModelFormatError, match="invalid parameter.*'kernel'"):
        load(bad)


def test_mapreduce_client_is_never_saved_nor_restored(tmp_path):
    from sparsekernel import MapReduceSVC

    path = tmp_path / "m.skm"
    save(MapReduceSVC(client="tcp://10.0.0.1:8786", n_parts=2), path)
    with zipfile.ZipFile(path) as zf:
        assert "client" not in json.loads(zf.read("metadata.json"))["params"]
    assert load(path).client is None
    tampered = _rewrite(path, tmp_path / "bad.skm",
                        edit_metadata=lambda m: m["params"].update(client="tcp://evil:8786"))
    assert load(tampered).client is None  # the next fit runs on its own local cluster


def test_load_peak_memory_near_model_size(tmp_path):
    # The arrays are read once, in place: no second copy, no buffer of the whole member.
    import tracemalloc

    model = ReducedFeatures()
    model.n_features_in_, model.gamma_, model.basis_indices_ = 500, 0.1, None
    model.basis_ = np.sin(np.arange(2000 * 500.0)).reshape(2000, 500)  # 8 MB
    save(model, tmp_path / "m.skm")
    tracemalloc.start()
    try:
        loaded = load(tmp_path / "m.skm")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert_array_equal(loaded.basis_, model.basis_)
    assert peak < model.basis_.nbytes + 6 * 2**20, peak  # a second copy would be 8 MB


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_save_load_every_estimator(tmp_path):
    # Every exported model's fitted state passes the checks and round-trips exactly.
    from tests.test_common import ESTIMATORS

    X, y = X_CLF[:60], Y_CLF[:60]
    for estimator in ESTIMATORS:
        if type(estimator).__name__ == "MapReduceSVC":
            continue  # tests/test_distributed.py round-trips it (each fit starts a cluster)
        model = clone(estimator).fit(X, y)
        loaded = _round_trip(model, tmp_path)
        _assert_same_fitted_state(model, loaded)
        for method in ("decision_function", "predict", "transform"):
            if hasattr(model, method):
                assert_array_equal(getattr(loaded, method)(X), getattr(model, method)(X))


def test_save_into_a_missing_folder_names_the_path_given(tmp_path):
    model = ReducedSVC(n_basis=5, random_state=0).fit(*make_classification(40, random_state=0))
    path = tmp_path / "missing" / "model.skm"
    with pytest.raises(FileNotFoundError) as info:
        save(model, path)
    assert info.value.__context__ is None  # no second error from cleaning up
    assert list(tmp_path.iterdir()) == []


def test_interrupt_after_the_rename_keeps_the_model_and_propagates(tmp_path, monkeypatch):
    import sparsekernel.io._persistence as persistence

    model = ReducedSVC(n_basis=5, random_state=0).fit(*make_classification(40, random_state=0))
    replace = persistence.os.replace

    def replace_then_interrupt(src, dst):
        replace(src, dst)
        raise KeyboardInterrupt

    monkeypatch.setattr(persistence.os, "replace", replace_then_interrupt)
    path = tmp_path / "model.skm"
    with pytest.raises(KeyboardInterrupt):
        save(model, path)
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.skm"]
    assert_array_equal(load(path).predict(model.basis_), model.predict(model.basis_))


def test_save_to_a_pipe_writes_in_place_and_keeps_the_pipe(tmp_path):
    import os
    import stat
    import threading

    model = ReducedSVC(n_basis=5, random_state=0).fit(*make_classification(40, random_state=0))
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    save(model, fifo)
    reader.join(timeout=30)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    copy = tmp_path / "copy.skm"
    copy.write_bytes(received[0])
    assert_array_equal(load(copy).predict(model.basis_), model.predict(model.basis_))
