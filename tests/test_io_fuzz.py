"""Fuzzing ``sparsekernel.io.load`` with corrupted and crafted model files.

Every mutation must end in :class:`ModelFormatError`, or in a model whose predictions (or
features) on real inputs are finite: never another exception, a crash or a hang. The other
half of the property: every file ``save`` writes, and every rewrite of it that changes
nothing it means, loads and computes what was saved. The seed is fixed, so a failure names
a reproducible case (``model``, mutation index and kind).
"""

import functools
import io
import json
import struct
import warnings
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification

from sparsekernel import LowRankSVC, NystromFeatures, ReducedSVC, ReducedSVR
from sparsekernel.io import ModelFormatError, load, save

X, Y = make_classification(n_samples=60, n_features=4, n_informative=3, n_redundant=0,
                           n_classes=3, random_state=0)
X_SPARSE = sp.csr_matrix(np.where(np.abs(X) > 0.6, X, 0.0))
LABELS = np.array(["ham", "eggs", "spam"])[Y]


def _models():
    """Small fitted models covering dense and CSR bases, str labels, regression and maps."""
    return {
        "dense": ReducedSVC(n_basis=8, random_state=0).fit(X, Y),
        "csr-str": ReducedSVC(n_basis=8, random_state=0).fit(X_SPARSE, LABELS),
        "svr": ReducedSVR(n_basis=8, random_state=0).fit(X, X[:, 0] - X[:, 1]),
        "lowrank": LowRankSVC(n_basis=8, random_state=0).fit(X, Y == 1),
        "nystrom": NystromFeatures(n_basis=8, random_state=0).fit(X_SPARSE),
    }


# --- zip and npy plumbing ------------------------------------------------------------------

def read_members(blob):
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        return [(info.filename, zf.read(info)) for info in zf.infolist()]


def write_members(members, compression=zipfile.ZIP_DEFLATED):
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names are the point of some cases
        with zipfile.ZipFile(buffer, "w", compression) as zf:
            for name, data in members:
                zf.writestr(name, data)
    return buffer.getvalue()


def npy_bytes(array, allow_pickle=False):
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=allow_pickle)
    return buffer.getvalue()


