"""Host-side shortcuts of the hmm search against the plain rules they replace: the length
tables (clalign.hmm.lentable), the MSV byte thresholds' window (clalign.hmm.bytepass) and the
compiled pass test, the device Viterbi plan's threshold decisions (clalign.hmm.vit_search)."""
import os

import numpy as np
import pytest

from clalign.hmm import bytepass, pvalue
from clalign.hmm.hmmfile import read_hmms
from clalign.hmm.lentable import LengthTable
from clalign.hmm.profile import _tjb_formula, build_msv_profile

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
HMMS = list(read_hmms(os.path.join(DATA, "hmms.hmm")))


def test_length_tables_equal_their_formulas():
    L = np.concatenate([np.arange(0, 70000), [131071, 131072, 2_000_000, 3_000_000]])
    with np.errstate(all="ignore"):
        assert np.array_equal(pvalue._null_nats(L), pvalue._null_formula(L), equal_nan=True)
        assert np.array_equal(pvalue._null_nats(L.astype(np.int32)), pvalue._null_formula(L), equal_nan=True)
    prof = build_msv_profile(HMMS[0])
    assert np.array_equal(prof.tjb_b(L), _tjb_formula(L))
    assert prof.tjb_b(7) == int(_tjb_formula(np.array(7))) and isinstance(prof.tjb_b(7), int)
    assert prof.tjb_b(np.zeros(0, np.int64)).size == 0
    from clalign.hmm.vit_reference import ViterbiProfile, _move_w_formula

    assert np.array_equal(ViterbiProfile.move_w(L), _move_w_formula(L))
    assert ViterbiProfile.move_w(300) == int(_move_w_formula(np.array(300)))
    calls = []
    t = LengthTable(lambda x: calls.append(x.size) or x * 2, limit=1 << 10, first=8)
    assert t(np.array([3, 9])).tolist() == [6, 18] and t(np.array([2000])).tolist() == [4000]
    assert t(np.array([-1])).tolist() == [-2] and calls == [16, 1, 1]      # grown once to 16


@pytest.mark.parametrize("F1", [1e-10, 1e-3, 0.02, 0.3, 1.0])
def test_threshold_window_equals_bisection(F1):
    uniq = np.arange(0, 40001, 3)
    for hmm in HMMS:
        prof = build_msv_profile(hmm)
        for slack in (0.0, 1e-3, 0.5):
            assert np.array_equal(bytepass.class_thresholds(prof, hmm, uniq, F1, slack),
                                  bytepass._bisect(prof, hmm, uniq, F1, slack)), (hmm.name, slack)


def test_compiled_pass_test_equals_numpy(monkeypatch):
    pytest.importorskip("numba")
    import numba  # noqa: F401  (the compiled test runs once numba is loaded)

    rng = np.random.default_rng(5)
    lengths = np.concatenate([rng.integers(0, 36000, 70000), [0, 0, 1]])
    for hmm in HMMS[:4]:
        prof = build_msv_profile(hmm)
        raw = (rng.integers(0, 256, lengths.size) | (rng.random(lengths.size) < 0.02) << 8).astype(np.uint32)
        raw[-3] |= 1 << 8                                   # an overflowing empty target never passes
        got = []
        for m in (1, 1 << 62):
            monkeypatch.setattr(bytepass, "COMPILED_MIN", m)
            got.append(bytepass.msv_pass_bytes(prof, hmm, raw, lengths, 0.02, 1e-3))
        assert np.array_equal(*got) and got[0].any() and not got[0][-3]


def test_viterbi_decisions_as_survival_functions():
    from clalign.hmm.vit_search import MARGIN_BITS, _decide

    bits = np.concatenate([np.linspace(-20, 60, 200001), [np.nan, np.inf, -np.inf]])
    for hmm in HMMS:
        mu, lam = float(np.float32(hmm.viterbi[0])), float(np.float32(hmm.viterbi[1]))
        for F in (1e-3, 0.02, 1.0):
            ok, no = _decide(bits, hmm.viterbi, F)
            sure_ok = pvalue.gumbel_surv(bits - MARGIN_BITS, mu, lam) <= F
            sure_no = pvalue.gumbel_surv(bits + MARGIN_BITS, mu, lam) > F
            assert not (ok & ~sure_ok).any() and not (no & ~sure_no).any()     # never surer than before
            assert (ok != sure_ok).sum() + (no != sure_no).sum() <= 4           # and as sure, but at T


