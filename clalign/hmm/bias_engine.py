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
    from .vit_bias import full_map

    return full_map(EASEL_OF_CODE)


def bias_scores_device(M: int, compo, res_buf, offs_buf, targets, lengths, device=None, queue=None) -> np.ndarray:
    """p7_bg_FilterScore (float32 nats) of database targets ``targets`` (HMMER's lengths
    ``lengths``: stored residues, then trailing stops) for a model of M states and composition
    ``compo`` (None: the file had no COMPO line); ``res_buf``/``offs_buf``: the database's
    residues (clalign codes) and offsets (uint64) on the device."""
    from ..runtime import Runtime
    from .engine import kernel_of
    from .vit_bias import COMPO_UNSET, K, filter_hmm
    from .vit_engine import launch_per_target

    targets = np.asarray(targets, dtype=np.int64)
    n = int(targets.size)
    if n == 0:
        return np.zeros(0, dtype=np.float32)
    rt = Runtime.get(device)
    t, pi, eo = filter_hmm(M, np.full(K, COMPO_UNSET, dtype=np.float32) if compo is None else compo)
    knl = kernel_of(rt.program(TEMPLATE, HMM_BIAS, bias_values()), "hmm_bias")
    f32 = np.float32
    scores, _ = launch_per_target(rt, queue, knl, "bias", (res_buf, offs_buf), targets,
                                  np.asarray(lengths, dtype=np.int64),
                                  [("cmap", _cmap(), False), ("eo", eo.astype(np.float32), False)],
                                  (np.uint32(n), f32(t[1, 0]), f32(t[1, 1]), f32(t[0, 2]), f32(t[1, 2]), f32(pi[0]),
                                   f32(pi[1])), 1, WG, np.float32)
    return scores
