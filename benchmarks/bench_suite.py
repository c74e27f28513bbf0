"""The suite: sparsekernel against its peers on every data set, each at its own best C.

Classification (``_suite_data.CLASSIFICATION``: dna, pendigits, letter, mnist_5k, shuttle,
a9a, w8a, ijcnn1, Fashion-MNIST 60k): scikit-learn ``SVC``, Intel's ``sklearnex.svm.SVC``,
``Nystroem`` (min(n, 1000) components) + ``LinearSVC`` and the sparsekernel classifiers at
their defaults. Regression (abalone, california_housing): scikit-learn ``SVR``,
``KernelRidge``, ``sklearnex.svm.SVR`` and the sparsekernel regressors. ``--list`` prints
the methods, the ones run by default and the caps.

Protocol. Every method gets the set's gamma (``_suite_data.SETTINGS``: 'scale' resolved to
1 / (n_features * X.var()) on the training rows, the same number for every method, since
``Nystroem`` and ``KernelRidge`` take no 'scale'; ijcnn1 gamma = 2), random_state = 0 where
it has one, and its own best C from {1, 10, 100} chosen by 3-fold cross-validation on the
training set (``GridSearchCV``, shuffled folds with seed 0, stratified for classifiers,
accuracy or R^2), as a user comparing them would. The C of each library is its own (the
sparsekernel family weights the loss by C/2; libsvm by C): each is searched on the same
grid, not translated. ``KernelRidge`` searches alpha = 1 / C on centred targets (the LS-SVM
objective with C, less its bias, is kernel ridge with alpha = 1 / C). Reported per (data
set, method): best C, the fit time of the final refit (``refit_time_``), the whole search's
wall time (cross-validation fits and refit), predict time on the test set (the fastest of up
to three calls), test error
(classification: % misclassified; regression: RMSE, R^2 and 100 (1 - R^2) as the error in
points), model size (support vectors or basis functions), peak RSS of fitting and
predicting, and the 1-minute load average just before the method started. ``--no-search``
fits every method once at C = 10 instead. ``--again`` times the same fit once more (a clone of
the fitted model) in the same process right after it: the first fit of a process at a size
pays one-off costs (lazy imports, thread pools, first touches of fresh memory) and the
second one does not; "first - again" is what the issue's cold-start line measures.

Isolation. Each method runs in its own freshly spawned process that loads the data itself
(``_harness``); a method that raises, dies (out of memory) or runs past ``--timeout`` is
recorded as an error row and the suite goes on.

Commands::

    python benchmarks/bench_suite.py                 # the full suite (hours on 2 cores)
    python benchmarks/bench_suite.py --quick         # small sets, C = 10: suite_quick.*
    python benchmarks/bench_suite.py --sets ijcnn1 --methods SVC,LowRankSVC
    python benchmarks/bench_suite.py --busy          # again beside a busy core: suite_busy.*
    python benchmarks/bench_suite.py --quick --again # first and second fit: suite_quick_again.*
    python benchmarks/bench_suite.py --no-search --sets fashion_mnist \
        --methods sklearnex.SVC,LowRankSVC \
        --params LowRankSVC:n_basis=4000,memory_budget=8GB,tol=1e-4   # one method's settings

Writes benchmarks/results/suite/suite{_quick}.json, .md and .png (fit-time ratio to SVC / SVR and
error gap per data set; the table also gives each fit time over oneDAL's, sklearnex's SVC /
SVR, where it ran); ``--no-search``, ``--max-rows``, ``--threads``, ``--params`` (a method
with parameters besides C and gamma, shown in its name) and ``--again`` add to the name
(suite_nosearch_max300.json ...), so a smoke run never replaces the headline files. A run
restricted by ``--sets`` or ``--methods`` replaces its own rows in an existing file of the
same protocol and keeps the others, so one set can be rerun after a failure; every row
carries its date and load. ``--busy`` reruns the selection while a spawned process spins a
pure-Python loop on one core (a laptop doing other things) and reports each method's
slowdown against the quiet rows (suite_busy{_quick}.*), running quietly first whatever the
quiet file lacks.
"""

from __future__ import annotations

import argparse
import ast
import importlib.metadata
import importlib.util
import json
import multiprocessing as mp
import os
import platform
import time
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from _harness import RESULTS, _child, environment, load_note, mark_baseline, timed
from _suite_data import CLASSIFICATION, REGRESSION, SETTINGS, load

C_GRID = (1.0, 10.0, 100.0)
C_NO_SEARCH = 10.0
CV_FOLDS = 3
QUICK_SETS = ("dna", "pendigits", "letter", "mnist_5k", "abalone")
REFERENCE = {"classification": "SVC", "regression": "SVR"}
FULL_KERNEL_MAX_N = 5000  # the n x n kernel: 200 MB at 5000 rows, and O(n^3) to solve
KERNEL_RIDGE_MAX_N = 15000  # the n x n kernel in float64 (1.8 GB) plus its factorization


