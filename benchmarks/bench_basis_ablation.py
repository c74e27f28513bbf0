"""Reduced-set schemes at equal basis size: random, k-means, IRSVM, systematic, clustering.

ReducedSVC (RBF, fixed C and gamma per data set) on ijcnn1 (49,990 / 91,701), a9a
(32,561 / 16,281), banana and ringnorm (IDA split 1: 400 train rows each), and on request
letter (15,000 / 5,000, 26 classes; sizes up to the 1,225 that ``n_basis='auto'`` gives it,
three seeds: what fewer basis functions than 'auto' cost in test error). For every scheme
and basis size m: test error, the time spent selecting the basis, and the total fit time
(selection included). Per data set the report states the smallest m at which each scheme
reaches the random scheme's test error at m_ref = min(1000, n), and what selecting it cost.

Schemes: 'random' (stratified rows), 'kmeans' (k-means++ centroids of a subsample),
'incremental' (IRSVM with delta = 0.001 so that it can reach every m; its natural size at
the default delta = 0.1 is reported separately), 'systematic' (inner C = the model's C) and
'clustering' (class-wise k-means with Oyang-Hwang widths, which replace gamma).

Run: ``python benchmarks/bench_basis_ablation.py`` (about 20 minutes on 2 cores), or
``--quick`` (banana and ringnorm, two sizes, seconds); ``--datasets letter --schemes random
kmeans --out DIR`` for letter (about 2 minutes). BLAS runs single-threaded (see
``_blas.py``). Writes basis_ablation{,_quick}.json/.md in benchmarks/results or ``--out``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from _blas import single_thread_blas
from _harness import mark_baseline, run_isolated, write_results

single_thread_blas()

from sparsekernel import ReducedSVC  # noqa: E402
from sparsekernel.basis import (  # noqa: E402
    BasisSelector,
    ClusteringBasis,
    IncrementalBasis,
    KMeansBasis,
    RandomBasis,
    SystematicBasis,
)
from sparsekernel.datasets import (  # noqa: E402
    find_shared_data,
    load_ida,
    load_svmlight_path,
    load_svmlight_paths,
)

#: (gamma, C) per data set: ijcnn1 LIBSVM's reference gamma and C; a9a chosen on a 6,000-row
#: validation split at m = 300 from {0.01, 0.03, 0.1} x {1, 10, 100}; banana and ringnorm by
#: 5-fold CV of the full-kernel SmoothSVC on the training split; letter the suite's
#: (bench_suite.py: gamma 'scale', the C its 3-fold CV picks for ReducedSVC).
SETTINGS = {"ijcnn1": (2.0, 32.0), "a9a": (0.1, 10.0), "banana": (1.0, 100.0),
            "ringnorm": (0.1, 1.0), "letter": ("scale", 100.0)}
SCHEMES = ("random", "kmeans", "incremental", "systematic", "clustering")


class TimedBasis(BasisSelector):
    """Wraps a selector and records how long ``select`` took (benchmark only)."""

    def __init__(self, inner):
        self.inner = inner

    def select(self, X, y=None, *, n_basis, random_state=None, kernel=None):
        t0 = time.perf_counter()
        res = self.inner.select(X, y, n_basis=n_basis, random_state=random_state,
                                kernel=kernel)
        self.elapsed = time.perf_counter() - t0
        return res


def make_selector(scheme, C, natural=False):
    if scheme == "random":
        return RandomBasis()
    if scheme == "kmeans":
        return KMeansBasis()
    if scheme == "incremental":
        return IncrementalBasis() if natural else IncrementalBasis(delta=1e-3,
                                                                   max_rejections=1000)
    if scheme == "systematic":
        return SystematicBasis(C=C)
    return ClusteringBasis()


def load(name, quick):
    if name in ("banana", "ringnorm"):
        root = find_shared_data(f"raetsch_{name}")
        if root is None:
            sys.exit(f"raetsch_{name} not found: set SPARSEKERNEL_DATA.")
        return load_ida(root, name, split=1)
    if name == "letter":
        from _suite_data import load as load_suite

        return load_suite("letter")
    root = find_shared_data(name)
    if root is None:
        sys.exit(f"{name} not found: set SPARSEKERNEL_DATA.")
    if name == "a9a":
        (X, y), (Xt, yt) = [load_svmlight_path(root / f, n_features=123)
                            for f in ("a9a.xz", "a9a.t.xz")]
        return X.toarray(), y, Xt.toarray(), yt
    parts = load_svmlight_paths([root / f for f in ("ijcnn1.tr.xz", "ijcnn1.val.xz",
                                                    "ijcnn1.t.xz")], n_features=22)
    (Xa, ya), (Xv, yv), (Xt, yt) = [(X.toarray(), y) for X, y in parts]
    return np.vstack([Xa, Xv]), np.r_[ya, yv], Xt, yt


def fit_one(X, y, Xt, yt, gamma, C, selector, m, seed):
    timed = TimedBasis(selector)
    t0 = time.perf_counter()
    clf = ReducedSVC(gamma=gamma, C=C, n_basis=m, basis=timed, random_state=seed).fit(X, y)
    fit_s = time.perf_counter() - t0
    return {"error": 100.0 * np.mean(clf.predict(Xt) != yt), "select_s": timed.elapsed,
            "fit_s": fit_s, "m": clf.basis_.shape[0]}


def run_dataset(name, sizes, seeds, quick, schemes=SCHEMES):
    """Child process: every scheme and size on one data set."""
    X, y, Xt, yt = load(name, quick)
    mark_baseline()
    gamma, C = SETTINGS[name]
    rows = []
    for scheme in schemes:
        for m in sizes:
            runs = [fit_one(X, y, Xt, yt, gamma, C, make_selector(scheme, C), m, s)
                    for s in seeds]
            rows.append(_aggregate(name, scheme, m, runs))
    if "incremental" in schemes:
        natural = [fit_one(X, y, Xt, yt, gamma, C, make_selector("incremental", C, True),
                           max(sizes), s) for s in seeds]
        rows.append(_aggregate(name, "incremental (delta=0.1, own size)", max(sizes), natural))
    return {"rows": rows, "n_train": X.shape[0], "n_test": Xt.shape[0], "d": X.shape[1]}


def _aggregate(name, scheme, m, runs):
    err = np.array([r["error"] for r in runs])
    return {"dataset": name, "scheme": scheme, "n_basis": m,
            "m_obtained": float(np.mean([r["m"] for r in runs])),
            "test_error_pct": float(err.mean()), "error_std": float(err.std()),
            "select_s": float(np.mean([r["select_s"] for r in runs])),
            "fit_s": float(np.mean([r["fit_s"] for r in runs])), "n_seeds": len(runs)}


def summarize(name, rows, m_ref, schemes=SCHEMES):
    """Smallest m at which each scheme's error <= random's error at m_ref."""
    ref = next(r for r in rows if r["scheme"] == "random" and r["n_basis"] == m_ref)
    out = []
    for scheme in schemes:
        mine = sorted((r for r in rows if r["scheme"] == scheme), key=lambda r: r["n_basis"])
        hit = next((r for r in mine if r["test_error_pct"] <= ref["test_error_pct"]), None)
        missed = f"not reached up to {mine[-1]['n_basis']}"
        out.append({"dataset": name, "scheme": scheme, "reference_error_pct":
                    ref["test_error_pct"], "m_ref": m_ref,
                    "m_needed": hit["n_basis"] if hit else missed,
                    "error_at_m_needed": hit["test_error_pct"] if hit else "",
                    "select_s_at_m_needed": hit["select_s"] if hit else "",
                    "fit_s_at_m_needed": hit["fit_s"] if hit else ""})
    return out


def plan(name, quick):
    if quick:
        return [10, 20], [0]
    if name in ("banana", "ringnorm"):  # n = 400: m_ref = 400, five seeds (cheap)
        return [10, 20, 50, 100, 200, 400], [0, 1, 2, 3, 4]
    if name == "letter":  # up to n_basis='auto' (1,225; LowRankSVC keeps 1,074 of them)
        return [700, 900, 1074, 1225], [0, 1, 2]
    return [50, 100, 200, 500, 1000], [0]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="banana and ringnorm, two sizes")
    ap.add_argument("--datasets", nargs="*", default=None,
                    help="of ijcnn1, a9a, banana, ringnorm (the default) and letter")
    ap.add_argument("--schemes", nargs="*", default=list(SCHEMES), choices=SCHEMES,
                    help="random (the reference) is always run")
    ap.add_argument("--out", default=None,
                    help="results folder (default benchmarks/results/basis_ablation)")
    args = ap.parse_args(argv)
    names = args.datasets or (["banana", "ringnorm"] if args.quick else
                              ["ijcnn1", "a9a", "banana", "ringnorm"])
    unknown = sorted(set(names) - set(SETTINGS))
    if unknown:
        ap.error(f"--datasets: unknown {unknown}; expected some of {sorted(SETTINGS)}")
    schemes = tuple(s for s in SCHEMES if s == "random" or s in args.schemes)
    rows, summary, notes = [], [], []
    for name in names:
        sizes, seeds = plan(name, args.quick)
        out = run_isolated(run_dataset, name, sizes, seeds, args.quick, schemes)
        if "error" in out:
            raise SystemExit(f"{name}: {out['error']}")
        rows += out["rows"]
        summary += summarize(name, out["rows"], max(sizes), schemes)
        notes.append(f"{name}: n_train={out['n_train']}, n_test={out['n_test']}, "
                     f"d={out['d']}, (gamma, C)={SETTINGS[name]}, sizes={sizes}, "
                     f"seeds={len(seeds)}, peak RSS {out['peak_rss_mib']} MiB")
    notes += [
        "m_ref = a data set's largest size: 1000 for ijcnn1 and a9a, 400 (every training row) "
        "for banana and ringnorm, 1225 (n_basis='auto') for letter",
        "select s = time inside the selector; fit s = the whole ReducedSVC.fit (selection "
        "included); errors averaged over the seeds shown",
        "clustering uses the Oyang-Hwang widths verbatim (beta = 1.6210, n_r = 10): they are "
        "density-estimation bandwidths, much narrower than the model's gamma",
        f"BLAS single-threaded; load average {os.getloadavg()[0]:.1f} (1 min) at the end "
        f"of the run on {os.cpu_count()} cores",
    ]
    payload = {"title": "Reduced-set schemes at equal basis size (ReducedSVC)"
               + (" [quick]" if args.quick else ""), "notes": notes, "rows": rows,
               "summary": summary}
    cols = [("dataset", "dataset"), ("scheme", "scheme"), ("m asked", "n_basis"),
            ("m obtained", "m_obtained"), ("test error %", "test_error_pct"),
            ("std", "error_std"), ("select s", "select_s"), ("fit s", "fit_s")]
    name = "basis_ablation_quick" if args.quick else "basis_ablation"
    path = write_results(name, payload, cols, args.out)
    _append_summary(path, summary)
    print(path.read_text())


def _append_summary(path, summary):
    lines = ["", "## Basis size needed to reach the random scheme's error at m_ref", "",
             "| dataset | scheme | random error at m_ref % | m_ref | m needed | error there % "
             "| select s there | fit s there |", "|---|---|---|---|---|---|---|---|"]
    for s in summary:
        cells = [s["dataset"], s["scheme"], f"{s['reference_error_pct']:.2f}", s["m_ref"],
                 s["m_needed"], _fmt(s["error_at_m_needed"]), _fmt(s["select_s_at_m_needed"]),
                 _fmt(s["fit_s_at_m_needed"])]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    with open(path, "a") as fh:
        fh.write("\n".join(lines) + "\n")


def _fmt(v):
    return f"{v:.3g}" if isinstance(v, float) else str(v)


if __name__ == "__main__":
    main()
