"""Out-of-sample check of ``n_basis='auto'``: LowRankSVC at its defaults against a tuned SVC.

The ``n_basis='auto'`` rule was designed on the suite's sets (dna, pendigits, letter,
mnist_5k, shuttle, a9a, w8a, ijcnn1, fashion_mnist); this benchmark runs it on classification
sets it never saw (``_auto_data.SETS``: Rätsch's IDA splits, Ripley, the full banana set,
scikit-learn's bundled sets and generated ones, 150 to 7,000 rows).

Protocol
--------
Every method is ``Pipeline([StandardScaler(), estimator])``; its C is chosen from
{1, 10, 100} by 3-fold cross-validation on the training part (``GridSearchCV``,
``StratifiedKFold(3, shuffle=True, random_state=0)``, accuracy), then the refit model is
scored on the test part. Methods:

- ``SVC``: ``sklearn.svm.SVC(gamma='scale')``, the reference ("tuned SVC");
- ``LowRankSVC``: ``sparsekernel.LowRankSVC(random_state=0)`` at its defaults;
- ``LowRankSVC[n_basis=1000]``: ``n_basis = min(1000, int(2 n_train / 3))`` (the size of a
  CV training fold), the same number in the CV fits and the refit;
- opt-in (``--methods``): ``LSSVC`` and ``KernelLogisticRegression``, random_state=0.

Recorded per (set, method): rows, features, classes, best C, test error %, gap to SVC in
points, basis functions of the refit model (rows of ``basis_``; SVC: support vectors), the
refit time (``refit_time_``), the whole search's wall time, the 1-minute load average before
the method, and the warnings raised. Each method runs in a freshly spawned process
(``_harness.run_isolated``) that loads the set itself. The summary gives, for LowRankSVC at
its defaults, the mean and largest gap to SVC, the sets within +0.5 points of it, and the
largest error difference between the defaults and ``n_basis=1000``.

Commands::

    python benchmarks/bench_auto.py                    # every set: results/auto/auto.json, .md
    python benchmarks/bench_auto.py --list             # the sets and methods
    python benchmarks/bench_auto.py --sets raetsch_heart,wine --out /tmp/auto_smoke
    python benchmarks/bench_auto.py --methods SVC,LowRankSVC,LSSVC,KernelLogisticRegression

A set whose shared data file is missing is skipped with a note; nothing is downloaded.
"""

from __future__ import annotations

import argparse
import json
import os
import warnings
from pathlib import Path

import numpy as np

from _auto_data import SETS, load
from _harness import RESULTS, environment, load_note, mark_baseline, run_isolated, timed
from bench_suite import footer, machine, table, warning_summary

C_GRID = (1.0, 10.0, 100.0)
REFERENCE, AUTO, FIXED = "SVC", "LowRankSVC", "LowRankSVC[n_basis=1000]"
#: name -> run by default
METHODS = {REFERENCE: True, AUTO: True, FIXED: True, "LSSVC": False,
           "KernelLogisticRegression": False}
COLUMNS = [("data set", "data"), ("n", "n_train"), ("d", "n_features"),
           ("classes", "n_classes"), ("method", "method"), ("best C", "best_C"),
           ("error %", "error_pct"), ("gap to SVC (points)", "gap_points"),
           ("basis / SV", "n_basis"), ("refit s", "refit_s"), ("search s", "search_s"),
           ("load", "load_1min"), ("note", "note")]


def make(name, n_basis_fixed):
    if name == REFERENCE:
        from sklearn.svm import SVC

        return SVC(gamma="scale")
    import sparsekernel

    if name == FIXED:
        return sparsekernel.LowRankSVC(n_basis=n_basis_fixed, random_state=0)
    return getattr(sparsekernel, name)(random_state=0)


def basis_count(est):
    """Rows of ``basis_`` (sparsekernel), else the support vectors (SVC)."""
    basis = getattr(est, "basis_", None)
    return int(basis.shape[0]) if basis is not None else int(np.sum(est.n_support_))


def evaluate(data, name, n_basis_fixed):
    """Child process: load the set, search C, score the refit on the test part."""
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    X, y, Xt, yt = load(data)
    mark_baseline()
    pipe = Pipeline([("scale", StandardScaler()), ("clf", make(name, n_basis_fixed))])
    gs = GridSearchCV(pipe, {"clf__C": list(C_GRID)}, scoring="accuracy", n_jobs=1,
                      cv=StratifiedKFold(3, shuffle=True, random_state=0), error_score="raise")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, search_s = timed(gs.fit, X, y)
        error = 100.0 * float(np.mean(gs.predict(Xt) != yt))
    return {"best_C": C_GRID[gs.best_index_], "error_pct": error,
            "cv_error_pct": 100.0 * (1.0 - float(gs.best_score_)),
            "n_basis": basis_count(gs.best_estimator_[-1]), "refit_s": float(gs.refit_time_),
            "search_s": search_s, **warning_summary(caught)}


def run_set(data, methods):
    """Every method on one set (or [] when its data are missing); gaps to SVC filled in."""
    try:
        X, y, Xt, _ = load(data)
    except FileNotFoundError as exc:
        print(f"skipped {data}: {exc}", flush=True)
        return []
    shape = {"n_train": int(X.shape[0]), "n_test": int(Xt.shape[0]),
             "n_features": int(X.shape[1]), "n_classes": int(np.unique(y).size)}
    n_basis_fixed = min(1000, int(X.shape[0] * 2 / 3))
    rows = []
    for name in methods:
        row = {"data": data, "method": name, **shape, "load_1min": os.getloadavg()[0]}
        if name == FIXED:
            row["n_basis_requested"] = n_basis_fixed
        row.update(run_isolated(evaluate, data, name, n_basis_fixed))
        status = row.get("error") or f"C {row['best_C']:g}, error {row['error_pct']:.2f} %"
        print(f"{data:<26} {name:<26} {status}", flush=True)
        rows.append(row)
    ref = next((r for r in rows if r["method"] == REFERENCE and "error_pct" in r), None)
    for row in rows:
        if ref is not None and "error_pct" in row:
            row["gap_points"] = row["error_pct"] - ref["error_pct"]
    return rows


