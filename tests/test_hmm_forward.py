"""The Forward filter: the plain reference (clalign.hmm.fwd_reference) against HMMER's own
decisions (pyhmmer, one target at a time at F3 just above and below the reference's P-value),
and the kernel (kernels/hmm_forward.mako) against the reference at work-group edges, long
targets, stops, and real hits whose rows are rescaled."""
import math
import os

import numpy as np
import pytest

pytest.importorskip("pyopencl")
import pyopencl as cl  # noqa: E402

from clalign.data import as_database  # noqa: E402
from clalign.hmm.fwd_engine import fwd_scores_device  # noqa: E402
from clalign.hmm.fwd_reference import build_fwd_profile, fwd_reference  # noqa: E402
from clalign.hmm.hmmfile import read_hmms  # noqa: E402
from clalign.hmm.search_parts import _hmmer_lengths  # noqa: E402
from clalign.hmm.vit_search import _bits  # noqa: E402
from clalign.runtime import Runtime  # noqa: E402

pytestmark = pytest.mark.usefixtures("each_device")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HMMS = os.path.join(REPO, "data", "hmms.hmm")
PROTEOME = os.path.join(REPO, "data", "proteome.faa.gz")
STAR = 25                                   # clalign PROTEIN code of '*'


@pytest.fixture(scope="module")
def proteome():
    db = as_database(PROTEOME)
    hl, stops = _hmmer_lengths(db)
    off = np.asarray(db.offsets, dtype=np.int64)
    codes = [np.concatenate([db.residues[off[i]:off[i + 1]], np.full(stops[i], STAR, np.uint8)])
             for i in range(len(db))]
    return db, hl, stops, off, codes


def _device(residues, off):
    rt = Runtime.get(None)
    mf = cl.mem_flags
    res = np.ascontiguousarray(residues, dtype=np.uint8)
    return (cl.Buffer(rt.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=res if res.size else np.zeros(4, np.uint8)),
            cl.Buffer(rt.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.asarray(off, dtype=np.uint64)))


def _close(got, want):
    both_inf = np.isinf(got) & np.isinf(want) & (np.sign(got) == np.sign(want))
    with np.errstate(invalid="ignore"):
        return bool(np.all(both_inf | (np.abs(got - want) <= 1e-4 * np.maximum(1.0, np.abs(want)))))


def test_reference_agrees_with_hmmer(proteome):
    """HMMER passes each target at F3 = P(reference bits - 0.002) and fails it at
    P(bits + 0.002): its Forward score lies within 0.002 bits of the reference's."""
    pyhmmer = pytest.importorskip("pyhmmer")
    from pyhmmer.easel import Alphabet, DigitalSequenceBlock, SequenceFile
    from pyhmmer.plan7 import HMMFile, Pipeline

    from clalign.hmm.profile import EASEL_OF_CODE
    from clalign.hmm.vit_bias import filter_scores

    db, hl, stops, off, codes = proteome
    abc = Alphabet.amino()
    with SequenceFile(PROTEOME, digital=True, alphabet=abc) as sf:
        seqs = sf.read_block()
    with HMMFile(HMMS) as hf:
        phmms = list(hf)
    idx = np.random.default_rng(1).choice(len(db), 25, replace=False)
    informative = 0
    for m in (0, 1, 4):
        h = list(read_hmms(HMMS))[m]
        prof = build_fwd_profile(h)
        bits = _bits(fwd_reference(prof, [codes[i] for i in idx]),
                        filter_scores(h.M, h.compo, db.residues, off[idx], off[idx + 1], stops[idx], EASEL_OF_CODE, 1))
        for n, i in enumerate(idx):
            got = []
            for d in (-0.002, 0.002):
                if bits[n] + d < prof.tau:
                    break
                P = math.exp(-prof.lam * (bits[n] + d - prof.tau))
                pipe = Pipeline(abc, Z=1000, F1=1.0, F2=1.0, F3=P)
                hits = pipe.search_hmm(phmms[m], DigitalSequenceBlock(abc, [seqs[int(i)]]))
                got.append(hits.__getstate__()["pipeline"]["n_past_fwd"])
            if len(got) == 2:
                informative += 1
                assert got == [1, 0], (h.name, int(i), bits[n])
    assert informative > 30
    del pyhmmer


def test_kernel_equals_reference_on_proteome(proteome):
    """Every proteome protein (stops counted in L) x two models, hits with rescaled rows among them."""
    db, hl, stops, off, codes = proteome
    rb, ob = _device(db.residues, off)
    idx = np.arange(len(db))[::-1].copy()
    for m, h in enumerate(list(read_hmms(HMMS))[:2]):
        prof = build_fwd_profile(h)
        want = fwd_reference(prof, [codes[i] for i in idx])
        got = fwd_scores_device(prof, rb, ob, idx, hl[idx])
        assert _close(got, want), h.name
        assert m or want.max() > 100          # hits of 2-Hacid_dh_C: rows rescaled (xE > 1e4) many times


@pytest.mark.parametrize("overrides", [None, {"WG": 16, "P": 2}, {"WG": 32, "P": 17}])
def test_kernel_edges(overrides):
    """One residue, stops only, 8,192 residues, 63/64/65 targets; a model of 257 states on
    work-groups that split it at an item's edge (16 x 2 cannot: the default and 32 x 17 do)."""
    rng = np.random.default_rng(11)
    lens = [1, 0, 2, 8192] + list(rng.integers(1, 700, 61))
    seqs = [rng.integers(1, 25, n).astype(np.uint8) for n in lens]
    stops = np.zeros(len(lens), dtype=np.int64)
    stops[[1, 2, 9]] = [2, 1, 3]
    off = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    rb, ob = _device(np.concatenate(seqs), off)
    L = np.asarray(lens) + stops
    full = [np.concatenate([s, np.full(k, STAR, np.uint8)]) for s, k in zip(seqs, stops)]
    hmms = list(read_hmms(HMMS))
    for h in (hmms[4], hmms[2]):              # M = 87, 262
        if overrides is not None and overrides["WG"] * overrides["P"] < h.M:
            continue
        prof = build_fwd_profile(h)
        for n in (63, 64, 65):
            idx = np.arange(n)
            want = fwd_reference(prof, [full[i] for i in idx])
            got = fwd_scores_device(prof, rb, ob, idx, L[idx], overrides=overrides)
            assert _close(got, want), (h.name, n)
