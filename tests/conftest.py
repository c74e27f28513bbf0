import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def read_only(*arrays):
    """Shared test arrays are made read-only so no test (or fit) can alter them."""
    for a in arrays:
        a.flags.writeable = False
    return arrays
