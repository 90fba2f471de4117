"""HMMER3 MSV and SSV filter scores on OpenCL: S-lane kernels after CUDAMPF++.

``msv_scores(hmm, db)`` and ``ssv_scores(hmm, db)`` return one float32 score (nats) per
database sequence, in database order, identical to pyhmmer's ``OptimizedProfile.msv_filter``
and ``ssv_filter`` (HMMER 3.4 ``p7_MSVFilter`` / ``p7_SSVFilter``) with the profile length
set to each sequence's length: +inf where the byte range overflows, and for ``ssv_scores``
NaN where HMMER/pyhmmer give no result (``eslENORESULT``/``None``). ``msv_filter`` in HMMER 3.4
first runs the SSV filter and uses its score whenever it gives one; the kernel computes the
MSV recurrence and :func:`clalign.hmm.reference.msv_from_bytes` turns its final bytes into
exactly that score (see the proof sketch there).

How CUDAMPF++'s tiers map to OpenCL here (our interpretation, written down once)
--------------------------------------------------------------------------------
CUDAMPF++ (Jiang, Ganesan, Yao) parallelises over five tiers: the GPU runs many thread
blocks; a block holds several warps; a warp of 32 threads aligns *S* database sequences at
once ("S-lane"), 32/S threads per sequence; each thread keeps a few 32-bit registers of the
DP row, unrolled *H* times (runtime compilation picks H per model length); each register
holds 4 byte-sized states handled by SIMD video instructions. With 32 threads x 4 bytes =
128 byte lanes per warp, a sequence gets 128/S bytes per register slice, so one kernel
covers ``(128/S) * H`` model states and the host picks the kernel per model (CUDAMPF++
Eq. 2-5): the largest S whose ``(128/S) * Hmax`` still covers M (more sequences in flight,
less per-row communication), then the smallest H that fits; Hmax is the register budget per
algorithm and device (tuning table). S = 64 and 128 exceed the 32 threads of a warp: we read
them as *several sequences per thread*: a 32-bit word then holds 2 sequences x 2 bytes
(S=64) or 4 sequences x 1 byte (S=128), so that the same 128 byte lanes are shared by S
sequences and no per-row exchange between threads is needed at all.

On OpenCL a *wavefront* is ``WAVE`` consecutive work-items of a work-group (32: exactly an
NVIDIA warp; on PoCL any fixed group is fine since it runs serially). Byte lanes per
wavefront are ``4*WAVE``, a sequence owns ``P = 4*WAVE/S`` of them on ``L = max(1, WAVE/S)``
work-items. The DP row of a sequence is striped (Farrar/HMMER): state k = p*H + h lives in
byte p of the sequence's vector in word h; the row update is HMMER's, word by word, and the
one cross-lane step (word 0 takes the previous row's last word shifted up one byte) and the
MSV per-row max of xE over the L work-items use PTX ``shfl.sync`` when ``PTX_SHFL`` and local
memory with barriers otherwise. SSV has no J state, so its xE is kept per work-item and
reduced only when a sequence ends (``atomic_max``), never per row.

Database blocks (CUDAMPF++ Algorithm 1): sequences are taken in length order, cut into
consecutive chunks of ``C * spc`` (C = S * WG_WAVES columns, ``spc`` sequences per column),
dealt to the columns of a chunk in a snake order (balanced column lengths), each followed
by an END residue and the column filled with PAD to the block's row count. A work-group
walks its block row by row; at END a lane writes its sequence's raw bytes and resets (a
masked reset when several sequences share a word). Longest blocks are launched first.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np
import pyopencl as cl

from ..errors import ParameterError
from ..runtime import Runtime, choose, simd_values
from ..runtime import tuning
from . import reference
from .params import H_LIMIT, HMM_SLANE, S_VALUES, geometry
from .profile import MSVProfile

END, PAD = 28, 29
#: Rows of the device profile table (28 residue codes + END, PAD and two spare rows).
XROWS = 32

#: Hmax per algorithm (largest H a kernel is picked with before S is lowered). The defaults
#: keep the unrolled row within the registers of a 32-bit-register GPU thread; see
#: docs/perf/hmm.md for the measurements behind device entries.
tuning.register("hmm_slane.msv", [({}, {"HMAX": 16, "WG_WAVES": 2}),
                                  ({"is_cpu": True}, {"HMAX": 32, "WG_WAVES": 1}),
                                  # H100, 2026-11-22: SWAR + local memory beat PTX video SIMD +
                                  # shfl for MSV at M >= 200 (docs/perf/hmm.md, runs 1-2)
                                  ({"is_nvidia": True}, {"SIMD": "swar", "PTX_SHFL": False, "PTX_S16X2": False}),
                                  # sm_90 native 16x2 ops: exact 16-bit lanes, 2.0-2.7x LANE 8; H of
                                  # 25-50 beats 13 by 30-60 %, so Hmax 32 (H100, docs/perf/hmm.md run 3)
                                  ({"ptx_s16x2": True}, {"LANE": 16, "HMAX16": 32, "SIMD": "ptx",
                                                         "PTX_S16X2": True, "PTX_SHFL": True}),
                                  # run 5: H ~ 50 beats 25 with balanced blocks, but one work-item per
                                  # sequence (S = 32) does not (M = 100: 1.0-1.7 vs 1.8-2.0 TCUPS);
                                  # residue groups of 4 rows
                                  ({"ptx_s16x2": True}, {"HMAX16": 64, "SMAX16": 16, "RG": 4}),
                                  # run 7 (every S x M, capped blocks): the best H grows with M:
                                  # Hmax 16 to M = 256, 32 to 512, 64 above (M = 200: 1.88 -> 3.68
                                  # TCUPS); S = 32 best at M = 20
                                  ({"ptx_s16x2": True}, {"HMAX16": ((256, 16), (512, 32), (None, 64)),
                                                         "SMAX16": 32})])
tuning.register("hmm_slane.ssv", [({}, {"HMAX": 16, "WG_WAVES": 2}),
                                  ({"is_cpu": True}, {"HMAX": 32, "WG_WAVES": 1}),
                                  # H100 run 3: LANE 16 3-4x LANE 8 at M = 400-2400
                                  ({"ptx_s16x2": True}, {"LANE": 16, "HMAX16": 32}),
                                  # run 5: Hmax 64 with S <= 16 and 16-row residue groups: M = 200
                                  # 2.41 -> 3.43 TCUPS, M = 100 2.09 -> 2.34 (docs/perf/hmm.md)
                                  ({"ptx_s16x2": True}, {"HMAX16": 64, "SMAX16": 16, "RG": 16}),
                                  # run 7, with long sequences in pieces: S = 32 now wins at
                                  # M <= 100 (M = 100: 6.95 -> 9.79 TCUPS), Hmax 32 above M = 256
                                  # (M = 800: 7.96 -> 9.52)
                                  ({"ptx_s16x2": True}, {"HMAX16": ((256, 64), (None, 32)), "SMAX16": 32})])


# ---------------------------------------------------------------------------------------
# profiles
# ---------------------------------------------------------------------------------------
_PYH = "ACDEFGHIKLMNPQRSTVWY-BJZOUX*~"     # pyhmmer/Easel amino digital order
_CLA = "-ABCDEFGHIKLMNPQRSTVWXYZU*OJ"      # clalign PROTEIN codes 0..27
_ROWS = np.array([_PYH.index(c) for c in _CLA], dtype=np.intp)


@dataclass
class _PyhmmerProfile(MSVProfile):
    """An MSVProfile read from pyhmmer's optimized profile (the truth the kernels are tested
    against): its bytes unstriped, and tjb from pyhmmer itself (``_om``, set to each length)."""

    _om: object = None

    def tjb_b(self, L):
        """tjb of length ``L`` (int, or an array of lengths), one pyhmmer call per length."""
        def one(x):
            self._om.L = int(x)
            return int(self._om.tjb)

        if np.ndim(L) == 0:
            return one(L)
        L = np.asarray(L)
        return np.array([one(x) for x in L.ravel()], dtype=np.int64).reshape(L.shape)


def profile_from_pyhmmer(hmm, L: int = 400) -> _PyhmmerProfile:
    """Unstripe pyhmmer's ``rbv``/``sbv`` (byte ``q*16+z`` holds state ``z*Q+q+1``) and map its
    digital alphabet rows to clalign PROTEIN codes."""
    from pyhmmer.plan7 import Background, Profile

    if hmm.alphabet.K != 20:
        raise ParameterError(f"HMM {hmm.name!r} is not a protein model (alphabet size {hmm.alphabet.K})")
    prof = Profile(hmm.M, hmm.alphabet)
    prof.configure(hmm, Background(hmm.alphabet), L)
    om = prof.to_optimized()
    M = hmm.M

    rbv_q = np.asarray(om.rbv)
    Q = rbv_q.shape[1] // 16
    rbv = rbv_q[:, :Q * 16].reshape(-1, Q, 16).transpose(0, 2, 1).reshape(-1, 16 * Q)[:, :M]
    sbv_q = np.asarray(om.sbv)[:, :Q * 16]
    sbv = sbv_q.reshape(-1, Q, 16).transpose(0, 2, 1).reshape(-1, 16 * Q)[:, :M].view(np.int8)
    try:  # pyhmmer 0.12.3 raises AttributeError on EvalueParameters.m_mu; the filters need no E-values
        mu, lam = float(hmm.evalue_parameters.m_mu), float(hmm.evalue_parameters.m_lambda)
    except (AttributeError, TypeError):
        mu = lam = float("nan")
    name = hmm.name.decode() if isinstance(hmm.name, bytes) else str(hmm.name)
    return _PyhmmerProfile(M=M, name=name, rbv=np.ascontiguousarray(rbv[_ROWS]),
                           sbv=np.ascontiguousarray(sbv[_ROWS]), rbv_easel=np.ascontiguousarray(rbv),
                           sbv_easel=np.ascontiguousarray(sbv),
                           base_b=int(om.base_b), bias_b=int(om.bias_b), tbm_b=int(om.tbm), tec_b=int(om.tec),
                           scale_b=float(om.scale_b), mu=mu, lam=lam, L=int(L), _om=om)


def as_profile(hmm, L: int = 400):
    """An MSVProfile from an MSVProfile, a clalign HMM, a pyhmmer HMM or a one-model file path."""
    if hasattr(hmm, "rbv") and hasattr(hmm, "sbv") and hasattr(hmm, "tjb_b"):
        return hmm
    if type(hmm).__module__.startswith("pyhmmer"):
        return profile_from_pyhmmer(hmm, L)
    from .hmmfile import read_hmm
    from .profile import build_msv_profile

    from ..data.inputs import as_path
    from .hmmfile import HMM

    if isinstance(hmm, (str, os.PathLike, bytes)) or not isinstance(hmm, HMM):
        hmm = read_hmm(as_path(hmm, "hmm"))     # TypeError for None, numbers... (clalign.data.inputs)
    return build_msv_profile(hmm, L)


# ---------------------------------------------------------------------------------------
# kernel choice
# ---------------------------------------------------------------------------------------
def _prof_local_bytes(algo: str, S: int, H: int, wave: int, lane: int, wg_waves: int, shfl: bool) -> int:
    """Local memory of a kernel with PROF_LOCAL: 30 profile rows plus its exchange buffers."""
    g = geometry(S, wave, lane)
    words = -(-30 * H * g["P"] * lane // 32)
    if g["SPW"] == 1:            # the template pads a local row to L * odd words (bank spread)
        words = 30 * g["L"] * (H | 1)
    xch = 0 if (shfl or g["L"] == 1) else (3 if algo == "msv" else 2) * wave * wg_waves
    return 4 * (words + xch)


def choose_kernel(M: int, algo: str, caps, override=None, simd=None) -> dict:
    """Template values for a model of M states: LANE, S, then H (CUDAMPF++ Eq. 2-5), WG_WAVES,
    PROF_LOCAL.

    ``override`` may fix any template value (ALGO/WAVE/LANE/S/H/RG/WG_WAVES/PROF_LOCAL/SIMD/
    PTX_SHFL...), ``HMAX`` and ``SMAX``. LANE comes from the tuning table only where the chosen
    SIMD variant has native 16-bit ops (``PTX_S16X2``); elsewhere it defaults to 8 (HMMER's
    bytes). ``HMAX`` (Hmax of Eq. 2-5) is the tuning value ``HMAX`` for LANE 8 and ``HMAX16``
    for 16; ``SMAX``/``SMAX16`` (optional) is the largest S that Eq. 2-5 may pick.
    """
    override = dict(override or {})
    tuned = tuning.lookup(f"hmm_slane.{algo}", caps)
    hmax8, hmax16 = tuned.pop("HMAX", 16), tuned.pop("HMAX16", None)
    smax8, smax16 = tuned.pop("SMAX", None), tuned.pop("SMAX16", None)
    dev = simd_values(caps, simd)
    eff = {**dev, **({} if simd else {k: tuned[k] for k in dev if k in tuned}),
           **{k: override[k] for k in dev if k in override}}
    lane = override.get("LANE")
    if lane is None:
        lane = tuned.get("LANE", 8) if eff["PTX_S16X2"] else 8
    lane = int(lane)
    if lane not in (8, 16):
        raise ParameterError(f"hmm_slane: LANE={lane} is not 8 or 16")
    tuned.pop("LANE", None)
    hmax = override.pop("HMAX", hmax16 if (lane == 16 and hmax16 is not None) else hmax8)
    if isinstance(hmax, (list, tuple)):      # ((M_max, Hmax), ...): Hmax by model length
        hmax = next(h for m, h in hmax if m is None or M <= m)
    hmax = int(hmax)
    smax = override.pop("SMAX", smax16 if lane == 16 else smax8)
    wave = int(override.get("WAVE", tuned.get("WAVE", 32)))
    NL = 32 // lane
    S = override.get("S")
    if S is None:
        S = 1
        for s in sorted((s for s in S_VALUES if s <= NL * wave and (smax is None or s <= int(smax))),
                        reverse=True):
            if geometry(s, wave, lane)["P"] * hmax >= M:
                S = s
                break
    S = int(S)
    if S not in S_VALUES or S > NL * wave:
        raise ParameterError(f"hmm_slane: S={S} is not one of {[s for s in S_VALUES if s <= NL * wave]} "
                             f"(LANE={lane}, WAVE={wave})")
    P = geometry(S, wave, lane)["P"]
    H = override.get("H")
    H = int(H) if H is not None else max(1, math.ceil(M / P))
    if P * H < M:
        raise ParameterError(f"hmm_slane: S={S}, H={H} cover {P * H} states, the model has {M}")
    if H > H_LIMIT:
        raise ParameterError(f"model of {M} states needs H={H} > {H_LIMIT} even with S=1")
    if wave != caps.warp:
        # shfl.sync exchanges lanes inside one 32-wide NVIDIA warp: a wavefront of another size
        # (or any non-NVIDIA device) uses the local-memory exchange with barriers.
        if override.get("PTX_SHFL"):
            raise ParameterError(f"hmm_slane: PTX_SHFL needs WAVE={caps.warp} (the device's warp), got WAVE={wave}")
        dev["PTX_SHFL"] = False
        override["PTX_SHFL"] = False
    values = {"ALGO": algo, "WAVE": wave, "LANE": lane, "S": S, "H": H}
    override.update({"S": S, "H": H, "LANE": lane})
    if simd:                     # an explicit variant beats the tuning table
        override.update({k: v for k, v in dev.items() if k not in override})
    pre = choose(HMM_SLANE, {**dev, **values, "PROF_LOCAL": False}, tuned, override)
    need = _prof_local_bytes(algo, S, H, pre["WAVE"], lane, pre["WG_WAVES"], pre["PTX_SHFL"])
    fits = need <= min(int(caps.local_mem or 0), 48 * 1024)
    want = override.get("PROF_LOCAL", tuned.get("PROF_LOCAL", fits))
    if want and not fits:
        if override.get("PROF_LOCAL"):
            raise ParameterError(f"hmm_slane: PROF_LOCAL needs {need} bytes of local memory, "
                                 f"{caps.name} allows {min(int(caps.local_mem or 0), 48 * 1024)}")
        want = False
    pre["PROF_LOCAL"] = bool(want)
    return HMM_SLANE.validate(pre)


# ---------------------------------------------------------------------------------------
# database blocks
# ---------------------------------------------------------------------------------------
@dataclass
class Blocks:
    """Striped sequence blocks for one column count C (see the module docstring)."""

    C: int
    data: np.ndarray       # uint8, all blocks
    off: np.ndarray        # uint32 byte offset per block
    rows: np.ndarray       # uint32 rows per block
    col_start: np.ndarray  # uint32, nblocks*C + 1
    ids: np.ndarray        # uint32, sequence index per column slot
    rg: int = 1            # residue group (template value RG): layout of rows inside a block
    pieces: "Pieces | None" = None   # SSV: long sequences cut into overlapping pieces

    @property
    def nblocks(self) -> int:
        return int(self.off.size)

    @property
    def cells(self) -> int:
        return int(self.data.size)


def build_blocks(residues, offsets, lengths, order, C: int, spc: int, rg: int = 1,
                 cap: int | None = None) -> Blocks:
    """Length-sorted, balanced blocks of C columns and up to ``spc`` sequences per column.

    Chunks are cut from the longest sequences down; with ``cap`` (rows) a chunk whose longest
    sequence has L residues takes ``max(1, min(spc, cap // (L + 1)))`` sequences per column, so
    that no block is much longer than ``max(cap, longest + 1)`` rows: a block is walked by one
    work-group row after row, and the longest block bounds the kernel time from below.
    Row r of column c lies at byte ``off + (r // rg) * C * rg + c * rg + r % rg`` of its block
    (``rg`` = template value RG; 1 is row-major); a block's bytes are padded with PAD to whole
    groups of ``rg`` rows and its offset is 16-byte aligned (vector loads)."""
    order = np.asarray(order, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    offsets = np.asarray(offsets, dtype=np.int64)
    n = order.size
    if n == 0:
        z = np.zeros(0, np.uint32)
        return Blocks(C, np.zeros(0, np.uint8), z, z, np.zeros(1, np.uint32), z, rg)
    # chunk k (k = 0: the longest sequences, launched first) holds descending positions
    # [starts[k], starts[k + 1])
    desc = lengths[order[::-1]] + 1
    starts = [0]
    while starts[-1] < n:
        q0 = starts[-1]
        k_spc = spc if cap is None else max(1, min(spc, int(cap) // int(desc[q0])))
        starts.append(min(n, q0 + C * k_spc))
    starts = np.asarray(starts, dtype=np.int64)
    nb = starts.size - 1
    pos = np.arange(n, dtype=np.int64)
    q = n - 1 - pos
    blk = np.searchsorted(starts, q, side="right") - 1
    # deal in descending length inside the chunk, snake order over the columns
    rank = q - starts[blk]
    rnd, p = rank // C, rank % C
    col = np.where(rnd % 2 == 0, p, C - 1 - p)
    seq = order
    L1 = lengths[seq] + 1
    # order sequences by (block, column, round): their slot order in ids
    key = np.lexsort((rnd, col, blk))
    seq_k, blk_k, col_k, L1_k = seq[key], blk[key], col[key], L1[key]
    gcol = blk_k * C + col_k
    counts = np.bincount(gcol, minlength=nb * C)
    col_start = np.zeros(nb * C + 1, dtype=np.int64)
    np.cumsum(counts, out=col_start[1:])
    col_len = np.bincount(gcol, weights=L1_k, minlength=nb * C).astype(np.int64)
    rows = col_len.reshape(nb, C).max(axis=1)
    sizes = -(-rows // rg) * rg * C
    sizes4 = (sizes + 15) // 16 * 16
    off = np.zeros(nb, dtype=np.int64)
    np.cumsum(sizes4[:-1], out=off[1:])
    total = int(off[-1] + sizes4[-1])
    if total >= 1 << 32:
        raise ParameterError("database too large for one launch (4 GiB of blocks); split it")
    data = np.full(total, PAD, dtype=np.uint8)
    # every column's sequences, each followed by END, as one stream in slot order (block,
    # column, round): a concatenation of residue slices, one memcpy per sequence
    res = np.asarray(residues)
    end = np.full(1, END, dtype=np.uint8)
    parts = []
    for a, b in zip(offsets[seq_k].tolist(), (offsets[seq_k] + L1_k - 1).tolist()):
        parts += (res[a:b], end)
    stream = np.concatenate(parts)
    # per block: its columns padded to the block's rows, then laid out as (rows // rg, C, rg)
    col_len = col_len.reshape(nb, C)
    bstart = np.zeros(nb + 1, dtype=np.int64)
    np.cumsum(col_len.sum(axis=1), out=bstart[1:])
    rows_pad = sizes // C
    for k in range(nb):
        R = int(rows_pad[k])
        arr = np.full((C, R), PAD, dtype=np.uint8)
        arr[np.arange(R)[None, :] < col_len[k][:, None]] = stream[bstart[k]:bstart[k + 1]]
        data[off[k]:off[k] + R * C] = arr.reshape(C, R // rg, rg).transpose(1, 0, 2).ravel()
    return Blocks(C, data, off.astype(np.uint32), rows.astype(np.uint32), col_start.astype(np.uint32),
                  seq_k.astype(np.uint32), rg)


@dataclass
class Pieces:
    """Long sequences cut into overlapping pieces (SSV only; see :func:`split_long`).

    Sequence ``i`` keeps index ``i`` for its first piece; its other pieces are pseudo
    sequences ``n, n + 1, ...`` whose result belongs to ``parent[k - n]``."""

    seg: int
    overlap: int
    offsets: np.ndarray    # int64 start of every (pseudo) sequence in the residue array
    lengths: np.ndarray    # int64 length of every (pseudo) sequence
    order: np.ndarray      # int64 (pseudo) sequences by ascending length
    parent: np.ndarray     # int64 original sequence of each pseudo sequence n, n + 1, ...

    @property
    def n_ext(self) -> int:
        return int(self.lengths.size)


def split_long(offsets, lengths, seg: int, overlap: int) -> Pieces:
    """Cut every sequence longer than ``seg`` into pieces of ``seg`` residues (the last one
    shorter) that overlap by ``overlap`` residues.

    Why it is exact for SSV (not for MSV, whose J state links a whole sequence): an SSV cell
    of state k at residue i is the saturating sum along one diagonal from state 1 at residue
    i - k + 1, entered at the fixed value -128; it depends on those k <= M residues only. With
    ``overlap = M - 1`` every such window lies whole inside some piece, which computes that
    cell exactly; cells of a piece that start at its cut are entered at -128, never above the
    whole sequence's value there (the recurrence is monotone). So the max over a sequence's
    pieces is the sequence's max, overflow included (kernels/hmm_slane.mako explains why the
    first cell past the overflow line is seen by the unsigned max)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    offsets = np.asarray(offsets, dtype=np.int64)[:lengths.size]
    n = lengths.size
    stride = int(seg) - int(overlap)
    if stride < 1:
        raise ParameterError(f"split_long: pieces of {seg} residues cannot overlap by {overlap}")
    long_ = np.flatnonzero(lengths > seg)
    extra = -(-(lengths[long_] - seg) // stride)            # pieces after the first
    parent = np.repeat(long_, extra)
    j = np.arange(parent.size, dtype=np.int64) - np.repeat(np.cumsum(extra) - extra, extra) + 1
    start = j * stride
    ext_len = np.concatenate((np.minimum(lengths, seg), np.minimum(lengths[parent] - start, seg)))
    ext_off = np.concatenate((offsets, offsets[parent] + start))
    order = np.argsort(ext_len, kind="stable").astype(np.int64)
    return Pieces(int(seg), int(overlap), ext_off, ext_len, order, parent)


def default_spc(n: int, C: int, caps) -> int:
    """Sequences per column: enough work-groups to fill the device several times over."""
    target = max(1, 8 * caps.compute_units)
    return int(min(64, max(1, n // max(1, C * target))))


def typical_rows(lengths, spc: int) -> int:
    """Rows of a typical block: ``spc`` sequences of mean length, each with its END row."""
    lengths = np.asarray(lengths, dtype=np.int64)
    return int(math.ceil(spc * (float(lengths.mean()) + 1.0))) if lengths.size else 0


def default_cap(lengths, spc: int) -> int:
    """Rows a block may have (:func:`build_blocks`): the longest sequence, or ``spc`` average
    ones where that is more. Without it the ``spc`` longest sequences share a column and that
    block alone set the kernel time (H100, docs/perf/hmm.md run 5)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    if lengths.size == 0:
        return 1
    return max(int(lengths.max()) + 1, typical_rows(lengths, spc))


# ---------------------------------------------------------------------------------------
# device table and launch
# ---------------------------------------------------------------------------------------
def striped_table(profile, algo: str, S: int, H: int, wave: int = 32, lane: int = 8) -> np.ndarray:
    """Profile entries [32][H][P] in the kernel's striping (state k = p*H + h), as bytes.

    LANE 8: HMMER's bytes (MSV costs ``rbv``, pad 255; SSV signed ``sbv``, pad 127).
    LANE 16: int16 ``bias - rbv`` (MSV, pad ``bias - 255``) or ``-sbv`` (SSV, pad -127), the
    exact 16-bit forms of ``kernels/hmm_slane.mako``.
    """
    P = geometry(S, wave, lane)["P"]
    M = profile.M
    if lane == 8:
        if algo == "msv":
            vals, pad, dt = np.asarray(profile.rbv, dtype=np.uint8), 255, np.uint8
        else:
            vals, pad, dt = np.asarray(profile.sbv).view(np.uint8), 127, np.uint8
    else:
        bias = int(profile.bias_b)
        if algo == "msv":
            vals, pad = bias - np.asarray(profile.rbv, dtype=np.int16), bias - 255
        else:
            vals, pad = -np.asarray(profile.sbv).view(np.int8).astype(np.int16), -127
        dt = np.int16
    full = np.full((XROWS, P * H), pad, dtype=dt)
    full[:vals.shape[0], :M] = vals
    return np.ascontiguousarray(full.reshape(XROWS, P, H).transpose(0, 2, 1)).view(np.uint8)


def check_profile(profile) -> None:
    """The byte-range facts the kernels' exactness proofs use (true for every HMMER protein
    profile: base_b = 190, bias_b <= 3 * log2(1/min background) < 20, sbv = clip(rbv - bias))."""
    base, bias = int(profile.base_b), int(profile.bias_b)
    if base + bias > 254:
        raise ParameterError(f"MSV profile with base_b + bias_b = {base + bias} > 254 is not supported")
    sbv = np.asarray(profile.sbv).view(np.int8)
    if sbv.size and int(sbv.min()) < -bias:
        raise ParameterError(f"SSV profile has a score above bias_b ({-int(sbv.min())} > {bias})")


def tjbm_per_sequence(profile, lengths) -> np.ndarray:
    lengths = np.asarray(lengths, dtype=np.int64)
    uniq, inv = np.unique(lengths, return_inverse=True)
    tj = ((reference.tjb_table(profile, uniq) + int(profile.tbm_b)) & 0xFF).astype(np.uint8)
    return tj[inv] if lengths.size else np.zeros(0, np.uint8)


class _Run:
    """Raw device results of one filter over one database (bytes per sequence + timing)."""

    def __init__(self, raw, seconds, values, blocks):
        self.raw, self.seconds, self.values, self.blocks = raw, seconds, values, blocks


def ssv_seg(lengths, spc: int, M: int) -> int:
    """Piece length for :func:`split_long` (SSV): the rows of a typical block less its END row,
    at least 4 model lengths so that the overlap stays a small share."""
    return int(max(typical_rows(lengths, spc) - 1, 4 * int(M), 256))


def run_raw(profile, residues, offsets, lengths, order, algo: str, device=None, repeat: int = 1,
            blocks: Blocks | None = None, spc: int | None = None, balance: bool = True,
            cache: dict | None = None, split: bool | int | None = None, **overrides) -> _Run:
    """Run one S-lane kernel; return raw per-sequence bytes, kernel seconds (median of
    ``repeat`` launches, OpenCL profiling events) and the template values used. ``balance``
    caps the rows of a block (:func:`default_cap`); False keeps ``spc`` for every chunk.
    ``split`` (default: SSV with ``balance``) cuts sequences longer than a typical block into
    overlapping pieces (:func:`split_long`, piece length :func:`ssv_seg`, or ``split`` itself
    when it is an int), so that no work-group walks a long sequence alone at the end of the
    launch; the result per sequence is the max over its pieces.
    ``cache`` (a dict kept with the database) keeps blocks and their device copies for the
    next model of the same geometry: many models of one search share a few (C, RG) layouts."""
    rt = Runtime.get(device)
    simd = overrides.pop("simd", None)
    values = choose_kernel(profile.M, algo, rt.caps, overrides, simd=simd)
    check_profile(profile)
    S, H, wave, wgw = values["S"], values["H"], values["WAVE"], values["WG_WAVES"]
    C = S * wgw
    n = int(np.asarray(lengths).size)
    if split is None:
        split = algo == "ssv" and balance
    if split and algo != "ssv":
        raise ParameterError("split: only the SSV filter may cut sequences into pieces (MSV's J state links them)")
    spc = spc if spc is not None else default_spc(n, C, rt.caps)
    seg = int(split) if (split is not True and split) else ssv_seg(lengths, spc, profile.M)
    want = (seg, profile.M - 1) if (split and n) else None
    dev_bufs = None
    have = (blocks.pieces.seg, blocks.pieces.overlap) if (blocks is not None and blocks.pieces) else None
    if blocks is None or blocks.C != C or blocks.rg != values["RG"] or have != want:
        pieces = split_long(offsets, lengths, *want) if want else None
        e_off, e_len, e_order = ((pieces.offsets, pieces.lengths, pieces.order) if pieces is not None
                                 else (offsets, lengths, order))
        cap = default_cap(e_len, spc) if balance else None
        key = (rt.device.int_ptr, C, spc, values["RG"], cap, want)
        hit = cache.get(key) if cache is not None else None
        if hit is None:
            blocks = build_blocks(residues, e_off, e_len, e_order, C, spc, values["RG"], cap)
            blocks.pieces = pieces
            if cache is not None:
                cache[key] = hit = [blocks, None]
        else:
            blocks, dev_bufs = hit
    n_ext = blocks.pieces.n_ext if blocks.pieces is not None else n
    out = np.zeros(n_ext, dtype=np.uint32)
    if n == 0:
        return _Run(out, 0.0, values, blocks)
    prg = rt.program("hmm_slane.mako", HMM_SLANE, values)
    knl = cl.Kernel(prg, "hmm_slane")
    mf = cl.mem_flags
    ctx, q = rt.ctx, rt.queue

    def buf(a):
        a = np.ascontiguousarray(a)
        if a.nbytes == 0:
            a = np.zeros(4, dtype=np.uint8)
        return cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)

    tjbm = tjbm_per_sequence(profile, lengths) if algo == "msv" else np.zeros(n_ext, np.uint8)
    if dev_bufs is None:
        dev_bufs = [buf(blocks.data), buf(blocks.off), buf(blocks.rows), buf(blocks.col_start), buf(blocks.ids)]
        if cache is not None and blocks.C == C:
            for entry in cache.values():
                if entry[0] is blocks:
                    entry[1] = dev_bufs
    args = [*dev_bufs, buf(tjbm), buf(striped_table(profile, algo, S, H, wave, values["LANE"]))]
    d_out = cl.Buffer(ctx, mf.READ_WRITE, size=out.nbytes)
    knl.set_args(*args, np.uint32(profile.base_b), np.uint32(profile.bias_b), np.uint32(profile.tec_b), d_out)
    WG = wave * wgw
    times = []
    for _ in range(max(1, repeat)):
        cl.enqueue_copy(q, d_out, out)
        ev = cl.enqueue_nd_range_kernel(q, knl, (blocks.nblocks * WG,), (WG,))
        ev.wait()
        times.append((ev.profile.end - ev.profile.start) * 1e-9)
    cl.enqueue_copy(q, out, d_out)
    q.finish()
    if n_ext > n:            # SSV pieces: a sequence's result is the max over its pieces
        np.maximum.at(out, blocks.pieces.parent, out[n:])
        out = out[:n]
    return _Run(out, float(np.median(times)), values, blocks)


def shared_layout(Ms, algo: str = "msv", device=None) -> list:
    """Per model, the template overrides (``WG_WAVES``) that give models of lengths ``Ms`` one
    database layout: the same C = S * WG_WAVES columns per work-group wherever WG_WAVES may
    grow (its legal values) to reach the largest C of their tuned choices.

    Why: a layout of a large database takes seconds to build (570,000 proteins: ~1.5 s on the
    H100 host) and is kept per C; the kernels then cost milliseconds. A larger work-group
    costs some kernel speed (H100, M = 400: 5.29 -> 4.43 TCUPS with 4 waves instead of 2,
    docs/perf/hmmsearch.md), far less than a second layout for a search of a few models."""
    rt = Runtime.get(device)
    vals = [choose_kernel(int(M), algo, rt.caps) for M in Ms]
    if not vals:
        return []
    C = max(v["S"] * v["WG_WAVES"] for v in vals)
    legal = next(p.values for p in HMM_SLANE.all() if p.name == "WG_WAVES")
    out = []
    for v in vals:
        w = C // v["S"]
        fits = C % v["S"] == 0 and w in legal and w * v["WAVE"] <= rt.caps.max_work_group
        out.append({"WG_WAVES": w} if fits and w != v["WG_WAVES"] else {})
    return out


def prebuild(Ms, algo: str = "msv", device=None, threads: int = 8, overrides=None) -> list:
    """Start building the kernels for models of lengths ``Ms`` in ``threads`` background
    threads (one per distinct kernel); returns the futures. A search of many models calls
    this first: on NVIDIA one build takes about a second and the models need one per distinct
    (S, H), so building them side by side while the first model's blocks are laid out saves
    most of that time. ``overrides``: one dict per model (as for :func:`run_raw`), or None."""
    rt = Runtime.get(device)
    overrides = overrides or [{}] * len(Ms)
    items = []
    for M, ov in zip(Ms, overrides):
        ov = dict(ov)
        simd = ov.pop("simd", None)
        items.append(("hmm_slane.mako", HMM_SLANE, choose_kernel(int(M), algo, rt.caps, ov, simd=simd)))
    return rt.prebuild(items, threads)


def _db_arrays(db):
    from ..data import PROTEIN, as_database

    db = as_database(db)
    if db.alphabet is not PROTEIN and getattr(db.alphabet, "name", "") != PROTEIN.name:
        raise ParameterError(f"MSV/SSV filters need a protein database, got {db.alphabet.name}")
    return db, np.asarray(db.residues), np.asarray(db.offsets), np.asarray(db.lengths), np.asarray(db.order)


def _block_cache(db) -> dict:
    """Blocks (and device copies) of this Database, per geometry, reused by later models."""
    return db.__dict__.setdefault("_hmm_block_cache", {})


def msv_scores(hmm, db, device=None, **overrides) -> np.ndarray:
    """MSV filter scores (float32 nats, +inf on overflow) of every sequence of ``db``, in
    database order, equal to pyhmmer's ``msv_filter`` with ``om.L`` set to each length.

    ``hmm``: an MSVProfile, a clalign HMM, a pyhmmer HMM or a path to a one-model HMMER3 file;
    ``db``: a Database or a path (see :func:`clalign.data.as_database`). ``overrides`` are
    template values (S, H, WG_WAVES, WAVE, HMAX) or ``simd="swar"``.
    """
    profile = as_profile(hmm)
    db, res, offs, lens, order = _db_arrays(db)
    r = run_raw(profile, res, offs, lens, order, "msv", device, cache=_block_cache(db), **overrides)
    return reference.msv_from_bytes(profile, r.raw & 0xFF, (r.raw >> 8) & 1, lens)


def ssv_scores(hmm, db, device=None, **overrides) -> np.ndarray:
    """SSV filter scores (float32 nats) of every sequence, in database order, equal to
    pyhmmer's ``ssv_filter``: +inf on a conclusive overflow, NaN where it returns ``None``."""
    profile = as_profile(hmm)
    db, res, offs, lens, order = _db_arrays(db)
    r = run_raw(profile, res, offs, lens, order, "ssv", device, cache=_block_cache(db), **overrides)
    return reference.ssv_from_bytes(profile, r.raw, lens)
