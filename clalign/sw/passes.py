"""The first-pass and rescoring kernels of one batch: inter-task (packed-word lanes, 8/16/32 bits)
and the CPU vector kernel. Each function runs one pass on a :class:`~clalign.sw.worker.Worker`
and returns the batch's score vector (entries of the pass's subjects set, -1 = rescore wider)."""
from __future__ import annotations

import numpy as np
import pyopencl as cl

from .batch import make_layout
from .params import SW_PARAMS, SWV_PARAMS
from .scoring import build_profile

INTER_TEMPLATE = "sw_intertask.mako"
VECTOR_TEMPLATE = "sw_vector.mako"


def run_intertask(w, batch, ids, width, qcodes, sched, profiles, slot=0, block=True):
    """One inter-task pass over ``ids`` (batch-local, ascending length) on slot ``slot``'s queue and
    scratch buffers; ``block=False`` returns a :class:`~clalign.sw.worker.Launched` instead of scores."""
    plan = w.plan
    q = w.queues[slot]
    layout = plan.profile_layout(width, len(qcodes))
    vals = plan.values(width, layout, sched)
    prg = w.rt.program(INTER_TEMPLATE, SW_PARAMS, vals)
    S = vals["WORDS"] * (32 // width)
    full = ids is batch.order
    lkey = ("layout", S, vals["WG"])
    cached = batch.cache.get(lkey) if full else None
    if cached is None:
        lay = make_layout(ids, batch.lengths, S, vals["WG"])
        mf = cl.mem_flags
        bufs = tuple(cl.Buffer(w.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
                     for a in (lay.lanes, lay.glen, lay.boff))
        # The subjects' residues, interleaved lane by lane for this layout (on the device).
        ires = cl.Buffer(w.ctx, mf.READ_WRITE, max(16, lay.columns * vals["WG"] * S))
        inter = cl.Kernel(prg, "sw_interleave")
        inter.set_args(batch.res, batch.offs, batch.lens, bufs[0], bufs[2],
                       np.int32(lay.ngroups), np.int32(lay.nblocks), ires)
        ev = cl.enqueue_nd_range_kernel(q, inter, (lay.nblocks * vals["WG"],), (vals["WG"],),
                                        wait_for=batch.take_events() or None)
        batch.events.append(ev)
        cached = (lay, bufs + (ires,))
        if full:
            batch.cache[lkey] = cached      # the first pass's layout is the same for every query
            batch.ready.append(ev)          # which a first pass on another slot's queue waits for
    lay, (lanes, glen, boff, ires) = cached
    key = ("inter", width, layout, vals["ROWS"])
    prof = profiles.get(key)
    if prof is None:
        host = build_profile(qcodes, plan.scoring, width, vals["ROWS"], layout)
        buf = cl.Buffer(w.ctx, cl.mem_flags.READ_ONLY, host.nbytes)
        cl.enqueue_copy(q, buf, host, is_blocking=False)
        prof = profiles[key] = (buf, host)
    nstrips = max(1, -(-len(qcodes) // vals["ROWS"]))
    tmp = w.scratch(f"tmp{slot}", 16 if nstrips == 1 else lay.columns * vals["WG"] * vals["WORDS"] * 8)
    counter = w.scratch(f"counter{slot}", 4)
    wait = batch.take_events() + (list(batch.ready) if full else [])
    if sched == "dynamic":
        wait.append(cl.enqueue_fill_buffer(q, counter, np.int32(0), 0, 4))
        per_cu = plan.groups_per_cu or (8 if w.caps.is_gpu else 1)
        nwg = max(1, min(lay.nblocks, w.caps.compute_units * per_cu))
    else:
        nwg = lay.nblocks
    bias, goe, ext, thresh = plan.scoring.kernel_consts(width)
    knl = w.kernel(prg, "sw_intertask")
    knl.set_args(ires, lanes, glen, boff, np.int32(lay.ngroups), np.int32(lay.nblocks), prof[0],
                 np.int32(nstrips), tmp, batch.score_buffer(slot), counter, np.int32(bias), np.int32(goe),
                 np.int32(ext), np.int32(thresh))
    return w.launch(knl, nwg * vals["WG"], vals["WG"], wait or None, batch, slot, block)


def run_vector(w, batch, qcodes, ids, vals):
    """One vector-kernel pass over the subjects ``ids`` (batch-local, ascending length)."""
    q = w.queue
    mf = cl.mem_flags
    u8 = vals["LANE"] == "u8"
    vec, cols, strip, wg = vals["VEC"], vals["COLS"], vals["STRIP"], vals["WG"]
    esize = 1 if u8 else 2
    prg = w.rt.program(VECTOR_TEMPLATE, SWV_PARAMS, vals)
    full = ids is batch.order
    key = ("vlist", vec, cols)
    cached = batch.cache.get(key) if full else None
    if cached is None:
        # groups of VEC subjects (ascending length), each padded to a multiple of COLS columns;
        # their residue codes interleaved column by column on the device (swv_interleave)
        ngroups = max(1, -(-len(ids) // vec))
        lanes = np.full(ngroups * vec, -1, dtype=np.int32)
        lanes[:len(ids)] = ids
        ln = np.zeros(ngroups * vec, dtype=np.int64)
        ln[:len(ids)] = batch.lengths[ids]
        glen = (ln.reshape(ngroups, vec).max(axis=1) + cols - 1) // cols * cols
        goff = np.zeros(ngroups + 1, dtype=np.int64)
        np.cumsum(glen * vec, out=goff[1:])
        lbuf = cl.Buffer(w.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=lanes)
        gbuf = cl.Buffer(w.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=goff)
        ires = cl.Buffer(w.ctx, mf.READ_WRITE, max(16, int(goff[-1])))
        inter = cl.Kernel(prg, "swv_interleave")
        inter.set_args(batch.res, batch.offs, batch.lens, lbuf, gbuf, np.int32(ngroups), ires)
        ev = cl.enqueue_nd_range_kernel(q, inter, (ngroups,), None, wait_for=batch.take_events() or None)
        batch.events.append(ev)
        cached = (lbuf, gbuf, ires, ngroups, int(glen.max()))
        if full:
            batch.cache[key] = cached
    lanes, goff, ires, ngroups, maxcols = cached
    matT = w.vector_matrix(vals["LANE"])
    m = len(qcodes)
    qh = np.zeros(max(16, m), dtype=np.uint8)
    qh[:m] = qcodes
    qbuf = w.scratch("vquery", qh.nbytes)
    wait = [cl.enqueue_copy(q, qbuf, qh, is_blocking=False)]
    per_cu = w.plan.groups_per_cu or (8 if w.caps.is_gpu else 2)
    nwg = max(1, min(-(-ngroups // wg), w.caps.compute_units * per_cu))
    nwi = nwg * wg
    hscr = w.scratch("vh", nwi * 2 * strip * vec * esize)
    bscr = w.scratch("vb", nwi * 2 * max(1, maxcols) * vec * esize if m > strip else 16)
    counter = w.scratch("counter", 4)
    wait += batch.take_events()
    wait.append(cl.enqueue_fill_buffer(q, counter, np.int32(0), 0, 4))
    knl = w.kernel(prg, "sw_vector")
    bias, goe, ext, thresh = w.plan.scoring.kernel_consts(8 if u8 else 16)
    knl.set_args(ires, goff, lanes, np.int32(ngroups), qbuf, np.int32(m), matT, hscr, bscr, np.int32(maxcols),
                 batch.scores, counter, np.int32(bias), np.int32(goe), np.int32(ext), np.int32(thresh))
    return w.launch(knl, nwi, wg, wait, batch)
