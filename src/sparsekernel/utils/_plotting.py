"""matplotlib, which is optional (the ``plot`` extra), for the package's plots."""

from __future__ import annotations

__all__ = ["pyplot"]


def pyplot():
    """matplotlib.pyplot, or an ImportError that says how to get it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError("Plotting needs matplotlib, which is optional: install it with "
                          "pip install 'sparsekernel[plot]'.") from exc
    return plt
