"""``sparsekernel train`` (alias ``fit``): svm-train's command line on sparsekernel models."""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import is_classifier, is_outlier_detector

from ..io import save
from ..utils import MemoryBudgetWarning, format_bytes
from . import PROG
from ._crossval import cross_validation_lines
from ._estimators import add_estimator_options, make_estimator
from ._files import (
    STDIN,
    input_file,
    memory_budget,
    output_file,
    print_out,
    read_chunks,
    read_data,
    require_standard_output,
)
from ._options import UsageError
from ._probability import fit_with_probability, inner_model

__all__ = ["add_parser", "cv_seed", "default_model_file", "describe_size",
           "load_training_data"]

_COMPRESSED = (".gz", ".bz2", ".xz")

DESCRIPTION = """\
Train on TRAINING_SET_FILE (LIBSVM format, optionally .gz/.bz2/.xz; - reads standard
input) and save the model to MODEL_FILE (default: the training file's name without a
.gz/.bz2/.xz suffix, plus .model, in the current directory, as svm-train names it;
stdin.model for standard input). The model file is sparsekernel's own
format (a zip of arrays and JSON, loaded without pickle), not LIBSVM's text model.

The LIBSVM letters keep svm-train's meaning. One differs in substance: -c. The models here
solve 1/2 ||w||^2 + 1/2 b^2 + C/2 * sum_i s_i max(0, 1 - y_i f(x_i))^2 (squared hinge,
C/2, penalized bias b), where LIBSVM solves 1/2 ||w||^2 + C * sum_i max(0, 1 - y_i f(x_i))
(hinge, free bias). -c is passed through unchanged, so its best value differs from
LIBSVM's; search it with 'sparsekernel tune'.
"""


def add_parser(subparsers):
    """Register the ``train`` subcommand and its alias ``fit``."""
    parser = subparsers.add_parser(
        "train", aliases=["fit"], add_help=False,  # -h is LIBSVM's shrinking flag
        help="train on a LIBSVM file and save the model (svm-train's options)",
        description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="%(prog)s [options] TRAINING_SET_FILE [MODEL_FILE]",
    )
    parser.add_argument("--help", action="help", help="show this help message and exit")
    parser.add_argument("train_file", metavar="TRAINING_SET_FILE")
    parser.add_argument("model_file", metavar="MODEL_FILE", nargs="?")
    add_estimator_options(parser)
    parser.set_defaults(run=run)


def default_model_file(train_file):
    """svm-train's default: ``<basename>.model`` in the current directory (``stdin.model``
    for standard input, as for ``/dev/stdin``)."""
    name = "stdin" if train_file == STDIN else Path(train_file).name
    for suffix in _COMPRESSED:
        name = name.removesuffix(suffix)
    return f"{name}.model"


def load_training_data(args, path, dtype=np.float64):
    """``(X, y)`` of the training file at ``path`` (from :func:`input_file`), read in
    memory within ``--memory-budget``."""
    return read_data(path, memory_budget(args.memory_budget),
                     n_features=args.n_features, dtype=dtype,
                     streamed="'train --model lowrank'" if args.command != "tune" else None)


def run(args):
    """Cross-validate (``-v``), or fit, score, save and print one summary line.

    The model is written under a temporary name, the summary printed (flushed), and only
    then is the file renamed into place: an error or a Ctrl-C at any point before leaves no
    model file, and once it is in place the command has completed.
    """
    model, task = make_estimator(args)
    _check_modes(args, model, task)
    if args.folds is not None:  # printed even with -q, as svm-train does
        require_standard_output("train -v", "its result", "redirect it (e.g. > cv.txt)")
    elif not args.quiet:
        require_standard_output("train", "its summary",
                                "redirect it (e.g. > /dev/null) or pass -q")
    limit = None if _streamed(args, model) else memory_budget(args.memory_budget) + 1
    with input_file(args.train_file, limit) as path:
        if args.folds is not None:
            X, y = load_training_data(args, path)
            print_out(*cross_validation_lines(model, X, y, args.folds, cv_seed(args)))
            return 0
        model_file = args.model_file or default_model_file(args.train_file)
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", MemoryBudgetWarning)
            model, chunks, streamed = _fit(model, args, path)
        seconds = time.perf_counter() - start
        _restate_warnings(caught, args)
        summary = _summary(model, training_score(model, chunks), seconds, streamed,
                           model_file)
    with output_file(model_file) as tmp:
        save(model, tmp)
        if not args.quiet:
            print_out(summary)
    return 0


