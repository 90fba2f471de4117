"""``hsp.lexsort_packed`` against ``np.lexsort`` (keys packed into int64 words: spans, signs,
constant keys, keys too wide to pack, ties) and BLASTN's ``nucl_device_ungapped.pieces`` against
the sorted union it computes."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clalign.blast.hsp import lexsort_packed
from clalign.blast.nucl_device_ungapped import pieces, segment_hits

I64 = np.iinfo(np.int64)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 60), st.lists(st.sampled_from([0, 1, 3, 200, 1 << 20, 1 << 40, 1 << 62]),
                                    min_size=1, max_size=7), st.integers(0, 2 ** 32 - 1))
def test_equals_lexsort(n, spans, seed):
    rng = np.random.default_rng(seed)
    keys = tuple(rng.integers(-s // 2, s // 2 + 1, n, dtype=np.int64) for s in spans)
    assert np.array_equal(lexsort_packed(keys), np.lexsort(keys))


@pytest.mark.parametrize("seed", range(5))
def test_wide_keys_and_ties(seed):
    rng = np.random.default_rng(seed)
    n = 3000
    keys = (rng.integers(0, 3, n), rng.integers(I64.min, I64.max, n, dtype=np.int64),
            rng.integers(0, 2, n), np.full(n, 7), rng.integers(-5, 5, n))
    assert np.array_equal(lexsort_packed(keys), np.lexsort(keys))


def test_empty_and_one_key():
    assert len(lexsort_packed((np.zeros(0, np.int64),))) == 0
    k = np.array([3, 1, 2, 1])
    assert lexsort_packed((k,)).tolist() == np.lexsort((k,)).tolist() == [1, 3, 2, 0]


def _by_segment_then_score(rows):
    """The saved hits' order as ``np.lexsort`` spells it: segment, score desc, s_start, length
    desc, q_start, word index (rows: segment, word index, q_off, s_off, q_start, s_start,
    length, score, context)."""
    return rows[np.lexsort((rows[:, 1], rows[:, 4], -rows[:, 6], rows[:, 5], -rows[:, 7],
                            rows[:, 0]))]


@pytest.mark.parametrize("seed,n,nseg,shuffled", [(2, 5000, 4, False), (3, 6000, 3, True)])
def test_segment_hits_order(seed, n, nseg, shuffled):
    """The workers' per-segment sort (rows in any order, word index kept) gives each segment's
    share of the order without its segment and word-index columns."""
    rng = np.random.default_rng(seed)
    index = rng.permutation(n) if shuffled else np.arange(n)
    rows = np.column_stack([rng.integers(0, nseg, n), index] +
                           [rng.integers(0, m, n) for m in (50, 500, 50, 500, 30, 40, 2)])
    want = _by_segment_then_score(rows)
    for g in range(nseg):
        got = segment_hits(rows[rows[:, 0] == g, 1:])
        assert got.dtype == np.int64 and got.flags.c_contiguous
        assert np.array_equal(got, want[want[:, 0] == g, 2:])
    assert segment_hits(np.zeros((0, 8), np.int64)).shape == (0, 7)


@pytest.mark.parametrize("seed", range(4))
def test_pieces_equal_union(seed):
    rng = np.random.default_rng(seed)
    n = 20000
    base = np.r_[0, np.sort(rng.choice(np.arange(1, n), 60, replace=False)), n].astype(np.uint32)
    cuts = np.where(rng.random(n // 32) < 0.7,
                    np.arange(n // 32) * 32 + rng.integers(0, 32, n // 32), 0).astype(np.uint32)
    cuts[rng.integers(0, len(cuts), 5)] = base[rng.integers(1, len(base) - 1, 5)]   # on a bound
    lo, key = pieces(base, cuts)
    want = np.union1d(base.astype(np.int64), cuts[cuts > 0].astype(np.int64))
    assert np.array_equal(lo, want)
    assert np.array_equal(key, np.searchsorted(base.astype(np.int64), want[:-1], side="right") - 1)


@pytest.mark.parametrize("seed", range(4))
def test_pieces_merge_of_ascending_cuts(seed):
    """nw_cuts' shape (one cut or 0 per window, ascending, some on a key's bound, empty keys):
    the compiled merge, not the fallback, equals the sorted union and its keys."""
    from clalign.blast import nucl_device_ungapped as nu

    rng = np.random.default_rng(seed)
    n = 30000
    base = np.r_[0, np.sort(rng.choice(np.arange(1, n), 80)), n].astype(np.uint32)   # repeats
    cuts = np.where(rng.random(n // 32) < 0.6,
                    np.arange(n // 32) * 32 + rng.integers(0, 32, n // 32), 0).astype(np.uint32)
    on = rng.integers(1, len(base) - 1, 6)
    cuts[base[on] // 32] = base[on]                     # a window's cut on a bound
    lo = np.empty(len(base) + len(cuts), np.int64)
    assert nu._merge_pieces(base.astype(np.int64), cuts.astype(np.int64), lo, lo.copy()) > 0
    got_lo, got_key = pieces(base, cuts)
    want = np.union1d(base.astype(np.int64), cuts[cuts > 0].astype(np.int64))
    assert np.array_equal(got_lo, want)
    assert np.array_equal(got_key, np.searchsorted(base.astype(np.int64), want[:-1], side="right") - 1)
