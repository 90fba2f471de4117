"""S-lane MSV/SSV kernels (kernels/hmm_slane.mako) against the numpy reference and pyhmmer.

Data provenance: the real proteome (``938293.PRJEB85.HG003687.faa``, 2,100 proteins) and the
protein models (``tests/data/hmms/txt/*.hmm`` except the RNA model RF00001 and the DNA model
bmyD) ship inside the installed pyhmmer package (its own test data). Their trailing ``*`` stop
symbols are dropped by clalign's FASTA reader, so pyhmmer is given the sequences exactly as the
database holds them. Synthetic models are ``pyhmmer.plan7.HMM.sample`` (seeded); synthetic
sequences are seeded random residues, model consensus fragments and long consensus repeats
(which overflow the byte range: +inf).

Truth: pyhmmer's ``OptimizedProfile.msv_filter`` / ``ssv_filter`` with ``om.L`` = the target
length (HMMER 3.4's p7_MSVFilter / p7_SSVFilter); ``None`` from ``ssv_filter`` is NaN here.
"""
import glob
import os

import numpy as np
import pytest

pyhmmer = pytest.importorskip("pyhmmer")
cl = pytest.importorskip("pyopencl")

from pyhmmer.easel import Alphabet, TextSequence  # noqa: E402
from pyhmmer.plan7 import HMM, HMMFile  # noqa: E402

from clalign.data import PROTEIN, Database, as_database  # noqa: E402
from clalign.hmm import engine as E  # noqa: E402
from clalign.hmm import reference as R  # noqa: E402
from clalign.hmm.params import S_VALUES, geometry  # noqa: E402

PYH_DATA = os.path.join(os.path.dirname(pyhmmer.__file__), "tests", "data")
PROTEOME = os.path.join(PYH_DATA, "seqs", "938293.PRJEB85.HG003687.faa")
AMINO = Alphabet.amino()
STD = np.array([PROTEIN.letters.index(c) for c in "ACDEFGHIKLMNPQRSTVWY"], dtype=np.uint8)


def same(a, b):
    """Exact float equality, +inf and NaN (pyhmmer's None) included."""
    return np.array_equal(np.asarray(a, np.float32), np.asarray(b, np.float32), equal_nan=True)


def pyhmmer_scores(hmm, codes):
    """(msv, ssv) float32 arrays from pyhmmer for clalign code arrays."""
    prof = E.profile_from_pyhmmer(hmm)
    om = prof._om
    msv, ssv = [], []
    for c in codes:
        ds = TextSequence(sequence=PROTEIN.decode(c)).digitize(AMINO)
        om.L = len(c)
        msv.append(om.msv_filter(ds))
        s = om.ssv_filter(ds)
        ssv.append(np.nan if s is None else s)
    return np.array(msv, np.float32), np.array(ssv, np.float32)


def consensus(hmm):
    em = np.asarray(hmm.match_emissions)[1:, :20]
    return STD[np.argmax(em, axis=1)]


