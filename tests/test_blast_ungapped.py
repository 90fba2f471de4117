"""BLASTP phases 1-4 on the CPU: lookup table and two-hit ungapped extension.

The lookup table is checked against a brute-force statement of the neighbourhood rule; the
compiled two-hit finder against the plain-Python reference on random and real proteins,
including windows at and around A and subjects shorter than a word.
"""
import itertools

import numpy as np
import pytest

from clalign.blast.lookup import build_lookup, word_codes
from clalign.blast.matrix import blast_matrix
from clalign.blast.ungapped import two_hit_reference
from clalign.blast.ungapped_nb import sort_init_hsps, two_hit_db
from clalign.data.alphabet import PROTEIN

B62 = blast_matrix("BLOSUM62")
AA = np.array([PROTEIN.letters.index(c) for c in "ARNDCQEGHILKMFPSTWYV"], dtype=np.uint8)


def _rand(rng, n, extra=False):
    letters = AA if not extra else np.array([PROTEIN.letters.index(c) for c in "ARNDCQEGHILKMFPSTWYVXBZU*"], dtype=np.uint8)
    return rng.choice(letters, size=n).astype(np.uint8)


def test_matrix_is_blast_builtin():
    assert B62[PROTEIN.letters.index("X"), PROTEIN.letters.index("A")] == -1
    assert B62[PROTEIN.letters.index("U"), PROTEIN.letters.index("U")] == 9  # U scores as C
    assert B62[PROTEIN.letters.index("W"), PROTEIN.letters.index("W")] == 11
    assert B62[0, 0] == -32768


@pytest.mark.parametrize("threshold", [0, 11, 13])
def test_lookup_is_neighbourhood_rule(threshold):
    rng = np.random.default_rng(threshold)
    q = _rand(rng, 40, extra=True)
    table = build_lookup(q, B62, threshold)
    qc = word_codes(q)
    letters = range(28)
    seen = 0
    for a, b, c in itertools.product(letters, letters, letters):
        code = (a << 10) | (b << 5) | c
        want = [i for i in range(len(qc))
                if qc[i] == code or (threshold > 0 and
                                     B62[q[i], a] + B62[q[i + 1], b] + B62[q[i + 2], c] >= threshold)]
        assert list(table.offsets(code)) == want
        seen += len(want)
    assert seen == len(table.qoffs)


def _db(seqs):
    offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(s) for s in seqs])
    return np.concatenate(seqs).astype(np.uint8), offsets


def _compare(q, subjects, window=40, dropoff=16, cutoff=20):
    table = build_lookup(q, B62, 11)
    residues, offsets = _db(subjects)
    rows = sort_init_hsps(two_hit_db(q, B62, table.starts, table.qoffs, residues, offsets,
                                     0, len(subjects), window, 3, dropoff, cutoff))
    got = [tuple(int(v) for v in r[1:]) for r in rows]
    want = []
    for s in subjects:
        want += two_hit_reference(table, B62, q, s, window, dropoff, cutoff)
    assert got == want
    return len(want)


def test_two_hit_random_and_planted():
    rng = np.random.default_rng(7)
    q = _rand(rng, 300)
    subjects = [_rand(rng, n) for n in (1, 2, 3, 5, 40, 41, 200, 1500)]
    for ident in (0.3, 0.5, 0.8):  # planted homologs: query with substitutions
        s = q.copy()
        flip = rng.random(len(s)) > ident
        s[flip] = _rand(rng, int(flip.sum()))
        subjects.append(np.concatenate([_rand(rng, 50), s, _rand(rng, 70)]))
    assert _compare(q, subjects) > 0


@pytest.mark.parametrize("window", [1, 3, 4, 39, 40, 41])
def test_two_hit_windows(window):
    rng = np.random.default_rng(window)
    q = _rand(rng, 120)
    s = np.concatenate([q[:60], _rand(rng, 30), q[40:]])
    _compare(q, [s, q.copy()], window=window)
