"""Crafted composite model files: honest headers, hostile state.

Each kind of file has its own test; the files are loaded in a child process, so that a
crash inside compiled code (libsvm, scipy's sparse kernels) fails that kind's test instead
of the test run. One child loads every file in turn and reports each outcome; after a crash
a new child goes on with the next file. Every file must be refused with ModelFormatError
naming what is wrong.
"""

import io
import json
import re
import subprocess
import sys
import warnings
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    LabelEncoder,
    OneHotEncoder,
    PolynomialFeatures,
    StandardScaler,
)
from sklearn.svm import SVC

from sparsekernel.io import ModelFormatError, save
from sparsekernel.io._nested import _json_nodes as _nodes
from sparsekernel.io._sklearn_checks import check_object

from .test_io_fuzz import npy_bytes, read_members, write_members

X, Y = make_classification(n_samples=80, n_features=4, n_informative=3, n_redundant=0,
                           random_state=0)
X3, Y3 = make_classification(n_samples=90, n_features=4, n_informative=3, n_redundant=0,
                             n_classes=3, random_state=0)

_CHILD = """
import json, sys
from sparsekernel.io import ModelFormatError, load
for kind, path in json.loads(sys.argv[1]):
    try:
        load(path)
    except ModelFormatError as exc:
        outcome = ("refused", str(exc))
    except Exception as exc:
        outcome = ("raised " + type(exc).__name__, str(exc))
    else:
        outcome = ("loaded", "")
    print(json.dumps([kind, *outcome]), flush=True)
"""

#: ``{kind: (build(folder) -> path of a crafted file, pattern its refusal must match)}``
CRAFTED = {}


def crafted(kind, match):
    def register(build):
        CRAFTED[kind] = (build, match)
        return build
    return register


def _load_in_children(paths):
    """``{kind: (outcome, message)}``, each file loaded by a child interpreter."""
    results, pending = {}, list(paths)
    while pending:
        done = subprocess.run([sys.executable, "-c", _CHILD,
                               json.dumps([[k, str(paths[k])] for k in pending])],
                              capture_output=True, text=True, timeout=600)
        for line in done.stdout.splitlines():
            kind, outcome, message = json.loads(line)
            results[kind] = (outcome, message)
        pending = [k for k in pending if k not in results]
        if pending:  # the child died loading the first of them
            results[pending.pop(0)] = (f"crashed (exit status {done.returncode})",
                                       done.stderr[-2000:])
    return results


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    paths = {kind: build(tmp_path_factory.mktemp("crafted"))
             for kind, (build, _) in CRAFTED.items()}
    return _load_in_children(paths)


# --- editing a skops container -------------------------------------------------------------

def _schema(members):
    return json.loads(dict(members)["schema.json"])


def _state(schema, cls):
    """The attribute nodes of the (first) object of class ``cls`` in the schema."""
    node = next(n for n in _nodes(schema)
                if n.get("__class__") == cls and n.get("__loader__") == "ObjectNode")
    return node["content"]["content"]


def _write(path, members, schema=None, replace=None):
    replace = dict(replace or {})
    if schema is not None:
        replace["schema.json"] = json.dumps(schema).encode()
    path.write_bytes(write_members([(n, replace.get(n, d)) for n, d in members]))
    return path


def _saved(model, tmp_path):
    save(model, tmp_path / "good.skm")
    members = read_members((tmp_path / "good.skm").read_bytes())
    return members, _schema(members)


def _set_array(tmp_path, model, cls, attribute, edit):
    """A file whose ``cls.attribute`` array member holds ``edit(original)``."""
    members, schema = _saved(model, tmp_path)
    member = _state(schema, cls)[attribute]["file"]
    original = np.load(io.BytesIO(dict(members)[member]), allow_pickle=False)
    return _write(tmp_path / "bad.skm", members,
                  replace={member: npy_bytes(np.asarray(edit(original)))})


