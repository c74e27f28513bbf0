"""sparsekernel.io for composite models: pipelines of scikit-learn preprocessing steps and
sparsekernel estimators, scikit-learn's linear models and SVC, calibrated classifiers and
compress_svc results (skops container).

Round trips must be exact; classes outside the allow-list are refused at save, naming them;
every file save writes, and every rewrite of it that changes nothing it means, must load;
and corrupted files (the mutation style of test_io_fuzz.py, aimed at the skops members and
at the state of the scikit-learn objects too) must end in ModelFormatError or in a model
computing finite values on real inputs.
"""

import io
import json
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import ColumnTransformer
from sklearn.datasets import make_classification
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    MaxAbsScaler,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
    SplineTransformer,
    StandardScaler,
)
from sklearn.svm import SVC, LinearSVC
from sklearn.tree import DecisionTreeClassifier

from sparsekernel import LSSVR, LowRankSVC, NystromFeatures, OnlineLSSVR, ReducedSVC
from sparsekernel.io import ModelFormatError, load, save
from sparsekernel.io._nested import _json_nodes
from sparsekernel.sparse_margin import compress_svc

from .test_io_fuzz import (
    _crafted_npy,
    _hostile_json,
    _hostile_npy,
    _paths,
    flip_bits,
    npy_bytes,
    overwrite_run,
    patch_header_field,
    read_members,
    truncate,
    write_members,
)

X, Y = make_classification(n_samples=90, n_features=4, n_informative=3, n_redundant=0,
                           random_state=0)
FRAME = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "colour": np.where(X[:, 2] > 0, "red",
                                                                     "blue")})
FRAME.loc[[3, 7], "a"] = np.nan
X_SPARSE = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
Y3 = np.digitize(X[:, 0], [-0.5, 0.5])


def _frame_pipeline():
    columns = ColumnTransformer([
        ("cat", OneHotEncoder(handle_unknown="ignore"), ["colour"]),
        ("num", make_pipeline(SimpleImputer(), StandardScaler()), ["a", "b"]),
    ])
    return Pipeline([("columns", columns), ("svc", ReducedSVC(n_basis=10, random_state=0))])


def _models():
    """Every kind of composite model, fitted, with the inputs it predicts on."""
    return {
        "scaled": (make_pipeline(StandardScaler(), ReducedSVC(n_basis=10, random_state=0))
                   .fit(X, Y), X),
        "frame": (_frame_pipeline().fit(FRAME, Y), FRAME),
        "calibrated": (CalibratedClassifierCV(ReducedSVC(n_basis=10, random_state=0), cv=3)
                       .fit(X, Y), X),
        "compressed": (compress_svc(SVC(gamma=0.5).fit(X, Y), X, Y, n_basis=8), X),
        "polynomial": (make_pipeline(MinMaxScaler(), PolynomialFeatures(2),
                                     LowRankSVC(n_basis=8, random_state=0)).fit(X, Y), X),
        # Encoders that tolerate unknown values: a file whose categories were swapped is a
        # valid (different) model, not a damaged one, and must still compute.
        "sparse-basis": (make_pipeline(OrdinalEncoder(handle_unknown="use_encoded_value",
                                                      unknown_value=-1),
                                       OneHotEncoder(handle_unknown="ignore"),
                                       ReducedSVC(n_basis=6, random_state=0))
                         .fit(np.round(X), Y), np.round(X)),
        # scikit-learn members that read their own private state: libsvm's SVC, dense and
        # CSR; linear models on a feature map; scalers before a linear SVM.
        "svc": (make_pipeline(StandardScaler(), SVC(gamma=0.5)).fit(X, Y3), X),
        "svc-sparse": (make_pipeline(MaxAbsScaler(), SVC()).fit(X_SPARSE, Y), X_SPARSE),
        "nystrom-logistic": (make_pipeline(NystromFeatures(n_basis=8, random_state=0),
                                           LogisticRegression()).fit(X, Y3), X),
        "scaled-linear-svc": (make_pipeline(MinMaxScaler(), PolynomialFeatures(2),
                                            LinearSVC()).fit(X, Y), X),
    }


MODELS = _models()
METHODS = ("decision_function", "predict_proba", "predict", "transform")


