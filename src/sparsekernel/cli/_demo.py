"""``sparsekernel demo``: LowRankSVC on every row against scikit-learn's SVC on a subsample.

The point the demo makes is the library's purpose: an exact kernel SVM's fit grows about
quadratically with the rows and its prediction with its support vectors, so on a few hundred
thousand rows it can only afford a subsample, while a machine on m << n basis functions fits
all of them in linear time and predicts at a cost set by m. Every number printed is measured
during the run; the one estimate, SVC's fit time on all rows, is extrapolated from two measured
fits and labelled as such.
"""

from __future__ import annotations

import math
import time

from sklearn.svm import SVC

from ..datasets import make_checkerboard
from ..svm import LowRankSVC
from ._files import print_out, require_standard_output
from ._options import positive_int

__all__ = ["add_parser"]

# On the 4 x 4 checkerboard (features in [0, 4)^2) gamma = 2 resolves the cell corners; C = 1
# is both models' default. SVC gets the rows it fits in about the time LowRankSVC takes on all
# of them, so the comparison is at equal fit time.
GAMMA, C = 2.0, 1.0
ROWS, SVC_ROWS, TEST_ROWS, SEED = 200_000, 15_000, 50_000, 0
# Below this many rows an SVC fits in a few milliseconds, too fast to time a growth rate.
MIN_GROWTH_ROWS = 2500

HEADER = (f"{'model':<12} {'rows used':>10} {'fit (s)':>8} {'predict (s)':>11} "
          f"{'test accuracy':>13}  model size")


def add_parser(subparsers):
    """Register the ``demo`` subcommand.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The ``sparsekernel`` parser's subcommands.
    """
    parser = subparsers.add_parser(
        "demo", help="LowRankSVC on all rows against scikit-learn's SVC on a subsample",
        description="Generate a nonlinear problem (a 4 x 4 checkerboard, 2 features, seeded; "
                    "nothing downloads), fit LowRankSVC on every training row and "
                    "scikit-learn's SVC on the subsample it can afford, with the same RBF "
                    f"kernel, gamma and C, and compare them on {TEST_ROWS:,} held-out rows: "
                    "rows used, fit and predict time, test accuracy and model size; then "
                    "extrapolate SVC's fit time to all rows from its measured growth.",
    )
    parser.add_argument("--rows", type=positive_int, default=ROWS,
                        help=f"training rows for LowRankSVC; default: {ROWS}")
    parser.add_argument("--svc-rows", type=positive_int, dest="svc_rows", default=SVC_ROWS,
                        help=f"training rows for SVC (the first ones, at most --rows); "
                             f"default: {SVC_ROWS}")
    parser.add_argument("--seed", type=int, default=SEED,
                        help=f"seed of the data and of LowRankSVC's landmarks; default: {SEED}")
    parser.add_argument("-g", type=float, dest="gamma", metavar="gamma", default=GAMMA,
                        help=f"RBF kernel gamma of both models; default: {GAMMA}")
    parser.add_argument("-c", type=float, dest="C", metavar="cost", default=C,
                        help=f"C of both models; default: {C}")
    parser.set_defaults(run=run)


def run(args):
    """Generate the data, fit and time both models, print the table and the comparison.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed ``demo`` options.

    Returns
    -------
    int
        Exit status 0.
    """
    require_standard_output("demo", "its table", "redirect it (e.g. > demo.txt)")
    svc_rows = min(args.svc_rows, args.rows)
    X, y = make_checkerboard(args.rows + TEST_ROWS, random_state=args.seed)
    # The checkerboard's rows are drawn independently, so slicing is a random split.
    X_train, y_train, X_test, y_test = X[:args.rows], y[:args.rows], X[args.rows:], y[args.rows:]
    print_out(f"4 x 4 checkerboard, 2 features: {args.rows:,} training rows, {TEST_ROWS:,} "
              f"held-out test rows;\nRBF kernel with gamma={args.gamma:g} and C={args.C:g} "
              "for both models")
    models = [
        ("LowRankSVC", LowRankSVC(gamma=args.gamma, C=args.C, random_state=args.seed),
         args.rows),
        ("sklearn SVC", _svc(args), svc_rows),
    ]
    print_out(HEADER)
    print_out("-" * len(HEADER))
    results = []
    for name, model, rows in models:
        results.append(_measure(model, X_train[:rows], y_train[:rows], X_test, y_test))
        print_out(_format_row(name, rows, *results[-1]))
    _print_summary(args.rows, svc_rows, *results)
    if svc_rows < args.rows and svc_rows >= 2 * MIN_GROWTH_ROWS:
        _print_svc_growth(_svc(args), X_train, y_train, svc_rows, results[1][0], args.rows)
    return 0


