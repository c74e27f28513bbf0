"""The ``sparsekernel`` command: ``train``, ``predict``, ``scale``, ``tune``, ``export`` and
``demo``.

LIBSVM's svm-train, svm-predict, svm-scale and grid.py with their flags, and ``export``, a
saved model as an ONNX graph (run ``sparsekernel COMMAND --help``).
"""

import sys

__all__ = ["main"]

PROG = "sparsekernel"
INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a Ctrl-C


def main(argv=None):
    """Run the ``sparsekernel`` command.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name; ``None`` reads ``sys.argv[1:]``: the process's
        own command, which ignores Ctrl-C from the moment its output file is in place until
        the process exits (so that the exit status matches the file). With ``argv`` given,
        SIGINT's handler is restored before ``main`` returns.

    Returns
    -------
    int
        Exit status: 0 on success, 1 when the command fails (missing or malformed file,
        invalid parameter value), 2 for command-line usage errors, 130 when interrupted
        (Ctrl-C; no model or file is saved then), 141 when the output pipe was closed.
    """
    try:
        # Imported here: loading scikit-learn takes seconds, and a Ctrl-C meanwhile must
        # end the command as quietly as one during the work.
        from ._main import run
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return INTERRUPTED
    return run(argv)
