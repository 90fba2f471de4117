"""merge_subject_chunk_rows (the rows form of Blast_HSPListsMerge for a subject's 5 Mb pieces)
against merge_subject_chunks on NHSP objects, the spec: same rows in the same order."""
import numpy as np
import pytest

from clalign.blast.nucl_hsp import merge_subject_chunk_rows, merge_subject_chunks
from clalign.blast.nucl_search import hsps_of_rows, rows_of_hsps

SPLIT, OVERLAP = 1000, 100


def _rows(rng, n, s_lo, s_hi, contexts):
    """n random preliminary rows with subject starts in [s_lo, s_hi): many near the split, on
    few diagonals and contexts so that merges, ties and duplicates happen."""
    out = []
    for _ in range(n):
        c = int(rng.integers(contexts))
        ss = int(rng.integers(s_lo, s_hi))
        ln = int(rng.integers(1, 80))
        diag = int(rng.integers(-3, 4)) * 4
        qs = max(0, ss - SPLIT + 500 + diag)
        sc = int(rng.integers(1, 6)) * 10 if rng.random() < 0.5 else int(rng.integers(1, 200))
        out.append((sc, qs, qs + ln + int(rng.integers(-2, 3)), ss, ss + ln, c,
                    qs + ln // 2, ss + ln // 2))
    return np.array(out, dtype=np.int64).reshape(-1, 8)


def _spec(pieces):
    combined = None
    for off, r in pieces:
        combined = merge_subject_chunks(combined, hsps_of_rows(r), off, OVERLAP)
    return rows_of_hsps(combined or [])


def _rows_way(pieces):
    combined = None
    for off, r in pieces:
        combined = merge_subject_chunk_rows(combined, r, off, OVERLAP)
    return combined if combined is not None else np.zeros((0, 8), dtype=np.int64)


@pytest.mark.parametrize("seed", range(40))
def test_rows_merge_equals_object_merge(seed):
    rng = np.random.default_rng(seed)
    n1, n2, n3 = (int(rng.integers(0, 40)) for _ in range(3))
    ctx = int(rng.integers(1, 4))
    pieces = [(0, _rows(rng, n1, 850, SPLIT + 20, ctx)),
              (SPLIT, _rows(rng, n2, SPLIT - 10, 2 * SPLIT + 20, ctx)),
              (2 * SPLIT, _rows(rng, n3, 2 * SPLIT - 10, 2 * SPLIT + 300, ctx))]
    if seed % 5 == 0:                      # an empty first or middle piece
        pieces[seed % 2] = (pieces[seed % 2][0], np.zeros((0, 8), dtype=np.int64))
    want, got = _spec(pieces), _rows_way(pieces)
    assert got.shape == want.shape and (got == want).all()


def test_rows_merge_merges():
    """A pair that continues across the split becomes one row (the test data above must make
    such merges: this is the plain case)."""
    a = np.array([[50, 100, 160, 950, 1010, 0, 120, 970]], dtype=np.int64)
    b = np.array([[40, 150, 200, 1000, 1050, 0, 170, 1020]], dtype=np.int64)
    got = _rows_way([(0, a), (SPLIT, b)])
    assert got.shape == (1, 8) and (got == _spec([(0, a), (SPLIT, b)])).all()
    # s_BlastMergeTwoHSPs by hand: the union's box, the better score's gapped start, and the
    # score max(int(density * query span), best) = max(int(90 / 110 * 100), 50) = 81
    assert got[0].tolist() == [81, 100, 200, 950, 1050, 0, 120, 970]


def test_rows_merge_order_ties():
    """Rows equal in score and subject/query starts, differing in q_end or only in context and
    gapped start (ScoreCompareHSPs' last key, then the swaps' order, which a stable sort keeps)."""
    base = [30, 10, 50, 400, 440, 0, 20, 410]
    rows = []
    for k in range(8):
        r = list(base)
        r[2] += k % 3                 # q_end
        r[5] = k % 2                  # context
        r[6] += k                     # gapped start: tells the rows apart
        rows.append(r)
    a = np.array(rows[:4] + [[20, 5, 40, 990, 1020, 1, 9, 1000]], dtype=np.int64)
    b = np.array(rows[4:] + [[25, 600, 640, 1010, 1050, 0, 610, 1030]], dtype=np.int64)
    for pieces in ([(0, a), (SPLIT, b)], [(0, b), (SPLIT, a)]):
        assert (_rows_way(pieces) == _spec(pieces)).all()
