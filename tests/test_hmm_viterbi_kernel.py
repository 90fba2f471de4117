"""The Viterbi filter kernel (kernels/hmm_viterbi.mako) against the plain reference
(clalign.hmm.vit_reference, itself pinned to HMMER in test_hmm_viterbi.py), word for word.

One build (WG = 32 work-items of P = 17 states: models up to 544 states) serves every case,
so that the states of a work-item end at 17, 34, ... and the work-group at 544: the sampled
models sit around those edges, the sequences include overflowing consensus repeats (+inf),
empty and one-residue targets; the bundled models run over the bundled proteome with its
trailing stops (HMMER counts them: '*' residues scoring -inf)."""
import os

import numpy as np
import pytest

pytest.importorskip("pyopencl")
pytest.importorskip("pyhmmer")

from test_hmm_viterbi import STD, sampled, sequences  # noqa: E402

from clalign.data import PROTEIN, as_database  # noqa: E402
from clalign.errors import ParameterError  # noqa: E402
from clalign.hmm.hmmfile import read_hmms  # noqa: E402
from clalign.hmm.vit_engine import choose_viterbi, pack_targets, vit_scores_device, vit_words_device  # noqa: E402
from clalign.hmm.vit_reference import build_vit_profile, vit_reference, vit_words  # noqa: E402

pytestmark = pytest.mark.usefixtures("each_device")
ONE_BUILD = {"WG": 32, "P": 17}
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STAR = PROTEIN.letters.index("*")


def _device_words(prof, seqs):
    res, off = pack_targets(seqs)
    lens = np.diff(off)
    return vit_words_device(prof, res, off, np.arange(len(seqs)), lens, overrides=ONE_BUILD)[0]


@pytest.mark.parametrize("M", [1, 16, 17, 18, 34, 35, 257, 543, 544])
def test_kernel_equals_reference_at_work_item_edges(M):
    phmm, h = sampled(M, 1)
    prof = build_vit_profile(h)
    seqs = sequences(phmm, M, n=6)
    cons = STD[np.argmax(np.asarray(phmm.match_emissions)[1:, :20], axis=1)]
    seqs += [np.tile(cons, max(4, 6000 // M)), np.zeros(0, np.uint8), STD[:1]]
    assert np.array_equal(_device_words(prof, seqs), vit_words(prof, seqs)), M


def test_kernel_long_sequence():
    """A 35,000-residue target (the longest proteins of real databases)."""
    phmm, h = sampled(100, 2)
    prof = build_vit_profile(h)
    seqs = [STD[np.random.default_rng(3).integers(0, 20, 35000)]]
    assert np.array_equal(_device_words(prof, seqs), vit_words(prof, seqs))


def test_kernel_bundled_proteome_with_stops():
    db = as_database(os.path.join(REPO, "data", "proteome.faa.gz"))
    assert int(np.asarray(db.stops).sum()) > 0
    idx = np.random.default_rng(4).choice(len(db), 50, replace=False)
    codes = [np.concatenate((db.sequence(int(i)), np.full(int(db.stops[int(i)]), STAR, np.uint8))) for i in idx]
    for h in read_hmms(os.path.join(REPO, "data", "hmms.hmm")):
        prof = build_vit_profile(h)
        got = vit_scores_device(prof, db.residues, db.offsets, idx, db.stops, overrides=ONE_BUILD)
        want = vit_reference(prof, codes)
        assert np.array_equal(got, want), h.name


def test_pack_and_choice():
    res, off = pack_targets([np.array([3, 4], np.uint8), np.zeros(0, np.uint8), np.array([5], np.uint8)])
    assert res.tolist() == [3, 4, 5] and off.tolist() == [0, 2, 2, 3]
    assert choose_viterbi(100)["WG"] * choose_viterbi(100)["P"] >= 100
    assert choose_viterbi(5000)["P"] <= 32
    assert choose_viterbi(20, None, 1024, 32)["WG"] == 32 and choose_viterbi(20)["WG"] == 16
    with pytest.raises(ParameterError):
        choose_viterbi(600, {"WG": 16, "P": 32})
