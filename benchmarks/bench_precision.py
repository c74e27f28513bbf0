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

Plus ``n_basis='auto'`` under the policy (the m it chooses knowing the precision). ``ratio``
is a fit's time over the 10^5-row fit of the same variant.

Run: ``python benchmarks/bench_precision.py`` (10^5 and 10^6 rows), ``--large`` (adds 10^7
rows, the policy only: long), ``--quick`` (10^4 and 4 x 10^4 rows, m = 100: the smoke test's
profile). Writes benchmarks/results/precision/precision{,_quick}.json and .md.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from _harness import load_note, mark_baseline, run_isolated, timed, write_results

N_TEST = 100_000


def fit_once(n_rows, variant, n_basis):
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
    Xt, yt = _board(N_TEST, 99)
    X, y = _board(n_rows, 1)
    model, fit_s = timed(LowRankSVC(n_basis=n_basis, gamma=2.0, C=100.0, random_state=0).fit,
                         X, y)
    return {"fit_s": fit_s, "error_pct": 100 * float(np.mean(model.predict(Xt) != yt)),
            "n_kept": int(model.basis_.shape[0]), "features": seen[0] if seen else ""}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--large", action="store_true", help="add 10^7 rows (policy only)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    sizes, m = ([10_000, 40_000], 100) if args.quick else ([10**5, 10**6], 300)
    plan = [(n, variant, m) for n in sizes for variant in ("policy", "float64")]
    plan += [(n, "policy", "auto") for n in sizes]
    if args.large:
        plan.append((10**7, "policy", m))
    note, rows, base = load_note(), [], {}
    for n, variant, n_basis in plan:
        row = {"rows": n, "variant": variant if n_basis != "auto" else "policy, 'auto'",
               "n_basis": n_basis, **run_isolated(fit_once, n, variant, n_basis)}
        key = (row["variant"], n_basis)
        if "fit_s" in row:
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
                         f"error on {N_TEST:,} fresh rows; best possible error 5 %",
                   "float64: FLOAT32_WORK = inf (features stored in float64 at every size); "
                   "ratio: fit time over the smallest fit of the same variant"],
         "rows": rows},
        [("rows", "rows"), ("variant", "variant"), ("n_basis", "n_basis"), ("kept", "n_kept"),
         ("features", "features"), ("fit s", "fit_s"), ("ratio", "ratio"),
         ("test error %", "error_pct"), ("error", "error")],
        args.out)


if __name__ == "__main__":
    main()
