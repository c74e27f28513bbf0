"""ONNX export: onnxruntime latency and file size against ``predict`` and scikit-learn's SVC.

Protocol. ijcnn1 and Fashion-MNIST (the suite's train / test files, ``_suite_data.load``:
ijcnn1 as LIBSVM scales it, Fashion-MNIST's pixels divided by 255, no other preprocessing),
and optionally a synthetic checkerboard (``make_checkerboard``, 10 % flipped training labels,
a clean test board; it needs no data files). On each set:

* ``LowRankSVC(random_state=0)`` with every other parameter at its default (RBF kernel,
  gamma = 'scale', C = 1, ``n_basis='auto'``) is fitted on all training rows and exported
  with ``sparsekernel.io.to_onnx(model, X[:1].astype(np.float32))`` (a float32 graph), and
  with a float64 sample (a float64 graph);
* scikit-learn's ``SVC()`` (RBF, gamma = 'scale', C = 1) is fitted on all training rows, or
  on a seeded random subsample of ``--svc-max-rows`` of them (default: 10,000 rows on
  Fashion-MNIST, whose 60,000-row fit takes very long; all rows elsewhere), and exported
  with skl2onnx for reference.

Each ONNX graph runs in an onnxruntime ``InferenceSession`` (CPUExecutionProvider,
``intra_op_num_threads`` = ``--threads``, default the machine's cores; graph optimizations at
their default), asked for the ``label`` output. Latency is the median wall time of a call
predicting 1 row (cycling through 100 different test rows, up to ``--repeats-one`` calls)
and 1,000 rows (cycling through up to 5 blocks of test rows, up to ``--repeats-batch``
calls), after 3 warm-up calls, with the garbage collector off during the timed calls (one
collection before them); each runtime's calls run as one block (no interleaving), with a
short pause between blocks, and a block stops early once it has run ``--max-seconds`` (at
least 3 calls). The runtimes:
onnxruntime on our float32 and float64 graphs (float32 / float64 rows), our
``model.predict`` on float64 rows (the data's precision; NumPy with its BLAS threads),
``SVC.predict`` (LIBSVM, one thread) and onnxruntime on SVC's graph (float32 rows).

On the whole test set: the test error of every runtime, the agreement (fraction of equal
labels) of onnxruntime's labels with the ``predict`` of the model it exports, and the largest
difference between its scores and ``decision_function``. File sizes: the ONNX files
(``len(onx.SerializeToString())``, and that of the float32 graph deflated), the file
``sparsekernel.io.save`` writes (a deflated zip; for a bare estimator the native format of
.npy arrays and JSON, a composite model would be a skops container), ``skops.io.dumps`` of
our model (deflated, as ``save`` deflates its skops containers) and ``pickle.dumps``, SVC's
pickle and SVC's ONNX file. The ONNX graph folds the whitening into the output weights
(m x k), where the model file keeps the m x m whitening and the weights separately.
m is the model's basis size (``n_support_``, ``basis_.shape[0]``), against SVC's number
of support vectors.

Run: ``python benchmarks/bench_onnx.py`` (minutes, dominated by the Fashion-MNIST fits and
SVC's predictions; run it on a quiet machine), or ``--quick`` (1,000 training and 1,000 test
rows per set, few calls: a smoke run, not a measurement). Writes
benchmarks/results/onnx/onnx{,_quick}.json and .md (``--out`` for another folder).
"""

from __future__ import annotations

import argparse
import gc
import os
import pickle
import statistics
import sys
import tempfile
import time
import warnings
import zipfile
import zlib
from pathlib import Path

import numpy as np
from sklearn.svm import SVC

from _harness import RESULTS, load_note, timed, write_results
from _suite_data import load as load_suite
from sparsekernel import LowRankSVC
from sparsekernel.datasets import find_shared_data, make_checkerboard