# --------------------------------------------------------------------------- methods
@dataclass(frozen=True)
class Method:
    """One competitor: how to build it for a gamma and n, and which parameter C sets."""

    name: str
    task: str
    make: Callable
    library: str = "sparsekernel"
    param: str = "C"
    inverse_c: bool = False  # the parameter is 1 / C (KernelRidge's alpha)
    default: bool = True
    max_n: int | None = None
    why: str = ""
    requires: tuple = ()  # modules that must be importable

    def value(self, C):
        return 1.0 / C if self.inverse_c else C


def _svc(gamma, n):
    from sklearn.svm import SVC

    return SVC(gamma=gamma)


def _svr(gamma, n):
    from sklearn.svm import SVR

    return SVR(gamma=gamma)


def _sklearnex_svc(gamma, n):
    from sklearnex.svm import SVC

    return SVC(gamma=gamma)


def _sklearnex_svr(gamma, n):
    from sklearnex.svm import SVR

    return SVR(gamma=gamma)


def _nystroem(gamma, n):
    from sklearn.kernel_approximation import Nystroem
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import LinearSVC

    return make_pipeline(Nystroem(gamma=gamma, n_components=min(n, 1000)), LinearSVC())


def _kernel_ridge(gamma, n):
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.preprocessing import StandardScaler

    # No intercept in KernelRidge: centre the targets, as a user would.
    return TransformedTargetRegressor(regressor=KernelRidge(kernel="rbf", gamma=gamma),
                                      transformer=StandardScaler(with_std=False))


def _ours(name, gamma=True):
    def make(g, n):
        import sparsekernel

        cls = getattr(sparsekernel, name)
        return cls(gamma=g) if gamma else cls()

    return make


def _reduced_set(gamma, n):
    from sklearn.svm import SVC

    from sparsekernel import ReducedSetSVC

    return ReducedSetSVC(svc=SVC(gamma=gamma))


_FULL = "the full n x n kernel"
_CLF, _REG = "classification", "regression"
METHODS = {m.name: m for m in [
    Method("SVC", _CLF, _svc, library="scikit-learn"),
    Method("sklearnex.SVC", _CLF, _sklearnex_svc, library="sklearnex",
           requires=("sklearnex",)),
    Method("Nystroem+LinearSVC", _CLF, _nystroem, library="scikit-learn",
           param="linearsvc__C"),
    Method("LowRankSVC", _CLF, _ours("LowRankSVC")),
    Method("ReducedSVC", _CLF, _ours("ReducedSVC")),
    Method("LSSVC", _CLF, _ours("LSSVC")),
    Method("SmoothSVC", _CLF, _ours("SmoothSVC"), max_n=FULL_KERNEL_MAX_N, why=_FULL),
    Method("PrunedLSSVC", _CLF, _ours("PrunedLSSVC"), max_n=FULL_KERNEL_MAX_N,
           why=_FULL + ", pruned in rounds"),
    Method("SparseMarginClassifier", _CLF, _ours("SparseMarginClassifier"), default=False,
           max_n=FULL_KERNEL_MAX_N, why="L-BFGS over the 10 expansion vectors, an SVM per "
           "step: minutes a fit at a few thousand rows (bench_slmc.py covers it)"),
    Method("SparseFisherDiscriminant", _CLF, _ours("SparseFisherDiscriminant"), default=False,
           max_n=FULL_KERNEL_MAX_N, why="as SparseMarginClassifier"),
    Method("ReducedSetSVC", _CLF, _reduced_set, param="svc__C", default=False,
           why="an SVC fit plus its compression: slower to fit than SVC by construction; it "
           "buys prediction speed (bench_slmc.py)"),
    Method("MapReduceSVC", _CLF, _ours("MapReduceSVC"), default=False, requires=("dask",),
           why="starts a Dask cluster per fit: a many-machine method"),
    Method("LowRankLSSVC", _CLF, _ours("LowRankLSSVC", gamma=False), default=False,
           why="takes no gamma (learns 5 bases of its own); meant for small data"),
    Method("SVR", _REG, _svr, library="scikit-learn"),
    Method("sklearnex.SVR", _REG, _sklearnex_svr, library="sklearnex",
           requires=("sklearnex",)),
    Method("KernelRidge", _REG, _kernel_ridge, library="scikit-learn",
           param="regressor__alpha", inverse_c=True, max_n=KERNEL_RIDGE_MAX_N,
           why="O(n^2) memory: " + _FULL),
    Method("ReducedSVR", _REG, _ours("ReducedSVR")),
    Method("LSSVR", _REG, _ours("LSSVR")),
    Method("SmoothSVR", _REG, _ours("SmoothSVR"), max_n=FULL_KERNEL_MAX_N, why=_FULL),
    Method("PrunedLSSVR", _REG, _ours("PrunedLSSVR"), max_n=FULL_KERNEL_MAX_N,
           why=_FULL + ", pruned in rounds"),
    Method("OnlineLSSVR", _REG, _ours("OnlineLSSVR")),
    Method("LowRankLSSVR", _REG, _ours("LowRankLSSVR", gamma=False), default=False,
           why="takes no gamma (learns 5 bases of its own); meant for small data"),
]}


