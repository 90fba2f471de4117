"""HMMER's Viterbi filter: the plain reference (clalign.hmm.vit_reference) against HMMER
itself (pyhmmer), the bias filter score (clalign.hmm.vit_bias) against HMMER's pipeline
counts, and the OpenCL kernel (kernels/hmm_viterbi.mako) against the reference.

pyhmmer does not expose the Viterbi filter's score, so the reference is compared through
HMMER's own decision: with the bias filter off and F1 = 1, a target passes the Viterbi
stage iff P(score) <= F2; scores are multiples of ln2/500 nats, so passing at F2 = P(s - half
a step) and failing at F2 = P(s + half a step) pins HMMER's score to our s. Targets whose MSV
P-value is already below those F2 skip HMMER's Viterbi filter and tell nothing: left out.
Data: the bundled models (data/hmms.hmm) and proteome (data/proteome.faa.gz, HG003687 and
neighbours, ending in '*'), and pyhmmer-sampled models (seeded) at sizes around the kernel's
work-group multiples with random, consensus and saturating (repeated consensus) sequences.
"""
import io
import os

import numpy as np
import pytest

pyhmmer = pytest.importorskip("pyhmmer")

from pyhmmer.easel import Alphabet, DigitalSequenceBlock, SequenceFile, TextSequence  # noqa: E402
from pyhmmer.plan7 import HMM, Background, HMMFile, Pipeline, Profile  # noqa: E402

from clalign.data import PROTEIN  # noqa: E402
from clalign.hmm.hmmfile import read_hmms  # noqa: E402
from clalign.hmm.pvalue import LN2, gumbel_surv, null_nats  # noqa: E402
from clalign.hmm.vit_bias import filter_scores  # noqa: E402
from clalign.hmm.vit_reference import SCALE_W, build_vit_profile, vit_reference, vit_words  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HMMS = os.path.join(REPO, "data", "hmms.hmm")
PROTEOME = os.path.join(REPO, "data", "proteome.faa.gz")
AMINO = Alphabet.amino()
STD = np.array([PROTEIN.letters.index(c) for c in "ACDEFGHIKLMNPQRSTVWY"], dtype=np.uint8)


@pytest.fixture(scope="module")
def bundled():
    with HMMFile(HMMS) as hf:
        phmms = list(hf)
    with SequenceFile(PROTEOME, digital=True, alphabet=AMINO) as sf:
        seqs = sf.read_block()
    return phmms, list(read_hmms(HMMS)), seqs


def _optimized(phmm):
    prof = Profile(phmm.M, AMINO)
    prof.configure(phmm, Background(AMINO), 400)
    return prof.to_optimized()


def test_reference_equals_hmmer_viterbi_filter(bundled):
    phmms, hmms, seqs = bundled
    pick = np.random.default_rng(1).choice(len(seqs), 25, replace=False)
    sub = [seqs[int(i)] for i in pick]
    step = np.float32(1.0) / SCALE_W
    informative = 0
    for ph, h in zip(phmms, hmms):
        prof = build_vit_profile(h)
        om = _optimized(ph)
        assert om.ddbound_w == prof.ddbound, h.name
        scores = vit_reference(prof, [np.asarray(s.sequence) for s in sub], easel=True)
        for s, v in zip(sub, scores):
            null = null_nats(np.array([len(s)]))[0]

            def P(x, stats):
                return float(gumbel_surv(np.float64(np.float32((np.float32(x) - null) / LN2)), *stats))

            lo, hi = P(v - step / 2, h.viterbi), P(v + step / 2, h.viterbi)
            om.L = len(s)
            if not np.isfinite(v) or P(om.msv_filter(s), h.msv) <= lo or not lo > hi:
                continue
            for F2, want in ((lo, 1), (hi, 0)):
                pipe = Pipeline(AMINO, Z=1, F1=1.0, F2=F2, bias_filter=False)
                got = pipe.search_hmm(ph, DigitalSequenceBlock(AMINO, [s])).__getstate__()["pipeline"]["n_past_vit"]
                assert got == want, (h.name, s.name, v, F2)
            informative += 1
    assert informative > 100


def test_bias_filter_counts_equal_hmmer(bundled):
    phmms, hmms, seqs = bundled
    codes = [np.asarray(s.sequence, dtype=np.uint8) for s in seqs]
    L = np.array([c.size for c in codes])
    ends = np.cumsum(L)
    null = null_nats(L)
    for ph, h in zip(phmms, hmms):
        om = _optimized(ph)
        usc = np.empty(len(seqs), np.float32)
        for i, s in enumerate(seqs):
            om.L = len(s)
            usc[i] = om.msv_filter(s)
        fs = filter_scores(h.M, h.compo, np.concatenate(codes), ends - L, ends)
        pm = gumbel_surv(((usc - null).astype(np.float32) / LN2).astype(np.float32), *h.msv)
        pb = gumbel_surv(((usc - fs).astype(np.float32) / LN2).astype(np.float32), *h.msv)
        st = Pipeline(AMINO, Z=len(seqs)).search_hmm(ph, seqs).__getstate__()["pipeline"]
        assert (int((pm <= 0.02).sum()), int(((pm <= 0.02) & (pb <= 0.02)).sum())) == \
            (st["n_past_msv"], st["n_past_bias"]), h.name


