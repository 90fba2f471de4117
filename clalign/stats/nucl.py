"""Nucleotide (reward/penalty) Karlin-Altschul parameters exactly as BLAST+ 2.12 chooses them.

BLASTN's gapped statistics come from fixed tables per reduced scoring pair (``blast_stat.c``'s
``blastn_values_R_P``; the numbers are NCBI's published estimates). The rules reproduced:

- reward and penalty are divided by their greatest common divisor before the table is chosen;
  the table's gap costs are then multiplied, Lambda and alpha divided, by that divisor;
- a first row with gap costs 0/0 is the *linear* (non-affine) row used by megablast's greedy
  extension with ``-gapopen 0 -gapextend 0``; the other rows are affine costs;
- gap costs absent from the table but at least the table's maxima (both) take the ungapped
  parameters (and the ungapped alpha = Lambda/H, beta 0, or -2 for 1/-1 and 2/-3); other
  absent costs are an error, as in BLAST+;
- for the pairs 2/-7, 2/-5, 2/-3 and 3/-4 (after reduction) odd raw scores are rounded down to
  even before the E-value (``round_down``); the printed bit score uses the raw score (checked
  against blastn 2.12's outfmt 6);
- effective lengths: BLAST_ComputeLengthAdjustment with the gapped block's K, alpha/Lambda and
  beta (:func:`nucl_search_space`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from .karlin import KarlinParams

# (gap open, gap extend, Lambda, K, H, alpha, beta, theta) per reduced (reward, -penalty).
NUCL_TABLES = {
    (1, 5): ((0, 0, 1.39, 0.747, 1.38, 1.00, 0, 100), (3, 3, 1.39, 0.747, 1.38, 1.00, 0, 100)),
    (1, 4): ((0, 0, 1.383, 0.738, 1.36, 1.02, 0, 100), (1, 2, 1.36, 0.67, 1.2, 1.1, 0, 98),
             (0, 2, 1.26, 0.43, 0.90, 1.4, -1, 91), (2, 1, 1.35, 0.61, 1.1, 1.2, -1, 98),
             (1, 1, 1.22, 0.35, 0.72, 1.7, -3, 88)),
    (2, 7): ((0, 0, 0.69, 0.73, 1.34, 0.515, 0, 100), (2, 4, 0.68, 0.67, 1.2, 0.55, 0, 99),
             (0, 4, 0.63, 0.43, 0.90, 0.7, -1, 91), (4, 2, 0.675, 0.62, 1.1, 0.6, -1, 98),
             (2, 2, 0.61, 0.35, 0.72, 1.7, -3, 88)),
    (1, 3): ((0, 0, 1.374, 0.711, 1.31, 1.05, 0, 100), (2, 2, 1.37, 0.70, 1.2, 1.1, 0, 99),
             (1, 2, 1.35, 0.64, 1.1, 1.2, -1, 98), (0, 2, 1.25, 0.42, 0.83, 1.5, -2, 91),
             (2, 1, 1.34, 0.60, 1.1, 1.2, -1, 97), (1, 1, 1.21, 0.34, 0.71, 1.7, -2, 88)),
    (2, 5): ((0, 0, 0.675, 0.65, 1.1, 0.6, -1, 99), (2, 4, 0.67, 0.59, 1.1, 0.6, -1, 98),
             (0, 4, 0.62, 0.39, 0.78, 0.8, -2, 91), (4, 2, 0.67, 0.61, 1.0, 0.65, -2, 98),
             (2, 2, 0.56, 0.32, 0.59, 0.95, -4, 82)),
    (1, 2): ((0, 0, 1.28, 0.46, 0.85, 1.5, -2, 96), (2, 2, 1.33, 0.62, 1.1, 1.2, 0, 99),
             (1, 2, 1.30, 0.52, 0.93, 1.4, -2, 97), (0, 2, 1.19, 0.34, 0.66, 1.8, -3, 89),
             (3, 1, 1.32, 0.57, 1.0, 1.3, -1, 99), (2, 1, 1.29, 0.49, 0.92, 1.4, -1, 96),
             (1, 1, 1.14, 0.26, 0.52, 2.2, -5, 85)),
    (2, 3): ((0, 0, 0.55, 0.21, 0.46, 1.2, -5, 87), (4, 4, 0.63, 0.42, 0.84, 0.75, -2, 99),
             (2, 4, 0.615, 0.37, 0.72, 0.85, -3, 97), (0, 4, 0.55, 0.21, 0.46, 1.2, -5, 87),
             (3, 3, 0.615, 0.37, 0.68, 0.9, -3, 97), (6, 2, 0.63, 0.42, 0.84, 0.75, -2, 99),
             (5, 2, 0.625, 0.41, 0.78, 0.8, -2, 99), (4, 2, 0.61, 0.35, 0.68, 0.9, -3, 96),
             (2, 2, 0.515, 0.14, 0.33, 1.55, -9, 81)),
    (3, 4): ((6, 3, 0.389, 0.25, 0.56, 0.7, -5, 95), (5, 3, 0.375, 0.21, 0.47, 0.8, -6, 92),
             (4, 3, 0.351, 0.14, 0.35, 1.0, -9, 86), (6, 2, 0.362, 0.16, 0.45, 0.8, -4, 88),
             (5, 2, 0.330, 0.092, 0.28, 1.2, -13, 81), (4, 2, 0.281, 0.046, 0.16, 1.8, -23, 69)),
    (4, 5): ((0, 0, 0.22, 0.061, 0.22, 1.0, -15, 74), (6, 5, 0.28, 0.21, 0.47, 0.6, -7, 93),
             (5, 5, 0.27, 0.17, 0.39, 0.7, -9, 90), (4, 5, 0.25, 0.10, 0.31, 0.8, -10, 83),
             (3, 5, 0.23, 0.065, 0.25, 0.9, -11, 76)),
    (1, 1): ((3, 2, 1.09, 0.31, 0.55, 2.0, -2, 99), (2, 2, 1.07, 0.27, 0.49, 2.2, -3, 97),
             (1, 2, 1.02, 0.21, 0.36, 2.8, -6, 92), (0, 2, 0.80, 0.064, 0.17, 4.8, -16, 72),
             (4, 1, 1.08, 0.28, 0.54, 2.0, -2, 98), (3, 1, 1.06, 0.25, 0.46, 2.3, -4, 96),
             (2, 1, 0.99, 0.17, 0.30, 3.3, -10, 90)),
    (3, 2): ((5, 5, 0.208, 0.030, 0.072, 2.9, -47, 77),),
    (5, 4): ((10, 6, 0.163, 0.068, 0.16, 1.0, -19, 85), (8, 6, 0.146, 0.039, 0.11, 1.3, -29, 76)),
}
#: (gap open max, gap extend max) per reduced pair: at least both -> ungapped parameters.
NUCL_GAP_MAX = {(1, 5): (3, 3), (1, 4): (2, 2), (2, 7): (4, 4), (1, 3): (2, 2), (2, 5): (4, 4),
                (1, 2): (2, 2), (2, 3): (6, 4), (3, 4): (6, 3), (1, 1): (4, 2), (3, 2): (5, 5),
                (4, 5): (12, 8), (5, 4): (25, 10)}
#: Reduced pairs whose odd scores are rounded down to even.
NUCL_ROUND_DOWN = frozenset({(2, 7), (2, 5), (2, 3), (3, 4)})


@dataclass(frozen=True)
class NuclGappedParams:
    """Gapped Karlin-Altschul block of a blastn search plus the length-adjustment alpha/beta."""
    karlin: KarlinParams
    alpha: float
    beta: float
    round_down: bool


def reduce_pair(reward: int, penalty: int):
    """(reward, -penalty, divisor) of a scoring pair divided by its greatest common divisor."""
    if reward <= 0 or penalty >= 0:
        raise ValueError(f"blastn needs reward > 0 and penalty < 0, got {reward} and {penalty}")
    d = math.gcd(reward, -penalty)
    return reward // d, -penalty // d, d


def nucl_rows(reward: int, penalty: int):
    """(linear row or None, affine rows, (open max, extend max), divisor) scaled as BLAST+ does."""
    r, p, d = reduce_pair(reward, penalty)
    if (r, p) not in NUCL_TABLES:
        raise ValueError(f"Substitution scores {reward} and {penalty} are not supported")
    rows = [(o * d, e * d, lam / d, k, h, a / d, b, th)
            for o, e, lam, k, h, a, b, th in NUCL_TABLES[(r, p)]]
    linear = rows.pop(0) if rows[0][0] == 0 and rows[0][1] == 0 else None
    om, em = NUCL_GAP_MAX[(r, p)]
    return linear, rows, (om * d, em * d), d


def ungapped_alpha_beta(reward: int, penalty: int, ungapped: KarlinParams):
    """alpha = Lambda/H and beta of an ungapped blastn search (``s_GetUngappedBeta``)."""
    beta = -2.0 if (reward, penalty) in ((1, -1), (2, -3)) else 0.0
    return ungapped.lam / ungapped.H, beta


def nucl_gapped_params(reward: int, penalty: int, gap_open: int, gap_extend: int,
                       ungapped: Optional[KarlinParams] = None) -> NuclGappedParams:
    """The gapped parameters BLAST+ uses for ``-reward -penalty -gapopen -gapextend``.

    ``ungapped`` (the query's ungapped block) is needed only when the costs fall in the
    "infinite" domain (both at least the table maxima); ValueError otherwise when absent.
    """
    linear, rows, (om, em), _ = nucl_rows(reward, penalty)
    r, p, _ = reduce_pair(reward, penalty)
    round_down = (r, p) in NUCL_ROUND_DOWN
    row = None
    if gap_open == 0 and gap_extend == 0 and linear is not None:
        row = linear
    else:
        for cand in rows:
            if cand[0] == gap_open and cand[1] == gap_extend:
                row = cand
                break
    if row is not None:
        _, _, lam, k, h, alpha, beta, _ = row
        return NuclGappedParams(KarlinParams(lam, k, h), alpha, beta, round_down)
    if gap_open >= om and gap_extend >= em:
        if ungapped is None:
            raise ValueError("ungapped Karlin-Altschul parameters needed for these gap costs")
        alpha, beta = ungapped_alpha_beta(reward, penalty, ungapped)
        return NuclGappedParams(ungapped, alpha, beta, round_down)
    supported = ", ".join(f"{o}/{e}" for o, e, *_ in rows)
    raise ValueError(f"Gap existence and extension values {gap_open} and {gap_extend} are not "
                     f"supported for substitution scores {reward} and {penalty} (supported: "
                     f"{supported}, or at least {om}/{em})")


def round_score(score: int, params: NuclGappedParams) -> int:
    """The raw score the statistics see (odd scores rounded down for the even-only tables)."""
    return score & ~1 if params.round_down else score


def nucl_search_space(params: NuclGappedParams, qlen: int, db_length: int, db_num_seqs: int):
    """(length adjustment, effective search space) of one query context as BLAST_CalcEffLengths
    (alpha/Lambda and beta of the gapped block; lengths floored at 1)."""
    from .evalue import length_adjustment
    k = params.karlin
    adj, _ = length_adjustment(k.K, k.logK, params.alpha / k.lam, params.beta, qlen,
                               db_length, db_num_seqs)
    eff_db = db_length - db_num_seqs * adj
    if eff_db <= 0:
        eff_db = 1
    eff_q = max(qlen - adj, 1)
    return adj, eff_q * eff_db


def nucl_evalue_bits(score: int, params: NuclGappedParams, searchsp: int):
    """(E-value, bit score) of a raw blastn score: the E-value sees the score rounded down to
    even where the table says so, the bit score the raw score (as blastn 2.12 prints them)."""
    from .evalue import bit_score, karlin_evalue
    return (karlin_evalue(round_score(score, params), params.karlin, searchsp),
            bit_score(score, params.karlin))
