"""The precision policy at scale: landmarks kept, test error and fit time as the rows grow.

Protocol. The noisy 4 x 4 checkerboard (d = 2, 5 % of the labels flipped, so the best
possible error is 5 %; ``bench_dask._board``), ``LowRankSVC(n_basis=300, gamma=2, C=100,
random_state=0)``, test error on the same 100,000 fresh rows. Each fit runs in a fresh child
process (``_harness.run_isolated``) that draws its rows, fits and scores. Two fits per row
count:

- ``policy``: the library as it is: float64 kernel values, map and landmark floor, features
  stored in float32 once ``n m^2 >= FLOAT32_WORK`` (10^6 rows), margins and gradients summed
  in float64;
- ``float64``: the same with ``FLOAT32_WORK`` set to infinity in the child, so the features
  stay float64 at every size: the accuracy reference, and what float32 storage saves.

Plus ``n_basis='auto'`` under the policy (the m it chooses knowing the precision). Each
fit runs ``--repeat`` times (3), each in its own process; ``fit s`` is the median, and
``ratio`` a median over the smallest size's median of the same variant.

Run: ``python benchmarks/bench_precision.py`` (10^5 and 10^6 rows), ``--large`` (adds 10^7
rows, the policy only: long), ``--quick`` (10^4 and 1.2 x 10^5 rows, where the features are
float32 already, 20,000 test rows, one fit each: the smoke test's profile). Writes
benchmarks/results/precision/precision{,_quick}.json and .md.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from _harness import load_note, mark_baseline, run_isolated, timed, write_results

N_TEST = 100_000


def fit_once(n_rows, variant, n_basis, n_test=N_TEST):
    """Child process: draw the rows, fit one variant, score the test rows."""
    mark_baseline()
    from bench_dask import _board
    from sparsekernel import LowRankSVC
    from sparsekernel.features import NystromMap
    from sparsekernel.utils import _numerics

    if variant == "float64":
        _numerics.FLOAT32_WORK = math.inf
    seen = []  # the dtype the fit's features are stored in
    transform = NystromMap.transform

    def recording(self, X, out=None):
        F = transform(self, X, out)
        seen.append(str(F.dtype))
        return F

    NystromMap.transform = recording
    Xt, yt = _board(n_test, 99)
    X, y = _board(n_rows, 1)
    model, fit_s = timed(LowRankSVC(n_basis=n_basis, gamma=2.0, C=100.0, random_state=0).fit,
                         X, y)
    return {"fit_s": fit_s, "error_pct": 100 * float(np.mean(model.predict(Xt) != yt)),
            "n_kept": int(model.basis_.shape[0]), "features": seen[0] if seen else ""}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--large", action="store_true", help="add 10^7 rows (policy only)")
    parser.add_argument("--repeat", type=int, default=None,
                        help="fits per row, their median reported (default 3, --quick 1)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    sizes, n_test = ([10_000, 120_000], 20_000) if args.quick else ([10**5, 10**6], N_TEST)
    m = 300
    args.repeat = args.repeat or (1 if args.quick else 3)
    plan = [(n, variant, m) for n in sizes for variant in ("policy", "float64")]
    plan += [(n, "policy", "auto") for n in sizes]
    if args.large:
        plan.append((10**7, "policy", m))
    note, rows, base = load_note(), [], {}
    for n, variant, n_basis in plan:
        runs = [run_isolated(fit_once, n, variant, n_basis, n_test)
                for _ in range(args.repeat)]
        row = {"rows": n, "variant": variant if n_basis != "auto" else "policy, 'auto'",
               "n_basis": n_basis, **runs[0]}
        key = (row["variant"], n_basis)
        if all("fit_s" in r for r in runs):
            row["fit_s"] = float(np.median([r["fit_s"] for r in runs]))
            row["fit_s_runs"] = [round(r["fit_s"], 3) for r in runs]
            base.setdefault(key, row["fit_s"])
            row["ratio"] = round(row["fit_s"] / base[key], 2)
        print(row, flush=True)
        rows.append(row)
    name = "precision_quick" if args.quick else "precision"
    write_results(
        name,
        {"title": "LowRankSVC on the noisy checkerboard: landmarks kept, error and fit time "
                  "as the rows grow",
         "notes": [note, f"n_basis={m} (or 'auto'), gamma=2, C=100, random_state=0; test "
                         f"error on {n_test:,} fresh rows; best possible error 5 %",
                   "float64: FLOAT32_WORK = inf (features stored in float64 at every size); "
                   f"fit s: median of {args.repeat} fits, each in its own process (runs: "
                   "each one's); ratio: over the smallest size's median, same variant"],
         "rows": rows},
        [("rows", "rows"), ("variant", "variant"), ("n_basis", "n_basis"), ("kept", "n_kept"),
         ("features", "features"), ("fit s", "fit_s"), ("runs", "fit_s_runs"),
         ("ratio", "ratio"),
         ("test error %", "error_pct"), ("error", "error")],
        args.out)


if __name__ == "__main__":
    main()