def _svc(sparse=False, n_classes=2, **params):
    data_x, data_y = (X, Y) if n_classes == 2 else (X3, Y3)
    data_x = sp.csr_matrix(data_x) if sparse else data_x
    return make_pipeline(StandardScaler(with_mean=not sparse), SVC(**params)).fit(data_x, data_y)


# --- SVC: what libsvm reads ----------------------------------------------------------------

def _n_support(sparse):
    # Keeps the sum scikit-learn checks; libsvm walks 10**8 support vectors of class 0.
    def build(folder):
        return _set_array(folder, _svc(sparse), "SVC", "_n_support",
                          lambda n: np.array([10**8, n.sum() - 10**8], dtype=np.int32))
    return build


crafted("svc-n-support-dense", r"_n_support.*expected values >= 0")(_n_support(False))
crafted("svc-n-support-csr", r"_n_support.*expected values >= 0")(_n_support(True))


@crafted("svc-empty-intercept", r"_intercept_.*expected \(1,\)")
def _empty_intercept(folder):
    return _set_array(folder, _svc(), "SVC", "_intercept_", lambda a: a[:0])


@crafted("svc-dual-coef-shape", r"_dual_coef_.*shape \(2, \d+\)")
def _dual_coef(folder):
    return _set_array(folder, _svc(n_classes=3), "SVC", "_dual_coef_", lambda a: a[:, :-3])


@crafted("svc-support-out-of-range", r"support_.*training rows")
def _support(folder):
    return _set_array(folder, _svc(), "SVC", "support_", lambda a: a + 10**6)


@crafted("svc-probabilities-without-parameters", r"_probA")
def _probabilities(folder):
    # With probabilities enabled, the sparse libsvm copies a sigmoid's parameters per pair
    # of classes from wherever _probA points.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # SVC's probability, deprecated
        model = _svc(sparse=True, probability=True, random_state=0)
    return _set_array(folder, model, "SVC", "_probA", lambda a: a[:0])


# --- SVC: public state that disagrees with what predict reads ------------------------------

def _set_arrays(folder, model, cls, edits):
    """A file whose ``cls`` array members hold ``edit(original)`` for each attribute."""
    members, schema = _saved(model, folder)
    state, replace = _state(schema, cls), {}
    for attribute, edit in edits.items():
        member = state[attribute]["file"]
        original = np.load(io.BytesIO(dict(members)[member]), allow_pickle=False)
        replace[member] = npy_bytes(np.asarray(edit(original)))
    return _write(folder / "bad.skm", members, replace=replace)


def _set_sparse(folder, model, cls, attribute, edit):
    """A file whose ``cls.attribute`` CSR member (an .npz) holds ``edit(original)``."""
    members, schema = _saved(model, folder)
    member = _state(schema, cls)[attribute]["file"]
    buffer = io.BytesIO()
    sp.save_npz(buffer, sp.csr_matrix(edit(sp.load_npz(io.BytesIO(dict(members)[member])))))
    return _write(folder / "bad.skm", members, replace={member: buffer.getvalue()})


crafted("svc-intercept-disagrees", r"'intercept_' must equal minus _intercept_")(
    lambda folder: _set_arrays(folder, _svc(), "SVC", {"intercept_": lambda a: a + 1.0}))
crafted("svc-intercept-disagrees-3-classes", r"'intercept_' must equal _intercept_")(
    lambda folder: _set_arrays(folder, _svc(n_classes=3), "SVC",
                               {"intercept_": lambda a: a[::-1]}))
crafted("svc-dual-coef-disagrees", r"'dual_coef_' must equal minus _dual_coef_")(
    lambda folder: _set_arrays(folder, _svc(), "SVC", {"dual_coef_": lambda a: 2.0 * a}))
crafted("svc-dual-coef-disagrees-csr", r"'dual_coef_' must be a CSR matrix equal to minus")(
    lambda folder: _set_sparse(folder, _svc(sparse=True), "SVC", "dual_coef_",
                               lambda a: 2.0 * a))
