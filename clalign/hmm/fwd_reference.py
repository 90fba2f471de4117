"""Plain reference of HMMER's Forward filter score (``p7_ForwardParser``) and its profile.

The pipeline's third filter (p7_pipeline.c): the Forward score ``fwdsc`` (nats) of the
target against the local multihit model, ``seq_score = (fwdsc - filtersc) / ln 2`` with the
bias filter's ``filtersc``, and P = ``esl_exp_surv(seq_score, tau, lambda)`` of the model's
STATS LOCAL FORWARD line; a target passes when P <= F3 (1e-5).

HMMER computes it in probability space (impl_sse/fwdback.c ``forward_engine``), every value an
odds ratio against the null model, from the profile's float32 log scores turned back into
``expf`` probabilities (``fb_conversion`` in impl_sse/p7_oprofile.c): match emissions
``expf(rsc)`` (inserts 1), transitions ``expf(tsc)`` with the local entry B->M_k, E->C and
E->J 1/2, every M_k and D_k exiting to E with probability 1, N/C/J loops L/(L+3) and moves
3/(L+3) (``p7_oprofile_ReconfigLength``). Per residue, with ' the previous row:

    M(k) = e(x, k) (xB BM(k) + M'(k-1) MM(k-1) + I'(k-1) IM(k-1) + D'(k-1) DM(k-1))
    I(k) = M'(k) MI(k) + I'(k) II(k)
    D(k) = M(k-1) MD(k-1) + D(k-1) DD(k-1)
    xE = sum_k M(k) + D(k);  xN' = xN loop;  xC' = xC loop + xE / 2;  xJ' = xJ loop + xE / 2
    xB = (xJ' + xN') move

and when xE > 1e4 the row and the specials are divided by xE and log(xE) added to the score
(HMMER's sparse rescaling); the score is that sum plus log(xC move). HMMER sums in float32 in
its striped order; this reference sums in float64 in cell order, so the two agree to rounding
(a few 1e-5 nats for ordinary targets): callers decide near a threshold with HMMER itself.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..runtime.jit import njit
from .hmmfile import HMM
from .profile import EASEL_OF_CODE, match_scores
from .vit_reference import _DD, _DM, _II, _IM, _MD, _MI, _MM, _log32, local_entry

#: rows of :attr:`ForwardProfile.t`, each indexed by state k = 0..M: the moves into M_k
#: (B, and M/I/D of node k-1), into D_k (from M_{k-1}, D_{k-1}), and I_k's own (MI, II)
F_ROWS = ("BM", "MM", "IM", "DM", "MD", "DD", "MI", "II")
#: A row whose xE exceeds this is rescaled (HMMER's threshold); the kernel takes it as an argument.
RESCALE = 1.0e4
#: E->C and E->J probabilities of the multihit model (nj = 1); the kernel takes it as an argument.
E_MOVE = 0.5


@dataclass
class ForwardProfile:
    """HMMER's Forward profile of one model in probability space, unstriped (float32).

    ``e``: (28, M + 1) match emission odds by clalign PROTEIN code (column 0 zero); ``t``:
    (8, M + 1) transitions in :data:`F_ROWS` order; ``tau``/``lam``: the Forward tail."""

    M: int
    e: np.ndarray
    t: np.ndarray
    tau: float
    lam: float


def _expf(x) -> np.ndarray:
    with np.errstate(under="ignore"):
        return np.exp(np.asarray(x, dtype=np.float32)).astype(np.float32)


def build_fwd_profile(hmm: HMM) -> ForwardProfile:
    """The Forward profile of ``hmm`` (local multihit), as HMMER's ``fb_conversion``."""
    M = hmm.M
    tsc = _log32(np.asarray(hmm.t, dtype=np.float32))            # (M+1, 7)
    t = np.zeros((8, M + 1), dtype=np.float32)
    t[0, 1:] = _expf(local_entry(hmm))
    inner = np.arange(1, M)                                       # nodes with transitions in the profile
    for row, col in ((1, _MM), (2, _IM), (3, _DM), (4, _MD), (5, _DD)):   # moves into state k from node k-1
        t[row, inner + 1] = _expf(tsc[inner, col])
    for row, col in ((6, _MI), (7, _II)):
        t[row, inner] = _expf(tsc[inner, col])
    e = _expf(match_scores(hmm))[EASEL_OF_CODE]                  # -inf (gaps, '*', node 0) -> 0
    tau, lam = hmm.forward if hmm.forward is not None else (float("nan"), float("nan"))
    return ForwardProfile(M=M, e=np.ascontiguousarray(e), t=t, tau=float(np.float32(tau)),
                          lam=float(np.float32(lam)))


def ncj_probs(L) -> tuple:
    """(loop, move) float32 of the N/C/J states for target length(s) L (nj = 1)."""
    Lf = np.asarray(L).astype(np.float32)
    move = (np.float32(3.0) / (Lf + np.float32(3.0))).astype(np.float32)
    return (np.float32(1.0) - move).astype(np.float32), move


@njit(cache=True, nogil=True)
def _forward(codes, e, t, loop, move, e_move, rescale):
    M = e.shape[1] - 1
    mp = np.zeros(M + 1)
    ip = np.zeros(M + 1)
    dp = np.zeros(M + 1)
    mc = np.zeros(M + 1)
    ic = np.zeros(M + 1)
    dc = np.zeros(M + 1)
    xN, xJ, xC = 1.0, 0.0, 0.0
    xB = move
    total = 0.0
    for i in range(codes.shape[0]):
        x = codes[i]
        xE = 0.0
        for k in range(1, M + 1):
            mc[k] = e[x, k] * (xB * t[0, k] + mp[k - 1] * t[1, k] + ip[k - 1] * t[2, k] + dp[k - 1] * t[3, k])
            ic[k] = mp[k] * t[6, k] + ip[k] * t[7, k]
            dc[k] = mc[k - 1] * t[4, k] + dc[k - 1] * t[5, k]
            xE += mc[k] + dc[k]
        xN = xN * loop
        xC = xC * loop + xE * e_move
        xJ = xJ * loop + xE * e_move
        xB = xJ * move + xN * move
        if xE > rescale:
            for k in range(M + 1):
                mc[k] /= xE
                ic[k] /= xE
                dc[k] /= xE
            xN /= xE
            xC /= xE
            xJ /= xE
            xB /= xE
            total += np.log(xE)
        mp, mc = mc, mp
        ip, ic = ic, ip
        dp, dc = dc, dp
    return total + np.log(xC * move)


def fwd_reference(prof: ForwardProfile, seqs) -> np.ndarray:
    """Forward scores (float64 nats) of sequences of clalign PROTEIN codes *as HMMER reads them*
    (trailing ``*`` included: it counts in L and cannot be matched)."""
    e = prof.e.astype(np.float64)
    t = prof.t.astype(np.float64)
    out = np.empty(len(seqs), dtype=np.float64)
    for n, s in enumerate(seqs):
        s = np.asarray(s, dtype=np.int64)
        loop, move = ncj_probs(len(s))
        out[n] = _forward(s, e, t, float(loop), float(move), E_MOVE, RESCALE) if len(s) else -np.inf
    return out


def fwd_bit_threshold(tau: float, lam: float, F3: float) -> float:
    """The bit score at which ``esl_exp_surv(s, tau, lambda)`` equals F3 (P <= F3 above it)."""
    return float(tau) - np.log(F3) / float(lam)
