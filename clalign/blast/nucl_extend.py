"""Mini-extension of BLASTN lookup hits to full words, as BLAST+ 2.12 (``na_ungapped.c``).

A lookup hit says the ``width`` query bases at ``q_off`` equal the subject bases at ``s_off``
(a multiple of the scan stride). The hit becomes a word hit only when ``word_size`` consecutive
bases match around it; the word hit then starts ``ext_left`` bases before the lookup hit.
BLAST+ has several extenders, chosen by :func:`choose_extend`, whose edge rules differ:

- ``direct`` (width = word size): every hit is a word hit.
- ``generic`` (``s_BlastNaExtend``, megablast/standard tables) and ``aligned``
  (``s_BlastNaExtendAligned``, same result read a byte at a time): count exact matches to the
  left, at most ``word - width`` and at most ``s_off`` (the query is *not* bounded by its
  context: the sentinel between contexts never matches, nor does an ambiguous query base);
  if short, count to the right, at most the rest; but drop the hit outright when
  ``s_off + width + rest > s_range``.
- ``small`` (``s_BlastSmallNaExtend``) and ``small_aligned`` (``s_BlastSmallNaExtendAlignedOneByte``),
  for small tables: compare the *compressed* query (:func:`compress_query`: ambiguous bases read
  as ``code & 3``, so they can match) four bases at a time, bounded by the hit's context.

Subjects are NCBI2na bytes (4 bases a byte, first base in the high bits); ``s_range`` is one
past the last subject base that may be used.
"""
from __future__ import annotations

import numpy as np

from ..data.nucleotide import BLASTNA_SENTINEL

COMPRESSION_RATIO = 4


def subject_base(s, i: int) -> int:
    """Base ``i`` of a packed NCBI2na subject."""
    return (int(s[i >> 2]) >> (6 - 2 * (i & 3))) & 3


def _qbase(q, i: int) -> int:
    """Query code i of the concatenated query; outside it, BLAST+'s sentinel."""
    return int(q[i]) if 0 <= i < len(q) else BLASTNA_SENTINEL


def _byte(s, k: int) -> int:
    """Subject byte k; BLAST+ may read one byte past the end where the count read there is
    then capped to 0 by ``s_range``, so any value does (0 here)."""
    return int(s[k]) if k < len(s) else 0


def choose_extend(kind: str, width: int, word_size: int, scan_step: int) -> str:
    """The extender BLAST+ uses (``BlastChooseNaExtend``) for a table kind."""
    if width == word_size:
        return "direct"
    aligned = width % COMPRESSION_RATIO == 0 and scan_step % COMPRESSION_RATIO == 0
    if kind == "small":
        return "small_aligned" if aligned and word_size - width <= 4 else "small"
    return "aligned" if aligned else "generic"


def na_extend(q, s, q_off: int, s_off: int, width: int, word_size: int, s_range: int):
    """``s_BlastNaExtend``: (q, s) start of the word hit, or None. ``q``: concatenated
    query in BLASTNA-like codes (0..3 bases, larger values ambiguous or sentinel)."""
    ext_to = word_size - width
    left = 0
    while left < min(ext_to, s_off):
        if subject_base(s, s_off - 1 - left) != _qbase(q, q_off - 1 - left):
            break
        left += 1
    if left < ext_to:
        need = ext_to - left
        if s_off + width + need > s_range:
            return None
        right = 0
        while right < need:
            if subject_base(s, s_off + width + right) != _qbase(q, q_off + width + right):
                break
            right += 1
        if left + right < ext_to:
            return None
    return q_off - left, s_off - left


