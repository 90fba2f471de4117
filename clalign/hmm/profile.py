"""HMMER3's MSV/SSV byte profiles, built bit-for-bit as HMMER 3.x builds them.

Facts reproduced (HMMER ``modelconfig.c`` p7_ProfileConfig, ``impl_sse/p7_oprofile.c``
mf_conversion/sf_conversion/biased_byteify/unbiased_byteify, ``p7_oprofile_ReconfigMSVLength``,
``msvfilter.c``; easel ``esl_abc_FExpectScore``, ``hmmer.c`` p7_AminoFrequencies):

* match score sc(k, x) = (float) log((double) p_match(k, x) / f(x)) for the 20 canonical
  residues, f the float32 SwissProt 50.8 background; degenerate residues B J Z O U X get
  the background-weighted expected score (float32 sums, in residue order); gap, ``*`` and
  ``~`` are -inf;
* scale 3/ln 2 (third-bits, float32), base 190, bias = cost of the largest score (max over
  canonical match scores and the zero insert scores);
* a cost is -roundf(scale * score) (roundf: half away from zero), saturated at 255; match
  costs are biased by ``bias`` (rbv), SSV scores are rbv - bias as signed bytes (sbv, via
  HMMER's ((127 + bias) -sat rbv) ^ 127);
* tbm = cost(logf(2 / (M (M+1)))), tec = cost(logf(0.5)), tjb(L) = cost(logf(3 / (L+3)))
  for each target length L;
* the score in nats from the final xJ byte: ((xJ - tjb) - base) / scale - 3.0 (float32);
  a saturated (overflowing) filter gives +inf.

Rows of ``rbv``/``sbv`` are indexed by clalign PROTEIN codes (NCBIstdaa, 28 letters); each
letter takes the costs of the easel amino symbol it is (every clalign letter exists in easel:
``-`` gap, ``*`` nonresidue, B J Z O U X degenerate).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .hmmfile import HMM, K
from .lentable import LengthTable

#: HMMER's amino background (p7_AminoFrequencies, Swiss-Prot 50.8), in easel order ACDEFGHIKLMNPQRSTVWY.
BACKGROUND = np.array([0.0787945, 0.0151600, 0.0535222, 0.0668298, 0.0397062, 0.0695071, 0.0229198,
                       0.0590092, 0.0594422, 0.0963728, 0.0237718, 0.0414386, 0.0482904, 0.0395639,
                       0.0540978, 0.0683364, 0.0540687, 0.0673417, 0.0114135, 0.0304133], dtype=np.float32)

#: Easel's internal amino alphabet: 20 canonical, gap, degenerate B J Z O U, any X, nonresidue *, missing ~.
EASEL_AMINO = "ACDEFGHIKLMNPQRSTVWY-BJZOUX*~"
KP = len(EASEL_AMINO)
#: Easel's degeneracy sets (esl_alphabet.c create_amino): B=ND, J=IL, Z=QE, U=C, O=K, X=any.
DEGENERATE = {"B": "ND", "J": "IL", "Z": "QE", "O": "K", "U": "C", "X": "ACDEFGHIKLMNPQRSTVWY"}

#: clalign PROTEIN (NCBIstdaa) letters in code order, as in clalign.data.
NCBISTDAA = "-ABCDEFGHIKLMNPQRSTVWXYZU*OJ"
#: Easel amino code of each clalign protein code (every NCBIstdaa letter is an easel symbol).
EASEL_OF_CODE = np.array([EASEL_AMINO.index(ch) for ch in NCBISTDAA], dtype=np.uint8)

SCALE_B = np.float32(3.0 / 0.69314718055994529)   # om->scale_b = 3.0 / eslCONST_LOG2 (stored as float)
BASE_B = 190


def _roundf(x):
    """C roundf (half away from zero) of float32 values, exactly (done in float64)."""
    x = np.asarray(x, dtype=np.float32).astype(np.float64)
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _logf(x):
    """C logf of float32 values: the correctly rounded single-precision result."""
    return np.log(np.asarray(x, dtype=np.float32).astype(np.float64)).astype(np.float32)


def unbiased_byteify(sc):
    """HMMER's unbiased_byteify: cost = -roundf(scale * sc), saturated at 255 (vectorised)."""
    prod = np.asarray(sc, dtype=np.float32) * SCALE_B          # float32 product, as in C
    with np.errstate(invalid="ignore"):
        cost = -_roundf(prod)
        out = np.where(cost > 255.0, 255.0, cost)
    return out.astype(np.int64).astype(np.uint8)


def _tjb_formula(L):
    L = np.asarray(L)
    return unbiased_byteify(_logf(np.float32(3.0) / (L + 3).astype(np.float32))).astype(np.int64)


_TJB = LengthTable(_tjb_formula)     # the same for every profile (scale_b is a constant)


def biased_byteify(sc, bias):
    """HMMER's biased_byteify: -roundf(scale * sc) + bias, 255 when above 255 - bias."""
    prod = np.asarray(sc, dtype=np.float32) * SCALE_B
    with np.errstate(invalid="ignore"):
        cost = -_roundf(prod)
        sat = cost > 255 - bias
        val = np.where(sat, 0.0, cost).astype(np.int64) + bias
    return np.where(sat, 255, val & 0xFF).astype(np.uint8)


