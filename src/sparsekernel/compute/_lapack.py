"""LAPACK's Cholesky (``potrf``) and BLAS's ``syrk`` called without holding the GIL.

One-vs-rest solvers factor one system per class, side by side on the planned threads, each
on one BLAS thread. SciPy's ``scipy.linalg.lapack`` wrappers hold the GIL for the whole
call, so those factorizations would not overlap, and NumPy's ``cholesky`` is slower on one
thread. SciPy's public ``scipy.linalg.cython_lapack`` export, called through ``ctypes``
(which releases the GIL around a foreign call), gives both. When the export is missing or
its C signature is not the one assumed here (an ILP64 build: :func:`signature_matches`),
SciPy's public wrapper is used.

:func:`syrk_lower` adds ``alpha G^T G`` to a Hessian's lower triangle in place, with no
m-square temporaries (``H += G.T @ G`` allocates two).
"""

from __future__ import annotations

import numpy as np

__all__ = ["potrf_lower", "signature_matches", "syrk_lower"]

_FUNCTIONS = {}


def _export(name):
    """The C function ``name`` of ``scipy.linalg.cython_lapack`` as a ctypes function, or
    None when SciPy does not export it."""
    if name not in _FUNCTIONS:
        _FUNCTIONS[name] = _load(name)
    return _FUNCTIONS[name]


def _load(name):
    import ctypes

    try:
        if name[1:] == "syrk":
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
    potrf, lacpy, laset = (_export(prefix + name) for name in ("potrf", "lacpy", "laset"))
    if not n or None in (potrf, lacpy, laset):  # SciPy's wrapper (holds the GIL)
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
