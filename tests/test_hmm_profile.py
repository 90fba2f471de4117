"""MSV/SSV byte profiles and MSV P-values are HMMER's, bit for bit (checked against pyhmmer 0.12.3 = HMMER 3.4)."""
import glob
import os

import numpy as np
import pytest

pyhmmer = pytest.importorskip("pyhmmer")

from clalign.hmm import build_msv_profile, read_hmms
from clalign.hmm.profile import EASEL_AMINO, EASEL_OF_CODE, NCBISTDAA
from clalign.hmm.pvalue import msv_bits, msv_pass, msv_pvalue, null_nats

PYDATA = os.path.join(os.path.dirname(pyhmmer.__file__), "tests", "data")
TXT = os.path.join(PYDATA, "hmms", "txt")
HERE = os.path.join(os.path.dirname(__file__), "data", "hmm")
FILES = [os.path.join(TXT, f) for f in ("KR.hmm", "LuxC.hmm", "PF02826.hmm", "RREFam.hmm", "Thioesterase.hmm")]
FILES += sorted(glob.glob(os.path.join(HERE, "tiny.3?.hmm")))
LENGTHS = (400, 1, 2, 3, 37, 100, 1000, 4999, 35000, 100000)
ABC = pyhmmer.easel.Alphabet.amino()
BG = pyhmmer.plan7.Background(ABC)


