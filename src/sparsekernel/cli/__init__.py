"""The ``sparsekernel`` command: ``fit``, ``predict`` and ``demo`` (run ``sparsekernel -h``)."""

from ._main import main

__all__ = ["main"]
