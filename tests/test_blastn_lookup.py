"""BLASTN lookup tables: BLAST+'s table choice and the three tables against a brute-force index."""
import numpy as np
import pytest

from clalign.blast.nucl_lookup import (MEGABLAST, SMALL, STANDARD, MegablastTable, QueryBatch,
                                       SmallTable, StandardTable, build_lookup, choose_na_lookup,
                                       context_segments, megablast_pv_bts, pv_test, table_offsets)


@pytest.mark.parametrize("word,entries,max_off,want", [
    (28, 8499, 100, (SMALL, 8)), (28, 8500, 100, (MEGABLAST, 11)),
    (28, 299999, 10, (MEGABLAST, 11)), (28, 300000, 10, (MEGABLAST, 12)),
    (11, 11999, 100, (SMALL, 8)), (11, 12000, 100, (MEGABLAST, 10)),
    (11, 180000, 100, (MEGABLAST, 11)), (11, 5000, 40000, (STANDARD, 8)),
    (7, 249, 10, (SMALL, 6)), (7, 250, 10, (SMALL, 7)), (8, 8499, 10, (SMALL, 7)),
    (9, 1249, 10, (SMALL, 7)), (9, 20999, 10, (SMALL, 8)), (9, 21000, 10, (MEGABLAST, 9)),
    (10, 17999, 10, (MEGABLAST, 9)), (10, 18000, 10, (MEGABLAST, 10)),
    (12, 59999, 10, (MEGABLAST, 10)), (12, 900000, 10, (MEGABLAST, 12)),
    (4, 10, 10, (SMALL, 4)), (16, 40000, 10, (MEGABLAST, 11)), (8, 32767, 10, (STANDARD, 8)),
    (8, 100, 32768, (STANDARD, 7)), (8, 100, 32767, (SMALL, 7)),
])
def test_choice(word, entries, max_off, want):
    assert choose_na_lookup(word, entries, max_off) == want


def test_segments_and_layout():
    assert context_segments(0, 100, [], False) == [(0, 99)]
    assert context_segments(10, 100, [(0, 9), (50, 59)], False) == [(20, 59), (70, 109)]
    assert context_segments(10, 100, [(0, 9), (50, 59)], True) == [(10, 49), (60, 99)]
    # BLAST+ leaves an empty (left > right) segment for a context masked whole
    assert context_segments(0, 100, [(0, 99)], False) == [(100, 99)]
    q = [np.array([0, 1, 2, 3, 0], dtype=np.uint8), np.array([2, 2, 4], dtype=np.uint8)]
    b = QueryBatch.build(q)
    assert list(b.offsets) == [0, 6, 12, 16] and list(b.lengths) == [5, 5, 3, 3]
    # minus strands complement BLASTNA codes, ambiguity sets too (R = 4 becomes Y = 5)
    assert list(b.seq[6:11]) == [3, 0, 1, 2, 3] and b.seq[5] == 15 and list(b.seq[12:]) == [2, 2, 4, 15, 5, 1, 1]
    assert b.estimate_entries() == (4 + 4 + 2 + 2, 18)
    assert list(QueryBatch.build(q, strand="minus").offsets) == [0, 6]


def _brute(seq, segments, width, word):
    want = {}
    for l, r in segments:
        if r - l + 1 < word:
            continue
        for p in range(l, r - width + 2):
            w = seq[p:p + width]
            if (w < 4).all():
                code = int(sum(int(x) << (2 * (width - 1 - i)) for i, x in enumerate(w)))
                want.setdefault(code, []).append(p)
    return want


@pytest.mark.parametrize("n,lens,word,kind", [
    (3, (30, 200), 11, SmallTable), (2, (300, 600), 28, SmallTable),
    (40, (150, 400), 8, StandardTable), (30, (200, 500), 28, MegablastTable),
])
def test_tables_match_brute_force(n, lens, word, kind):
    rng = np.random.default_rng(n)
    queries, masks = [], []
    for _ in range(n):
        q = rng.integers(0, 4, rng.integers(*lens)).astype(np.uint8)
        q[rng.random(len(q)) < 0.01] = 14                 # N
        q[10:20] = 0                                       # a repeated word
        m = []
        if rng.random() < 0.5:
            a = int(rng.integers(0, len(q) - 20))
            m.append((a, a + int(rng.integers(0, 20))))
        queries.append(q)
        masks.append(m)
    if kind is StandardTable:   # more than 32767 entries but 11 -> small width 8 not allowed
        queries = queries * 3
        masks = masks * 3
    b = QueryBatch.build(queries, masks)
    t = build_lookup(b, word)
    assert isinstance(t, kind)
    assert t.scan_step == word - t.width + 1
    want = _brute(b.seq, b.segments, t.width, word)
    filled = {SmallTable: lambda: int((t.backbone != -1).sum()),
              StandardTable: lambda: int((t.num_used > 0).sum()),
              MegablastTable: lambda: int((t.hashtable != 0).sum())}[kind]()
    assert filled == len(want)
    others = rng.integers(0, 1 << (2 * t.width), 2000).tolist()
    for code in sorted(set(want) | set(others)):
        got = table_offsets(t, code)
        exp = want.get(code, [])
        assert sorted(got) == exp, code
        if isinstance(t, MegablastTable):
            assert got == exp[::-1]
        if exp and not isinstance(t, SmallTable):
            assert pv_test(t, code)