DATASETS = ("ijcnn1", "fashion_mnist", "checkerboard")
DEFAULT_DATASETS = ("ijcnn1", "fashion_mnist")
#: SVC's training rows when --svc-max-rows is not given (absent: all rows).
SVC_MAX_ROWS = {"fashion_mnist": 10_000}
QUICK_ROWS = 1000
BATCH = 1000
ONE_ROW_INPUTS = 100
BATCH_BLOCKS = 5
WARMUP = 3
PAUSE_S = 0.5  # between latency blocks (0 with --quick)
PREDICT_CHUNK = 2000  # rows per call on the whole test set (bounds the graph's m-wide buffers)

OURS_ORT32 = "LowRankSVC, onnxruntime float32"
OURS_ORT64 = "LowRankSVC, onnxruntime float64"
OURS_PREDICT = "LowRankSVC.predict"
SVC_PREDICT = "SVC.predict"
SVC_ORT32 = "SVC, onnxruntime float32 (skl2onnx)"


# --- data ----------------------------------------------------------------------------------


def data_available(name):
    return name == "checkerboard" or find_shared_data(name) is not None


def load(name, quick):
    """``(X, y, Xt, yt)``, float64 and C-contiguous; seeded random subsets with ``quick``."""
    if name == "checkerboard":
        n_train, n_test = (QUICK_ROWS, QUICK_ROWS) if quick else (20_000, 10_000)
        X, y = make_checkerboard(n_train, noise=0.1, random_state=0)
        Xt, yt = make_checkerboard(n_test, random_state=1)
    else:
        X, y, Xt, yt = load_suite(name)
        if quick:  # random rows: some files are ordered by label
            rng = np.random.RandomState(0)
            a = rng.choice(len(y), min(QUICK_ROWS, len(y)), replace=False)
            t = rng.choice(len(yt), min(QUICK_ROWS, len(yt)), replace=False)
            X, y, Xt, yt = X[a], y[a], Xt[t], yt[t]
    X, Xt = (np.ascontiguousarray(A.toarray() if hasattr(A, "toarray") else A,
                                  dtype=np.float64) for A in (X, Xt))
    return X, np.asarray(y), Xt, np.asarray(yt)


def svc_rows(name, n, max_rows):
    """Row indices SVC is fitted on: all, or a seeded random sorted subsample."""
    limit = SVC_MAX_ROWS.get(name) if max_rows is None else (max_rows or None)
    if limit is None or n <= limit:
        return np.arange(n)
    return np.sort(np.random.RandomState(0).choice(n, limit, replace=False))


# --- onnxruntime ---------------------------------------------------------------------------


def session(onx, threads):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(onx.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])


def ort_runner(sess, output="label"):
    """``fn(x) -> output`` of a session with one input."""
    name = sess.get_inputs()[0].name
    return lambda x: sess.run([output], {name: x})[0]


def chunked(fn, X):
    return np.concatenate([np.asarray(fn(X[i:i + PREDICT_CHUNK]))
                           for i in range(0, len(X), PREDICT_CHUNK)])


def export_svc(svc, sample):
    import skl2onnx

    with warnings.catch_warnings():  # skl2onnx reads SVC's deprecated probA_ / probB_
        warnings.simplefilter("ignore", FutureWarning)
        return skl2onnx.to_onnx(svc, sample, options={SVC: {"zipmap": False}})


def compute_precision(onx):
    """'float64' when the graph holds float64 constants (it computes in float64, as a model
    under the precision policy's float64 does, whatever its input), else 'float32'."""
    from onnx import TensorProto

    wide = any(t.data_type == TensorProto.DOUBLE for t in onx.graph.initializer)
    return "float64" if wide else "float32"


# --- timing --------------------------------------------------------------------------------


