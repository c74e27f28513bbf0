"""``sparsekernel predict``: svm-predict on a saved model."""

from __future__ import annotations

import sys
from contextlib import nullcontext

import numpy as np
import scipy.sparse as sp
from sklearn.base import is_classifier
from sklearn.utils import get_tags

from ..io import ModelFormatError, load
from ..utils import format_bytes
from ._crossval import score_lines
from ._estimators import add_quiet_option
from ._files import (
    input_file,
    memory_budget,
    output_file,
    print_out,
    read_data,
    require_standard_output,
)
from ._options import UsageError
from ._probability import inner_model, predict_proba

__all__ = ["add_parser", "format_value", "load_model"]


def add_parser(subparsers):
    """Register the ``predict`` subcommand (svm-predict's arguments)."""
    parser = subparsers.add_parser(
        "predict", help="predict a LIBSVM file with a saved model (svm-predict's options)",
        description="Predict TEST_FILE (- reads standard input) with the model in "
                    "MODEL_FILE, write one predicted "
                    "label (or value) per line to OUTPUT_FILE, and print the accuracy "
                    "(classification) or the mean squared error and squared correlation "
                    "coefficient (regression) against the file's labels, as svm-predict. "
                    "Values of features the model never saw (indices beyond its features) "
                    "are ignored, with a note on standard error: the model has no weight or "
                    "centre coordinate for them. svm-predict does not fail on them either, "
                    "but its RBF kernel counts them in ||x - sv||^2, so its predictions can "
                    "differ.",
        usage="%(prog)s [options] TEST_FILE MODEL_FILE [OUTPUT_FILE]",
    )
    parser.add_argument("test_file", metavar="TEST_FILE")
    parser.add_argument("model_file", metavar="MODEL_FILE")
    parser.add_argument("output_file", metavar="OUTPUT_FILE", nargs="?")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("-b", type=int, choices=(0, 1), default=0, dest="probability",
                        metavar="probability_estimates",
                        help="1: write a header 'labels L1 L2 ...' and, per line, the label "
                             "of highest probability and the class probabilities (needs a "
                             "model trained with -b 1); default 0")
    output.add_argument("--decision-values", action="store_true",
                        help="write the header 'labels ...' and, per line, the predicted "
                             "label and the decision value of each labelled column")
    parser.add_argument("--memory-budget", metavar="SIZE",
                        help="cap on the memory the test data read into memory and the "
                             "prediction each take, e.g. 512MB; default: the model's")
    add_quiet_option(parser)
    parser.set_defaults(run=run)


def run(args):
    """Load, predict, write the output file, report, and only then put the file in place
    (an error or a Ctrl-C before, printing included, leaves no output file)."""
    if not args.quiet:
        require_standard_output("predict", "the accuracy (or the regression scores)",
                                "redirect it (e.g. > /dev/null) or pass -q")
    model = load_model(args.model_file)
    if (args.probability or args.decision_values) and not is_classifier(model):
        raise UsageError("-b 1 and --decision-values apply to classification models")
    budget = memory_budget(args.memory_budget if args.memory_budget is not None
                           else getattr(model, "memory_budget", None))
    with input_file(args.test_file, budget + 1) as path:
        # Features beyond the model's are dropped below, so the width needs no limit here.
        X, y = read_data(path, budget, limit_width=False)
    X = _model_width(X, getattr(model, "n_features_in_", None), args.quiet)
    X = _model_input(model, X, budget, args.test_file)
    predictions, table = _predict(args, model, X)
    with output_file(args.output_file) if args.output_file else nullcontext() as tmp:
        if tmp is not None:
            _write(tmp, predictions, table)
        if not args.quiet:
            print_out(*score_lines(model, predictions, y))
    return 0