def test_bias_filter_pieces_equal_one_call(bundled, monkeypatch):
    """Scores cut into pieces for the shared pool equal one serial pass (stops and cmap too)."""
    from clalign.hmm import vit_bias
    from clalign.hmm.profile import EASEL_OF_CODE

    _, hmms, seqs = bundled
    codes = np.concatenate([np.asarray(s.sequence, dtype=np.uint8) for s in seqs])
    L = np.array([len(s) for s in seqs])
    ends = np.cumsum(L)
    stops = np.arange(L.size) % 3
    h = hmms[0]
    whole = filter_scores(h.M, h.compo, codes, ends - L, ends, stops)
    monkeypatch.setattr(vit_bias, "PIECE_RESIDUES", 64)
    assert vit_bias._pieces(ends - L, ends, stops, 2).size > 3
    np.testing.assert_array_equal(filter_scores(h.M, h.compo, codes, ends - L, ends, stops), whole)
    for threads in (1, 3):                                  # a search's --cpu sizes the pool
        np.testing.assert_array_equal(filter_scores(h.M, h.compo, codes, ends - L, ends, stops, threads=threads),
                                      whole)
    assert set(vit_bias._POOLS) >= {1, 3}
    inv = np.zeros(256, np.uint8)
    inv[EASEL_OF_CODE] = np.arange(EASEL_OF_CODE.size, dtype=np.uint8)     # Easel codes back to clalign's
    mapped = filter_scores(h.M, h.compo, inv[codes], ends - L, ends, stops, EASEL_OF_CODE)
    np.testing.assert_array_equal(mapped, whole)


def sampled(M, seed):
    """A pyhmmer-sampled model read back with clalign's reader."""
    hmm = HMM.sample(AMINO, M, 4000 + 11 * M + seed)
    ev = hmm.evalue_parameters          # made-up statistics (MSV P near 1: every target reaches the Viterbi filter)
    ev.m_mu, ev.m_lambda, ev.v_mu, ev.v_lambda, ev.f_tau, ev.f_lambda = 30.0, 0.7, -10.0, 0.7, -4.0, 0.7
    buf = io.BytesIO()
    hmm.write(buf)
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"clalign-vit-{os.getpid()}-{M}-{seed}.hmm")
    with open(path, "wb") as fh:
        fh.write(buf.getvalue())
    try:
        ours = next(iter(read_hmms(path)))
        ours.msv, ours.viterbi = (30.0, 0.7), (-10.0, 0.7)
        return hmm, ours
    finally:
        os.unlink(path)


def sequences(phmm, seed, n=12):
    rng = np.random.default_rng(seed)
    cons = STD[np.argmax(np.asarray(phmm.match_emissions)[1:, :20], axis=1)]
    out = [STD[rng.integers(0, 20, size=int(L))] for L in [1, 2, 31, 33, 64] + list(rng.integers(1, 500, n))]
    for i in range(0, len(out), 3):
        s = out[i]
        if s.size > 4:
            frag = cons[: int(rng.integers(1, min(s.size, cons.size) + 1))]
            s[: frag.size] = frag
    out += [np.tile(cons, 40), np.tile(cons, 2)]             # overflow; a strong hit
    out.append(np.concatenate([cons, np.full(3, PROTEIN.letters.index("*"), np.uint8)]))
    return out


def _hmmer_agrees(phmm, h, seqs, scores):
    """Number of targets whose score HMMER's Viterbi decision pins (see module doc); asserts."""
    step = np.float32(1.0) / SCALE_W
    om = _optimized(phmm)
    n = 0
    for c, v in zip(seqs, scores):
        s = TextSequence(sequence=PROTEIN.decode(c)).digitize(AMINO)
        null = null_nats(np.array([len(c)]))[0]

        def P(x, stats):
            return float(gumbel_surv(np.float64(np.float32((np.float32(x) - null) / LN2)), *stats))

        om.L = len(c)
        if not np.isfinite(v):
            continue
        lo, hi = P(v - step / 2, h.viterbi), P(v + step / 2, h.viterbi)
        if P(om.msv_filter(s), h.msv) <= lo or not lo > hi:
            continue
        for F2, want in ((lo, 1), (hi, 0)):
            pipe = Pipeline(AMINO, Z=1, F1=1.0, F2=F2, bias_filter=False)
            got = pipe.search_hmm(phmm, DigitalSequenceBlock(AMINO, [s])).__getstate__()["pipeline"]["n_past_vit"]
            assert got == want, (h.M, len(c), v, F2)
        n += 1
    return n


@pytest.mark.parametrize("M", [1, 2, 16, 17, 33, 65, 257])
def test_reference_on_sampled_models(M):
    """Sampled models, random/consensus/repeated sequences, trailing stops, through HMMER's
    decision; at M = 257, 23 consensus copies saturate the filter (+inf, HMMER's eslERANGE)."""
    phmm, h = sampled(M, 0)
    seqs = sequences(phmm, M)
    prof = build_vit_profile(h)
    scores = vit_reference(prof, seqs)
    assert _hmmer_agrees(phmm, h, seqs, scores) >= 3
    if M >= 200:        # shorter sampled models score too little per copy to saturate
        cons = STD[np.argmax(np.asarray(phmm.match_emissions)[1:, :20], axis=1)]
        assert vit_words(prof, [np.tile(cons, max(4, 6000 // M))])[0] == 32767


def test_compiled_occupancy_equals_the_scalar_loop(bundled):
    """local_entry's compiled recursion equals the float32 scalar loop bit for bit (no FMA)."""
    from clalign.hmm.vit_reference import local_entry, local_entry_loop

    hmms = bundled[1] + [sampled(M, 1)[1] for M in (1, 2, 3, 300)]
    for h in hmms:
        assert np.array_equal(local_entry(h).view(np.uint32), local_entry_loop(h).view(np.uint32)), h.name