def na_extend_aligned(q, s, q_off: int, s_off: int, width: int, word_size: int, s_range: int):
    """``s_BlastNaExtendAligned``: the same result, subject read a whole byte at a time
    (``s_off`` and ``width`` multiples of 4)."""
    ext_to = word_size - width
    left, ext_max = 0, min(ext_to, s_off)
    sb, qp = s_off // 4, q_off
    while left < ext_max:
        byte = int(s[sb - 1])
        stop = False
        for k, shift in enumerate((0, 2, 4, 6)):
            if (byte >> shift) & 3 != _qbase(q, qp - 1 - k):
                stop = True
                break
            left += 1
            if left == ext_max:
                stop = True
                break
        if stop:
            break
        sb -= 1
        qp -= 4
    if left < ext_to:
        ext_max = ext_to - left
        if s_off + width + ext_max > s_range:
            return None
        right, sb, qp = 0, (s_off + width) // 4, q_off + width
        while right < ext_max:
            byte = int(s[sb])
            stop = False
            for k, shift in enumerate((6, 4, 2, 0)):
                if (byte >> shift) & 3 != _qbase(q, qp + k):
                    stop = True
                    break
                right += 1
                if right == ext_max:
                    stop = True
                    break
            if stop:
                break
            sb += 1
            qp += 4
        if left + right < ext_to:
            return None
    return q_off - left, s_off - left


def compress_query(q) -> np.ndarray:
    """``BlastCompressBlastnaSequence``: byte ``3 + i`` packs bases i..i+3 (``code & 3``);
    bytes 0..2 hold the first bases right-justified, the last 3 the last bases left-justified.
    (Byte ``3 - m + i``, m = min(3, n), packs bases i-3..i, bases outside the query read 0.)"""
    q = np.asarray(q, dtype=np.uint8) & 3
    n = len(q)
    m = min(3, n)
    out = np.zeros(n + 3, dtype=np.uint8)
    qq = np.concatenate([np.zeros(3, dtype=np.uint8), q, np.zeros(3, dtype=np.uint8)])
    k = n + m      # bytes 3 - m .. n + 2, in uint8 slices (no index or int64 temporaries)
    out[3 - m:3 - m + k] = (qq[:k] << 6) | (qq[1:k + 1] << 4) | (qq[2:k + 2] << 2) | qq[3:k + 3]
    return out


def _left_matches(x: int) -> int:
    """Pairs of zero bits of byte x from the right (``s_ExactMatchExtendLeft``)."""
    k = 0
    while k < 4 and (x >> (2 * k)) & 3 == 0:
        k += 1
    return k


def _right_matches(x: int) -> int:
    """Pairs of zero bits of byte x from the left (``s_ExactMatchExtendRight``)."""
    k = 0
    while k < 4 and (x >> (6 - 2 * k)) & 3 == 0:
        k += 1
    return k


def small_na_extend(cq, s, q_off, s_off, width, word_size, s_range, ctx_start, ctx_end):
    """``s_BlastSmallNaExtend``; ``cq`` from :func:`compress_query`, context [start, end)."""
    ext_max = min(word_size - width, s_off, q_off - ctx_start)
    rsdl = COMPRESSION_RATIO - s_off % COMPRESSION_RATIO
    s_off += rsdl
    q_off += rsdl
    ext_max += rsdl
    left, so, qo = 0, s_off, q_off
    while left < ext_max:
        bases = _left_matches(int(cq[3 + qo - 4]) ^ _byte(s, so // 4 - 1))
        left += bases
        if bases < 4:
            break
        qo -= 4
        so -= 4
    left = min(left, ext_max)
    right, so, qo = 0, s_off, q_off
    ext_max = min(word_size - left, s_range - so, ctx_end - qo)
    while right < ext_max:
        bases = _right_matches(int(cq[3 + qo]) ^ _byte(s, so // 4))
        right += bases
        if bases < 4:
            break
        qo += 4
        so += 4
    right = min(right, ext_max)
    if left + right < word_size:
        return None
    return q_off - left, s_off - left


def small_na_extend_aligned(cq, s, q_off, s_off, width, word_size, s_range, ctx_start,
                            ctx_end, q_len):
    """``s_BlastSmallNaExtendAlignedOneByte`` (``q_len``: length of the concatenated query)."""
    ext_to = word_size - width
    left = 0
    if s_off > 0 and q_off > 0:
        left = _left_matches(int(cq[3 + q_off - 4]) ^ _byte(s, s_off // 4 - 1))
        left = min(left, ext_to, q_off - ctx_start)
    if left < ext_to and q_off + width < q_len:
        right = _right_matches(int(cq[3 + q_off + width]) ^ _byte(s, (s_off + width) // 4))
        right = min(right, s_range - (s_off + width), ctx_end - (q_off + width))
        if left + right < ext_to:
            return None
    return q_off - left, s_off - left
