"""The striped CPU MSV/SSV kernels (``kernels/hmm_striped.mako``): host table and launch.

On a CPU OpenCL device (PoCL) one work-item scores one sequence at a time with the model
striped over the byte lanes of a vector (Farrar's layout, HMMER's SSE filters), so PoCL emits
packed SSE/AVX2 byte instructions; the S-lane kernels of :mod:`clalign.hmm.engine` keep 32-bit
words per work-item, the GPU's shape. The raw per-sequence results are those of the S-lane
kernels (MSV: ``xJ | overflow << 8``; SSV: HMMER's unsigned xE byte, 255 once it overflowed),
so the same conversions (:func:`clalign.hmm.reference.msv_from_bytes`, ``ssv_from_bytes``)
give the scores. The kernel is chosen in :func:`clalign.hmm.kernel_choice.use_striped`.
"""
from __future__ import annotations

import numpy as np
import pyopencl as cl

from ..runtime import Runtime
from . import reference
from .kernel_choice import choose_striped
from .layout import XROWS
from .params import HMM_STRIPED, STRIPED_ITEMS_PER_CU

TEMPLATE = "hmm_striped.mako"


def striped_rbv(profile, vec: int, Q: int | None = None) -> np.ndarray:
    """HMMER's MSV costs ``rbv`` as [XROWS codes][Q][vec] bytes, state k at (k % Q, k // Q),
    Q = ceil(M / vec) unless given (larger: more padding states); padding states and the
    codes past the 28 letters cost 255."""
    M = int(profile.M)
    Q = max(1, -(-M // vec)) if Q is None else int(Q)
    full = np.full((XROWS, vec * Q), 255, dtype=np.uint8)
    rbv = np.asarray(profile.rbv, dtype=np.uint8)
    full[:rbv.shape[0], :M] = rbv
    return np.ascontiguousarray(full.reshape(XROWS, vec, Q).transpose(0, 2, 1))


class _Launch:
    """Device copies of one database's arrays for the striped kernel (kept per database)."""

    def __init__(self, ctx, residues, offsets, lengths):
        mf = cl.mem_flags
        lengths = np.asarray(lengths, dtype=np.int64)

        def buf(a):
            a = np.ascontiguousarray(a)
            return cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a if a.nbytes else np.zeros(4, np.uint8))

        self.n = int(lengths.size)
        self.res = buf(np.asarray(residues, dtype=np.uint8))
        self.offs = buf(np.asarray(offsets, dtype=np.int64)[:self.n].astype(np.uint64))
        self.lens = buf(lengths.astype(np.uint32))
        # longest first: the last sequences taken from the counter are the short ones
        self.list = buf(np.argsort(-lengths, kind="stable").astype(np.uint32))


def run_striped(profile, residues, offsets, lengths, algo: str, tjbm, device=None, repeat: int = 1,
                cache: dict | None = None, subset=None, **overrides):
    """Raw per-sequence bytes of the striped kernel, kernel seconds (median of ``repeat``
    launches, profiling events) and the template values; ``tjbm`` (MSV): the per-sequence
    length term (:func:`clalign.hmm.engine.tjbm_per_sequence`). ``cache`` keeps the device
    copies of the database for later models. ``subset``: indices of the only sequences to
    score (the others' raw results are 0)."""
    from .engine import _Run

    rt = Runtime.get(device)
    values = choose_striped(algo, rt.caps, overrides, profile.M)
    n = int(np.asarray(lengths).size)
    out = np.zeros(n, dtype=np.uint32)
    if n == 0:
        return _Run(out, 0.0, values, None)
    key = ("striped", rt.device.int_ptr)
    hit = cache.get(key) if cache is not None else None
    if hit is None:
        hit = _Launch(rt.ctx, residues, offsets, lengths)
        if cache is not None:
            cache[key] = hit
    lst, nlist = hit.list, n
    if subset is not None:
        subset = np.asarray(subset, dtype=np.int64)
        nlist = int(subset.size)
        if nlist == 0:
            return _Run(out, 0.0, values, None)
        sub = subset[np.argsort(-np.asarray(lengths, dtype=np.int64)[subset], kind="stable")].astype(np.uint32)
        lst = cl.Buffer(rt.ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=sub)
    vec = values["VEC"]
    table = striped_rbv(profile, vec, values["QC"] or None)
    Q = table.shape[1]
    wg = values["WG"]
    items = max(wg, -(-rt.caps.compute_units * STRIPED_ITEMS_PER_CU // wg) * wg)
    items = min(items, -(-nlist // wg) * wg)
    ctx, q = rt.ctx, rt.queue
    mf = cl.mem_flags
    prg = rt.program(TEMPLATE, HMM_STRIPED, values)
    from .engine import kernel_of

    knl = kernel_of(prg, "hmm_striped")
    d_prof = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=table)
    tj = np.ascontiguousarray(tjbm if tjbm is not None else np.zeros(n, np.uint8), dtype=np.uint8)
    d_tj = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=tj if tj.nbytes else np.zeros(4, np.uint8))
    d_scr = cl.Buffer(ctx, mf.READ_WRITE, size=items * Q * vec)
    d_cnt = cl.Buffer(ctx, mf.READ_WRITE, size=4)
    d_out = cl.Buffer(ctx, mf.READ_WRITE, size=out.nbytes)
    zero = np.zeros(1, np.uint32)
    knl.set_args(hit.res, hit.offs, hit.lens, lst, np.uint32(nlist), d_prof, np.uint32(Q), d_tj,
                 np.uint32(profile.base_b), np.uint32(profile.bias_b), np.uint32(profile.tec_b), d_scr, d_cnt, d_out)
    if subset is not None:                 # the sequences not scored read 0
        cl.enqueue_copy(q, d_out, out)
    times = []
    for _ in range(max(1, repeat)):
        cl.enqueue_copy(q, d_cnt, zero)
        ev = cl.enqueue_nd_range_kernel(q, knl, (items,), (wg,))
        ev.wait()
        times.append((ev.profile.end - ev.profile.start) * 1e-9)
    cl.enqueue_copy(q, out, d_out)
    q.finish()
    return _Run(out, float(np.median(times)), values, None)


def msv_scores_striped(profile, residues, offsets, lengths, model_lengths, device=None, cache=None,
                       **overrides):
    """MSV scores as HMMER 3.4's p7_MSVFilter computes them: the SSV kernel over every
    sequence, the MSV recurrence only where SSV gives no result (NaN: the J state may have
    been used, or the length terms leave no room). Returns (scores, a _Run whose seconds are
    both launches' kernel time); equal to :func:`clalign.hmm.reference.msv_reference`."""
    from .engine import _Run, tjbm_per_sequence

    ssv = run_striped(profile, residues, offsets, lengths, "ssv", None, device, cache=cache, **overrides)
    nats = reference.ssv_from_bytes(profile, ssv.raw, model_lengths)
    redo = np.flatnonzero(np.isnan(nats))
    seconds = ssv.seconds
    if redo.size:
        tjbm = tjbm_per_sequence(profile, model_lengths)
        msv = run_striped(profile, residues, offsets, lengths, "msv", tjbm, device, cache=cache, subset=redo,
                          **overrides)
        raw = msv.raw[redo]
        nats[redo] = reference.msv_from_bytes(profile, raw & 0xFF, (raw >> 8) & 1, np.asarray(model_lengths)[redo])
        seconds += msv.seconds
    return nats, _Run(ssv.raw, seconds, ssv.values, None)


def prebuild_striped(Ms, device=None, overrides=None, threads: int = 2) -> list:
    """Start the builds a search of models of lengths ``Ms`` needs (MSV's filter runs SSV
    first): one SSV build per distinct register-row Q, the run-time-Q SSV build where a model
    is longer, the run-time-Q MSV build."""
    rt = Runtime.get(device)
    ov = dict(overrides or {})
    items = [choose_striped("ssv", rt.caps, ov, int(M)) for M in Ms] + [choose_striped("msv", rt.caps, ov)]
    uniq = list({tuple(sorted(v.items())): v for v in items}.values())
    return rt.prebuild([(TEMPLATE, HMM_STRIPED, v) for v in uniq], threads)
