"""Karlin-Altschul parameters and Spouge E-values exactly as BLAST+ 2.12 (``blast_stat.c``).

- ``ungapped_kbp``: lambda, H, K of a query against the Robinson & Robinson background
  (``Blast_ScoreBlkKbpUngappedCalc``): score distribution from the query's residue counts (X not
  counted) times the background over all 28 codes, lambda by BLAST's safeguarded Newton
  iteration on x = exp(-lambda) (tolerance 1e-5, so lambda is only that accurate, and the
  integer X-drop/trigger derived from it depend on following the same steps), H, then K by
  BLAST's series (at most 100 terms, stop below 1e-4).
- ``gapped_params``: the tabulated gapped row for matrix and gap costs plus the Gumbel block
  derived from it (``Blast_GumbelBlkLoadFromTables``).
- ``spouge_evalue``/``spouge_cutoff``: ``BLAST_SpougeStoE``/``BLAST_SpougeEtoS`` (finite-size
  corrected E-value of a score for lengths m, n, scaled to the database length).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from importlib import resources

import numpy as np

from ..data.alphabet import PROTEIN
from ..errors import InputError

SCORE_MIN = -32768
LN2 = math.log(2.0)
# Robinson & Robinson (1991) background used for the subject side, per mille
ROBINSON = dict(A=78.05, C=19.25, D=53.64, E=62.95, F=38.56, G=73.77, H=21.99, I=51.42, K=57.44,
                L=90.19, M=22.43, N=44.87, P=52.03, Q=42.64, R=51.29, S=71.20, T=58.41, V=64.41,
                W=13.30, Y=32.16)


@dataclass(frozen=True)
class KarlinBlk:
    Lambda: float
    K: float
    H: float

    @property
    def logK(self) -> float:
        return math.log(self.K)


@dataclass(frozen=True)
class GumbelBlk:
    Lambda: float
    a: float
    b: float
    Alpha: float
    Beta: float
    Sigma: float
    Tau: float
    db_length: int = 0


def _score_probs(query: np.ndarray, matrix: np.ndarray):
    """(low, high, probs dict score -> p, mean) as ``BlastScoreFreqCalc``."""
    counts = np.bincount(np.asarray(query, dtype=np.int64), minlength=28)[:28].astype(float)
    counts[PROTEIN.letters.index("X")] = 0.0
    total = counts.sum()
    p1 = counts / total if total else counts
    p2 = np.zeros(28)
    for ch, p in ROBINSON.items():
        p2[PROTEIN.letters.index(ch)] = p
    valid = matrix[:28, :28] > SCORE_MIN
    lo = int(matrix[:28, :28][valid].min())
    hi = int(matrix[:28, :28][valid].max())
    sprob = np.zeros(hi - lo + 1)
    for i in range(28):
        for j in range(28):
            s = int(matrix[i, j])
            if s >= lo:
                sprob[s - lo] += p1[i] * p2[j]
    nz = np.nonzero(sprob > 0)[0]
    obs_lo, obs_hi = int(nz[0]) + lo, int(nz[-1]) + lo
    ssum = sprob.sum()
    avg = 0.0
    if abs(ssum) > 0.0001:
        sprob = sprob / ssum
        avg = float(sum((s) * sprob[s - lo] for s in range(obs_lo, obs_hi + 1)))
    probs = {s: float(sprob[s - lo]) for s in range(obs_lo, obs_hi + 1)}
    return obs_lo, obs_hi, probs, avg


def _gcd_step(probs, low, high):
    d = -low
    i = 1
    while i <= high - low and d > 1:
        if probs.get(i + low, 0.0) != 0.0:
            d = math.gcd(d, i)
        i += 1
    return d


def _lambda_nr(probs, d, low, high, lambda0=0.5, tolx=1e-5, itmax=20, max_newton=37):
    """Root of sum p_s x^s = 1 in (0, 1) for x = exp(-lambda): Newton with bisection guard."""
    x0 = math.exp(-lambda0)
    x = x0 if 0 < x0 < 1 else 0.5
    a, b, f = 0.0, 1.0, 4.0
    is_newton = False
    for k in range(itmax):
        fold, was_newton, is_newton = f, is_newton, False
        g = 0.0
        f = probs.get(low, 0.0)
        i = low + d
        while i < 0:
            g = x * g + f
            f = f * x + probs.get(i, 0.0)
            i += d
        g = x * g + f
        f = f * x + probs.get(0, 0.0) - 1
        i = d
        while i <= high:
            g = x * g + f
            f = f * x + probs.get(i, 0.0)
            i += d
        if f > 0:
            a = x
        elif f < 0:
            b = x
        else:
            break
        if b - a < 2 * a * (1 - b) * tolx:
            x = (a + b) / 2
            break
        if k >= max_newton or (was_newton and abs(f) > 0.9 * abs(fold)) or g >= 0:
            x = (a + b) / 2
        else:
            p = -f / g
            y = x + p
            if y <= a or y >= b:
                x = (a + b) / 2
            else:
                is_newton = True
                x = y
                if abs(p) < tolx * x * (1 - x):
                    break
    return -math.log(x) / d


def _entropy(probs, low, high, lam):
    etonlam = math.exp(-lam)
    s = low * probs.get(low, 0.0)
    for score in range(low + 1, high + 1):
        s = score * probs.get(score, 0.0) + etonlam * s
    scale = etonlam ** high
    if scale > 0.0:
        return lam * s / scale
    return lam * math.exp(lam * high + math.log(s))


def _k_from_lh(probs, low, high, avg, lam, H):
    """BLAST's series for K (``BlastKarlinLHtoK``)."""
    if lam <= 0 or H <= 0 or avg >= 0:
        return -1.0
    rng = high - low
    arr = [probs.get(low + i, 0.0) for i in range(rng + 1)]
    divisor = -low
    i = 1
    while i <= rng and divisor > 1:
        if arr[i] != 0.0:
            divisor = math.gcd(divisor, i)
        i += 1
    high //= divisor
    low //= divisor
    lam *= divisor
    rng = high - low
    first_term = H / lam
    eml = math.exp(-lam)
    if low == -1 and high == 1:
        pl, ph = probs.get(low * divisor, 0.0), probs.get(high * divisor, 0.0)
        return (pl - ph) * (pl - ph) / pl
    if low == -1 or high == 1:
        if high != 1:
            sa = avg / divisor
            first_term = sa * sa / first_term
        return first_term * (1.0 - eml)
    step = [arr[j * divisor] for j in range(rng + 1)]  # probabilities of the reduced scores
    iterlimit, sumlimit = 100, 0.0001
    dist = np.zeros(iterlimit * rng + 1)
    dist[0] = 1.0
    lo_sc = hi_sc = 0
    outer = 0.0
    inner = 1.0
    it = 0
    while it < iterlimit and inner > sumlimit:
        lo_sc += low
        hi_sc += high
        width = hi_sc - lo_sc
        new = np.convolve(dist[:width - rng + 1], np.asarray(step))
        dist[:width + 1] = new[:width + 1]
        # sum over scores: exp(lambda*s) for s < 0 (Horner as BLAST), 1 for s >= 0
        k = 0
        inner = dist[k]
        score = lo_sc + 1
        while score < 0:
            k += 1
            inner = dist[k] + inner * eml
            score += 1
        inner *= eml
        while score <= hi_sc:
            k += 1
            inner += dist[k]
            score += 1
        it += 1
        inner /= it
        outer += inner
    return -math.exp(-2.0 * outer) / (first_term * math.expm1(-lam))


