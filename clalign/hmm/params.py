"""Template parameters of the S-lane MSV/SSV kernels (``kernels/hmm_slane.mako``).

One :class:`~clalign.runtime.params.ParamSet` for both filters (``ALGO`` picks the
recurrence). Geometry, after CUDAMPF++ (see :mod:`clalign.hmm.engine` for the full story):

* a 32-bit word holds ``NL = 32/LANE`` DP cells (``LANE`` = 8: HMMER's bytes, 4 per word;
  ``LANE`` = 16: 2 per word, an exact 16-bit form of the same recurrences, see
  ``kernels/hmm_slane.mako``), so a *wavefront* of ``WAVE`` work-items holds ``NL*WAVE``
  lanes; ``S`` sequences share one wavefront, so each sequence owns ``P = NL*WAVE/S`` lanes;
* ``L = max(1, WAVE/S)`` work-items serve one sequence (a *lane group*) and each of them
  keeps ``W = min(NL, P)`` model states of that sequence per 32-bit word; for ``S > WAVE``
  one work-item packs ``S/WAVE`` sequences (up to NL) into its word, ``W`` lanes each;
* ``H`` words per work-item (unrolled) give one row of ``P*H = W*L*H`` striped states,
  which must cover the model length ``M``;
* ``WG_WAVES`` wavefronts form a work-group; all of them step through the same block of
  rows, so the local-memory exchange can use work-group barriers.
"""
from __future__ import annotations

from ..runtime.params import Param, ParamSet

#: Legal numbers of sequences per wavefront.
S_VALUES = (1, 2, 4, 8, 16, 32, 64, 128)
#: Cells per DP lane.
LANE_VALUES = (8, 16)
#: Legal residue-group sizes (rows per residue fetch, see ``RG``).
RG_VALUES = (1, 4, 8, 16)
#: Hard upper bound for H (states per row = (32/LANE)*32*H/S on a 32-wide wavefront).
H_LIMIT = 256

HMM_SLANE = ParamSet("hmm_slane", params=(
    Param.choice("ALGO", "recurrence: msv (unsigned bytes, J state, per-row xE reduction) or "
                         "ssv (HMMER 3.4 signed single-segment bytes, xE reduced once per sequence)",
                 ("msv", "ssv")),
    Param.int("WAVE", "work-items per wavefront (the fixed SIMT group; 32 on NVIDIA, any on PoCL)",
              values=(16, 32, 64), default=32),
    Param.int("LANE", "bits per DP cell: 8 = HMMER's byte arithmetic, 4 cells per word (SWAR or video "
                      "SIMD); 16 = exact 16-bit form (no saturation needed before the overflow test), "
                      "2 cells per word, native single instructions with PTX_S16X2 (sm_90)",
              values=LANE_VALUES, default=8),
    Param.int("S", "sequences per wavefront; S <= (32/LANE)*WAVE (S > WAVE packs S/WAVE sequences "
                   "into one work-item's 32-bit word)", values=S_VALUES),
    Param.int("H", "32-bit words of DP row per work-item (fully unrolled); W*L*H states per row",
              lo=1, hi=H_LIMIT),
    Param.bool("PROF_LOCAL", "copy the striped profile (30 rows) into local memory once per work-group "
                             "instead of reading it from global memory per cell (host sets it when it "
                             "fits the device's local memory)", default=False),
    Param.int("RG", "residue group: RG consecutive rows of a column are stored as RG consecutive bytes "
                    "(row r, column c of a block at (r/RG)*C*RG + c*RG + r%RG) and fetched by one "
                    "32/64/128-bit load one group ahead of use; 1 = row-major bytes, one per row, "
                    "loaded one row ahead (the global latency of that load is then exposed "
                    "on every row whose work is shorter than it: small M on GPUs)",
              values=RG_VALUES, default=1),
    Param.int("WG_WAVES", "wavefronts per work-group (1..8); they share one block of rows",
              values=(1, 2, 4, 8), default=1),
))


