"""memory_budget as a cap: peak RSS of a fit above its input, against the budget.

Protocol. Generated data (``--rows`` x 20 standard normal features, three classes by the angle
of the first two), ReducedSVC and LowRankSVC with ``n_basis`` given (default 1000), for each
budget. Each fit runs in a fresh child process (``_harness.run_isolated``) that builds the
data, fits once on 2,000 rows (imports and compilation), resets its peak-RSS counter
(``mark_baseline``), then fits on all rows: ``extra_rss_mib`` is the fit's peak resident
memory above the RSS it started from, the figure ``memory_budget`` caps. ``--max-iter``
bounds the solver iterations so that 10^6 rows take minutes: the buffers are the same at
every iteration, so the peak is not changed by it (the accuracy is).

Run: ``python benchmarks/bench_memory.py`` (10^6 rows, budgets 256MB and 2GB: about half an
hour on 2 cores), or ``--quick`` (200,000 rows, budgets 64MB and 256MB). Writes
benchmarks/results/memory/memory_budget{,_quick}.json and .md.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from _harness import mark_baseline, run_isolated, write_results


def _data(n):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 20))
    y = (np.arctan2(X[:, 1], X[:, 0]) // (2 * np.pi / 3)).astype(int) + 2
    return X, y


def fit_once(name, n, n_basis, budget, max_iter):
    """Child: fit ``name`` on n generated rows within ``budget``; report the path taken."""
    from sparsekernel import LowRankSVC, ReducedSVC

    Est = {"ReducedSVC": ReducedSVC, "LowRankSVC": LowRankSVC}[name]
    X, y = _data(n)
    Est(n_basis=10).fit(X[:2000], y[:2000])
    mark_baseline()
    t0 = time.perf_counter()
    est = Est(n_basis=n_basis, memory_budget=budget, max_iter=max_iter, random_state=0)
    est.fit(X, y)
    return {"estimator": name, "rows": n, "n_basis": int(est.basis_.shape[0]),
            "memory_budget": budget, "path": _path(est), "fit_s": time.perf_counter() - t0,
            "accuracy_pct": 100 * est.score(X[:20000], y[:20000])}


def _path(est):
    if hasattr(est, "n_rows_seen_"):
        return "streamed chunks"
    return "stored features" if est.__class__.__name__ == "LowRankSVC" else "stored or blocks"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rows", type=int)
    parser.add_argument("--n-basis", type=int, default=1000)
    parser.add_argument("--budgets", default=None, help="comma-separated, e.g. 256MB,2GB")
    parser.add_argument("--max-iter", type=int, default=3)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    rows = args.rows or (200_000 if args.quick else 1_000_000)
    budgets = (args.budgets or ("64MB,256MB" if args.quick else "256MB,2GB")).split(",")
    results = []
    for name in ("ReducedSVC", "LowRankSVC"):
        for budget in budgets:
            row = run_isolated(fit_once, name, rows, args.n_basis, budget, args.max_iter)
            print(row, flush=True)
            results.append(row)
    write_results(
        "memory_budget_quick" if args.quick else "memory_budget",
        {"title": "Peak RSS of a fit above its input, against memory_budget",
         "notes": [f"{rows} rows x 20 features, 3 classes; n_basis={args.n_basis}; "
                   f"max_iter={args.max_iter} (the peak does not depend on it)",
                   "extra RSS: peak resident memory of the fit above the RSS before it, in a "
                   "fresh process after a warm-up fit"],
         "rows": results},
        [("estimator", "estimator"), ("memory_budget", "memory_budget"),
         ("m", "n_basis"), ("path", "path"), ("extra RSS MiB", "extra_rss_mib"),
         ("fit s", "fit_s"), ("accuracy %", "accuracy_pct"), ("error", "error")],
        args.out)


if __name__ == "__main__":
    main()
