"""The S-lane database blocks filled on the device (``kernels/hmm_layout.mako``) from the
database's residue codes, uploaded once per search and shared by all its layouts.

Why: filled on the host (:func:`clalign.hmm.layout.fill_host`), each layout of a 572,100-protein
database was ~200 MB written by a compiled loop (numba: its import and first cache load, ~0.9 s
of waiting on the H100 host, run y21) and then copied to the device (~0.47 s); the 14 bundled
models need two layouts there. Now the host computes only where each sequence goes
(:func:`clalign.hmm.layout.plan_blocks`, numpy) and uploads that (~10 MB per layout) with the
residues (once); the device writes the bytes. Same bytes as the host fill
(``tests/test_hmm_layout_dev.py``).
"""
from __future__ import annotations

import numpy as np
import pyopencl as cl

from ..runtime.params import Param, ParamSet
from .layout import END, PAD, Blocks
from .params import RG_VALUES

HMM_LAYOUT = ParamSet("hmm_layout", with_simd=False, params=(
    Param.int("END", "residue code written after each sequence (clalign.hmm.layout.END)", lo=0, hi=255),
    Param.int("RG", "residue group of the layout (rows stored as RG consecutive bytes; clalign.hmm.params)",
              values=RG_VALUES),
))
#: Work-items per work-group of the fill (at most the device's limit).
FILL_WG = 128


def fill_items(rgs) -> list:
    """(template, parameters, values) of the fill programs for the residue groups ``rgs``
    (for :meth:`clalign.runtime.Runtime.prebuild`)."""
    return [("hmm_layout.mako", HMM_LAYOUT, {"END": END, "RG": int(rg)}) for rg in sorted(set(rgs))]


def upload_residues(ctx, queue, residues) -> cl.Buffer:
    """The residue codes on the device (a blocking copy: pyopencl releases the interpreter
    lock while it runs)."""
    res = np.ascontiguousarray(residues, dtype=np.uint8)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_ONLY, max(4, int(res.nbytes)))
    if res.nbytes:
        cl.enqueue_copy(queue, buf, res, is_blocking=True)
    return buf


def residues_on_device(cache, rt, queue, residues) -> cl.Buffer:
    """The database's residue codes on the device, uploaded once per layout cache (a search's,
    or the API's per database: :func:`clalign.hmm.engine.layout_cache`) and shared by its
    layouts; made under the cache's lock for them (the stage's threads and
    :func:`clalign.hmm.startup.residues_early` may ask at once)."""
    from .layouts import _layout_lock

    key = ("residues", rt.device.int_ptr)
    hit = cache.get(key) if cache is not None else None
    if hit is not None:
        return hit
    with _layout_lock(cache, key):
        hit = cache.get(key) if cache is not None else None
        if hit is None:
            hit = upload_residues(rt.ctx, queue, residues)
            if cache is not None:
                cache[key] = hit
    return hit


def fill_device(rt, queue, blocks: Blocks, res_buf) -> cl.Buffer:
    """A device buffer holding ``blocks``' bytes (PAD, then each slot's residues and END, as
    :func:`clalign.hmm.layout.fill_host` writes them), finished before it is returned: the
    layout is then used from other threads' queues."""
    ctx = rt.ctx
    size = int(blocks.size)
    data = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, max(4, size))
    if size:
        cl.enqueue_fill_buffer(queue, data, np.uint8(PAD), 0, size)
    sl = blocks.slots
    n = 0 if sl is None else int(sl.src.size)
    if n:
        prg = rt.program("hmm_layout.mako", HMM_LAYOUT, {"END": END, "RG": int(blocks.rg)})
        mf = cl.mem_flags

        def buf(a):
            return cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(a))

        args = (buf(sl.src.astype(np.uint64)), buf(sl.length.astype(np.uint32)), buf(sl.at.astype(np.uint32)),
                buf((sl.row0 % blocks.rg).astype(np.uint8)))
        wg = max(1, min(FILL_WG, int(rt.caps.max_work_group or 1)))
        knl = cl.Kernel(prg, "hmm_layout")
        knl(queue, (-(-n // wg) * wg,), (wg,), res_buf, *args, np.uint32(n),
            np.uint32(blocks.C * blocks.rg - blocks.rg), data)
    queue.finish()
    return data
