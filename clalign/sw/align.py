"""Exact Smith-Waterman-Gotoh tracebacks for reported hits (numba, linear-space passes).

Given the exact score S of a pair (from the device), the alignment is found in three passes:

1. **End**: a local forward pass, subject position by subject position, stopping at the first
   cell whose score is S (batches: :func:`find_ends_lanes`, subjects in vector lanes).
2. **Start**: a pass over the reversed prefixes anchored at that end (no restarts), stopping at
   the first cell (in reversed row-major order) whose score is S.
3. **Path**: a global Gotoh alignment of the two segments between start and end (its optimum
   is S), traced back block by block from checkpoint rows (H and F every ``k`` rows; a block's
   direction bytes are recomputed from its checkpoint), so memory stays about
   ``CELL_BUDGET + 16 * (m / k) * n`` bytes -- a 35,000 x 35,000 pair needs ~60 MB.

Tie rule (documented, deterministic): the end is the smallest subject position, then the smallest
query position, among cells scoring S; the start is the largest query position, then the
largest subject position, among starts reaching S from that end; on the path, at each cell the
substitution is preferred over a gap in the query (subject residue against '-'), which is
preferred over a gap in the subject; a gap is opened rather than extended on equal scores
(tracing backwards this keeps gaps as late as possible).

Gap convention (BLAST): a gap of k residues scores ``-(gap_open + k * gap_extend)``.
Operations: 0 = pair (M), 1 = query residue against a gap (I), 2 = subject residue against a gap (D).
"""
from __future__ import annotations

from ..runtime.jit import njit
import numpy as np

NEG = -(1 << 60)            # minus infinity for int64 DP values (no overflow for any real pair)
CELL_BUDGET = 1 << 24       # direction bytes per traceback block
OP_M, OP_I, OP_D = 0, 1, 2


@njit(cache=True, nogil=True)
def _first_row_major(a, b, M, goe, ext, target):
    """(r, c), 1-based, of the first cell in row-major order (rows = ``a``, columns = ``b``) whose
    local score is ``target``; M[a_code, b_code]. Row by row: a vectorisable pass for the
    vertical gaps and the diagonal, then a scan for the horizontal gaps (which can open from
    the score before horizontal gaps: opening from a cell whose score came from a horizontal
    gap is never better than extending that gap). (-1, -1) if no cell reaches ``target``."""
    n = b.shape[0]
    H = np.zeros(n + 1, dtype=np.int64)
    Hp = np.zeros(n + 1, dtype=np.int64)
    F = np.full(n + 1, NEG, dtype=np.int64)
    for r in range(1, a.shape[0] + 1):
        row = M[a[r - 1]]
        for c in range(1, n + 1):
            f = max(F[c] - ext, H[c] - goe)
            F[c] = f
            Hp[c] = max(max(H[c - 1] + row[b[c - 1]], f), 0)
        e = NEG
        best = 0
        for c in range(1, n + 1):
            e = max(e - ext, Hp[c - 1] - goe)
            h = max(Hp[c], e)
            H[c] = h
            best = max(best, h)
        if best >= target:
            for c in range(1, n + 1):
                if H[c] == target:
                    return r, c
    return -1, -1


def find_end(q, s, M, goe, ext, target):
    """(i, j), 1-based: the end with the smallest subject position, then the smallest query
    position, among cells whose local score is ``target``; (-1, -1) if none."""
    j, i = _first_row_major(s, q, np.ascontiguousarray(M.T), goe, ext, target)
    return i, j


LANES = 16      # subjects per lane kernel call: 16 x int32 = one AVX-512 register, two AVX2 ones


@njit(cache=True, nogil=True, boundscheck=False)
def find_ends_lanes(q, subs, lens, M32, goe, ext, targets, out):
    """Ends of LANES pairs at once (one query, LANES subjects), same rule as :func:`find_end`.

    ``subs`` (LANES, maxlen) uint8 subject codes (padding: any code), ``lens`` their lengths,
    ``targets`` their scores (<= 0: skipped), ``out`` (LANES, 2) receives 1-based (i, j) or -1.
    Columns (subject positions) are the outer loop and the lanes the inner one, so every cell
    operation is one vector operation over the LANES subjects; a column's substitution scores
    come from a (codes x LANES) table built once per column.
    """
    m = q.shape[0]
    maxlen = subs.shape[1]
    na = M32.shape[0]
    low = np.int32(-(1 << 28))
    H = np.zeros((m, LANES), dtype=np.int32)
    E = np.empty((m, LANES), dtype=np.int32)   # then a scalar fill: np.full would be one more
    E[:, :] = low                               # numba overload to compile on a fresh machine
    P = np.empty((na, LANES), dtype=np.int32)
    diag = np.zeros(LANES, dtype=np.int32)
    f = np.zeros(LANES, dtype=np.int32)
    best = np.zeros(LANES, dtype=np.int32)
    g = np.int32(goe)
    x = np.int32(ext)
    zero = np.int32(0)
    done = np.zeros(LANES, dtype=np.bool_)
    ndone = 0
    for lane in range(LANES):
        out[lane, 0] = -1
        out[lane, 1] = -1
        if lens[lane] <= 0 or targets[lane] <= 0:
            done[lane] = True
            ndone += 1
    for j in range(maxlen):
        if ndone == LANES:
            break
        for a in range(na):
            for lane in range(LANES):
                P[a, lane] = M32[a, subs[lane, j]]
        for lane in range(LANES):
            diag[lane] = 0
            f[lane] = low
            best[lane] = 0
        for i in range(m):
            qi = q[i]
            for lane in range(LANES):
                # int32 throughout (numba widens int32 arithmetic to int64 unless told), so that
                # the lane loop compiles to packed 32-bit vector instructions
                hv = H[i, lane]
                e = max(np.int32(E[i, lane] - x), np.int32(hv - g))
                h = max(max(np.int32(diag[lane] + P[qi, lane]), e), max(f[lane], zero))
                f[lane] = max(np.int32(f[lane] - x), np.int32(h - g))
                diag[lane] = hv
                H[i, lane] = h
                E[i, lane] = e
                best[lane] = max(best[lane], h)
        for lane in range(LANES):
            if not done[lane] and best[lane] >= targets[lane]:
                for i in range(m):
                    if H[i, lane] == targets[lane]:
                        out[lane, 0] = i + 1
                        out[lane, 1] = j + 1
                        break
                done[lane] = True
                ndone += 1