def npy_header(descr, shape, fortran=False, payload=b""):
    """A hand-made version 1.0 .npy member (the header may promise anything)."""
    header = repr({"descr": descr, "fortran_order": fortran, "shape": tuple(shape)})
    header = header.encode("latin1")
    header += b" " * (63 - (len(header) + 10) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + payload


def _metadata(members):
    return json.loads(dict(members)["metadata.json"])


def _set_member(members, name, data):
    return [(n, data if n == name else d) for n, d in members]


def _set_metadata(members, metadata):
    return _set_member(members, "metadata.json", json.dumps(metadata).encode())


def _npy_names(members):
    return [n for n, _ in members if n.endswith(".npy")]


def _load_npy(data):
    return np.load(io.BytesIO(data), allow_pickle=False)


# --- mutations on the raw bytes ------------------------------------------------------------

def flip_bits(rng, blob, members):
    data = bytearray(blob)
    for pos in rng.integers(0, len(data), size=rng.integers(1, 5)):
        data[pos] ^= 1 << int(rng.integers(8))
    return bytes(data)


def overwrite_run(rng, blob, members):
    data = bytearray(blob)
    start = int(rng.integers(len(data)))
    run = rng.integers(0, 256, size=int(rng.integers(1, 17)), dtype=np.uint8).tobytes()
    data[start:start + len(run)] = run
    return bytes(data)


def truncate(rng, blob, members):
    return blob[:int(rng.integers(len(blob)))]


def _central_entries(blob):
    """Offsets of the central-directory file headers."""
    offsets, pos = [], blob.find(b"PK\x01\x02")
    while pos >= 0:
        offsets.append(pos)
        pos = blob.find(b"PK\x01\x02", pos + 4)
    return offsets


def patch_header_field(rng, blob, members):
    """Huge or odd declared sizes, unknown compression methods, the encryption flag."""
    entries = _central_entries(blob)
    if not entries:
        return blob
    data = bytearray(blob)
    pos = int(rng.choice(entries))
    choice = int(rng.integers(5))
    if choice == 0:  # uncompressed size
        struct.pack_into("<I", data, pos + 24, int(rng.choice([2**31, 0xFFFFFFFE, 10**9, 1])))
    elif choice == 1:  # compressed size
        struct.pack_into("<I", data, pos + 20, int(rng.choice([2**31, 0xFFFFFFFE, 3])))
    elif choice == 2:  # compression method: bzip2, lzma, unknown
        struct.pack_into("<H", data, pos + 10, int(rng.choice([12, 14, 99])))
    elif choice == 3:  # encrypted
        data[pos + 8] |= 1
    else:  # local header offset
        struct.pack_into("<I", data, pos + 42, int(rng.integers(0, len(blob))))
    return bytes(data)


# --- mutations of members ------------------------------------------------------------------

def _crafted_npy(rng, original):
    """A crafted replacement for an array member, and the (dtype, shape) it claims."""
    a = np.asarray(original)
    options = [
        lambda: a.T.copy() if a.ndim == 2 else a.reshape(1, -1),
        lambda: np.asarray(a.ravel()[0] if a.size else 0.0),
        lambda: a.astype(np.complex128) if a.dtype.kind in "biuf" else a,
        lambda: a.astype(bool) if a.dtype.kind in "biuf" else a,
        lambda: a.astype(np.float16) if a.dtype.kind in "biuf" else a,
        lambda: a.astype(a.dtype.newbyteorder(">")),
        lambda: a.astype("U3"),
        lambda: np.zeros(a.shape, dtype=[("x", "<f8")]),
        lambda: np.where(np.arange(a.size).reshape(a.shape) == 0, np.nan, a)
        if a.dtype.kind == "f" else a,
        lambda: np.full(a.shape, np.inf) if a.dtype.kind == "f" else a,
        lambda: np.full(a.shape, 2**62, dtype=np.int64) if a.dtype.kind in "iu" else a,
        lambda: -np.ones(a.shape, dtype=a.dtype) if a.dtype.kind in "iu" else a,
        lambda: np.asfortranarray(a) if a.ndim == 2 else a,
        lambda: np.concatenate([a.ravel(), a.ravel()]) if a.size else np.zeros(3),
        lambda: np.empty((0,) + a.shape[1:], dtype=a.dtype),
    ]
    new = options[int(rng.integers(len(options)))]()
    return npy_bytes(new), new.dtype.str, list(new.shape)


def _hostile_npy(rng):
    """Member bytes no honest writer produces: huge headers, pickles, garbage."""
    options = [
        lambda: npy_header("<f8", (10**11,)),
        lambda: npy_header("<f8", (2**62, 2**62), payload=b"\0" * 64),
        lambda: npy_header("<f8", (-5,)),
        lambda: npy_header("<f8", (3,), payload=b"\0" * 7),
        lambda: npy_header("<f8", (1,), payload=b"\0" * 4096),
        lambda: npy_header("|O", (2,), payload=b"\0" * 16),
        lambda: npy_header("(1000000000,)<f8", (1,)),
        lambda: npy_header("<U1000000000", (4,)),
        lambda: npy_bytes(np.array([{"a": 1}, None], dtype=object), allow_pickle=True),
        lambda: b"\x93NUMPY\x03\x00" + b"\xff" * 40,
        lambda: b"not an npy file",
        lambda: b"",
        lambda: rng.integers(0, 256, size=200, dtype=np.uint8).tobytes(),
    ]
    return options[int(rng.integers(len(options)))]()


def replace_npy(rng, blob, members):
    names = _npy_names(members)
    name = names[int(rng.integers(len(names)))]
    if rng.random() < 0.3:
        return write_members(_set_member(members, name, _hostile_npy(rng)))
    data, dtype, shape = _crafted_npy(rng, _load_npy(dict(members)[name]))
    members = _set_member(members, name, data)
    if rng.random() < 0.7:  # keep the index consistent, so deeper checks are reached
        metadata = _metadata(members)
        metadata["arrays"][name[:-4]] = {"dtype": dtype, "shape": shape}
        members = _set_metadata(members, metadata)
    return write_members(members)


def _hostile_json(rng, metadata):
    text = json.dumps(metadata)
    options = [
        lambda: b"[" * 100_000 + b"]" * 100_000,
        lambda: json.dumps({**metadata, "params": {"C": [[[[[[[[1]]]]]]]] * 0}}).encode()
        .replace(b'"params"', b'"x": ' + b"[" * 5000 + b"]" * 5000 + b', "params"', 1),
        lambda: text.replace('"class"', '"class": "ReducedSVR", "class"', 1).encode(),
        lambda: text.replace("{", '{"format": NaN, ', 1).encode(),
        lambda: text.encode() + b" " * int(rng.integers(1, 3)) * 2**20,
        lambda: b"\xff\xfe" + text.encode("utf-16-le"),
        lambda: json.dumps([metadata]).encode(),
        lambda: text.replace('"format_version": 1', '"format_version": ' + "9" * 5000).encode(),
        lambda: text[: int(rng.integers(len(text)))].encode(),
        lambda: b"",
    ]
    return options[int(rng.integers(len(options)))]()


def replace_json(rng, blob, members):
    data = _hostile_json(rng, _metadata(members))
    return write_members(_set_member(members, "metadata.json", data))


def _paths(node, prefix=()):
    """Every (path, value) in a JSON tree."""
    yield prefix, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, (*prefix, i))


