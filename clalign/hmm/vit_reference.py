"""Plain reference of HMMER's 16-bit Viterbi filter (``p7_ViterbiFilter``) and its profile.

The word profile, as ``p7_ProfileConfig`` (modelconfig.c, local multihit) and
``vf_conversion``/``p7_oprofile_ReconfigRestLength`` (impl_sse/p7_oprofile.c) build it:

* match scores: the float32 profile scores of :func:`clalign.hmm.profile.match_scores`;
  insert scores are 0 (HMMER hard-wires them), so the filter has none;
* transitions: ``(float) log((double) t)`` of the model's float32 probabilities; local entry
  B->M_k = ``log(occ[k] / Z)`` with HMMER's float occupancy recursion and
  ``Z = sum occ[k] (M-k+1)`` summed in float;
* a word is ``roundf(500/ln2 * sc)`` clamped to [-32768, 32767] (``-inf`` -> -32768); II is
  capped at -1 and the other transitions at 0; base 12000; E->C and E->J are ``-ln 2``;
  N/C/J moves ``logf(3 / (L + 3))`` per target length L; N/C/J loops 0 (HMMER's "-3 nats"
  approximation, ``ncj_roundoff`` = 0);
* the score: ``((xC + C_move) - 12000) / scale_w - 3`` (float32) nats; ``-inf`` when C was
  never reached; ``+inf`` (HMMER's eslERANGE, which the pipeline treats as a pass) as soon
  as a row's largest match cell saturates at 32767.

The recurrence here is the textbook cell order (node k = 1..M per residue) with HMMER's
saturated int16 additions. HMMER's striped code gives the same match cells: its "lazy F"
skips D->D paths only when ``ddbound_w`` proves that B->M dominates them on the next row,
and a D cell feeds nothing but the next row's match cells and the D->D chain; its padding
lanes end at -32768 in M and I and never reach a real lane. Each D->D step here is
``max(x + t, -32768)`` with ``t <= 0``, so a chain of them is the clamped sum: kernels may use
that closed form (a prefix maximum) and stay equal to this reference.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

from ..runtime.jit import njit
import numpy as np

from .hmmfile import HMM
from .lentable import LengthTable
from .profile import EASEL_OF_CODE, _logf, match_scores

LN2 = 0.69314718055994529                       # eslCONST_LOG2
SCALE_W = np.float32(500.0 / LN2)               # om->scale_w (float)
BASE_W = 12000                                  # om->base_w
NEG = -32768                                    # the filter's -infinity
#: rows of the transition table (:attr:`ViterbiProfile.tw`), all indexed by node k = 0..M:
#: BM/MM/IM/DM are the moves *into* M_k (from node k-1); MD/MI/II/DD the moves *out of* node k
T_ROWS = ("BM", "MM", "IM", "DM", "MD", "MI", "II", "DD")
_T = {n: i for i, n in enumerate(T_ROWS)}
#: columns of HMMER's transition probabilities (clalign.hmm.hmmfile.TRANSITIONS)
_MM, _MI, _MD, _IM, _II, _DM, _DD = range(7)


def wordify(sc) -> np.ndarray:
    """HMMER's wordify: roundf(scale_w * sc) (float32 product), clamped to int16."""
    prod = (np.asarray(sc, dtype=np.float32) * SCALE_W).astype(np.float32).astype(np.float64)
    with np.errstate(invalid="ignore"):
        r = np.sign(prod) * np.floor(np.abs(prod) + 0.5)        # roundf: half away from zero
    r = np.where(np.isnan(r), NEG, r)
    return np.clip(r, NEG, 32767).astype(np.int16)


def _log32(x) -> np.ndarray:
    """(float) log((double) x) of float32 values (0 -> -inf)."""
    with np.errstate(divide="ignore"):
        return np.log(np.asarray(x, dtype=np.float32).astype(np.float64)).astype(np.float32)


def local_entry(hmm: HMM) -> np.ndarray:
    """float32 local entry scores B->M_k, k = 1..M (p7_hmm_CalculateOccupancy, p7_ProfileConfig);
    compiled where numba is loaded already, else the loop (a GPU search need not load numba)."""
    if "numba" not in sys.modules:
        return local_entry_loop(hmm)
    occ, Z = _occupancy(np.ascontiguousarray(hmm.t, dtype=np.float32), int(hmm.M))
    return _log32((occ[1:] / Z).astype(np.float32))