def ungapped_kbp(query: np.ndarray, matrix: np.ndarray) -> KarlinBlk:
    """Per-query ungapped Karlin block (``Blast_ScoreBlkKbpUngappedCalc``)."""
    low, high, probs, avg = _score_probs(query, matrix)
    if avg >= 0:
        raise InputError("cannot compute ungapped Karlin-Altschul parameters for this query")
    d = _gcd_step(probs, low, high)
    lam = _lambda_nr(probs, d, low, high)
    H = _entropy(probs, low, high, lam)
    K = _k_from_lh(probs, low, high, avg, lam, H)
    if lam < 0 or H < 0 or K < 0:
        raise InputError("cannot compute ungapped Karlin-Altschul parameters for this query")
    return KarlinBlk(lam, K, H)


@functools.lru_cache(maxsize=None)
def _table():
    rows = {}
    text = resources.files(__package__).joinpath("data/blast_karlin.txt").read_text()
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, *vals = line.split()
        rows.setdefault(name, []).append([float(v) for v in vals])
    return rows


def gapped_params(matrix: str, gap_open: int, gap_extend: int, db_length: int = 0):
    """(KarlinBlk, GumbelBlk) for a matrix and gap costs from BLAST+'s tables."""
    rows = _table().get(matrix.upper())
    if rows is None:
        raise InputError(f"no Karlin-Altschul parameters for matrix {matrix}")
    for r in rows:
        if r[0] == gap_open and r[1] == gap_extend:
            G = gap_open + gap_extend
            a_un, alpha_un = rows[0][6], rows[0][9]
            gbp = GumbelBlk(Lambda=r[3], a=r[6], b=2.0 * G * (a_un - r[6]), Alpha=r[9],
                            Beta=2.0 * G * (alpha_un - r[9]), Sigma=r[10],
                            Tau=2.0 * G * (alpha_un - r[10]), db_length=db_length)
            return KarlinBlk(r[3], r[4], r[5]), gbp
    pairs = ", ".join(f"{int(r[0])}/{int(r[1])}" for r in rows[1:])
    raise InputError(f"gap costs {gap_open}/{gap_extend} are not supported for {matrix.upper()} "
                     f"(BLAST+ supports {pairs})")


