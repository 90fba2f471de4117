"""BLASTN word finder of one subject, compiled: mini-extension, diagonal bookkeeping, ungapped.

The rules of BLAST+ 2.12's ``na_ungapped.c`` for one-hit blastn/megablast (window 0), in
scan order (:mod:`clalign.blast.nucl_scan`), each lookup hit:

1. **mini-extension** to a full word by the table's extender (``direct``, ``generic`` =
   ``s_BlastNaExtend``/aligned, ``small``, ``small_aligned``; see :mod:`nucl_extend`);
2. **diagonal test** (``s_BlastnDiag{Table,Hash}ExtendInitialHit``): a word starting before the
   end of the last extension on its diagonal is dropped. The diagonal store is BLAST+'s: an
   array of ``2^k >= query length`` cells (diagonals folded modulo its size) when the batch is
   at most 8000 bases long, else BLAST+'s 512-bucket hash whose stale cells are reused
   (``s_BlastDiagHashInsert``); both keep positions plus a running subject offset, so they
   live across subjects;
3. **word check** (``s_TypeOfWord``, when ``word > width``): the lookup word ending the hit
   must be in the table at its query offset; the start moves right past words that are not
   (masked), the word then is re-extended right by as many bases, each ``width`` step checked;
4. **ungapped extension**: exact (word < 11) or byte-wise approximate with exact redo at 0.8
   of the cutoff (:mod:`nucl_ungapped`), X-drop and cutoff of the hit's context; a hit at or
   above the cutoff is saved; the diagonal's end becomes the extension's (or the word's) end.

Saved hits are sorted as ``Blast_InitHitListSortByScore`` (score desc, s_start, length desc,
q_start). The plain references are the functions of :mod:`nucl_extend`, :mod:`nucl_ungapped`
and :func:`word_finder_ref`, which states steps 2-4 over Python dicts.
"""
from __future__ import annotations

from ..runtime.jit import njit
import numpy as np

DIRECT, GENERIC, SMALLX, SMALL_ALIGNED = 0, 1, 2, 3
EXTENDERS = {"direct": DIRECT, "generic": GENERIC, "aligned": GENERIC, "small": SMALLX,
             "small_aligned": SMALL_ALIGNED}
QUERY_LEN_FOR_HASH = 8000        # kQueryLenForHashTable
DIAGHASH_NUM_BUCKETS = 512
DIAGHASH_MUL = 0x9E370001        # s_BlastDiagHash{Retrieve,Insert}'s bucket hash
EXACT_WORD_BELOW = 11            # words shorter than this are extended exactly only
INT4_MAX = 2147483647


class DiagState:
    """BLAST+'s diagonal store of one search (lives across subjects)."""

    def __init__(self, query_length: int):
        self.hash = query_length > QUERY_LEN_FOR_HASH
        n = 1
        while n < query_length:
            n <<= 1
        self.length = n
        self.offset = np.zeros(1, dtype=np.int64)           # window 0
        if self.hash:
            self.level = np.zeros(1, dtype=np.int64)          # placeholder
            self.backbone = np.zeros(DIAGHASH_NUM_BUCKETS, dtype=np.int64)
            cap = 1024
            self.c_diag = np.zeros(cap, dtype=np.int64)
            self.c_level = np.zeros(cap, dtype=np.int64)
            self.c_next = np.zeros(cap, dtype=np.int64)
            self.occ = np.ones(1, dtype=np.int64)
        else:
            self.level = np.zeros(n, dtype=np.int64)
            self.backbone = np.zeros(1, dtype=np.int64)
            self.c_diag = self.c_level = self.c_next = np.zeros(1, dtype=np.int64)
            self.occ = np.ones(1, dtype=np.int64)

    def grow(self):
        for name in ("c_diag", "c_level", "c_next"):
            a = getattr(self, name)
            setattr(self, name, np.concatenate([a, np.zeros_like(a)]))

    def exit_subject(self, s_len: int):
        """``Blast_ExtendWordExit``."""
        if self.offset[0] >= INT4_MAX // 4:
            self.offset[0] = 0
            if self.hash:
                self.occ[0] = 1
                self.backbone[:] = 0
            else:
                self.level[:] = 0
        else:
            self.offset[0] += s_len


