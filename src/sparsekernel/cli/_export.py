"""``sparsekernel export``: a saved model as an ONNX graph that any ONNX runtime serves."""

from __future__ import annotations

import argparse

import numpy as np

from ..io import OnnxExportError, to_onnx
from ..utils import format_bytes
from ._estimators import add_quiet_option
from ._files import output_file, print_out, require_standard_output
from ._predict import load_model
from ._probability import inner_model

__all__ = ["add_parser"]

#: The input precisions ``--dtype`` offers.
DTYPES = {"float64": np.float64, "float32": np.float32}
#: The oldest opset whose graphs run: the RBF kernel's Max broadcasts from opset 8 on.
MIN_OPSET = 8
#: Protobuf's limit on one serialized message, which an ONNX file without external data is.
_PROTOBUF_LIMIT = 2**31 - 1

DESCRIPTION = (
    "Write the model in MODEL_FILE (from 'sparsekernel train', or saved with "
    "sparsekernel.io.save) as an ONNX graph to ONNX_FILE, for onnxruntime or any other ONNX "
    "runtime. The graph takes one input, X: dense rows of the model's number of features "
    "(LIBSVM index i is column i - 1, absent features are 0), float64 unless --dtype "
    "float32. Its outputs are those of skl2onnx: a classifier gives 'label' (int64, one per "
    "row: predict's labels) then 'probabilities' (with -b 1 the class probabilities, columns "
    "in sorted label order, as predict -b 1; without -b 1 the decision values of predict "
    "--decision-values: one column for two classes, the score of the larger label); a "
    "regressor (-s 3) gives 'variable', one value per row. Needs the onnx extra: pip install "
    "'sparsekernel[onnx]'."
)


def add_parser(subparsers):
    """Register the ``export`` subcommand.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The ``sparsekernel`` parser's subcommands.
    """
    parser = subparsers.add_parser(
        "export", help="write a saved model as an ONNX graph (for any ONNX runtime)",
        description=DESCRIPTION, usage="%(prog)s [options] MODEL_FILE ONNX_FILE",
        epilog="Example: sparsekernel export heart.model heart.onnx; then in Python, "
               "onnxruntime.InferenceSession('heart.onnx').run(None, {'X': rows}) returns "
               "[labels, probabilities].",
    )
    parser.add_argument("model_file", metavar="MODEL_FILE")
    parser.add_argument("onnx_file", metavar="ONNX_FILE")
    parser.add_argument("--dtype", choices=tuple(DTYPES), default="float64",
                        help="precision of the input X (float32 halves what a caller sends; "
                             "the graph computes in float64 where the model does, and its "
                             "results equal predict's up to float32 rounding); default: "
                             "float64, the precision LIBSVM files are read in")
    parser.add_argument("--target-opset", type=_opset_value, dest="target_opset",
                        metavar="N",
                        help=f"ONNX opset of the graph, {MIN_OPSET} or newer (lower it for "
                             "an older runtime); default: the newest that onnx and skl2onnx "
                             "both support")
    add_quiet_option(parser)
    parser.set_defaults(run=run)


def _opset_value(text):
    """``--target-opset``: an integer from :data:`MIN_OPSET` on."""
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < MIN_OPSET:
        raise argparse.ArgumentTypeError(f"expected an opset from {MIN_OPSET} on, got {text!r}")
    return value


def run(args):
    """Load, convert, print the summary, and only then put the ONNX file in place (an error
    or a Ctrl-C before leaves no file)."""
    if not args.quiet:
        require_standard_output("export", "its summary",
                                "redirect it (e.g. > /dev/null) or pass -q")
    _require_onnx()
    model = load_model(args.model_file)
    width = _input_width(model)
    sample = np.zeros((1, width), dtype=DTYPES[args.dtype])
    try:
        graph = to_onnx(model, sample, target_opset=args.target_opset, zipmap=False)
    except (OnnxExportError, OSError, MemoryError):
        raise
    except Exception as exc:  # skl2onnx fails in its own words (NotImplementedError, ...)
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise OnnxExportError(f"{_name(model)} cannot be written as ONNX: {detail}") from exc
    size = graph.ByteSize()
    if size > _PROTOBUF_LIMIT:
        raise OnnxExportError(
            f"the ONNX graph of {_name(model)} takes {format_bytes(size)}, above the 2 GiB "
            "that one ONNX file holds; train a model with fewer basis functions (--n-basis)")
    with output_file(args.onnx_file) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(graph.SerializeToString())
        if not args.quiet:
            print_out(_summary(model, graph, width, args))
    return 0


def _require_onnx():
    """Refuse, in one line, before the model is read, when the onnx extra is missing."""
    try:
        import onnx  # noqa: F401
        import skl2onnx  # noqa: F401
    except ImportError as exc:
        raise OnnxExportError(
            f"export needs the onnx extra, which is not installed ({exc.name or exc} is "
            "missing): pip install 'sparsekernel[onnx]'") from None


def _input_width(model):
    """The model's number of features, the width of the graph's input."""
    width = getattr(model, "n_features_in_", None)
    if width is None:
        raise OnnxExportError(f"{_name(model)} does not record its number of features "
                              "(n_features_in_), which the graph's input needs")
    return int(width)


def _name(model):
    """'ReducedSVC', or 'ReducedSVC with probability estimates (-b 1)'."""
    inner = inner_model(model)
    return type(inner).__name__ + (" with probability estimates (-b 1)"
                                   if inner is not model else "")


def _summary(model, graph, width, args):
    """'ReducedSVC: input X (float64, 5 features), outputs label, probabilities; saved to
    model.onnx'."""
    constants = {init.name for init in graph.graph.initializer}  # inputs up to IR version 3
    inputs = ", ".join(i.name for i in graph.graph.input if i.name not in constants)
    outputs = ", ".join(o.name for o in graph.graph.output)
    return (f"{_name(model)}: input {inputs} ({args.dtype}, {width} features), outputs "
            f"{outputs}; saved to {args.onnx_file}")
