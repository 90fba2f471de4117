"""Word hits, BLAST+'s two-hit rule and ungapped X-drop extension (``aa_ungapped.c``).

For one subject, word hits come in increasing subject offset. Each diagonal ``q - s`` keeps the
last hit and a flag (``s_BlastAaWordFinder_TwoHit``):

- flag set (an extension ran on this diagonal): a hit left of ``last_hit`` is skipped, else it
  becomes the new last hit and the flag clears;
- otherwise with ``diff = s - last_hit``: ``diff >= window`` starts over (new last hit),
  ``diff < W`` (overlapping words) is ignored, else the pair is extended
  (``s_BlastAaExtendTwoHit``): from the best prefix end of the second word, extend left with
  X-drop; only if that reaches the end of the first word, extend right. An extension scoring at
  least ``cutoff`` is kept. After a right extension the diagonal's last hit moves to the last
  subject offset examined minus ``W - 1`` and the flag is set; otherwise the present hit
  becomes the last hit.

Initial HSPs are sorted as ``Blast_InitHitListSortByScore``: score descending, then subject
start, longer first, query start.

``two_hit_reference`` is the plain statement of the rule; ``two_hit`` is the same rule compiled
with numba (the CPU path and the reference the device kernels are checked against).
"""
from __future__ import annotations

from .lookup import CHARSIZE

HSP_FIELDS = ("score", "q_start", "s_start", "length", "q_off", "s_off")


def extend_left(matrix, q, s, q_off, s_off, dropoff):
    """``s_BlastAaExtendLeft`` from (q_off, s_off) inclusive going left: (score, length)."""
    n = min(s_off, q_off)
    best_i = n + 1
    score = maxscore = 0
    i = n
    while i >= 0:
        score += int(matrix[q[q_off - n + i], s[s_off - n + i]])
        if score > maxscore:
            maxscore = score
            best_i = i
        if maxscore - score >= dropoff:
            break
        i -= 1
    return maxscore, n - best_i + 1


def extend_right(matrix, q, s, q_off, s_off, dropoff, maxscore):
    """``s_BlastAaExtendRight`` from (q_off, s_off) going right: (score, length, s_last_off)."""
    n = min(len(s) - s_off, len(q) - q_off)
    best_i = -1
    score = maxscore
    i = 0
    while i < n:
        score += int(matrix[q[q_off + i], s[s_off + i]])
        if score > maxscore:
            maxscore = score
            best_i = i
        if score <= 0 or maxscore - score >= dropoff:
            break
        i += 1
    return maxscore, best_i + 1, s_off + i


def extend_two_hit(matrix, q, s, s_left_off, s_right_off, q_right_off, dropoff, word_size):
    """``s_BlastAaExtendTwoHit``: (score, q_start, s_start, length, right_extended, s_last_off)."""
    score = left_score = right_d = 0
    for i in range(word_size):
        score += int(matrix[q[q_right_off + i], s[s_right_off + i]])
        if score > left_score:
            left_score = score
            right_d = i + 1
    q_right_off += right_d
    s_right_off += right_d
    s_last_off = s_right_off
    left_score, left_d = extend_left(matrix, q, s, q_right_off - 1, s_right_off - 1, dropoff)
    right_score = right_d = 0
    right = left_d >= s_right_off - s_left_off
    if right:
        right_score, right_d, s_last_off = extend_right(matrix, q, s, q_right_off, s_right_off,
                                                        dropoff, left_score)
    return (max(left_score, right_score), q_right_off - left_d, s_right_off - left_d,
            left_d + right_d, right, s_last_off)


def word_hits(lookup, s):
    """(subject offset, query offset) word hits in scan order."""
    w = lookup.word_size
    for s_off in range(len(s) - w + 1):
        code = 0
        for i in range(w):
            code = (code << CHARSIZE) | int(s[s_off + i])
        for q_off in lookup.offsets(code):
            yield s_off, int(q_off)


def two_hit_reference(lookup, matrix, q, s, window, dropoff, cutoff):
    """Initial HSPs of one subject as a sorted list of HSP_FIELDS tuples (plain Python)."""
    w = lookup.word_size
    last_hit, flag, out = {}, {}, []
    for s_off, q_off in word_hits(lookup, s):
        d = q_off - s_off
        if flag.get(d, False):
            if s_off < last_hit[d]:
                continue
            last_hit[d] = s_off
            flag[d] = False
            continue
        prev = last_hit.get(d, s_off - window)
        diff = s_off - prev
        if diff >= window:
            last_hit[d] = s_off
            continue
        if diff < w:
            continue
        score, hq, hs, hlen, right, s_last = extend_two_hit(matrix, q, s, prev + w, s_off, q_off,
                                                            dropoff, w)
        if score >= cutoff:
            out.append((score, hq, hs, hlen, q_off, s_off))
        if right:
            flag[d] = True
            last_hit[d] = s_last - (w - 1)
        else:
            last_hit[d] = s_off
    out.sort(key=lambda h: (-h[0], h[2], -h[3], h[1]))
    return out