def _svc(args):
    return SVC(kernel="rbf", gamma=args.gamma, C=args.C)


def _format_row(name, rows, fit_s, predict_s, accuracy, size, unit):
    return (f"{name:<12} {rows:>10,} {fit_s:>8.2f} {predict_s:>11.2f} {accuracy:>13.4f}  "
            f"{size:,} {unit}")


def _measure(model, X_train, y_train, X_test, y_test):
    """Fit and predict once: (fit s, predict s, test accuracy, model size, size unit)."""
    start = time.perf_counter()
    model.fit(X_train, y_train)
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    accuracy = float((model.predict(X_test) == y_test).mean())
    predict_s = time.perf_counter() - start
    if hasattr(model, "basis_"):
        return fit_s, predict_s, accuracy, model.basis_.shape[0], "basis functions"
    return fit_s, predict_s, accuracy, int(model.n_support_.sum()), "support vectors"


def _print_summary(rows, svc_rows, lowrank, svc):
    """Rows used, test errors, prediction time and model size of LowRankSVC relative to SVC."""
    lowrank_errors, svc_errors = 1 - lowrank[2], 1 - svc[2]
    # A ratio of error rates means nothing when one of them is zero (tiny --rows).
    errors = (f"{_ratio(lowrank_errors, svc_errors, 'fewer', 'more')} test errors"
              if min(lowrank_errors, svc_errors) > 0 else "test errors")
    print_out(f"\nLowRankSVC used {rows / svc_rows:.1f}x the rows: {errors} "
              f"({100 * lowrank_errors:.2f} % against {100 * svc_errors:.2f} %),\n"
              f"predicted {_ratio(lowrank[1], svc[1], 'faster', 'slower')}, with a "
              f"{_ratio(lowrank[3], svc[3], 'smaller', 'larger')} model.")


def _ratio(ours, theirs, better, worse):
    """'<theirs / ours>x better' where ours is the smaller of two positive numbers,
    '<ours / theirs>x worse' otherwise (one decimal)."""
    if ours <= theirs:
        return f"{theirs / ours:.1f}x {better}"
    return f"{ours / theirs:.1f}x {worse}"


def _print_svc_growth(svc, X_train, y_train, svc_rows, svc_fit_s, rows):
    """Measure SVC's fit on half its rows and extrapolate its growth rate to all rows.

    The rate is measured, not assumed: an SVC's fit time grows with the rows at a rate that
    depends on the data (how many rows become support vectors), so a textbook exponent could
    flatter either side.
    """
    half = svc_rows // 2
    start = time.perf_counter()
    svc.fit(X_train[:half], y_train[:half])
    half_s = time.perf_counter() - start
    exponent = math.log(svc_fit_s / half_s) / math.log(svc_rows / half)
    all_rows_s = svc_fit_s * (rows / svc_rows) ** exponent
    print_out(f"SVC's fit time grew as rows^{exponent:.1f} from {half:,} to {svc_rows:,} rows; "
              f"at that rate all {rows:,} rows\nwould take about {all_rows_s:,.0f} s "
              f"(estimated, not run). LowRankSVC's fit grows linearly with the rows,\nand its "
              f"prediction time with its basis functions. Try --rows and --svc-rows.")