@njit(cache=True, nogil=True)
def find_start(q, s, M, goe, ext, iend, jend, target):
    """(i, j), 1-based, where an alignment ending at (iend, jend) with score ``target`` starts:
    an anchored pass (no restarts) over the reversed prefixes, rows = query positions from
    iend down, first cell in that order: the largest query start, then the largest subject
    start. Same two-step rows as :func:`_first_row_major`."""
    n = jend
    H = np.full(n + 1, NEG, dtype=np.int64)
    Hp = np.full(n + 1, NEG, dtype=np.int64)
    F = np.full(n + 1, NEG, dtype=np.int64)
    H[0] = 0
    for r in range(1, iend + 1):
        row = M[q[iend - r]]
        for c in range(1, n + 1):
            f = max(F[c] - ext, H[c] - goe)
            F[c] = f
            Hp[c] = max(H[c - 1] + row[s[jend - c]], f)
        H[0] = NEG
        e = NEG
        found = -1
        for c in range(1, n + 1):
            e = max(e - ext, Hp[c - 1] - goe)
            h = max(Hp[c], e)
            H[c] = h
            if h == target and found < 0:
                found = c
        if found > 0:
            return iend - r + 1, jend - found + 1
    return -1, -1


@njit(cache=True, nogil=True)
def _block(q, s, M, goe, ext, r0, r1, Hc, Fc, D):
    """Recompute rows r0+1..r1 of the global DP from checkpoint row r0 (H, F), writing the
    direction byte of every cell into D[i - r0 - 1, j]; leaves row r1 in Hc/Fc."""
    n = s.shape[0]
    for i in range(r0 + 1, r1 + 1):
        row = M[q[i - 1]]
        diag = Hc[0]
        border = -(goe + (i - 1) * ext)
        Hc[0] = border
        Fc[0] = border
        left = border
        e = NEG
        d = D[i - r0 - 1]
        for j in range(1, n + 1):
            eo = left - goe
            ee = e - ext
            flags = 0
            if eo >= ee:
                e = eo
            else:
                e = ee
                flags |= 4
            up = Hc[j]
            fo = up - goe
            fe = Fc[j] - ext
            if fo >= fe:
                f = fo
            else:
                f = fe
                flags |= 8
            Fc[j] = f
            h = diag + row[s[j - 1]]
            src = 0
            if e > h:
                h = e
                src = 1
            if f > h:
                h = f
                src = 2
            diag = up
            Hc[j] = h
            left = h
            d[j] = flags | src


