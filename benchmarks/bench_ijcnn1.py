"""ijcnn1: ReducedSVC against scikit-learn's SVC and Nystroem + LinearSVC, same gamma.

Protocol (LIBSVM's split): train = ijcnn1.tr + ijcnn1.val (49,990 rows), test = ijcnn1.t
(91,701 rows), RBF gamma = 2. C for the sparsekernel and Nystroem models is chosen on the
validation file (fit on ijcnn1.tr, score on ijcnn1.val); the test set is never looked at until
the final fit. SVC uses LIBSVM's reference setting C = 32, gamma = 2.

Run: ``python benchmarks/bench_ijcnn1.py`` (about 3 minutes on 2 cores), or ``--quick`` for a
small smoke run. Writes benchmarks/results/ijcnn1/ijcnn1{,_quick}.json and .md.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from sklearn.kernel_approximation import Nystroem
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC, LinearSVC

from _harness import mark_baseline, run_isolated, timed, write_results
from sparsekernel import ReducedSVC
from sparsekernel.datasets import find_shared_data, load_svmlight_paths

GAMMA = 2.0
C_GRID = (8.0, 32.0, 128.0, 512.0)


def load(quick):
    root = find_shared_data("ijcnn1")
    if root is None:
        sys.exit("ijcnn1 not found: set SPARSEKERNEL_DATA to the shared data folder.")
    parts = load_svmlight_paths([root / f for f in ("ijcnn1.tr.xz", "ijcnn1.val.xz",
                                                    "ijcnn1.t.xz")], n_features=22)
    (Xa, ya), (Xv, yv), (Xt, yt) = [(X.toarray(), y) for X, y in parts]
    if quick:  # random rows: the files are ordered by label in places
        rng = np.random.RandomState(0)
        a, v, t = (rng.choice(len(y_), k, replace=False) for y_, k in
                   ((ya, 4000), (yv, 2000), (yt, 4000)))
        Xa, ya, Xv, yv, Xt, yt = Xa[a], ya[a], Xv[v], yv[v], Xt[t], yt[t]
    return Xa, ya, Xv, yv, Xt, yt


def _fmt(errors):
    return "{" + ", ".join(f"{C:g}: {100 * e:.2f} %" for C, e in errors.items()) + "}"


def choose_C(make, Xa, ya, Xv, yv):
    """C with the lowest validation error (ties to the smaller C)."""
    errors = {C: 1.0 - make(C).fit(Xa, ya).score(Xv, yv) for C in C_GRID}
    return min(errors, key=lambda C: (errors[C], C)), errors


def make_model(method, C, m):
    if method == "reduced":
        return ReducedSVC(gamma=GAMMA, C=C, n_basis=m, basis="random", random_state=0)
    if method == "nystroem":
        return make_pipeline(Nystroem(gamma=GAMMA, n_components=m, random_state=0),
                             LinearSVC(C=C, max_iter=5000))
    return SVC(C=C, gamma=GAMMA)


def model_size(method, model, m):
    if method == "reduced":
        return f"{model.basis_.shape[0]} basis functions"
    if method == "svc":
        return f"{int(model.n_support_.sum())} support vectors"
    return f"{m} landmarks"


def evaluate(method, C, m, quick):
    """Child process: load, fit on train (+val), predict the test set."""
    Xa, ya, Xv, yv, Xt, yt = load(quick)
    X, y = np.vstack([Xa, Xv]), np.r_[ya, yv]
    del Xa, Xv
    mark_baseline()
    model = make_model(method, C, m)
    _, fit_s = timed(model.fit, X, y)
    pred, predict_s = timed(model.predict, Xt)
    return {"fit_s": fit_s, "predict_s": predict_s,
            "test_error_pct": 100.0 * np.mean(pred != yt),
            "model_size": model_size(method, model, m)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small smoke run")
    ap.add_argument("--n-basis", type=int, default=None)
    ap.add_argument("--out", default=None,
                    help="results folder (default benchmarks/results/ijcnn1)")
    args = ap.parse_args(argv)
    m = args.n_basis or (200 if args.quick else 1500)
    Xa, ya, Xv, yv, _, _ = load(args.quick)
    c_red, err_red = choose_C(lambda C: make_model("reduced", C, m), Xa, ya, Xv, yv)
    c_nys, err_nys = choose_C(lambda C: make_model("nystroem", C, m), Xa, ya, Xv, yv)
    del Xa, Xv
    runs = [
        ("reduced", 32.0, f"sparsekernel ReducedSVC (m={m}, random, C=32 as SVC)"),
        ("reduced", c_red, f"sparsekernel ReducedSVC (m={m}, random, C={c_red:g} by validation)"),
        ("svc", 32.0, "scikit-learn SVC (C=32)"),
        ("nystroem", c_nys, f"scikit-learn Nystroem + LinearSVC (m={m}, C={c_nys:g} by "
                            "validation)"),
    ]
    rows = [{"method": name, **run_isolated(evaluate, method, C, m, args.quick)}
            for method, C, name in runs]
    svc = rows[2]
    for row in rows:
        row["fit_vs_svc"] = row["fit_s"] / svc["fit_s"]
        row["predict_vs_svc"] = row["predict_s"] / svc["predict_s"]
    payload = {
        "title": "ijcnn1 (49,990 train / 91,701 test), RBF gamma=2" + (" [quick]" if args.quick
                                                                       else ""),
        "notes": [
            f"C chosen on ijcnn1.val from {list(C_GRID)}: ReducedSVC "
            f"{_fmt(err_red)}, Nystroem {_fmt(err_nys)} (validation error)",
            "each method loads the data, fits and predicts in its own fresh child process; "
            "the peak-RSS counter is reset after loading",
        ],
        "rows": rows,
    }
    cols = [("method", "method"), ("fit s", "fit_s"), ("predict s", "predict_s"),
            ("test error %", "test_error_pct"), ("model size", "model_size"),
            ("peak RSS in fit+predict MiB", "peak_rss_mib"),
            ("added to the loaded data MiB", "extra_rss_mib"), ("fit / SVC", "fit_vs_svc"),
            ("predict / SVC", "predict_vs_svc")]
    path = write_results("ijcnn1_quick" if args.quick else "ijcnn1", payload, cols, args.out)
    print(path.read_text())


if __name__ == "__main__":
    main()
