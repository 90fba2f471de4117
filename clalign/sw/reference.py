"""Plain numpy Smith-Waterman-Gotoh: the exact recurrence every kernel is tested against.

Gap convention (BLAST): a gap of k residues scores ``-(gap_open + k * gap_extend)``.
With ``goe = gap_open + gap_extend``::

    E[i][j] = max(E[i][j-1] - gap_extend, H[i][j-1] - goe)      (gap in the query)
    F[i][j] = max(F[i-1][j] - gap_extend, H[i-1][j] - goe)      (gap in the subject)
    H[i][j] = max(0, H[i-1][j-1] + S[q_i][s_j], E[i][j], F[i][j])
    score   = max over all cells of H

The loop runs over the rows of the shorter sequence and is vectorised along the longer one
in int64. The horizontal gap state of a row is a prefix maximum: a horizontal gap that starts
from a cell whose H itself came from E is never better than extending that E, so
``E[j] = max_{k<j}(H'[k] + k*ext) - goe - (j-1)*ext`` with ``H'`` = H without E.
"""
from __future__ import annotations

import numpy as np


def sw_score(query, subject, scores, gap_open=11, gap_extend=1) -> int:
    """Exact local alignment score of two code arrays (np.uint8) under matrix ``scores``.

    ``scores[a][b]`` is the score of query residue code ``a`` against subject code ``b``.
    """
    q = np.asarray(query, dtype=np.intp)
    s = np.asarray(subject, dtype=np.intp)
    S = np.asarray(scores, dtype=np.int64)
    if len(q) == 0 or len(s) == 0:
        return 0
    if len(q) > len(s):  # loop over the shorter sequence; transpose the matrix to stay exact
        q, s, S = s, q, S.T
    goe = int(gap_open) + int(gap_extend)
    ext = int(gap_extend)
    n = len(s)
    prof = S[:, s]                        # prof[a] = scores of query code a against every s_j
    ramp = np.arange(n, dtype=np.int64) * ext
    neg = np.iinfo(np.int64).min // 4
    H_prev = np.zeros(n + 1, dtype=np.int64)   # H[i-1][0..n], column 0 is the zero border
    F = np.full(n, neg, dtype=np.int64)        # F[i][1..n]
    best = 0
    for a in q:
        F = np.maximum(F - ext, H_prev[1:] - goe)
        Hp = np.maximum(H_prev[:-1] + prof[a], F)
        np.maximum(Hp, 0, out=Hp)
        # E[j] (0-based j) = max_{k<j} Hp[k] - goe - (j-1-k)*ext
        acc = np.maximum.accumulate(Hp + ramp)
        E = np.empty(n, dtype=np.int64)
        E[0] = neg
        E[1:] = acc[:-1] - ramp[1:] - goe + ext
        H = np.maximum(Hp, E)
        m = int(H.max())
        if m > best:
            best = m
        H_prev[1:] = H
    return best


def sw_scores_ref(query, subjects, scores, gap_open=11, gap_extend=1) -> np.ndarray:
    """Scores of one query against a list of subject code arrays (np.int64 array)."""
    return np.array([sw_score(query, s, scores, gap_open, gap_extend) for s in subjects], dtype=np.int64)


def sw_score_slow(query, subject, scores, gap_open=11, gap_extend=1) -> int:
    """Cell-by-cell Gotoh in pure Python (for checking :func:`sw_score` on tiny inputs)."""
    goe = gap_open + gap_extend
    m, n = len(query), len(subject)
    NEG = -(1 << 40)
    H = [[0] * (n + 1) for _ in range(m + 1)]
    E = [[NEG] * (n + 1) for _ in range(m + 1)]
    F = [[NEG] * (n + 1) for _ in range(m + 1)]
    best = 0
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            E[i][j] = max(E[i][j - 1] - gap_extend, H[i][j - 1] - goe)
            F[i][j] = max(F[i - 1][j] - gap_extend, H[i - 1][j] - goe)
            H[i][j] = max(0, H[i - 1][j - 1] + int(scores[query[i - 1]][subject[j - 1]]), E[i][j], F[i][j])
            best = max(best, H[i][j])
    return best
