"""Template parameters of the S-lane MSV/SSV kernels (``kernels/hmm_slane.mako``).

One :class:`~clalign.runtime.params.ParamSet` for both filters (``ALGO`` picks the
recurrence). Geometry, after CUDAMPF++ (see :mod:`clalign.hmm.engine` for the full story):

* a *wavefront* is ``WAVE`` work-items whose 32-bit words together hold ``4*WAVE`` byte
  lanes; ``S`` sequences share one wavefront, so each sequence owns ``P = 4*WAVE/S`` bytes;
* ``L = max(1, WAVE/S)`` work-items serve one sequence (a *lane group*) and each of them
  keeps ``W = min(4, P)`` model states of that sequence per 32-bit word; for ``S > WAVE``
  one work-item packs ``S/WAVE`` sequences (2 or 4) into its word, ``W`` bytes each (2 or 1);
* ``H`` words per work-item (unrolled) give one row of ``P*H = W*L*H`` striped states,
  which must cover the model length ``M``;
* ``WG_WAVES`` wavefronts form a work-group; all of them step through the same block of
  rows, so the local-memory exchange can use work-group barriers.
"""
from __future__ import annotations

from ..runtime.params import Param, ParamSet

#: Legal numbers of sequences per wavefront.
S_VALUES = (1, 2, 4, 8, 16, 32, 64, 128)
#: Hard upper bound for H (states per row = 128*H/S on a 32-wide wavefront).
H_LIMIT = 256

HMM_SLANE = ParamSet("hmm_slane", params=(
    Param.choice("ALGO", "recurrence: msv (unsigned bytes, J state, per-row xE reduction) or "
                         "ssv (HMMER 3.4 signed single-segment bytes, xE reduced once per sequence)",
                 ("msv", "ssv")),
    Param.int("WAVE", "work-items per wavefront (the fixed SIMT group; 32 on NVIDIA, any on PoCL)",
              values=(16, 32, 64), default=32),
    Param.int("S", "sequences per wavefront; S <= 4*WAVE (S > WAVE packs S/WAVE sequences into "
                   "one work-item's 32-bit word)", values=S_VALUES),
    Param.int("H", "32-bit words of DP row per work-item (fully unrolled); W*L*H states per row",
              lo=1, hi=H_LIMIT),
    Param.int("WG_WAVES", "wavefronts per work-group (1..8); they share one block of rows",
              values=(1, 2, 4, 8), default=1),
))


def geometry(S: int, WAVE: int = 32) -> dict:
    """Derived sizes for ``S`` sequences on a ``WAVE``-wide wavefront.

    ``P``: bytes (states) of one sequence per row word-slice; ``L``: work-items per sequence;
    ``SPW``: sequences per work-item; ``W``: bytes of one sequence inside one 32-bit word.
    """
    if S > 4 * WAVE:
        raise ValueError(f"S={S} exceeds 4*WAVE={4 * WAVE}")
    P = 4 * WAVE // S
    return {"P": P, "L": max(1, WAVE // S), "SPW": max(1, S // WAVE), "W": min(4, P)}