def task_of(data):
    return _CLF if data in CLASSIFICATION else _REG


def unlisted_estimators():
    """sparsekernel classifiers and regressors the suite does not know (say so, not skip)."""
    from sklearn.base import ClassifierMixin, RegressorMixin

    import sparsekernel

    names = [n for n in sparsekernel.__all__ if isinstance(getattr(sparsekernel, n), type)]
    return sorted(n for n in names if n not in METHODS
                  and issubclass(getattr(sparsekernel, n), (ClassifierMixin, RegressorMixin)))


# --------------------------------------------------------------------------- one method
def resolve_gamma(X, setting):
    """A number for every method: 'scale' is 1 / (n_features * X.var()), as SVC's."""
    if setting != "scale":
        return float(setting)
    var = X.multiply(X).mean() - X.mean() ** 2 if sp.issparse(X) else X.var()
    return float(1.0 / (X.shape[1] * var)) if var > 0 else 1.0


def subsample(X, y, max_rows, task):
    """At most ``max_rows`` training rows (stratified where every class can be kept)."""
    if max_rows is None or max_rows >= X.shape[0]:
        return X, y
    from sklearn.model_selection import train_test_split

    rows = np.arange(X.shape[0])
    try:
        keep = train_test_split(rows, train_size=max_rows, random_state=0,
                                stratify=y if task == _CLF else None)[0]
    except ValueError:  # a class too rare to stratify: a plain random subset
        keep = np.random.RandomState(0).choice(rows, max_rows, replace=False)
    keep.sort()
    return X[keep], y[keep]


def seeded(est):
    """random_state = 0 on the estimator and on every step that accepts one."""
    keys = [k for k in est.get_params() if k == "random_state" or k.endswith("__random_state")]
    return est.set_params(**dict.fromkeys(keys, 0))


def model_size(model):
    """Support vectors, basis functions, landmarks or (KernelRidge) training rows."""
    model = getattr(model, "regressor_", model)
    if hasattr(model, "steps"):
        return int(model.steps[0][1].components_.shape[0])
    n_support = getattr(model, "n_support_", None)
    if n_support is not None:
        return int(np.sum(n_support))
    dual = getattr(model, "dual_coef_", None)
    return int(dual.shape[0]) if dual is not None else None


def cv_splitter(task):
    from sklearn.model_selection import KFold, StratifiedKFold

    # Shuffled: several LIBSVM files are ordered by label in places.
    splitter = StratifiedKFold if task == _CLF else KFold
    return splitter(CV_FOLDS, shuffle=True, random_state=0)


def fit(est, method, X, y, search, again=False):
    """Fit at C = 10, or search C on the grid; return the model and its timings. ``again``:
    the same fit timed once more (a clone of the model), in this process, right after."""
    if not search:
        est.set_params(**{method.param: method.value(C_NO_SEARCH)})
        _, fit_s = timed(est.fit, X, y)
        model, timing = est, {"best_C": C_NO_SEARCH, "fit_s": fit_s}
    else:
        from sklearn.model_selection import GridSearchCV

        grid = {method.param: [method.value(C) for C in C_GRID]}
        gs = GridSearchCV(est, grid, cv=cv_splitter(method.task), n_jobs=1,
                          error_score="raise")
        _, search_s = timed(gs.fit, X, y)
        # One parameter: the candidates keep the grid's order.
        model, timing = gs.best_estimator_, {
            "best_C": C_GRID[gs.best_index_], "fit_s": gs.refit_time_, "search_s": search_s,
            "cv_score": float(gs.best_score_)}
    if again:
        from sklearn.base import clone

        _, timing["fit_again_s"] = timed(clone(model).fit, X, y)
        timing["first_extra_s"] = timing["fit_s"] - timing["fit_again_s"]
    return model, timing


def scores(task, y_true, pred):
    if task == _CLF:
        return {"error_pct": 100.0 * float(np.mean(pred != y_true))}
    resid = y_true - pred
    r2 = 1.0 - float(np.sum(resid ** 2) / np.sum((y_true - y_true.mean()) ** 2))
    return {"rmse": float(np.sqrt(np.mean(resid ** 2))), "r2": r2,
            "error_pct": 100.0 * (1.0 - r2)}