#: What ``kernels/hmm_slane.mako`` is rendered with: the chosen values (``HMM_SLANE``) plus
#: what the host derives from them once (:func:`kernel_values`): the residue codes shared with
#: the database blocks, the geometry and the profile's local-memory layout.
HMM_SLANE_KERNEL = ParamSet("hmm_slane", params=HMM_SLANE.params + (
    Param.int("END", "residue code that closes a sequence in its column (clalign.hmm.layout.END)", lo=28, hi=255),
    Param.int("PAD", "residue code that fills a column to its block's rows (clalign.hmm.layout.PAD)", lo=28, hi=255),
    Param.int("NL", "DP cells per 32-bit word (32 / LANE)", values=(2, 4)),
    Param.int("P", "lanes (states) of one sequence per row slice: NL * WAVE / S", lo=1, hi=256),
    Param.int("L", "work-items per sequence: max(1, WAVE / S)", lo=1, hi=64),
    Param.int("SPW", "sequences per work-item: max(1, S / WAVE)", values=(1, 2, 4)),
    Param.int("W", "lanes of one sequence inside a word: min(NL, P)", values=(1, 2, 4)),
    Param.int("PSTR", "profile row stride in words (local copies pad it to L * odd for banks)", lo=1, hi=1 << 20),
    Param.int("PWORDS", "words of profile rows 0..29 in the global table", lo=1, hi=1 << 24),
    Param.int("LWORDS", "words of the local profile copy (PROF_LOCAL)", lo=1, hi=1 << 24),
))


