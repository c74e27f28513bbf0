"""Probabilities: KernelLogisticRegression against a calibrated SVC and Nystroem + logistic.

Protocol. pendigits and letter (LIBSVM's train / test files, ``_suite_data.load``), RBF
kernel with gamma = 'scale' (1 / (d X.var()) on the training rows) for every method:

* ``KernelLogisticRegression`` (multinomial, k-means landmarks; m = the ``n_basis='auto'``
  count, :func:`sparsekernel.basis.auto_n_basis`, computed once and given to every method);
* ``CalibratedClassifierCV(SVC(gamma='scale'), cv=3)``: LIBSVM's SVC (C = 1) with Platt's
  sigmoid per one-vs-rest problem fitted on 3-fold cross-validated decision values, the
  ensemble of the three calibrated folds (scikit-learn's default);
* ``Nystroem(n_components=m) + LogisticRegression``: the same m as the sparsekernel model's
  fitted basis, random landmarks, lbfgs.

C of the two logistic models is chosen from ``C_GRID`` by log-loss on a stratified 20 %
validation part of the training rows (fit on the other 80 %), then the model is refitted on
all training rows; SVC keeps C = 1, the setting the calibration is usually applied to. The
test rows are only used for the final scores: log-loss, Brier score (mean over rows of the
summed squared error of the probability vector), accuracy, fit and predict time. Each final
fit runs in its own spawned child (``_harness.run_isolated``), after one fit of the same model
on 600 of the rows (every method alike), so that the timed fit is that of a warm process.
A reliability diagram plots, per method, the accuracy against the confidence (the largest
class probability) in 10 bins (``sklearn.calibration.calibration_curve``).

Run: ``python benchmarks/bench_calibration.py`` (minutes: the SVC fits dominate), or
``--quick`` (2000 training and 2000 test rows of pendigits, m = 100). Writes
benchmarks/results/calibration/calibration{,_quick}.json, .md and _reliability.png.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from sklearn.calibration import CalibratedClassifierCV, calibration_curve
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC

from _harness import RESULTS, load_note, mark_baseline, run_isolated, timed, write_results
from _suite_data import load as load_suite
from sparsekernel import KernelLogisticRegression
from sparsekernel.basis import auto_n_basis
from sparsekernel.kernels import Kernel

C_GRID = (1.0, 10.0, 100.0)
QUICK_ROWS = 2000
QUICK_BASIS = 100
METHODS = ("klr", "svc", "nystroem")
LABELS = {"klr": "sparsekernel KernelLogisticRegression",
          "svc": "CalibratedClassifierCV(SVC(gamma='scale'), cv=3)",
          "nystroem": "Nystroem + LogisticRegression"}


def load(name, quick):
    """Train / test rows; a seeded random subset of each with ``quick``."""
    X, y, Xt, yt = load_suite(name)
    X, Xt = np.asarray(X, dtype=np.float64), np.asarray(Xt, dtype=np.float64)
    if quick:
        rng = np.random.RandomState(0)
        a = rng.choice(len(y), min(QUICK_ROWS, len(y)), replace=False)
        t = rng.choice(len(yt), min(QUICK_ROWS, len(yt)), replace=False)
        X, y, Xt, yt = X[a], y[a], Xt[t], yt[t]
    return X, y, Xt, yt


def gamma_scale(X):
    return 1.0 / (X.shape[1] * X.var())


def make_model(method, C, m, gamma):
    if method == "klr":
        return KernelLogisticRegression(C=C, n_basis=m, random_state=0)
    if method == "svc":
        return CalibratedClassifierCV(SVC(gamma="scale"), cv=3)
    return make_pipeline(Nystroem(gamma=gamma, n_components=m, random_state=0),
                         LogisticRegression(C=C, max_iter=2000))


def choose_C(method, m, X, y):
    """C with the lowest validation log-loss (ties to the smaller C), and every loss."""
    Xa, Xv, ya, yv = train_test_split(X, y, test_size=0.2, stratify=y, random_state=0)
    losses = {C: log_loss(yv, make_model(method, C, m, gamma_scale(Xa)).fit(Xa, ya)
                          .predict_proba(Xv)) for C in C_GRID}
    return min(losses, key=lambda C: (losses[C], C)), losses


def scores(y, proba, classes):
    """Log-loss, Brier score and accuracy of ``proba`` (columns in ``classes`` order)."""
    onehot = (np.asarray(y)[:, None] == classes[None, :]).astype(float)
    pred = classes[proba.argmax(axis=1)]
    return {"log_loss": float(log_loss(y, proba, labels=classes)),
            "brier": float(np.mean(np.sum((proba - onehot) ** 2, axis=1))),
            "accuracy_pct": float(100.0 * np.mean(pred == y))}


def evaluate(name, method, C, m, quick):
    """Child process: load, fit on the training rows, score the test rows."""
    X, y, Xt, yt = load(name, quick)
    # One small fit of the same model first, for every method alike: the timed fit is then
    # a fit in a warm process (imports done, thread pools started), as the refit after a
    # search is in bench_suite's protocol; first-fit costs are bench_suite's no-search figures.
    rows = np.random.default_rng(0).choice(len(y), size=min(len(y), 600), replace=False)
    make_model(method, C, min(m, 50), gamma_scale(X)).fit(X[rows], y[rows])
    mark_baseline()
    model = make_model(method, C, m, gamma_scale(X))
    _, fit_s = timed(model.fit, X, y)
    proba, predict_s = timed(model.predict_proba, Xt)
    confidence = proba.max(axis=1)
    correct = (model.classes_[proba.argmax(axis=1)] == yt).astype(float)
    acc, conf = calibration_curve(correct, confidence, n_bins=10)
    return {"fit_s": fit_s, "predict_s": predict_s, **scores(yt, proba, model.classes_),
            "curve": {"confidence": conf.tolist(), "accuracy": acc.tolist()}}


def fitted_basis(name, quick):
    """m of the sparsekernel model ('auto', or the quick profile's); the baselines use it."""
    if quick:
        return QUICK_BASIS
    X, y, _, _ = load(name, quick)
    return int(auto_n_basis(X, Kernel("rbf", gamma=gamma_scale(X)), random_state=0))


def run_dataset(name, quick):
    X, y, _, _ = load(name, quick)
    m = fitted_basis(name, quick)
    chosen = {"klr": choose_C("klr", m, X, y), "nystroem": choose_C("nystroem", m, X, y),
              "svc": (1.0, {})}
    del X, y
    rows = []
    for method in METHODS:
        C, losses = chosen[method]
        row = {"dataset": name, "method": LABELS[method], "C": C, "m": m,
               "validation_log_loss": losses,
               **run_isolated(evaluate, name, method, C, m, quick)}
        rows.append(row)
    svc = rows[METHODS.index("svc")]
    for row in rows:
        if "error" not in row and "error" not in svc:
            row["fit_vs_svc"] = row["fit_s"] / svc["fit_s"]
            row["log_loss_vs_svc"] = row["log_loss"] / svc["log_loss"]
    return rows


def reliability_figure(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(r["dataset"] for r in rows))
    fig, axes = plt.subplots(1, len(names), figsize=(5 * len(names), 4.5), squeeze=False)
    for ax, name in zip(axes[0], names, strict=True):
        ax.plot([0, 1], [0, 1], ":", color="0.5", label="perfect calibration")
        for row in (r for r in rows if r["dataset"] == name and "curve" in r):
            ax.plot(row["curve"]["confidence"], row["curve"]["accuracy"], "o-", ms=3,
                    label=f"{row['method']} (log-loss {row['log_loss']:.3f})")
        ax.set(xlabel="confidence (largest class probability)", ylabel="accuracy",
               title=f"{name}: reliability", xlim=(0, 1), ylim=(0, 1.02))
        ax.legend(loc="upper left", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small smoke run (pendigits subset)")
    ap.add_argument("--datasets", nargs="+", default=None,
                    help="suite data sets (default pendigits letter; --quick: pendigits)")
    ap.add_argument("--out", default=None,
                    help="results folder (default benchmarks/results/calibration)")
    args = ap.parse_args(argv)
    datasets = args.datasets or (["pendigits"] if args.quick else ["pendigits", "letter"])
    rows = [row for name in datasets for row in run_dataset(name, args.quick)]
    stem = "calibration_quick" if args.quick else "calibration"
    out = RESULTS if args.out is None else Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    figure = reliability_figure(rows, out / f"{stem}_reliability.png")
    payload = {
        "title": "Probabilities: log-loss, Brier score, accuracy and fit time"
                 + (" [quick]" if args.quick else ""),
        "notes": [load_note(),
                  f"C of the logistic models chosen from {list(C_GRID)} by validation "
                  "log-loss on 20 % of the training rows; SVC keeps C = 1",
                  "each final fit and prediction runs in its own fresh child process, after "
                  "one fit of the same model on 600 rows there (every method alike: a warm "
                  "process)",
                  f"reliability diagram: {figure}"],
        "rows": rows,
    }
    cols = [("data", "dataset"), ("method", "method"), ("m", "m"), ("C", "C"),
            ("log-loss", "log_loss"), ("Brier", "brier"), ("accuracy %", "accuracy_pct"),
            ("fit s", "fit_s"), ("predict s", "predict_s"), ("fit / SVC", "fit_vs_svc"),
            ("log-loss / SVC", "log_loss_vs_svc")]
    path = write_results(stem, payload, cols, out)
    print(path.read_text())


if __name__ == "__main__":
    main()
