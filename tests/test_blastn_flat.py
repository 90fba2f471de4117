"""The partitioned lookup-table build (``nucl_flat_nb``, what ``build_flat`` runs) equals the
reference build (``build_flat_ref``: every word listed, one counting sort; itself tested against
the tables in test_blastn_scan.py) at boundary sizes: no segment, segments shorter than the
word, one word, every word in one cell, words at the batch's last offsets, one part and many
parts, and any number of threads."""
import numpy as np
import pytest

from clalign.blast.nucl_flat_nb import flat_cells_parts, part_bits
from clalign.blast.nucl_lookup import MEGABLAST, SMALL, STANDARD, QueryBatch
from clalign.blast import nucl_flat_nb
from clalign.blast.nucl_scan import _flat_cells, _indexed_words_nb, build_flat, build_flat_ref


@pytest.fixture(autouse=True)
def _threads_on_small_inputs(monkeypatch):
    """Groups of any size, so that these small inputs run on several threads."""
    monkeypatch.setattr(nucl_flat_nb, "MIN_THREADED", 1)


def _ref(seq, segs, width, word, latest_first):
    segs = np.array(segs, dtype=np.int64).reshape(-1, 2)
    codes, offs = _indexed_words_nb(seq, segs[:, 0].copy(), segs[:, 1].copy(), width, word)
    return _flat_cells(codes, offs, 1 << (2 * width), latest_first)


def _presence(start):
    """The presence words of a cell_start as the device upload made them before (numpy)."""
    bits = np.packbits(start[1:] != start[:-1], bitorder="little")
    bits = np.concatenate([bits, np.zeros((-len(bits)) % 4 + 4, np.uint8)])
    return bits.view(np.uint32)


def _check(seq, segs, width, word, latest_first, threads=(1, 2, 3)):
    want = _ref(seq, segs, width, word, latest_first)
    s = np.array(segs, dtype=np.int64).reshape(-1, 2)
    for t in threads:
        got = flat_cells_parts(seq, s[:, 0], s[:, 1], width, word, latest_first, t)
        assert np.array_equal(got[0], want[0]) and got[0].dtype == np.int32
        assert np.array_equal(got[1], want[1]) and got[1].dtype == np.int32
        assert np.array_equal(got[2], _presence(want[1])) and got[2].dtype == np.uint32
        assert got[3:] == (int(want[2]), int(want[3]))
    return want


@pytest.mark.parametrize("width", [4, 7, 8, 9, 11, 12])
@pytest.mark.parametrize("latest_first", [False, True])
def test_random_batch(width, latest_first):
    rng = np.random.default_rng(width + 50 * latest_first)
    seq = rng.integers(0, 4, 20000).astype(np.uint8)
    seq[rng.random(seq.size) < 0.01] = 14
    seq[::997] = 15                                   # context sentinels
    cuts = np.flatnonzero(seq == 15)
    segs = [(int(a) + 1, int(b) - 1) for a, b in zip(cuts[:-1], cuts[1:])]
    segs += [(int(cuts[-1]) + 1, seq.size - 1)]
    segs[3] = (segs[3][0], segs[3][0] + width - 2)    # shorter than a word
    want = _check(seq, segs, width, width + 4, latest_first)
    assert want[0].size > 1000
    if width <= 8:
        assert part_bits(width) == 0
    else:
        assert part_bits(width) > 0


@pytest.mark.parametrize("latest_first", [False, True])
def test_boundaries(latest_first):
    seq = np.zeros(64, dtype=np.uint8)
    _check(seq, np.zeros((0, 2), dtype=np.int64), 12, 28, latest_first)    # no segment
    _check(seq, [(5, 4)], 12, 12, latest_first)                           # empty segment
    _check(seq, [(0, 10)], 12, 12, latest_first)                          # shorter than a word
    one = np.array([0, 1, 2, 3, 3, 2, 1, 0, 1, 1, 2, 2, 15], dtype=np.uint8)
    got = _check(one, [(0, 11)], 12, 12, latest_first)                    # one word
    assert got[0].tolist() == [0] and got[3] == 0
    got = _check(seq, [(0, 63)], 12, 12, latest_first)                    # one cell: poly-A
    assert got[2] == 53 and got[3] == 54
    top = np.full(40, 3, dtype=np.uint8)                                  # the last cell, poly-T
    got = _check(top, [(0, 39)], 12, 12, latest_first)
    assert got[1][-2] == 0 and got[2] == 29


def test_last_offsets():
    """Words at the end of a long batch (offsets past 2^24; int32 as the reference)."""
    rng = np.random.default_rng(1)
    n = (1 << 24) + 3000
    seq = np.full(n, 14, dtype=np.uint8)
    seq[-2500:] = rng.integers(0, 4, 2500)
    seq[-1200] = 15
    segs = [(0, 100), (n - 2500, n - 1201), (n - 1199, n - 1)]
    got = _check(seq, segs, 12, 28, True, threads=(1, 3))
    assert got[0].max() == n - 12


@pytest.mark.parametrize("kind,width,word", [(SMALL, 8, 11), (STANDARD, 8, 12), (MEGABLAST, 12, 28),
                                             (MEGABLAST, 11, 16)])
def test_build_flat_equals_reference(kind, width, word):
    rng = np.random.default_rng(word)
    qs = [rng.integers(0, 4, int(rng.integers(30, 900))).astype(np.uint8) for _ in range(40)]
    masks = [[(5, 40)] if k % 3 == 0 else [] for k in range(len(qs))]
    batch = QueryBatch.build(qs, masks)
    want = build_flat_ref(batch, kind, width, word)
    for t in (1, 2):
        got = build_flat(batch, kind, width, word, t)
        assert (got.kind, got.width, got.word_size, got.scan_step, got.max_cell) == \
            (want.kind, want.width, want.word_size, want.scan_step, want.max_cell)
        assert np.array_equal(got.cell_start, want.cell_start)
        assert got.cell_start.dtype == want.cell_start.dtype == np.int32
        assert np.array_equal(got.q_offs, want.q_offs)
        assert np.array_equal(got.present, want.present)
        assert np.array_equal(got.present, _presence(want.cell_start))


def test_small_work_is_one_group(monkeypatch):
    monkeypatch.setattr(nucl_flat_nb, "MIN_THREADED", 1 << 16)
    assert nucl_flat_nb._groups(np.ones(1000, dtype=np.int64), 4) == [0, 1000]
    monkeypatch.setattr(nucl_flat_nb, "MIN_THREADED", 1)
    assert nucl_flat_nb._groups(np.ones(1000, dtype=np.int64), 4) == [0, 250, 500, 750, 1000]