def latency(fn, inputs, repeats, max_seconds):
    """Median, 10th and 90th percentile milliseconds of ``fn(x)`` over calls cycling through
    ``inputs``, after warm-up calls; stops after ``max_seconds`` (at least 3 calls)."""
    for x in inputs[:WARMUP]:
        fn(x)
    times = []
    gc.disable()
    try:
        start = time.perf_counter()
        for i in range(repeats):
            x = inputs[i % len(inputs)]
            t0 = time.perf_counter()
            fn(x)
            t1 = time.perf_counter()
            times.append(t1 - t0)
            if t1 - start > max_seconds and len(times) >= 3:
                break
    finally:
        gc.enable()
    ms = np.array(times) * 1e3
    return {"median_ms": float(statistics.median(ms)), "p10_ms": float(np.percentile(ms, 10)),
            "p90_ms": float(np.percentile(ms, 90)), "calls": len(times)}


# --- sizes ---------------------------------------------------------------------------------


def saved_file(model):
    """Bytes of the file ``sparsekernel.io.save`` writes, and what it is."""
    from sparsekernel.io import save

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.skm"
        save(model, path)
        size = path.stat().st_size
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
    kind = "skops container" if "schema.json" in names else "native (.npy + JSON zip)"
    return size, kind


def skops_bytes(model):
    """``skops.io.dumps`` deflated, as ``save`` deflates its skops containers (None without
    skops)."""
    try:
        import skops.io as sio
    except ImportError:
        return None
    return len(sio.dumps(model, compression=zipfile.ZIP_DEFLATED))


def deflated(data):
    """Bytes of ``data`` deflated (zlib level 6, as zipfile's ZIP_DEFLATED)."""
    return len(zlib.compress(data, 6))


def kib(n):
    return None if n is None else n / 1024


# --- one data set --------------------------------------------------------------------------


