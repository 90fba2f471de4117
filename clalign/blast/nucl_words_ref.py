"""Plain Python statement of the BLASTN word finder of one subject (what :mod:`nucl_words`
compiles), built from the reference pieces: the tables of :mod:`nucl_lookup` (``table_offsets``),
the extenders of :mod:`nucl_extend`, the ungapped extenders of :mod:`nucl_ungapped`.

The diagonal store is a dict ``diagonal -> end of its last extension`` when the batch is at
most 8000 bases (BLAST+'s folded array behaves as one cell per diagonal there: diagonals that
share a cell are at least a query length apart, so their hits never overlap), or a plain
model of BLAST+'s 512-bucket hash (:class:`DiagHash`) above.
"""
from __future__ import annotations

from .nucl_extend import (choose_extend, na_extend, small_na_extend, small_na_extend_aligned,
                          subject_base)
from .nucl_lookup import table_offsets
from .nucl_ungapped import ungapped_approx, ungapped_exact
from .nucl_words import DIAGHASH_MUL, DIAGHASH_NUM_BUCKETS, QUERY_LEN_FOR_HASH


class DiagHash:
    """``s_BlastDiagHashRetrieve``/``Insert``: chains of cells per bucket, newest first; a cell of
    another diagonal whose end lies before ``s_off + word - 1`` is stale and reused in place."""

    def __init__(self):
        self.buckets = [[] for _ in range(DIAGHASH_NUM_BUCKETS)]   # lists of [diag, level]

    @staticmethod
    def bucket(diag):
        return ((diag & 0xFFFFFFFF) * DIAGHASH_MUL & 0xFFFFFFFF) % DIAGHASH_NUM_BUCKETS

    def get(self, diag):
        for cell in self.buckets[self.bucket(diag)]:
            if cell[0] == diag:
                return cell[1]
        return 0

    def put(self, diag, level, s_off_pos, word):
        chain = self.buckets[self.bucket(diag)]
        for cell in chain:
            if cell[0] == diag or s_off_pos - cell[1] > 1 - word:
                cell[0], cell[1] = diag, level
                return
        chain.insert(0, [diag, level])


def _context(batch, pos):
    k = 0
    for c, off in enumerate(batch.offsets.tolist()):
        if off <= pos:
            k = c
    return k


def _in_table(table, s, s_pos, width, q_pos):
    code = 0
    for i in range(s_pos, s_pos + width):
        code = (code << 2) | subject_base(s, i)
    return q_pos in table_offsets(table, code)


def type_of_word(batch, table, s, s_range, q_off, s_off, word):
    """``s_TypeOfWord`` for one word (masks checked): None or (q_off, s_off, extended)."""
    w = table.width
    q_end, s_end = q_off + word, s_off + word
    c = _context(batch, q_end)
    q_range = int(batch.offsets[c] + batch.lengths[c])
    if not _in_table(table, s, s_end - w, w, q_end - w):
        return None
    while not _in_table(table, s, s_off, w, q_off):
        q_off, s_off = q_off + 1, s_off + 1
    ext_to = word - (q_end - q_off)
    if ext_to > min(q_range - q_end, s_range - s_end):
        return None
    q_end, s_end = q_end + ext_to, s_end + ext_to
    s_pos, q_pos = s_end - w, q_end - w
    while s_pos > s_off:
        if not _in_table(table, s, s_pos, w, q_pos):
            return None
        s_pos, q_pos = s_pos - w, q_pos - w
    return q_off, s_off, ext_to


def word_finder_ref(pairs, batch, table, kind, s, s_len, word, cutoff, xdrop, reduced, matrix,
                    score_table, cq, store=None):
    """Saved hits (q_off, s_off, q_start, s_start, length, score, context) of the lookup hits
    ``pairs`` of one subject, in processing order. ``store``: a dict or :class:`DiagHash` kept
    across subjects by the caller (positions then carry the caller's subject offset 0 here)."""
    if store is None:
        store = DiagHash() if len(batch.seq) > QUERY_LEN_FOR_HASH else {}
    hashed = isinstance(store, DiagHash)
    w = table.width
    ext = choose_extend(kind, w, word, table.scan_step)
    out = []
    for q0, s0 in pairs:
        c0 = _context(batch, q0)
        a, n = int(batch.offsets[c0]), int(batch.lengths[c0])
        if ext == "direct":
            r = (q0, s0)
        elif ext in ("generic", "aligned"):
            r = na_extend(batch.seq, s, q0, s0, w, word, s_len)
        elif ext == "small":
            r = small_na_extend(cq, s, q0, s0, w, word, s_len, a, a + n)
        else:
            r = small_na_extend_aligned(cq, s, q0, s0, w, word, s_len, a, a + n, len(batch.seq))
        if r is None:
            continue
        qo, so = r
        diag = so - qo
        last = store.get(diag) if hashed else store.get(diag, 0)
        if so < last:
            continue
        s_end = so + word
        if word > w:
            t = type_of_word(batch, table, s, s_len, qo, so, word)
            if t is None:
                continue
            qo, so, extended = t
            s_end += extended
        c = _context(batch, qo)
        if word < 11:
            u = ungapped_exact(batch.seq, s, s_len, matrix, qo, so, -int(xdrop[c]))
        else:
            u = ungapped_approx(batch.seq, s, s_len, matrix, score_table, qo, s_end, so,
                                -int(xdrop[c]), int(reduced[c]))
        end = s_end
        if u[3] >= cutoff[c]:
            out.append((qo, so, u[0], u[1], u[2], u[3], c))
            end = u[1] + u[2]
        if hashed:
            store.put(diag, end, r[1], word)
        else:
            store[diag] = end
    return out
