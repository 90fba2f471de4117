"""Numpy reference of every packed-SIMD function in ``kernels/simd.mako``.

Each function takes and returns ``numpy.uint32`` arrays (or scalars; they broadcast) and is
named like its OpenCL counterpart without the ``cla_`` prefix (``add_8x4``, ``maxs_16x2`` ...).
Lanes are little-endian: lane i of an 8x4 word is bits [8i, 8i+8). The arithmetic is done
on unpacked lanes in int64, so the semantics are stated plainly rather than re-derived from
bit tricks: wrapping ops reduce mod 2^w, saturating ops clip to the unsigned or signed lane
range, compares give all-ones lanes where true.
"""
from __future__ import annotations

import numpy as np

#: ops taking (a, b) / (a, b, c) / (w, i) / (w, i, v) / (v) / (w)
BINARY = ("add", "sub", "addus", "subus", "addss", "subss", "maxu", "minu", "maxs", "mins",
          "maxzs", "cmpgtu", "cmpgts", "cmpgeu", "cmpeq")
TERNARY = ("max3u", "max3s", "max3zs", "addmaxs")
LANE = ("get", "gets", "set", "splat", "hmaxu", "hmaxs")
OPS = BINARY + TERNARY + LANE
WIDTHS = {"8x4": 8, "16x2": 16}


def _u32(x) -> np.ndarray:
    """As uint32; negative Python/numpy ints are taken mod 2^32 (as OpenCL converts int to uint)."""
    x = np.asarray(x)
    if x.dtype == np.uint32:
        return x
    return (x.astype(np.int64) & 0xFFFFFFFF).astype(np.uint32)


def unpack(w, bits: int, signed: bool = False) -> np.ndarray:
    """Lanes of each word as int64, shape ``w.shape + (32 // bits,)``."""
    w = _u32(w)
    n = 32 // bits
    shifts = np.arange(n, dtype=np.uint32) * np.uint32(bits)
    lanes = ((w[..., None] >> shifts) & np.uint32((1 << bits) - 1)).astype(np.int64)
    if signed:
        lanes = np.where(lanes >= (1 << (bits - 1)), lanes - (1 << bits), lanes)
    return lanes


def pack(lanes, bits: int) -> np.ndarray:
    """Inverse of :func:`unpack`; every lane is reduced mod 2^bits (two's complement)."""
    lanes = np.asarray(lanes, dtype=np.int64) & ((1 << bits) - 1)
    shifts = np.arange(lanes.shape[-1], dtype=np.int64) * bits
    return (lanes << shifts).sum(axis=-1).astype(np.uint32)


def _lanewise(bits, signed, fn, *words):
    return pack(fn(*(unpack(x, bits, signed) for x in words)), bits)


def _mask(cond, bits):
    return pack(np.where(cond, -1, 0), bits)


def _make(bits: int) -> dict:
    umax = (1 << bits) - 1
    smin, smax = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    U = lambda fn, *w: _lanewise(bits, False, fn, *w)  # noqa: E731
    S = lambda fn, *w: _lanewise(bits, True, fn, *w)   # noqa: E731
    ops = {
        "add": lambda a, b: U(np.add, a, b),
        "sub": lambda a, b: U(np.subtract, a, b),
        "addus": lambda a, b: U(lambda x, y: np.minimum(x + y, umax), a, b),
        "subus": lambda a, b: U(lambda x, y: np.maximum(x - y, 0), a, b),
        "addss": lambda a, b: S(lambda x, y: np.clip(x + y, smin, smax), a, b),
        "subss": lambda a, b: S(lambda x, y: np.clip(x - y, smin, smax), a, b),
        "maxu": lambda a, b: U(np.maximum, a, b),
        "minu": lambda a, b: U(np.minimum, a, b),
        "maxs": lambda a, b: S(np.maximum, a, b),
        "mins": lambda a, b: S(np.minimum, a, b),
        "max3u": lambda a, b, c: U(lambda x, y, z: np.maximum(np.maximum(x, y), z), a, b, c),
        "max3s": lambda a, b, c: S(lambda x, y, z: np.maximum(np.maximum(x, y), z), a, b, c),
        "maxzs": lambda a, b: S(lambda x, y: np.maximum(np.maximum(x, y), 0), a, b),
        "max3zs": lambda a, b, c: S(lambda x, y, z: np.maximum(np.maximum(np.maximum(x, y), z), 0),
                                    a, b, c),
        # wrap a+b into the signed lane range before comparing with c
        "addmaxs": lambda a, b, c: S(lambda x, y, z: np.maximum(((x + y - smin) & umax) + smin, z),
                                     a, b, c),
        "cmpgtu": lambda a, b: _mask(unpack(a, bits) > unpack(b, bits), bits),
        "cmpgts": lambda a, b: _mask(unpack(a, bits, True) > unpack(b, bits, True), bits),
        "cmpgeu": lambda a, b: _mask(unpack(a, bits) >= unpack(b, bits), bits),
        "cmpeq": lambda a, b: _mask(unpack(a, bits) == unpack(b, bits), bits),
    }
    n = 32 // bits

    def get(w, i):
        """Unsigned value of lane i (i taken as given, 0 <= i < lanes)."""
        i = np.asarray(i, dtype=np.int64)
        return np.take_along_axis(unpack(w, bits), np.broadcast_to(i, _u32(w).shape)[..., None],
                                  axis=-1)[..., 0].astype(np.uint32)

    def gets(w, i):
        """Sign-extended value of lane i, as int32."""
        v = get(w, i).astype(np.int64)
        return np.where(v > smax, v - (1 << bits), v).astype(np.int32)

    def set_(w, i, v):
        """w with lane i replaced by the low bits of v."""
        lanes = unpack(w, bits)
        i = np.broadcast_to(np.asarray(i, dtype=np.int64), lanes.shape[:-1])
        v = np.broadcast_to(_u32(v).astype(np.int64) & umax, lanes.shape[:-1])
        sel = np.arange(n) == i[..., None]
        return pack(np.where(sel, v[..., None], lanes), bits)

    def splat(v):
        """Every lane = the low bits of v."""
        v = _u32(v).astype(np.int64) & umax
        return pack(np.repeat(v[..., None], n, axis=-1), bits)

    ops.update(
        get=get, gets=gets, set=set_, splat=splat,
        hmaxu=lambda w: unpack(w, bits).max(axis=-1).astype(np.uint32),
        hmaxs=lambda w: unpack(w, bits, True).max(axis=-1).astype(np.int32),
    )
    return ops


_OPS = {name: _make(bits) for name, bits in WIDTHS.items()}


def op(name: str, width: str):
    """The reference function for ``cla_<name>_<width>``."""
    return _OPS[width][name]


for _w in WIDTHS:
    for _name, _fn in _OPS[_w].items():
        _fn.__name__ = f"{_name}_{_w}"
        globals()[f"{_name}_{_w}"] = _fn
del _w, _name, _fn

__all__ = ["OPS", "BINARY", "TERNARY", "LANE", "WIDTHS", "op", "unpack", "pack"] + [
    f"{n}_{w}" for w in WIDTHS for n in OPS]