def summary(rows):
    """LowRankSVC at its defaults over all sets: gap to SVC and to n_basis=1000."""
    auto = [r for r in rows if r["method"] == AUTO and "gap_points" in r]
    out = {}
    if auto:
        worst = max(auto, key=lambda r: r["gap_points"])
        out.update(sets=len(auto), mean_gap_points=float(np.mean([r["gap_points"] for r in auto])),
                   max_gap_points=worst["gap_points"], max_gap_set=worst["data"],
                   within_half_point=sum(r["gap_points"] <= 0.5 for r in auto))
    fixed = {r["data"]: r["error_pct"] for r in rows if r["method"] == FIXED and "error_pct" in r}
    diffs = [(r["error_pct"] - fixed[r["data"]], r["data"]) for r in rows
             if r["method"] == AUTO and "error_pct" in r and r["data"] in fixed]
    if diffs:
        out["max_auto_minus_fixed_points"], out["max_auto_minus_fixed_set"] = max(diffs)
    return out


def summary_lines(s):
    lines = []
    if "sets" in s:
        lines += [f"- mean gap to SVC: {s['mean_gap_points']:+.2f} points over {s['sets']} sets",
                  f"- largest gap: {s['max_gap_points']:+.2f} points ({s['max_gap_set']})",
                  f"- sets within +0.5 points of SVC: {s['within_half_point']} of {s['sets']}"]
    if "max_auto_minus_fixed_points" in s:
        lines.append(f"- largest (defaults - n_basis=1000) error difference: "
                     f"{s['max_auto_minus_fixed_points']:+.2f} points "
                     f"({s['max_auto_minus_fixed_set']})")
    return lines or ["- (no LowRankSVC row with an SVC reference)"]


def notes(start_load):
    return [start_load,
            "every method is Pipeline(StandardScaler(), estimator); C from "
            f"{list(C_GRID)} by 3-fold StratifiedKFold CV (shuffled, seed 0, accuracy) on the "
            "training part (GridSearchCV); error % is the refit's on the test part",
            "SVC: sklearn SVC(gamma='scale'), the reference; LowRankSVC: "
            "LowRankSVC(random_state=0) at its defaults (n_basis='auto'); "
            "LowRankSVC[n_basis=1000]: n_basis = min(1000, int(2 n / 3)) in CV and refit",
            "basis / SV: basis functions of the refit model (rows of basis_, which can be fewer "
            "than requested: numerically redundant landmarks are dropped), support vectors "
            "for SVC; refit s: GridSearchCV.refit_time_; search s: the whole search (CV fits "
            "and refit); load: 1-minute load average just before the method",
            "each method runs in a freshly spawned process that loads the set itself",
            "sets: none of the suite's (the ones n_basis='auto' was designed on); IDA sets "
            "split 1, Ripley train/test files, the others stratified 70/30 with seed 0"]


def write(rows, out, start_load):
    payload = {"title": "n_basis='auto' on unseen sets: LowRankSVC against a tuned SVC",
               "protocol": {"C_grid": list(C_GRID), "cv_folds": 3, "scaler": "StandardScaler"},
               "notes": notes(start_load), "machine": machine(), "environment": environment(),
               "summary": summary(rows), "rows": rows}
    out.mkdir(parents=True, exist_ok=True)
    (out / "auto.json").write_text(json.dumps(payload, indent=2, default=float) + "\n")
    lines = [f"# {payload['title']}", ""] + [f"- {n}" for n in payload["notes"]] + [""]
    lines += table(rows, COLUMNS) + ["", "## Summary: LowRankSVC at its defaults", ""]
    lines += summary_lines(payload["summary"]) + ["", footer(payload)]
    (out / "auto.md").write_text("\n".join(lines) + "\n")
    return out / "auto.md"


def names(text, known, default):
    chosen = [s.strip() for s in text.split(",") if s.strip()] if text else default
    unknown = [s for s in chosen if s not in known]
    if unknown:
        raise SystemExit(f"unknown: {', '.join(unknown)} (see --list)")
    return chosen


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", help="comma-separated data sets (default: all)")
    ap.add_argument("--methods", help="comma-separated methods (default: "
                    + ", ".join(m for m, on in METHODS.items() if on) + ")")
    ap.add_argument("--out", default=None,
                    help="results folder (default benchmarks/results/auto)")
    ap.add_argument("--list", action="store_true", help="print the sets and methods, and exit")
    args = ap.parse_args(argv)
    if args.list:
        print("sets: " + ", ".join(SETS))
        print("methods: " + ", ".join(m + ("" if on else " (opt-in)")
                                      for m, on in METHODS.items()))
        return
    start_load = load_note()
    sets = names(args.sets, SETS, list(SETS))
    methods = names(args.methods, METHODS, [m for m, on in METHODS.items() if on])
    rows = [row for data in sets for row in run_set(data, methods)]
    path = write(rows, Path(args.out) if args.out else RESULTS, start_load)
    print(path.read_text())


if __name__ == "__main__":
    main()