def load_model(path):
    """The model in ``path``; a LIBSVM model file is named as such (``predict``,
    ``export``)."""
    try:
        return load(path)
    except ModelFormatError:
        with open(path, "rb") as fh:
            head = fh.read(9)
        if head == b"svm_type ":
            raise ModelFormatError(
                f"'{path}' is a LIBSVM model file (it starts with 'svm_type'), which "
                "sparsekernel cannot read; train a sparsekernel model on the same data with "
                "'sparsekernel train' (svm-train's options) and predict with that") from None
        raise


def _model_width(X, n_features, quiet):
    """``X`` with the model's ``n_features`` columns: test files often never use the last
    index (widened), and values of features the model never saw are dropped, with a note
    on standard error: the model has no weight or centre coordinate for them. (svm-predict
    does not fail on them either, but its RBF kernel counts them in ||x - sv||^2.)"""
    if n_features is None or X.shape[1] == n_features:
        return X
    unseen = X.indices >= n_features
    if unseen.any():
        if not quiet:
            print(f"sparsekernel: note: {_unseen_note(X.indices[unseen], n_features)}",
                  file=sys.stderr)
        kept = np.concatenate([[0], np.cumsum(~unseen)])
        X = sp.csr_matrix((X.data[~unseen], X.indices[~unseen], kept[X.indptr]),
                          shape=X.shape)
    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))


def _unseen_note(columns, n_features):
    """'3 values were ignored, of features the model never saw (feature index 200, ...)'."""
    indices = np.unique(columns) + 1  # as written in the file
    listed = ", ".join(map(str, indices[:5])) + (", ..." if len(indices) > 5 else "")
    values = "1 value was" if len(columns) == 1 else f"{len(columns)} values were"
    return (f"{values} ignored, of features the model never saw (feature index {listed}): "
            f"the model has {n_features} features, and no weight or centre coordinate for "
            "the others")


def _model_input(model, X, budget, path):
    """``X`` dense when the model (its first step) cannot take sparse input, e.g. a
    ``StandardScaler`` that centres; refused when the dense matrix exceeds the budget."""
    if get_tags(model).input_tags.sparse:
        return X
    steps = getattr(model, "steps", None)
    first = type(steps[0][1] if steps else model).__name__
    nbytes = X.shape[0] * X.shape[1] * X.dtype.itemsize
    if nbytes > budget:
        raise ValueError(
            f"the model's first step, {first}, takes dense input only, and '{path}' as a "
            f"dense matrix takes {format_bytes(nbytes)}, above --memory-budget "
            f"{format_bytes(budget)}; raise --memory-budget or split the file")
    return X.toarray()


def _predict(args, model, X):
    """Predictions and, for -b 1 or --decision-values, ``(header, columns, formatter)``."""
    if args.probability:
        proba = predict_proba(model, X)
        predictions = model.classes_[np.argmax(proba, axis=1)]  # as svm-predict -b 1
        return predictions, (model.classes_, proba, "{:g}".format)  # LIBSVM prints %g
    predictions = model.predict(X)
    if not args.decision_values:
        return predictions, None
    scores = np.asarray(inner_model(model).decision_function(X)).reshape(X.shape[0], -1)
    # A binary model has one score, that of classes_[1] (positive: that label).
    return predictions, (model.classes_[-scores.shape[1]:], scores, format_value)


def _write(path, predictions, table):
    """One label per line, or after a 'labels ...' header the label and its columns."""
    with open(path, "w", encoding="utf-8") as out:
        if table is None:
            out.writelines(f"{format_value(v)}\n" for v in predictions)
            return
        header, columns, number = table
        out.write(" ".join(["labels", *map(format_value, header)]) + "\n")
        for label, row in zip(predictions, columns.tolist(), strict=True):
            out.write(" ".join([format_value(label), *map(number, row)]) + "\n")


def format_value(value):
    """A label or prediction as LIBSVM users expect: '1' rather than '1.0'."""
    if isinstance(value, float | np.floating):
        value = float(value)
        # repr is the shortest text that reads back to the same float.
        return str(int(value)) if value.is_integer() else repr(value)
    return str(value)