def spouge_evalue(score: int, kbp: KarlinBlk, gbp: GumbelBlk, m: int, n: int) -> float:
    """``BLAST_SpougeStoE``: E-value of a score for query length m and subject length n."""
    scale = kbp.Lambda / gbp.Lambda
    db_scale = gbp.db_length / n if gbp.db_length else 1.0
    lam, k = kbp.Lambda, kbp.K
    ai, bi = gbp.a * scale, gbp.b
    alphai, betai = gbp.Alpha * scale, gbp.Beta
    sigma, tau = gbp.Sigma * scale, gbp.Tau
    const = 0.39894228040143267793994605993438
    m_li = m - (ai * score + bi)
    vi = max(2.0 * alphai / lam, alphai * score + betai)
    svi = math.sqrt(vi)
    mF = m_li / svi
    PmF = math.erfc(-mF / math.sqrt(2.0)) / 2.0
    p1 = m_li * PmF + svi * const * math.exp(-0.5 * mF * mF)
    n_lj = n - (ai * score + bi)
    vj = max(2.0 * alphai / lam, alphai * score + betai)
    svj = math.sqrt(vj)
    nF = n_lj / svj
    PnF = math.erfc(-nF / math.sqrt(2.0)) / 2.0
    p2 = n_lj * PnF + svj * const * math.exp(-0.5 * nF * nF)
    c = max(2.0 * sigma / lam, sigma * score + tau)
    area = p1 * p2 + c * PmF * PnF
    return area * k * math.exp(-lam * score) * db_scale


def spouge_cutoff(evalue: float, kbp: KarlinBlk, gbp: GumbelBlk, m: int, n: int) -> int:
    """``BLAST_SpougeEtoS``: the score BLAST+ derives for an E-value (bisection as BLAST+)."""
    db_scale = float(gbp.db_length) if gbp.db_length else 1.0
    a = 0
    b = max(int(math.log(db_scale / evalue) / kbp.Lambda), 2)
    e = spouge_evalue(b, kbp, gbp, m, n)
    if e > evalue:
        while e > evalue:
            a = b
            b *= 2
            e = spouge_evalue(b, kbp, gbp, m, n)
    while b - a > 1:
        c = (a + b) // 2
        if spouge_evalue(c, kbp, gbp, m, n) > evalue:
            a = c
        else:
            b = c
    return a


def bit_score(score: int, kbp: KarlinBlk) -> float:
    return (score * kbp.Lambda - kbp.logK) / LN2