def _outputs(model, X_in):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {m: np.asarray(getattr(model, m)(X_in)) for m in METHODS if hasattr(model, m)}


@pytest.mark.parametrize("name", list(MODELS))
def test_round_trip_is_exact(name, tmp_path):
    model, X_in = MODELS[name]
    save(model, tmp_path / "model.skm")
    loaded = load(tmp_path / "model.skm")
    assert type(loaded) is type(model)
    assert repr(loaded.get_params(deep=True)) == repr(model.get_params(deep=True))
    expected, got = _outputs(model, X_in), _outputs(loaded, X_in)
    assert set(got) == set(expected) and {"predict"} <= set(got)
    for method in expected:
        assert_array_equal(got[method], expected[method], err_msg=method)


def test_acceptance_pipeline_keeps_steps_and_params(tmp_path):
    model = MODELS["scaled"][0]
    save(model, tmp_path / "model.skm")
    loaded = load(tmp_path / "model.skm")
    assert [type(s).__name__ for _, s in loaded.steps] == ["StandardScaler", "ReducedSVC"]
    assert loaded.steps[1][1].get_params() == model.steps[1][1].get_params()
    assert_array_equal(loaded.steps[0][1].scale_, model.steps[0][1].scale_)


def test_compressed_keeps_its_source_svc(tmp_path):
    model = MODELS["compressed"][0]
    save(model, tmp_path / "model.skm")
    loaded = load(tmp_path / "model.skm")
    assert_array_equal(loaded.svc.decision_function(X), model.svc.decision_function(X))


def test_sparse_basis_survives(tmp_path):
    model = MODELS["sparse-basis"][0]
    assert sp.issparse(model[-1].basis_)
    save(model, tmp_path / "model.skm")
    assert sp.issparse(load(tmp_path / "model.skm")[-1].basis_)


@pytest.mark.parametrize("model, culprit", [
    (make_pipeline(FunctionTransformer(np.tanh), ReducedSVC()),
     r"steps\[0\]\[1\]\.func is a numpy\.ufunc"),
    (make_pipeline(StandardScaler(), KNeighborsClassifier()), "KNeighborsClassifier"),
    (CalibratedClassifierCV(DecisionTreeClassifier()), "DecisionTreeClassifier"),
    # Its B-splines hold a function and are evaluated by compiled code trusting the knots.
    (make_pipeline(SplineTransformer(), ReducedSVC()), "SplineTransformer"),
])
def test_save_refuses_disallowed_classes(model, culprit, tmp_path):
    model.fit(X, Y)
    with pytest.raises(ModelFormatError, match=f"{culprit}, which model files may not hold"):
        save(model, tmp_path / "model.skm")
    assert not list(tmp_path.iterdir())


def test_save_refuses_a_function_transformer_with_a_function(tmp_path):
    model = make_pipeline(FunctionTransformer(kw_args={"a": 1}), ReducedSVC())
    with pytest.raises(ModelFormatError, match=r"kw_args.*identity FunctionTransformer"):
        save(model, tmp_path / "model.skm")


def test_save_refuses_state_load_would_refuse(tmp_path):
    model = make_pipeline(StandardScaler(), SVC()).fit(X, Y)
    model[1]._n_support = model[1]._n_support[::-1] * 2
    with pytest.raises(ModelFormatError, match=r"steps\[1\]\[1\] \(SVC\).*_n_support"):
        save(model, tmp_path / "model.skm")
    assert not list(tmp_path.iterdir())


def test_save_refuses_unknown_estimator(tmp_path):
    class Custom(StandardScaler):
        pass

    with pytest.raises(ModelFormatError, match=r"steps\[0\]\[1\] is a .*Custom"):
        save(make_pipeline(Custom(), ReducedSVC()).fit(X, Y), tmp_path / "model.skm")


def test_save_refuses_inconsistent_inner_estimator(tmp_path):
    model = make_pipeline(StandardScaler(), ReducedSVC(n_basis=10, random_state=0)).fit(X, Y)
    model[-1].coef_ = model[-1].coef_[:, :3]
    with pytest.raises(ModelFormatError, match=r"steps\[1\]\[1\] \(ReducedSVC\).*coef_"):
        save(model, tmp_path / "model.skm")


