"""LowRankSVC on a Dask cluster against the same model on one machine, and MapReduceSVC.

Two parts, each method in a fresh spawned process on a multi-process LocalCluster of this
machine (2 workers x 1 thread, the nanny holding BLAS to one thread per worker):

- Real data (a9a, ijcnn1; the suite's gamma, C = 10): ``LowRankSVC`` fitted in memory, the
  same estimator fitted on a dask array of the same rows (4 chunks), and ``MapReduceSVC``
  with 4 parts and the same total basis size (its default per-part 'auto' otherwise). Test
  error on the official test rows, fit time.
- Worker-generated rows (``--rows``, default 10^6; a noisy 4 x 4 checkerboard, d = 2, in
  chunks of 250,000 drawn by the workers, never held on the client): the Dask fit against
  the single-machine ``fit_stream`` (block minimization over the chunks) and ``fit`` (the
  rows in memory, the Dask fit's solver) of the same estimator on the same rows, generated
  chunk by chunk in their own process. Test error on 10^5 fresh rows, fit time, peak RSS of each
  worker.

- ``--workers 1,2,4``: the same Dask fit on 1, 2 and 4 one-thread workers (strong scaling;
  more workers than cores share them).

Run: ``python benchmarks/bench_dask.py [--rows N] [--sets a9a,ijcnn1] [--workers 1,2,4]
[--quick]``. Writes benchmarks/results/dask{,_quick}.json/.md.
"""

from __future__ import annotations

import argparse
import importlib
import resource

import numpy as np

from _harness import load_note, mark_baseline, run_isolated, timed, write_results
from _suite_data import SETTINGS, load
from sparsekernel import LowRankSVC, MapReduceSVC
from sparsekernel.datasets import make_checkerboard

C = 10.0
CHUNK_ROWS = 250_000
NOISE = 0.05  # share of checkerboard labels flipped


def _cluster(n_workers=2):
    import distributed

    cluster = distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1,
                                       processes=True, dashboard_address=None)
    client = distributed.Client(cluster)  # the default client: LowRankSVC fits on it
    client.run(importlib.import_module, "sparsekernel.distributed._rows")
    return cluster, client


def _peaks(client):
    usage = client.run(resource.getrusage, resource.RUSAGE_SELF)
    return [round(u.ru_maxrss / 1024, 1) for u in usage.values()]