@njit(cache=True, nogil=True)
def _occupancy(t, M):
    """HMMER's float occupancy recursion and its normaliser Z, in the C's precisions (float32
    sums and products; the D->M term in double); compiled: a Python loop of numpy scalars cost
    ~1-6 ms per model (no fast-math, so no fused multiply-add: tested equal to that loop)."""
    occ = np.zeros(M + 1, dtype=np.float32)
    occ[1] = np.float32(t[0, 1] + t[0, 0])                                  # MI + MM
    for k in range(2, M + 1):
        a = np.float32(occ[k - 1] * np.float32(t[k - 1, 0] + t[k - 1, 1]))
        b = (1.0 - np.float64(occ[k - 1])) * np.float64(t[k - 1, 5])      # DM
        occ[k] = np.float32(np.float64(a) + b)
    Z = np.float32(0.0)
    for k in range(1, M + 1):
        Z = np.float32(Z + np.float32(occ[k] * np.float32(M - k + 1)))
    return occ, Z


def local_entry_loop(hmm: HMM) -> np.ndarray:
    """:func:`local_entry` as a plain Python loop of numpy float32 scalars (the test's reference)."""
    t = np.asarray(hmm.t, dtype=np.float32)
    M = hmm.M
    occ = np.zeros(M + 1, dtype=np.float32)
    occ[1] = np.float32(t[0, _MI] + t[0, _MM])
    for k in range(2, M + 1):
        a = np.float32(occ[k - 1] * np.float32(t[k - 1, _MM] + t[k - 1, _MI]))
        b = (1.0 - float(occ[k - 1])) * float(t[k - 1, _DM])
        occ[k] = np.float32(float(a) + b)
    Z = np.float32(0.0)
    for k in range(1, M + 1):
        Z = np.float32(Z + np.float32(occ[k] * np.float32(M - k + 1)))
    return _log32((occ[1:] / Z).astype(np.float32))


@dataclass
class ViterbiProfile:
    """HMMER's Viterbi filter profile of one model, unstriped.

    ``rw``: int16 (28, M + 1), match words by clalign PROTEIN code (column 0 = node 0, -32768);
    ``rw_easel``: the same with easel's 29 symbol rows; ``tw``: int16 (8, M + 1) transition
    words in :data:`T_ROWS` order by node; ``e_loop``/``e_move``: E->J / E->C words;
    ``ddbound``: HMMER's lazy-F bound (``om->ddbound_w``, for checks); ``mu``/``lam``: the
    model's STATS LOCAL VITERBI Gumbel; ``compo``: its COMPO composition (bias filter)."""

    M: int
    name: str
    rw: np.ndarray
    rw_easel: np.ndarray
    tw: np.ndarray
    e_loop: int
    e_move: int
    ddbound: int
    mu: float
    lam: float
    compo: np.ndarray | None = None

    @staticmethod
    def move_w(L):
        """N/C/J move word(s) for target length(s) L: wordify(logf(3 / (L + 3))) (nj = 1);
        from a per-process table (:mod:`clalign.hmm.lentable`)."""
        w = _MOVE_W(L)
        return int(w) if w.ndim == 0 else w


def _move_w_formula(L):
    Lf = np.asarray(L).astype(np.float32)
    pmove = (np.float32(3.0) / ((Lf + np.float32(2.0)) + np.float32(1.0))).astype(np.float32)
    return wordify(_logf(pmove)).astype(np.int64)


_MOVE_W = LengthTable(_move_w_formula)


def build_vit_profile(hmm: HMM) -> ViterbiProfile:
    """The Viterbi filter word profile of ``hmm`` (local multihit)."""
    M = hmm.M
    t = np.asarray(hmm.t, dtype=np.float32)
    tsc = _log32(t)                                           # (M+1, 7); node 0 and M handled below
    rw_e = wordify(match_scores(hmm))                         # (29, M+1), column 0 = -inf
    tw = np.full((8, M + 1), NEG, dtype=np.int16)
    tw[_T["BM"], 1:] = wordify(local_entry(hmm))
    inner = np.arange(1, M)                                   # nodes with transitions in the profile
    for row, col in (("MM", _MM), ("IM", _IM), ("DM", _DM)):  # into M_k from node k-1 (k-1 >= 1)
        tw[_T[row], inner + 1] = np.minimum(wordify(tsc[inner, col]), 0)
    for row, col, cap in (("MD", _MD, 0), ("MI", _MI, 0), ("II", _II, -1), ("DD", _DD, 0)):
        tw[_T[row], inner] = np.minimum(wordify(tsc[inner, col]), cap)
    e = int(wordify(np.float32(-LN2)))
    dd = NEG
    if M > 3:       # ddbound_w: max over k = 2..M-2 of DD(k) + DM(k+1) - BM(k+2)
        k = np.arange(2, M - 1)
        dd = int(max(NEG, (wordify(tsc[k, _DD]).astype(np.int64) + wordify(tsc[k + 1, _DM])
                           - tw[_T["BM"], k + 2]).max()))
    mu, lam = hmm.viterbi if hmm.viterbi is not None else (float("nan"), float("nan"))
    return ViterbiProfile(M=M, name=hmm.name, rw=np.ascontiguousarray(rw_e[EASEL_OF_CODE]), rw_easel=rw_e,
                          tw=tw, e_loop=e, e_move=e, ddbound=dd, mu=float(np.float32(mu)),
                          lam=float(np.float32(lam)),
                          compo=None if hmm.compo is None else np.asarray(hmm.compo, dtype=np.float32))