def _random_value(rng, metadata):
    keys = list(metadata["arrays"])
    pool = [
        None, True, -1, 0, 1, 2**70, 1e308, -1e308, "x", "", [], {}, [1, 2], "tcp://evil:8786",
        {"__float__": "nan"}, {"__float__": "inf"}, {"__numpy__": "int8", "value": 1000},
        {"__numpy__": "complex128", "value": 1}, {"__numpy__": "(3,)f8", "value": 1},
        {"__tuple__": [1, 2]}, {"__dict__": [[[1], 2]]}, {"__dict__": [[1, 2]]},
        {"__estimator__": "ReducedSVC", "params": {}}, {"__estimator__": "os.system"},
        {"__sparse__": "csr_matrix", "shape": [2, 2]},
        {"__array__": keys[int(rng.integers(len(keys)))] if keys else "x"},
        {"__array__": "missing"}, {"__array__": keys[0] if keys else "x", "as_object": True},
        {"__array__": keys[-1] if keys else "x", "as_scalar": True},
        {"dtype": "|O", "shape": [2]}, {"dtype": "<f8", "shape": [10**12]},
        {"dtype": "<f8", "shape": [-1]}, [10**12], [-3], "<c16", "|b1",
    ]
    return pool[int(rng.integers(len(pool)))]


def edit_metadata(rng, blob, members):
    """Replace or delete one node anywhere in metadata.json."""
    metadata = _metadata(members)
    paths = [p for p, _ in _paths(metadata) if p]
    path = paths[int(rng.integers(len(paths)))]
    parent = metadata
    for step in path[:-1]:
        parent = parent[step]
    if isinstance(parent, dict) and rng.random() < 0.2:
        del parent[path[-1]]
    else:
        parent[path[-1]] = _random_value(rng, metadata)
    return write_members(_set_metadata(members, metadata))


def corrupt_csr(rng, blob, members):
    """Out-of-range or negative column indices, broken indptr, shrunk shapes."""
    names = [n for n in _npy_names(members) if n.endswith(("/indices.npy", "/indptr.npy"))]
    if not names:
        return replace_npy(rng, blob, members)
    name = names[int(rng.integers(len(names)))]
    array = _load_npy(dict(members)[name]).astype(np.int64)
    pos = int(rng.integers(len(array))) if len(array) else 0
    choice = int(rng.integers(6))
    if len(array) and choice < 4:
        array[pos] = [10**9, -1, 2**62, array.max() + 1][choice]
    elif len(array) and choice == 4:
        array = array[::-1].copy()
    else:
        metadata = _metadata(members)
        for _, node in _paths(metadata):
            if isinstance(node, dict) and "__sparse__" in node:
                node["shape"] = [node["shape"][0], max(node["shape"][1] - 1, 0)]
        return write_members(_set_metadata(members, metadata))
    members = _set_member(members, name, npy_bytes(array))
    metadata = _metadata(members)
    metadata["arrays"][name[:-4]] = {"dtype": array.dtype.str, "shape": list(array.shape)}
    return write_members(_set_metadata(members, metadata))


def restructure(rng, blob, members):
    """Duplicate, drop, rename or add members."""
    i = int(rng.integers(len(members)))
    name, data = members[i]
    choice = int(rng.integers(5))
    if choice == 0:
        return write_members([*members, (name, data)])
    if choice == 1:
        other = json.dumps({**_metadata(members), "class": "SmoothSVC"}).encode()
        return write_members([*members, ("metadata.json", other)])
    if choice == 2:
        return write_members(members[:i] + members[i + 1:])
    if choice == 3:
        return write_members([*members[:i], (name + ".bak", data), *members[i + 1:]])
    return write_members([*members, ("../../evil.npy", npy_bytes(np.zeros(3)))])


