"""The BLASTN scan and word finder against plain references: flat lookup = each table's own
offsets (and order), compiled scan = plain scan (buffer refills included), compiled word finder
(mini-extension, diagonal array/hash, s_TypeOfWord, ungapped) = nucl_words_ref, on planted hits
crossing 2-bit byte boundaries, context boundaries and subject ends, for every table kind."""
import numpy as np
import pytest

from clalign.blast.nucl_extend import choose_extend, compress_query
from clalign.blast.nucl_lookup import (MEGABLAST, SMALL, STANDARD, QueryBatch, build_megablast,
                                       build_small, build_standard, indexed_words, table_offsets)
from clalign.blast.nucl_scan import flat_lookup, scan_subject, scan_subject_ref
from clalign.blast.nucl_search import word_hits
from clalign.blast.nucl_ungapped import nucl_score_table
from clalign.blast.nucl_words import DiagState
from clalign.blast.nucl_words_ref import DiagHash, word_finder_ref
from clalign.data.nucleotide import blastna_matrix

COMP = np.array([3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 13, 12, 11, 10, 14, 15], dtype=np.uint8)


def _pack(b):
    b = np.concatenate([b, np.zeros((-len(b)) % 4, dtype=np.uint8)])
    return (b[0::4] << 6 | b[1::4] << 4 | b[2::4] << 2 | b[3::4]).astype(np.uint8)


def _batch(rng, n_queries, qlen):
    qs, masks = [], []
    for _ in range(n_queries):
        q = rng.integers(0, 4, qlen).astype(np.uint8)
        q[rng.random(qlen) < 0.01] = 14                     # N
        q[rng.random(qlen) < 0.005] = 4                     # R
        qs.append(q)
        a = int(rng.integers(0, qlen - 40))
        masks.append([(a, a + int(rng.integers(5, 40)))])   # a masked stretch per query
    return QueryBatch.build(qs, masks), qs


def _subject(rng, batch, n):
    """Random subject with pieces of the batch's contexts (mutated) planted, one at each end."""
    s = rng.integers(0, 4, n).astype(np.uint8)
    for k in range(8):
        c = int(rng.integers(0, len(batch.offsets)))
        a, L = int(batch.offsets[c]), int(batch.lengths[c])
        m = int(rng.integers(30, 120))
        qa = int(rng.integers(0, L - m))
        sa = 0 if k == 0 else n - m if k == 1 else int(rng.integers(0, n - m))
        piece = batch.seq[a + qa:a + qa + m].copy()
        piece[piece > 3] = rng.integers(0, 4, int((piece > 3).sum()))
        piece[rng.random(m) < 0.02] = rng.integers(0, 4)
        s[sa:sa + m] = piece
    return s


CASES = [  # kind, width, word
    (SMALL, 8, 11), (SMALL, 7, 10), (SMALL, 7, 7), (STANDARD, 8, 12), (STANDARD, 6, 8),
    (MEGABLAST, 12, 28), (MEGABLAST, 11, 16), (MEGABLAST, 10, 10),
]


def _table(batch, kind, width, word):
    if kind == MEGABLAST:
        e, _ = batch.estimate_entries()
        return build_megablast(batch.seq, batch.segments, width, word, e)
    words = indexed_words(batch.seq, batch.segments, width, word)
    return (build_small if kind == SMALL else build_standard)(words, width, word)


@pytest.mark.parametrize("kind,width,word", CASES)
def test_flat_lookup_is_the_table(kind, width, word):
    rng = np.random.default_rng(width * 100 + word)
    batch, _ = _batch(rng, 2, 300)
    table = _table(batch, kind, width, word)
    flat = flat_lookup(batch, table, word)
    codes = {c for c, _ in indexed_words(batch.seq, batch.segments, width, word)}
    codes |= set(rng.integers(0, 1 << (2 * width), 3000).tolist())
    for code in sorted(codes):
        got = flat.q_offs[flat.cell_start[code]:flat.cell_start[code + 1]].tolist()
        assert got == table_offsets(table, code)


