"""The one exception type of :mod:`sparsekernel.io`."""

__all__ = ["ModelFormatError"]


class ModelFormatError(ValueError):
    """A model cannot be saved in, or read from, the sparsekernel model format.

    Raised by :func:`~sparsekernel.io.save` when the estimator holds a value the format cannot
    represent, and by :func:`~sparsekernel.io.load` when a file is not a valid model file.
    """