MUTATIONS = [flip_bits, overwrite_run, truncate, patch_header_field, replace_npy,
             replace_json, edit_metadata, corrupt_csr, restructure]


def mutated_files(blob, n, seed):
    """Yield ``(index, kind, bytes)`` for ``n`` mutations of a model file, reproducibly."""
    members = read_members(blob)
    rng = np.random.default_rng(seed)
    for i in range(n):
        mutate = MUTATIONS[i % len(MUTATIONS)]
        yield i, mutate.__name__, mutate(rng, blob, members)


# --- the check -----------------------------------------------------------------------------

def model_outputs(model):
    """What the model computes on real inputs (dense and CSR)."""
    outputs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for data in (X, X_SPARSE):
            for method in ("decision_function", "predict", "transform"):
                if hasattr(model, method):
                    outputs.append(np.asarray(getattr(model, method)(data)))
    return outputs


def check_outcome(path):
    """'error' (ModelFormatError) or 'loaded' (finite outputs); anything else raises."""
    try:
        model = load(path)
    except ModelFormatError:
        return "error"
    for out in model_outputs(model):
        if out.dtype.kind in "fc":
            assert np.all(np.isfinite(out)), "a loaded model computes non-finite values"
    return "loaded"


def run_fuzz(tmp_path, n, seed):
    failures, counts = [], {"error": 0, "loaded": 0}
    for name, model in _models().items():
        good = tmp_path / f"{name}.skm"
        save(model, good)
        for i, kind, blob in mutated_files(good.read_bytes(), n, seed):
            path = tmp_path / f"{name}-{i}.skm"
            path.write_bytes(blob)
            try:
                outcome = check_outcome(path)
                counts[outcome] += 1
                assert blob != good.read_bytes() or outcome == "loaded", \
                    "the unmutated file is refused"
            except Exception as exc:  # noqa: BLE001 - every other exception is a finding
                failures.append(f"{name} #{i} ({kind}): {type(exc).__name__}: {exc}"[:300])
            path.unlink()
    return failures, counts


def test_fuzz_model_files(tmp_path):
    failures, counts = run_fuzz(tmp_path, n=70, seed=0)
    assert not failures, f"{len(failures)} of {sum(counts.values()) + len(failures)}:\n" + \
        "\n".join(failures)
    assert counts["error"] > counts["loaded"] > 0  # both outcomes are exercised


@pytest.mark.slow
def test_fuzz_model_files_long(tmp_path):
    failures, _ = run_fuzz(tmp_path, n=1500, seed=1)
    assert not failures, "\n".join(failures)


def _equivalent_files(blob):
    """``(how, bytes)``: the file as written, and rewrites of it with the same meaning."""
    members = read_members(blob)
    metadata = _metadata(members)
    yield "as written", blob
    yield "members in reverse order", write_members(members[::-1])
    yield "members stored uncompressed", write_members(members, compression=zipfile.ZIP_STORED)
    yield "metadata.json re-indented and sorted", write_members(_set_member(
        members, "metadata.json", json.dumps(metadata, indent=4, sort_keys=True).encode()))


@pytest.mark.parametrize("name", list(_models()))
def test_good_and_equivalent_files_load(name, tmp_path):
    model = _models()[name]
    save(model, tmp_path / "good.skm")
    expected = model_outputs(model)
    for how, blob in _equivalent_files((tmp_path / "good.skm").read_bytes()):
        (tmp_path / "same.skm").write_bytes(blob)
        got = model_outputs(load(tmp_path / "same.skm"))
        assert len(got) == len(expected) > 0, how
        for a, b in zip(got, expected, strict=True):
            np.testing.assert_array_equal(a, b, err_msg=how)


# --- .npy headers that break Python's tokenizer ------------------------------------------