def run_dataset(name, args):
    import onnxruntime as ort  # noqa: F401  (fails early when absent)

    from sparsekernel.io import register_onnx_converters, to_onnx

    register_onnx_converters()  # once, outside the timed exports

    X, y, Xt, yt = load(name, args.quick)
    rows_svc = svc_rows(name, len(y), args.svc_max_rows)
    print(f"{name}: {X.shape[0]} x {X.shape[1]} training rows, {len(yt)} test rows; SVC on "
          f"{len(rows_svc)} rows", file=sys.stderr, flush=True)

    model = LowRankSVC(random_state=0)
    _, fit_s = timed(model.fit, X, y)
    svc = SVC()
    _, svc_fit_s = timed(svc.fit, X[rows_svc], y[rows_svc])

    X32, Xt32 = X[:1].astype(np.float32), np.ascontiguousarray(Xt, dtype=np.float32)
    onx32, export32_s = timed(to_onnx, model, X32)
    onx64, export64_s = timed(to_onnx, model, X[:1])
    try:
        svc_onx, svc_export_s = timed(export_svc, svc, X32)
        svc_onx_error = None
    except Exception as exc:  # record, keep the rest of the run
        svc_onx, svc_export_s, svc_onx_error = None, None, f"{type(exc).__name__}: {exc}"
    sess32, session32_s = timed(session, onx32, args.threads)
    sess64, session64_s = timed(session, onx64, args.threads)
    svc_sess = session(svc_onx, args.threads) if svc_onx is not None else None

    # name: (one-call fn, test rows it reads, reference labels' runtime, score output fn)
    runtimes = {
        OURS_ORT32: (ort_runner(sess32), Xt32, OURS_PREDICT, ort_runner(sess32, "probabilities")),
        OURS_ORT64: (ort_runner(sess64), Xt, OURS_PREDICT, ort_runner(sess64, "probabilities")),
        OURS_PREDICT: (model.predict, Xt, None, None),
        SVC_PREDICT: (svc.predict, Xt, None, None),
    }
    if svc_sess is not None:
        runtimes[SVC_ORT32] = (ort_runner(svc_sess), Xt32, SVC_PREDICT, None)

    labels, test_s = {}, {}
    for label, (fn, rows, _, _) in runtimes.items():
        labels[label], test_s[label] = timed(chunked, fn, rows)
    scores = chunked(model.decision_function, Xt).reshape(len(yt), -1)

    one = [slice(i, i + 1) for i in range(min(ONE_ROW_INPUTS, len(yt)))]
    batch = [slice(i, i + BATCH) for i in range(0, len(yt) - BATCH + 1, BATCH)][:BATCH_BLOCKS]
    if not batch:  # fewer test rows than a batch: the whole test set
        batch = [slice(0, len(yt))]
    n_batch = batch[0].stop - batch[0].start

    sizes = {"dataset": name, "m": int(model.n_support_),
             "svc_support_vectors": int(svc.n_support_.sum()),
             "onnx32_kib": kib(len(onx32.SerializeToString())),
             "onnx32_deflated_kib": kib(deflated(onx32.SerializeToString())),
             "onnx64_kib": kib(len(onx64.SerializeToString())),
             "onnx32_computes_in": compute_precision(onx32)}
    skm, sizes["skm_format"] = saved_file(model)
    sizes["skm_kib"] = kib(skm)
    sizes["skops_kib"] = kib(skops_bytes(model))
    sizes["pickle_kib"] = kib(len(pickle.dumps(model)))
    sizes["svc_pickle_kib"] = kib(len(pickle.dumps(svc)))
    sizes["svc_onnx_kib"] = (kib(len(svc_onx.SerializeToString())) if svc_onx is not None
                             else None)
    sizes["onnx32_vs_skm"] = sizes["onnx32_kib"] / sizes["skm_kib"]

    files = {OURS_ORT32: ("ONNX float32", sizes["onnx32_kib"]),
             OURS_ORT64: ("ONNX float64", sizes["onnx64_kib"]),
             OURS_PREDICT: (f".skm ({sizes['skm_format']})", sizes["skm_kib"]),
             SVC_PREDICT: ("pickle", sizes["svc_pickle_kib"]),
             SVC_ORT32: ("ONNX float32", sizes["svc_onnx_kib"])}
    out = []
    gc.collect()  # once: a collection takes a noticeable time with onnx and skl2onnx loaded
    for label, (fn, rows, reference, score_fn) in runtimes.items():
        time.sleep(args.pause)
        lat1 = latency(fn, [rows[s] for s in one], args.repeats_one, args.max_seconds)
        time.sleep(args.pause)
        latb = latency(fn, [rows[s] for s in batch], args.repeats_batch, args.max_seconds)
        pred = labels[label]
        svc_model = label.startswith("SVC")
        row = {"dataset": name, "method": label,
               "n_train": int(len(rows_svc) if svc_model else len(y)),
               "model_size": (f"{sizes['svc_support_vectors']} SVs" if svc_model
                              else f"m = {sizes['m']}"),
               "one_row_ms": lat1["median_ms"], "one_row": lat1,
               "batch_rows": n_batch, "batch_ms": latb["median_ms"], "batch": latb,
               "batch_us_per_row": 1e3 * latb["median_ms"] / n_batch,
               "test_error_pct": float(100.0 * np.mean(pred != yt)),
               "test_set_s": test_s[label],
               "file": files[label][0], "file_kib": files[label][1]}
        if reference is not None:
            row["agreement_pct"] = float(100.0 * np.mean(pred == labels[reference]))
        if score_fn is not None:
            got = chunked(score_fn, rows).reshape(scores.shape)
            row["max_score_diff"] = float(np.max(np.abs(got - scores)))
        out.append(row)
    svc_row = next(r for r in out if r["method"] == SVC_PREDICT)
    for row in out:
        row["one_row_speedup_vs_svc"] = svc_row["one_row_ms"] / row["one_row_ms"]
        row["batch_speedup_vs_svc"] = svc_row["batch_ms"] / row["batch_ms"]
    setup = {"dataset": name, "n_train": int(len(y)), "n_test": int(len(yt)),
             "n_features": int(X.shape[1]), "svc_n_train": int(len(rows_svc)),
             "fit_s": fit_s, "svc_fit_s": svc_fit_s, "export32_s": export32_s,
             "export64_s": export64_s, "svc_export_s": svc_export_s,
             "svc_export_error": svc_onx_error, "session32_s": session32_s,
             "session64_s": session64_s, "gamma": float(model.gamma_)
             if np.isscalar(model.gamma_) else None}
    return out, sizes, setup


