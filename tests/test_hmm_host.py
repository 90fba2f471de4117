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