@njit(cache=True, nogil=True)
def _sat(x):
    return max(-32768, min(32767, x))


@njit(cache=True, nogil=True)
def _wrap16(x):
    return ((x + 32768) & 0xFFFF) - 32768


@njit(cache=True, nogil=True)
def _vit_xc(codes, rw, tw, e_loop, e_move, move):
    """Final xC word of one sequence (codes: row indices of ``rw``), or 32767 on overflow."""
    M = rw.shape[1] - 1
    mp = np.full(M + 1, -32768, dtype=np.int64)
    ip = np.full(M + 1, -32768, dtype=np.int64)
    dp = np.full(M + 1, -32768, dtype=np.int64)
    mc = np.full(M + 1, -32768, dtype=np.int64)
    ic = np.full(M + 1, -32768, dtype=np.int64)
    dc = np.full(M + 1, -32768, dtype=np.int64)
    xN = 12000
    xB = _wrap16(xN + move)
    xJ = -32768
    xC = -32768
    for i in range(codes.shape[0]):
        x = codes[i]
        xE = -32768
        for k in range(1, M + 1):
            sv = _sat(xB + tw[0, k])
            sv = max(sv, _sat(mp[k - 1] + tw[1, k]))
            sv = max(sv, _sat(ip[k - 1] + tw[2, k]))
            sv = max(sv, _sat(dp[k - 1] + tw[3, k]))
            sv = _sat(sv + rw[x, k])
            mc[k] = sv
            xE = max(xE, sv)
            ic[k] = max(_sat(mp[k] + tw[5, k]), _sat(ip[k] + tw[6, k]))
            dc[k] = max(_sat(mc[k - 1] + tw[4, k - 1]), _sat(dc[k - 1] + tw[7, k - 1]))
        if xE >= 32767:
            return 32767
        xC = _wrap16(max(xC, xE + e_move))
        xJ = _wrap16(max(xJ, xE + e_loop))
        xB = _wrap16(max(xJ + move, xN + move))
        mp, mc = mc, mp
        ip, ic = ic, ip
        dp, dc = dc, dp
    return xC


def vit_words(prof: ViterbiProfile, seqs, easel: bool = False) -> np.ndarray:
    """Final xC word (int64) of each sequence; 32767 marks an overflow (score +inf).

    ``seqs``: sequences as arrays of clalign PROTEIN codes (or easel codes with ``easel``),
    *as HMMER reads them* (trailing ``*`` included: it counts in L and scores -inf)."""
    rw = (prof.rw_easel if easel else prof.rw).astype(np.int64)
    tw = prof.tw.astype(np.int64)
    out = np.empty(len(seqs), dtype=np.int64)
    for n, s in enumerate(seqs):
        s = np.asarray(s, dtype=np.int64)
        out[n] = _vit_xc(s, rw, tw, prof.e_loop, prof.e_move, ViterbiProfile.move_w(len(s)))
    return out


def vit_nats(xc, L) -> np.ndarray:
    """p7_ViterbiFilter's score (float32 nats) from final xC word(s) and target length(s)."""
    xc = np.asarray(xc, dtype=np.int64)
    move = np.asarray(ViterbiProfile.move_w(np.asarray(L)), dtype=np.int64)
    sc = ((xc + move).astype(np.float32) - np.float32(BASE_W)).astype(np.float32)
    sc = (sc / SCALE_W).astype(np.float32)
    sc = (sc - np.float32(3.0)).astype(np.float32)
    sc = np.where(xc <= NEG, np.float32(-np.inf), sc)
    return np.where(xc >= 32767, np.float32(np.inf), sc).astype(np.float32)


def vit_reference(prof: ViterbiProfile, seqs, easel: bool = False) -> np.ndarray:
    """p7_ViterbiFilter scores (float32 nats) of sequences (see :func:`vit_words`)."""
    return vit_nats(vit_words(prof, seqs, easel), np.array([len(s) for s in seqs], dtype=np.int64))