# --- both containers hold the same sparsekernel estimators -----------------------------------

def _save_both(step, tmp_path):
    """``step`` loaded from the native layout and from a pipeline (the skops container)."""
    save(step, tmp_path / "native.skm")
    save(make_pipeline(step), tmp_path / "pipeline.skm")
    return load(tmp_path / "native.skm"), load(tmp_path / "pipeline.skm")[-1]


def test_streamed_lssvm_step_saves_without_its_running_sums(tmp_path):
    # A reduced LSSVR keeps the stream's sums and Nystrom map (private objects the format
    # cannot express) for partial_fit; neither container stores them, and the model in
    # memory keeps them.
    step = LSSVR(n_basis=10, random_state=0).fit(X[:60], X[:60, 0])
    native, inner = _save_both(step, tmp_path)
    assert sorted(vars(inner)) == sorted(vars(native))
    assert not any(name.startswith("_") for name in vars(inner))
    assert_array_equal(inner.predict(X), step.predict(X))
    for loaded in (native, inner):
        with pytest.raises(ValueError, match="loaded from a file"):
            loaded.partial_fit(X[60:], X[60:, 0])
    step.partial_fit(X[60:], X[60:, 0])  # the saved model still continues its stream
    assert step.n_rows_seen_ == len(X)


def test_online_lssvr_step_continues_after_load(tmp_path):
    # Its working-set solver is rebuilt from the public attributes, from either container.
    step = OnlineLSSVR(n_basis=12).fit(X[:60], X[:60, 0])
    native, inner = _save_both(step, tmp_path)
    assert not hasattr(inner, "_solver")
    native.partial_fit(X[60:], X[60:, 0])
    inner.partial_fit(X[60:], X[60:, 0])
    assert_array_equal(inner.basis_, native.basis_)
    assert_array_equal(inner.predict(X), native.predict(X))


def test_transient_parameter_is_neither_written_nor_read(tmp_path):
    pytest.importorskip("distributed")
    from sparsekernel import MapReduceSVC

    model = make_pipeline(StandardScaler(), MapReduceSVC(n_parts=2, n_basis=8,
                                                         random_state=0)).fit(X, Y)
    model[-1].client = "tcp://127.0.0.1:1"
    save(model, tmp_path / "model.skm")
    assert model[-1].client == "tcp://127.0.0.1:1"
    assert load(tmp_path / "model.skm")[-1].client is None

    def point_elsewhere(schema):
        node = next(n for n in _json_nodes(schema) if n.get("__class__") == "MapReduceSVC")
        # A node of its own: skops shares one node among equal values (the Nones).
        node["content"]["content"]["client"] = {**_json_node('"tcp://evil:8786"'), "__id__": 1}

    _rewrite_schema(tmp_path / "model.skm", tmp_path / "edited.skm", point_elsewhere)
    assert load(tmp_path / "edited.skm")[-1].client is None


def _rewrite_schema(src, dst, edit):
    members = read_members(src.read_bytes())
    schema = json.loads(dict(members)["schema.json"])
    edit(schema)
    dst.write_bytes(write_members(_set_member(members, "schema.json",
                                              json.dumps(schema).encode())))


def test_load_refuses_type_outside_allow_list(tmp_path):
    save(MODELS["scaled"][0], tmp_path / "good.skm")

    def edit(schema):
        for _, node in _paths(schema):
            if isinstance(node, dict) and node.get("__class__") == "StandardScaler":
                node["__class__"], node["__module__"] = "KNeighborsClassifier", (
                    "sklearn.neighbors._classification")

    _rewrite_schema(tmp_path / "good.skm", tmp_path / "bad.skm", edit)
    with pytest.raises(ModelFormatError, match="KNeighborsClassifier.*may not hold"):
        load(tmp_path / "bad.skm")


def test_load_refuses_allowed_class_with_another_class_state(tmp_path):
    save(MODELS["scaled"][0], tmp_path / "good.skm")

    def edit(schema):
        for _, node in _paths(schema):
            if isinstance(node, dict) and node.get("__class__") == "StandardScaler":
                node["__class__"] = "MinMaxScaler"

    _rewrite_schema(tmp_path / "good.skm", tmp_path / "bad.skm", edit)
    with pytest.raises(ModelFormatError, match=r"MinMaxScaler\).*'with_mean'"):
        load(tmp_path / "bad.skm")


