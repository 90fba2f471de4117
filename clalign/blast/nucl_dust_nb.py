"""Compiled symmetric DUST (numba): the rules of :mod:`clalign.blast.nucl_dust`, step for step.

The perfect-interval list is kept in arrays ordered by start ascending (``lo..hi``: index
``lo`` is the list's back, ``hi - 1`` its front), so popping the back is ``lo += 1``; the
insertions of one walk from the front (``find_perfect``) are spliced in with one write
(:func:`_splice`), so each entry moves once per walk, as BLAST+'s linked list needs no moves.
The small helpers are inlined into the loop. :func:`dust_intervals_fast` must equal
:func:`clalign.blast.nucl_dust.dust_intervals` (tested on the golden queries and random ones).
"""
from __future__ import annotations

from ..runtime.jit import njit
import numpy as np

from .nucl_dust import (DUST_LEVEL, DUST_LINKER, DUST_WINDOW, _BASE2, _RANDOM_STATE, check_dust_params,
                        dust_codes)

_STATE0 = np.array(_RANDOM_STATE, dtype=np.uint32)


@njit(cache=True, inline="always")
def _read(codes, i, st, kj):
    c = codes[i]
    if c >= 0:
        return c
    k, j = kj[0], kj[1]
    r = np.uint32((np.uint64(st[k]) + np.uint64(st[j])) & np.uint64(0xFFFFFFFF))
    st[k] = r
    k -= 1
    j -= 1
    if k < 0:
        k = 32
    elif j < 0:
        j = 32
    kj[0] = k
    kj[1] = j
    return np.int64((r >> np.uint32(1)) & np.uint32(3))


@njit(cache=True, inline="always")
def _grow(P, lo, hi, m):
    """Room for ``m`` more entries above ``hi``: the live entries packed to the start when they
    fill less than half of it, else moved to an array twice as large."""
    cap = P.shape[0]
    if hi + m <= cap:
        return P, lo, hi
    n = hi - lo
    if 2 * (n + m - 1) < cap:
        for x in range(n):
            P[x] = P[lo + x]
        return P, 0, n
    Q = np.zeros((max(2 * cap, 2 * (n + m)), 4), dtype=np.int64)
    Q[:n] = P[lo:hi]
    return Q, 0, n


@njit(cache=True, inline="always")
def _insert(P, lo, hi, at, a, b, sc, ln):
    """Insert before list index ``at`` counted from the front (array index ``hi - at``)."""
    P, lo, hi = _grow(P, lo, hi, 1)
    pos = hi - at
    for x in range(hi, pos, -1):
        P[x] = P[x - 1]
    P[pos, 0] = a
    P[pos, 1] = b
    P[pos, 2] = sc
    P[pos, 3] = ln
    return P, lo, hi + 1


@njit(cache=True, inline="always")
def _splice(P, lo, hi, k, S, m):
    """The ``m`` entries ``S[:m]`` (start, end, score, length, and how many list entries from
    the front the walk had passed when it made each) put into the list at once: what ``m``
    :func:`_insert` calls during one walk from the front give, with each of the ``k`` passed
    entries moved once instead of once per insertion behind it (in a low-complexity stretch the
    list holds up to a window of entries and a walk inserts up to a window of them)."""
    P, lo, hi = _grow(P, lo, hi, m)
    c = 0                            # insertions made at or before passing entry j
    for j in range(k):               # the passed entries, front first: each moves up once
        while c < m and S[c, 4] <= j:
            c += 1
        if c < m:
            P[hi - 1 - j + m - c] = P[hi - 1 - j]
    top = hi + m - 1
    for i in range(m):
        at = top - (S[i, 4] + i)
        P[at, 0] = S[i, 0]
        P[at, 1] = S[i, 1]
        P[at, 2] = S[i, 2]
        P[at, 3] = S[i, 3]
    return P, lo, hi + m


@njit(cache=True, inline="always")
def _save(res, nres, P, lo, hi, wstart, offset, linker):
    if hi > lo and P[lo, 0] < wstart:
        a = P[lo, 0] + offset
        b = P[lo, 1] + offset
        if nres > 0 and res[nres - 1, 1] + linker >= a:
            if b > res[nres - 1, 1]:
                res[nres - 1, 1] = b
        else:
            res[nres, 0] = a
            res[nres, 1] = b
            nres += 1
        while hi > lo and P[lo, 0] < wstart:
            lo += 1
    return nres, lo