def test_megablast_pv_compression():
    assert megablast_pv_bts(11, 100000) == 7 and megablast_pv_bts(11, 1000) == 8
    assert megablast_pv_bts(9, 100000) == 5 and megablast_pv_bts(12, 900000) == 10


@pytest.mark.parametrize("strand", ["both", "plus", "minus"])
def test_build_batch_equals_query_batch_build(strand, monkeypatch):
    """nucl_setup.build_batch (the set-up's) gives QueryBatch.build's batch: sequence with
    sentinels and reverse complements, per-context arrays and segments, with and without masks,
    queries of length 1 and with ambiguity codes."""
    from clalign.blast import nucl_flat_nb
    from clalign.blast.nucl_setup import build_batch

    monkeypatch.setattr(nucl_flat_nb, "MIN_THREADED", 1)   # threads on these small inputs

    rng = np.random.default_rng(9)
    queries = [rng.integers(0, 15, int(n)).astype(np.uint8) for n in [1, 5, 40, 300, 2, 77]]
    masks = [[], [(0, 2)], [(5, 9), (1, 3)], [(0, 299)], [], [(70, 76)]]
    for m in (None, masks):
        want = QueryBatch.build(queries, m, strand=strand)
        for threads in (1, 2, 4, 9):
            got = build_batch(queries, m, strand=strand, threads=threads)
            for name in ("seq", "offsets", "lengths", "query_of", "minus"):
                a, b = getattr(got, name), getattr(want, name)
                assert a.dtype == b.dtype and np.array_equal(a, b), name
            assert got.segments == want.segments
            assert np.array_equal(got.seg_array, np.array(want.segments, dtype=np.int64).reshape(-1, 2))
            assert got.estimate_entries() == want.estimate_entries()
    empty = build_batch([], None)
    assert empty.seq.size == 0 and empty.seg_array.shape == (0, 2)
    assert empty.estimate_entries() == QueryBatch.build([], None).estimate_entries() == (0, 0)


@pytest.mark.parametrize("strand", ["both", "plus", "minus"])
def test_segments_from_mask_arrays(strand):
    """set_segments from MaskArrays (``_masked_segments``, all contexts at once) gives the
    segments of the same masks as lists (``context_segments`` per context): masks at a query's
    start or end, covering it whole, one base, several; intervals it cannot take (outside the
    query, abutting) go the per-context way."""
    from clalign.blast.nucl_dust import MaskArrays
    from clalign.blast.nucl_setup import batch_layout, set_segments

    rng = np.random.default_rng(4)
    lens = [1, 5, 40, 300, 2, 77, 9, 9, 30]
    queries = [rng.integers(0, 15, n).astype(np.uint8) for n in lens]
    fixed = [[(0, 0)], [(0, 4)], [(0, 2), (10, 39)], [(0, 0), (2, 2), (299, 299)], [],
             [(70, 76)], [(1, 7)], [(0, 3), (5, 8)], [(3, 3)]]
    cases = [fixed]
    for _ in range(30):
        ms = []
        for n in lens:
            cuts = sorted(set(rng.integers(0, n + 1, int(rng.integers(0, 7))).tolist()))
            ivs = [(a, b - 1) for a, b in zip(cuts[0::2], cuts[1::2]) if b > a]
            ms.append([iv for i, iv in enumerate(ivs) if i == 0 or iv[0] > ivs[i - 1][1] + 1])
        cases.append(ms)
    cases.append([[(0, 0), (1, 1)]] + fixed[1:])       # abutting: the per-context way
    cases.append([[(0, 5)]] + fixed[1:])               # past the query's end: the same
    for masks in cases:
        counts = np.array([len(m) for m in masks], dtype=np.int64)
        arrays = MaskArrays(np.array([iv for m in masks for iv in m], dtype=np.int64).reshape(-1, 2), counts)
        assert [arrays[k] for k in range(len(masks))] == masks
        want = batch_layout(queries, strand)
        set_segments(want, masks)
        got = batch_layout(queries, strand)
        set_segments(got, arrays)
        assert got.segments == want.segments
        assert np.array_equal(got.seg_array, want.seg_array)