@pytest.mark.parametrize("kind,width,word", CASES)
def test_scan_equals_reference(kind, width, word):
    rng = np.random.default_rng(word)
    batch, _ = _batch(rng, 2, 200)
    flat = flat_lookup(batch, _table(batch, kind, width, word), word)
    for n in (width - 1, width, width + 3, 257, 1001):
        sb = _subject(rng, batch, max(n, 200))[:n]
        s = np.concatenate([_pack(sb), np.zeros(2, dtype=np.uint8)])
        want = scan_subject_ref(flat, s, n)
        got, off = [], 0
        hq, hs = np.empty(8, dtype=np.int64), np.empty(8, dtype=np.int64)  # tiny buffer: refills
        while off <= n - width:
            k, off = scan_subject(flat.cell_start, flat.q_offs, width, flat.scan_step, s, n, off, hq, hs)
            got += list(zip(hq[:k].tolist(), hs[:k].tolist()))
        assert got == want


@pytest.mark.parametrize("kind,width,word", CASES)
@pytest.mark.parametrize("hashed", [False, True])
def test_word_finder_equals_reference(kind, width, word, hashed):
    rng = np.random.default_rng(7 * word + width + hashed)
    batch, _ = _batch(rng, 3, 2900 if hashed else 400)
    table = _table(batch, kind, width, word)
    flat = flat_lookup(batch, table, word)
    ext = choose_extend(kind, width, word, table.scan_step)
    matrix = blastna_matrix(1, -2).astype(np.int32)   # as the search passes it
    st = nucl_score_table(1, -2)
    nctx = len(batch.offsets)
    cutoff = np.full(nctx, 14, dtype=np.int64)
    xdrop = np.full(nctx, 11, dtype=np.int64)
    reduced = (0.8 * cutoff).astype(np.int64)
    cq = compress_query(batch.seq)
    total = 0
    for n in (203, 1500):
        sb = _subject(rng, batch, n)
        s = _pack(sb)
        diag = DiagState(len(batch.seq))
        assert diag.hash == hashed
        got = word_hits(flat, batch, cq, ext, s, n, cutoff, xdrop, reduced, matrix, st, diag)
        pairs = scan_subject_ref(flat, np.concatenate([s, np.zeros(2, dtype=np.uint8)]), n)
        want = word_finder_ref(pairs, batch, table, kind, np.concatenate([s, np.zeros(2, dtype=np.uint8)]),
                               n, word, cutoff, xdrop, reduced, matrix, st, cq,
                               DiagHash() if hashed else {})
        assert [tuple(r) for r in got.tolist()] == want
        total += len(want)
    assert total > 3


def test_subject_chunks_as_blast():
    from clalign.blast.nucl_search import subject_chunks

    assert subject_chunks(1000) == [(0, 1000)]
    assert subject_chunks(5000000) == [(0, 5000000)]
    assert subject_chunks(5000001) == [(0, 5000000), (4999900, 101)]
    assert subject_chunks(12000000) == [(0, 5000000), (4999900, 5000000), (9999800, 2000200)]


@pytest.mark.parametrize("latest_first", [False, True])
def test_flat_cells_counting_sort(latest_first):
    """The compiled counting sort equals the sort statement (stable by code; within a code
    insertion order, reversed for the megablast table) and counts the small table's overflow."""
    from clalign.blast.nucl_scan import _flat_cells

    rng = np.random.default_rng(3)
    cells = 1 << 8
    codes = rng.integers(0, cells, 3000).astype(np.int64)
    offs = rng.integers(0, 1 << 20, 3000).astype(np.int32)
    q, start, largest, overflow = _flat_cells(codes, offs, cells, latest_first)
    counts = np.bincount(codes, minlength=cells)
    order = (np.lexsort((-np.arange(codes.size), codes)) if latest_first
             else np.argsort(codes, kind="stable"))
    assert np.array_equal(q, offs[order])
    assert np.array_equal(start, np.concatenate([[0], np.cumsum(counts)]))
    assert largest == counts.max() and overflow == int((counts[counts > 1] + 1).sum())
