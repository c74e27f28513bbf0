"""LAPACK's Cholesky (``potrf``) and BLAS's ``syrk`` called without holding the GIL.

Why. The one-vs-rest solvers factor one system per class, the classes side by side on the
planned threads, each on one BLAS thread (:mod:`sparsekernel.utils._threads`). SciPy's
``scipy.linalg.lapack`` wrappers hold the GIL for the whole call, so two classes'
factorizations never overlapped; NumPy's ``cholesky`` releases it but ran 1.3-1.8x slower than
LAPACK's own on one thread (NumPy's wheel has its own OpenBLAS build). SciPy exports its
LAPACK to compiled code as ``scipy.linalg.cython_lapack`` (public API); calling that export
through ``ctypes``, which releases the GIL around a foreign call, gives SciPy's speed with
NumPy's concurrency. One thread, float64, ms a factorization, one call alone / two side by
side on two Python threads (``python benchmarks/bench_cholesky.py``, results/cholesky.md,
medians of 9):

==========  ===============  ===============  ===============
size        NumPy            SciPy wrapper    this module
==========  ===============  ===============  ===============
1,000       12.1 / 4.0       7.0 / 7.2        6.9 / 3.6
1,225       15.9 / 8.0       13.1 / 12.7      12.1 / 6.3
1,600       34.9 / 17.6      27.0 / 26.4      25.6 / 13.4
==========  ===============  ===============  ===============

Only on one BLAS thread: with two, SciPy's OpenBLAS threads called right after NumPy's
(a ``syrk`` then the factorization) spin against each other (1,800 square: 105 ms against
NumPy's 38 ms), so :func:`~sparsekernel.solvers._spd.spd_cholesky` keeps NumPy's there.
When the export is missing, or its C signature is not the one these calls assume (an ILP64
build's 64-bit integers: :func:`signature_matches`), the GIL-holding wrapper is used.

From ``TILED_MIN`` rows the factorization runs by tiles (:func:`_tiled_potrf`): LAPACK's
``potrf`` on each diagonal tile, then the panel's ``trsm`` and the trailing ``syrk`` /
``gemm`` updates, tile columns side by side on the planned threads, each on one BLAS thread
(the same tiles on one thread inside a worker, so the factor does not depend on the thread
count). A lone system (the shared first Newton system of one-vs-rest, a binary problem's,
an LS-SVM's) thus uses both cores without OpenBLAS's own threads, which spin beside a busy
core. float64, ms a call alone, tiles on two threads against one ``potrf`` (``python
benchmarks/bench_cholesky.py``, results/cholesky.md): 1,225 square 11.4 / 12.6, 1,600
23.0 / 26.9, 2,000 43.6 / 50.5, 2,923 109 / 155; side by side (each call on one thread)
the tiles cost 3-8 % more. On one thread the tiles run at potrf's speed.

:func:`syrk_lower` adds ``alpha G^T G`` to a Hessian's lower triangle in place, so that a
one-vs-rest Newton step updates each class's kept Hessian by the rows that changed side with
no m-square temporaries: NumPy's ``H += G.T @ G`` allocates and adds two (fresh pages,
4-8 ms a call at m = 1,225 against 10-20 ms of ``syrk``; letter's ReducedSVC made ~170 such
calls a fit).
"""

from __future__ import annotations

import numpy as np

__all__ = ["potrf_lower", "signature_matches", "syrk_lower"]

_FUNCTIONS = {}
#: Size from which :func:`potrf_lower` factors by tiles of ``_TILE`` rows (module docstring).
TILED_MIN, _TILE = 1024, 256


def _export(name):
    """The C function ``name`` of ``scipy.linalg.cython_lapack`` as a ctypes function, or
    None when SciPy does not export it."""
    if name not in _FUNCTIONS:
        _FUNCTIONS[name] = _load(name)
    return _FUNCTIONS[name]


def _load(name):
    import ctypes

    try:
        if name[1:] in ("syrk", "trsm", "gemm"):
            from scipy.linalg import cython_blas as exports
        else:
            from scipy.linalg import cython_lapack as exports

        capsule = exports.__pyx_capi__[name]
        # Private prototypes of the C API (setting restype on ctypes.pythonapi's shared
        # function objects would change them for every other user in the process).
        get_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(
            ("PyCapsule_GetName", ctypes.pythonapi))
        get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
            ("PyCapsule_GetPointer", ctypes.pythonapi))
        signature = get_name(capsule)
        address = get_pointer(capsule, signature)
    except (ImportError, AttributeError, KeyError, ValueError):  # pragma: no cover
        return None
    if not address:  # pragma: no cover
        return None
    int_p, array = ctypes.POINTER(ctypes.c_int), ctypes.c_void_p
    char = ctypes.c_char_p
    if name.endswith("syrk"):  # (uplo, trans, n, k, alpha, a, lda, beta, c, ldc)
        arguments = (char, char, int_p, int_p, array, array, int_p, array, array, int_p)
    elif name.endswith("trsm"):  # (side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb)
        arguments = (char, char, char, char, int_p, int_p, array, array, int_p, array, int_p)
    elif name.endswith("gemm"):  # (ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
        arguments = (char, char, int_p, int_p, int_p, array, array, int_p, array, int_p,
                     array, array, int_p)
    elif name.endswith("lacpy"):  # (uplo, m, n, a, lda, b, ldb)
        arguments = (ctypes.c_char_p, int_p, int_p, array, int_p, array, int_p)
    elif name.endswith("laset"):  # (uplo, m, n, alpha, beta, a, lda)
        arguments = (ctypes.c_char_p, int_p, int_p, array, array, array, int_p)
    else:  # potrf: (uplo, n, a, lda, info)
        arguments = (ctypes.c_char_p, int_p, array, int_p, int_p)
    if not signature_matches(signature, arguments):  # e.g. an ILP64 build: not our prototype
        return None
    return ctypes.CFUNCTYPE(None, *arguments)(address)