def warning_summary(caught):
    """Counts per category, and the first message of each (the full text is long)."""
    counts = Counter(w.category.__name__ for w in caught)
    first = {}
    for w in caught:
        first.setdefault(w.category.__name__, str(w.message)[:200])
    return {"warnings": ", ".join(f"{name} x{k}" for name, k in sorted(counts.items())),
            "warning_messages": first}


def limit_threads(threads):
    if threads is None:
        return
    from threadpoolctl import threadpool_limits

    threadpool_limits(threads)
    if importlib.util.find_spec("daal4py") is not None:  # oneDAL keeps its own pool
        import daal4py

        daal4py.daalinit(threads)


def evaluate(data, name, search, max_rows, threads, params=None, again=False):
    """Child process: load the set, search or fit, predict the test set, score."""
    method = METHODS[name]
    limit_threads(threads)
    X, y, Xt, yt = load(data)
    X, y = subsample(X, y, max_rows, method.task)
    shape = {"n_train": int(X.shape[0]), "n_test": int(Xt.shape[0]),
             "n_features": int(X.shape[1])}
    if method.task == _CLF:
        shape["classes"] = int(np.unique(y).size)
    if method.max_n is not None and X.shape[0] > method.max_n:
        return {**shape, "skipped": f"n > {method.max_n}: {method.why}"}
    gamma = resolve_gamma(X, SETTINGS[data]["gamma"])
    mark_baseline()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = seeded(method.make(gamma, X.shape[0])).set_params(**(params or {}))
        model, timing = fit(est, method, X, y, search, again)
        pred, predict_s = fastest(model.predict, Xt)
    return {**shape, "gamma": gamma, **timing, "predict_s": predict_s,
            **scores(method.task, yt, pred), "model_size": model_size(model),
            **warning_summary(caught)}


#: predict is timed as the fastest of up to PREDICT_CALLS calls while they take less than
#: PREDICT_SPREE_S in all: a few-ms prediction moved by 2-3x from one call to the next
#: (pendigits: 2-15 ms), a multi-second one (SVC on a9a, 7.7 s) runs once.
PREDICT_CALLS, PREDICT_SPREE_S = 3, 2.0


def fastest(fn, *args):
    """(result, seconds of the fastest call) over up to PREDICT_CALLS calls."""
    out, best = timed(fn, *args)
    spent = best
    for _ in range(PREDICT_CALLS - 1):
        if spent >= PREDICT_SPREE_S:
            break
        out, seconds = timed(fn, *args)
        best, spent = min(best, seconds), spent + seconds
    return out, best


# --------------------------------------------------------------------------- isolation
def run_with_timeout(fn, args, timeout):
    """``_harness.run_isolated`` with a time limit: a child past it is killed, not awaited."""
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, fn, args))
    proc.start()
    child.close()
    try:
        if parent.poll(timeout):
            return parent.recv()
        return {"error": f"timeout: no result after {timeout:g} s (child killed)"}
    except EOFError:  # the child died without a word: killed for memory, or crashed
        proc.join()
        return {"error": f"child process died (exit code {proc.exitcode})"}
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()


def spin():
    """A busy core: the pure-Python loop of a laptop doing other things."""
    while True:
        pass


def run_method(data, name, args):
    method = METHODS[name]
    row = {"data": data, "task": method.task, "method": name, "library": method.library,
           "date": time.strftime("%Y-%m-%d %H:%M"), "load_1min": os.getloadavg()[0]}
    missing = [mod for mod in method.requires if importlib.util.find_spec(mod) is None]
    if missing:
        return {**row, "skipped": f"{', '.join(missing)} not importable"}
    t0 = time.perf_counter()
    params = args.params.get(name)
    if params:
        row["params"] = params
    result = run_with_timeout(evaluate, (data, name, args.search, args.max_rows,
                                         args.threads, params, args.again), args.timeout)
    row["wall_s"] = time.perf_counter() - t0
    return {**row, **result}


def run_suite(pairs, args, label=""):
    rows = []
    for data, name in pairs:
        row = run_method(data, name, args)
        status = row.get("error") or row.get("skipped") or (
            f"fit {row['fit_s']:.3g} s, error {row['error_pct']:.3g} %")
        print(f"{label}{data:<18} {name:<24} {status}", flush=True)
        rows.append(row)
    return rows


# --------------------------------------------------------------------------- selection
def split_names(text):
    return [s.strip() for s in text.split(",") if s.strip()] if text else None


