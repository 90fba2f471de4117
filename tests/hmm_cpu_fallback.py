"""Test-only CPU stand-in for the device MSV filter: HMMER's own p7_MSVFilter through pyhmmer.

Used by tests/test_hmmsearch.py when clalign.hmm.engine (the OpenCL kernels) is unavailable,
and to cross-check the engine. Never used by the shipped code path.
"""
import numpy as np


def cpu_msv_scores(profile, db, device=None):
    """MSV nats per sequence (db order), with the lengths clalign's db holds."""
    import pyhmmer
    from clalign.hmm.profile import EASEL_OF_CODE
    from clalign.hmm.search import _pyhmmer_models

    hmm = profile.hmm
    abc = pyhmmer.easel.Alphabet.amino()
    bg = pyhmmer.plan7.Background(abc)
    phmm = next(p for p in _pyhmmer_models(hmm.path) if p.name == hmm.name)
    prof = pyhmmer.plan7.Profile(phmm.M, abc)
    prof.configure(phmm, bg, 400)
    om = prof.to_optimized()
    out = np.empty(len(db), dtype=np.float32)
    for i in range(len(db)):
        codes = EASEL_OF_CODE[np.asarray(db.sequence(i))]
        seq = pyhmmer.easel.DigitalSequence(abc, sequence=codes)
        om.L = len(codes)
        out[i] = om.msv_filter(seq)
    return out
