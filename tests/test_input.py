"""The fits' input objects (sparsekernel._input): where the rows are decides the object, and
its one-pass reduction over row blocks is the one-block sum."""

import numpy as np
import pytest

from sparsekernel import LowRankSVC, ReducedKernelPCA
from sparsekernel._input import ArrayInput, RowBlocks, fit_input
from sparsekernel.compute import NUMPY
from sparsekernel.solvers import MomentAccumulator


def _moments(F, w):
    acc = MomentAccumulator()
    acc.update(F, w)
    return acc


def test_numpy_rows_are_local_and_a_dask_collection_is_not(rng):
    X, y = rng.normal(size=(60, 3)), np.arange(60) % 2
    data = fit_input(LowRankSVC(), X, y)
    assert isinstance(data, ArrayInput) and data.local and not data.sampled
    assert data.on_host(10) is data and data.basis_args == {}
    Y, sw, y_enc = data.targets(LowRankSVC())
    assert Y.shape == (60, 1) and np.array_equal(sw, np.ones(60)) and y_enc is not None
    assert data.sample is data.X and data.n_rows == 60
    da = pytest.importorskip("dask.array")
    pytest.importorskip("distributed")
    dask_data = fit_input(LowRankSVC(), da.from_array(X, chunks=(20, -1)), y)
    assert not dask_data.local and dask_data.sampled and dask_data.n_rows == 60
    assert set(dask_data.basis_args) == {"gamma", "n_rows"}


def test_a_transformer_without_y_gets_checked_weights_and_a_classifier_must_have_y(rng):
    X = rng.normal(size=(30, 2))
    _, sw, y_enc = fit_input(ReducedKernelPCA(), X, None, np.full(30, 2.0)).targets(
        ReducedKernelPCA())
    assert np.array_equal(sw, np.full(30, 2.0)) and y_enc is None
    with pytest.raises(ValueError, match="sample_weight"):
        fit_input(ReducedKernelPCA(), X, None, np.ones(5)).targets(ReducedKernelPCA())
    with pytest.raises(ValueError, match="requires y"):
        fit_input(LowRankSVC(), X, None).targets(LowRankSVC())


@pytest.mark.parametrize("block_rows", [1, 7, 64, 1000])
def test_a_reduction_over_row_blocks_is_the_one_block_sum(rng, block_rows):
    """RowBlocks.reduce folds fn over the blocks in order (the moments of a closed form's
    one pass): the same moments as one block of all the rows, whatever the block size;
    blocks whose fn gives None are left out, and None comes back without any."""
    X = rng.normal(size=(200, 4)) + 5.0
    w = rng.uniform(0.0, 2.0, 200)

    def transform(rows):
        return np.tanh(rows) * 3.0

    blocks = RowBlocks(X, transform, 4, NUMPY, 0, block_rows=block_rows)
    got = blocks.reduce(_moments, MomentAccumulator.merge, w).result()
    want = _moments(transform(X), w).result()
    np.testing.assert_allclose(got.mean, want.mean, rtol=1e-12)
    np.testing.assert_allclose(got.cov, want.cov, rtol=1e-10, atol=1e-12)
    assert got.weight == pytest.approx(want.weight, rel=1e-12)
    assert blocks.reduce(lambda F, w: None, MomentAccumulator.merge, w) is None
