"""HMMER's probabilities from a model file's values: ``expf(-atof(x))`` in single precision
with the C library's expf, as ``p7_hmmfile.c`` converts them, so models and the profiles built
from them are bit-identical to HMMER's (:mod:`clalign.hmm.hmmfile` reads the files)."""
from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np

from ..errors import InputError


def _load_libm():
    name = ctypes.util.find_library("m")
    try:
        lib = ctypes.CDLL(name) if name else None
    except OSError:
        lib = None
    if lib is not None:
        lib.expf.restype = ctypes.c_float
        lib.expf.argtypes = [ctypes.c_float]
    return lib


_LIBM = _load_libm()


def c_expf(x):
    """The C library's expf over a float32 array (what HMMER calls).

    glibc's expf is not always correctly rounded (one insert emission of pyhmmer's KR.hmm
    differs by an ulp from exp-in-double), but its error is below 0.502 ulp: wherever the exact
    value lies farther than that from a rounding midpoint of float32, expf returns the correctly
    rounded value, which exp in double rounded to float32 gives too. So libm is called only for
    values within :data:`_MIDPOINT_ULPS` of a midpoint (and at powers of two, zero, infinity):
    ~4 % of the distinct values, bit-identical models at a fraction of the ctypes calls (a file of
    1,000 Pfam-like models: ~5 ms per model went to them). Without a loadable libm the correctly
    rounded value is used.
    """
    x = np.asarray(x, dtype=np.float32)
    y = np.exp(x.astype(np.float64))
    f = y.astype(np.float32)
    if _LIBM is None:
        return f
    fd = f.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        ulps = (y - fd) / np.spacing(np.abs(f)).astype(np.float64)      # in [-0.5, 0.5]
        mant = np.frexp(f)[0]
        near = ~np.isfinite(ulps) | (np.abs(np.abs(ulps) - 0.5) < _MIDPOINT_ULPS) | (np.abs(mant) == 0.5) | (f == 0)
    if near.any():
        uniq, inv = np.unique(x[near], return_inverse=True)
        fn = _LIBM.expf
        f[near] = np.array([fn(float(v)) for v in uniq.tolist()], dtype=np.float32)[inv]
    return f


#: Distance (in ulps of float32) from a rounding midpoint inside which :func:`c_expf` asks libm.
_MIDPOINT_ULPS = 0.02


def _neglog_to_prob(tokens, path, lineno):
    """HMMER's expf(-atof(tok)) for a list of tokens, '*' -> 0.0; float32."""
    try:
        vals = np.array([np.inf if tok == "*" else float(tok) for tok in tokens], dtype=np.float64)
    except ValueError:
        bad = next(tok for tok in tokens if tok != "*" and not _is_float(tok))
        raise InputError(f"not a number: {bad!r}", path, lineno) from None
    if np.isnan(vals).any() or (vals < 0).any():
        raise InputError("negative or NaN value where a -ln(probability) was expected", path, lineno)
    # expf() takes the float32 argument; exp in double then rounding to float32 gives the
    # correctly rounded result, which is what glibc's expf returns.
    return c_expf((-vals).astype(np.float32))


def _bulk_prob(tokens):
    """HMMER's expf(-atof(tok)) over many tokens; ValueError on a bad one."""
    vals = np.array(tokens, dtype=object)
    vals[vals == "*"] = "inf"
    vals = vals.astype(np.float64)
    if np.isnan(vals).any() or (vals < 0).any():
        raise ValueError("negative or NaN")
    return c_expf((-vals).astype(np.float32))


def _is_float(tok):
    try:
        float(tok)
        return True
    except ValueError:
        return False