# --- output --------------------------------------------------------------------------------


def versions():
    out = {}
    for mod in ("onnx", "onnxruntime", "skl2onnx", "skops", "threadpoolctl"):
        try:
            out[mod] = __import__(mod).__version__
        except ImportError:
            out[mod] = None
    return out


def blas_threads():
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    return [{"api": p.get("internal_api"), "threads": p.get("num_threads")}
            for p in threadpool_info()]


def table(rows, columns):
    """A Markdown table, formatted as _harness.write_results formats its own."""
    lines = ["| " + " | ".join(c for c, _ in columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        cells = []
        for _, key in columns:
            v = row.get(key, "")
            cells.append(f"{v:.4g}" if isinstance(v, float) else "" if v is None else str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help=f"smoke run: {QUICK_ROWS} training and test rows per set, few calls")
    ap.add_argument("--datasets", nargs="+", default=None, choices=DATASETS,
                    help="default: ijcnn1 fashion_mnist (checkerboard: synthetic, no files)")
    ap.add_argument("--svc-max-rows", type=int, default=None,
                    help="SVC's training rows (a seeded random subsample; 0: all rows; "
                         "default 10000 on fashion_mnist, all rows elsewhere)")
    ap.add_argument("--threads", type=int, default=os.cpu_count(),
                    help="onnxruntime intra_op_num_threads (default: the machine's cores)")
    ap.add_argument("--repeats-one", type=int, default=None,
                    help="most 1-row calls per runtime (default 2000; --quick 20)")
    ap.add_argument("--repeats-batch", type=int, default=None,
                    help="most 1,000-row calls per runtime (default 50; --quick 3)")
    ap.add_argument("--max-seconds", type=float, default=None,
                    help="a latency block stops after this long, at least 3 calls "
                         "(default 30; --quick 1)")
    ap.add_argument("--out", default=None, help="results folder (default benchmarks/results/onnx)")
    args = ap.parse_args(argv)
    args.repeats_one = args.repeats_one or (20 if args.quick else 2000)
    args.repeats_batch = args.repeats_batch or (3 if args.quick else 50)
    args.max_seconds = args.max_seconds or (1.0 if args.quick else 30.0)
    args.pause = 0.0 if args.quick else PAUSE_S

    note = load_note()
    rows, sizes, setups, skipped = [], [], [], []
    for name in args.datasets or DEFAULT_DATASETS:
        if not data_available(name):
            print(f"{name}: data not found (set SPARSEKERNEL_DATA), skipped", file=sys.stderr)
            skipped.append(name)
            continue
        r, s, setup = run_dataset(name, args)
        rows += r
        sizes.append(s)
        setups.append(setup)

    wide = [s["dataset"] for s in sizes if s["onnx32_computes_in"] == "float64"]
    wide_note = ([f"{', '.join(wide)}: the float32 graph computes in float64 (a model fitted "
                  "on float64 rows keeps float64 kernels under the precision policy, and its "
                  "graph does too), casting its float32 input and output"] if wide else [])
    svc_notes = [f"{s['dataset']}: SVC fitted on a seeded random subsample of "
                 f"{s['svc_n_train']:,} of the {s['n_train']:,} training rows (our model on "
                 "all of them)" for s in setups if s["svc_n_train"] < s["n_train"]]
    payload = {
        "title": "ONNX export: onnxruntime latency and file size against predict and SVC"
                 + (" [quick: a smoke run, not a measurement]" if args.quick else ""),
        "notes": [note,
                  f"onnxruntime CPUExecutionProvider, intra_op_num_threads = {args.threads}, "
                  "inter_op_num_threads = 1; our predict uses NumPy's BLAS threads "
                  f"({blas_threads()}); SVC.predict (LIBSVM) one thread",
                  "LowRankSVC(random_state=0) and SVC() at their defaults (RBF, "
                  "gamma='scale', C=1); no preprocessing beyond _suite_data's",
                  *svc_notes,
                  *wide_note,
                  f"latency: median of up to {args.repeats_one} 1-row calls (100 test rows "
                  f"in turn) and up to {args.repeats_batch} calls on {BATCH:,}-row blocks, "
                  f"after {WARMUP} warm-up calls, each block stopped after "
                  f"{args.max_seconds:g} s (calls: in the JSON); onnxruntime asked for "
                  "'label' only; predict runs on float64 rows, the float32 graphs on float32 "
                  "rows",
                  "agreement: % of test labels equal to those of the predict of the model "
                  "exported; max score diff: largest |ONNX score - decision_function| on "
                  "the test set",
                  "speedup: SVC.predict's median time / this runtime's",
                  "file sizes: ONNX as serialized (uncompressed; 'deflated': zlib level 6 of "
                  "it); save(): the .skm file sparsekernel.io.save writes (a zip, deflated; "
                  "for a bare estimator the native format, not a skops container); skops: "
                  "skops.io.dumps of our model, deflated; pickle: pickle.dumps",
                  *(f"{name}: data not found, skipped" for name in skipped)],
        "protocol": {"quick": args.quick, "threads": args.threads,
                     "repeats_one": args.repeats_one, "repeats_batch": args.repeats_batch,
                     "max_seconds": args.max_seconds, "batch": BATCH,
                     "svc_max_rows": args.svc_max_rows, "versions": versions(),
                     "blas": blas_threads()},
        "setup": setups,
        "rows": rows,
        "sizes": sizes,
    }
    cols = [("data", "dataset"), ("runtime", "method"), ("train rows", "n_train"),
            ("model", "model_size"), ("1 row ms", "one_row_ms"),
            (f"{BATCH:,} rows ms", "batch_ms"), ("us / row", "batch_us_per_row"),
            ("1 row x SVC", "one_row_speedup_vs_svc"), (f"{BATCH:,} rows x SVC",
                                                        "batch_speedup_vs_svc"),
            ("test error %", "test_error_pct"), ("agreement %", "agreement_pct"),
            ("max score diff", "max_score_diff"), ("file", "file"), ("KiB", "file_kib")]
    stem = "onnx_quick" if args.quick else "onnx"
    out = RESULTS if args.out is None else Path(args.out)
    path = write_results(stem, payload, cols, out)
    size_cols = [("data", "dataset"), ("m", "m"), ("SVC SVs", "svc_support_vectors"),
                 ("ONNX f32 KiB", "onnx32_kib"), ("f32 graph computes in", "onnx32_computes_in"),
                 ("ONNX f32 deflated KiB", "onnx32_deflated_kib"),
                 ("ONNX f64 KiB", "onnx64_kib"),
                 ("save() KiB", "skm_kib"), ("save() format", "skm_format"),
                 ("skops (deflated) KiB", "skops_kib"), ("pickle KiB", "pickle_kib"),
                 ("ONNX f32 / save()", "onnx32_vs_skm"), ("SVC pickle KiB", "svc_pickle_kib"),
                 ("SVC ONNX KiB", "svc_onnx_kib")]
    setup_cols = [("data", "dataset"), ("train rows", "n_train"), ("test rows", "n_test"),
                  ("features", "n_features"), ("SVC train rows", "svc_n_train"),
                  ("fit s", "fit_s"), ("SVC fit s", "svc_fit_s"),
                  ("to_onnx f32 s", "export32_s"), ("to_onnx f64 s", "export64_s"),
                  ("session f32 s", "session32_s")]
    with open(path, "a") as fh:
        fh.write("\n".join(["", "## File sizes", "", *table(sizes, size_cols), "",
                            "## Fits and exports", "", *table(setups, setup_cols)]) + "\n")
    print(path.read_text())
    return path


if __name__ == "__main__":
    main()