def profile_words(S: int, H: int, WAVE: int, LANE: int, prof_local: bool) -> dict:
    """The profile table's row stride and sizes in 32-bit words (rows 0..29 are copied to local
    memory with PROF_LOCAL; with one sequence per work-item a local row is padded to L * odd
    words so that lane groups reading rows of different residues start on different banks)."""
    g = geometry(S, WAVE, LANE)
    pstr = H * g["L"] if not (prof_local and g["SPW"] == 1) else g["L"] * (H | 1)
    pwords = -(-30 * H * g["P"] * LANE // 32)
    return {"PSTR": pstr, "PWORDS": pwords, "LWORDS": 30 * pstr if g["SPW"] == 1 else pwords}


def kernel_values(values: dict, end: int, pad: int) -> dict:
    """``values`` (validated HMM_SLANE) with the derived template values of HMM_SLANE_KERNEL."""
    g = geometry(values["S"], values["WAVE"], values["LANE"])
    w = profile_words(values["S"], values["H"], values["WAVE"], values["LANE"], bool(values["PROF_LOCAL"]))
    return HMM_SLANE_KERNEL.validate({**values, "END": end, "PAD": pad, "NL": g["NL"], "P": g["P"], "L": g["L"],
                                      "SPW": g["SPW"], "W": g["W"], **w})


def geometry(S: int, WAVE: int = 32, LANE: int = 8) -> dict:
    """Derived sizes for ``S`` sequences on a ``WAVE``-wide wavefront of ``LANE``-bit cells.

    ``P``: lanes (states) of one sequence per row word-slice; ``L``: work-items per sequence;
    ``SPW``: sequences per work-item; ``W``: lanes of one sequence inside one 32-bit word;
    ``NL``: lanes per 32-bit word.
    """
    NL = 32 // LANE
    if S > NL * WAVE:
        raise ValueError(f"S={S} exceeds {NL}*WAVE={NL * WAVE} for LANE={LANE}")
    P = NL * WAVE // S
    return {"P": P, "L": max(1, WAVE // S), "SPW": max(1, S // WAVE), "W": min(NL, P), "NL": NL}


#: Template parameters of the striped CPU kernels (``kernels/hmm_striped.mako``): one work-item
#: per target sequence, the model's states striped over the byte lanes of one vector (Farrar,
#: HMMER's SSE filters). The number of vectors per row (Q = ceil(M / VEC)) is a run-time
#: argument, so one build serves every model.
HMM_STRIPED = ParamSet("hmm_striped", params=(
    Param.choice("ALGO", "recurrence: msv (p7_MSVFilter's biased unsigned bytes, J state, per-row xE) "
                         "or ssv (p7_SSVFilter in a shifted unsigned form, xE reduced once per sequence)",
                 ("msv", "ssv")),
    Param.int("VEC", "unsigned byte lanes per vector: 16 (SSE, uchar16) or 32 (AVX2; a Clang "
                     "ext_vector_type, only where the device probe found Clang vectors)",
              values=(16, 32), default=16),
    Param.int("WG", "work-items per work-group (each takes sequences from a shared counter)",
              values=(1, 2, 4, 8, 16), default=1),
    Param.int("QC", "0: Q (vectors per row) is a run-time argument and the row lives in scratch memory; "
                    "1..64: SSV built for exactly this Q, its row unrolled (registers, spills on the stack)",
              lo=0, hi=64, default=0),
), with_simd=False)

#: Largest Q (vectors per DP row) the SSV kernel is built for with its row unrolled; up to
#: STRIPED_QC_EXACT every Q has its build, above it Q is rounded up to a multiple of
#: STRIPED_QC_STEP (padding states, at most 3 of 17+ vectors) so a search needs fewer builds.
STRIPED_QC_MAX = 64
STRIPED_QC_EXACT = 16
STRIPED_QC_STEP = 4


def striped_q(M: int, vec: int, unrolled: bool = True) -> int:
    """Vectors per DP row of the striped kernel for M states in ``vec`` lanes: ceil(M / vec),
    or for the unrolled SSV build its QC (rounded up above STRIPED_QC_EXACT); 0 when an
    unrolled build would exceed STRIPED_QC_MAX."""
    q = max(1, -(-int(M) // int(vec)))
    if not unrolled:
        return q
    if q > STRIPED_QC_EXACT:
        q = -(-q // STRIPED_QC_STEP) * STRIPED_QC_STEP
    return q if q <= STRIPED_QC_MAX else 0

#: Work-items per compute unit of a striped launch (more than one evens out the end of the
#: launch: work-items take sequences from a counter, longest first).
STRIPED_ITEMS_PER_CU = 4


#: Work-items per sequence of the Viterbi kernel, and the most states one work-item keeps
#: (its rows live in registers: 5 ints per state).
VIT_WG_VALUES = (16, 32, 64, 128, 256)
VIT_P_MAX = 32

#: Template parameters of the Viterbi filter kernel (``kernels/hmm_viterbi.mako``): one
#: work-group scores one target sequence, work-item t keeps model states t*P+1 .. t*P+P of
#: each DP row (contiguous, not striped), the D->D chain is a work-group prefix maximum; the
#: profile tables hold state t*P+j+1 at column j*WG + t, so a work-group's loads are contiguous.
HMM_VITERBI = ParamSet("hmm_viterbi", params=(
    Param.int("WG", "work-items per work-group (= per target sequence)", values=VIT_WG_VALUES, default=32),
    Param.int("P", "model states per work-item (WG * P >= M; rows kept in registers)", lo=1, hi=VIT_P_MAX),
    Param.int("NROWS", "rows of the match-score table (residue codes; clalign PROTEIN: 28)", lo=1, hi=64),
    Param.int("BASE_W", "HMMER's 16-bit score origin (om->base_w)", lo=0, hi=32767),
    Param.int("STAR", "residue code of '*' (a target's trailing stops, which HMMER counts in L)", lo=0, hi=63),
), with_simd=False)

#: Template parameters of the bias filter kernel (``kernels/hmm_bias.mako``): one work-item per
#: target, float32 arithmetic taken in double (needs cl_khr_fp64).
HMM_BIAS = ParamSet("hmm_bias", params=(
    Param.int("WG", "work-items per work-group (one target each)", values=(32, 64, 128, 256), default=64),
    Param.int("STAR", "easel code of '*' (a target's trailing stops, which HMMER counts in L)", lo=0, hi=63),
), with_simd=False)

#: Template parameters of the Forward filter kernel (``kernels/hmm_forward.mako``): the Viterbi
#: kernel's geometry (one work-group per target, P states per work-item), float32 rows.
HMM_FORWARD = ParamSet("hmm_forward", params=(
    Param.int("WG", "work-items per work-group (= per target sequence)", values=VIT_WG_VALUES, default=32),
    Param.int("P", "model states per work-item (WG * P >= M; rows kept in registers)", lo=1, hi=VIT_P_MAX),
    Param.int("NROWS", "rows of the emission table (residue codes; clalign PROTEIN: 28)", lo=1, hi=64),
    Param.int("STAR", "residue code of '*' (a target's trailing stops, which HMMER counts in L)", lo=0, hi=63),
), with_simd=False)