def match_scores(hmm: HMM) -> np.ndarray:
    """p7_ProfileConfig's match emission scores: float32 (Kp=29, M+1), easel symbol rows.

    Column 0 (node 0) is -inf, as in HMMER's profile.
    """
    M = hmm.M
    mat = np.asarray(hmm.mat[1:], dtype=np.float32).astype(np.float64)            # (M, 20)
    with np.errstate(divide="ignore"):
        sc = np.log(mat / BACKGROUND.astype(np.float64)).astype(np.float32)      # (float) log((double) p / f)
    out = np.full((KP, M + 1), -np.inf, dtype=np.float32)
    out[:K, 1:] = sc.T
    for sym, members in DEGENERATE.items():
        result = np.zeros(M, dtype=np.float32)
        denom = np.float32(0.0)
        idx = sorted(EASEL_AMINO.index(m) for m in members)                        # esl loops i = 0..K-1
        with np.errstate(invalid="ignore"):
            for i in idx:
                result = (result + sc[:, i] * BACKGROUND[i]).astype(np.float32)
                denom = np.float32(denom + BACKGROUND[i])
            out[EASEL_AMINO.index(sym), 1:] = (result / denom).astype(np.float32)
    return out


@dataclass
class MSVProfile:
    """HMMER's MSV/SSV byte profile of one model, unstriped.

    ``rbv``: np.uint8 (28, M), MSV match costs as HMMER's ``om->rbv`` holds them, row = clalign
    protein code, column = node k-1. ``sbv``: np.int8 (28, M), SSV match scores (rbv - bias) as
    HMMER's ``om->sbv``. ``rbv_easel``/``sbv_easel``: the same with easel's 29 symbol rows.
    ``base_b``, ``bias_b``, ``tbm_b``, ``tec_b`` (ints), ``scale_b`` (float32 as a Python float),
    ``mu``/``lam`` (STATS LOCAL MSV), ``L`` the length the profile was configured for.
    """

    M: int
    name: str
    rbv: np.ndarray
    sbv: np.ndarray
    rbv_easel: np.ndarray
    sbv_easel: np.ndarray
    base_b: int
    bias_b: int
    tbm_b: int
    tec_b: int
    scale_b: float
    mu: float
    lam: float
    L: int = 400
    acc: str | None = None
    hmm: HMM | None = None

    def tjb_b(self, L):
        """N->B / J->B / C->T cost for target length ``L`` (int, or an array of lengths)."""
        val = _TJB(L)
        return int(val) if val.ndim == 0 else val

    def msv_nats(self, xJ, L):
        """MSV score in nats from the final xJ byte, as p7_MSVFilter computes it.

        ``xJ``: int or array (use a negative value, or pass ``overflow``-marked entries as
        ``np.inf``, for a filter that saturated: it gives +inf). ``L``: target length(s).
        """
        xJ = np.asarray(xJ, dtype=np.float64)
        tjb = np.asarray(self.tjb_b(L), dtype=np.float64)
        with np.errstate(invalid="ignore"):
            sc = (np.asarray(xJ - tjb, dtype=np.float32) - np.float32(self.base_b)).astype(np.float32)
            sc = (sc / np.float32(self.scale_b)).astype(np.float32)
            sc = (sc - np.float32(3.0)).astype(np.float32)
        sc = np.where(np.isinf(xJ) | (xJ < 0), np.float32(np.inf), sc).astype(np.float32)
        return float(sc) if sc.ndim == 0 else sc

    def ssv_nats(self, xE, L):
        """SSV score in nats from the best diagonal sum ``xE`` (signed, bias-free sbv units).

        As HMMER's SSV filter: xE + base - tjb - tbm, overflowing (+inf) at 255 - bias,
        then xJ = xE - tec and the MSV conversion.
        """
        xE = np.asarray(xE, dtype=np.int64)
        tjb = np.asarray(self.tjb_b(L), dtype=np.int64)
        raw = xE + self.base_b - tjb - self.tbm_b
        over = raw >= 255 - self.bias_b
        xJ = np.where(over, -1, raw - self.tec_b)
        return self.msv_nats(xJ, L)


def build_msv_profile(hmm: HMM, L: int = 400) -> MSVProfile:
    """The MSV/SSV byte profile of ``hmm`` configured (local multihit) for target length ``L``."""
    msc = match_scores(hmm)                                   # (29, M+1) float32
    M = hmm.M
    mx = np.float32(0.0)
    canon = msc[:K, 1:]
    finite = canon[np.isfinite(canon)]
    if finite.size:
        mx = max(mx, np.float32(finite.max()))                 # insert scores are 0 (max starts at 0)
    bias = int(unbiased_byteify(-mx))
    rbv_e = biased_byteify(msc[:, 1:], bias)                  # (29, M)
    tmp = np.uint8((bias + 127) & 0xFF)
    sub = np.maximum(tmp.astype(np.int64) - rbv_e.astype(np.int64), 0)   # _mm_subs_epu8
    sbv_e = (sub.astype(np.uint8) ^ np.uint8(127)).view(np.int8)
    tbm = int(unbiased_byteify(_logf(np.float32(2.0) / (np.float32(M) * np.float32(M + 1)))))
    tec = int(unbiased_byteify(_logf(np.float32(0.5))))
    mu, lam = (hmm.msv if hmm.msv is not None else (float("nan"), float("nan")))
    return MSVProfile(M=M, name=hmm.name, acc=hmm.acc,
                      rbv=np.ascontiguousarray(rbv_e[EASEL_OF_CODE]),
                      sbv=np.ascontiguousarray(sbv_e[EASEL_OF_CODE]),
                      rbv_easel=rbv_e, sbv_easel=sbv_e,
                      base_b=BASE_B, bias_b=bias, tbm_b=tbm, tec_b=tec, scale_b=float(SCALE_B),
                      mu=float(mu), lam=float(lam), L=int(L), hmm=hmm)