def synthetic_seqs(hmm, seed, n=40):
    """Random residues, consensus fragments, a few long consensus repeats; lengths from 1 up."""
    rng = np.random.default_rng(seed)
    cons = consensus(hmm)
    out = []
    lengths = [1, 2, 3, 5, 31, 32, 33, 63, 64, 65, 127, 128, 129] + list(rng.integers(1, 400, size=n))
    for i, L in enumerate(lengths):
        s = STD[rng.integers(0, 20, size=int(L))]
        if i % 3 == 0 and L > 4:                       # embed a consensus fragment
            a = int(rng.integers(0, max(1, cons.size - 1)))
            frag = cons[a:a + int(rng.integers(1, L))]
            p = int(rng.integers(0, L - frag.size + 1))
            s[p:p + frag.size] = frag
        out.append(s)
    for reps in (3, 12):                               # saturating ones (+inf)
        out.append(np.tile(cons, reps))
    if cons.size >= 4:                                 # fragments separated by random linkers: J state
        parts = []
        for _ in range(6):
            parts += [cons[: max(2, cons.size // 2)], STD[rng.integers(0, 20, size=30)]]
        out.append(np.concatenate(parts))
    return out


_HMMS = {}


def sampled_hmm(M, seed=0):
    key = (M, seed)
    if key not in _HMMS:
        _HMMS[key] = HMM.sample(AMINO, M, 1000 + 7 * M + seed)
    return _HMMS[key]


def run_scores(prof, db, algo, **kw):
    r = E.run_raw(prof, db.residues, db.offsets, db.lengths, db.order, algo, **kw)
    if algo == "msv":
        return R.msv_from_bytes(prof, r.raw & 0xFF, (r.raw >> 8) & 1, db.lengths), r
    return R.ssv_from_bytes(prof, r.raw, db.lengths), r


# ---------------------------------------------------------------------------------------
def test_reference_matches_pyhmmer_on_sampled_models():
    for M, seed in ((3, 0), (40, 1), (129, 2), (300, 3)):
        hmm = sampled_hmm(M, seed)
        prof = E.profile_from_pyhmmer(hmm)
        seqs = synthetic_seqs(hmm, seed)
        want_m, want_s = pyhmmer_scores(hmm, seqs)
        assert same(R.msv_reference(prof, seqs), want_m), M
        assert same(R.ssv_reference(prof, seqs), want_s), M
        xJ, ovf = R.msv_bytes(prof, seqs)
        assert same(R.msv_from_bytes(prof, xJ, ovf, [s.size for s in seqs]), want_m), M
        if M >= 40:
            assert np.isinf(want_m).any() and np.isfinite(want_m).any(), M


def _cases():
    """(S, M, H): model lengths just below, at and above the W*L*H coverage boundaries."""
    out = []
    for S in S_VALUES:
        P = geometry(S)["P"]
        for H in (1, 2, 3):
            for M in (P * H - 1, P * H, P * H + 1):
                if M < 2 or M > P * H or (H == 3 and M != P * H):
                    continue
                out.append((S, M, H))
        out.append((S, P * 2 + 1, None))          # just past 2 words: auto H = 3
    return out


@pytest.mark.parametrize("S", S_VALUES)
def test_every_slane_kernel_vs_reference_and_pyhmmer(S):
    for (s, M, H) in [c for c in _cases() if c[0] == S]:
        hmm = sampled_hmm(M)
        prof = E.profile_from_pyhmmer(hmm)
        seqs = synthetic_seqs(hmm, M, n=25)
        db = Database.from_sequences(seqs)
        want_m, want_s = pyhmmer_scores(hmm, seqs)
        over = {"S": S} if H is None else {"S": S, "H": H}
        for spc in (1, 3):                         # 3: several sequences per column (END resets)
            got_m, r = run_scores(prof, db, "msv", spc=spc, **over)
            assert r.values["S"] == S and r.values["H"] * geometry(S)["P"] >= M
            assert same(got_m, want_m), (S, M, H, spc, "msv")
            got_s, _ = run_scores(prof, db, "ssv", spc=spc, **over)
            assert same(got_s, want_s), (S, M, H, spc, "ssv")
        assert same(got_m, R.msv_reference(prof, seqs)) and same(got_s, R.ssv_reference(prof, seqs))


@pytest.mark.parametrize("over", [{"S": 4, "WG_WAVES": 2}, {"S": 2, "WAVE": 16}, {"S": 128, "WAVE": 64},
                                  {"S": 16, "WG_WAVES": 4}])
def test_other_wavefront_shapes(over):
    hmm = sampled_hmm(70)
    prof = E.profile_from_pyhmmer(hmm)
    seqs = synthetic_seqs(hmm, 5, n=30)
    db = Database.from_sequences(seqs)
    want_m, want_s = pyhmmer_scores(hmm, seqs)
    for spc in (1, 2):
        assert same(run_scores(prof, db, "msv", spc=spc, **over)[0], want_m), over
        assert same(run_scores(prof, db, "ssv", spc=spc, **over)[0], want_s), over


def test_empty_and_zero_length_sequences():
    hmm = sampled_hmm(20)
    prof = E.profile_from_pyhmmer(hmm)
    seqs = [np.zeros(0, np.uint8), STD[:5], np.zeros(0, np.uint8), consensus(hmm)]
    db = Database.from_sequences(seqs)
    for S in (1, 32, 128):
        assert same(run_scores(prof, db, "msv", S=S)[0], R.msv_reference(prof, seqs))
        assert same(run_scores(prof, db, "ssv", S=S)[0], R.ssv_reference(prof, seqs))
    empty = Database.from_sequences([])
    assert E.msv_scores(prof, empty).shape == (0,)


def test_kernel_choice_follows_eq_2_to_5():
    from clalign.runtime import Runtime

    caps = Runtime.get().caps
    for M in (2, 16, 32, 33, 100, 128, 129, 400, 1000, 2400):
        v = E.choose_kernel(M, "msv", caps, {"HMAX": 16})
        P = geometry(v["S"])["P"]
        assert P * 16 >= M or v["S"] == 1                       # the most lanes that cover M
        bigger = [s for s in S_VALUES if s > v["S"]]
        assert all(geometry(s)["P"] * 16 < M for s in bigger)
        assert v["H"] == -(-M // P)                             # the smallest H that fits
    with pytest.raises(Exception):
        E.choose_kernel(100, "msv", caps, {"S": 128, "H": 10})  # 10 states < 100


# ---------------------------------------------------------------------------------------
def _protein_hmms():
    """(label, path or None, pyhmmer HMM, index in file) for every protein model of the files."""
    out = []
    for fn in sorted(glob.glob(os.path.join(PYH_DATA, "hmms", "txt", "*.hmm"))):
        with HMMFile(fn) as f:
            hmms = list(f)
        for i, hmm in enumerate(hmms):
            if hmm.alphabet.K == 20:
                out.append((f"{os.path.basename(fn)}#{i}", fn, hmm, i, len(hmms)))
    return out


@pytest.fixture(scope="module")
def proteome():
    return as_database(PROTEOME)


def test_real_proteome_every_real_protein_hmm(proteome):
    """All 2,100 proteins x every protein model, auto-selected kernel, vs pyhmmer (exact)."""
    codes = [proteome.sequence(i) for i in range(len(proteome))]
    hmms = _protein_hmms()
    assert len(hmms) == 14                             # KR, LuxC, PF02826, Thioesterase + 10 in RREFam
    try:                                               # the profile engineer's profile, if present
        from clalign.hmm import build_msv_profile, read_hmms
    except ImportError:
        build_msv_profile = None
    for name, path, hmm, i, nfile in hmms:
        want_m, want_s = pyhmmer_scores(hmm, codes)
        assert same(E.msv_scores(hmm, proteome), want_m), name
        # a one-model file is also accepted as a path
        got_s = E.ssv_scores(path if nfile == 1 else hmm, proteome)
        assert same(got_s, want_s), name
        if build_msv_profile is not None:
            prof = build_msv_profile(list(read_hmms(path))[i])
            adapter = E.profile_from_pyhmmer(hmm)
            assert np.array_equal(prof.rbv, adapter.rbv) and np.array_equal(prof.sbv, adapter.sbv), name
            assert same(E.msv_scores(prof, proteome), want_m), name
