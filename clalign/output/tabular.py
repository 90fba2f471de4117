"""BLAST+ tabular output (``-outfmt 6``, default columns), minimal.

Numbers as ``CAlignFormatUtil::GetScoreString`` and ``CBlastTabularInfo::SetScores`` format them:
E-value "0.0" below 1e-180, ``%.2e`` below 9e-4 (the tabular writer overrides the ``%2.0e`` that
the other formats use below 1e-99), then ``%4.3f``,
``%3.2f``, ``%2.1f``, ``%2.0f``; bit score ``%4.1f`` up to 99.9, the integer part above, and
``%5.3e`` above 99999. Identities, mismatches and gap openings count alignment columns as
BLAST+ does from the aligned letter strings (same letter = identity).
"""
from __future__ import annotations

import numpy as np

STD_COLUMNS = ("qseqid", "sseqid", "pident", "length", "mismatch", "gapopen", "qstart", "qend",
               "sstart", "send", "evalue", "bitscore")
_SUB, _DEL, _INS = 3, 0, 6


def format_evalue(e: float) -> str:
    if e < 1.0e-180:
        return "0.0"
    if e < 0.0009:
        return "%.2e" % e
    if e < 0.1:
        return "%4.3f" % e
    if e < 1.0:
        return "%3.2f" % e
    if e < 10.0:
        return "%2.1f" % e
    return "%2.0f" % e


def format_bits(b: float) -> str:
    if b > 99999:
        return "%5.3e" % b
    if b > 99.9:
        return "%3d" % int(b)
    return "%4.1f" % b


def column_counts(q: np.ndarray, s: np.ndarray, hsp):
    """(length, identities, mismatches, gap openings, gap columns) of an HSP with ops."""
    ops = hsp.ops
    i, j = hsp.q_start, hsp.s_start
    ident = gaps = opens = 0
    prev = _SUB
    for op in ops:
        if op == _SUB:
            ident += int(q[i] == s[j])
            i += 1
            j += 1
        else:
            gaps += 1
            opens += int(op != prev)
            if op == _DEL:
                j += 1
            else:
                i += 1
        prev = op
    length = len(ops)
    return length, ident, length - ident - gaps, opens, gaps


def std_row(qid: str, sid: str, q: np.ndarray, s: np.ndarray, hsp) -> str:
    length, ident, mism, opens, _ = column_counts(q, s, hsp)
    pident = 100.0 * ident / length if length else 0.0
    return "\t".join([qid, sid, "%.3f" % pident, str(length), str(mism), str(opens),
                      str(hsp.q_start + 1), str(hsp.q_end), str(hsp.s_start + 1), str(hsp.s_end),
                      format_evalue(hsp.evalue), format_bits(hsp.bit_score)])
