"""The Nystrom machines on an array-API device (a GPU) against the same machine's CPU.

``LowRankSVC`` fitted on arrays of a namespace under scikit-learn's ``array_api_dispatch``
(landmarks, whitening, features and the Newton solver on the device), and the same estimator
on NumPy on the CPU (up to a size the script's budget allows): test error, fit and predict
time, peak device memory. Cases: Fashion-MNIST (60,000 x 784, 10 classes) at m = 4,000 /
10,000 / 20,000, ijcnn1 (gamma = 2), and a noisy checkerboard of 10^7 rows. Data from the
shared data folder; nothing downloads.

Run on a machine with a GPU and PyTorch (or CuPy)::

    SCIPY_ARRAY_API=1 python benchmarks/bench_gpu.py                  # sized for < 8 minutes
    SCIPY_ARRAY_API=1 python benchmarks/bench_gpu.py --quick --namespace array_api_strict

(``--quick``: small sizes, the namespace on the CPU: a smoke run.) Writes
benchmarks/results/gpu/gpu{,_quick}.json and .md.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from _harness import RESULTS, load_note, write_results
from sparsekernel import LowRankSVC
from sparsekernel.datasets import make_checkerboard


def _namespace(name, device):
    """``(to_device, synchronize, peak_bytes)`` for the namespace."""
    if name == "torch":
        import torch

        dev = torch.device(device)

        def peak():
            return torch.cuda.max_memory_allocated(dev) if dev.type == "cuda" else None

        def sync():
            if dev.type == "cuda":
                torch.cuda.synchronize(dev)

        if dev.type == "cuda":
            torch.cuda.reset_peak_memory_stats(dev)
        return (lambda a: torch.asarray(a, device=dev)), sync, peak, (
            lambda: torch.cuda.reset_peak_memory_stats(dev) if dev.type == "cuda" else None)
    if name == "cupy":
        import cupy

        pool = cupy.get_default_memory_pool()
        return cupy.asarray, cupy.cuda.Device().synchronize, pool.total_bytes, (lambda: None)
    import array_api_strict

    return array_api_strict.asarray, (lambda: None), (lambda: None), (lambda: None)


def _cases(quick):
    """``(name, X, y, X_test, y_test, params)`` of each case."""
    import _suite_data

    cases = []
    if quick:
        X, y = make_checkerboard(20_000, noise=0.05, random_state=0)
        Xt, yt = make_checkerboard(5_000, noise=0.05, random_state=1)
        cases.append(("checkerboard 20,000", X, y, Xt, yt, dict(n_basis=100, gamma=2.0,
                                                                 C=100.0)))
        return cases
    try:
        X, y, Xt, yt = _suite_data.load("fashion_mnist")
        for m in (4_000, 10_000, 20_000):
            cases.append((f"fashion_mnist m={m}", X, y, Xt, yt, dict(n_basis=m, C=10.0)))
    except FileNotFoundError:
        pass
    try:
        X, y, Xt, yt = _suite_data.load("ijcnn1")
        cases.append(("ijcnn1", X, y, Xt, yt, dict(gamma=2.0, C=10.0)))
    except FileNotFoundError:
        pass
    X, y = make_checkerboard(10_000_000, noise=0.05, random_state=0)
    Xt, yt = make_checkerboard(100_000, noise=0.05, random_state=1)
    cases.append(("checkerboard 10,000,000", X, y, Xt, yt, dict(n_basis=300, gamma=2.0,
                                                                 C=100.0)))
    return cases


def _run_device(params, X, y, Xt, yt, ns):
    import sklearn

    to_device, sync, peak, reset = ns
    Xd, yd, Xtd = (to_device(np.ascontiguousarray(a)) for a in (X, y, Xt))
    sync()
    reset()
    with sklearn.config_context(array_api_dispatch=True):
        t0 = time.perf_counter()
        est = LowRankSVC(random_state=0, **params).fit(Xd, yd)
        sync()
        fit_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        pred = est.predict(Xtd)
        sync()
        predict_s = time.perf_counter() - t0
    from sparsekernel.compute import to_numpy

    err = 100.0 * float(np.mean(np.asarray(to_numpy(pred)) != yt))
    mem = peak()
    return {"fit_s": fit_s, "predict_s": predict_s, "error_pct": err,
            "n_basis": int(est.basis_.shape[0]),
            "device_peak_mib": "n/a" if mem is None else round(mem / 2**20, 1)}


def _run_cpu(params, X, y, Xt, yt):
    t0 = time.perf_counter()
    est = LowRankSVC(random_state=0, **params).fit(X, y)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = est.predict(Xt)
    predict_s = time.perf_counter() - t0
    return {"fit_s": fit_s, "predict_s": predict_s,
            "error_pct": 100.0 * float(np.mean(pred != yt)),
            "n_basis": int(est.basis_.shape[0])}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--namespace", default="torch", choices=["torch", "cupy", "array_api_strict"])
    ap.add_argument("--device", default="cuda", help="the namespace's device (torch: cuda, cpu)")
    ap.add_argument("--no-cpu", action="store_true", help="skip the NumPy fits on the CPU")
    ap.add_argument("--cpu-max-rows", type=int, default=2_000_000,
                    help="NumPy fits on the CPU only up to this many training rows")
    ap.add_argument("--cpu-max-work", type=float, default=1e12,
                    help="NumPy fits on the CPU only up to this n * m^2 (the Newton "
                         "solver's Gram work; larger ones take tens of minutes there)")
    ap.add_argument("--quick", action="store_true", help="a small smoke run")
    ap.add_argument("--out", default=None,
                    help="results folder (default benchmarks/results/gpu)")
    args = ap.parse_args()
    if os.environ.get("SCIPY_ARRAY_API") != "1":
        ap.error("set SCIPY_ARRAY_API=1 (scikit-learn's array_api_dispatch needs it)")
    device = "cpu" if args.namespace == "array_api_strict" else args.device
    ns = _namespace(args.namespace, device)
    rows, start = [], load_note()
    for name, X, y, Xt, yt, params in _cases(args.quick):
        X, Xt = X.astype(np.float32), Xt.astype(np.float32)  # float32 by default on a GPU
        out = _run_device(params, X, y, Xt, yt, ns)
        rows.append({"data": name, "where": f"{args.namespace} ({device})", **out})
        print(rows[-1], flush=True)
        work = float(X.shape[0]) * out["n_basis"] ** 2
        if not args.no_cpu and X.shape[0] <= args.cpu_max_rows and work <= args.cpu_max_work:
            rows.append({"data": name, "where": f"NumPy (CPU, {os.cpu_count()} cores)",
                         **_run_cpu(params, X, y, Xt, yt)})
            print(rows[-1], flush=True)
    name = "gpu_quick" if args.quick else "gpu"
    payload = {"title": "LowRankSVC on an array-API device against NumPy on the CPU",
               "notes": [start, "float32 data; LowRankSVC(random_state=0) with the listed "
                         "parameters, defaults otherwise; times include moving nothing: "
                         "the arrays are on the device before the clock starts",
                         "labels, weights and gamma are computed on the host; the "
                         "landmarks, the whitening, the features and the Newton solver's "
                         "products and systems on the device",
                         f"NumPy on the CPU for at most {args.cpu_max_rows} rows and "
                         f"n m^2 <= {args.cpu_max_work:g}"],
               "rows": rows}
    cols = [("data", "data"), ("where", "where"), ("m", "n_basis"), ("fit s", "fit_s"),
            ("predict s", "predict_s"), ("error %", "error_pct"),
            ("device peak MiB", "device_peak_mib")]
    print(write_results(name, payload, cols, args.out or RESULTS))


if __name__ == "__main__":
    main()