@njit(cache=True, nogil=True)
def global_path(q, s, M, goe, ext, budget):
    """(score, ops reversed) of an optimal global alignment of q and s (checkpointed traceback)."""
    m, n = q.shape[0], s.shape[0]
    k = max(1, min(m, budget // (n + 1)))
    nck = (m + k - 1) // k
    CH = np.empty((nck, n + 1), dtype=np.int64)
    CF = np.empty((nck, n + 1), dtype=np.int64)
    Hc = np.empty(n + 1, dtype=np.int64)
    Fc = np.full(n + 1, NEG, dtype=np.int64)
    Hc[0] = 0
    for j in range(1, n + 1):
        Hc[j] = -(goe + (j - 1) * ext)
    D = np.empty((k, n + 1), dtype=np.uint8)
    # row copies are loops: an array-to-slice assignment makes numba compile a costly error
    # path (its shape message), most of this function's first-run compile time
    for b in range(nck):                       # forward: keep the first row of each block
        for j in range(n + 1):
            CH[b, j] = Hc[j]
            CF[b, j] = Fc[j]
        r0 = b * k
        _block(q, s, M, goe, ext, r0, min(m, r0 + k), Hc, Fc, D)
    score = Hc[n]
    ops = np.empty(m + n, dtype=np.uint8)
    nops = 0
    i, j, state = m, n, 0
    b = nck - 1
    while i > 0 and j > 0:
        r0 = b * k
        for j0 in range(n + 1):
            Hc[j0] = CH[b, j0]
            Fc[j0] = CF[b, j0]
        _block(q, s, M, goe, ext, r0, min(m, r0 + k), Hc, Fc, D)
        while i > r0 and j > 0:
            d = D[i - r0 - 1, j]
            if state == 0:
                src = d & 3
                if src == 0:
                    ops[nops] = 0
                    nops += 1
                    i -= 1
                    j -= 1
                else:
                    state = src
            elif state == 1:
                ops[nops] = 2
                nops += 1
                state = 1 if d & 4 else 0
                j -= 1
            else:
                ops[nops] = 1
                nops += 1
                state = 2 if d & 8 else 0
                i -= 1
        b -= 1
    while i > 0:
        ops[nops] = 1
        nops += 1
        i -= 1
    while j > 0:
        ops[nops] = 2
        nops += 1
        j -= 1
    return score, ops[:nops]


def align_pair(q, s, M, gap_open, gap_extend, score, budget=CELL_BUDGET):
    """Exact optimal local alignment of code arrays ``q``, ``s`` whose SW score is ``score``.

    Returns (qstart, sstart, ops) with 1-based starts and ``ops`` (np.uint8, in alignment
    order) of OP_M / OP_I / OP_D; score 0 gives an empty alignment at (0, 0). Raises
    ValueError if ``score`` is not the pair's Smith-Waterman score.
    """
    q = np.ascontiguousarray(q, dtype=np.uint8)
    s = np.ascontiguousarray(s, dtype=np.uint8)
    M = np.ascontiguousarray(M, dtype=np.int64)
    goe, ext = int(gap_open) + int(gap_extend), int(gap_extend)
    if score <= 0:
        return 0, 0, np.zeros(0, dtype=np.uint8)
    ie, je = find_end(q, s, M, goe, ext, int(score))
    if ie < 0:
        raise ValueError(f"no cell reaches score {score}: not this pair's Smith-Waterman score")
    i0, j0 = find_start(q, s, M, goe, ext, ie, je, int(score))
    if i0 < 0:
        raise ValueError(f"internal error: no start reaches score {score} from ({ie}, {je})")
    got, rops = global_path(q[i0 - 1:ie], s[j0 - 1:je], M, goe, ext, int(budget))
    if got != score:
        raise ValueError(f"internal error: global path scores {got}, expected {score}")
    ops = rops[::-1]
    # Free end gaps can only occur with zero gap costs; drop them (the score is unchanged).
    a, b = 0, len(ops)
    while a < b and ops[a] != OP_M:
        i0, j0 = (i0 + 1, j0) if ops[a] == OP_I else (i0, j0 + 1)
        a += 1
    while b > a and ops[b - 1] != OP_M:
        b -= 1
    return i0, j0, ops[a:b].copy()


@njit(cache=True, nogil=True)
def count_ops(q, s, qstart, sstart, ops, M):
    """(nident, positive, gaps, gapopen, score) of an alignment given by its ops (positives: pairs
    scoring > 0; gap openings counted per run of one kind, as BLAST+ counts them)."""
    i, j = qstart - 1, sstart - 1
    nident = positive = gaps = opens = 0
    prev = -1
    for k in range(ops.shape[0]):
        op = ops[k]
        if op == 0:
            a, b = q[i], s[j]
            if a == b:
                nident += 1
            if M[a, b] > 0:
                positive += 1
            i += 1
            j += 1
        else:
            gaps += 1
            if op != prev:
                opens += 1
            if op == 1:
                i += 1
            else:
                j += 1
        prev = op
    return nident, positive, gaps, opens


def ops_strings(q, s, qstart, sstart, ops, letters):
    """Aligned strings (query, subject) of an alignment from its ops; ``letters[code]`` = letter."""
    lut = np.frombuffer(letters.encode("ascii") + b"-", dtype=np.uint8)
    gap = len(letters)
    qi = np.cumsum(ops != OP_D) - 1 + (qstart - 1)
    si = np.cumsum(ops != OP_I) - 1 + (sstart - 1)
    qc = np.where(ops == OP_D, gap, np.asarray(q)[np.clip(qi, 0, None)] if len(q) else gap)
    sc = np.where(ops == OP_I, gap, np.asarray(s)[np.clip(si, 0, None)] if len(s) else gap)
    return lut[qc].tobytes().decode("ascii"), lut[sc].tobytes().decode("ascii")


def rescore(qseq: str, sseq: str, M, letters, gap_open, gap_extend) -> int:
    """Score of an alignment given as aligned strings (BLAST gap convention)."""
    lut = {ch: i for i, ch in enumerate(letters)}
    total, prev = 0, None
    for a, b in zip(qseq, sseq):
        kind = "I" if b == "-" else ("D" if a == "-" else "M")
        if kind == "M":
            total += int(M[lut[a], lut[b]])
        else:
            total -= gap_extend if kind == prev else gap_open + gap_extend
        prev = kind
    return total