def _restate_warnings(caught, args):
    """The first MemoryBudgetWarning in the command line's terms; other warnings as Python
    shows them."""
    said = False
    for w in caught:
        if not issubclass(w.category, MemoryBudgetWarning):
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
        elif not said:
            said, m = True, w.message
            budget = format_bytes(memory_budget(args.memory_budget)).replace(" ", "")
            needed = format_bytes(m.memory_budget_needed).replace(" ", "")
            print(f"{PROG}: warning: --memory-budget {budget} set the number of basis "
                  f"functions: --n-basis auto wanted {m.n_basis_wanted}, the fit uses "
                  f"{m.n_basis}; --memory-budget {needed} would hold {m.n_basis_wanted} (or "
                  "pass --n-basis)", file=sys.stderr)


def _check_modes(args, model, task):
    if args.probability and task != "classification":
        raise UsageError("-b 1 (probability estimates) applies to classification (-s 0)")
    if args.float32 and not _streamed(args, model):
        raise UsageError("--float32 applies to a streamed model (--model lowrank) only, "
                         "without -v and -b 1")


def _streamed(args, model):
    """Whether the file is read chunk by chunk (bounded memory) instead of loaded."""
    return hasattr(model, "fit_stream") and args.folds is None and not args.probability


def cv_seed(args):
    """Seed of the cross-validation folds: ``--random-state``, else 0 (repeatable runs)."""
    return 0 if args.random_state is None else args.random_state


def _summary(model, score, seconds, streamed, model_file):
    """The line ``train`` prints: the estimator (the one trained on all rows of a ``-b 1``
    model), its training score and size, the fit time and the model file."""
    inner = inner_model(model)
    name = type(inner).__name__ + (" with probability estimates (-b 1)"
                                   if inner is not model else "")
    how = f" (streamed in chunks of {model.chunk_size} rows)" if streamed else ""
    return (f"{name}: {score}, {describe_size(model)}, fit {seconds:.3g} s{how}; saved to "
            f"{model_file}")


def _fit(model, args, path):
    """The fitted model, the ``(X, y)`` chunks to score it on, and whether it streamed."""
    if _streamed(args, model):  # the file is read chunk by chunk, to fit and again to score
        dtype = np.float32 if args.float32 else np.float64
        chunks, labels = read_chunks(path, model.chunk_size, args.n_features,
                                     dtype, memory_budget(args.memory_budget))
        return model.fit_stream(chunks, classes=labels), chunks, True
    X, y = load_training_data(args, path)
    if args.probability:
        return fit_with_probability(model, X, y, cv_seed(args)), [(X, y)], False
    return model.fit(X, y), [(X, y)], False


def training_score(model, chunks):
    """'training accuracy 90% (9/10)', 'training mean squared error 0.12', or a novelty
    detector's 'training rows outside 5% (50/1000)'."""
    if is_outlier_detector(model):
        outside = sum(int(np.sum(model.predict(X) == -1)) for X, _ in chunks)
        n = sum(len(y) for _, y in chunks)
        return f"training rows outside {100 * outside / n:g}% ({outside}/{n})"
    total = n = 0
    for X, y in chunks:  # correct predictions, or squared errors
        predictions = model.predict(X)
        total += (int(np.sum(predictions == y)) if is_classifier(model)
                  else float(np.sum((predictions - y) ** 2)))
        n += len(y)
    if is_classifier(model):
        return f"training accuracy {100 * total / n:g}% ({total}/{n})"
    return f"training mean squared error {total / n:g}"


def describe_size(model):
    """How many basis functions the fitted model evaluates per prediction, and whether
    ``n_basis='auto'`` chose that number (said only when the estimator did not say so
    itself: at ``verbose >= 1`` it names the number on standard error as the fit starts)."""
    model = inner_model(model)
    basis = getattr(model, "basis_", None)
    if basis is None:
        return f"linear in {model.n_features_in_} features (no basis functions)"
    params = model.get_params()
    auto = params.get("n_basis") == "auto" and not params.get("verbose")
    return f"{basis.shape[0]} basis functions{' (chosen by --n-basis auto)' if auto else ''}"
