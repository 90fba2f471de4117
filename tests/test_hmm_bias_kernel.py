"""The bias filter kernel (kernels/hmm_bias.mako) against the host form
(clalign.hmm.vit_bias.filter_scores, itself checked against HMMER's counts in
test_hmm_vit_search.py), and the numpy forms a GPU search uses where numba is not loaded
(survivors of the MSV byte pass, the Viterbi plan's decisions, the local entry) against the
compiled ones."""
import os

import numpy as np
import pytest

pytest.importorskip("pyopencl")
import pyopencl as cl  # noqa: E402

from clalign.data import as_database  # noqa: E402
from clalign.hmm import bytepass, vit_reference, vit_search  # noqa: E402
from clalign.hmm.bias_engine import bias_scores_device, usable  # noqa: E402
from clalign.hmm.hmmfile import read_hmms  # noqa: E402
from clalign.hmm.profile import EASEL_OF_CODE  # noqa: E402
from clalign.hmm.search_parts import _hmmer_lengths  # noqa: E402
from clalign.hmm.vit_bias import filter_scores  # noqa: E402
from clalign.runtime import Runtime  # noqa: E402

pytestmark = pytest.mark.usefixtures("each_device")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HMMS = os.path.join(REPO, "data", "hmms.hmm")
PROTEOME = os.path.join(REPO, "data", "proteome.faa.gz")


def _device_db(residues, offsets):
    rt = Runtime.get(None)
    if not usable(rt.caps):
        pytest.skip("device without cl_khr_fp64")
    mf = cl.mem_flags
    res = np.ascontiguousarray(residues, dtype=np.uint8)
    rb = cl.Buffer(rt.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=res if res.size else np.zeros(4, np.uint8))
    ob = cl.Buffer(rt.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.asarray(offsets, dtype=np.uint64))
    return rb, ob


def _same(a, b):
    return bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


def test_bias_kernel_equals_host_on_proteome():
    """Every bundled model (one without a COMPO line) x every proteome protein (ending in '*',
    counted in L as HMMER does), bit for bit."""
    db = as_database(PROTEOME)
    hl, stops = _hmmer_lengths(db)
    off = np.asarray(db.offsets, dtype=np.int64)
    rb, ob = _device_db(db.residues, off)
    idx = np.arange(len(db))[::-1].copy()              # not in database order
    for h in read_hmms(HMMS):
        want = filter_scores(h.M, h.compo, db.residues, off[idx], off[idx + 1], stops[idx], EASEL_OF_CODE, 2)
        got = bias_scores_device(h.M, h.compo, rb, ob, idx, hl[idx])
        assert _same(got, want), h.name


def test_bias_kernel_edges():
    """Empty targets, targets of stops only, one residue, degenerate and rare codes, a
    35,000-residue target, work-group multiples of targets (63, 64, 65)."""
    rng = np.random.default_rng(7)
    lens = [0, 0, 1, 2, 35000] + list(rng.integers(1, 900, 60))
    seqs = [rng.integers(0, EASEL_OF_CODE.size, n).astype(np.uint8) for n in lens]
    residues = np.concatenate(seqs)
    off = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    stops = np.zeros(len(lens), dtype=np.int64)
    stops[[1, 3, 7]] = [3, 1, 2]                        # an empty target of stops only, stops after residues
    L = np.asarray(lens) + stops
    rb, ob = _device_db(residues, off)
    hmms = list(read_hmms(HMMS))
    for n in (63, 64, 65):
        idx = np.arange(n)
        for h in (hmms[0], hmms[1]):                    # without and with COMPO
            want = filter_scores(h.M, h.compo, residues, off[idx], off[idx + 1], stops[idx], EASEL_OF_CODE, 2)
            got = bias_scores_device(h.M, h.compo, rb, ob, idx, L[idx])
            assert _same(got, want), (n, h.name)
            assert np.isneginf(got[0])


def test_numpy_forms_equal_compiled(monkeypatch):
    """Where numba is not loaded, a search takes the numpy forms: same survivors, nats,
    decisions and local entry as the compiled ones."""
    from clalign.hmm import pvalue
    from clalign.hmm.engine import as_profile

    rng = np.random.default_rng(3)
    hmms = list(read_hmms(HMMS))
    lengths = np.concatenate([[0, 1, 2], rng.integers(1, 3000, 40000)])
    for h in hmms[:3]:
        prof = as_profile(h)
        raw = rng.integers(0, 256, lengths.size).astype(np.uint32)
        raw[rng.random(lengths.size) < 0.001] |= 256         # overflows
        want = bytepass.msv_survivors(prof, h, raw, lengths, 0.02, 1e-3)       # compiled (numba)
        sc = rng.normal(0, 10, 5000).astype(np.float32)
        nul = pvalue.null_nats(rng.integers(1, 3000, 5000))
        dec = vit_search._decided(sc, nul, h.msv, 0.02, 1e-3)
        entry = vit_reference.local_entry(h)
        with monkeypatch.context() as mp:
            mp.delitem(__import__("sys").modules, "numba")
            got = bytepass.msv_survivors(prof, h, raw, lengths, 0.02, 1e-3)
            dec2 = vit_search._decided(sc, nul, h.msv, 0.02, 1e-3)
            entry2 = vit_reference.local_entry(h)
        assert np.array_equal(got[0], want[0]) and _same(got[1], want[1]), h.name
        assert got[1].dtype == want[1].dtype
        assert all(np.array_equal(a, b) for x, y in zip(dec, dec2) for a, b in zip(x, y))
        assert np.array_equal(entry, entry2)