def selection(args):
    """The (data set, method) pairs to run, in suite order."""
    sets = split_names(args.sets) or (QUICK_SETS if args.quick else CLASSIFICATION + REGRESSION)
    unknown = [s for s in sets if s not in SETTINGS]
    chosen = split_names(args.methods)
    unknown += [m for m in chosen or () if m not in METHODS]
    if unknown:
        raise SystemExit(f"unknown: {', '.join(unknown)} (see --list)")
    order = CLASSIFICATION + REGRESSION
    pairs = []
    for data in sorted(sets, key=order.index):
        names = [m.name for m in METHODS.values() if m.task == task_of(data)
                 and (m.name in chosen if chosen else m.default)]
        pairs += [(data, name) for name in names]
    return pairs


def describe_methods():
    lines = []
    for m in METHODS.values():
        flags = ("default" if m.default else "opt-in") + (f", n <= {m.max_n}" if m.max_n else "")
        lines.append(f"{m.task:<15} {m.name:<25} {flags}" + (f": {m.why}" if m.why else ""))
    return "\n".join(lines + ["sets: " + ", ".join(CLASSIFICATION + REGRESSION)])


# --------------------------------------------------------------------------- results
def add_comparisons(rows):
    """Fit and predict ratios and the error gap to the set's SVC / SVR, where it ran."""
    refs = {r["data"]: r for r in rows
            if r["method"] == REFERENCE[r["task"]] and "fit_s" in r}
    dal = {r["data"]: r for r in rows if r["method"] == "sklearnex." + REFERENCE[r["task"]]
           and "fit_s" in r and not r.get("params")}
    for row in rows:
        ref = refs.get(row["data"])
        for key in ("fit_ratio", "predict_ratio", "gap_points", "fit_ratio_onedal"):
            row.pop(key, None)
        if row["data"] in dal and "fit_s" in row:
            row["fit_ratio_onedal"] = row["fit_s"] / dal[row["data"]]["fit_s"]
        if ref is None or "fit_s" not in row:
            continue
        row["fit_ratio"] = row["fit_s"] / ref["fit_s"]
        row["predict_ratio"] = row["predict_s"] / ref["predict_s"]
        row["gap_points"] = row["error_pct"] - ref["error_pct"]
    return rows


def merge(old_rows, new_rows):
    """The new rows, plus the old ones of (data set, method) pairs not rerun; suite order."""
    fresh = {(r["data"], r["method"]) for r in new_rows}
    rows = [r for r in old_rows if (r["data"], r["method"]) not in fresh] + new_rows
    order, names = CLASSIFICATION + REGRESSION, list(METHODS)

    def rank(items, item):  # a name dropped from the suite since: last
        return items.index(item) if item in items else len(items)

    return sorted(rows, key=lambda r: (rank(order, r["data"]), rank(names, r["method"])))


def read_rows(path, proto):
    """Rows of an earlier run with the same protocol, else none."""
    if not path.exists():
        return []
    old = json.loads(path.read_text())
    return old["rows"] if old.get("protocol") == proto else []


def machine():
    info = {"platform": platform.platform(), "cpus": os.cpu_count(),
            "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
            else os.cpu_count()}
    for path, key, field_name in (("/proc/cpuinfo", "model name", "cpu"),
                                  ("/proc/meminfo", "MemTotal", "memory")):
        try:
            with open(path) as fh:
                line = next(ln for ln in fh if ln.startswith(key))
            info[field_name] = line.split(":", 1)[1].strip()
        except (OSError, StopIteration):
            pass
    if "memory" in info:  # "24684096 kB"
        info["memory"] = f"{int(info['memory'].split()[0]) / 2**20:.1f} GiB"
    info["thread_env"] = {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                                     "MKL_NUM_THREADS") if k in os.environ}
    try:  # the version only: importing sklearnex costs seconds
        info["sklearnex"] = importlib.metadata.version("scikit-learn-intelex")
    except importlib.metadata.PackageNotFoundError:
        pass
    return info


def protocol(args):
    proto = {"search": args.search, "C_grid": list(C_GRID) if args.search else [C_NO_SEARCH],
             "cv_folds": CV_FOLDS if args.search else None, "max_rows": args.max_rows,
             "threads": args.threads}
    return {**proto, "fit_again": True} if args.again else proto


