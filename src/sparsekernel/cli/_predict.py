"""``sparsekernel predict``: svm-predict on a saved model."""

from __future__ import annotations

import numpy as np
from sklearn.base import is_classifier

from ..datasets import load_svmlight_path
from ..io import load
from ._crossval import score_lines
from ._estimators import add_quiet_option
from ._options import UsageError
from ._probability import predict_proba

__all__ = ["add_parser", "format_value"]


def add_parser(subparsers):
    """Register the ``predict`` subcommand (svm-predict's arguments)."""
    parser = subparsers.add_parser(
        "predict", help="predict a LIBSVM file with a saved model (svm-predict's options)",
        description="Predict TEST_FILE with the model in MODEL_FILE, write one predicted "
                    "label (or value) per line to OUTPUT_FILE, and print the accuracy "
                    "(classification) or the mean squared error and squared correlation "
                    "coefficient (regression) against the file's labels, as svm-predict.",
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
    add_quiet_option(parser)
    parser.set_defaults(run=run)


def run(args):
    """Load, predict, write and report."""
    model = load(args.model_file)
    if (args.probability or args.decision_values) and not is_classifier(model):
        raise UsageError("-b 1 and --decision-values apply to classification models")
    # Test files often never use the last feature index: read them at the model's width.
    X, y = load_svmlight_path(args.test_file,
                              n_features=getattr(model, "n_features_in_", None))
    predictions, table = _predict(args, model, X)
    if args.output_file is not None:
        _write(args.output_file, predictions, table)
    if not args.quiet:
        print("\n".join(score_lines(model, predictions, y)))
    return 0


def _predict(args, model, X):
    """Predictions and, for -b 1 or --decision-values, ``(header, columns, formatter)``."""
    if args.probability:
        proba = predict_proba(model, X)
        predictions = model.classes_[np.argmax(proba, axis=1)]  # as svm-predict -b 1
        return predictions, (model.classes_, proba, "{:g}".format)  # LIBSVM prints %g
    predictions = model.predict(X)
    if not args.decision_values:
        return predictions, None
    scores = np.asarray(model.decision_function(X)).reshape(X.shape[0], -1)
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
