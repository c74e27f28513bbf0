"""``sparsekernel tune``: grid.py's job by a nested uniform-design search over (C, gamma)."""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
import warnings
from pathlib import Path

from ..model_selection import UniformDesignSearchCV, check_search_boundary
from ..model_selection._uniform_design import SearchBoundaryWarning
from ._crossval import cv_splitter
from ._estimators import add_estimator_options, make_estimator
from ._files import input_file, memory_budget, output_file, print_out, require_standard_output
from ._options import UsageError, folds_value
from ._train import cv_seed, load_training_data

__all__ = ["add_parser"]

DESCRIPTION = """\
Search (log2 C, log2 gamma) for the best cross-validation score, as LIBSVM's grid.py does,
with the nested uniform design of Huang et al. (2007): 13 points over the search box, then
a 9-point design on a box half as wide around the best of them, less the points already
evaluated: 8 or 9 more (9, then 4 or 5, from 10,000 rows on), instead of grid.py's 110-point
grid. Every point is one -v n-fold cross-validation of 'sparsekernel train' with the other
options given here. The C found is this library's C (see 'sparsekernel train --help'), to
be passed to 'sparsekernel train -c'. The last line is grid.py's: best C, best gamma and
the best rate (CV accuracy in percent, or the mean squared error), separated by spaces.
"""


def add_parser(subparsers):
    """Register the ``tune`` subcommand."""
    parser = subparsers.add_parser(
        "tune", add_help=False,  # -h is LIBSVM's shrinking flag
        help="search C and gamma by cross-validation (grid.py's job, uniform design)",
        description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="%(prog)s [options] TRAINING_SET_FILE",
    )
    parser.add_argument("--help", action="help", help="show this help message and exit")
    parser.add_argument("train_file", metavar="TRAINING_SET_FILE")
    search = parser.add_argument_group("search options (grid.py's where they exist)")
    search.add_argument("-log2c", "--log2c", type=_log2_range, dest="log2c",
                        metavar="begin,end", help="range of log2 C (grid.py's step is "
                        "accepted and ignored); default: C in [1, 1e6] for models with "
                        "basis functions, [1e-2, 1e4] for the full kernel")
    search.add_argument("-log2g", "--log2g", type=_log2_range, dest="log2g",
                        metavar="begin,end", help="range of log2 gamma; default: 2^-5 to "
                        "2^5 times 1 / (d var(X)), scikit-learn's gamma='scale'")
    search.add_argument("-v", type=folds_value, default=5, dest="search_folds", metavar="fold",
                        help="n-fold cross-validation (default 5)")
    search.add_argument("--plot", "-png", metavar="FILE",
                        help="draw the evaluated points over the CV error surface into FILE "
                             "(needs matplotlib)")
    add_estimator_options(parser, exclude=("-c", "-g", "-b", "-v"))
    parser.set_defaults(run=run, C=None, gamma=None, probability=0, folds=None)


def _log2_range(text):
    """'begin,end[,step]' -> (2**begin, 2**end); the step of a grid means nothing here."""
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        values = []
    if len(values) not in (2, 3) or not values[0] < values[1]:
        raise argparse.ArgumentTypeError(
            f"expected begin,end (or grid.py's begin,end,step) with begin < end, got {text!r}")
    return 2.0 ** values[0], 2.0 ** values[1]


