"""The Viterbi filter kernel (``kernels/hmm_viterbi.mako``): host tables, choice and launch.

A search runs it on the targets that passed the MSV and bias filters (about 2 % of a
database at F1 = 0.02), one work-group per target; the scores equal
:func:`clalign.hmm.vit_reference.vit_reference` word for word.
"""
from __future__ import annotations

import numpy as np

from ..errors import ParameterError
from .params import HMM_VITERBI, VIT_P_MAX, VIT_WG_VALUES
from .vit_reference import BASE_W, NEG, ViterbiProfile, _T, vit_nats

TEMPLATE = "hmm_viterbi.mako"
#: clalign PROTEIN code of '*' (appended for the trailing stops HMMER counts in L)
STAR_CODE = 25
#: residue codes (rows of the match table): clalign PROTEIN
NROWS = 28


def choose_viterbi(M: int, overrides: dict | None = None, max_work_group: int = 256) -> dict:
    """Template values for a model of M states: the smallest work-group whose work-items keep
    at most 8 states each (fewer registers, more work-groups in flight), else the largest
    allowed; ``overrides`` (WG and/or P) win. Not tuned on a GPU yet."""
    ov = dict(overrides or {})
    wg = ov.get("WG")
    if wg is None:
        legal = [w for w in VIT_WG_VALUES if w <= max_work_group]
        wg = next((w for w in legal if -(-M // w) <= 8), legal[-1])
    P = ov.get("P") or max(1, -(-M // wg))
    if wg * P < M or P > VIT_P_MAX:
        raise ParameterError(f"hmm_viterbi: WG={wg} x P={P} cannot hold a model of {M} states "
                             f"(at most {VIT_P_MAX} states per work-item)")
    return HMM_VITERBI.validate({"WG": wg, "P": P, "MP": wg * P + 1, "NROWS": NROWS, "BASE_W": BASE_W})


def vit_tables(prof: ViterbiProfile, MP: int) -> tuple:
    """(rw [NROWS][MP] int16, tw [8][MP] int16, G [MP] int32) of the kernel for ``prof``."""
    M = prof.M
    rw = np.full((NROWS, MP), NEG, dtype=np.int16)
    rw[:, :M + 1] = prof.rw[:NROWS]
    tw = np.full((8, MP), NEG, dtype=np.int16)
    tw[:, :M + 1] = prof.tw
    dd = tw[_T["DD"]].astype(np.int64)
    G = np.zeros(MP, dtype=np.int64)
    G[2:] = np.cumsum(dd[1:MP - 1])            # G(k) = DD(1) + ... + DD(k-1)
    return np.ascontiguousarray(rw), np.ascontiguousarray(tw), G.astype(np.int32)


def pack_targets(residues, offsets, indices, stops=None) -> tuple:
    """(codes, starts, lengths) of the targets ``indices`` of a database (clalign codes),
    each followed by its trailing stops as '*' (HMMER's view of the sequence)."""
    idx = np.asarray(indices, dtype=np.int64)
    off = np.asarray(offsets, dtype=np.int64)
    res = np.asarray(residues, dtype=np.uint8)
    k = np.zeros(idx.size, dtype=np.int64) if stops is None else np.asarray(stops, dtype=np.int64)[idx]
    n = off[idx + 1] - off[idx]
    lens = n + k
    starts = np.zeros(idx.size, dtype=np.int64)
    if idx.size:
        starts[1:] = np.cumsum(lens)[:-1]
    codes = np.full(int(lens.sum()), STAR_CODE, dtype=np.uint8)
    for s, a, b in zip(starts.tolist(), off[idx].tolist(), off[idx + 1].tolist()):
        codes[s:s + b - a] = res[a:b]
    return codes, starts, lens


def vit_words_device(prof: ViterbiProfile, codes, starts, lens, device=None, overrides=None,
                     repeat: int = 1) -> tuple:
    """Final xC words (int64; 32767 = overflow) of the packed targets on the device, and the
    kernel seconds (median of ``repeat`` launches, profiling events)."""
    import pyopencl as cl

    from ..runtime import Runtime

    rt = Runtime.get(device)
    n = int(np.asarray(lens).size)
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0.0
    values = choose_viterbi(prof.M, overrides, int(rt.caps.max_work_group))
    rw, tw, G = vit_tables(prof, values["MP"])
    moves = np.asarray(ViterbiProfile.move_w(np.asarray(lens)), dtype=np.int16).reshape(-1)
    mf = cl.mem_flags

    def buf(a):
        a = np.ascontiguousarray(a)
        return cl.Buffer(rt.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a if a.nbytes else np.zeros(4, np.uint8))

    prg = rt.program(TEMPLATE, HMM_VITERBI, values)
    knl = cl.Kernel(prg, "hmm_viterbi")
    out = np.zeros(n, dtype=np.int32)
    d_out = cl.Buffer(rt.ctx, mf.WRITE_ONLY, size=out.nbytes)
    keep = [buf(codes), buf(np.asarray(starts, dtype=np.uint64)), buf(np.asarray(lens, dtype=np.uint32)),
            buf(moves), buf(rw), buf(tw), buf(G)]           # referenced until the launches finish
    knl.set_args(*keep, np.int32(prof.e_loop), np.int32(prof.e_move), d_out)
    wg = values["WG"]
    times = []
    for _ in range(max(1, repeat)):
        ev = cl.enqueue_nd_range_kernel(rt.queue, knl, (n * wg,), (wg,))
        ev.wait()
        times.append((ev.profile.end - ev.profile.start) * 1e-9)
    cl.enqueue_copy(rt.queue, out, d_out)
    rt.queue.finish()
    return out.astype(np.int64), float(np.median(times))


def vit_scores_device(prof: ViterbiProfile, residues, offsets, indices, stops=None, device=None,
                      overrides=None) -> np.ndarray:
    """p7_ViterbiFilter scores (float32 nats) of database targets ``indices`` on the device."""
    codes, starts, lens = pack_targets(residues, offsets, indices, stops)
    words, _ = vit_words_device(prof, codes, starts, lens, device, overrides)
    return vit_nats(words, lens)