def npy_text_header(text, payload=b""):
    """A version 1.0 .npy member whose header is ``text`` verbatim (padded as numpy pads)."""
    header = text.encode("latin1")
    header += b" " * (63 - (len(header) + 10) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + payload


def _split_npy(data):
    """``(header text without its padding, payload)`` of a version 1.0 .npy member."""
    assert data[:8] == b"\x93NUMPY\x01\x00"
    length = struct.unpack("<H", data[8:10])[0]
    return data[10:10 + length].decode("latin1").rstrip(), data[10 + length:]


# Each leaves a bracket, a string or a line open, or is no Python 3 literal: numpy's parser
# falls back to the tokenizer on such headers, which raises tokenize.TokenError.
_BREAKERS = ("(", "[", "{", "'", '"', '"""', "\\", "#", "0L", "\x00", "\n\t(", ",(")


def break_header(rng, text):
    """``text`` with a breaker inserted or written over one character, or cut short."""
    pos = int(rng.integers(1, len(text)))
    choice = int(rng.integers(3))
    if choice == 0:
        return text[:pos]
    breaker = _BREAKERS[int(rng.integers(len(_BREAKERS)))]
    return text[:pos] + breaker + text[pos + (choice == 2):]


def _inner_npy_names(data):
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return [(n, zf.read(n)) for n in zf.namelist()]


def broken_header_files(blob, n, seed):
    """``(member, header, bytes)``: ``n`` copies of a model file, each with one array
    member's header broken (members of a sparse matrix's ``.npz`` too), its size kept
    consistent."""
    members = read_members(blob)
    arrays = [name for name, _ in members if name.endswith((".npy", ".npz"))]
    rng = np.random.default_rng(seed)
    for _ in range(n):
        name = arrays[int(rng.integers(len(arrays)))]
        data = dict(members)[name]
        if name.endswith(".npz"):
            inner = _inner_npy_names(data)
            i = int(rng.integers(len(inner)))
            text, payload = _split_npy(inner[i][1])
            broken = break_header(rng, text)
            inner[i] = (inner[i][0], npy_text_header(broken, payload))
            yield f"{name}/{inner[i][0]}", broken, write_members(_set_member(
                members, name, write_members(inner)))
            continue
        text, payload = _split_npy(data)
        broken = break_header(rng, text)
        yield name, broken, write_members(_set_member(members, name,
                                                      npy_text_header(broken, payload)))


@functools.cache
def _header_models():
    """The fuzzed models, and a composite one with a CSR matrix (an .npz member)."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MaxAbsScaler
    from sklearn.svm import SVC

    return {**_models(), "pipeline-svc-csr": make_pipeline(MaxAbsScaler(), SVC()).fit(
        X_SPARSE, Y)}


@pytest.mark.parametrize("name", [*_models(), "pipeline-svc-csr"])
def test_broken_npy_headers_are_model_format_errors(name, tmp_path):
    save(_header_models()[name], tmp_path / "good.skm")
    failures = []
    for i, (member, header, blob) in enumerate(
            broken_header_files((tmp_path / "good.skm").read_bytes(), n=60, seed=0)):
        path = tmp_path / f"bad-{i}.skm"
        path.write_bytes(blob)
        try:
            load(path)
        except ModelFormatError as exc:
            if "header" not in str(exc) and "magic" not in str(exc):
                failures.append(f"#{i} {member} {header!r}: refused, but not for its "
                                f"header: {exc}"[:300])
        except Exception as exc:  # noqa: BLE001 - anything else is a finding
            failures.append(f"#{i} {member} {header!r}: {type(exc).__name__}: {exc}"[:300])
        else:
            failures.append(f"#{i} {member} {header!r}: loaded")
        path.unlink()
    assert not failures, "\n".join(failures)


def test_issue_header_names_the_member(tmp_path, capsys):
    # A 3-class intercept_ whose shape (3,) was edited to (3,(: numpy's parser let
    # tokenize.TokenError escape, and `sparsekernel predict` printed a traceback.
    from sparsekernel.cli import main

    model = _header_models()["dense"]
    save(model, tmp_path / "good.skm")
    members = read_members((tmp_path / "good.skm").read_bytes())
    text, payload = _split_npy(dict(members)["attributes/intercept_.npy"])
    assert "(3,)" in text
    bad = npy_text_header(text.replace("(3,)", "(3,("), payload)
    (tmp_path / "bad.skm").write_bytes(write_members(
        _set_member(members, "attributes/intercept_.npy", bad)))
    with pytest.raises(ModelFormatError, match=r"'attributes/intercept_\.npy'.*header"):
        load(tmp_path / "bad.skm")
    data = tmp_path / "test.svm"
    data.write_text("".join(f"{label} " + " ".join(f"{j + 1}:{v:.3f}" for j, v in
                                                   enumerate(row)) + "\n"
                            for label, row in zip(Y[:5], X[:5], strict=True)))
    capsys.readouterr()
    status = main(["predict", str(data), str(tmp_path / "bad.skm"), str(tmp_path / "out.txt")])
    err = capsys.readouterr().err
    assert status != 0 and not (tmp_path / "out.txt").exists()
    assert err.startswith("sparsekernel: error: ") and "Traceback" not in err, err
    assert "attributes/intercept_.npy" in err, err
