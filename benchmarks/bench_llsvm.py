"""LowRankSVC (LLSVM) benchmarks: ijcnn1 k-sweep, checkerboard, 10^7 streamed rows, landmarks.

Experiments (``--experiment``, default all), each a single command with a ``--quick`` profile:

- ``ijcnn1``: train = ijcnn1.tr + ijcnn1.val (49,990), test = ijcnn1.t (91,701), RBF gamma = 2
  (as benchmarks/bench_ijcnn1.py). LowRankSVC (fast k-means landmarks: random initial
  centres + 10 Lloyd iterations, float32 features, C = 16, default tol)
  against scikit-learn's Nystroem + LinearSVC at the same k with C_liblinear = 8 (the same
  optimisation problem up to the landmarks: C = 2 C_liblinear; 8 is the validated C of
  bench_ijcnn1) and SVC (C = 32, LIBSVM's setting), for k in {50, ..., 4000}; the paper's
  Figure 1 (test error and fit time against k) as a PNG.
- ``checkerboard``: 4x4 checkerboard, 800,000 training rows with 20 % flipped labels,
  20,000 noise-free test rows, k = 1000. Nystroem + LinearSVC at full size would need about
  19 GB (its float64 features plus liblinear's 16-byte copy of each entry), more than this
  shared machine allows, so both are also compared on the first 100,000 rows.
- ``stream``: 10^7 checkerboard rows written to a LIBSVM file under /tmp, streamed by
  ``LowRankSVC.fit_stream`` in chunks (read incrementally), file deleted afterwards; peak RSS
  of the fitting process.
- ``landmarks``: k-means against random landmarks at equal k on ijcnn1 and a9a (3 seeds).

Every fit runs in a fresh child process (peak RSS after loading, see _harness.py). Writes
benchmarks/results/llsvm/llsvm_<experiment>{_quick}.json / .md (and .png for ijcnn1).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

from _harness import RESULTS, load_note, mark_baseline, run_isolated, timed, write_results
from sparsekernel import LowRankSVC
from sparsekernel.basis import KMeansBasis
from sparsekernel.datasets import (
    SvmlightChunks,
    find_shared_data,
    load_svmlight_paths,
    make_checkerboard,
)

GAMMA_IJCNN, C_LOWRANK, C_LIBLINEAR, C_SVC = 2.0, 16.0, 8.0, 32.0
K_GRID = (50, 100, 200, 500, 1000, 2000, 4000)
# The paper's "fast approximate k-means": random initial centres, 10 Lloyd iterations on
# <= 20,000 rows (k-means++ seeding alone took 8 s of sklearn's Python loop at k = 2000).
IJCNN_BASIS = "kmeans-fast"
NYSTROEM_MAX_K = 2000  # beyond this Nystroem + LinearSVC exceeds ~4 GB on ijcnn1
CB_GAMMA, CB_C, CB_K = 4.0, 1.0, 1000


# ------------------------------------------------------------------ ijcnn1
def load_ijcnn1(quick):
    root = find_shared_data("ijcnn1")
    if root is None:
        sys.exit("ijcnn1 not found: set SPARSEKERNEL_DATA to the shared data folder.")
    parts = load_svmlight_paths([root / f for f in ("ijcnn1.tr.xz", "ijcnn1.val.xz",
                                                    "ijcnn1.t.xz")], n_features=22)
    (Xa, ya), (Xv, yv), (Xt, yt) = [(X.toarray(), y) for X, y in parts]
    X, y = np.vstack([Xa, Xv]), np.r_[ya, yv]
    if quick:
        rng = np.random.RandomState(0)
        a, t = rng.choice(len(y), 4000, replace=False), rng.choice(len(yt), 4000, replace=False)
        X, y, Xt, yt = X[a], y[a], Xt[t], yt[t]
    return X, y, Xt, yt


def make_ijcnn1_model(method, k, basis="kmeans", seed=0):
    from sklearn.kernel_approximation import Nystroem
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import SVC, LinearSVC

    if method == "lowrank":
        if basis == "kmeans-fast":
            basis = KMeansBasis(init="random")
        return LowRankSVC(gamma=GAMMA_IJCNN, C=C_LOWRANK, n_basis=k, basis=basis,
                          random_state=seed)
    if method == "nystroem":
        return make_pipeline(Nystroem(gamma=GAMMA_IJCNN, n_components=k, random_state=seed),
                             LinearSVC(C=C_LIBLINEAR, max_iter=5000))
    return SVC(C=C_SVC, gamma=GAMMA_IJCNN)


def evaluate_ijcnn1(method, k, quick):
    """Child process: load, fit on train, predict the test set."""
    X, y, Xt, yt = load_ijcnn1(quick)
    if method == "lowrank":  # float32 features: the user's choice of dtype, kept by the model
        X, Xt = X.astype(np.float32), Xt.astype(np.float32)
    mark_baseline()
    model = make_ijcnn1_model(method, k, basis=IJCNN_BASIS)
    _, fit_s = timed(model.fit, X, y)
    pred, predict_s = timed(model.predict, Xt)
    return {"fit_s": fit_s, "predict_s": predict_s,
            "test_error_pct": 100.0 * np.mean(pred != yt)}


def run_ijcnn1(quick, out):
    ks = (50, 200) if quick else K_GRID
    rows = [{"method": "scikit-learn SVC (C=32)", "k": "",
             **run_isolated(evaluate_ijcnn1, "svc", 0, quick)}]
    svc = rows[0]
    for k in ks:
        low = run_isolated(evaluate_ijcnn1, "lowrank", k, quick)
        rows.append({"method": "sparsekernel LowRankSVC (fast k-means, C=16)", "k": k, **low,
                     "fit_vs_svc": low["fit_s"] / svc["fit_s"]})
        if k <= NYSTROEM_MAX_K:
            nys = run_isolated(evaluate_ijcnn1, "nystroem", k, quick)
            rows.append({"method": "scikit-learn Nystroem + LinearSVC (C=8)", "k": k, **nys,
                         "fit_vs_svc": nys["fit_s"] / svc["fit_s"]})
            rows[-2]["fit_vs_nystroem"] = low["fit_s"] / nys["fit_s"]
    payload = {
        "title": "LLSVM on ijcnn1 (49,990 train / 91,701 test), RBF gamma=2"
                 + (" [quick: 4,000 / 4,000 rows]" if quick else ""),
        "notes": [load_note(),
                  "LowRankSVC C=16 and LinearSVC C=8 are the same problem on their features "
                  "(C = 2 C_liblinear); LowRankSVC gets float32 input",
                  f"Nystroem + LinearSVC not run above k={NYSTROEM_MAX_K} (memory)"],
        "rows": rows,
    }
    cols = [("method", "method"), ("k", "k"), ("fit s", "fit_s"), ("predict s", "predict_s"),
            ("test error %", "test_error_pct"), ("peak RSS MiB", "peak_rss_mib"),
            ("fit / SVC", "fit_vs_svc"), ("fit / Nystroem same k", "fit_vs_nystroem")]
    name = "llsvm_ijcnn1" + ("_quick" if quick else "")
    path = write_results(name, payload, cols, out)
    plot_ijcnn1(rows, path.with_suffix(".png"))
    return path


def plot_ijcnn1(rows, png):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for label, marker in (("LowRankSVC", "o"), ("Nystroem", "s")):
        sel = [r for r in rows if label in r["method"] and "error" not in r]
        ks = [r["k"] for r in sel]
        axes[0].plot(ks, [r["test_error_pct"] for r in sel], marker=marker, label=label)
        axes[1].plot(ks, [r["fit_s"] for r in sel], marker=marker, label=label)
    svc = rows[0]
    axes[0].axhline(svc["test_error_pct"], color="k", ls="--", label="SVC")
    axes[1].axhline(svc["fit_s"], color="k", ls="--", label="SVC")
    for ax, ylab in zip(axes, ("test error (%)", "fit time (s)"), strict=True):
        ax.set_xscale("log")
        ax.set_xlabel("number of landmarks k")
        ax.set_ylabel(ylab)
        ax.legend()
    axes[1].set_yscale("log")
    fig.suptitle("ijcnn1: error and training time against k (cf. LLSVM paper, Figure 1)")
    fig.tight_layout()
    fig.savefig(png, dpi=100)


# ------------------------------------------------------------ checkerboard
def evaluate_checkerboard(method, n, k, quick):
    X, y = make_checkerboard(n, noise=0.2, random_state=0, dtype=np.float32)
    Xt, yt = make_checkerboard(20000, random_state=1, dtype=np.float32)
    mark_baseline()
    if method == "lowrank":
        model = LowRankSVC(gamma=CB_GAMMA, C=CB_C, n_basis=k, random_state=0)
    else:
        from sklearn.kernel_approximation import Nystroem
        from sklearn.pipeline import make_pipeline
        from sklearn.svm import LinearSVC

        model = make_pipeline(Nystroem(gamma=CB_GAMMA, n_components=k, random_state=0),
                              LinearSVC(C=CB_C / 2, max_iter=2000))
    _, fit_s = timed(model.fit, X, y)
    pred, predict_s = timed(model.predict, Xt)
    out = {"fit_s": fit_s, "predict_s": predict_s,
           "test_error_pct": 100.0 * np.mean(pred != yt), "n_train": n, "k": k}
    if method == "lowrank":
        out["solver"] = "block minimization" if hasattr(model, "_sbm") else "in-memory DCD"
        out["n_components"] = int(model.normalization_.shape[1])
    return out


def run_checkerboard(quick, out):
    n_full, n_sub, k = (40000, 20000, 200) if quick else (800000, 100000, CB_K)
    rows = [{"method": "sparsekernel LowRankSVC", **run_isolated(
        evaluate_checkerboard, "lowrank", n_full, k, quick)}]
    for method, name in (("lowrank", "sparsekernel LowRankSVC"),
                         ("nystroem", "scikit-learn Nystroem + LinearSVC")):
        rows.append({"method": name, **run_isolated(evaluate_checkerboard, method, n_sub, k,
                                                    quick)})
    rows[1]["fit_vs_nystroem"] = rows[1]["fit_s"] / rows[2]["fit_s"]
    payload = {
        "title": f"Noisy 4x4 checkerboard (20 % flipped labels), k={k}, RBF gamma={CB_GAMMA}, "
                 f"C={CB_C:g} (LinearSVC C={CB_C / 2:g})" + (" [quick]" if quick else ""),
        "notes": [load_note(), "test set: 20,000 noise-free points; paper: 0.59 % at k=1000",
                  "Nystroem + LinearSVC only on the subsample: at 800k rows it needs ~19 GB"],
        "rows": rows,
    }
    cols = [("method", "method"), ("n train", "n_train"), ("k", "k"), ("fit s", "fit_s"),
            ("predict s", "predict_s"), ("test error %", "test_error_pct"),
            ("peak RSS MiB", "peak_rss_mib"), ("solver", "solver"),
            ("fit / Nystroem", "fit_vs_nystroem")]
    return write_results("llsvm_checkerboard" + ("_quick" if quick else ""), payload, cols, out)


# ------------------------------------------------------------------ stream
def write_checkerboard_file(path, n, chunk=1_000_000):
    """LIBSVM text, ``n`` rows with 20 % flipped labels, written chunk by chunk."""
    with open(path, "w") as fh:
        for i, start in enumerate(range(0, n, chunk)):
            X, y = make_checkerboard(min(chunk, n - start), noise=0.2, random_state=1000 + i,
                                     dtype=np.float32)
            lines = [f"{int(a)} 1:{b:.6g} 2:{c:.6g}" for a, b, c in zip(y, X[:, 0], X[:, 1],
                                                                        strict=True)]
            fh.write("\n".join(lines) + "\n")


def evaluate_stream(path, k, chunk_size):
    Xt, yt = make_checkerboard(20000, random_state=1, dtype=np.float32)
    mark_baseline()
    model = LowRankSVC(gamma=CB_GAMMA, C=CB_C, n_basis=k, chunk_size=chunk_size,
                       random_state=0)
    chunks = SvmlightChunks(path, chunk_size, n_features=2, dtype=np.float32)
    _, fit_s = timed(model.fit_stream, chunks)
    pred, predict_s = timed(model.predict, Xt)
    return {"fit_s": fit_s, "predict_s": predict_s, "rows_streamed": model.n_rows_seen_,
            "test_error_pct": 100.0 * np.mean(pred != yt), "k": k, "chunk_size": chunk_size,
            "n_components": int(model.normalization_.shape[1])}


def run_stream(quick, out, k):
    n, chunk = (200_000, 20_000) if quick else (10_000_000, 100_000)
    fd, path = tempfile.mkstemp(suffix=".libsvm", dir="/tmp")
    os.close(fd)
    try:
        _, write_s = timed(write_checkerboard_file, path, n)
        size_mb = os.path.getsize(path) / 2**20
        row = {"method": "sparsekernel LowRankSVC.fit_stream (LIBSVM file)",
               **run_isolated(evaluate_stream, path, k, chunk)}
    finally:
        os.unlink(path)
    row["file_mib"], row["write_s"] = round(size_mb, 1), write_s
    payload = {
        "title": f"{n:,} noisy checkerboard rows streamed from a {size_mb:,.0f} MiB LIBSVM "
                 "file" + (" [quick]" if quick else ""),
        "notes": [load_note(), "the file is read chunk by chunk (datasets."
                  "SvmlightChunks); peak RSS is that of the fitting process",
                  "features are float32; landmarks: k-means on the first chunk"],
        "rows": [row],
    }
    cols = [("method", "method"), ("rows", "rows_streamed"), ("k", "k"),
            ("chunk", "chunk_size"), ("fit s", "fit_s"), ("test error %", "test_error_pct"),
            ("peak RSS MiB", "peak_rss_mib"), ("file MiB", "file_mib")]
    return write_results("llsvm_stream" + ("_quick" if quick else ""), payload, cols, out)


# --------------------------------------------------------------- landmarks
def evaluate_landmarks(dataset, ks, seeds, quick):
    if dataset == "ijcnn1":
        X, y, Xt, yt = load_ijcnn1(quick)
        gamma, C = GAMMA_IJCNN, C_LOWRANK
    else:
        root = find_shared_data("a9a")
        (X, y), (Xt, yt) = load_svmlight_paths([root / "a9a.xz", root / "a9a.t.xz"],
                                               n_features=123)
        X, Xt = X.toarray(), Xt.toarray()
        if quick:
            X, y = X[:4000], y[:4000]
        gamma, C = 0.05, 2.0
    X, Xt = X.astype(np.float32), Xt.astype(np.float32)
    rows = []
    for k in ks:
        for basis in ("kmeans", "random"):
            errs, times = [], []
            for seed in seeds:
                model = LowRankSVC(gamma=gamma, C=C, n_basis=k, basis=basis, random_state=seed)
                t0 = time.perf_counter()
                model.fit(X, y)
                times.append(time.perf_counter() - t0)
                errs.append(100.0 * np.mean(model.predict(Xt) != yt))
            rows.append({"dataset": dataset, "k": k, "basis": basis,
                         "test_error_pct": float(np.mean(errs)),
                         "error_std": float(np.std(errs)), "fit_s": float(np.mean(times))})
    return {"rows": rows}


def run_landmarks(quick, out):
    ks, seeds = ((50, 200), (0,)) if quick else ((100, 300, 1000), (0, 1, 2))
    rows = []
    for dataset in ("ijcnn1", "a9a"):
        if find_shared_data(dataset) is None:
            continue
        res = run_isolated(evaluate_landmarks, dataset, ks, seeds, quick)
        rows += res.get("rows", [{"dataset": dataset, "error": res.get("error")}])
    payload = {
        "title": "k-means vs random landmarks at equal k (LowRankSVC)"
                 + (" [quick]" if quick else ""),
        "notes": [load_note(), f"mean over seeds {list(seeds)}; ijcnn1 gamma=2 C=16; a9a "
                  "gamma=0.05 C=2; k-means: 10 Lloyd iterations on <= 20,000 rows"],
        "rows": rows,
    }
    cols = [("dataset", "dataset"), ("k", "k"), ("landmarks", "basis"),
            ("test error %", "test_error_pct"), ("std", "error_std"), ("fit s", "fit_s")]
    return write_results("llsvm_landmarks" + ("_quick" if quick else ""), payload, cols, out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--experiment", choices=("ijcnn1", "checkerboard", "stream", "landmarks",
                                             "all"), default="all")
    ap.add_argument("--quick", action="store_true", help="small smoke run")
    ap.add_argument("--stream-k", type=int, default=1000, help="landmarks for the stream run")
    ap.add_argument("--out", default=None, help=f"results folder (default {RESULTS})")
    args = ap.parse_args(argv)
    todo = ("ijcnn1", "checkerboard", "stream", "landmarks") if args.experiment == "all" \
        else (args.experiment,)
    for name in todo:
        if name == "ijcnn1":
            path = run_ijcnn1(args.quick, args.out)
        elif name == "checkerboard":
            path = run_checkerboard(args.quick, args.out)
        elif name == "stream":
            path = run_stream(args.quick, args.out, 50 if args.quick else args.stream_k)
        else:
            path = run_landmarks(args.quick, args.out)
        print(path.read_text())


if __name__ == "__main__":
    main()