@njit(cache=True)
def _dust(codes, level, window, linker, state0):
    n = codes.shape[0]
    res = np.zeros((n + 1, 2), dtype=np.int64)
    nres = 0
    if n == 0:
        return res[:0]
    st = state0.copy()
    kj = np.array([32, 12], dtype=np.int64)
    th = np.zeros(window - 2, dtype=np.int64)
    th[0] = 1
    for i in range(1, window - 2):
        th[i] = i * level
    low_k = level // 5
    max_size = window - 2
    stop = n - 1
    start = 0
    tri = np.zeros(n + 2, dtype=np.int64)
    P = np.zeros((256, 4), dtype=np.int64)
    S = np.zeros((window + 2, 5), dtype=np.int64)    # one walk's new entries (<= window)
    cw = np.zeros(64, dtype=np.int64)
    cv = np.zeros(64, dtype=np.int64)
    counts = np.zeros(64, dtype=np.int64)
    while stop > 2 + start:
        lo = 0
        hi = 0
        cw[:] = 0
        cv[:] = 0
        rw = 0
        rv = 0
        ndiff = 0
        ws = 0       # window start (triplet index within this pass)
        we = 0       # one past the last triplet
        L = 0
        t = _read(codes, start, st, kj) << 2
        t += _read(codes, start + 1, st, kj)
        it = start + 2
        done = False
        inner = False
        while not done and it <= stop:
            nres, lo = _save(res, nres, P, lo, hi, ws, start, linker)
            t = ((t << 2) & 63) + _read(codes, it, st, kj)
            if not inner:
                it += 1
            # ---- shift the window by triplet t
            ok = True
            if we - ws >= max_size and ndiff <= 1:
                s = tri[ws]
                cw[s] -= 1
                rw -= cw[s]
                if cw[s] == 0:
                    ndiff -= 1
                ws += 1
                tri[we] = t
                if cw[t] == 0:
                    ndiff += 1
                rw += cw[t]
                cw[t] += 1
                we += 1
                if ndiff <= 1:
                    P, lo, hi = _insert(P, lo, hi, 0, ws, we + 1, 0, 0)
                    ok = False
            else:
                if we - ws >= max_size:
                    s = tri[ws]
                    cw[s] -= 1
                    rw -= cw[s]
                    if cw[s] == 0:
                        ndiff -= 1
                    if L == ws:
                        L += 1
                        cv[s] -= 1
                        rv -= cv[s]
                    ws += 1
                tri[we] = t
                if cw[t] == 0:
                    ndiff += 1
                rw += cw[t]
                cw[t] += 1
                rv += cv[t]
                cv[t] += 1
                if cv[t] > low_k:
                    while True:
                        u = tri[L]
                        cv[u] -= 1
                        rv -= cv[u]
                        L += 1
                        if u == t:
                            break
                we += 1
                if we - ws >= max_size and ndiff <= 1:
                    lo = 0
                    hi = 0
                    P, lo, hi = _insert(P, lo, hi, 0, ws, we + 1, 0, 0)
                    ok = False
            # ---- after the shift
            if inner:
                if ok:
                    done = True
                else:
                    it += 1
                continue
            if ok:
                count = we - L
                if count < we - ws and 10 * rw > th[count]:
                    counts[:] = cv
                    score = rv
                    k = 0            # entries of the list passed (from its front)
                    m = 0            # entries made by this walk (S), spliced in after it
                    max_score = 0
                    max_len = 0
                    last = we + 1
                    for pos in range(L - 1, ws - 1, -1):
                        u = tri[pos]
                        cnt = counts[u]
                        score += cnt
                        counts[u] = cnt + 1
                        if cnt > 0 and score * 10 > th[count]:
                            while k < hi - lo and pos <= P[hi - 1 - k, 0]:
                                e = hi - 1 - k
                                if max_score == 0 or max_len * P[e, 2] > max_score * P[e, 3]:
                                    max_score = P[e, 2]
                                    max_len = P[e, 3]
                                k += 1
                            if max_score == 0 or score * max_len >= max_score * count:
                                max_score = score
                                max_len = count
                                S[m, 0] = pos
                                S[m, 1] = last
                                S[m, 2] = score
                                S[m, 3] = count
                                S[m, 4] = k
                                m += 1
                        count += 1
                    if m:
                        P, lo, hi = _splice(P, lo, hi, k, S, m)
            else:
                inner = True
        wstart = ws
        while hi > lo:
            nres, lo = _save(res, nres, P, lo, hi, wstart, start, linker)
            wstart += 1
        if ws > 0:
            start += ws
        else:
            break
    return res[:nres]


def dust_intervals_fast(seq, level: int = DUST_LEVEL, window: int = DUST_WINDOW,
                        linker: int = DUST_LINKER):
    """Compiled :func:`~clalign.blast.nucl_dust.dust_intervals` (same intervals)."""
    check_dust_params(level, window, linker)
    codes = dust_codes(seq).astype(np.int64)
    out = _dust(codes, level, window, linker, _STATE0)
    return [(int(a), int(b)) for a, b in out]


