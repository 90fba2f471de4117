"""Ungapped extension of BLASTN word hits as BLAST+ 2.12 (``na_ungapped.c``), plain reference.

Two extenders, both X-drop (``X`` negative):

- :func:`ungapped_exact` (``s_NuclUngappedExtendExact``): base by base with the BLASTNA
  matrix. Left from the word start down to subject position ``max(0, s_off - q_off)`` (the
  query side may run into a context sentinel, whose score -2^30 stops it); right from the word
  start over ``min(query rest, subject rest)`` bases. A running sum is banked into the score
  whenever it turns positive (the extension end moves there) and the extension stops once the
  sum falls below X; on the right side below ``max(X, -score so far)`` (BLAST+'s
  ``X_current``: a drop larger than the score gathered so far ends the extension).
- :func:`ungapped_approx` (``s_NuclUngappedExtend``): the same walk a subject byte (4 bases)
  at a time from the first 4-aligned subject offset at or after the word, each byte scored by
  :func:`nucl_score_table` of ``query byte XOR subject byte`` (the query byte is built from
  the 4 query codes shifted and OR-ed in 8 bits, so ambiguous codes and sentinels give odd
  bytes there, as in BLAST+). If the approximate score reaches ``reduced_cutoff`` the hit is
  recomputed by the exact extender; otherwise the length covers at least up to
  ``s_match_end`` (the first subject offset not known to match).

Queries are the concatenated BLASTNA codes of :class:`~clalign.blast.nucl_lookup.QueryBatch`
(sentinel 15, also assumed before the first context); subjects packed NCBI2na bytes.
Results are ``(q_start, s_start, length, score)``.
"""
from __future__ import annotations

import numpy as np

from .nucl_extend import subject_base


def nucl_score_table(reward: int, penalty: int) -> np.ndarray:
    """Score of 4 aligned bases from the XOR of their packed bytes (0 per pair = match)."""
    t = np.zeros(256, dtype=np.int64)
    for i in range(256):
        t[i] = sum(penalty if (i >> (2 * k)) & 3 else reward for k in range(4))
    return t


def _q(q, i):
    return int(q[i]) if 0 <= i < len(q) else 15


def ungapped_exact(q, s, s_len: int, matrix, q_off: int, s_off: int, X: int):
    """``s_NuclUngappedExtendExact``; ``matrix``: 16 x 16 BLASTNA scores [query, subject]."""
    score = 0
    total = 0
    q_beg = q_off
    left_bound = s_off - q_off if q_off < s_off else 0
    p = s_off
    while p > left_bound:
        p -= 1
        qi = q_off - (s_off - p)
        total += int(matrix[_q(q, qi), subject_base(s, p)])
        if total > 0:
            q_beg = qi
            score += total
            total = 0
        elif total < X:
            break
    q_start = q_beg
    s_start = s_off - (q_off - q_start)
    end = s_off + min(len(q) - q_off, s_len - s_off)
    total = 0
    q_end = q_off
    p = s_off
    x_now = X           # right side: the drop-off never exceeds the score so far
    while p < end:
        qi = q_off + (p - s_off)
        total += int(matrix[_q(q, qi), subject_base(s, p)])
        p += 1
        if total > 0:
            q_end = qi + 1
            score += total
            x_now = max(-score, X)
            total = 0
        elif total < x_now:
            break
    return q_start, s_start, q_end - q_beg, score


def _qbyte(q, i):
    """The 8-bit query byte BLAST+ builds from codes i..i+3."""
    return ((_q(q, i) << 6) | (_q(q, i + 1) << 4) | (_q(q, i + 2) << 2) | _q(q, i + 3)) & 0xFF


def ungapped_approx(q, s, s_len: int, matrix, score_table, q_off: int, s_match_end: int,
                    s_off: int, X: int, reduced_cutoff: int):
    """``s_NuclUngappedExtend``: byte-wise approximation, exact redo above ``reduced_cutoff``."""
    pad = (4 - s_off % 4) % 4
    q_ext, s_ext = q_off + pad, s_off + pad
    score = 0
    total = 0
    new_q = q_ext
    qp, sb = q_ext, s_ext // 4
    for _ in range(min(q_ext, s_ext) // 4):
        total += int(score_table[_qbyte(q, qp - 4) ^ int(s[sb - 1])])
        if total > 0:
            new_q = qp - 4
            score += total
            total = 0
        if total < X:
            break
        qp -= 4
        sb -= 1
    q_start = new_q
    s_start = s_ext - (q_ext - q_start)
    qp, sb = q_ext, s_ext // 4
    total = 0
    new_q = qp
    for _ in range(min(len(q) - q_ext, s_len - s_ext) // 4):
        total += int(score_table[_qbyte(q, qp) ^ int(s[sb])])
        if total > 0:
            new_q = qp + 3
            score += total
            total = 0
        if total < X:
            break
        qp += 4
        sb += 1
    if score >= reduced_cutoff:
        return ungapped_exact(q, s, s_len, matrix, q_off, s_off, X)
    return q_start, s_start, max(s_match_end - s_start, new_q - q_start + 1), score


def reduced_cutoff(cutoff_score: int) -> int:
    """The approximate extension's threshold for an exact redo: ``(Int4)(0.8 * cutoff)``
    (``BlastInitialWordParametersUpdate``, per context, from its ungapped cutoff score)."""
    return int(0.8 * cutoff_score)
