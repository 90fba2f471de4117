"""A blastp query's compiled set-up against the plain forms it replaces.

- ``stats.karlin_nb.ungapped_karlin`` (BLAST+'s operation order throughout) against
  ``stats.ungapped_params`` (numpy sums): lambda, K and H agree to 1e-12 and the integers the
  search derives from them (ungapped X-drop, gap trigger) are equal, on real proteins (the
  bundled proteome) under every built-in matrix with gapped statistics, and on skewed random
  compositions; the failures (no positive score, non-negative expected score) agree;
- ``lookup.build_lookup_fast`` against ``build_lookup``, word sizes 2 and 3, with SEG-like masks.
"""
import gzip
import math
from pathlib import Path

import numpy as np
import pytest

from clalign.blast.engine import ungapped_karlin_query
from clalign.blast.lookup import build_lookup, build_lookup_fast
from clalign.blast.matrix import blast_matrix
from clalign.data.alphabet import PROTEIN
from clalign.stats import composition, robinson_frequencies, ungapped_params
from clalign.stats.karlin_nb import ungapped_karlin

PROTEOME = Path(__file__).resolve().parents[1] / "data" / "proteome.faa.gz"
_X = PROTEIN.letters.index("X")
LN2 = math.log(2.0)


def _proteins(n):
    seqs, cur = [], []
    with gzip.open(PROTEOME, "rt") as fh:
        for line in fh:
            if line.startswith(">"):
                if cur:
                    seqs.append("".join(cur))
                    if len(seqs) == n:
                        break
                cur = []
            else:
                cur.append(line.strip())
    code = {c: i for i, c in enumerate(PROTEIN.letters)}
    return [np.array([code.get(c, _X) for c in s.upper()], dtype=np.uint8) for s in seqs]


def _derived(k):
    return math.ceil(7 * LN2 / k.lam), int((22 * LN2 + k.logK) / k.lam)


def _check(codes, m):
    want = ungapped_params(m, composition(codes, 28, ambiguous=(_X,)),
                           robinson_frequencies(PROTEIN.letters))
    got = ungapped_karlin_query(codes, m)
    if want is None:
        assert got is None
        return
    for a, b in ((got.lam, want.lam), (got.K, want.K), (got.H, want.H)):
        assert abs(a - b) <= 1e-12 * abs(b)
    assert _derived(got) == _derived(want)


@pytest.mark.parametrize("matrix", ["BLOSUM62", "BLOSUM45", "BLOSUM50", "BLOSUM80", "PAM30",
                                    "PAM70"])
def test_ungapped_karlin_real_proteins(matrix):
    m = blast_matrix(matrix)
    for codes in _proteins(150 if matrix == "BLOSUM62" else 40):
        _check(codes, m)


def test_ungapped_karlin_random_and_failures():
    rng = np.random.default_rng(11)
    m = blast_matrix("BLOSUM62")
    for _ in range(200):
        n = int(rng.integers(1, 60))
        alphabet = rng.choice(np.arange(1, 28), size=int(rng.integers(1, 6)), replace=False)
        _check(rng.choice(alphabet, n).astype(np.uint8), m)   # skewed: few letters
    _check(np.full(30, _X, dtype=np.uint8), m)                # all X: no composition
    _check(np.full(30, PROTEIN.letters.index("W"), dtype=np.uint8), m)   # W only: avg > 0
    # scores of gcd 2 and closed forms (low = -1 or high = 1) on small matrices
    for scores in ([[2, -2], [-2, 2]], [[1, -1, -1], [-1, 1, -1], [-1, -1, 1]],
                   [[1, -3], [-3, 1]], [[4, -1], [-1, 4]], [[2, -4, -4], [-4, 2, -4], [-4, -4, 2]],
                   [[6, -4, -4], [-4, 6, -4], [-4, -4, 6]], [[5, -2, -3], [-2, 5, -2], [-3, -2, 5]]):
        s = np.array(scores, dtype=np.int32)
        p = np.full(len(s), 1.0 / len(s))
        want = ungapped_params(s, p, p)
        lam, K, H = ungapped_karlin(s, np.full(len(s), 5.0), p)
        if want is None:      # [[2, -2], [-2, 2]]: expected score 0
            assert lam < 0
            continue
        assert abs(lam - want.lam) <= 1e-12 * want.lam and abs(K - want.K) <= 1e-12 * want.K
        assert abs(H - want.H) <= 1e-12 * want.H


@pytest.mark.parametrize("matrix,threshold,word", [("BLOSUM62", 11, 3), ("BLOSUM62", 8, 2),
                                                   ("PAM30", 16, 3), ("BLOSUM62", 25, 3)])
def test_lookup_fast_masks_and_word_sizes(matrix, threshold, word):
    rng = np.random.default_rng(4)
    m = blast_matrix(matrix)
    for n in (0, 2, 3, 5, 64, 300):
        q = rng.integers(0, 28, n).astype(np.uint8)
        for mask in (None, rng.random(n) < 0.15):
            a = build_lookup(q, m, threshold, word, mask=mask)
            b = build_lookup_fast(q, m, threshold, word, mask=mask)
            assert np.array_equal(a.starts, b.starts) and np.array_equal(a.qoffs, b.qoffs)
            assert np.array_equal(a.present, b.present)
