"""The intra-task kernel's pass (``kernels/sw_intratask.mako``): one work-group per (query, long
subject) pair, launched on the worker's second queue so that it runs while the inter-task
kernel scores the rest of the batch (no idle device while the long tail is aligned)."""
from __future__ import annotations

import numpy as np
import pyopencl as cl

from .params import INTRA_PARAMS, STRIPED_PARAMS
from .scoring import build_row_profile, build_striped_profile

INTRA_TEMPLATE = "sw_intratask.mako"
STRIPED_TEMPLATE = "sw_striped.mako"


def intra_values(values: dict, qlen: int, granule: int) -> dict:
    """The template values for a query of ``qlen`` rows: the tuned WG, or half of it (rounded up
    to a multiple of ``granule``, the warp) when the query's strips fit that, so that a short
    query's pairs hold half the work-items (few of which compute padding rows). Two sizes, not one
    per query length: every size is a program to build, and NVIDIA's driver compiles one at a
    time (~0.5 s each on the H100 with its cache off: a fresh machine's 20 standard queries built
    four); the intra-task kernel runs beside the inter-task one, where its short pairs cost little."""
    wg, th = values["WG"], values["TH"]
    nstrips = max(1, -(-qlen // (wg * th)))
    need = -(-qlen // (th * nstrips))
    g = max(1, int(granule))
    half = -(-(wg // 2) // g) * g
    return {**values, "WG": half if 0 < half < wg and need <= half else wg}


class Pending:
    """Scores of an intra-task launch being computed; :meth:`result` waits for them."""

    def __init__(self, event, copy, host, w):
        self.event, self.copy, self.host, self.w = event, copy, host, w

    def result(self) -> np.ndarray:
        from .worker import event_seconds

        self.copy.wait()
        dt = event_seconds(self.event)
        self.w.kernel_seconds += dt
        self.w.intra_seconds += dt
        return self.host


class StripedPending(Pending):
    """A striped u8/s16 launch; pairs at or above its bound are rescored by the next lane type when
    collected."""

    def __init__(self, event, copy, host, w, rescore):
        super().__init__(event, copy, host, w)
        self.rescore = rescore

    def result(self) -> np.ndarray:
        out = super().result()
        bad = np.flatnonzero(out < 0)
        if bad.size:
            out[bad] = self.rescore(bad).result()
        return out


def launch_intratask(w, batch, ids, qcodes, profiles, queue=None) -> Pending:
    """Start aligning ``qcodes`` against the batch-local subjects ``ids`` (longest first)."""
    if w.plan.ivalues["KIND"] == "striped":
        return launch_striped(w, batch, ids, qcodes, profiles, striped_lanes(w.plan.scoring)[0])
    q = queue or w.longq
    # GPUs: work-groups in whole warps; CPUs keep the tuned (small) WG: one build, not one per query length
    gran = w.caps.warp if w.caps.is_gpu else w.plan.ivalues["WG"]
    vals = intra_values(w.plan.ivalues, len(qcodes), gran)
    prg = w.rt.program(INTRA_TEMPLATE, INTRA_PARAMS, vals)
    wg, th, tw, bits = vals["WG"], vals["TH"], vals["TW"], vals["PBITS"]
    key = ("intra", wg * th, bits)
    prof = profiles.get(key)
    if prof is None:
        host = build_row_profile(qcodes, w.plan.scoring, wg * th, bits)
        buf = cl.Buffer(w.ctx, cl.mem_flags.READ_ONLY, host.nbytes)
        ev = cl.enqueue_copy(q, buf, host, is_blocking=False)
        prof = profiles[key] = (buf, host, host.shape[1], ev)
    buf, _, mpad, pev = prof
    full = ids is batch.long
    ckey = ("intra-list", tw)
    cached = batch.cache.get(ckey) if full else None
    if cached is None:
        cols = (batch.lengths[ids].astype(np.int64) + tw - 1) // tw * tw
        bstart = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(cols, out=bstart[1:])
        mf = cl.mem_flags
        lst = cl.Buffer(w.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(ids, dtype=np.int32))
        bs = cl.Buffer(w.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=bstart)
        cached = (lst, bs, int(bstart[-1]))
        if full:
            batch.cache[ckey] = cached
    lst, bs, ncols = cached
    npairs = len(ids)
    border = w.scratch("intra-border", max(16, ncols * 8))
    out = w.scratch("intra-out", max(16, npairs * 4))
    _, goe, ext, thresh = w.plan.scoring.kernel_consts(32)
    knl = w.kernel(prg, "sw_intratask")
    knl.set_args(batch.res, batch.offs, batch.lens, lst, np.int32(npairs), buf, np.int32(len(qcodes)), np.int32(mpad),
                 border, bs, out,
                 np.int32(goe), np.int32(ext), np.int32(thresh))
    ev = cl.enqueue_nd_range_kernel(q, knl, (npairs * wg,), (wg,), wait_for=list(batch.uploads) + [pev])
    host = np.empty(npairs, dtype=np.int32)
    copy = cl.enqueue_copy(q, host, out, wait_for=[ev], is_blocking=False)
    q.flush()
    return Pending(ev, copy, host, w)


_LANE_BITS = {"u8": 8, "s16": 16, "s32": 32}


def striped_lanes(scoring) -> list:
    """The striped kernel's lane types for ``scoring``, narrowest first: each pass rescores the pairs
    the previous one flagged (u8 -> s16 -> s32), as the first-pass kernels do."""
    return [lane for lane, bits in _LANE_BITS.items() if bits == 32 or scoring.width_ok(bits)]


#: LLVM CPU names (as PoCL puts them in a CPU device's name, e.g. "pthread-skylake-avx512-AMD EPYC")
#: whose code has AVX-512BW: 64-byte vectors are one register there.
AVX512_CPUS = ("avx512", "cascadelake", "cooperlake", "cannonlake", "icelake", "tigerlake", "rocketlake",
               "sapphirerapids", "emeraldrapids", "graniterapids", "diamondrapids", "znver4", "znver5",
               "x86-64-v4")


def compiles_avx512(caps) -> bool:
    """Whether a CPU device compiles for AVX-512BW (from the target named in PoCL's device name)."""
    name = str(getattr(caps, "name", "")).lower()
    return bool(getattr(caps, "is_cpu", False)) and any(c in name for c in AVX512_CPUS)


def striped_vec(lane: str, caps) -> int:
    """Vector elements of a lane type: u8 takes one AVX-512 (64) or AVX2 (32) register where Clang
    vectors build (64 lanes: the long-query case 1.45x on the AVX-512 VM, docs/perf/sw.md)."""
    if lane == "u8":
        if not caps.clang_vectors:
            return 16
        return 64 if compiles_avx512(caps) else 32
    return 16 if lane == "s16" else 8


def launch_striped(w, batch, ids, qcodes, profiles, lane) -> Pending:
    """The striped CPU kernel over ``ids`` (one work-item per pair), at ``lane`` (u8 | s16 | s32);
    pairs a narrow lane flags are rescored by the next lane type when collected."""
    q = w.longq
    vec = striped_vec(lane, w.caps)
    vals = {"LANE": lane, "VEC": vec, "WG": 1}
    prg = w.rt.program(STRIPED_TEMPLATE, STRIPED_PARAMS, vals)
    bits = _LANE_BITS[lane]
    bias, goe, ext, thresh = w.plan.scoring.kernel_consts(bits)
    key = ("striped", lane)
    prof = profiles.get(key)
    if prof is None:
        if lane == "u8":
            host = build_striped_profile(qcodes, w.plan.scoring, vec, np.uint8, bias)
        else:
            host = build_striped_profile(qcodes, w.plan.scoring, vec, np.int16 if lane == "s16" else np.int32)
        buf = cl.Buffer(w.ctx, cl.mem_flags.READ_ONLY, host.nbytes)
        ev = cl.enqueue_copy(q, buf, host, is_blocking=False)
        prof = profiles[key] = (buf, host, host.shape[1], ev)
    buf, _, seglen, pev = prof
    ids = np.ascontiguousarray(ids, dtype=np.int32)
    npairs = len(ids)
    lst = cl.Buffer(w.ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=ids)
    scr = w.scratch("striped-" + lane, max(16, npairs * 2 * seglen * vec * bits // 8))
    out = w.scratch("striped-out-" + lane, max(16, npairs * 4))
    knl = w.kernel(prg, "sw_striped")
    knl.set_args(batch.res, batch.offs, batch.lens, lst, np.int32(npairs), buf, np.int32(seglen), scr, out,
                 np.int32(goe), np.int32(ext), np.int32(thresh), np.int32(bias))
    ev = cl.enqueue_nd_range_kernel(q, knl, (npairs,), (1,), wait_for=list(batch.uploads) + [pev])
    host = np.empty(npairs, dtype=np.int32)
    copy = cl.enqueue_copy(q, host, out, wait_for=[ev], is_blocking=False)
    q.flush()
    lanes = striped_lanes(w.plan.scoring)
    if lane == lanes[-1]:
        return Pending(ev, copy, host, w)
    nxt = lanes[lanes.index(lane) + 1]
    return StripedPending(ev, copy, host, w,
                          lambda bad: launch_striped(w, batch, ids[bad], qcodes, profiles, nxt))
