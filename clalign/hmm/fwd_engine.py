"""The Forward filter kernel (``kernels/hmm_forward.mako``): host tables, choice and launch.

A search whose Viterbi filter runs on the device scores the targets that passed it here, so
that pyhmmer is handed only what passes (or nearly passes) the Forward filter too: on a
database of random proteins ~1 target in 1,000 passes Viterbi and ~1 in 100,000 Forward, and
pyhmmer's Forward on the Viterbi survivors was most of its remaining work (docs/perf/hmmsearch.md,
run y62). Scores equal :func:`clalign.hmm.fwd_reference.fwd_reference` to float rounding.
"""
from __future__ import annotations

import numpy as np

from .fwd_reference import E_MOVE, RESCALE, ForwardProfile, ncj_probs
from .params import HMM_FORWARD
from .vit_engine import NROWS, STAR_CODE, _limits, by_item, choose_viterbi, launch_per_target

TEMPLATE = "hmm_forward.mako"


def choose_forward(M: int, caps, overrides: dict | None = None) -> dict:
    """Template values for a model of M states: the Viterbi kernel's geometry (``overrides``:
    WG and/or P, as :func:`clalign.hmm.vit_engine.choose_viterbi` takes them)."""
    v = choose_viterbi(M, overrides, *_limits(caps))
    return HMM_FORWARD.validate({"WG": v["WG"], "P": v["P"], "NROWS": NROWS, "STAR": STAR_CODE})


def forward_items(Ms, device=None) -> list:
    """(template, parameters, values) of each model's Forward kernel (None: too long for it)."""
    from ..runtime import Runtime
    from .vit_engine import VIT_MAX_M

    caps = Runtime.get(device).caps
    return [(TEMPLATE, HMM_FORWARD, choose_forward(int(M), caps)) if int(M) <= VIT_MAX_M else None for M in Ms]


def fwd_tables(prof: ForwardProfile, WG: int, P: int) -> tuple:
    """(e [NROWS][P][WG], t [8][P][WG]) float32 of the kernel for ``prof``: state k = t*P + j + 1
    of work-item t at [j][t]; states past M zero."""
    S = WG * P
    e = np.zeros((NROWS, S + 1), dtype=np.float32)
    e[:, :prof.M + 1] = prof.e[:NROWS]
    t = np.zeros((8, S + 1), dtype=np.float32)
    t[:, :prof.M + 1] = prof.t
    return by_item(e, WG, P), by_item(t, WG, P)


def fwd_scores_device(prof: ForwardProfile, res_buf, offs_buf, targets, lengths, device=None, queue=None,
                      overrides: dict | None = None) -> np.ndarray:
    """Forward scores (float32 nats) of database targets ``targets`` (HMMER's lengths
    ``lengths``: stored residues, then trailing stops); ``res_buf``/``offs_buf``: the
    database's residues (clalign codes) and offsets (uint64) on the device."""
    from ..runtime import Runtime
    from .engine import kernel_of

    targets = np.asarray(targets, dtype=np.int64)
    if targets.size == 0:
        return np.zeros(0, dtype=np.float32)
    rt = Runtime.get(device)
    values = choose_forward(prof.M, rt.caps, overrides)
    e, t = fwd_tables(prof, values["WG"], values["P"])
    lens = np.asarray(lengths, dtype=np.int64)
    loop, move = ncj_probs(lens)
    knl = kernel_of(rt.program(TEMPLATE, HMM_FORWARD, values), "hmm_forward")
    scores, _ = launch_per_target(rt, queue, knl, "fwd", (res_buf, offs_buf), targets, lens,
                                  [("ncj", np.stack([loop, move], axis=1).astype(np.float32), True),
                                   ("e", e, False), ("t", t, False)],
                                  (np.float32(E_MOVE), np.float32(RESCALE)), values["WG"], values["WG"], np.float32)
    return scores
