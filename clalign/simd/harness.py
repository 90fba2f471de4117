"""Run the packed-SIMD functions of ``kernels/simd.mako`` on a device and check them.

:func:`run_op` applies one function element-wise on a device (through
``kernels/simd_test.mako``); :func:`expected` gives the numpy answer for the same inputs;
:func:`check_inputs` builds the test words (random words, every combination of lane
boundary values in adjacent lanes, carry/borrow-leak patterns). Shared by
``tests/test_simd.py`` and ``tools/device_simd.py``.
"""
from __future__ import annotations

import itertools

import numpy as np
import pyopencl as cl

from ..errors import ParameterError
from ..runtime import Param, ParamSet, Runtime, simd_values
from . import reference

#: the test template's parameters: the SIMD ones only
TEST_PARAMS = ParamSet("simd_test", ())

#: per-lane boundary values; 16-bit lanes add the byte boundaries inside the lane
BOUNDARY = {
    "8x4": (0x00, 0x01, 0x7E, 0x7F, 0x80, 0x81, 0xFE, 0xFF),
    "16x2": (0x0000, 0x0001, 0x007F, 0x0080, 0x00FF, 0x0100, 0x7FFE, 0x7FFF,
             0x8000, 0x8001, 0xFF00, 0xFF7F, 0xFF80, 0xFFFE, 0xFFFF),
}
#: smaller set for 3-input ops (triples of values per lane grow as size^3)
BOUNDARY3 = {
    "8x4": (0x00, 0x01, 0x7F, 0x80, 0x81, 0xFF),
    "16x2": (0x0000, 0x0001, 0x007F, 0x0080, 0x00FF, 0x0100, 0x7FFF, 0x8000, 0xFFFF),
}


def nargs(op: str) -> int:
    """How many word inputs the op reads (get/gets read a lane index from b; set also c)."""
    if op in reference.TERNARY or op == "set":
        return 3
    if op in reference.BINARY or op in ("get", "gets"):
        return 2
    return 1


def variants(caps) -> list:
    """The SIMD variants this device can build: ``"swar"`` always, ``"ptx"`` and
    ``"ptx+s16x2"`` when the capability probe says inline PTX (and sm_90 16x2 ops) build."""
    out = ["swar"]
    if caps.ptx:
        out.append("ptx")
        if caps.ptx_s16x2:
            out.append("ptx+s16x2")
    return out


def variant_values(caps, variant: str) -> dict:
    """SIMD parameter values for a variant name from :func:`variants`."""
    if variant not in ("swar", "ptx", "ptx+s16x2"):
        raise ParameterError(f"unknown SIMD variant {variant!r}; expected one of swar, ptx, ptx+s16x2")
    if variant == "swar":
        return simd_values(caps, "swar")
    vals = simd_values(caps, "ptx")
    if variant == "ptx":
        vals["PTX_S16X2"] = False
    elif not vals["PTX_S16X2"]:
        raise ParameterError(f"SIMD variant ptx+s16x2 requested but {caps.name} lacks sm_90 16x2 PTX")
    return vals


def program(rt: Runtime, values: dict) -> cl.Program:
    """The built test program for validated SIMD values (cached by the runtime)."""
    return rt.program("simd_test.mako", TEST_PARAMS, values)