def test_load_refuses_non_finite_inner_array(tmp_path):
    model = make_pipeline(StandardScaler(), ReducedSVC(n_basis=10, random_state=0)).fit(X, Y)
    save(model, tmp_path / "good.skm")
    members = read_members((tmp_path / "good.skm").read_bytes())
    scale = npy_bytes(model[0].scale_)
    name = next(n for n, d in members if d == scale)
    poisoned = npy_bytes(np.full_like(model[0].scale_, np.nan))
    (tmp_path / "bad.skm").write_bytes(write_members(_set_member(members, name, poisoned)))
    with pytest.raises(ModelFormatError, match=r"scale_ holds NaN"):
        load(tmp_path / "bad.skm")


# --- fuzzing -------------------------------------------------------------------------------

def _set_member(members, name, data):
    return [(n, data if n == name else d) for n, d in members]


def _json_members(members):
    return [n for n, _ in members if n.endswith(".json")]


def replace_npy(rng, blob, members):
    """A crafted array (other dtype, shape, NaN, ...) or hostile bytes in one member."""
    names = [n for n, _ in members if n.endswith(".npy")]
    name = names[int(rng.integers(len(names)))]
    if rng.random() < 0.3:
        return write_members(_set_member(members, name, _hostile_npy(rng)))
    original = np.load(__import__("io").BytesIO(dict(members)[name]), allow_pickle=False)
    data, _, _ = _crafted_npy(rng, original)
    return write_members(_set_member(members, name, data))


def replace_json(rng, blob, members):
    names = _json_members(members)
    name = names[int(rng.integers(len(names)))]
    data = _hostile_json(rng, json.loads(dict(members)[name]))
    return write_members(_set_member(members, name, data))


_POOL = [
    None, True, -1, 0, 1, 2**70, 1e308, "x", "", [], {}, [1, 2], {"__float__": "nan"},
    {"__class__": "system", "__module__": "os", "__loader__": "FunctionNode", "content": {}},
    {"__class__": "FunctionTransformer", "__module__": "sklearn.preprocessing",
     "__loader__": "ObjectNode", "content": {}},
    {"__class__": "ndarray", "__module__": "numpy", "__loader__": "NdArrayNode",
     "type": "numpy", "file": "missing.npy"},
    {"__class__": "str", "__module__": "builtins", "__loader__": "JsonNode", "content": "1e999"},
    {"__class__": "float", "__module__": "builtins", "__loader__": "JsonNode",
     "content": "NaN"},
    "ObjectNode", "FunctionNode", "numpy", "builtins", "sklearn.svm", "SVC",
]


def edit_json(rng, blob, members):
    """Replace or delete one node anywhere in schema.json or metadata.json."""
    names = _json_members(members)
    name = names[int(rng.integers(len(names)))]
    tree = json.loads(dict(members)[name])
    paths = [p for p, _ in _paths(tree) if p]
    path = paths[int(rng.integers(len(paths)))]
    parent = tree
    for step in path[:-1]:
        parent = parent[step]
    if isinstance(parent, dict) and rng.random() < 0.2:
        del parent[path[-1]]
    else:
        parent[path[-1]] = _POOL[int(rng.integers(len(_POOL)))]
    return write_members(_set_member(members, name, json.dumps(tree).encode()))


def swap_npy(rng, blob, members):
    """Two array members trade contents: every header is honest, the model is not."""
    names = [n for n, _ in members if n.endswith(".npy")]
    a, b = rng.choice(len(names), size=2, replace=False)
    data = dict(members)
    swapped = {names[a]: data[names[b]], names[b]: data[names[a]]}
    return write_members([(n, swapped.get(n, d)) for n, d in members])


