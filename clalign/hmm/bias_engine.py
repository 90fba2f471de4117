"""The bias filter on the device (``kernels/hmm_bias.mako``): ``p7_bg_FilterScore`` of a
model's MSV survivors, equal to :func:`clalign.hmm.vit_bias.filter_scores` (the host form).

Why: a search whose Viterbi filter runs on the device needs each survivor's bias-filter score
first. On the host that is a compiled loop (numba: its import and first cache load, ~0.5-1 s
of a 14-model search's ~2.5 s on the H200 host, and ~16 ns a residue on the cores pyhmmer
needs); here it is one launch per model on the residues the search has on the device already.
Devices without double precision keep the host form (:func:`usable`).
"""
from __future__ import annotations

import numpy as np

from .params import HMM_BIAS
from .profile import EASEL_AMINO, EASEL_OF_CODE

TEMPLATE = "hmm_bias.mako"
#: Work-items per work-group.
WG = 64


def usable(caps) -> bool:
    """Whether the kernel runs on a device (it needs cl_khr_fp64)."""
    return bool(getattr(caps, "fp64", False))


def bias_values() -> dict:
    return HMM_BIAS.validate({"WG": WG, "STAR": EASEL_AMINO.index("*")})


def bias_item() -> tuple:
    """(template, parameters, values) of the kernel, for :meth:`clalign.runtime.Runtime.prebuild`."""
    return TEMPLATE, HMM_BIAS, bias_values()


def _cmap() -> np.ndarray:
    full = np.zeros(256, dtype=np.uint8)
    full[:EASEL_OF_CODE.size] = EASEL_OF_CODE
    return full


_CMAP = _cmap()


def bias_scores_device(M: int, compo, res_buf, offs_buf, targets, lengths, device=None, queue=None) -> np.ndarray:
    """p7_bg_FilterScore (float32 nats) of database targets ``targets`` (HMMER's lengths
    ``lengths``: stored residues, then trailing stops) for a model of M states and composition
    ``compo`` (None: the file had no COMPO line); ``res_buf``/``offs_buf``: the database's
    residues (clalign codes) and offsets (uint64) on the device."""
    import pyopencl as cl

    from ..runtime import Runtime
    from ..runtime.scratch import scratch
    from .engine import kernel_of
    from .vit_bias import COMPO_UNSET, K, filter_hmm

    targets = np.asarray(targets, dtype=np.int64)
    n = int(targets.size)
    if n == 0:
        return np.zeros(0, dtype=np.float32)
    rt = Runtime.get(device)
    q = rt.queue if queue is None else queue
    t, pi, eo = filter_hmm(M, np.full(K, COMPO_UNSET, dtype=np.float32) if compo is None else compo)
    lens = np.asarray(lengths, dtype=np.int64)
    order = np.argsort(-lens, kind="stable")           # longest first: the launch ends on short ones
    knl = kernel_of(rt.program(TEMPLATE, HMM_BIAS, bias_values()), "hmm_bias")
    sc, keep = scratch(rt.ctx), []
    bufs = [sc.upload(q, "bias_" + name, a, keep) for name, a in
            (("targets", targets[order].astype(np.uint32)), ("lens", lens[order].astype(np.uint32)),
             ("cmap", _CMAP), ("eo", np.ascontiguousarray(eo, dtype=np.float32)))]
    d_out = sc.buffer("bias_out", 4 * n)
    f32 = np.float32
    knl.set_args(res_buf, offs_buf, bufs[0], bufs[1], np.uint32(n), bufs[2], bufs[3], f32(t[1, 0]), f32(t[1, 1]),
                 f32(t[0, 2]), f32(t[1, 2]), f32(pi[0]), f32(pi[1]), d_out)
    cl.enqueue_nd_range_kernel(q, knl, (-(-n // WG) * WG,), (WG,))
    out = np.empty(n, dtype=np.float32)
    cl.enqueue_copy(q, out, d_out)
    q.finish()
    del keep
    scores = np.empty(n, dtype=np.float32)
    scores[order] = out
    return scores
