"""BLAST+'s one-hit word finder (``-window_size 0``): every word hit is extended.

``s_BlastAaWordFinder_OneHit``: a hit (q, s) is extended unless its diagonal was already
extended past s (``s < last_hit``); after the extension the diagonal's last hit is the last
subject offset examined minus ``W - 1``. ``s_BlastAaExtendOneHit``: within the word, the best
prefix-sum segment (a running sum reset at <= 0) gives the seed [best left, best right] with
score S; X-drop extension left from before it (starting from S), then right from after it
(starting from the left result); the HSP starts at the seed's left minus the left length and
spans left length + right length + the seed width, where -- as in BLAST+ -- the width is measured
from the *last* reset point, not from the best left end. The result is kept when it reaches the
ungapped cutoff.

``extend_one_hit`` is the plain statement of the extension; ``one_hit_reference`` the finder on
one subject; ``_extend_one_hit`` the compiled extension the scan of ``lookup_compressed`` uses.
"""
from __future__ import annotations

from ..runtime.jit import njit


def extend_one_hit(matrix, q, s, s_off, q_off, dropoff, w):
    """(score, q_start, s_start, length, s_last_off) of the extension of hit (q_off, s_off)."""
    score = total = 0
    q_left = q_best_left = q_off
    q_right = q_off + w
    for i in range(w):
        total += int(matrix[q[q_off + i], s[s_off + i]])
        if total > score:
            score, q_best_left, q_right = total, q_left, q_off + i
        elif total <= 0:
            total, q_left = 0, q_off + i + 1
    width = q_right - q_left + 1
    q_left = q_best_left
    shift = s_off - q_off
    # left: from (q_left - 1, s_left - 1) down, running score starting at the seed's
    qo, so = q_left - 1, q_left + shift - 1
    n = min(so, qo)
    best_i, run, best = n + 1, score, score
    i = n
    while i >= 0:
        run += int(matrix[q[qo - n + i], s[so - n + i]])
        if run > best:
            best, best_i = run, i
        if best - run >= dropoff:
            break
        i -= 1
    left_len = n - best_i + 1
    # right: from (q_right + 1, s_right + 1), starting from the left result
    qo, so = q_right + 1, q_right + shift + 1
    n = min(len(s) - so, len(q) - qo)
    best_i, run = -1, best
    i = 0
    while i < n:
        run += int(matrix[q[qo + i], s[so + i]])
        if run > best:
            best, best_i = run, i
        if run <= 0 or best - run >= dropoff:
            break
        i += 1
    return best, q_left - left_len, q_left + shift - left_len, left_len + best_i + 1 + width, so + i


def one_hit_reference(hits, matrix, q, s, w, dropoff, cutoff):
    """Initial HSPs (score, q_start, s_start, length, q_off, s_off) of one subject from its word
    hits [(s_off, q_off)] in scan order, sorted as ``Blast_InitHitListSortByScore``."""
    last_hit, out = {}, []
    for s_off, q_off in hits:
        d = q_off - s_off
        if d in last_hit and s_off < last_hit[d]:
            continue
        score, hq, hs, hlen, s_last = extend_one_hit(matrix, q, s, s_off, q_off, dropoff, w)
        if score >= cutoff:
            out.append((score, hq, hs, hlen, q_off, s_off))
        last_hit[d] = s_last - (w - 1)
    out.sort(key=lambda h: (-h[0], h[2], -h[3], h[1]))
    return out


@njit(cache=True, nogil=True)
def _extend_one_hit(matrix, q, s, s_base, slen, s_off, q_off, dropoff, w, out):
    """``extend_one_hit`` on subject s[s_base:s_base + slen]; out = score, q_start, s_start,
    length, s_last_off."""
    qlen = q.shape[0]
    score = 0
    total = 0
    q_left = q_off
    q_best_left = q_off
    q_right = q_off + w
    for i in range(w):
        total += matrix[q[q_off + i], s[s_base + s_off + i]]
        if total > score:
            score = total
            q_best_left = q_left
            q_right = q_off + i
        elif total <= 0:
            total = 0
            q_left = q_off + i + 1
    width = q_right - q_left + 1
    q_left = q_best_left
    shift = s_off - q_off
    qo = q_left - 1
    so = q_left + shift - 1
    n = min(so, qo)
    best_i = n + 1
    run = score
    best = score
    i = n
    while i >= 0:
        run += matrix[q[qo - n + i], s[s_base + so - n + i]]
        if run > best:
            best = run
            best_i = i
        if best - run >= dropoff:
            break
        i -= 1
    left_len = n - best_i + 1
    qo = q_right + 1
    so = q_right + shift + 1
    n = min(slen - so, qlen - qo)
    best_i = -1
    run = best
    i = 0
    while i < n:
        run += matrix[q[qo + i], s[s_base + so + i]]
        if run > best:
            best = run
            best_i = i
        if run <= 0 or best - run >= dropoff:
            break
        i += 1
    out[0] = best
    out[1] = q_left - left_len
    out[2] = q_left + shift - left_len
    out[3] = left_len + best_i + 1 + width
    out[4] = so + i
