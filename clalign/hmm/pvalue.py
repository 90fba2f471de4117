"""MSV filter statistics as HMMER's search pipeline computes them.

For a target of length L (p7_bg_SetLength, p7_bg_NullOne, p7_pipeline.c, esl_gumbel.c):

* p1 = (float) L / (float) (L+1); null = (float) (L * log(p1) + log(1 - p1)) nats;
* bit score = (float) ((msv_nats - null) / ln 2);
* P = Gumbel survival with the model's STATS LOCAL MSV mu and lambda (stored by HMMER as
  float32): y = lambda (x - mu), P = 1 - exp(-exp(-y)), or exp(-y) when that is below 5e-9;
* a target passes the MSV filter when P <= F1 (default 0.02); +inf scores (saturated
  filter) always pass.
"""
from __future__ import annotations

import math

import numpy as np

from .lentable import LengthTable
from .options import check

LN2 = 0.69314718055994529       # eslCONST_LOG2
_SMALLX1 = 5e-9                 # eslSMALLX1


def null_nats(L):
    """HMMER's null1 score (nats, float32) for target length(s) ``L`` (from the per-process
    length table, :mod:`clalign.hmm.lentable`)."""
    return _null_nats(L)


def _null_formula(L):
    L = np.asarray(L)
    Lf = L.astype(np.float32)
    p1 = (Lf / (L + 1).astype(np.float32)).astype(np.float32).astype(np.float64)
    with np.errstate(divide="ignore"):
        return (Lf.astype(np.float64) * np.log(p1) + np.log(1.0 - p1)).astype(np.float32)


_null_nats = LengthTable(_null_formula)


def msv_bits(nats, L):
    """MSV bit score(s) (float32) from MSV score(s) in nats and target length(s)."""
    nats = np.asarray(nats, dtype=np.float32).astype(np.float64)
    with np.errstate(invalid="ignore"):
        return ((nats - null_nats(L).astype(np.float64)) / LN2).astype(np.float32)


def gumbel_surv(x, mu, lam):
    """esl_gumbel_surv(x, mu, lambda): P(S > x) for a Gumbel, in double precision (vectorised)."""
    x = np.asarray(x, dtype=np.float64)
    y = lam * (x - mu)
    with np.errstate(over="ignore", invalid="ignore"):
        ey = -np.exp(-y)
        p = np.where(np.abs(ey) < _SMALLX1, -ey, 1.0 - np.exp(ey))
    return np.where(np.isposinf(x), 0.0, p)


def _stats(hmm):
    """(mu, lambda) of the MSV Gumbel as HMMER holds them (float32 evparam)."""
    mu, lam = (hmm.mu, hmm.lam) if not isinstance(hmm, tuple) else hmm
    return float(np.float32(mu)), float(np.float32(lam))


def msv_pvalue(nats, L, hmm):
    """P-value(s) of MSV score(s) ``nats`` for targets of length(s) ``L``.

    ``hmm``: an :class:`~clalign.hmm.HMM`, :class:`~clalign.hmm.MSVProfile` or (mu, lambda).
    """
    mu, lam = _stats(hmm)
    bits = msv_bits(nats, L).astype(np.float64)
    return gumbel_surv(bits, mu, lam)


def msv_pass(nats, L, hmm, F1=0.02, slack_bits=0.0):
    """Boolean array: which targets pass HMMER's MSV filter (P <= F1).

    ``slack_bits`` > 0 lowers the score threshold by that many bits, so that a caller which
    re-runs the exact filter later (as :mod:`clalign.hmm.search` does through pyhmmer) keeps
    a superset of HMMER's passing set even under float rounding differences.
    """
    check("F1", F1)
    mu, lam = _stats(hmm)
    bits = msv_bits(nats, L).astype(np.float64)
    if slack_bits:
        bits = bits + slack_bits
    # The survival function falls with the score: only scores near or above the analytic
    # threshold need it evaluated (a search tests 572,100 scores per model: 62 -> ~10 ms).
    with np.errstate(divide="ignore", invalid="ignore"):
        near = bits >= msv_bit_threshold((mu, lam), F1) - 1e-3
    out = np.zeros(bits.shape, dtype=bool)
    out[near] = gumbel_surv(bits[near], mu, lam) <= F1
    return out


def msv_bit_threshold(hmm, F1=0.02):
    """Smallest bit score whose Gumbel P-value is <= F1 (for reports; exact test uses msv_pass)."""
    mu, lam = _stats(hmm)
    if F1 >= 1.0:
        return -math.inf
    return mu - math.log(-math.log1p(-F1)) / lam