@pytest.mark.parametrize("F1", [1e-10, 1e-3, 0.02, 0.3, 1.0])
def test_compiled_thresholds_equal_numpy(F1):
    pytest.importorskip("numba")
    uniq = np.arange(0, 40001, 3)
    for hmm in HMMS:
        prof = build_msv_profile(hmm)
        for slack in (0.0, 1e-3, 0.5):
            want = np.where(uniq > 0, bytepass.class_thresholds(prof, hmm, uniq, F1, slack), 257)
            assert np.array_equal(bytepass._thresholds_nb(prof, hmm, uniq, F1, slack), want), (hmm.name, slack)


def test_survivors_equal_mask_and_scores():
    """msv_survivors: the mask's indices and msv_from_bytes of them, overflows and empty targets included."""
    pytest.importorskip("numba")
    from clalign.hmm import reference

    rng = np.random.default_rng(7)
    lengths = np.concatenate([rng.integers(0, 36000, 50000), [0, 0, 1, 2]])
    for hmm in HMMS[:5]:
        prof = build_msv_profile(hmm)
        raw = (rng.integers(0, 256, lengths.size) | (rng.random(lengths.size) < 0.02) << 8).astype(np.uint32)
        raw[-4] |= 1 << 8
        for F1, slack in ((0.02, 1e-3), (0.3, 0.0), (1.0, 0.0)):
            mask = bytepass.msv_pass_bytes(prof, hmm, raw, lengths, F1, slack)
            idx, nats = bytepass.msv_survivors(prof, hmm, raw, lengths, F1, slack)
            assert np.array_equal(idx, np.flatnonzero(mask)) and idx.size > 0
            sel = raw[idx]
            want = reference.msv_from_bytes(prof, sel & 0xFF, (sel >> 8) & 1, lengths[idx])
            assert nats.dtype == np.float32 and np.array_equal(nats, want)


def test_compiled_decisions_equal_numpy():
    """vit_search._decided (one compiled pass) against _decide(_bits(...)) per threshold."""
    pytest.importorskip("numba")
    from clalign.hmm.vit_search import _bits, _decide, _decided

    rng = np.random.default_rng(11)
    score = rng.normal(10, 20, 40000).astype(np.float32)
    null = rng.normal(-3, 1, score.size).astype(np.float32)
    score[:4] = [np.inf, np.nan, -np.inf, 0.0]
    null[4] = np.nan
    for hmm in HMMS[:4]:
        t = pvalue.msv_bit_threshold(hmm.msv, 0.02)                # scores on and around the thresholds
        score[5:2005] = (null[5:2005].astype(np.float64) + (t + rng.normal(0, 2e-3, 2000)) * pvalue.LN2)
        for stats in (hmm.msv, hmm.viterbi):
            Fs = (0.02, 1e-3, 1.0, 1e-10)
            got = _decided(score, null, stats, *Fs)
            for (ok, no), F in zip(got, Fs):
                want_ok, want_no = _decide(_bits(score, null), stats, F)
                assert np.array_equal(ok, want_ok) and np.array_equal(no, want_no), (hmm.name, F)


def test_merged_counts_equal_counts_of_the_merge():
    """Counts read from each part (in the pyhmmer workers) sum to those of the merged hits."""
    pyhmmer = pytest.importorskip("pyhmmer")
    import gzip
    import io

    from clalign.hmm.pyhmmer_adapter import merged_counts, pipeline_counts

    aa = pyhmmer.easel.Alphabet.amino()
    with gzip.open(os.path.join(DATA, "proteome.faa.gz")) as fh:
        seqs = list(pyhmmer.easel.SequenceFile(io.BytesIO(fh.read()), digital=True, alphabet=aa,
                                               format="fasta").read_block())
    with pyhmmer.plan7.HMMFile(os.path.join(DATA, "hmms.hmm")) as hf:
        phmm = list(hf)[3]
    blocks = [seqs[:700], seqs[700:1500], seqs[1500:]]
    parts = [pyhmmer.plan7.Pipeline(aa, Z=len(seqs), **({"F2": 1.0} if k else {})).search_hmm(
        phmm, pyhmmer.easel.DigitalSequenceBlock(aa, b)) for k, b in enumerate(blocks)]
    want = pipeline_counts(parts[0].merge(*parts[1:]))
    assert merged_counts([pipeline_counts(h) for h in parts]) == want and want["n_past_vit"] > 0
