"""Karlin-Altschul and Gumbel parameters as BLAST+ 2.12 obtains them.

Gapped protein parameters come from BLAST+'s tables (:mod:`.tables`); ungapped ones are
computed from a score matrix and two residue distributions exactly as ``blast_stat.c`` does
(``BlastScoreFreqCalc``, ``Blast_KarlinLambdaNR``, ``BlastKarlinLtoH``, ``BlastKarlinLHtoK``):
BLASTP needs the per-query ungapped lambda for its X-drop thresholds.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..errors import ParameterError
from .tables import PROTEIN_MATRIX_ORDER, PROTEIN_TABLES

# Robinson & Robinson (PNAS 88:5933, 1991) amino-acid background frequencies (per 1000), BLAST's
# STD_AMINO_ACID_FREQS; normalised to sum 1 when used.
ROBINSON = {"A": 78.05, "C": 19.25, "D": 53.64, "E": 62.95, "F": 38.56, "G": 73.77, "H": 21.99,
            "I": 51.42, "K": 57.44, "L": 90.19, "M": 22.43, "N": 44.87, "P": 52.03, "Q": 42.64,
            "R": 51.29, "S": 71.20, "T": 58.41, "V": 64.41, "W": 13.30, "Y": 32.16}

LAMBDA_TOLERANCE = 1.0e-5   # BLAST_KARLIN_LAMBDA_ACCURACY_DEFAULT
LAMBDA_START = 0.5          # BLAST_KARLIN_LAMBDA0_DEFAULT
K_SUMLIMIT = 1.0e-4         # BLAST_KARLIN_K_SUMLIMIT_DEFAULT
K_ITER_MAX = 100            # BLAST_KARLIN_K_ITER_MAX


@dataclass(frozen=True)
class KarlinParams:
    """Karlin-Altschul parameters of one scoring system (``Blast_KarlinBlk``)."""

    lam: float
    K: float
    H: float

    @property
    def logK(self) -> float:
        return math.log(self.K)


@dataclass(frozen=True)
class GumbelParams:
    """Spouge's finite-size-correction parameters (``Blast_GumbelBlk``, filled from the tables)."""

    lam: float
    C: float
    G: int          # gap_open + gap_extend
    a: float
    alpha: float
    sigma: float
    a_un: float
    alpha_un: float

    @property
    def b(self) -> float:
        return 2.0 * self.G * (self.a_un - self.a)

    @property
    def beta(self) -> float:
        return 2.0 * self.G * (self.alpha_un - self.alpha)

    @property
    def tau(self) -> float:
        return 2.0 * self.G * (self.alpha_un - self.sigma)


@dataclass(frozen=True)
class GappedParams:
    """One row of BLAST's table: Karlin block, length-adjustment alpha/beta, Gumbel block."""

    matrix: str
    gap_open: int
    gap_extend: int
    karlin: KarlinParams
    alpha: float
    beta: float
    gumbel: GumbelParams


def supported_gap_costs(matrix: str):
    """[(gap_open, gap_extend)] BLAST+ has gapped statistics for (table order)."""
    rows = PROTEIN_TABLES.get(str(matrix).upper())
    if rows is None:
        raise ParameterError(f"{matrix} is not a supported matrix; supported matrices: "
                             f"{', '.join(PROTEIN_MATRIX_ORDER)}")
    return [(r[0], r[1]) for r in rows[1:]]


def gapped_params(matrix: str, gap_open: int, gap_extend: int) -> GappedParams:
    """BLAST+'s gapped parameters for a protein matrix and gap costs (a gap of k costs
    ``gap_open + k * gap_extend``). Unsupported pairs raise :class:`ParameterError` naming the
    supported ones, as blastp refuses them."""
    name = str(matrix).upper()
    pairs = supported_gap_costs(name)
    rows = PROTEIN_TABLES[name]
    for r in rows[1:]:
        if r[0] == int(gap_open) and r[1] == int(gap_extend):
            go, ge, lam, K, H, alpha, beta, C, alpha_v, sigma = r
            un = rows[0]
            gum = GumbelParams(lam=lam, C=C, G=go + ge, a=alpha, alpha=alpha_v, sigma=sigma,
                               a_un=un[5], alpha_un=un[8])
            return GappedParams(name, go, ge, KarlinParams(lam, K, H), alpha, beta, gum)
    listed = ", ".join(f"{o}/{e}" for o, e in pairs)
    raise ParameterError(f"gap existence and extension values of {int(gap_open)} and {int(gap_extend)} "
                         f"are not supported for {name}; supported (open/extend): {listed}")


def ungapped_table_params(matrix: str):
    """(KarlinParams, alpha, beta) of the table's ungapped row (BLAST's ungapped alpha/beta)."""
    name = str(matrix).upper()
    supported_gap_costs(name)
    r = PROTEIN_TABLES[name][0]
    return KarlinParams(r[2], r[3], r[4]), r[5], r[6]


# ---------------------------------------------------------------------------------------------
# Ungapped parameters from a matrix (Blast_KarlinBlkUngappedCalc)
def robinson_frequencies(letters) -> np.ndarray:
    """BLAST's standard background distribution over an alphabet's codes (``letters[i]`` is the
    letter of code i; letters outside the 20 standard ones get 0), summing to 1."""
    p = np.array([ROBINSON.get(ch, 0.0) for ch in letters], dtype=np.float64)
    return p / p.sum()


def composition(codes, ncodes: int, ambiguous=()) -> np.ndarray:
    """Residue frequencies of a sequence (``Blast_ResFreqString``): ambiguous codes not counted."""
    c = np.bincount(np.asarray(codes, dtype=np.intp), minlength=ncodes).astype(np.float64)[:ncodes]
    for a in ambiguous:
        c[a] = 0.0
    s = c.sum()
    return c / s if s > 0 else c


