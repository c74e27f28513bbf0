"""sparsekernel.io for composite models: pipelines of scikit-learn preprocessing steps and
sparsekernel estimators, calibrated classifiers and compress_svc results (skops container).

Round trips must be exact; classes outside the allow-list are refused at save, naming them;
and corrupted files (the mutation style of test_io_fuzz.py, aimed at the skops members as
well) must end in ModelFormatError or in a model computing finite values on real inputs.
"""

import json
import warnings

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
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
    StandardScaler,
)
from sklearn.svm import SVC

from sparsekernel import LowRankSVC, ReducedSVC
from sparsekernel.io import ModelFormatError, load, save
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
    (make_pipeline(FunctionTransformer(np.tanh), ReducedSVC()), "FunctionTransformer"),
    (make_pipeline(StandardScaler(), LogisticRegression()), "LogisticRegression"),
    (CalibratedClassifierCV(LogisticRegression()), "LogisticRegression"),
])
def test_save_refuses_disallowed_classes(model, culprit, tmp_path):
    model.fit(X, Y)
    with pytest.raises(ModelFormatError, match=f"{culprit}, which model files may not hold"):
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
                node["__class__"], node["__module__"] = "FunctionTransformer", (
                    "sklearn.preprocessing._function_transformer")

    _rewrite_schema(tmp_path / "good.skm", tmp_path / "bad.skm", edit)
    with pytest.raises(ModelFormatError, match="FunctionTransformer.*may not hold"):
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


MUTATIONS = [flip_bits, overwrite_run, truncate, patch_header_field, replace_npy,
             replace_json, edit_json, swap_npy, restructure]


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
            path.write_bytes(mutate(rng, blob, members))
            try:
                counts[check_outcome(path, X_in)] += 1
            except Exception as exc:  # noqa: BLE001 - every other exception is a finding
                failures.append(f"{name} #{i} ({mutate.__name__}): {type(exc).__name__}: "
                                f"{exc}"[:300])
            path.unlink()
    return failures, counts


def test_fuzz_pipeline_files(tmp_path):
    failures, counts = run_fuzz(tmp_path, ["scaled", "frame"], n=100, seed=0)
    assert not failures, f"{len(failures)} of {sum(counts.values()) + len(failures)}:\n" + \
        "\n".join(failures)
    assert counts["error"] > counts["loaded"] > 0  # both outcomes are exercised


@pytest.mark.slow
def test_fuzz_pipeline_files_long(tmp_path):
    failures, _ = run_fuzz(tmp_path, list(MODELS), n=600, seed=1)
    assert not failures, "\n".join(failures)
