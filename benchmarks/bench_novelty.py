"""Novelty detection: LowRankOneClassSVM against OneClassSVM, IsolationForest and
Nystroem + SGDOneClassSVM, by ROC AUC and fit time.

Protocol. Every detector is fitted on normal rows only and scores held-out rows, normal and
novel; the AUC is that of ``score_samples`` (higher: more normal) for "normal" against the
novelties (``decision_function`` for OneClassSVM, the same ranking). Every method gets
``nu`` (``--nu``, default 0.05) where it has one, the set's gamma ('scale' resolved on the
training rows, the same number for every kernel method, since ``Nystroem`` takes no
'scale') and random_state = 0. The Nystroem pipeline takes as many components as the
basis LowRankOneClassSVM chose ('auto'), so the two linear one-class machines work in the
same dimension; scikit-learn's ``SGDOneClassSVM`` runs at its defaults (max_iter=1000,
tol=1e-3, early stopping on the training objective).

Sets:

* ``shuttle``: the Statlog Shuttle training file, class 1 ("Rad Flow", the normal state)
  as the normal rows; its test file, class 1 normal and the six other classes novelties
  (LIBSVM's [-1, 1] scaling).
* ``blobs``: ``--rows`` (default 10^6; ``--quick``: 20,000) normal rows of 10 features from
  five Gaussian clusters (``make_blobs``, seed 0), tested on 20,000 more normal rows and
  2,000 novelties drawn uniformly in the box of the normal rows. OneClassSVM (quadratic in
  the rows) is run on a seeded 40,000-row subsample when there are more.

Run: ``python benchmarks/bench_novelty.py`` (minutes; run it alone on a quiet machine),
``--rows 10000000`` for the 10^7-row line, ``--quick`` for a smoke run. Writes
benchmarks/results/novelty/novelty{,_quick}.json and .md (``--out`` for another folder).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import make_blobs
from sklearn.ensemble import IsolationForest
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import SGDOneClassSVM
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.svm import OneClassSVM

from _harness import RESULTS, load_note, timed, write_results
from sparsekernel import LowRankOneClassSVM
from sparsekernel.datasets import find_shared_data, load_shuttle
from sparsekernel.kernels import resolve_gamma

#: OneClassSVM's rows at most (LIBSVM's one-class SVM is quadratic in them).
OCSVM_MAX_ROWS = 40000


def shuttle(quick):
    base = find_shared_data("shuttle")
    if base is None:
        return None
    Xtr, ytr, Xte, yte = load_shuttle(base)
    normal = Xtr[ytr == 1]
    if quick:
        normal, keep = normal[:5000], np.random.default_rng(0).permutation(len(Xte))[:3000]
        Xte, yte = Xte[keep], yte[keep]
    return normal, Xte, (yte == 1).astype(int)


def blobs(rows, quick):
    n = 20000 if quick else rows
    X, _ = make_blobs(n + 20000, n_features=10, centers=5, cluster_std=1.5, random_state=0)
    rng = np.random.default_rng(0)
    low, high = X.min(axis=0), X.max(axis=0)
    novel = rng.uniform(low, high, (2000, X.shape[1]))
    test = np.vstack([X[n:], novel])
    return X[:n], test, np.r_[np.ones(20000, dtype=int), np.zeros(2000, dtype=int)]


def run(name, data, args):
    normal, test, truth = data
    gamma = resolve_gamma("scale", normal)
    rows = []

    def record(method, model, fit_s, score, m=None, note=""):
        scores = score(test)
        rows.append({"data": name, "n_train": len(normal), "method": method,
                     "fit_s": fit_s, "auc": float(roc_auc_score(truth, scores)),
                     "n_components": m if m is not None else "",
                     "train_outside_pct": float(100 * np.mean(model.predict(normal) == -1))
                     if hasattr(model, "predict") else "", "note": note})
        print(f"{name:8s} {method:34s} fit {fit_s:8.3f} s  AUC {rows[-1]['auc']:.4f}",
              file=sys.stderr)

    ours = LowRankOneClassSVM(nu=args.nu, gamma=gamma, random_state=0)
    ours, t = timed(ours.fit, normal)
    m = ours.n_support_
    record("LowRankOneClassSVM", ours, t, ours.score_samples, m)

    pipe = make_pipeline(Nystroem(gamma=gamma, n_components=m, random_state=0),
                         SGDOneClassSVM(nu=args.nu, random_state=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe, t = timed(pipe.fit, normal)
    record("Nystroem + SGDOneClassSVM", pipe, t, pipe.score_samples, m)

    forest, t = timed(IsolationForest(random_state=0).fit, normal)
    record("IsolationForest", forest, t, forest.score_samples)

    sub, note = normal, ""
    if len(normal) > OCSVM_MAX_ROWS:
        sub = normal[np.sort(np.random.default_rng(0).permutation(len(normal))
                             [:OCSVM_MAX_ROWS])]
        note = f"fitted on a seeded {OCSVM_MAX_ROWS}-row subsample"
    ocsvm, t = timed(OneClassSVM(nu=args.nu, gamma=gamma).fit, sub)
    record("OneClassSVM", ocsvm, t, ocsvm.decision_function, len(ocsvm.support_), note)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nu", type=float, default=0.05)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sets", default="shuttle,blobs")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    note = load_note()
    rows = []
    for name in args.sets.split(","):
        data = shuttle(args.quick) if name == "shuttle" else blobs(args.rows, args.quick)
        if data is None:
            print(f"{name}: data not found, skipped", file=sys.stderr)
            continue
        rows += run(name, data, args)
    payload = {
        "title": "Novelty detection: ROC AUC and fit time, fitted on normal rows only",
        "notes": [note, f"nu = {args.nu} for every method that has one; gamma = 'scale' "
                  "resolved on the training rows; random_state = 0",
                  "Nystroem + SGDOneClassSVM takes as many components as "
                  "LowRankOneClassSVM's basis ('auto'); n_components of OneClassSVM is its "
                  "number of support vectors",
                  "train_outside_pct: training rows predicted -1 (at most nu for the "
                  "nu-one-class machines, up to the rows on the boundary)"],
        "rows": rows}
    name = "novelty_quick" if args.quick else ("novelty" if args.rows == 1_000_000
                                               else f"novelty_rows{args.rows}")
    out = Path(args.out) if args.out else RESULTS
    columns = [("data", "data"), ("training rows", "n_train"), ("method", "method"),
               ("fit s", "fit_s"), ("ROC AUC", "auc"), ("m / SVs", "n_components"),
               ("train outside %", "train_outside_pct"), ("note", "note")]
    print(write_results(name, payload, columns, out))


if __name__ == "__main__":
    main()
