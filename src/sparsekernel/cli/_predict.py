"""``sparsekernel predict``: apply a saved model to a LIBSVM/svmlight file."""

from __future__ import annotations

import numpy as np
from sklearn.base import is_classifier

from ..datasets import load_svmlight_path
from ..io import load
from ._fit import add_verbosity_options

__all__ = ["add_parser", "format_value"]


def add_parser(subparsers):
    """Register the ``predict`` subcommand (LIBSVM's svm-predict argument order)."""
    parser = subparsers.add_parser(
        "predict", help="predict a LIBSVM/svmlight file with a saved model",
        description="Predict TEST_FILE with the model in MODEL_FILE, write one prediction per "
                    "line to OUTPUT_FILE if given, and print the accuracy (classifiers) or "
                    "RMSE (regressors) against the file's labels.",
    )
    parser.add_argument("test_file", metavar="TEST_FILE")
    parser.add_argument("model_file", metavar="MODEL_FILE")
    parser.add_argument("output_file", metavar="OUTPUT_FILE", nargs="?")
    add_verbosity_options(parser)
    parser.set_defaults(run=run)


def run(args):
    """Load, predict, write and report."""
    model = load(args.model_file)
    # Test files often never use the last feature index: read them at the model's width.
    X, y = load_svmlight_path(args.test_file,
                              n_features=getattr(model, "n_features_in_", None))
    predictions = model.predict(X)
    if args.output_file is not None:
        with open(args.output_file, "w", encoding="utf-8") as out:
            out.writelines(f"{format_value(v)}\n" for v in predictions)
    if not args.quiet:
        print(_report(model, predictions, y))
    return 0


def _report(model, predictions, y):
    if is_classifier(model):
        correct = int(np.sum(predictions == y))
        return f"Accuracy = {100 * correct / len(y):.2f}% ({correct}/{len(y)})"
    rmse = np.sqrt(np.mean((predictions - y) ** 2))
    return f"RMSE = {rmse:.6g} ({len(y)} samples)"


def format_value(value):
    """A label or prediction as LIBSVM users expect: '1' rather than '1.0'."""
    if isinstance(value, float | np.floating):
        value = float(value)
        # repr is the shortest text that reads back to the same float.
        return str(int(value)) if value.is_integer() else repr(value)
    return str(value)