def notes(args):
    how = (f"C from {list(C_GRID)} by {CV_FOLDS}-fold CV on the training set (GridSearchCV, "
           "shuffled folds, seed 0); fit s is the final refit, search s the whole search"
           if args.search else f"no search: every method fitted once at C = {C_NO_SEARCH:g}, "
           "the first fit of its process (one-off costs such as lazy imports and compiling "
           "numba kernels included; with the search the refit comes after the CV fits)")
    out = [args.load_note, how,
           "gamma: the set's ('scale' = 1 / (n_features X.var()) on the training rows, one "
           "number for every method; ijcnn1 2); random_state = 0 where accepted",
           "KernelRidge searches alpha = 1 / C on centred targets; its best C is 1 / alpha",
           "regression error % is 100 (1 - R^2); gaps are in points against SVC (SVR)",
           "Nystroem: min(n, 1000) components, LinearSVC at its defaults",
           "threads: " + (f"{args.threads} per library" if args.threads else
                          "library defaults (libsvm one, BLAS and oneDAL every core)"),
           "each method runs in a fresh spawned process that loads the data; peak MiB is that "
           f"process's peak RSS after loading; time limit {args.timeout:g} s a method",
           "load is the 1-minute load average just before the method started",
           f"predict s is the fastest of up to {PREDICT_CALLS} calls on the test set (one when "
           f"they take {PREDICT_SPREE_S:g} s)"]
    if args.again:
        out.append("fit again s: the same fit (a clone of the fitted model) timed once more "
                   "in the same process right after; first - again is what the timed fit paid "
                   "for being its process's first at that size (lazy imports, thread pools, "
                   "first touches of fresh memory)")
    if args.max_rows:
        out.append(f"training rows subsampled to at most {args.max_rows} (smoke run)")
    unknown = unlisted_estimators()
    if unknown:
        out.append("sparsekernel estimators not in the suite: " + ", ".join(unknown))
    return out


CLF_COLUMNS = [("data set", "data"), ("n", "n_train"), ("classes", "classes"),
               ("method", "method"), ("best C", "best_C"), ("fit s", "fit_s"),
               ("fit / SVC", "fit_ratio"), ("fit / oneDAL", "fit_ratio_onedal"),
               ("fit again s", "fit_again_s"), ("first - again s", "first_extra_s"),
               ("predict s", "predict_s"),
               ("predict / SVC", "predict_ratio"), ("error %", "error_pct"),
               ("gap to SVC (points)", "gap_points"), ("search s", "search_s"),
               ("peak MiB", "peak_rss_mib"), ("model size", "model_size"),
               ("load", "load_1min"), ("note", "note")]
REG_COLUMNS = [("data set", "data"), ("n", "n_train"), ("method", "method"),
               ("best C", "best_C"), ("fit s", "fit_s"), ("fit / SVR", "fit_ratio"),
               ("fit / oneDAL", "fit_ratio_onedal"),
               ("fit again s", "fit_again_s"), ("first - again s", "first_extra_s"),
               ("predict s", "predict_s"), ("predict / SVR", "predict_ratio"),
               ("RMSE", "rmse"), ("R^2", "r2"), ("gap to SVR (R^2 points)", "gap_points"),
               ("search s", "search_s"), ("peak MiB", "peak_rss_mib"),
               ("model size", "model_size"), ("load", "load_1min"), ("note", "note")]


def method_label(row):
    """The method's name, with the parameters ``--params`` gave it."""
    params = row.get("params") or {}
    args = ", ".join(f"{k}={v!r}" for k, v in params.items())
    return f"{row['method']}({args})" if args else row["method"]


def parse_params(items):
    """``--params METHOD:key=value,key=value`` (repeatable) -> {method: {key: value}}; values
    are Python literals where they parse ('1e-4', '4000'), else strings ('8GB')."""
    out = {}
    for item in items or ():
        name, _, pairs = item.partition(":")
        if not pairs or name not in METHODS:
            raise SystemExit(f"--params {item!r}: expected METHOD:key=value,... with a method "
                             "of --list")
        for pair in pairs.split(","):
            key, eq, text = pair.partition("=")
            if not eq:
                raise SystemExit(f"--params {item!r}: {pair!r} is not key=value")
            try:
                value = ast.literal_eval(text.strip())
            except (ValueError, SyntaxError):
                value = text.strip()
            out.setdefault(name, {})[key.strip()] = value
    return out


def cell(value):
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1e4 else f"{value:.0f}"
    return "" if value is None else str(value).replace("|", "/")