@njit(cache=True, nogil=True)
def _dust_many(codes, starts, level, window, linker, state0):
    """:func:`_dust` of every sequence ``codes[starts[k]:starts[k + 1]]`` in one call: (all
    intervals, in sequence order, and the number of each sequence's)."""
    nseq = starts.shape[0] - 1
    counts = np.zeros(nseq, dtype=np.int64)
    parts = []
    total = 0
    for k in range(nseq):
        r = _dust(codes[starts[k]:starts[k + 1]], level, window, linker, state0)
        counts[k] = r.shape[0]
        total += r.shape[0]
        parts.append(r)
    out = np.empty((total, 2), dtype=np.int64)
    m = 0
    for r in parts:
        out[m:m + r.shape[0]] = r
        m += r.shape[0]
    return out, counts


@njit(cache=True, nogil=True)
def _dust_many_text(text, starts, lut, level, window, linker, state0):
    """:func:`_dust_many` of sequences given as letters (uint8), DUST's codes made here
    (``lut``: :data:`nucl_dust._BASE2` as int64), on the calling thread. Each sequence's codes
    go into one buffer, reused, and only its intervals are kept (a copy, not a view of
    ``_dust``'s buffer of ``n + 1`` rows): 8 bytes of codes and 16 of intervals per base made
    1.3 GB of fresh pages for 100,000 reads."""
    nseq = starts.shape[0] - 1
    longest = 0
    for k in range(nseq):
        longest = max(longest, starts[k + 1] - starts[k])
    buf = np.empty(longest, dtype=np.int64)
    counts = np.zeros(nseq, dtype=np.int64)
    parts = []
    total = 0
    for k in range(nseq):
        a, n = starts[k], starts[k + 1] - starts[k]
        for i in range(n):
            buf[i] = lut[text[a + i]]
        r = _dust(buf[:n], level, window, linker, state0)
        counts[k] = r.shape[0]
        if r.shape[0]:
            total += r.shape[0]
            parts.append(r.copy())
    out = np.empty((total, 2), dtype=np.int64)
    m = 0
    for r in parts:
        out[m:m + r.shape[0]] = r
        m += r.shape[0]
    return out, counts


_LUT64 = _BASE2.astype(np.int64)
#: groups of sequences per thread in :func:`dust_arrays`
GROUPS_PER_THREAD = 8


def dust_intervals_many(seqs, level: int = DUST_LEVEL, window: int = DUST_WINDOW,
                        linker: int = DUST_LINKER, threads: int = 1):
    """:func:`dust_intervals_fast` of every sequence of ``seqs`` (str or bytes): the lists of
    :func:`dust_arrays` on the sequences joined."""
    lengths = np.array([len(s) for s in seqs], dtype=np.int64)
    starts = np.zeros(len(seqs) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    text = np.frombuffer(b"".join(s.encode("ascii") if isinstance(s, str) else bytes(s)
                                 for s in seqs), dtype=np.uint8)
    out, counts = dust_arrays(text, starts, level, window, linker, threads)
    ivs, res, m = out.tolist(), [], 0
    for c in counts.tolist():
        res.append([(a, b) for a, b in ivs[m:m + c]] if c else [])
        m += c
    return res


def dust_arrays(text, starts, level: int = DUST_LEVEL, window: int = DUST_WINDOW,
                linker: int = DUST_LINKER, threads: int = 1):
    """DUST of the sequences ``text[starts[k]:starts[k + 1]]`` (letters, uint8; ``starts``
    int64, one longer than the sequences) as arrays: (intervals ``(n, 2)`` int64, in sequence
    order, and the number of each sequence's), no Python per sequence. One compiled call, or
    one per group of consecutive sequences on ``threads`` threads (about equal bases each; the
    sequences are independent, so the result is the same). With threads there are
    ``GROUPS_PER_THREAD`` groups a thread, taken in turn: DUST's time per base varies tenfold
    between random and low-complexity sequence, and one group a thread left a few threads with
    most of the work (H200, 100,000 reads: 0.1-0.58 s a thread)."""
    check_dust_params(level, window, linker)
    text = np.asarray(text, dtype=np.uint8)
    starts = np.asarray(starts, dtype=np.int64)
    nseq = starts.size - 1
    if nseq <= 0:
        return np.zeros((0, 2), dtype=np.int64), np.zeros(0, dtype=np.int64)
    groups = min(max(1, threads) * (GROUPS_PER_THREAD if threads > 1 else 1), nseq)
    cuts = np.searchsorted(starts, np.linspace(starts[0], starts[-1], groups + 1), side="left")
    cuts[0], cuts[-1] = 0, nseq
    cuts = np.unique(cuts)

    def run(k):
        a, e = int(cuts[k]), int(cuts[k + 1])
        return _dust_many_text(text[starts[a]:starts[e]], starts[a:e + 1] - starts[a], _LUT64,
                               level, window, linker, _STATE0)

    if len(cuts) > 2:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(threads, len(cuts) - 1)) as pool:
            parts = list(pool.map(run, range(len(cuts) - 1)))
    else:
        parts = [run(0)]
    if len(parts) == 1:
        return parts[0]
    return np.concatenate([o for o, _ in parts]), np.concatenate([c for _, c in parts])