def signature_matches(signature, arguments):
    """Whether the C signature SciPy states for an export (its capsule's name, e.g.
    ``b"void (char *, int *, ..._d *, int *, int *)"``) takes exactly the arguments of the
    ctypes prototype: ``char *`` for ``c_char_p``, ``int *`` (32-bit, LP64) for an integer
    pointer, a pointer to SciPy's float type for an array. Anything else (a 64-bit integer
    interface, another argument list) makes the caller fall back to SciPy's wrappers."""
    import ctypes

    text = signature.decode("ascii", "replace") if isinstance(signature, bytes) else ""
    if not (text.startswith("void (") and text.endswith(")")):
        return False
    params = [p.strip() for p in text[len("void ("):-1].split(",")]
    if len(params) != len(arguments):
        return False
    int_p = ctypes.POINTER(ctypes.c_int)
    for param, kind in zip(params, arguments, strict=True):
        if kind is ctypes.c_char_p:
            ok = param == "char *"
        elif kind is int_p:
            ok = param == "int *" and ctypes.sizeof(ctypes.c_int) == 4
        else:
            ok = param.endswith(("_d *", "_s *"))
        if not ok:
            return False
    return True


def potrf_lower(M, overwrite=False):
    """``(L, info)``: the lower Cholesky factor of the symmetric M (its lower triangle read),
    C-ordered, upper triangle zero; ``info > 0``: M is not positive definite.

    ``overwrite=True``: a C-ordered M is factored in place (no m-square copy) and returned as
    L; when it is not positive definite, its lower triangle is restored from its upper one,
    which LAPACK does not touch (so M must then hold both triangles). Else L is a new array
    (and incomplete when ``info > 0``). Other dtypes are factored in float64.
    """
    import ctypes

    # C order, native byte order, float32 or float64: what the pointers handed to LAPACK
    # must hold (anything else is converted first, so never overwritten)
    single = M.dtype.kind == "f" and M.dtype.itemsize == 4
    M = np.ascontiguousarray(M, dtype=np.float32 if single else np.float64)
    n, prefix = len(M), "s" if single else "d"
    names = ("potrf", "lacpy", "laset", "trsm", "syrk", "gemm")
    potrf, lacpy, laset, *tiles = (_export(prefix + name) for name in names)
    if not n or None in (potrf, lacpy, laset, *tiles):  # SciPy's wrapper (holds the GIL)
        return _wrapped(np.array(M))  # (a copy: it would not be restored on failure)
    # A C-ordered array is the Fortran matrix of its transpose: M's lower triangle is that
    # matrix's upper one, and the upper factor U = L^T that LAPACK writes there reads back
    # as L in C order. A copy takes that triangle onto zeros; in place, the other triangle
    # is cleared after (laset also sets the diagonal, which is kept aside).
    size, info = ctypes.c_int(n), ctypes.c_int(0)
    dim = ctypes.byref(size)
    if overwrite and M.flags.writeable:
        L, diagonal = M, M.diagonal().copy()
    else:
        L, diagonal = np.zeros_like(M), None
        lacpy(b"U", dim, dim, M.ctypes.data, dim, L.ctypes.data, dim)
    if n >= TILED_MIN:
        info.value = _tiled_potrf(L, potrf, *tiles)
    else:
        potrf(b"U", dim, L.ctypes.data, dim, ctypes.byref(info))
    if diagonal is None:
        return L, int(info.value)
    if info.value:  # restore M: its lower triangle from the upper one, and its diagonal
        lower = np.tril_indices(n, -1)
        L[lower] = L.T[lower]
        L[np.diag_indices(n)] = diagonal
        return L, int(info.value)
    factor_diagonal = L.diagonal().copy()
    zero = np.zeros(1, dtype=L.dtype)
    laset(b"L", dim, dim, zero.ctypes.data, zero.ctypes.data, L.ctypes.data, dim)
    L[np.diag_indices(n)] = factor_diagonal
    return L, 0