def restructure(rng, blob, members):
    """Duplicate, drop, rename or add members."""
    i = int(rng.integers(len(members)))
    name, data = members[i]
    choice = int(rng.integers(4))
    if choice == 0:
        return write_members([*members, (name, data)])
    if choice == 1:
        return write_members(members[:i] + members[i + 1:])
    if choice == 2:
        return write_members([*members[:i], (name + ".bak", data), *members[i + 1:]])
    return write_members([*members, ("../../evil.npy", npy_bytes(np.zeros(3)))])


def _json_node(text):
    return {"__class__": "str", "__module__": "builtins", "__loader__": "JsonNode",
            "content": text, "is_json": True}


# Values for one attribute of a scikit-learn object: plain JSON values, arrays built
# without an .npy member, a nested estimator of the wrong kind.
_STATE_POOL = [
    _json_node("-1"), _json_node("0"), _json_node("2147483648"), _json_node("1e999"),
    _json_node("NaN"), _json_node("null"), _json_node("[]"), _json_node('"rbf"'),
    {"__class__": "ndarray", "__module__": "numpy", "__loader__": "ConstructorFromReduceNode",
     "content": {"__class__": "tuple", "__module__": "builtins", "__loader__": "TupleNode",
                 "content": [_json_node("4")]}},
    {"__class__": "ndarray", "__module__": "numpy", "__loader__": "ObjectNode"},
    {"__class__": "StandardScaler", "__module__": "sklearn.preprocessing._data",
     "__loader__": "ObjectNode", "content": {"__class__": "dict", "__module__": "builtins",
                                             "__loader__": "DictNode", "content": {},
                                             "key_types": {"__class__": "list",
                                                           "__module__": "builtins",
                                                           "__loader__": "ListNode",
                                                           "content": []}}},
]


def edit_state(rng, blob, members):
    """Delete, replace or alias one attribute of a scikit-learn object in schema.json."""
    schema = json.loads(dict(members)["schema.json"])
    states = [node["content"]["content"] for _, node in _paths(schema)
              if isinstance(node, dict) and node.get("__loader__") == "ObjectNode"
              and str(node.get("__module__")).startswith("sklearn.")
              and isinstance(node.get("content"), dict) and node["content"].get("content")]
    if not states:
        return edit_json(rng, blob, members)
    state = states[int(rng.integers(len(states)))]
    name = sorted(state)[int(rng.integers(len(state)))]
    choice = rng.random()
    if choice < 0.2:
        del state[name]
    elif choice < 0.5:  # another attribute's value (its array, list or scalar)
        state[name] = state[sorted(state)[int(rng.integers(len(state)))]]
    else:
        state[name] = _STATE_POOL[int(rng.integers(len(_STATE_POOL)))]
    return write_members(_set_member(members, "schema.json", json.dumps(schema).encode()))


def perturb_ints(rng, blob, members):
    """Integer arrays (counts, indices, widths) changed while staying plausible: a count
    moved between entries with the sum kept, an index past the end, int32 extremes, one
    entry fewer."""
    arrays = {n: np.load(io.BytesIO(d), allow_pickle=False) for n, d in members
              if n.endswith(".npy")}
    names = [n for n, a in arrays.items() if a.dtype.kind in "iu" and a.size]
    if not names:
        return replace_npy(rng, blob, members)
    name = names[int(rng.integers(len(names)))]
    a = arrays[name].astype(np.int64).ravel()
    choice = int(rng.integers(4))
    if choice == 0 and a.size >= 2:
        shift = int(rng.choice([1, 10**8]))
        a[0], a[-1] = a[0] + shift, a[-1] - shift
    elif choice == 1:
        a[int(rng.integers(a.size))] = a.max() + int(rng.integers(1, 10**6))
    elif choice == 2:
        a[int(rng.integers(a.size))] = int(rng.choice([2**31 - 1, -2**31]))
    else:
        a = a[:-1]
    dtype = arrays[name].dtype
    fits = a.size == 0 or (np.iinfo(dtype).min <= a.min() and a.max() <= np.iinfo(dtype).max)
    a = a.astype(dtype if fits else np.int64)
    a = a.reshape(arrays[name].shape) if a.size == arrays[name].size else a
    return write_members(_set_member(members, name, npy_bytes(a)))


MUTATIONS = [flip_bits, overwrite_run, truncate, patch_header_field, replace_npy,
             replace_json, edit_json, swap_npy, restructure, edit_state, perturb_ints]