# The naming errors: the per-pair arrays are measured against the classes, so the
# array that was emptied is the one named.
crafted("svc-public-intercept-emptied", r"'intercept_' has shape \(0,\), expected \(1,\)")(
    lambda folder: _set_arrays(folder, _svc(), "SVC", {"intercept_": lambda a: a[:0]}))
crafted("svc-both-intercepts-emptied", r"'intercept_' has shape \(0,\), expected \(1,\)")(
    lambda folder: _set_arrays(folder, _svc(), "SVC", {"intercept_": lambda a: a[:0],
                                                       "_intercept_": lambda a: a[:0]}))


def _svc_param(name, value, **params):
    def build(folder):
        members, schema = _saved(_svc(kernel="poly", **params), folder)
        _state(schema, "SVC")[name] = _int(value)
        return _write(folder / "bad.skm", members, schema)
    return build


# degree=10**9 computed inf/NaN on real rows, finite values on the zero probe row.
crafted("svc-poly-huge-degree", r"'degree' must be an int from 0 to 100, got int 1000000000")(
    _svc_param("degree", 10**9))
crafted("svc-poly-overflows", r"support_vectors_.*non-finite decision values.*coef0=1e\+200")(
    _svc_param("coef0", 1e200, gamma=1.0))


# --- the container holds what the native layout holds ----------------------------------------

def _reduced_pipeline():
    from sparsekernel import ReducedSVC

    return make_pipeline(StandardScaler(), ReducedSVC(n_basis=8, random_state=0)).fit(X, Y)


def _edit_reduced_state(edit):
    def build(folder):
        members, schema = _saved(_reduced_pipeline(), folder)
        node = next(n for n in _nodes(schema) if n.get("__class__") == "ReducedSVC")
        edit(node["content"])
        return _write(folder / "bad.skm", members, schema)
    return build


def _add_key(state, name, value):
    state["content"][name] = value
    state["key_types"]["content"].append(dict(state["key_types"]["content"][0]))


def _drop_key(state, name):
    del state["content"][name]
    state["key_types"]["content"].pop()


crafted("private-state-injected", r"ReducedSVC\) holds '_cache', which is neither a parameter")(
    _edit_reduced_state(lambda state: _add_key(state, "_cache", _int(1))))
crafted("property-shadowed", r"ReducedSVC\) holds 'n_support_', which is neither")(
    _edit_reduced_state(lambda state: _add_key(state, "n_support_", _int(10**9))))
crafted("parameter-missing", r"ReducedSVC\) lacks the parameter\(s\) \['C'\]")(
    _edit_reduced_state(lambda state: _drop_key(state, "C")))


def _extra_member(name):
    def build(folder):
        members, _ = _saved(_reduced_pipeline(), folder)
        path = folder / "bad.skm"
        path.write_bytes(write_members([*members, (name, npy_bytes(np.zeros(3)))]))
        return path
    return build


# Never extracted, but the native layout refuses unlisted members: so does the container.
crafted("unread-member", r"member '123\.npy' is not read by schema\.json")(
    _extra_member("123.npy"))
crafted("escaping-member", r"member '\.\./evil\.npy' is not a plain relative path")(
    _extra_member("../evil.npy"))


# --- arrays not read from the file -----------------------------------------------------------

def _replace_node(folder, cls, attribute, node):
    members, schema = _saved(make_pipeline(StandardScaler(), SVC()).fit(X, Y), folder)
    _state(schema, cls)[attribute] = node
    return _write(folder / "bad.skm", members, schema)


def _int(value):
    return {"__class__": "str", "__module__": "builtins", "__loader__": "JsonNode",
            "content": json.dumps(value), "is_json": True}


def _array_node(loader, content):
    # numpy.ndarray((4,)) is uninitialised memory; only NdArrayNode reads an array's bytes.
    def build(folder):
        node = {"__class__": "ndarray", "__module__": "numpy", "__loader__": loader}
        if content is not None:
            node["content"] = content
        return _replace_node(folder, "StandardScaler", "mean_", node)
    return build


