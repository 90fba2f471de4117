"""Striped CPU MSV/SSV kernels (kernels/hmm_striped.mako) against the numpy reference and pyhmmer.

Same data and truth as tests/test_hmm_kernels.py (its helpers are reused): seeded
``pyhmmer.plan7.HMM.sample`` models, seeded synthetic sequences (random residues, consensus
fragments, J-state repeats, overflowing consensus repeats), the hand-made ramp profile that
crosses the overflow line one unit at a time, and pyhmmer's bundled proteome and models.
The kernel is forced with ``kernel="striped"`` so the tests hold on every device that builds
it (Clang-based CPU compilers; on the others it is skipped with that reason).
"""
import dataclasses

import numpy as np
import pytest

pytest.importorskip("pyhmmer")
pytest.importorskip("pyopencl")

from test_hmm_kernels import (STD, _protein_hmms, _proteome_truth, _RampProfile, hmmer_codes,  # noqa: E402
                              proteome, pyhmmer_scores, run_scores, same, sampled_hmm, synthetic_seqs)

from clalign.data import PROTEIN, Database  # noqa: E402
from clalign.errors import ParameterError  # noqa: E402
from clalign.hmm import engine as E  # noqa: E402
from clalign.hmm import reference as R  # noqa: E402
from clalign.hmm.kernel_choice import choose_striped, use_striped  # noqa: E402
from clalign.hmm.params import striped_q  # noqa: E402
from clalign.hmm.striped import striped_rbv  # noqa: E402
from clalign.runtime import Runtime  # noqa: E402

pytestmark = pytest.mark.usefixtures("each_device")
__all__ = ["proteome"]                     # the fixture, imported for the proteome test


def _vecs():
    caps = Runtime.get().caps
    if not (caps.is_cpu and caps.clang_vectors):
        pytest.skip("the striped kernel is built for Clang-based CPU compilers (PoCL); not this device")
    return (16, 32)


def _striped(prof, db, algo, vec):
    return run_scores(prof, db, algo, kernel="striped", VEC=vec)


def sampled_hmm_rbv(M):
    return E.profile_from_pyhmmer(sampled_hmm(M)).rbv


@pytest.mark.parametrize("M", [1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 545])
def test_striped_vs_reference_at_lane_multiples(M):
    """Every M around the lane counts (Q = ceil(M / VEC) with padding states; M = 545: the
    unrolled SSV's Q rounded up from 18 to 20 at VEC 32, only there), both filters, exact
    bytes converted to scores, SSV unrolled and not; pyhmmer on the same sequences for a few M."""
    hmm = sampled_hmm(M)
    prof = E.profile_from_pyhmmer(hmm)
    seqs = synthetic_seqs(hmm, M, n=6) + [np.zeros(0, np.uint8)]
    db = Database.from_sequences(seqs)
    want_m, want_s = R.msv_reference(prof, seqs), R.ssv_reference(prof, seqs)
    for vec in _vecs():
        if M > 512 and vec == 16:              # one large unrolled build (32 lanes) is enough
            continue
        got_m, r = _striped(prof, db, "msv", vec)
        assert r.values["VEC"] == vec and r.values["ALGO"] == "msv"
        assert same(got_m, want_m), (M, vec)
        got_s, rs = _striped(prof, db, "ssv", vec)
        assert same(got_s, want_s) and rs.values["QC"] == striped_q(M, vec), (M, vec)
        assert same(run_scores(prof, db, "ssv", kernel="striped", VEC=vec, QC=0)[0], want_s), (M, vec)
    if M in (16, 33, 65):
        pm, ps = pyhmmer_scores(hmm, seqs)
        assert same(want_m, pm) and same(want_s, ps)


def test_striped_overflow_boundary():
    """The ramp profile: MSV's overflow flag and xJ byte, SSV's unsigned xE exactly below
    255 - bias and at or above it where HMMER's is, for both vector widths."""
    prof = _RampProfile()
    A, C, W = (PROTEIN.encode(c) for c in "ACW")
    seqs = [np.repeat(A, n) for n in range(60, 140)]
    seqs += [np.concatenate([np.repeat(A, n), C, np.repeat(A, 5)]) for n in range(80, 120, 3)]
    seqs += [np.tile(np.concatenate([np.repeat(A, 30), np.repeat(W, 3)]), 4), np.repeat(A, 3000),
             np.repeat(W, 2000), STD[np.random.default_rng(0).integers(0, 20, 500)], np.zeros(0, np.uint8)]
    xe = R.ssv_xe(prof, seqs)
    xJ, ovf = R.msv_bytes(prof, seqs)
    bias = prof.bias_b
    assert {254 - bias, 255 - bias, 256 - bias} <= set(xe.tolist()) and ovf.any() and (~ovf).any()
    db = Database.from_sequences(seqs)
    for vec in _vecs():
        got_m, r = _striped(prof, db, "msv", vec)
        assert same(got_m, R.msv_reference(prof, seqs)), vec
        assert np.array_equal((r.raw >> 8) & 1, ovf.astype(np.uint32)), vec
        assert np.array_equal(np.where(ovf, 0, r.raw & 0xFF), np.where(ovf, 0, xJ)), vec
        for qc in (None, 0):                   # the row in registers (QC = Q), in scratch memory
            got_s, rs = run_scores(prof, db, "ssv", kernel="striped", VEC=vec, QC=qc)
            assert same(got_s, R.ssv_reference(prof, seqs)), (vec, qc)
            ok = xe < 255 - bias
            assert np.array_equal(rs.raw[ok], xe[ok]) and (rs.raw[~ok] >= 255 - bias).all(), (vec, qc)