def real_run(name, method):
    """Child process: one method on one suite data set."""
    import dask.array as da

    Xtr, ytr, Xte, yte = load(name)
    Xtr, Xte = _dense(Xtr), _dense(Xte)  # (the same rows for all three: a9a is CSR)
    mark_baseline()
    gamma = SETTINGS[name]["gamma"]
    if method == "in memory":
        model, fit_s = timed(LowRankSVC(gamma=gamma, C=C, random_state=0).fit, Xtr, ytr)
        return {"fit_s": fit_s, "error_pct": 100 * np.mean(model.predict(Xte) != yte),
                "n_basis": model.basis_.shape[0]}
    cluster, client = _cluster()
    try:
        chunks = -(-len(ytr) // 4)
        Xd, yd = da.from_array(Xtr, chunks=(chunks, -1)), da.from_array(ytr, chunks=chunks)
        Xd, yd = client.persist([Xd, yd])  # the rows on the workers before the clock starts
        if method == "dask":
            model, fit_s = timed(LowRankSVC(gamma=gamma, C=C, random_state=0).fit, Xd, yd)
            m = model.basis_.shape[0]
        else:
            ref = LowRankSVC(gamma=gamma, C=C, random_state=0).fit(Xtr[:20000], ytr[:20000])
            m = ref.basis_.shape[0]  # (the total basis size the in-memory fit chooses)
            model, fit_s = timed(MapReduceSVC(n_parts=4, n_basis=m, gamma=gamma, C=C,
                                              client=client, random_state=0).fit, Xd, yd)
        error = 100 * np.mean(np.asarray(model.predict(Xte)) != yte)
        return {"fit_s": fit_s, "error_pct": error, "n_basis": m,
                "worker_peak_rss_mib": max(_peaks(client))}
    finally:
        client.close()
        cluster.close()


def _dense(X):
    return X.toarray() if hasattr(X, "toarray") else X


def checkerboard_array(n_rows, seed):
    """A lazy (X, y) of n_rows noisy checkerboard points; each chunk drawn by a worker."""
    import dask
    import dask.array as da

    Xs, ys = [], []
    for b, (_, rows) in enumerate(_chunks(n_rows)):
        X, y = dask.delayed(_board, nout=2)(rows, seed * 1_000_003 + b)
        Xs.append(da.from_delayed(X, shape=(rows, 2), dtype=np.float64))
        ys.append(da.from_delayed(y, shape=(rows,), dtype=np.float64))
    return da.concatenate(Xs), da.concatenate(ys)


def _chunks(n_rows):
    return [(s, min(CHUNK_ROWS, n_rows - s)) for s in range(0, n_rows, CHUNK_ROWS)]


def _board(rows, seed):
    X, y = make_checkerboard(rows, 0.0, 4, random_state=seed)
    flip = np.random.default_rng(seed + 7).random(rows) < NOISE
    return X, np.where(flip, -y, y)


def scaling_run(n_workers, n_rows, n_basis, n_test):
    """Child process: the Dask fit of worker-generated rows on ``n_workers`` workers."""
    mark_baseline()
    Xt, yt = _board(n_test, 99)
    cluster, client = _cluster(n_workers)
    try:
        X, y = checkerboard_array(n_rows, seed=1)
        model, fit_s = timed(LowRankSVC(n_basis=n_basis, gamma=2.0, C=100.0,
                                        random_state=0).fit, X, y)
        return {"fit_s": fit_s, "error_pct": 100 * np.mean(model.predict(Xt) != yt),
                "worker_peak_rss_mib": max(_peaks(client))}
    finally:
        client.close()
        cluster.close()


def generated_run(method, n_rows, n_basis, n_test):
    """Child process: the Dask fit on worker-generated rows, or fit_stream of the same rows
    generated chunk by chunk here."""
    mark_baseline()
    params = dict(n_basis=n_basis, gamma=2.0, C=100.0, random_state=0)
    Xt, yt = _board(n_test, 99)
    if method in ("fit_stream", "in memory"):
        chunks = [_board(rows, 1 * 1_000_003 + b) for b, (_, rows) in enumerate(_chunks(n_rows))]
        if method == "fit_stream":
            model, fit_s = timed(LowRankSVC(**params).fit_stream, chunks)
        else:
            X, y = np.concatenate([c[0] for c in chunks]), np.concatenate([c[1] for c in chunks])
            model, fit_s = timed(LowRankSVC(**params).fit, X, y)
        return {"fit_s": fit_s, "error_pct": 100 * np.mean(model.predict(Xt) != yt)}
    cluster, client = _cluster()
    try:
        X, y = checkerboard_array(n_rows, seed=1)
        model, fit_s = timed(LowRankSVC(**params).fit, X, y)
        return {"fit_s": fit_s, "error_pct": 100 * np.mean(model.predict(Xt) != yt),
                "worker_peak_rss_mib": max(_peaks(client))}
    finally:
        client.close()
        cluster.close()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--sets", default="a9a,ijcnn1")
    ap.add_argument("--n-basis", type=int, default=300)
    ap.add_argument("--workers", default="",
                    help="comma-separated worker counts: also the Dask fit of the generated "
                         "rows on each (strong scaling), e.g. 1,2,4")
    ap.add_argument("--quick", action="store_true", help="100,000 rows, ijcnn1 only")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    rows_n = 100_000 if args.quick else args.rows
    sets = ["ijcnn1"] if args.quick else [s for s in args.sets.split(",") if s]
    load = load_note()
    rows = []
    for name in sets:
        for method in ("in memory", "dask", "MapReduceSVC"):
            out = run_isolated(real_run, name, method)
            rows.append({"data": name, "method": method, **out})
            print(rows[-1], flush=True)
    for method in ("fit_stream", "in memory", "dask"):
        out = run_isolated(generated_run, method, rows_n, args.n_basis, 100_000)
        rows.append({"data": f"checkerboard {rows_n:,}", "method": method, **out})
        print(rows[-1], flush=True)
    for workers in [int(w) for w in args.workers.split(",") if w]:
        out = run_isolated(scaling_run, workers, rows_n, args.n_basis, 100_000)
        rows.append({"data": f"checkerboard {rows_n:,}", "method": f"dask, {workers} worker(s)",
                     **out})
        print(rows[-1], flush=True)
    payload = {
        "title": "LowRankSVC on a Dask cluster, on one machine, and MapReduceSVC",
        "notes": [load,
                  "cluster: multi-process LocalCluster, 2 workers x 1 thread; the in-memory "
                  "and fit_stream fits run in one process with the machine's threads",
                  f"real data: the suite's gamma, C = {C:g}; dask input in 4 chunks, "
                  "persisted on the workers before the clock starts; MapReduceSVC: 4 parts, "
                  "n_basis = the in-memory fit's m on 20,000 rows",
                  f"checkerboard: 4 x 4, {NOISE:.0%} labels flipped, gamma=2, C=100, "
                  f"n_basis={args.n_basis}; rows drawn by the workers in chunks of "
                  f"{CHUNK_ROWS:,}; test error on 100,000 fresh rows",
                  "peak MiB: the largest worker's peak RSS (dask runs)"],
        "rows": rows,
    }
    cols = [("data", "data"), ("method", "method"), ("m", "n_basis"), ("fit s", "fit_s"),
            ("error %", "error_pct"), ("worker peak MiB", "worker_peak_rss_mib"),
            ("note", "error")]
    print(write_results("dask_quick" if args.quick else "dask", payload, cols, args.out))


if __name__ == "__main__":
    main()