def run_op(rt: Runtime, prg: cl.Program, op: str, width: str, a, b=None, c=None) -> np.ndarray:
    """Apply ``cla_<op>_<width>`` on the device to uint32 arrays; returns uint32 (for gets/hmaxs:
    the int32 bits, view as int32 to compare)."""
    a = np.ascontiguousarray(a, dtype=np.uint32)
    n = a.size
    b = a if b is None else np.ascontiguousarray(b, dtype=np.uint32)
    c = a if c is None else np.ascontiguousarray(c, dtype=np.uint32)
    mf = cl.mem_flags
    bufs = [cl.Buffer(rt.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x) for x in (a, b, c)]
    out = np.empty(n, dtype=np.uint32)
    dout = cl.Buffer(rt.ctx, mf.WRITE_ONLY, max(out.nbytes, 4))
    knl = getattr(prg, f"t_{op}_{width}")
    lsize = 64
    gsize = ((n + lsize - 1) // lsize) * lsize
    knl(rt.queue, (gsize,), (lsize,), *bufs, dout, np.uint32(n))
    cl.enqueue_copy(rt.queue, out, dout)
    rt.queue.finish()
    return out


def expected(op: str, width: str, a, b=None, c=None) -> np.ndarray:
    """The numpy answer for the same inputs as :func:`run_op`, as uint32 bits."""
    fn = reference.op(op, width)
    lanes_m1 = 32 // reference.WIDTHS[width] - 1
    if op in reference.BINARY:
        r = fn(a, b)
    elif op in reference.TERNARY:
        r = fn(a, b, c)
    elif op in ("get", "gets"):
        r = fn(a, b & np.uint32(lanes_m1))
    elif op == "set":
        r = fn(a, b & np.uint32(lanes_m1), c)
    else:
        r = fn(a)
    return np.asarray(r).astype(np.int64).astype(np.uint32) if np.asarray(r).dtype != np.uint32 else r


def _random_lane_tuples(rng, values, k, n):
    return np.asarray(values, dtype=np.uint32)[rng.integers(0, len(values), size=(n, k))]


def boundary_words(width: str, k: int, seed: int = 1) -> tuple:
    """k uint32 arrays (a, b[, c]) in which every combination of boundary values for all k
    inputs occurs in every pair of adjacent lanes (so every lane position and every carry /
    borrow between neighbours is exercised); the other lanes hold random boundary values."""
    bits = reference.WIDTHS[width]
    nl = 32 // bits
    vals = (BOUNDARY3 if k == 3 else BOUNDARY)[width]
    tuples = np.array(list(itertools.product(vals, repeat=k)), dtype=np.uint32)  # (T, k)
    t = len(tuples)
    rng = np.random.default_rng(seed)
    words = [[] for _ in range(k)]
    for j in range(nl - 1):
        ii, jj = np.meshgrid(np.arange(t), np.arange(t), indexing="ij")
        m = ii.size
        lanes = _random_lane_tuples(rng, vals, k * nl, m).reshape(m, nl, k)
        lanes[:, j, :] = tuples[ii.ravel()]
        lanes[:, j + 1, :] = tuples[jj.ravel()]
        shifts = (np.arange(nl, dtype=np.uint32) * np.uint32(bits))[None, :]
        for x in range(k):
            words[x].append(np.bitwise_or.reduce(lanes[:, :, x] << shifts, axis=1).astype(np.uint32))
    return tuple(np.concatenate(w) for w in words)


def leak_words(width: str) -> tuple:
    """(a, b, c): one lane at a carry/borrow/overflow edge (0xff+0x01, 0x00-0x01, 0x7f+0x01,
    0x80-0x01 ...), every other lane zero or all-ones, in every lane position; c is zero."""
    bits = reference.WIDTHS[width]
    nl = 32 // bits
    top, half = (1 << bits) - 1, 1 << (bits - 1)
    edges = [(top, 1), (0, 1), (half - 1, 1), (half, 1), (top, top), (half, half),
             (half - 1, half - 1), (0, top), (1, top), (half, top)]
    a, b = [], []
    for j in range(nl):
        for fill in (0, top):
            for x, y in edges:
                wa = wb = 0
                for lane in range(nl):
                    va, vb = (x, y) if lane == j else (fill, fill if fill == 0 else 0)
                    wa |= va << (bits * lane)
                    wb |= vb << (bits * lane)
                a.append(wa)
                b.append(wb)
    a = np.array(a, dtype=np.uint32)
    b = np.array(b, dtype=np.uint32)
    return a, b, np.zeros_like(a)


def check_inputs(op: str, width: str, n_random: int = 1_000_000, seed: int = 0) -> tuple:
    """(a, b, c) for one op: n_random random words, the boundary combinations, the leak set."""
    k = nargs(op)
    rng = np.random.default_rng(seed)
    rnd = [rng.integers(0, 1 << 32, size=n_random, dtype=np.uint64).astype(np.uint32) for _ in range(3)]
    bnd = boundary_words(width, k, seed=seed + 1)
    bnd = list(bnd) + [bnd[0][::-1]] * (3 - k)   # unused inputs: anything
    if op in ("get", "gets", "set"):
        # lane index from b: make sure each boundary word is read at every lane
        nl = 32 // reference.WIDTHS[width]
        bnd = [np.tile(x, nl) for x in bnd]
        bnd[1] = np.repeat(np.arange(nl, dtype=np.uint32), len(bnd[0]) // nl)
    lk = leak_words(width)
    return tuple(np.concatenate([r, x, l]) for r, x, l in zip(rnd, bnd, lk))


def check(rt: Runtime, prg: cl.Program, op: str, width: str, n_random: int = 1_000_000,
          seed: int = 0) -> tuple:
    """Run one op on the device and compare with numpy: (n_words, n_mismatches, first_bad)
    where first_bad is None or (a, b, c, got, want) as hex strings."""
    a, b, c = check_inputs(op, width, n_random, seed)
    got = run_op(rt, prg, op, width, a, b, c)
    want = expected(op, width, a, b, c)
    bad = np.flatnonzero(got != want)
    first = None
    if bad.size:
        i = bad[0]
        first = tuple(f"0x{int(x):08x}" for x in (a[i], b[i], c[i], got[i], want[i]))
    return a.size, int(bad.size), first


def check_all(rt: Runtime, variant: str, n_random: int = 1_000_000, seed: int = 0) -> list:
    """Check every op and width for one variant: list of (op, width, n_words, n_bad, first_bad)."""
    prg = program(rt, variant_values(rt.caps, variant))
    out = []
    for width in reference.WIDTHS:
        for op in reference.OPS:
            out.append((op, width) + check(rt, prg, op, width, n_random, seed))
    return out


# ---- throughput kernels (kernels/simd_bench.mako), used by tools/device_simd.py ----

def bench_names() -> list:
    """Kernel suffixes of the bench template: "<op>_<width>" for every op, then "imad"."""
    return [f"{op}_{w}" for w in reference.WIDTHS for op in reference.OPS] + ["imad"]


BENCH_PARAMS = ParamSet("simd_bench", (
    Param.int("ITERS", "calls of the op in each work-item's dependent chain; a multiple of 4",
              lo=4, hi=1 << 20),
    Param.choice("ONLY", "build every kernel (all) or a single one, to find one that fails to build",
                 ("all",) + tuple(bench_names()), default="all"),
))


def bench_program(rt: Runtime, values: dict, iters: int, only: str = "all") -> cl.Program:
    """The built bench program for SIMD values ``values``."""
    if iters % 4:
        raise ParameterError(f"simd_bench.ITERS={iters} must be a multiple of 4")
    return rt.program("simd_bench.mako", BENCH_PARAMS, {**values, "ITERS": iters, "ONLY": only})


def simulate_chain(name: str, inp: np.ndarray, n: int, iters: int) -> np.ndarray:
    """Numpy version of bench kernel b_<name> for ``n`` work-items over ``inp`` (5*n words)."""
    x = inp[:n].copy()
    y = [inp[(j + 1) * n:(j + 2) * n] for j in range(4)]
    if name == "imad":
        for t in range(iters):
            j = t % 4
            x = (x.astype(np.uint64) * y[j] + y[(j + 1) % 4]).astype(np.uint32)
        return x
    op, width = name.split("_")
    nl = 32 // reference.WIDTHS[width]
    fn = reference.op(op, width)
    for t in range(iters):
        j = t % 4
        if op in reference.BINARY:
            x = fn(x, y[j])
        elif op in reference.TERNARY:
            x = fn(x, y[j], y[(j + 1) % 4])
        elif op in ("get", "gets"):
            x = fn(x, j % nl).astype(np.int64).astype(np.uint32) + y[j]
        elif op == "set":
            x = fn(x, j % nl, x + y[j])
        else:
            x = np.asarray(fn(x)).astype(np.int64).astype(np.uint32) ^ y[j]
    return x


def time_kernel(rt: Runtime, knl, gsize: int, lsize: int, args, reps: int = 7, warmup: int = 2) -> list:
    """Kernel times in seconds from OpenCL profiling events, ``reps`` runs after ``warmup``."""
    times = []
    for r in range(warmup + reps):
        ev = knl(rt.queue, (gsize,), (lsize,), *args)
        ev.wait()
        if r >= warmup:
            times.append((ev.profile.end - ev.profile.start) * 1e-9)
    return times
