"""A search's database layouts for the S-lane kernels: planned (:func:`clalign.hmm.layout.plan_blocks`)
and put on the device (:mod:`clalign.hmm.layout_dev`) once per geometry, in a cache the search (or
the API, per database) keeps, under one lock per layout; and made ahead, while a search starts
(:func:`layouts_ahead`)."""
from __future__ import annotations

import threading

import numpy as np
import pyopencl as cl

from ..runtime import Runtime
from .layout import default_cap, default_spc, plan_blocks, split_long

_LOCKS_LOCK = threading.Lock()


def _layout_lock(cache, key) -> threading.Lock:
    """The lock one layout is made under, kept in the cache beside it: layouts of other
    geometries are made at the same time (the 14 bundled models need two on the H100; made
    one after the other, the second kept 7 of the first 8 models waiting ~0.5 s, run y23)."""
    if cache is None:
        return threading.Lock()
    with _LOCKS_LOCK:
        return cache.setdefault(("lock", key), threading.Lock())


def _layout(cache, key, n, make_buffers, build, pieces):
    """(blocks, device buffers) of a layout from a search's cache, planned (``build``) and put
    on the device (``make_buffers``) once under its own lock (:func:`_layout_lock`; the MSV
    stage runs models in several threads). A layout already made is taken without the lock:
    its holder may be waiting for the interpreter lock (13 thread-seconds of the 1,000-model
    run on the H100 host went to that wait)."""
    hit = cache.get(key) if cache is not None else None
    if hit is not None and hit[1] is not None:
        return hit[0], hit[1]
    dev_bufs = None
    with _layout_lock(cache, key):
        hit = cache.get(key) if cache is not None else None
        if hit is None:
            blocks = build()
            blocks.pieces = pieces
            if cache is not None:
                cache[key] = hit = [blocks, None]
        else:
            blocks, dev_bufs = hit
        if n and (hit is None or hit[1] is None):
            dev_bufs = make_buffers(blocks)
            if hit is not None:
                hit[1] = dev_bufs
    return blocks, dev_bufs


def _cap(lengths, spc: int, cache) -> int:
    """:func:`default_cap`, kept in a search's layout cache for its length array (a max and a
    mean over every target: ~1.5 ms per model at 572,100 targets)."""
    if cache is None:
        return default_cap(lengths, spc)
    key = ("cap", id(lengths), spc)
    hit = cache.get(key)
    if hit is None or hit[0] is not lengths:
        hit = cache[key] = (lengths, default_cap(lengths, spc))
    return hit[1]


def _buffer_maker(ctx):
    """A read-only device copy of an array (4 bytes for an empty one)."""
    mf = cl.mem_flags

    def buf(a):
        a = np.ascontiguousarray(a)
        if a.nbytes == 0:
            a = np.zeros(4, dtype=np.uint8)
        return cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)

    return buf


def _block_buffers(rt, queue, blocks, residues=None, cache=None) -> list:
    """Device copies of a block layout's arrays (kept with it in a layout cache). Bytes the
    host has not written (``blocks.data`` None) are written on the device from the residues
    (:func:`clalign.hmm.layout_dev.fill_device`)."""
    buf = _buffer_maker(rt.ctx)
    if blocks.data is not None:
        data = buf(blocks.data)
    else:
        from .layout_dev import fill_device, residues_on_device

        data = fill_device(rt, queue, blocks, residues_on_device(cache, rt, queue, residues))
    return [data, buf(blocks.off), buf(blocks.rows), buf(blocks.col_start), buf(blocks.ids)]


def _layout_of(rt, q, C: int, RG: int, spc: int, residues, offsets, lengths, order, balance=True, cache=None,
               want=None) -> tuple:
    """(blocks, device buffers) of the database layout of C columns, residue group RG and
    ``spc`` sequences per column (``want``: SSV pieces (seg, overlap), or None) from the
    layout cache, made there once (:func:`_layout`)."""
    pieces = split_long(offsets, lengths, *want) if want else None
    e_off, e_len, e_order = ((pieces.offsets, pieces.lengths, pieces.order) if pieces is not None
                             else (offsets, lengths, order))
    cap = _cap(e_len, spc, cache) if balance else None
    key = (rt.device.int_ptr, C, spc, RG, cap, want)
    return _layout(cache, key, int(np.asarray(lengths).size), lambda b: _block_buffers(rt, q, b, residues, cache),
                   lambda: plan_blocks(e_off, e_len, e_order, C, spc, RG, cap), pieces)


def layouts_ahead(db, plans, device=None, cache=None) -> None:
    """Make the MSV layouts of a search's models (``plans``: each model's kernel overrides,
    :mod:`clalign.hmm.kernel_plan`) in daemon threads, one per geometry, as :func:`run_raw`
    would make them for those models: the stage's first models then find them made (or wait
    for their lock) instead of planning them when they start (~0.2 s of numpy on the H200 host
    while the search is still starting, run y65)."""
    from ..cl_early import ahead

    from .engine import _db_arrays

    db, res, offs, lens, order = _db_arrays(db)
    seen = set()
    for ov in plans:
        values = ov.get("values")
        if values is None:
            continue
        geom = (values["S"] * values["WG_WAVES"], values["RG"])
        if geom in seen:
            continue
        seen.add(geom)

        def make(C=geom[0], RG=geom[1]):
            rt = Runtime.get(device)
            _layout_of(rt, rt.new_queue(), C, RG, default_spc(lens.size, C, rt.caps), res, offs, lens, order,
                       True, cache)

        ahead(f"clalign-layout-{geom[0]}", make)