def unstripe(mat, M):
    """HMMER's striped byte layout (16 lanes, Q = max(2, ceil(M/16)) vectors) -> (rows, M) by node.

    Node k (1-based) sits in vector q = (k-1) % Q, lane z = (k-1) // Q, i.e. column 16 q + z.
    """
    a = np.array(mat, dtype=np.uint8)
    Q = max(2, -(-M // 16))
    k = np.arange(1, M + 1)
    return a[:, ((k - 1) % Q) * 16 + (k - 1) // Q]


def _optimized(phmm, L):
    prof = pyhmmer.plan7.Profile(phmm.M, ABC)
    prof.configure(phmm, BG, L)
    return prof.to_optimized()


@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_profiles_equal_hmmer(path):
    with pyhmmer.plan7.HMMFile(path) as hf:
        theirs = list(hf)
    ours = list(read_hmms(path))
    assert len(ours) == len(theirs)
    for h, ph in zip(ours, theirs):
        p = build_msv_profile(h)
        om = _optimized(ph, 400)
        rbv = unstripe(om.rbv, h.M)
        sbv = unstripe(om.sbv, h.M).view(np.int8)
        np.testing.assert_array_equal(p.rbv_easel, rbv)          # all 29 easel symbols
        np.testing.assert_array_equal(p.sbv_easel, sbv)
        assert (p.base_b, p.bias_b, p.tbm_b, p.tec_b) == (om.base_b, om.bias_b, om.tbm, om.tec)
        assert np.float32(p.scale_b) == np.float32(om.scale_b)
        for L in LENGTHS:
            om.L = L                                              # p7_oprofile_ReconfigLength
            assert p.tjb_b(L) == om.tjb, (h.name, L)
        assert list(p.tjb_b(np.array(LENGTHS))) == [p.tjb_b(L) for L in LENGTHS]
        # clalign rows: each NCBIstdaa letter takes the easel symbol it is.
        assert p.rbv.shape == (28, h.M) and p.rbv.dtype == np.uint8 and p.sbv.dtype == np.int8
        for code, ch in enumerate(NCBISTDAA):
            np.testing.assert_array_equal(p.rbv[code], rbv[EASEL_AMINO.index(ch)])
            np.testing.assert_array_equal(p.sbv[code], sbv[EASEL_AMINO.index(ch)])
        assert (p.rbv[NCBISTDAA.index("-")] == 255).all() and (p.rbv[NCBISTDAA.index("*")] == 255).all()
        # sbv = rbv - bias, saturating at +127 (HMMER's ((127 + bias) -sat rbv) ^ 127)
        np.testing.assert_array_equal(p.sbv.astype(int), np.minimum(p.rbv.astype(int) - p.bias_b, 127))
        assert (p.mu, p.lam) == (h.msv[0], h.msv[1])


def test_easel_mapping_and_degenerates():
    assert len(EASEL_OF_CODE) == 28 and EASEL_AMINO[EASEL_OF_CODE[NCBISTDAA.index("U")]] == "U"
    h = next(read_hmms(os.path.join(TXT, "PF02826.hmm")))
    p = build_msv_profile(h)
    # O scores as K, U as C (one-residue degeneracies), to within one cost unit of float rounding.
    assert np.abs(p.rbv[NCBISTDAA.index("O")].astype(int) - p.rbv[NCBISTDAA.index("K")]).max() <= 1
    assert np.abs(p.rbv[NCBISTDAA.index("U")].astype(int) - p.rbv[NCBISTDAA.index("C")]).max() <= 1


def _proteome():
    with pyhmmer.easel.SequenceFile(os.path.join(PYDATA, "seqs", "938293.PRJEB85.HG003687.faa"),
                                    digital=True, alphabet=ABC) as sf:
        return sf.read_block()


@pytest.fixture(scope="module")
def proteome():
    return _proteome()


@pytest.mark.parametrize("name", ["PF02826.hmm", "RREFam.hmm", "LuxC.hmm"])
def test_msv_pass_equals_hmmer_pipeline(proteome, name):
    """Our P-values on HMMER's MSV scores select exactly the sequences HMMER's pipeline passes."""
    path = os.path.join(TXT, name)
    with pyhmmer.plan7.HMMFile(path) as hf:
        theirs = list(hf)
    L = np.array([len(s) for s in proteome])
    for h, ph in zip(read_hmms(path), theirs):
        om = _optimized(ph, 400)
        nats = np.empty(len(proteome), dtype=np.float32)
        for i, s in enumerate(proteome):
            om.L = len(s)
            nats[i] = om.msv_filter(s)
        for F1 in (0.02, 0.001, 0.1):
            pli = pyhmmer.plan7.Pipeline(ABC, BG, F1=F1)
            hits = pli.search_hmm(ph, proteome)
            assert msv_pass(nats, L, h, F1).sum() == hits.__getstate__()["pipeline"]["n_past_msv"], (h.name, F1)
        # msv_nats inverts HMMER's xJ -> nats conversion exactly.
        p = build_msv_profile(h)
        fin = np.isfinite(nats)
        xj = np.rint((nats[fin].astype(np.float64) + 3.0) * p.scale_b + p.base_b + p.tjb_b(L[fin]))
        np.testing.assert_array_equal(p.msv_nats(xj.astype(np.int64), L[fin]), nats[fin])


def test_pvalue_functions():
    h = next(read_hmms(os.path.join(TXT, "PF02826.hmm")))
    L = np.array([1, 100, 400, 5000])
    nulls = null_nats(L)
    assert nulls.dtype == np.float32 and (nulls < 0).all()
    p7 = float(np.float32(100) * np.log(np.float32(100 / 101)) + np.log(1 - np.float32(100 / 101)))
    assert abs(float(nulls[1]) - p7) < 1e-5
    bits = msv_bits(np.float32(10.0), 400)
    assert abs(float(bits) - (10.0 - float(null_nats(400))) / np.log(2)) < 1e-5
    P = msv_pvalue(np.array([-50.0, 0.0, 20.0, np.inf], dtype=np.float32), 400, h)
    assert P[0] > 0.99 and 0 < P[2] < P[1] < 1 and P[3] == 0.0
    assert msv_pass(np.float32(np.inf), 400, h).all()
    with pytest.raises(ValueError):
        msv_pass(np.float32(1.0), 400, h, F1=0.0)


def test_ssv_nats_overflow_and_value():
    h = next(read_hmms(os.path.join(TXT, "PF02826.hmm")))
    p = build_msv_profile(h)
    big = 255 - p.bias_b - p.base_b + p.tjb_b(300) + p.tbm_b
    assert np.isinf(p.ssv_nats(big, 300))
    xe = 20
    xj = xe + p.base_b - p.tjb_b(300) - p.tbm_b - p.tec_b
    assert p.ssv_nats(xe, 300) == p.msv_nats(xj, 300)