def score_frequencies(scores, p1, p2):
    """(low, probs) with ``probs[s - low]`` the probability of score s (``BlastScoreFreqCalc``):
    trimmed to the observed range and normalised."""
    S = np.asarray(scores, dtype=np.int64)
    n1, n2 = len(p1), len(p2)
    S = S[:n1, :n2]
    lo, hi = int(S.min()), int(S.max())
    probs = np.zeros(hi - lo + 1)
    np.add.at(probs, (S - lo).ravel(), np.outer(p1, p2).ravel())
    nz = np.flatnonzero(probs > 0)
    if nz.size == 0:
        return 0, np.zeros(1)
    probs = probs[nz[0]:nz[-1] + 1]
    low = lo + int(nz[0])
    total = probs.sum()
    if abs(total) > 1e-4:
        probs = probs / total
    return low, probs


def _score_gcd(low, probs) -> int:
    d = -low
    for i in range(1, len(probs)):
        if d <= 1:
            break
        if probs[i] != 0.0:
            d = math.gcd(d, i)
    return d


def _lambda_nr(low, probs, d, lam0=LAMBDA_START, tol=LAMBDA_TOLERANCE, itmax=20, max_newton=37) -> float:
    """Safeguarded Newton iteration in x = exp(-lambda) for sum_i p_i exp(i lambda) = 1."""
    high = low + len(probs) - 1
    p = lambda s: probs[s - low]   # noqa: E731
    x0 = math.exp(-lam0)
    x = x0 if 0 < x0 < 1 else 0.5
    a, b = 0.0, 1.0
    f = 4.0
    newton = False
    for k in range(itmax):
        fold, was_newton, newton = f, newton, False
        g = 0.0
        f = p(low)
        for i in range(low + d, 0, d):
            g = x * g + f
            f = f * x + p(i)
        g = x * g + f
        f = f * x + p(0) - 1
        for i in range(d, high + 1, d):
            g = x * g + f
            f = f * x + p(i)
        if f > 0:
            a = x
        elif f < 0:
            b = x
        else:
            break
        if b - a < 2 * a * (1 - b) * tol:
            x = (a + b) / 2
            break
        if k >= max_newton or (was_newton and abs(f) > 0.9 * abs(fold)) or g >= 0:
            x = (a + b) / 2
        else:
            step = -f / g
            y = x + step
            if y <= a or y >= b:
                x = (a + b) / 2
            else:
                newton = True
                x = y
                if abs(step) < tol * x * (1 - x):
                    break
    return -math.log(x) / d


def _entropy(low, probs, lam) -> float:
    high = low + len(probs) - 1
    et = math.exp(-lam)
    s = low * probs[0]
    for score in range(low + 1, high + 1):
        s = score * probs[score - low] + et * s
    scale = et ** high
    if scale > 0.0:
        return lam * s / scale
    return lam * math.exp(lam * high + math.log(s))


def _k_from(low, probs, lam, H, avg) -> float:
    """K by BLAST's closed forms or its dynamic-programming series (``BlastKarlinLHtoK``)."""
    high = low + len(probs) - 1
    d = _score_gcd(low, probs)
    hi, lo, lam = high // d, low // d, lam * d
    first = H / lam
    eml = math.exp(-lam)
    if lo == -1 and hi == 1:
        pl, ph = probs[0], probs[-1]
        return (pl - ph) * (pl - ph) / pl
    if lo == -1 or hi == 1:
        if hi != 1:
            av = avg / d
            first = av * av / first
        return first * (1.0 - eml)
    rng = hi - lo
    # One column's score distribution, indexed as BLAST indexes it: from the lowest score, one
    # entry per unit of the *unscaled* scores (identical to the scaled lattice when d == 1, the
    # case of every standard matrix).
    p = np.zeros(rng + 1)
    m = min(rng + 1, len(probs))
    p[:m] = probs[:m]
    P = np.ones(1)               # distribution of the total score of i columns, offset i*lo
    outer = 0.0
    inner = 1.0
    it = 0
    while it < K_ITER_MAX and inner > K_SUMLIMIT:
        P = np.convolve(P, p)
        it += 1
        low_i = it * lo
        # sum_{s<0} P(s) exp(s lam) + sum_{s>=0} P(s), Horner from the lowest score
        neg = -low_i                  # entries with s < 0 are P[0:neg]
        acc = P[0]
        for s_idx in range(1, neg):
            acc = P[s_idx] + acc * eml
        acc *= eml
        inner = acc + float(P[neg:].sum()) if neg < len(P) else acc
        inner /= it
        outer += inner
    return -math.exp(-2.0 * outer) / (first * math.expm1(-lam))


def ungapped_params(scores, p_query, p_subject) -> Optional[KarlinParams]:
    """Ungapped lambda, K, H (``Blast_KarlinBlkUngappedCalc``) for score matrix ``scores``
    (codes x codes) and residue distributions of the two sequences; None where BLAST+ fails
    (non-negative expected score or no positive score)."""
    low, probs = score_frequencies(scores, p_query, p_subject)
    high = low + len(probs) - 1
    avg = float(np.dot(np.arange(low, high + 1), probs))
    if avg >= 0.0 or low >= 0 or high <= 0:
        return None
    d = _score_gcd(low, probs)
    lam = _lambda_nr(low, probs, d)
    if lam < 0:
        return None
    H = _entropy(low, probs, lam)
    if H <= 0:
        return None
    K = _k_from(low, probs, lam, H, avg)
    if K <= 0:
        return None
    return KarlinParams(float(lam), float(K), float(H))