@njit(cache=True, nogil=True)
def _sbase(s, i):
    return (s[i >> 2] >> (6 - 2 * (i & 3))) & 3


@njit(cache=True, nogil=True)
def _sbyte(s, k):
    return s[k] if k < s.size else 0


@njit(cache=True, nogil=True)
def _q(q, i):
    return q[i] if 0 <= i < q.size else 15


@njit(cache=True, nogil=True)
def _context_of(ctx_off, pos):
    """BSearchContextInfo: the last context starting at or before ``pos``."""
    lo, hi = 0, ctx_off.size
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ctx_off[mid] <= pos:
            lo = mid
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def _left_matches(x):
    k = 0
    while k < 4 and (x >> (2 * k)) & 3 == 0:
        k += 1
    return k


@njit(cache=True, nogil=True)
def _right_matches(x):
    k = 0
    while k < 4 and (x >> (6 - 2 * k)) & 3 == 0:
        k += 1
    return k


@njit(cache=True, nogil=True)
def _mini_extend(ext, q, cq, s, s_range, q_off, s_off, width, word, ctx_off, ctx_len):
    """Word start (q, s) or (-1, -1)."""
    if ext == DIRECT:
        return q_off, s_off
    if ext == GENERIC:
        ext_to = word - width
        left = 0
        lim = min(ext_to, s_off)
        while left < lim:
            if _sbase(s, s_off - 1 - left) != _q(q, q_off - 1 - left):
                break
            left += 1
        if left < ext_to:
            need = ext_to - left
            if s_off + width + need > s_range:
                return -1, -1
            right = 0
            while right < need:
                if _sbase(s, s_off + width + right) != _q(q, q_off + width + right):
                    break
                right += 1
            if left + right < ext_to:
                return -1, -1
        return q_off - left, s_off - left
    c = _context_of(ctx_off, q_off)
    c0, c1 = ctx_off[c], ctx_off[c] + ctx_len[c]
    if ext == SMALLX:
        ext_max = min(word - width, s_off, q_off - c0)
        rsdl = 4 - s_off % 4
        so0, qo0 = s_off + rsdl, q_off + rsdl
        ext_max += rsdl
        left, so, qo = 0, so0, qo0
        while left < ext_max:
            b = _left_matches(cq[3 + qo - 4] ^ _sbyte(s, so // 4 - 1))
            left += b
            if b < 4:
                break
            qo -= 4
            so -= 4
        left = min(left, ext_max)
        ext_max = min(word - left, s_range - so0, c1 - qo0)
        right, so, qo = 0, so0, qo0
        while right < ext_max:
            b = _right_matches(cq[3 + qo] ^ _sbyte(s, so // 4))
            right += b
            if b < 4:
                break
            qo += 4
            so += 4
        right = min(right, ext_max)
        if left + right < word:
            return -1, -1
        return qo0 - left, so0 - left
    ext_to = word - width
    left = 0
    if s_off > 0 and q_off > 0:
        left = _left_matches(cq[3 + q_off - 4] ^ _sbyte(s, s_off // 4 - 1))
        left = min(left, ext_to, q_off - c0)
    if left < ext_to and q_off + width < q.size:
        right = _right_matches(cq[3 + q_off + width] ^ _sbyte(s, (s_off + width) // 4))
        right = min(right, s_range - (s_off + width), c1 - (q_off + width))
        if left + right < ext_to:
            return -1, -1
    return q_off - left, s_off - left


@njit(cache=True, nogil=True)
def _in_table(cell_start, q_offs, s, s_pos, width, q_pos):
    """``s_IsSeedMasked`` negated: the subject word at ``s_pos`` is indexed at ``q_pos``."""
    code = 0
    for i in range(s_pos, s_pos + width):
        code = (code << 2) | _sbase(s, i)
    for k in range(cell_start[code], cell_start[code + 1]):
        if q_offs[k] == q_pos:
            return True
    return False


@njit(cache=True, nogil=True)
def _type_of_word(q_off, s_off, cell_start, q_offs, s, s_range, word, width, ctx_off, ctx_len):
    """``s_TypeOfWord`` (single word, masks on): (ok, q_off, s_off, extended)."""
    q_end = q_off + word
    s_end = s_off + word
    c = _context_of(ctx_off, q_end)
    q_range = ctx_off[c] + ctx_len[c]
    if not _in_table(cell_start, q_offs, s, s_end - width, width, q_end - width):
        return False, q_off, s_off, 0
    while not _in_table(cell_start, q_offs, s, s_off, width, q_off):
        s_off += 1
        q_off += 1
    ext_to = word - (q_end - q_off)
    ext_max = min(q_range - q_end, s_range - s_end)
    if ext_to > ext_max:
        return False, q_off, s_off, 0
    q_end += ext_to
    s_end += ext_to
    s_pos, q_pos = s_end - width, q_end - width
    while s_pos > s_off:
        if not _in_table(cell_start, q_offs, s, s_pos, width, q_pos):
            return False, q_off, s_off, 0
        s_pos -= width
        q_pos -= width
    return True, q_off, s_off, ext_to


@njit(cache=True, nogil=True)
def _ungapped_exact(q, s, s_len, matrix, q_off, s_off, X):
    score = 0
    total = 0
    q_beg = q_off
    left_bound = s_off - q_off if q_off < s_off else 0
    p = s_off
    while p > left_bound:
        p -= 1
        qi = q_off - (s_off - p)
        total += matrix[_q(q, qi), _sbase(s, p)]
        if total > 0:
            q_beg = qi
            score += total
            total = 0
        elif total < X:
            break
    s_start = s_off - (q_off - q_beg)
    end = s_off + min(q.size - q_off, s_len - s_off)
    total = 0
    q_end = q_off
    p = s_off
    x_now = X           # right side: the drop-off never exceeds the score so far
    while p < end:
        qi = q_off + (p - s_off)
        total += matrix[_q(q, qi), _sbase(s, p)]
        p += 1
        if total > 0:
            q_end = qi + 1
            score += total
            x_now = max(-score, X)
            total = 0
        elif total < x_now:
            break
    return q_beg, s_start, q_end - q_beg, score


@njit(cache=True, nogil=True)
def _qbyte(q, i):
    return ((_q(q, i) << 6) | (_q(q, i + 1) << 4) | (_q(q, i + 2) << 2) | _q(q, i + 3)) & 0xFF


@njit(cache=True, nogil=True)
def _ungapped_approx(q, s, s_len, matrix, table, q_off, s_match_end, s_off, X, reduced):
    pad = (4 - s_off % 4) % 4
    q_ext, s_ext = q_off + pad, s_off + pad
    score = 0
    total = 0
    new_q = q_ext
    qp, sb = q_ext, s_ext // 4
    for _ in range(min(q_ext, s_ext) // 4):
        total += table[_qbyte(q, qp - 4) ^ s[sb - 1]]
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
    for _ in range(min(q.size - q_ext, s_len - s_ext) // 4):
        total += table[_qbyte(q, qp) ^ s[sb]]
        if total > 0:
            new_q = qp + 3
            score += total
            total = 0
        if total < X:
            break
        qp += 4
        sb += 1
    if score >= reduced:
        return _ungapped_exact(q, s, s_len, matrix, q_off, s_off, X)
    return q_start, s_start, max(s_match_end - s_start, new_q - q_start + 1), score


@njit(cache=True, nogil=True)
def _hash_bucket(diag):
    return ((diag & 0xFFFFFFFF) * DIAGHASH_MUL & 0xFFFFFFFF) % DIAGHASH_NUM_BUCKETS


@njit(cache=True, nogil=True)
def word_finder(hq, hs, first, nhits, ext, q, cq, s, s_len, cell_start, q_offs, width, word,
                ctx_off, ctx_len, cutoff, xdrop, reduced, exact, matrix, table,
                use_hash, level, dlen, offset, backbone, c_diag, c_level, c_next, occ, out):
    """Process lookup hits ``first..nhits-1`` of one subject, writing saved hits as rows
    (q_off, s_off, q_start, s_start, length, score, context) of ``out``. Returns (rows
    written, resume): resume -1 = all done, else the hit to resume at once ``out`` or the
    hash chain (whichever is full) has grown."""
    n = 0
    s_range = s_len
    check = word > width
    for i in range(first, nhits):
        if (use_hash and occ[0] + 2 >= c_diag.size) or n >= out.shape[0]:
            return n, i
        qo, so = _mini_extend(ext, q, cq, s, s_range, hq[i], hs[i], width, word, ctx_off, ctx_len)
        if qo < 0:
            continue
        s_end = so + word
        s_off_pos = so + offset
        s_end_pos = s_end + offset
        if use_hash:
            diag = so - qo
            b = _hash_bucket(diag)
            last = 0
            k = backbone[b]
            while k:
                if c_diag[k] == diag:
                    last = c_level[k]
                    break
                k = c_next[k]
        else:
            rd = (so + dlen - qo) & (dlen - 1)
            last = level[rd]
        if s_off_pos < last:
            continue
        if check:
            ok, qo, so, extended = _type_of_word(qo, so, cell_start, q_offs, s, s_range, word,
                                                 width, ctx_off, ctx_len)
            if not ok:
                continue
            s_end += extended
            s_end_pos += extended
        c = _context_of(ctx_off, qo)
        if exact:
            r = _ungapped_exact(q, s, s_len, matrix, qo, so, -xdrop[c])
        else:
            r = _ungapped_approx(q, s, s_len, matrix, table, qo, s_end, so, -xdrop[c], reduced[c])
        if r[3] >= cutoff[c]:
            out[n, 0] = qo
            out[n, 1] = so
            out[n, 2] = r[0]
            out[n, 3] = r[1]
            out[n, 4] = r[2]
            out[n, 5] = r[3]
            out[n, 6] = c
            n += 1
            s_end_pos = r[2] + r[1] + offset
        if use_hash:
            diag = so - qo
            b = _hash_bucket(diag)
            k = backbone[b]
            done = False
            while k:
                if c_diag[k] == diag or s_off_pos - c_level[k] > 1 - word:
                    c_diag[k] = diag
                    c_level[k] = s_end_pos
                    done = True
                    break
                k = c_next[k]
            if not done:
                k = occ[0]
                c_diag[k] = diag
                c_level[k] = s_end_pos
                c_next[k] = backbone[b]
                backbone[b] = k
                occ[0] = k + 1
        else:
            level[(so + dlen - qo) & (dlen - 1)] = s_end_pos
    return n, -1


@njit(cache=True, nogil=True)
def compress_query_nb(q):
    """:func:`nucl_extend.compress_query` (its spec) in one compiled pass: byte ``3 - m + i``
    (m = min(3, n)) packs bases i-3..i (``code & 3``, 0 outside the query); a query batch of
    100,000 reads took ~2 s in numpy temporaries."""
    n = q.shape[0]
    m = min(3, n)
    out = np.zeros(n + 3, dtype=np.uint8)
    x = 0
    for i in range(n + m):
        b = q[i] & 3 if i < n else 0
        x = ((x << 2) | b) & 0xFF
        out[3 - m + i] = x
    return out


@njit(cache=True, nogil=True)
def _compress_range(q, out, lo, hi):
    """Steps ``lo:hi`` of :func:`compress_query_nb`'s loop (a byte packs the last four bases
    only, so the three before ``lo`` are read again)."""
    n = q.shape[0]
    m = min(3, n)
    x = 0
    for i in range(max(0, lo - 3), hi):
        b = q[i] & 3 if i < n else 0
        x = ((x << 2) | b) & 0xFF
        if i >= lo:
            out[3 - m + i] = x


def compress_query_threads(q, threads: int = 1):
    """:func:`compress_query_nb` in ranges of its steps on ``threads`` threads (same bytes)."""
    from .nucl_setup import on_threads

    q = np.asarray(q, dtype=np.uint8)
    n = q.shape[0]
    out = np.zeros(n + 3, dtype=np.uint8)
    on_threads(lambda lo, hi: _compress_range(q, out, lo, hi),
               n + min(3, n), threads)
    return out