def check_outcome(path, X_in):
    """'error' (ModelFormatError) or 'loaded' (finite outputs); anything else raises."""
    try:
        model = load(path)
    except ModelFormatError:
        return "error"
    for method, out in _outputs(model, X_in).items():
        if out.dtype.kind in "fc":
            assert np.all(np.isfinite(out)), f"a loaded model's {method} is not finite"
    return "loaded"


def run_fuzz(tmp_path, names, n, seed):
    failures, counts = [], {"error": 0, "loaded": 0}
    for name in names:
        model, X_in = MODELS[name]
        good = tmp_path / f"{name}.skm"
        save(model, good)
        blob = good.read_bytes()
        members, rng = read_members(blob), np.random.default_rng(seed)
        for i in range(n):
            mutate = MUTATIONS[i % len(MUTATIONS)]
            path = tmp_path / f"{name}-{i}.skm"
            data = mutate(rng, blob, members)
            path.write_bytes(data)
            try:
                outcome = check_outcome(path, X_in)
                counts[outcome] += 1
                assert data != blob or outcome == "loaded", "the unmutated file is refused"
            except Exception as exc:  # noqa: BLE001 - every other exception is a finding
                failures.append(f"{name} #{i} ({mutate.__name__}): {type(exc).__name__}: "
                                f"{exc}"[:300])
            path.unlink()
    return failures, counts


def test_fuzz_pipeline_files(tmp_path):
    failures, counts = run_fuzz(tmp_path, ["scaled", "frame", "svc", "svc-sparse",
                                           "nystrom-logistic"], n=66, seed=0)
    assert not failures, f"{len(failures)} of {sum(counts.values()) + len(failures)}:\n" + \
        "\n".join(failures)
    assert counts["error"] > counts["loaded"] > 0  # both outcomes are exercised


@pytest.mark.slow
def test_fuzz_pipeline_files_long(tmp_path):
    failures, _ = run_fuzz(tmp_path, list(MODELS), n=600, seed=1)
    assert not failures, "\n".join(failures)


# --- good files, and rewrites that change nothing they mean, must load ------------------------

def _equivalent_files(blob):
    """``(how, bytes)``: the file as written, and rewrites of it with the same meaning."""
    members = read_members(blob)
    schema = json.loads(dict(members)["schema.json"])
    yield "as written", blob
    yield "members in reverse order", write_members(members[::-1])
    yield "members stored uncompressed", write_members(members, compression=zipfile.ZIP_STORED)
    yield "schema.json re-indented", write_members(
        _set_member(members, "schema.json", json.dumps(schema, indent=2).encode()))


@pytest.mark.parametrize("name", list(MODELS))
def test_good_and_equivalent_files_load(name, tmp_path):
    model, X_in = MODELS[name]
    save(model, tmp_path / "good.skm")
    expected = _outputs(model, X_in)
    for how, data in _equivalent_files((tmp_path / "good.skm").read_bytes()):
        (tmp_path / "same.skm").write_bytes(data)
        got = _outputs(load(tmp_path / "same.skm"), X_in)
        assert set(got) == set(expected), how
        for method in expected:
            assert_array_equal(got[method], expected[method], err_msg=f"{how}: {method}")


def test_max_bytes_bounds_the_arrays_inside_npz_members(tmp_path):
    model, X_in = MODELS["svc-sparse"]
    save(model, tmp_path / "model.skm")
    with zipfile.ZipFile(tmp_path / "model.skm") as zf:
        outer = sum(info.file_size for info in zf.infolist())
        inner = 0
        for info in zf.infolist():
            if info.filename.endswith(".npz"):
                with zipfile.ZipFile(io.BytesIO(zf.read(info))) as npz:
                    inner += sum(i.file_size for i in npz.infolist())
    assert inner > 0
    with pytest.raises(ModelFormatError, match=r"\.npz' holds arrays of .* exceeds max_bytes"):
        load(tmp_path / "model.skm", max_bytes=outer + inner - 1)
    loaded = load(tmp_path / "model.skm", max_bytes=outer + inner)
    assert_array_equal(loaded.decision_function(X_in), model.decision_function(X_in))
