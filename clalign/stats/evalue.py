"""Bit scores, E-values, length adjustment and search space as BLAST+ 2.12 computes them.

What blastp 2.12 does (``blast_setup.c``, ``blast_hits.c``, ``blast_args.cpp``):

- bit score = (S * lambda - ln K) / ln 2 with the gapped table's lambda and K;
- E-value: for a gapped protein search BLAST+ fills a Gumbel block and uses Spouge's
  finite-size correction for every hit, ``BLAST_SpougeStoE(S, kbp, gbp, qlen, slen)`` scaled by
  ``db_length / slen``, where db_length is the database's residue count or ``-dbsize``;
- ``-searchsp`` (or the environment variable ``OLD_FSC``) switches the Gumbel block off: the
  E-value is then ``searchsp * K * exp(-lambda S)`` (``BLAST_KarlinStoE_simple``) with the
  effective search space ``-searchsp`` or ``(db_length - N*adj) * (qlen - adj)`` where ``adj`` is
  ``BLAST_ComputeLengthAdjustment``'s value for the query;
- ``-dbsize`` replaces the residue count everywhere (length adjustment and Spouge's scale).
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..errors import ParameterError
from .karlin import GappedParams, GumbelParams, KarlinParams, gapped_params

LN2 = 0.69314718055994530941723212145818   # NCBIMATH_LN2
_INV_SQRT_2PI = 0.39894228040143267793994605993438


def bit_score(score, karlin: KarlinParams):
    """(S * lambda - ln K) / ln 2 (``Blast_HSPListGetBitScores``); arrays allowed."""
    return (np.asarray(score, dtype=np.float64) * karlin.lam - karlin.logK) / LN2 \
        if not np.isscalar(score) else (score * karlin.lam - karlin.logK) / LN2


def karlin_evalue(score, karlin: KarlinParams, searchsp):
    """searchsp * K * exp(-lambda S) (``BLAST_KarlinStoE_simple``); arrays allowed."""
    if np.isscalar(score):
        return float(searchsp) * math.exp(-karlin.lam * score + karlin.logK)
    # math.exp per distinct score, not np.exp: numpy's vectorised exp may differ from the C
    # library's in the last bit (numpy 2.4 on AVX2: 798.31042987582 vs 798.3104298758201), and an
    # E-value must be the scalar form's (and BLAST+'s) bit for bit to print the same
    s = np.asarray(score, dtype=np.float64)
    uniq, inverse = np.unique(s, return_inverse=True)
    e = np.array([math.exp(-karlin.lam * x + karlin.logK) for x in uniq.tolist()], dtype=np.float64)
    return (float(searchsp) * e)[inverse].reshape(s.shape)


def karlin_cutoff(evalue: float, karlin: KarlinParams, searchsp) -> int:
    """Lowest score whose E-value is <= evalue (``BlastKarlinEtoS_simple``)."""
    e = max(float(evalue), 1.0e-297)
    return int(math.ceil(math.log(karlin.K * float(searchsp) / e) / karlin.lam))


def spouge_evalue(score: int, karlin: KarlinParams, gumbel: GumbelParams, qlen: int, slen: int,
                  db_length: int) -> float:
    """Spouge's finite-size-corrected E-value (``BLAST_SpougeStoE``) of one pair, scaled to the
    database (``db_length / slen``; 1 when db_length is 0)."""
    lam, k = karlin.lam, karlin.K
    scale = lam / gumbel.lam
    ai, bi = gumbel.a * scale, gumbel.b
    alphai, betai = gumbel.alpha * scale, gumbel.beta
    sigma, tau = gumbel.sigma * scale, gumbel.tau
    y = score
    m_li = qlen - (ai * y + bi)
    vi = max(2.0 * alphai / lam, alphai * y + betai)
    svi = math.sqrt(vi)
    mF = m_li / svi
    PmF = math.erfc(-mF / math.sqrt(2.0)) / 2.0
    p1 = m_li * PmF + svi * _INV_SQRT_2PI * math.exp(-0.5 * mF * mF)
    n_lj = slen - (ai * y + bi)
    vj = max(2.0 * alphai / lam, alphai * y + betai)
    svj = math.sqrt(vj)
    nF = n_lj / svj
    PnF = math.erfc(-nF / math.sqrt(2.0)) / 2.0
    p2 = n_lj * PnF + svj * _INV_SQRT_2PI * math.exp(-0.5 * nF * nF)
    c = max(2.0 * sigma / lam, sigma * y + tau)
    area = p1 * p2 + c * PmF * PnF
    dbscale = float(db_length) / float(slen) if db_length else 1.0
    return area * k * math.exp(-lam * y) * dbscale


def spouge_cutoff(evalue: float, karlin: KarlinParams, gumbel: GumbelParams, qlen: int, slen: int,
                  db_length: int) -> int:
    """``BLAST_SpougeEtoS``: the largest score whose E-value is still > evalue (BLAST's bisection;
    scores above it have E <= evalue)."""
    scale = float(db_length) if db_length else 1.0
    b = max(int(math.log(scale / evalue) / karlin.lam), 2)
    e = spouge_evalue(b, karlin, gumbel, qlen, slen, db_length)
    a = 0
    if e > evalue:
        while e > evalue:
            a = b
            b *= 2
            e = spouge_evalue(b, karlin, gumbel, qlen, slen, db_length)
    while b - a > 1:
        c = (a + b) // 2
        if spouge_evalue(c, karlin, gumbel, qlen, slen, db_length) > evalue:
            a = c
        else:
            b = c
    return a


def length_adjustment(K: float, logK: float, alpha_d_lambda: float, beta: float, qlen: int,
                      db_length: int, db_num_seqs: int):
    """(adjustment, converged) of ``BLAST_ComputeLengthAdjustment``: the integer part of the fixed
    point of ell = alpha/lambda * (ln K + ln((m - ell)(n - N ell))) + beta, kept so small that
    K (m - ell)(n - N ell) > max(m, n)."""
    m, n, N = float(qlen), float(db_length), float(db_num_seqs)
    a, mb, c = N, m * N + n, n * m - max(m, n) / K
    if c < 0:
        return 0, False
    ell_max = 2 * c / (mb + math.sqrt(mb * mb - 4 * a * c))
    ell_min, ell_next, converged = 0.0, 0.0, False
    for i in range(1, 21):
        ell = ell_next
        ss = (m - ell) * (n - N * ell)
        ell_bar = alpha_d_lambda * (logK + math.log(ss)) + beta
        if ell_bar >= ell:
            ell_min = ell
            if ell_bar - ell_min <= 1.0:
                converged = True
                break
            if ell_min == ell_max:
                break
        else:
            ell_max = ell
        if ell_min <= ell_bar <= ell_max:
            ell_next = ell_bar
        else:
            ell_next = ell_max if i == 1 else (ell_min + ell_max) / 2
    adj = int(ell_min)
    if converged:
        ell = math.ceil(ell_min)
        if ell <= ell_max:
            ss = (m - ell) * (n - N * ell)
            if alpha_d_lambda * (logK + math.log(ss)) + beta >= ell:
                adj = int(ell)
    return adj, converged


@dataclass(frozen=True)
class SearchStatistics:
    """Statistics of one gapped protein search: parameters + database size + BLAST+'s overrides.

    ``db_length``/``db_num_seqs``: residues and sequences of the database (``-dbsize`` replaces
    the residue count); ``searchsp``: ``-searchsp`` (then plain Karlin-Altschul E-values, as
    blastp does); ``spouge``: whether Spouge's correction is applied (False with ``searchsp``).
    """

    params: GappedParams
    db_length: int
    db_num_seqs: int
    searchsp: Optional[int] = None
    spouge: bool = True

    @classmethod
    def for_search(cls, matrix: str, gap_open: int, gap_extend: int, db_residues: int, db_seqs: int,
                   dbsize: Optional[int] = None, searchsp: Optional[int] = None) -> "SearchStatistics":
        """As blastp sets up a search: ``dbsize``/``searchsp`` are the -dbsize/-searchsp options
        (None or 0 = not given); ``OLD_FSC`` in the environment turns Spouge off as in BLAST+."""
        p = gapped_params(matrix, gap_open, gap_extend)
        if dbsize is not None and int(dbsize) < 0:
            raise ParameterError(f"-dbsize must be >= 0 (got {dbsize})")
        if searchsp is not None and int(searchsp) < 0:
            raise ParameterError(f"-searchsp must be >= 0 (got {searchsp})")
        length = int(dbsize) if dbsize else int(db_residues)
        sp = int(searchsp) if searchsp else None
        spouge = sp is None and not os.environ.get("OLD_FSC")
        return cls(p, length, int(db_seqs), sp, spouge)

    @property
    def karlin(self) -> KarlinParams:
        return self.params.karlin

    def length_adjustment(self, qlen: int) -> int:
        k = self.karlin
        return length_adjustment(k.K, k.logK, self.params.alpha / k.lam, self.params.beta, qlen,
                                 self.db_length, self.db_num_seqs)[0]

    def effective_search_space(self, qlen: int) -> int:
        """``-searchsp``, else (db_length - N*adj) * (qlen - adj) (BLAST_CalcEffLengths)."""
        if self.searchsp:
            return self.searchsp
        adj = self.length_adjustment(qlen)
        eff_db = self.db_length - self.db_num_seqs * adj
        if eff_db <= 0:
            eff_db = 1
        return eff_db * (qlen - adj)

    def bitscore(self, score):
        return bit_score(score, self.karlin)

    def evalue(self, score: int, qlen: int, slen: int) -> float:
        """E-value of one hit, as blastp 2.12 reports it."""
        if self.spouge:
            return spouge_evalue(int(score), self.karlin, self.params.gumbel, qlen, slen, self.db_length)
        return karlin_evalue(int(score), self.karlin, self.effective_search_space(qlen))

    def evalues(self, scores, qlen: int, slens) -> np.ndarray:
        """E-values (float64) of many hits of one query (arrays of scores and subject lengths)."""
        s = np.asarray(scores, dtype=np.float64)
        if not self.spouge:
            return karlin_evalue(s, self.karlin, self.effective_search_space(qlen))
        from ._fast import spouge_evalues

        g = self.params.gumbel
        k = self.karlin
        return spouge_evalues(s, np.asarray(slens, dtype=np.float64), float(qlen), k.lam, k.K, g.lam, g.a, g.b,
                              g.alpha, g.beta, g.sigma, g.tau, float(self.db_length))

    def min_score(self, evalue: float, qlen: int, slen: int) -> int:
        """Lowest raw score with E-value <= ``evalue`` for this pair of lengths."""
        if self.spouge:
            return spouge_cutoff(evalue, self.karlin, self.params.gumbel, qlen, slen, self.db_length) + 1
        return karlin_cutoff(evalue, self.karlin, self.effective_search_space(qlen))
