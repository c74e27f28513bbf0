"""The map step's data: stratified parts, and the tasks that build them on the workers.

Rows are *dealt*: the rows of each class, in random order, go round-robin to the parts,
each class starting where the previous one stopped. Every part then holds
floor or ceil(count_c / n_parts) rows of every class c and the part sizes differ by at most
one. For data spread over blocks (dask array chunks, files) each block deals its own rows
(with its own seed), starting each class where the previous blocks left it, so the global
deal is exactly as balanced as a deal of the concatenated data. No block ever travels to the
driver: a worker splits a block into ``n_parts`` pieces and each part's task fetches only its
own pieces.

Every function here is module-level (importable by name) and runs on a worker, except that
in-memory data is dealt by ``split_block`` on the driver.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array

from ..base import DTYPES

__all__ = ["block_stats", "deal", "fit_part", "load_libsvm_block", "make_block", "merge_stats",
           "split_block", "stack_pieces", "start_offsets"]

def deal(codes, n_classes, n_parts, offsets, rng):
    """Part index of every row; ``codes`` are class indices, ``offsets`` per-class starts."""
    part = np.empty(codes.shape[0], dtype=np.intp)
    for k in range(n_classes):
        rows = np.flatnonzero(codes == k)
        part[rng.permutation(rows)] = (offsets[k] + np.arange(rows.size)) % n_parts
    return part


def start_offsets(block_counts, n_parts):
    """Per block and class, where the deal starts: shape (n_blocks, n_classes).

    ``block_counts[b, k]`` is the number of rows of class k in block b. Class k starts after
    all rows of the classes before it and of class k in the earlier blocks.
    """
    block_counts = np.asarray(block_counts, dtype=np.int64)
    class_start = np.r_[0, np.cumsum(block_counts.sum(axis=0))[:-1]]
    earlier = np.cumsum(block_counts, axis=0) - block_counts
    return (class_start[None, :] + earlier) % n_parts


def make_block(X, y, sample_weight=None):
    """One validated block ``(X, y, sample_weight)``; X dense float or CSR."""
    X = check_array(X, accept_sparse="csr", dtype=DTYPES)
    y = np.asarray(y).ravel()
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"A block has {X.shape[0]} rows in X but {y.shape[0]} labels in y.")
    if sample_weight is not None:
        sample_weight = check_array(sample_weight, ensure_2d=False, dtype=np.float64).ravel()
    return X, y, sample_weight


def load_libsvm_block(path, dtype):
    """Read one LIBSVM (one-based) file on the worker: ``(X as CSR, y, None)``."""
    from ..datasets import load_svmlight_path

    X, y = load_svmlight_path(path, dtype=dtype, zero_based=False)
    return X, y, None


def block_stats(block):
    """Small summary of a block for the driver: labels, counts, width, entry moments."""
    X, y, _ = block
    labels, counts = np.unique(y, return_counts=True)
    n_entries = X.shape[0] * X.shape[1]
    with np.errstate(over="ignore", invalid="ignore"):  # extreme scales: inf, see merge_stats
        if sp.issparse(X):
            total, total_sq = X.sum(dtype=np.float64), X.multiply(X).sum(dtype=np.float64)
        else:
            Xd = np.asarray(X, dtype=np.float64)
            total, total_sq = Xd.sum(), np.einsum("ij,ij->", Xd, Xd)
        mean = np.float64(total) / n_entries if n_entries else np.float64(0.0)
        m2 = max(float(total_sq - n_entries * mean**2), 0.0)
    return {"labels": labels, "counts": counts, "n_rows": X.shape[0], "n_features": X.shape[1],
            "n_entries": n_entries, "mean": float(mean), "m2": m2, "sparse": sp.issparse(X)}


def merge_stats(stats):
    """Classes, per-block class counts, width and the variance of all entries of X."""
    classes = np.unique(np.concatenate([s["labels"] for s in stats]))
    counts = np.zeros((len(stats), len(classes)), dtype=np.int64)
    for b, s in enumerate(stats):
        counts[b, np.searchsorted(classes, s["labels"])] = s["counts"]
    # NumPy floats: features of extreme scale give an infinite variance (rejected by the
    # caller with a message about the scale) instead of Python's OverflowError here.
    n, mean, m2 = 0, np.float64(0.0), np.float64(0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        for s in stats:  # Chan et al.'s pairwise update: stable for many blocks
            n, mean, m2 = _chan_update(n, mean, m2, s)
    variance = float(m2 / n) if n else 0.0
    return classes, counts, max(s["n_features"] for s in stats), variance


def _chan_update(n, mean, m2, s):
    """Merge one block's (count, mean, M2) into the running ones."""
    nb = s["n_entries"]
    if nb == 0:
        return n, mean, m2
    delta = np.float64(s["mean"]) - mean
    return (n + nb, mean + delta * nb / (n + nb),
            m2 + s["m2"] + delta**2 * n * nb / (n + nb))


def _widen(X, n_features):
    if X.shape[1] == n_features:
        return X
    if X.shape[1] > n_features:
        raise ValueError(f"A block has {X.shape[1]} features, more than {n_features}.")
    X = sp.csr_matrix(X)
    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))


def split_block(block, classes, n_parts, offsets, seed, n_features):
    """Deal one block's rows into ``n_parts`` pieces ``(X, y, sample_weight)``."""
    X, y, sw = block
    X = _widen(X, n_features)
    codes = np.searchsorted(classes, y)
    part = deal(codes, len(classes), n_parts, offsets, np.random.default_rng(seed))
    rows = [np.flatnonzero(part == p) for p in range(n_parts)]
    return tuple((X[r], y[r], None if sw is None else sw[r]) for r in rows)


def stack_pieces(pieces):
    """Concatenate a part's pieces (one per block) into one ``(X, y, sample_weight)``."""
    Xs, ys, weights = zip(*pieces, strict=True)
    X = sp.vstack(Xs, format="csr") if any(sp.issparse(x) for x in Xs) else np.vstack(Xs)
    if all(w is None for w in weights):
        return X, np.concatenate(ys), None
    return X, np.concatenate(ys), np.concatenate(
        [np.ones(len(y)) if w is None else w for y, w in zip(ys, weights, strict=True)])


def fit_part(data, params, seed):
    """Map step: fit one ReducedSVC on a part; return what the reduce step needs.

    ``data`` is ``(X, y, sample_weight)`` or a list of pieces to stack. Only the reduced
    set travels back: its rows, labels and weights, and the part model's coefficients.
    """
    from ..svm import ReducedSVC

    X, y, sw = stack_pieces(data) if isinstance(data, list) else data
    model = ReducedSVC(**params, random_state=seed).fit(X, y, sample_weight=sw)
    rows = model.basis_indices_
    if rows is None:
        raise ValueError(
            f"MapReduceSVC's reduce step trains on the reduced-set rows and needs their labels, "
            f"but basis={params['basis']!r} returned centres that are not training rows. Use "
            f"basis='random' or a selector that returns training rows."
        )
    return {"centers": model.basis_, "y": y[rows], "sample_weight": None if sw is None
            else sw[rows], "classes": model.classes_, "coef": model.coef_,
            "intercept": model.intercept_, "gamma": model.gamma_, "n_iter": model.n_iter_,
            "n_rows": X.shape[0]}