def test_striped_table_layout():
    """State k of the table sits at vector k % Q, lane k // Q; padding states cost 255."""
    hmm = sampled_hmm(33)
    prof = E.profile_from_pyhmmer(hmm)
    t = striped_rbv(prof, 16)
    assert t.shape == (32, 3, 16)
    k = np.arange(33)
    assert np.array_equal(t[:28, k % 3, k // 3], np.asarray(prof.rbv))
    assert (t[:, 0, 11:] == 255).all() and (t[:, 1:, 11] == 255).all() and (t[28:] == 255).all()


def test_striped_msv_api_ssv_first_and_empty():
    """msv_scores on a CPU device runs SSV first and MSV only where SSV has no result; the
    result is pyhmmer's msv_filter for J-state and overflowing sequences, empty ones, and
    an empty database."""
    _vecs()
    hmm = sampled_hmm(40)
    prof = E.profile_from_pyhmmer(hmm)
    seqs = synthetic_seqs(hmm, 5, n=10) + [np.zeros(0, np.uint8)] * 3
    db = Database.from_sequences(seqs)
    pm, ps = pyhmmer_scores(hmm, seqs)
    assert np.isnan(ps).any() and np.isinf(pm).any()             # both paths are taken
    got, run = E.msv_scores_run(prof, db, kernel="striped")
    assert same(got, pm) and run.values["ALGO"] == "ssv" and run.blocks is None
    assert same(E.ssv_scores(prof, db, kernel="striped"), ps)
    assert E.msv_scores(prof, Database.from_sequences([]), kernel="striped").shape == (0,)


def test_striped_proteome_vec16(proteome):
    """The bundled proteome (stops counted) x the 14 protein models with the 16-lane kernel
    (the 32-lane one with its unrolled SSV builds is the default on PoCL: tests/test_hmm_kernels.py
    covers it); here SSV with the run-time Q, one build for every model (msv_scores runs it too)."""
    _vecs()
    codes = hmmer_codes(proteome)
    for name, path, hmm, i, nfile in _protein_hmms():
        want_m, want_s = _proteome_truth(hmm, codes)
        assert same(E.msv_scores(hmm, proteome, kernel="striped", VEC=16, QC=0), want_m), name
        assert same(E.ssv_scores(hmm, proteome, kernel="striped", VEC=16, QC=0), want_s), name


def test_striped_choice():
    """CPU devices take the striped kernel unless an S-lane value is named; GPUs never;
    VEC 32 only with Clang vectors; one build for a search, one layout (none)."""
    caps = Runtime.get().caps
    cpu = dataclasses.replace(caps, is_cpu=True, is_gpu=False, clang_vectors=True)
    gpu = dataclasses.replace(caps, is_cpu=False, is_gpu=True)
    assert use_striped(cpu) and not use_striped(gpu)
    assert not use_striped(dataclasses.replace(cpu, clang_vectors=False))    # no Clang builtins there
    assert not use_striped(cpu, {"S": 32}) and not use_striped(cpu, {"WG_WAVES": 2})
    assert use_striped(gpu, {"kernel": "striped"}) and not use_striped(cpu, {"kernel": "slane"})
    with pytest.raises(ParameterError, match="kernel"):
        use_striped(cpu, {"kernel": "gpu"})
    plain = dataclasses.replace(cpu, clang_vectors=False)
    assert choose_striped("msv", plain)["VEC"] == 16
    with pytest.raises(ParameterError, match="VEC=32"):
        choose_striped("msv", plain, {"VEC": 32})
    with pytest.raises(ParameterError):
        choose_striped("ssv", cpu, {"WG": 3})
    assert [choose_striped("ssv", cpu, None, M)["QC"] for M in (1, 32, 33, 512, 513, 2048, 2049)] == \
        [1, 1, 2, 16, 20, 64, 0]
    assert choose_striped("msv", cpu, None, 100)["QC"] == 0
    with pytest.raises(ParameterError, match="QC=3"):
        choose_striped("ssv", cpu, {"QC": 3}, 100)
    with pytest.raises(ParameterError, match="QC=4"):
        choose_striped("msv", cpu, {"QC": 4}, 100)
    t = striped_rbv(E.profile_from_pyhmmer(sampled_hmm(33)), 32, 20)      # a rounded-up Q: padding
    k = np.arange(33)
    assert t.shape == (32, 20, 32) and np.array_equal(t[:28, k % 20, k // 20], np.asarray(sampled_hmm_rbv(33)))
    assert (t[:, 13:, 1] == 255).all() and (t[:, :, 2:] == 255).all()
    if caps.is_cpu:
        assert E.shared_layout([16, 33, 900]) == [{}, {}, {}]
        # SSV with Q = 1 and 2 in registers, SSV and MSV with a run-time Q
        assert len(E.prebuild([16, 33, 900, 20])) == 4
