"""BLASTP gapped score-only stage: compiled vs plain Python, and vs an independent DP.

With an X-drop larger than any score, ``semi_gapped`` must equal the best score of any global
alignment of a prefix pair anchored at the start point (affine gaps, k residues cost
open + k * extend); the restricted variant never exceeds it. Jitted and ``.py_func`` forms must
agree exactly (score and end offsets) at ordinary X-drops.
"""
import numpy as np
import pytest

from clalign.blast.gapped import gapped_start, prot_gapped, restricted, semi_gapped
from clalign.blast.matrix import blast_matrix
from clalign.data.alphabet import PROTEIN

B62 = blast_matrix("BLOSUM62")
AA = np.array([PROTEIN.letters.index(c) for c in "ARNDCQEGHILKMFPSTWYV"], dtype=np.uint8)


def _anchored_best(a, b, go, ge):
    """Best score of a global alignment of a[:i] with b[:j] over all i, j (Gotoh)."""
    n, m = len(a), len(b)
    neg = -10 ** 9
    H = np.full((n + 1, m + 1), neg, dtype=np.int64)
    E = np.full((n + 1, m + 1), neg, dtype=np.int64)
    F = np.full((n + 1, m + 1), neg, dtype=np.int64)
    H[0, 0] = 0
    for i in range(n + 1):
        for j in range(m + 1):
            if i == 0 and j == 0:
                continue
            if j > 0:
                E[i, j] = max(E[i, j - 1] - ge, H[i, j - 1] - go - ge)
            if i > 0:
                F[i, j] = max(F[i - 1, j] - ge, H[i - 1, j] - go - ge)
            d = H[i - 1, j - 1] + B62[a[i - 1], b[j - 1]] if i and j else neg
            H[i, j] = max(d, E[i, j], F[i, j])
    return int(H.max())


def _homolog(rng, q, ident):
    s = list(q)
    out = []
    for c in s:
        r = rng.random()
        if r < 0.05:
            continue                       # deletion
        if r < 0.10:
            out.extend(rng.choice(AA, size=rng.integers(1, 4)))  # insertion
        out.append(c if rng.random() < ident else rng.choice(AA))
    return np.array(out, dtype=np.uint8)


@pytest.mark.parametrize("seed", range(6))
def test_semi_gapped_is_anchored_dp(seed):
    rng = np.random.default_rng(seed)
    q = rng.choice(AA, size=int(rng.integers(5, 60))).astype(np.uint8)
    s = _homolog(rng, q, 0.6) if seed % 2 else rng.choice(AA, size=50).astype(np.uint8)
    ab = np.zeros(2, dtype=np.int32)
    big = 10 ** 6
    got = semi_gapped(B62, q, -1, 1, len(q), s, 0, 1, len(s), 11, 1, big, ab)
    assert got == _anchored_best(q, s, 11, 1)
    got_r = restricted(B62, q, -1, 1, len(q), s, 0, 1, len(s), 11, 1, big, ab)
    assert got_r <= got


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("use_restricted", [False, True])
def test_prot_gapped_compiled_equals_python(seed, use_restricted):
    rng = np.random.default_rng(100 + seed)
    q = rng.choice(AA, size=300).astype(np.uint8)
    s = np.concatenate([rng.choice(AA, size=80), _homolog(rng, q, 0.3 + 0.08 * seed),
                        rng.choice(AA, size=60)]).astype(np.uint8)
    pad = np.concatenate([rng.choice(AA, size=13), s]).astype(np.uint8)
    q_off = int(rng.integers(20, 280))
    s_off = 80 + q_off
    for xd in (38, 64, 1000):
        o1 = np.zeros(4, dtype=np.int32)
        o2 = np.zeros(4, dtype=np.int32)
        a = prot_gapped(B62, q, pad, 13, len(s), q_off, s_off, 11, 1, xd, use_restricted, o1)
        b = prot_gapped.py_func(B62, q, pad, 13, len(s), q_off, s_off, 11, 1, xd, use_restricted, o2)
        assert a == b and list(o1) == list(o2)
        assert 0 <= o1[0] <= q_off < o1[1] <= len(q) and 0 <= o1[2] <= s_off < o1[3] <= len(s)


def test_gapped_start_window():
    rng = np.random.default_rng(3)
    q = rng.choice(AA, size=100).astype(np.uint8)
    s = q.copy()
    for length in (1, 10, 11, 12, 60):
        assert gapped_start(B62, q, s, 5, 5, length) == gapped_start.py_func(B62, q, s, 5, 5, length)
    assert gapped_start(B62, q, s, 5, 5, 10) == 10