def table(rows, columns):
    lines = ["| " + " | ".join(c for c, _ in columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        note = row.get("error") or row.get("skipped") or row.get("warnings") or ""
        row = {**row, "note": note[:120], "method": method_label(row)}
        lines.append("| " + " | ".join(cell(row.get(key)) for _, key in columns) + " |")
    return lines


def markdown(payload):
    lines = [f"# {payload['title']}", ""] + [f"- {n}" for n in payload["notes"]] + [""]
    for task, columns in ((_CLF, CLF_COLUMNS), (_REG, REG_COLUMNS)):
        rows = [r for r in payload["rows"] if r["task"] == task]
        if not payload["protocol"].get("fit_again"):  # (the columns of --again)
            columns = [c for c in columns if c[1] not in ("fit_again_s", "first_extra_s")]
        if rows:
            lines += [f"## {task.capitalize()}", ""] + table(rows, columns) + [""]
    if payload.get("figure"):
        lines += [f"![fit-time ratio and error gap]({payload['figure']})", ""]
    return "\n".join(lines + [footer(payload)]) + "\n"


def footer(payload):
    mach = ", ".join(f"{k} {v}" for k, v in payload["machine"].items())
    env = ", ".join(f"{k} {v}" for k, v in payload["environment"].items())
    return f"Machine: {mach}\n\nEnvironment: {env}"


# A regressor is drawn as its classification counterpart: the sets tell the tasks apart.
_COUNTERPART = {"SVR": "SVC", "sklearnex.SVR": "sklearnex.SVC",
                "KernelRidge": "Nystroem+LinearSVC", "ReducedSVR": "ReducedSVC",
                "LSSVR": "LSSVC", "SmoothSVR": "SmoothSVC", "PrunedLSSVR": "PrunedLSSVC",
                "LowRankLSSVR": "LowRankLSSVC"}


def _style_index(name):
    clf = [m.name for m in METHODS.values() if m.task == _CLF]
    own = [m for m in METHODS if m not in clf and m not in _COUNTERPART]
    key = _COUNTERPART.get(name, name)
    return clf.index(key) if key in clf else len(clf) + own.index(key)


def _style(name, names):
    """One colour and marker per method; a regressor's legend entry shares its counterpart's."""
    k = _style_index(name)
    same = [n for n in names if _style_index(n) == k]
    label = " / ".join(same) if name == same[0] else "_nolegend_"
    return {"marker": "os^vD<>ph*XPd8"[k % 14], "color": f"C{k % 10}", "ls": "none",
            "label": label}


def _positions(done):
    """x of each row: its data set's slot, the methods run on that set spread around it."""
    sets = list(dict.fromkeys(r["data"] for r in done))
    xs = []
    for row in done:
        peers = [r["method"] for r in done if r["data"] == row["data"]]
        width = 0.8 / len(peers)
        xs.append(sets.index(row["data"]) + (peers.index(row["method"]) - (len(peers) - 1) / 2)
                  * width)
    return sets, xs


def plot(rows, path):
    """Two panels: fit time over SVC's (SVR's), log scale; error gap in points."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    done = [r for r in rows if "fit_ratio" in r and r["method"] != REFERENCE[r["task"]]]
    if not done:
        return None
    sets, xs = _positions(done)
    fig, axes = plt.subplots(1, 2, figsize=(14, 5.5))
    names = list(dict.fromkeys(r["method"] for r in done))
    for name in names:
        sel = [i for i, r in enumerate(done) if r["method"] == name]
        for ax, key in zip(axes, ("fit_ratio", "gap_points"), strict=True):
            ax.plot([xs[i] for i in sel], [done[i][key] for i in sel], **_style(name, names))
    for ax, ylabel, ref in ((axes[0], "fit time / SVC's (regression: SVR's)", 1.0),
                            (axes[1], "test error - SVC's, points (regression: 1 - R^2)", 0.0)):
        ax.axhline(ref, color="k", lw=0.8)
        ax.set_xticks(range(len(sets)), sets, rotation=30, ha="right")
        ax.set_ylabel(ylabel)
    axes[0].set_yscale("log")
    axes[1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle("Each method at its own C: fit time and test error against scikit-learn's "
                 "SVC / SVR (black lines)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


def write(name, rows, args, out, title):
    """Merge ``rows`` into NAME.json (same protocol) and write NAME.json, .md and .png."""
    proto = protocol(args)
    rows = add_comparisons(merge(read_rows(out / f"{name}.json", proto), rows))
    payload = {"title": title, "protocol": proto, "notes": notes(args), "machine": machine(),
               "environment": environment(), "rows": rows}
    payload["figure"] = plot(rows, out / f"{name}.png")
    (out / f"{name}.json").write_text(json.dumps(payload, indent=2, default=float) + "\n")
    (out / f"{name}.md").write_text(markdown(payload))
    return payload


# --------------------------------------------------------------------------- busy
BUSY_KEYS = ("fit_s", "predict_s", "search_s")
BUSY_COLUMNS = [("data set", "data"), ("method", "method"), ("fit s quiet", "quiet_fit_s"),
                ("fit s busy", "fit_s"), ("fit slowdown", "slowdown_fit_s"),
                ("predict slowdown", "slowdown_predict_s"),
                ("search slowdown", "slowdown_search_s"), ("load quiet", "quiet_load_1min"),
                ("load busy", "load_1min"), ("note", "note")]


def run_busy(pairs, args, out, name):
    """Quiet rows (from the quiet file, or run now), then the same beside a spinning core."""
    quiet_path = out / f"{name}.json"
    have = {(r["data"], r["method"]): r for r in read_rows(quiet_path, protocol(args))
            if "fit_s" in r}
    missing = [p for p in pairs if p not in have]
    if missing:
        write(name, run_suite(missing, args, "quiet "), args, out, title(args))
        have = {(r["data"], r["method"]): r for r in read_rows(quiet_path, protocol(args))}
    spinner = mp.get_context("spawn").Process(target=spin, daemon=True)
    spinner.start()
    try:
        time.sleep(2.0)  # let the spinner start before the first load reading
        rows = run_suite(pairs, args, "busy ")
    finally:
        spinner.kill()
        spinner.join()
    for row in rows:
        quiet = have.get((row["data"], row["method"]), {})
        row["quiet_load_1min"] = quiet.get("load_1min")
        for key in BUSY_KEYS:
            row[f"quiet_{key}"] = quiet.get(key)
            if row.get(key) and quiet.get(key):
                row[f"slowdown_{key}"] = row[key] / quiet[key]
    return rows


def write_busy(rows, args, out, name):
    proto = {**protocol(args), "busy": "one spawned process spinning a pure-Python loop"}
    path = out / f"{name}.json"
    rows = merge(read_rows(path, proto), rows)
    payload = {"title": title(args) + ", beside one busy core: slowdown busy / quiet",
               "protocol": proto, "notes": notes(args) + [
                   f"quiet figures from {name.replace('suite_busy', 'suite', 1)}.json",
                   "load busy includes the spinning process"],
               "machine": machine(), "environment": environment(), "rows": rows}
    path.write_text(json.dumps(payload, indent=2, default=float) + "\n")
    lines = [f"# {payload['title']}", ""] + [f"- {n}" for n in payload["notes"]] + [""]
    lines += table(rows, BUSY_COLUMNS) + ["", footer(payload)]
    (out / f"{name}.md").write_text("\n".join(lines) + "\n")
    return payload


# --------------------------------------------------------------------------- main
def title(args):
    how = f"best C of {list(C_GRID)} by {CV_FOLDS}-fold CV" if args.search else "C = 10"
    return f"Benchmark suite: sparsekernel against its peers, {how}" + (
        " [quick]" if args.quick else "") + (
        f" [at most {args.max_rows} training rows]" if args.max_rows else "")


def results_name(args):
    """suite, suite_quick, or a name that says how the run departs from the protocol, so a
    smoke run never replaces the headline files."""
    parts = ["suite", "quick" if args.quick else "", "" if args.search or args.quick else
             "nosearch", f"max{args.max_rows}" if args.max_rows else "",
             f"threads{args.threads}" if args.threads else "",
             "params" if args.params else "", "again" if args.again else ""]
    return "_".join(p for p in parts if p)


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="small sets only (" + ", ".join(QUICK_SETS) + "), no search")
    ap.add_argument("--no-search", dest="search", action="store_false",
                    help=f"fit once at C = {C_NO_SEARCH:g} instead of the CV search")
    ap.add_argument("--sets", help="comma-separated data sets (default: all, or the quick ones)")
    ap.add_argument("--methods", help="comma-separated methods (default: the default ones)")
    ap.add_argument("--max-rows", type=int, default=None,
                    help="subsample the training rows to at most N (smoke runs)")
    ap.add_argument("--timeout", type=float, default=3600.0,
                    help="seconds a method may take, search included (default 3600)")
    ap.add_argument("--threads", type=int, default=None,
                    help="limit BLAS, OpenMP and oneDAL threads (default: library defaults)")
    ap.add_argument("--again", action="store_true",
                    help="time each fit a second time in the same process (cold start)")
    ap.add_argument("--busy", action="store_true",
                    help="also run beside a busy core and report the slowdown")
    ap.add_argument("--params", action="append", metavar="METHOD:KEY=VALUE,...",
                    help="parameters for one method besides C and gamma, e.g. "
                         "'LowRankSVC:n_basis=4000,memory_budget=8GB' (repeatable; the "
                         "results file then ends in _params)")
    ap.add_argument("--out", default=None,
                    help="results folder (default benchmarks/results/suite)")
    ap.add_argument("--list", action="store_true", help="print the methods and sets, and exit")
    args = ap.parse_args(argv)
    if args.quick:
        args.search = False
    args.params = parse_params(args.params)
    args.load_note = load_note()  # now, when the run starts
    return args


def main(argv=None):
    args = parse(argv)
    if args.list:
        print(describe_methods())
        return None
    out = Path(args.out) if args.out else RESULTS
    out.mkdir(parents=True, exist_ok=True)
    name = results_name(args)
    pairs = selection(args)
    if args.busy:
        busy_name = name.replace("suite", "suite_busy", 1)
        payload = write_busy(run_busy(pairs, args, out, name), args, out, busy_name)
        print((out / f"{busy_name}.md").read_text())
        return payload
    payload = write(name, run_suite(pairs, args), args, out, title(args))
    print((out / f"{name}.md").read_text())
    return payload


if __name__ == "__main__":
    main()
