"""Classification sets for ``bench_auto.py``: ones the ``n_basis='auto'`` rule was not tuned on.

Each loader returns ``(X_train, y_train, X_test, y_test)``, features dense float64. Rätsch's
IDA sets use their split 1, Ripley's set its published train/test files; everything else
(the full banana set, scikit-learn's bundled and generated sets) gets a stratified 70/30
split with seed 0, generated sets being drawn with seed 0 too. Shared files are read from
``find_shared_data``; a missing one raises ``FileNotFoundError`` (nothing is downloaded).

Sets of one's own: every ``NAME.csv`` in the folder named by the environment variable
``BENCH_AUTO_CSV`` (numeric features, the class label last, no header; quotes are ignored)
becomes the set ``csv:NAME``, split 70/30 like the others.
"""

from __future__ import annotations

import lzma
import os
from functools import partial
from pathlib import Path

import numpy as np
from sklearn import datasets as skd
from sklearn.model_selection import train_test_split

from sparsekernel.datasets import find_shared_data, load_ida, load_svmlight_paths

__all__ = ["SETS", "load"]


def _shared(*parts):
    path = find_shared_data(*parts)
    if path is None:
        raise FileNotFoundError(f"shared data {'/'.join(parts)} not found")
    return path


def _split(X, y):
    Xtr, Xte, ytr, yte = train_test_split(np.asarray(X, dtype=np.float64), y, test_size=0.3,
                                          random_state=0, stratify=y)
    return Xtr, ytr, Xte, yte


def _ida(name):
    return load_ida(_shared(f"raetsch_{name}"), name, split=1)


def _ripley():
    def read(name):
        with lzma.open(_shared("ripley", name), "rt") as fh:
            data = np.loadtxt(fh, skiprows=1)  # header line "xs ys yc"
        return data[:, :2], data[:, 2].astype(np.int64)

    return (*read("synth.tr.xz"), *read("synth.te.xz"))


def _banana():
    (X, y), = load_svmlight_paths([_shared("banana", "banana.all.txt.xz")], n_features=2,
                                  zero_based=False)
    return _split(X.toarray(), y)


def _bundled(loader):
    X, y = loader(return_X_y=True)
    return _split(X, y)


def _generated(maker, **kwargs):
    X, y = maker(random_state=0, **kwargs)
    return _split(X, y)


def _checkerboard(n=4000):
    X = np.random.RandomState(0).uniform(size=(n, 2))
    return _split(X, (np.floor(4 * X[:, 0]) + np.floor(4 * X[:, 1])).astype(np.int64) % 2)


SETS = {
    **{f"raetsch_{k}": partial(_ida, k)
       for k in ("banana", "heart", "ringnorm", "twonorm", "waveform")},
    "ripley": _ripley,
    "banana": _banana,
    "digits": partial(_bundled, skd.load_digits),
    "breast_cancer": partial(_bundled, skd.load_breast_cancer),
    "wine": partial(_bundled, skd.load_wine),
    "iris": partial(_bundled, skd.load_iris),
    "moons_2000": partial(_generated, skd.make_moons, n_samples=2000, noise=0.3),
    "moons_6000": partial(_generated, skd.make_moons, n_samples=6000, noise=0.3),
    "circles_3000": partial(_generated, skd.make_circles, n_samples=3000, noise=0.15,
                            factor=0.5),
    "classification_2000x20": partial(
        _generated, skd.make_classification, n_samples=2000, n_features=20, n_informative=10,
        n_redundant=4, n_classes=4, n_clusters_per_class=2, flip_y=0.02),
    "classification_5000x5": partial(  # low-dimensional, complex boundary
        _generated, skd.make_classification, n_samples=5400, n_features=5, n_informative=5,
        n_redundant=0, n_classes=2, n_clusters_per_class=8, class_sep=1.0, flip_y=0.02),
    "classification_5500x40_11": partial(
        _generated, skd.make_classification, n_samples=5500, n_features=40, n_informative=20,
        n_classes=11, n_clusters_per_class=1, class_sep=2.0),
    "classification_990x13_11": partial(
        _generated, skd.make_classification, n_samples=990, n_features=13, n_informative=10,
        n_classes=11, n_clusters_per_class=1, class_sep=1.5),
    "checkerboard_4000": _checkerboard,
    "quantiles_3000x6": partial(_generated, skd.make_gaussian_quantiles, n_samples=3000,
                                n_features=6, n_classes=3),
}


def _csv(path):
    with open(path) as fh:
        rows = [line.replace("'", "").replace('"', "").strip().split(",") for line in fh]
    rows = [row for row in rows if row != [""]]
    X = np.array([row[:-1] for row in rows], dtype=np.float64)
    return _split(X, np.array([row[-1].strip() for row in rows]))


if os.environ.get("BENCH_AUTO_CSV"):
    for _path in sorted(Path(os.environ["BENCH_AUTO_CSV"]).glob("*.csv")):
        SETS[f"csv:{_path.stem}"] = partial(_csv, _path)


def load(name):
    """``(X_train, y_train, X_test, y_test)`` of the set ``name`` (a key of ``SETS``)."""
    return SETS[name]()
