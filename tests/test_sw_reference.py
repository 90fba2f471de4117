"""The numpy Gotoh reference (clalign.sw.reference) against a cell-by-cell Python Gotoh and
against parasail's 32-bit Smith-Waterman (open = gap_open + gap_extend, extend = gap_extend
maps BLAST's convention onto parasail's)."""

import numpy as np
import pytest

from clalign.data import PROTEIN, get_matrix, read_fasta
from clalign.sw.reference import sw_score, sw_score_slow

parasail = pytest.importorskip("parasail", reason="parasail (test extra) is not installed")

AA = np.frombuffer(b"ACDEFGHIKLMNPQRSTVWY", dtype=np.uint8)


def rand_seq(rng, n):
    return AA[rng.integers(0, 20, n)].tobytes().decode()


def parasail_score(q, s, matrix, go, ge):
    pm = getattr(parasail, matrix.lower())
    return parasail.sw_striped_32(q, s, go + ge, ge, pm).score


def test_reference_equals_cell_by_cell():
    rng = np.random.default_rng(3)
    S = rng.integers(-5, 9, size=(28, 28))
    for _ in range(150):
        q = rng.integers(0, 28, rng.integers(1, 25))
        s = rng.integers(0, 28, rng.integers(1, 25))
        go, ge = int(rng.integers(0, 13)), int(rng.integers(0, 4))
        assert sw_score(q, s, S, go, ge) == sw_score_slow(q, s, S, go, ge)


@pytest.mark.parametrize("matrix,go,ge", [("BLOSUM62", 11, 1), ("BLOSUM50", 13, 2), ("PAM30", 9, 1),
                                          ("BLOSUM80", 10, 1), ("BLOSUM45", 15, 2)])
def test_reference_equals_parasail_random(matrix, go, ge):
    rng = np.random.default_rng(hash(matrix) % 1000)
    m = get_matrix(matrix)
    for _ in range(25):
        q, s = rand_seq(rng, int(rng.integers(1, 300))), rand_seq(rng, int(rng.integers(1, 300)))
        assert sw_score(PROTEIN.encode(q), PROTEIN.encode(s), m.scores, go, ge) == parasail_score(q, s, matrix, go, ge)


def test_reference_equals_parasail_real_and_long(cudasw_fasta):
    recs = [r.sequence for r in read_fasta(cudasw_fasta)]
    m = get_matrix("BLOSUM62")
    for q, s in [(recs[0], recs[5]), (recs[3], recs[10]), (recs[19], recs[1]), (recs[8], recs[8])]:
        assert sw_score(PROTEIN.encode(q), PROTEIN.encode(s), m.scores) == parasail_score(q, s, "BLOSUM62", 11, 1)
    rng = np.random.default_rng(5)
    long = rand_seq(rng, 20000)
    short = long[7000:7300]
    assert sw_score(PROTEIN.encode(short), PROTEIN.encode(long), m.scores) == \
        parasail_score(short, long, "BLOSUM62", 11, 1)
    # scores beyond 16 bits
    big = "W" * 3000 + rand_seq(rng, 100)
    want = parasail_score(big, big[::-1], "BLOSUM62", 11, 1)
    assert want > 32767
    assert sw_score(PROTEIN.encode(big), PROTEIN.encode(big[::-1]), m.scores) == want