def run(args):
    """Search, print every point and the best, draw the plot if asked."""
    if args.float32:
        raise UsageError("--float32 applies to 'train' of a streamed model only")
    model, task = make_estimator(args)
    params = model.get_params()
    if "gamma" not in params or "C" not in params or params.get("kernel") == "linear":
        raise UsageError(f"tune searches C and gamma: {type(model).__name__} with kernel "
                         f"{params.get('kernel')!r} has no gamma to search")
    require_standard_output("tune", "the search's results", "redirect it (e.g. > results)")
    with input_file(args.train_file, memory_budget(args.memory_budget) + 1) as path:
        X, y = load_training_data(args, path)
    seed = cv_seed(args)
    regression = task == "regression"
    search = UniformDesignSearchCV(
        model, C_range=args.log2c or "auto", gamma_range=args.log2g or "auto",
        cv=cv_splitter(not regression, args.search_folds, seed),
        scoring="neg_mean_squared_error" if regression else None, refit=False,
        error_score="raise", random_state=seed,  # a failed fit stops the search, with its error
    )
    with _boundary_warnings_silenced():  # said once below, in the command line's terms
        search.fit(X, y)
    lines = [] if args.quiet else _point_lines(search, regression)
    print_out(*lines, _best_line(search, regression), _grid_line(search, regression))
    for line in _boundary_lines(search):
        print(line, file=sys.stderr)
    if args.plot:
        with _boundary_warnings_silenced():
            _plot(search, args.plot)
    return 0


@contextlib.contextmanager
def _boundary_warnings_silenced():
    """Ignore the library's SearchBoundaryWarning (a Python warning with a source path)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SearchBoundaryWarning)
        yield


def _rate(score, regression):
    """grid.py's rate: CV accuracy in percent, or the mean squared error."""
    return -score if regression else 100 * score


def _point_lines(search, regression):
    results = search.cv_results_
    return [f"stage {stage}: log2c={p:.4g} log2g={q:.4g} rate={_rate(s, regression):g}"
            for stage, p, q, s in zip(results["stage"], results["log2_C"],
                                      results["log2_gamma"], results["mean_test_score"],
                                      strict=True)]


def _best_line(search, regression):
    C, gamma = search.best_params_["C"], search.best_params_["gamma"]
    rate = _rate(search.best_score_, regression)
    what = f"CV mean squared error = {rate:g}" if regression else f"CV accuracy = {rate:g}%"
    return f"Best C = {C:g}, gamma = {gamma:g}, {what}"


def _grid_line(search, regression):
    """grid.py's last line, 'best_c best_g best_rate' (the rate as svm-train prints it)."""
    C, gamma = search.best_params_["C"], search.best_params_["gamma"]
    rate = float(f"{_rate(search.best_score_, regression):g}")
    return f"{float(C)} {float(gamma)} {rate}"


#: The grid.py option that sets each axis of the search box.
_BOX_OPTIONS = {"C_range": ("C", "-log2c"), "gamma_range": ("gamma", "-log2g")}


def _boundary_lines(search):
    """One warning per edge of the search box the best point lies on, with the option that
    widens it (the library's SearchBoundaryWarning, in the command line's terms)."""
    lines = []
    for range_name, side in check_search_boundary(search, warn=False):
        name, option = _BOX_OPTIONS[range_name]
        lo, hi = search.search_box_[0 if name == "C" else 1]
        extra = (hi - lo) / 2
        wider = (lo - extra, hi) if side == "lower" else (lo, hi + extra)
        lines.append(
            f"sparsekernel: warning: the best {name} = {search.best_params_[name]:g} "
            f"(log2 {math.log2(search.best_params_[name]):.4g}) lies on the {side} edge of "
            f"the search box {option} {lo:.4g},{hi:.4g}; the optimum may lie beyond it: "
            f"widen it, e.g. {option} {wider[0]:.4g},{wider[1]:.4g}")
    return lines


def _plot(search, path):
    try:
        from matplotlib.figure import Figure
    except ImportError:
        print("sparsekernel: note: matplotlib is not installed, so no plot was written (pip "
              "install 'sparsekernel[plot]')", file=sys.stderr)
        return
    from ..model_selection import plot_ud_search

    figure = Figure(figsize=(6, 5))  # no pyplot: no GUI backend, no global state
    plot_ud_search(search, ax=figure.subplots())
    with output_file(path) as tmp:  # the format from the name given, as savefig(path)
        figure.savefig(tmp, dpi=100, format=Path(path).suffix[1:].lower() or "png")