crafted("mean-from-reduce-node", r"numpy\.ndarray.*only with 'NdArrayNode'")(_array_node(
    "ConstructorFromReduceNode", {"__class__": "tuple", "__module__": "builtins",
                                  "__loader__": "TupleNode", "content": [_int(4)]}))
crafted("mean-from-object-node", r"numpy\.ndarray.*only with 'NdArrayNode'")(_array_node(
    "ObjectNode", None))


@crafted("cached-node", r"CachedNode")
def _cached(folder):
    node = {"__class__": "ndarray", "__module__": "numpy", "__loader__": "CachedNode",
            "__id__": 1}
    return _replace_node(folder, "StandardScaler", "scale_", node)


# --- other compiled paths ------------------------------------------------------------------

@crafted("one-hot-width-shrunk", r"_n_features_outs")
def _one_hot(folder):
    # transform builds a CSR matrix narrower than its column indices, then densifies it.
    model = make_pipeline(OneHotEncoder(sparse_output=False), StandardScaler())
    members, schema = _saved(model.fit(np.round(X)), folder)
    outs = _state(schema, "OneHotEncoder")["_n_features_outs"]
    outs["content"] = [_int(1) for _ in outs["content"]]
    return _write(folder / "bad.skm", members, schema)


@crafted("polynomial-width-grown", r"_n_out_full")
def _polynomial(folder):
    # The dense transform allocates _n_out_full columns and fills those it computes.
    members, schema = _saved(make_pipeline(PolynomialFeatures(2), StandardScaler()).fit(X),
                             folder)
    _state(schema, "PolynomialFeatures")["_n_out_full"] = _int(40)
    return _write(folder / "bad.skm", members, schema)


def _npz_format(fmt):
    def build(folder):
        members, _ = _saved(_svc(sparse=True), folder)
        name = next(n for n, _ in members if n.endswith(".npz"))
        with zipfile.ZipFile(io.BytesIO(dict(members)[name])) as inner:
            parts = [(n, inner.read(n)) for n in inner.namelist()]
        parts = [(n, npy_bytes(np.array(fmt)) if n == "format.npy" else d) for n, d in parts]
        return _write(folder / "bad.skm", members, replace={name: write_members(parts)})
    return build


crafted("npz-coo", r"format .*only CSR")(_npz_format(b"coo"))
crafted("npz-bsr", r"format .*only CSR")(_npz_format(b"bsr"))


@pytest.mark.parametrize("kind", list(CRAFTED))
def test_crafted_file_is_refused(kind, outcomes):
    outcome, message = outcomes[kind]
    assert outcome == "refused", f"{kind}: {outcome}: {message}"
    assert re.search(CRAFTED[kind][1], message), f"{kind}: {message}"


# --- the checks themselves, in process -----------------------------------------------------

def test_checks_refuse_unknown_private_attributes():
    model = StandardScaler().fit(X)
    model._injected = np.zeros(3)
    with pytest.raises(ValueError, match="_injected"):
        check_object(model, loading=False)


def test_checks_refuse_a_method_shadowed_by_state(tmp_path):
    model = make_pipeline(StandardScaler(), SVC()).fit(X, Y)
    model[0].transform = [1, 2]
    with pytest.raises(ModelFormatError, match=r"StandardScaler.*'transform'"):
        save(model, tmp_path / "m.skm")


@pytest.mark.parametrize("labels", [np.array([3, 1, 2, 3]), np.array(["b", "a"], dtype=object)],
                         ids=["int", "str"])
def test_label_encoder_check(labels):
    # Allowed, though no model we allow holds one: its check still meets both kinds of state.
    model = LabelEncoder().fit(labels)
    check_object(model, loading=False)
    model.classes_ = model.classes_[::-1]
    with pytest.raises(ValueError, match="'classes_' must be sorted and unique"):
        check_object(model, loading=False)