def _tiled_potrf(L, potrf, trsm, syrk, gemm):
    """Factor the Fortran matrix of C-ordered L (its upper triangle: L's lower one) in
    place as U^T U by tiles of ``_TILE`` rows, right-looking; returns LAPACK's ``info``
    (the 1-based row of the first non-positive pivot, 0 on success).

    Step k: ``potrf`` on the diagonal tile U_kk; every tile right of it solved by
    ``trsm`` (U_kk^-T A_kj), the tile columns side by side; then each trailing tile
    column j loses the panel's product: ``syrk`` on its diagonal tile, one ``gemm`` above
    it. Only the upper triangle is read or written (the caller restores the matrix from
    the other one when a pivot fails)."""
    import ctypes

    from ..utils._threads import map_balanced, map_threads

    n, size = len(L), L.itemsize
    scalar = ctypes.c_float if L.dtype == np.float32 else ctypes.c_double
    plus_one, minus_one = scalar(1.0), scalar(-1.0)  # (alive while their addresses are used)
    one, minus = ctypes.addressof(plus_one), ctypes.addressof(minus_one)
    ld = ctypes.byref(ctypes.c_int(n))

    def at(i, j):  # the Fortran entry (i, j): column-major, leading dimension n
        return L.ctypes.data + (i + j * n) * size

    def dim(v):
        return ctypes.byref(ctypes.c_int(v))

    edges = [*range(0, n, _TILE), n]
    tiles = list(zip(edges[:-1], edges[1:], strict=True))
    for k, (k0, k1) in enumerate(tiles):
        info = ctypes.c_int(0)
        potrf(b"U", dim(k1 - k0), at(k0, k0), ld, ctypes.byref(info))
        if info.value:
            return k0 + info.value
        rest, nk = tiles[k + 1:], dim(k1 - k0)

        def solve(tile, k0=k0, nk=nk):
            j0, j1 = tile
            trsm(b"L", b"U", b"T", b"N", nk, dim(j1 - j0), one, at(k0, k0), ld, at(k0, j0), ld)

        def update(tile, k0=k0, k1=k1, nk=nk):
            j0, j1 = tile
            syrk(b"U", b"T", dim(j1 - j0), nk, minus, at(k0, j0), ld, one, at(j0, j0), ld)
            if j0 > k1:
                gemm(b"T", b"N", dim(j0 - k1), dim(j1 - j0), nk, minus, at(k0, k1), ld,
                     at(k0, j0), ld, one, at(k1, j0), ld)

        map_threads(solve, rest)
        map_balanced(update, rest, [(j0 - k1 + 1) * (j1 - j0) for j0, j1 in rest])
    return 0


def syrk_lower(H, G, alpha=1.0, beta=1.0):
    """``H[:p, :p] = beta H[:p, :p] + alpha G^T G`` on the lower triangle (and diagonal)
    only, in place; ``G`` of shape (r, p) with p <= len(H). Returns H.

    H is C-ordered and of G's dtype (float32 or float64), G C-ordered: the layout the
    Hessians and the gathered rows of the Newton solvers have (anything else raises
    ValueError rather than being copied, which would lose the update). H's upper triangle
    is not read or written.
    """
    import ctypes

    r, p = G.shape
    if (H.dtype != G.dtype or G.dtype not in (np.float32, np.float64) or H.ndim != 2
            or H.shape[0] != H.shape[1] or p > len(H) or not H.flags.c_contiguous
            or not H.flags.writeable or not G.flags.c_contiguous):
        raise ValueError(f"syrk_lower needs a writeable C-ordered square H of G's float "
                         f"dtype and a C-ordered G; got H {H.dtype} {H.shape}, G {G.dtype} "
                         f"{G.shape}.")
    if not p:
        return H
    syrk = _export(("s" if G.dtype == np.float32 else "d") + "syrk")
    if syrk is None:  # pragma: no cover - SciPy without the export
        low = np.tril_indices(p)
        H[low] = beta * H[low] + alpha * (G.T @ G)[low]
        return H
    # C-ordered H is the Fortran matrix H^T: its lower triangle is that one's upper ("U");
    # C-ordered G is the Fortran (p x r) matrix G^T, so "N" gives G^T G.
    scalar = ctypes.c_float if G.dtype == np.float32 else ctypes.c_double
    a, b = scalar(alpha), scalar(beta)
    n, k, lda, ldc = (ctypes.c_int(v) for v in (p, r, p, len(H)))
    syrk(b"U", b"N", ctypes.byref(n), ctypes.byref(k), ctypes.addressof(a), G.ctypes.data,
         ctypes.byref(lda), ctypes.addressof(b), H.ctypes.data, ctypes.byref(ldc))
    return H


def _wrapped(L):
    """SciPy's wrapper on ``L`` (overwritten)."""
    from scipy.linalg.lapack import dpotrf, spotrf

    if not len(L):
        return L, 0
    potrf = spotrf if L.dtype == np.float32 else dpotrf
    U, info = potrf(L.T, lower=0, clean=1, overwrite_a=1)
    return np.ascontiguousarray(U.T), int(info)
