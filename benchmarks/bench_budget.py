"""memory_budget as a resource limit: accuracy, basis size and fit time of 'auto' over budgets.

Protocol. For each data set and estimator (LowRankSVC, ReducedSVC; ``n_basis='auto'``,
``C=10``, ``random_state=0``), one fit per budget, each in a fresh child process
(``_harness.run_isolated``) that loads the data, fits and scores the held-out rows. A row
records the basis size, whether the features were streamed, the m 'auto' wanted when the
budget lowered it (the MemoryBudgetWarning's figure), the fit's time and extra peak RSS, and
the test accuracy. ``drop_pts`` is the best accuracy at any smaller budget minus this one
(positive: a larger budget gave a worse model). ``memory_budget=inf`` is the reference: the
basis 'auto' wants, stored.

Data: ijcnn1 (49,990 train / 91,701 test rows, gamma=2); ijcnn1 tiled 20 times with
Gaussian jitter of 0.01 (999,800 rows, the same test rows; ``--large``); make_moons with
noise 0.3 (200,000 / 50,000 rows, gamma='scale').

Run: ``python benchmarks/bench_budget.py`` (ijcnn1 and moons), ``--large`` (adds the tiled
ijcnn1 at 256 MB, 1 GB and the default budget: long), or ``--quick`` (20,000 moons rows at
two budgets, the smoke test's profile). Writes benchmarks/results/budget/budget{,_quick}.json,
.md and a figure.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np

from _harness import load_note, mark_baseline, run_isolated, write_results

MiB = 2**20

#: (data set, budgets in MiB; inf: no cap) of each profile.
PROFILES = {
    "quick": [("moons_20k", [6, 24])],
    "default": [("ijcnn1", [32, 64, 128, 256, 512, math.inf]),
                ("moons", [16, 32, 64, 256, math.inf])],
    "large": [("ijcnn1_x20", [256, 1024, 3072])],
}


def load(name):
    """(X_train, y_train, X_test, y_test, params) of a data set of the benchmark."""
    if name.startswith("moons"):
        from sklearn.datasets import make_moons

        n = 20_000 if name == "moons_20k" else 200_000
        X, y = make_moons(n, noise=0.3, random_state=0)
        Xt, yt = make_moons(n // 4, noise=0.3, random_state=1)
        return X, y, Xt, yt, {"gamma": "scale"}
    import _suite_data

    X, y, Xt, yt = _suite_data.load("ijcnn1")
    if name == "ijcnn1_x20":
        rng = np.random.default_rng(0)
        X = np.tile(X, (20, 1)) + 0.01 * rng.standard_normal((20 * X.shape[0], X.shape[1]))
        y = np.tile(y, 20)
    return X, y, Xt, yt, {"gamma": 2.0}


def fit_once(data, estimator, budget_mib):
    """Child: fit ``estimator`` on ``data`` within ``budget_mib`` MiB (inf: no cap)."""
    from sparsekernel import LowRankSVC, ReducedSVC
    from sparsekernel.utils import MemoryBudgetWarning

    Est = {"LowRankSVC": LowRankSVC, "ReducedSVC": ReducedSVC}[estimator]
    X, y, Xt, yt, params = load(data)
    budget = float("inf") if math.isinf(budget_mib) else int(budget_mib * MiB)
    mark_baseline()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", MemoryBudgetWarning)
        t0 = time.perf_counter()
        est = Est(C=10.0, memory_budget=budget, random_state=0, **params).fit(X, y)
        fit_s = time.perf_counter() - t0
    wanted = [int(str(w.message).split("wanted ")[1].split()[0]) for w in caught
              if issubclass(w.category, MemoryBudgetWarning)]
    return {"data": data, "rows": int(X.shape[0]), "estimator": estimator,
            "memory_budget": "inf" if math.isinf(budget_mib) else f"{budget_mib:g} MiB",
            "budget_mib": budget_mib, "n_basis": int(est.basis_.shape[0]),
            "auto_wanted": wanted[0] if wanted else "",
            "path": _path(est),
            "fit_s": fit_s, "accuracy_pct": 100.0 * est.score(Xt, yt)}


def _path(est):
    """LowRankSVC: stored features or streamed chunks; ReducedSVC keeps no trace of whether
    K(X, Z) was stored or recomputed in blocks."""
    if hasattr(est, "n_rows_seen_"):
        return "streamed"
    return "stored" if type(est).__name__ == "LowRankSVC" else "stored or blocks"


def add_drops(rows):
    """``drop_pts``: the best accuracy at a smaller budget minus this budget's (per data set
    and estimator, in the order of the budgets)."""
    best = {}
    for row in rows:
        key = (row["data"], row["estimator"])
        if "accuracy_pct" in row:
            row["drop_pts"] = max(0.0, best.get(key, -np.inf) - row["accuracy_pct"])
            best[key] = max(best.get(key, -np.inf), row["accuracy_pct"])


def plot(rows, path):
    """Accuracy and fit time against the budget, a column per data set."""
    from sparsekernel.utils import pyplot

    plt = pyplot()
    sets = list(dict.fromkeys(r["data"] for r in rows))
    fig, axes = plt.subplots(2, len(sets), figsize=(5 * len(sets), 7), squeeze=False)
    for j, data in enumerate(sets):
        for estimator in ("LowRankSVC", "ReducedSVC"):
            sel = [r for r in rows if r["data"] == data and r["estimator"] == estimator
                   and "accuracy_pct" in r]
            finite = [r["budget_mib"] for r in sel if not math.isinf(r["budget_mib"])]
            x = [r["budget_mib"] if not math.isinf(r["budget_mib"]) else 4 * max(finite)
                 for r in sel]
            axes[0, j].plot(x, [r["accuracy_pct"] for r in sel], "o-", label=estimator)
            axes[1, j].plot(x, [r["fit_s"] for r in sel], "o-", label=estimator)
            for xi, r in zip(x, sel, strict=True):
                axes[0, j].annotate(f"m={r['n_basis']}", (xi, r["accuracy_pct"]), fontsize=7,
                                    textcoords="offset points", xytext=(2, 4))
        axes[0, j].set_title(f"{data} ({sel[0]['rows']:,} rows)")
        axes[1, j].set_xlabel("memory_budget (MiB; last point: no cap)")
        for ax in axes[:, j]:
            ax.set_xscale("log")
            ax.xaxis.set_minor_formatter(plt.NullFormatter())
            ax.grid(alpha=0.3)
        axes[0, j].set_ylabel("test accuracy %")
        axes[1, j].set_ylabel("fit s")
        axes[0, j].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--large", action="store_true", help="add the tiled ijcnn1")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    plan = PROFILES["quick"] if args.quick else (
        PROFILES["default"] + (PROFILES["large"] if args.large else []))
    note, rows = load_note(), []
    for data, budgets in plan:
        for estimator in ("LowRankSVC", "ReducedSVC"):
            for budget in budgets:
                row = run_isolated(fit_once, data, estimator, budget)
                row.setdefault("data", data)
                row.setdefault("estimator", estimator)
                row.setdefault("memory_budget", f"{budget:g} MiB")
                row.setdefault("budget_mib", budget)
                print(row, flush=True)
                rows.append(row)
    add_drops(rows)
    name = "budget_quick" if args.quick else "budget"
    md = write_results(
        name,
        {"title": "n_basis='auto' over memory budgets: basis size, accuracy and fit time",
         "notes": [note, "C=10, random_state=0; ijcnn1 gamma=2, moons gamma='scale'",
                   "auto wanted: the m of n_basis='auto' when the budget lowered it "
                   "(MemoryBudgetWarning); drop: best accuracy at a smaller budget minus this "
                   "one, in points"],
         "rows": rows},
        [("data", "data"), ("rows", "rows"), ("estimator", "estimator"),
         ("memory_budget", "memory_budget"), ("m", "n_basis"), ("auto wanted", "auto_wanted"),
         ("path", "path"), ("fit s", "fit_s"), ("extra RSS MiB", "extra_rss_mib"),
         ("accuracy %", "accuracy_pct"), ("drop pts", "drop_pts"), ("error", "error")],
        args.out)
    plot(rows, md.with_suffix(".png"))


if __name__ == "__main__":
    main()
